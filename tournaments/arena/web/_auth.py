"""Who is asking, and how much they may ask.

Sessions are kept by the server: the cookie (HttpOnly, SameSite=Strict, Secure over https) holds
a random session id, the store only its SHA-256 digest, looked up on each request. Every form
carries a CSRF token (an HMAC of the session id) and is checked for its Origin (or Referer). API
calls name their author by a bearer token. Token buckets limit requests per API token and per
client address; live-page streams are counted per logged-in author, or per client address for
visitors (an IPv6 address by its /64), and visitors together may hold only a share of all
streams, so that a class behind one address (one NAT) works, each student logged in, and no set
of addresses can shut the authors out. Logins are limited per address twice: all of them
(``LOGINS_PER_MINUTE``, a class logging in at once), and the failed ones
(``FAILED_LOGINS_PER_MINUTE``, checked before the form is read: guessing tokens).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import math
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from tournaments.arena.accounts import author_of, token_digest
from tournaments.arena.store import ArenaStore
from tournaments.arena.web._errors import Refused

__all__ = [
    "API_PER_MINUTE",
    "FAILED_LOGINS_PER_MINUTE",
    "LOGINS_PER_MINUTE",
    "LOGIN_COOKIE",
    "SESSION_COOKIE",
    "SESSION_S",
    "STREAMS_PER_CLIENT",
    "UPLOADS_PER_MINUTE",
    "VISITOR_STREAMS",
    "Buckets",
    "Csrf",
    "Streams",
    "Viewer",
    "api_author",
    "bearer",
    "client",
    "client_key",
    "open_session",
    "session_digest",
    "set_cookie",
    "viewer_of",
]


SESSION_COOKIE: Final = "gin_session"
LOGIN_COOKIE: Final = "gin_login"
"""The login form's cookie: a nonce its CSRF token is made of (no session yet)."""
SESSION_S: Final = 14 * 24 * 3600
"""How long a session lasts (the token's revocation ends it sooner)."""
UPLOADS_PER_MINUTE: Final = 6
API_PER_MINUTE: Final = 120
LOGINS_PER_MINUTE: Final = 120
"""Logins from one client address a minute: a class behind one address logging in at once."""
FAILED_LOGINS_PER_MINUTE: Final = 10
"""Failed logins (a token that is not a live one) from one client address a minute."""
STREAMS_PER_CLIENT: Final = 6
"""Live-page event streams one logged-in author, or one visitor's client address, may hold open
at once (an IPv6 address counts by its /64)."""
VISITOR_STREAMS: Final = 600
"""Live-page streams visitors (not logged in) may hold in all: the rest of the service's
``MAX_LISTENERS`` (1,000) stays for authors, however many addresses visitors come from."""


# --- limits --------------------------------------------------------------------------------------


class Buckets:
    """Token buckets by key, in memory: ``per_minute`` requests a minute, as a burst or spread."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._levels: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Take one token for ``key``.

        Raises:
            Refused: none left (429, with the seconds until the next).
        """
        self._level(key, spend=True)

    def check(self, key: str) -> None:
        """Refuse as :meth:`take` would, taking nothing.

        Raises:
            Refused: none left (429, with the seconds until the next).
        """
        self._level(key, spend=False)

    def _level(self, key: str, *, spend: bool) -> None:
        now = time.monotonic()
        with self._lock:
            level, then = self._levels.get(key, (self.capacity, now))
            level = min(self.capacity, level + (now - then) * self.rate)
            if level < 1.0:
                self._levels[key] = (level, now)
                wait = math.ceil((1.0 - level) / self.rate)
                raise Refused(429, "too many requests: slow down", max(wait, 1))
            self._levels[key] = (level - 1.0 if spend else level, now)
            if len(self._levels) > 10_000:  # forget the full ones
                full = [k for k, (lv, t) in self._levels.items() if lv + (now - t) * self.rate >= 1]
                for stale in full[:5_000]:
                    del self._levels[stale]


class Streams:
    """The live-page event streams open per logged-in author, or per visitor's client address
    (touched on the trio thread only)."""

    def __init__(self) -> None:
        self._held: dict[str, int] = {}
        self.visitors = 0
        """Streams held by visitors (not logged in), in all."""

    def hold(self, client: str, author: str | None) -> str:
        """Count one more event stream of an author (``author``), or of a visitor's client
        address; the key to give back.

        Raises:
            Refused: the author or the address holds :data:`STREAMS_PER_CLIENT` already (429);
                visitors hold :data:`VISITOR_STREAMS` in all (503).
        """
        key = "author:" + author if author is not None else "addr:" + client_key(client)
        held = self._held.get(key, 0)
        if held >= STREAMS_PER_CLIENT:
            whose = "you have" if author is not None else "your address has"
            raise Refused(429, f"too many live pages open: {whose} {held}: close some", 30)
        if author is None and self.visitors >= VISITOR_STREAMS:
            raise Refused(503, "too many live pages open by visitors: log in, or try later", 30)
        self._held[key] = held + 1
        self.visitors += author is None
        return key

    def release(self, key: str) -> None:
        """Give back an event stream counted by :meth:`hold`."""
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        if key.startswith("addr:"):
            self.visitors -= 1


def client(request: Request) -> str:
    """The address a request comes from (``?`` when the server does not say)."""
    return request.client.host if request.client is not None else "?"


def client_key(client: str) -> str:
    """What a client address counts as: itself, or its /64 for IPv6 (one host often has many).

    >>> client_key("2001:db8::1"), client_key("192.0.2.7"), client_key("?")
    ('2001:db8::/64', '192.0.2.7', '?')
    """
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return client


# --- sessions and CSRF ---------------------------------------------------------------------------


@dataclass
class Viewer:
    """Who is looking: a logged-in author and their session id (the cookie's value, for CSRF)."""

    author: str | None = None
    session: str = ""


class Csrf:
    """The CSRF tokens of sessions, signed with the web app's secret, and the check of a form."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, text: str) -> str:
        mac = hmac.new(self._secret, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def token(self, session: str) -> str:
        """The CSRF token of a session (or of the login form's cookie)."""
        return self._sign("csrf:" + session)

    def check(self, request: Request, form: Mapping[str, str], session: str) -> None:
        """Refuse a form post from another site: its CSRF token, and its Origin (or Referer)
        naming this host.

        Raises:
            Refused: 403.
        """
        host = request.headers.get("host", "")
        origin = request.headers.get("origin") or request.headers.get("referer") or ""
        if not host or urlsplit(origin).netloc != host:
            raise Refused(403, "refused: this form was not sent from this site")
        if not session or not hmac.compare_digest(form.get("csrf", ""), self.token(session)):
            raise Refused(403, "refused: the form's CSRF token is missing or wrong")


def open_session(store: ArenaStore, author: str, token: str) -> str:
    """A new session of an author logged in with a token: its id (the cookie's value, never
    stored; the store keeps its digest and the token's)."""
    session = secrets.token_urlsafe(32)
    store.add_session(session_digest(session), author, token_digest(token))
    return session


def viewer_of(request: Request, store: ArenaStore) -> Viewer:
    """The logged-in author of a request (none: no session, an unknown, ended or expired one, or
    its token revoked since)."""
    session = request.cookies.get(SESSION_COOKIE, "")
    if not 0 < len(session) <= 128:
        return Viewer()
    author = store.session_author(session_digest(session), SESSION_S)
    return Viewer() if author is None else Viewer(author, session)


def session_digest(session: str) -> str:
    """What the store keeps of a session id."""
    return hashlib.sha256(session.encode()).hexdigest()


def set_cookie(request: Request, response: Response, name: str, value: str, age: int) -> None:
    """Set a cookie the page's scripts cannot read, sent to this site alone (over https only
    when the request came over https)."""
    response.set_cookie(
        name,
        value,
        max_age=age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


# --- API tokens ----------------------------------------------------------------------------------


def bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header (``None``: no such header)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def api_author(request: Request, store: ArenaStore, buckets: Buckets) -> str:
    """The author of an API request's token, once the request is counted against its rate
    limit: the token's when it is a live one, else the client address's (so that guessing tokens
    is limited too).

    Raises:
        Refused: over the limit (429); no token, or not a live one (401).
    """
    token = bearer(request)
    author = None if token is None else author_of(store, token)
    if token is not None and author is not None:
        buckets.take("token:" + token_digest(token))
    else:
        buckets.take("addr:" + client(request))
        raise Refused(401, "no valid API token: send Authorization: Bearer TOKEN")
    return author
