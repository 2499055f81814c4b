"""Authors and their API tokens.

The organiser makes authors and tokens from the command line (``gin arena author add NAME``); a
token is shown once, when made, and the store keeps only its SHA-256 digest (a token is 32 random
bytes, so a fast hash is enough: nothing can be guessed from a digest). Revoking a token is
immediate: every request looks its digest up.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Final

from tournaments.arena.store import ArenaStore

__all__ = [
    "AccountError",
    "add_author",
    "author_of",
    "issue_token",
    "new_token",
    "revoke",
    "token_digest",
]


AUTHOR_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
TOKEN_PREFIX: Final = "gin_"
TOKEN_PATTERN: Final = re.compile(r"gin_[A-Za-z0-9_-]{43}")


class AccountError(ValueError):
    """An author or token that cannot be made or found; the message says why."""


def new_token() -> str:
    """A fresh API token (``gin_`` and 32 random bytes, URL-safe)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What the store keeps of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def add_author(store: ArenaStore, name: str) -> str:
    """Create an author and a first token; returns the token (shown once, never stored).

    Raises:
        AccountError: the name is not an author's name, or is taken.
    """
    check_author_name(name)
    if not store.add_author(name):
        raise AccountError(
            f"author {name!r} exists: give them another token with gin arena author token {name}"
        )
    return issue_token(store, name)


def check_author_name(name: str) -> None:
    """Raises AccountError unless ``name`` is 1-32 lowercase letters, digits, ``-`` and ``_``."""
    if not AUTHOR_PATTERN.fullmatch(name):
        raise AccountError(
            f"bad author name {name!r}: 1-32 lowercase letters, digits, - and _, starting with a "
            "letter or digit"
        )


def issue_token(store: ArenaStore, name: str) -> str:
    """Another token for an existing author.

    Raises:
        AccountError: no such author.
    """
    if name not in {author for author, _, _ in store.authors()}:
        raise AccountError(f"no author {name!r}: add them with gin arena author add {name}")
    token = new_token()
    store.add_token(name, token_digest(token))
    return token


def revoke(store: ArenaStore, name: str, prefix: str = "") -> int:
    """Revoke an author's tokens (those whose digest starts with ``prefix``); returns how many.

    Raises:
        AccountError: no such author.
    """
    if name not in {author for author, _, _ in store.authors()}:
        raise AccountError(f"no author {name!r}")
    return store.revoke_tokens(name, prefix)


def author_of(store: ArenaStore, token: str) -> str | None:
    """The author a token is live for (``None``: not a token, unknown or revoked)."""
    if not TOKEN_PATTERN.fullmatch(token):
        return None
    return store.token_author(token_digest(token))
