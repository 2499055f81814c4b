"""The bots' own seeds: one per seat and series, sent in the Welcome (``bot_seed``).

A bot that seeds its random choices with it plays the same series again when the league is run
again with the same secret, so a league replays every hand. Each seed is a keyed hash (HMAC-SHA256)
of the league's secret with a label of its own, the match id and the seat: the deal seeds are
keyed hashes of the same secret under another label (``tournaments.league.derive_seed``), so a bot
seed tells nothing of the decks, and knowing a deal seed gives no bot seed. A seed is never 0,
which the protocol keeps for "none given".
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

__all__ = ["bot_seeds", "league_bot_seeds", "play_bot_seeds"]


BOT_SEED_BITS: Final = 63
"""Seeds fit in a signed 64-bit integer, for bots whose language has no unsigned one."""
_LEAGUE_LABEL: Final = "hollywood-gin/bot-seed/v1"
_PLAY_LABEL: Final = "hollywood-gin/play-bot-seed/v1"
_OLD_LEAGUE_LABEL: Final = "hollywood-gin/pre-secret-league-bot-seed/v2"


def _seed(key: bytes, message: str) -> int:
    digest = hmac.new(key, message.encode(), hashlib.sha256).digest()
    return (int.from_bytes(digest[:8], "big") >> (64 - BOT_SEED_BITS)) or 1


def bot_seeds(secret: bytes, match_id: str) -> tuple[int, int]:
    """Both seats' seeds for one match of a league: keyed with the league's ``secret``.

    >>> mine = bot_seeds(b"k" * 32, "t~a@1~b@1~000")
    >>> mine == bot_seeds(b"k" * 32, "t~a@1~b@1~000"), mine[0] != mine[1]
    (True, True)
    >>> mine in (bot_seeds(b"j" * 32, "t~a@1~b@1~000"), bot_seeds(b"k" * 32, "t~a@1~b@1~001"))
    False
    """
    return (
        _seed(secret, f"{_LEAGUE_LABEL}/{match_id}/0"),
        _seed(secret, f"{_LEAGUE_LABEL}/{match_id}/1"),
    )


def league_bot_seeds(
    league_secret: bytes | None, home_secret: bytes, match_id: str
) -> tuple[int, int]:
    """Both seats' seeds for a match of a league: :func:`bot_seeds` keyed with the league's
    secret; for a league from before secrets (whose deals follow from its public seed), keyed
    with the home's secret instead. Not with that seed: a bot told a seed derived from it and
    the match id could search the seed's (often small) range and rebuild every deck.

    >>> old = league_bot_seeds(None, b"h" * 32, "t~a@1~b@1~000")
    >>> old == league_bot_seeds(None, b"h" * 32, "t~a@1~b@1~000"), old[0] != old[1]
    (True, True)
    >>> old == league_bot_seeds(None, b"i" * 32, "t~a@1~b@1~000")
    False
    """
    if league_secret is not None:
        return bot_seeds(league_secret, match_id)
    key = hmac.new(home_secret, _OLD_LEAGUE_LABEL.encode(), hashlib.sha256).digest()
    return bot_seeds(key, match_id)


def play_bot_seeds(seed: int | None, key: bytes | None) -> tuple[int, int]:
    """The seeds of ``gin play``: random without ``seed``; else ``seed`` keyed with ``key`` (the
    home's secret, as the deal's seed is), or, with ``key`` ``None`` (public deals), from
    ``seed`` alone, the same anywhere.

    >>> play_bot_seeds(7, b"h" * 32) == play_bot_seeds(7, b"h" * 32) != play_bot_seeds(7, None)
    True
    >>> play_bot_seeds(None, None) != play_bot_seeds(None, None)
    True
    """
    if seed is None:
        return (secrets.randbits(BOT_SEED_BITS) or 1, secrets.randbits(BOT_SEED_BITS) or 1)
    keyed = key if key is not None else f"{_PLAY_LABEL}/public".encode()
    return (_seed(keyed, f"{_PLAY_LABEL}/{seed}/0"), _seed(keyed, f"{_PLAY_LABEL}/{seed}/1"))
