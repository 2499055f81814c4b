"""The arena's web app: server-rendered pages (the leaderboard, a bot, a match, the live page),
the JSON API of ``docs`` (uploads, submissions, retiring, stderr, the leaderboard) and the
downloads, hardened for the open internet.

Threads: pages and other reads are plain (``def``) endpoints, which Starlette runs in its thread
pool; they read through :meth:`ArenaService.reader` (one store connection per thread). Writes
(uploads, retiring, logging in) are ``async`` endpoints on the trio thread, through the service's
own store. The leaderboard is the service's snapshot (``service.board``): no request computes
standings.

Hardening: a strict Content Security Policy and the usual headers on every response; sessions
kept by the server: the cookie (HttpOnly, SameSite=Strict, Secure over https) holds a random
session id, the store only its SHA-256 digest, looked up on each request (logging out ends the
session, and so does revoking the token it was opened with); a CSRF token (an HMAC of the session
id) on every form plus an Origin/Referer check on every form post; request bodies capped while
they are read (413); token buckets per API token, per client address for anonymous API calls and
for ``/login`` (429 with ``Retry-After``); at most :data:`STREAMS_PER_CLIENT` live-page streams
per client address (429); static files from a fixed map held in memory (no path reaches the
server's files); every text a bot or an author gave escaped
(Jinja2's autoescape, and :func:`referee.bot_text.shown` for control characters); error pages
without tracebacks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlsplit

import jinja2
import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.bot_text import shown
from referee.faults import Fault
from referee.matchlog import stderr_path
from tournaments.arena import intake as intake_module
from tournaments.arena.accounts import author_of, token_digest
from tournaments.arena.board import Board, BoardRow
from tournaments.arena.ladder import LADDER
from tournaments.arena.privacy import redacted_log, redacted_replay
from tournaments.arena.service import MAX_LISTENERS, ArenaRefusal, ArenaService, Event
from tournaments.registry import parse_spec
from tournaments.replay_html import replay_html
from tournaments.standings import Pairwise
from tournaments.store import MatchRow, MatchState, RatingPoint, ResultRow, Store

_log = logging.getLogger("gin.arena.web")

_HERE: Final = Path(__file__).parent
_STATIC_FILES: Final = {"arena.css": "text/css; charset=utf-8", "live.js": "text/javascript"}

CSP: Final = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; form-action 'self'; "
    "base-uri 'none'"
)
"""The Content Security Policy of every page (the replay pages have their own)."""
REPLAY_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
"""The replay page's policy: its inline style and script, nothing loaded from anywhere."""
_HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "SAMEORIGIN",
    "cross-origin-opener-policy": "same-origin",
}

SESSION_COOKIE: Final = "gin_session"
_LOGIN_COOKIE: Final = "gin_login"
SESSION_S: Final = 14 * 24 * 3600
"""How long a session lasts (the token's revocation ends it sooner)."""
FORM_BYTES: Final = 16 * 1024
"""The most a form post (or a bodiless API post) may carry."""
UPLOADS_PER_MINUTE: Final = 6
API_PER_MINUTE: Final = 120
LOGINS_PER_MINUTE: Final = 10
STREAMS_PER_CLIENT: Final = 6
"""Live-page event streams one client address may hold open at once (an IPv6 address counts by
its /64)."""
PING_S: Final = 15.0
"""How often the event stream sends a comment, to keep the connection open."""
REPLAY_CACHE: Final = 128
"""Replay pages of finished matches kept in memory (least recently used out)."""
STDERR_SHOWN: Final = 64 * 1024
"""The most of a seat's kept stderr the match page shows (the download has it all)."""
RECENT_MATCHES: Final = 20


class _Refused(Exception):  # noqa: N818 - an answer, not an error
    """A request answered with an error status (and ``retry_after`` for 429)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


# --- headers -------------------------------------------------------------------------------------


class _Hardened:
    """ASGI middleware: the security headers on every response that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {bytes(name).lower() for name, _ in headers}
                for name, value in _HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_hardened)


# --- rate limits ---------------------------------------------------------------------------------


class _Buckets:
    """Token buckets by key, in memory: ``per_minute`` requests a minute, as a burst or spread."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._levels: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Take one token for ``key``.

        Raises:
            _Refused: none left (429, with the seconds until the next).
        """
        now = time.monotonic()
        with self._lock:
            level, then = self._levels.get(key, (self.capacity, now))
            level = min(self.capacity, level + (now - then) * self.rate)
            if level < 1.0:
                self._levels[key] = (level, now)
                wait = math.ceil((1.0 - level) / self.rate)
                raise _Refused(429, "too many requests: slow down", max(wait, 1))
            self._levels[key] = (level - 1.0, now)
            if len(self._levels) > 10_000:  # forget the full ones
                full = [k for k, (lv, t) in self._levels.items() if lv + (now - t) * self.rate >= 1]
                for stale in full[:5_000]:
                    del self._levels[stale]


class _HeldStream(StreamingResponse):
    """A streaming response that calls ``release`` once it ends, however it ends."""

    def __init__(
        self, content: AsyncIterator[bytes], release: Callable[[], None], **options: Any
    ) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


# --- the app's state -----------------------------------------------------------------------------


@dataclass
class _Viewer:
    """Who is looking: a logged-in author and their session id (the cookie's value, for CSRF)."""

    author: str | None = None
    session: str = ""


class _Web:
    """The app's parts: the service, the secret, the templates, the limits, the replay cache."""

    def __init__(self, service: ArenaService) -> None:
        self.service = service
        self.secret = service.store.secret("web")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.env.filters["when"] = _when
        self.env.filters["path"] = _path
        self.env.filters["bot"] = _bot_text
        self.env.filters["num"] = _num
        self.static = {
            name: ((_HERE / "static" / name).read_bytes(), kind)
            for name, kind in _STATIC_FILES.items()
        }
        self.uploads = _Buckets(UPLOADS_PER_MINUTE)
        self.api = _Buckets(API_PER_MINUTE)
        self.logins = _Buckets(LOGINS_PER_MINUTE)
        self._streams: dict[str, int] = {}
        """Event streams open per client (touched on the trio thread only)."""
        self._pairwise: tuple[Board | None, dict[str, list[Pairwise]]] = (None, {})
        self.board_json: tuple[Board, bytes] | None = None
        """``/api/leaderboard``'s body, for the board it shows."""
        self.board_page: tuple[Board, tuple[str, str], bytes] | None = None
        """The leaderboard as a visitor not logged in sees it, for the board it shows."""
        self._replays: OrderedDict[tuple[str, int | None, tuple[int, ...]], str] = OrderedDict()
        self._replay_lock = threading.Lock()

    # --- sessions and CSRF ---------------------------------------------------------------------

    def _sign(self, text: str) -> str:
        mac = hmac.new(self.secret, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    @staticmethod
    def open_session(store: Store, author: str, token: str) -> str:
        """A new session of an author logged in with a token: its id (the cookie's value, never
        stored; the store keeps its digest and the token's)."""
        session = secrets.token_urlsafe(32)
        store.add_session(_session_digest(session), author, token_digest(token))
        return session

    def viewer(self, request: Request, store: Store) -> _Viewer:
        """The logged-in author of a request (none: no session, an unknown, ended or expired
        one, or its token revoked since)."""
        session = request.cookies.get(SESSION_COOKIE, "")
        if not 0 < len(session) <= 128:
            return _Viewer()
        author = store.session_author(_session_digest(session), SESSION_S)
        return _Viewer() if author is None else _Viewer(author, session)

    def csrf(self, session: str) -> str:
        """The CSRF token of a session (or of the login form's cookie)."""
        return self._sign("csrf:" + session)

    def check_form(self, request: Request, form: Mapping[str, str], session: str) -> None:
        """Refuse a form post from another site: its CSRF token, and its Origin (or Referer)
        naming this host.

        Raises:
            _Refused: 403.
        """
        host = request.headers.get("host", "")
        origin = request.headers.get("origin") or request.headers.get("referer") or ""
        if not host or urlsplit(origin).netloc != host:
            raise _Refused(403, "refused: this form was not sent from this site")
        if not session or not hmac.compare_digest(form.get("csrf", ""), self.csrf(session)):
            raise _Refused(403, "refused: the form's CSRF token is missing or wrong")

    # --- event streams -------------------------------------------------------------------------

    def hold_stream(self, client: str) -> str:
        """Count one more event stream of a client address; the key to give back.

        Raises:
            _Refused: the client holds :data:`STREAMS_PER_CLIENT` already (429).
        """
        key = _client_key(client)
        held = self._streams.get(key, 0)
        if held >= STREAMS_PER_CLIENT:
            raise _Refused(429, "too many live pages open from your address: close some", 30)
        self._streams[key] = held + 1
        return key

    def release_stream(self, key: str) -> None:
        """Give back an event stream counted by :meth:`hold_stream`."""
        held = self._streams.get(key, 0) - 1
        if held > 0:
            self._streams[key] = held
        else:
            self._streams.pop(key, None)

    # --- pages ---------------------------------------------------------------------------------

    def page(self, name: str, viewer: _Viewer, status: int = 200, **context: Any) -> HTMLResponse:
        """A rendered page (autoescaped)."""
        template = self.env.get_template(name)
        html = template.render(
            viewer=viewer.author,
            csrf=self.csrf(viewer.session) if viewer.author else "",
            troubles=[t for t in (self.service.ladder_error, self.service.board_error) if t],
            **context,
        )
        return HTMLResponse(html, status, headers={"cache-control": "no-store"})

    def pairwise_of(self, board: Board, ident: str) -> list[Pairwise]:
        """A bot's lines against each opponent in a board's standings (indexed once a board)."""
        indexed, lines = self._pairwise
        if indexed is not board:
            lines = {}
            for pair in () if board.standings is None else board.standings.pairwise:
                lines.setdefault(pair.bot, []).append(pair)
            self._pairwise = (board, lines)
        return lines.get(ident, [])

    def replay(self, store: Store, match_id: str, seat: int | None, author: str | None) -> str:
        """A finished match's replay page for a viewer, the fault evidence of the seats that
        ``author`` does not own emptied (cached: a log never changes once its result is
        recorded).

        Raises:
            _Refused: no such match, or not played yet (404).
        """
        result = store.result(match_id)
        if result is None:
            raise _Refused(404, "no replay: this match has no result yet")
        visible = _owned_seats(store, result.seats, author)
        key = (match_id, seat, visible)
        with self._replay_lock:
            if key in self._replays:
                self._replays.move_to_end(key)
                return self._replays[key]
        html = replay_html(redacted_replay(Path(result.log_path), visible), seat)
        with self._replay_lock:
            self._replays[key] = html
            while len(self._replays) > REPLAY_CACHE:
                self._replays.popitem(last=False)
        return html


# --- helpers -------------------------------------------------------------------------------------


def _owned_seats(store: Store, seats: tuple[str, str], author: str | None) -> tuple[int, ...]:
    """The seats whose bot ``author`` owns (whose fault evidence they may read)."""
    if author is None:
        return ()
    return tuple(seat for seat in (0, 1) if store.owner(parse_spec(seats[seat])[0]) == author)


def _when(at: float | None) -> str:
    if not at:
        return "—"
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _path(text: str) -> str:
    return quote(text, safe="@~")


def _bot_text(text: object, limit: int = 500) -> str:
    return shown(str(text), limit)


def _num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}"


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


def _client_key(client: str) -> str:
    """What a client address counts as: itself, or its /64 for IPv6 (one host often has many)."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return client


def _session_digest(session: str) -> str:
    """What the store keeps of a session id."""
    return hashlib.sha256(session.encode()).hexdigest()


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _api_author(request: Request, store: Store, buckets: _Buckets) -> str:
    """The author of an API request's token, once the request is counted against its rate
    limit: the token's when it is a live one, else the client address's (so that guessing tokens
    is limited too).

    Raises:
        _Refused: over the limit (429); no token, or not a live one (401).
    """
    token = _bearer(request)
    author = None if token is None else author_of(store, token)
    if token is not None and author is not None:
        buckets.take("token:" + token_digest(token))
    else:
        buckets.take("addr:" + _client(request))
        raise _Refused(401, "no valid API token: send Authorization: Bearer TOKEN")
    return author


async def _read_body(request: Request, limit: int) -> bytes:
    """The request's body, read no further than ``limit`` bytes.

    Raises:
        _Refused: it is bigger (413), or its length is not a number (400).
    """
    length = request.headers.get("content-length")
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            raise _Refused(400, "bad Content-Length") from None
        if declared > limit:
            raise _Refused(413, f"request too large: at most {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async with aclosing(request.stream()) as stream:
        async for chunk in stream:
            size += len(chunk)
            if size > limit:
                raise _Refused(413, f"request too large: at most {limit} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


async def _read_form(request: Request) -> dict[str, str]:
    """A small ``application/x-www-form-urlencoded`` form (first value of each field).

    Raises:
        _Refused: not such a form (415), too big (413), not text (400).
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise _Refused(415, "expected a form (application/x-www-form-urlencoded)")
    body = await _read_body(request, FORM_BYTES)
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise _Refused(400, "a form that cannot be read") from None
    return {name: values[0] for name, values in fields.items() if values}


def _seat_of(match: MatchRow, ident: str) -> int | None:
    if match.seat0 == ident:
        return 0
    return 1 if match.seat1 == ident else None


def _rating_plot(points: list[RatingPoint]) -> dict[str, Any] | None:
    """The rating-over-time plot's shapes (SVG coordinates), ``None`` without two points."""
    if len(points) < 2:
        return None
    width, height, left, right, top, bottom = 640.0, 220.0, 56.0, 12.0, 12.0, 28.0
    lows = [p.low if p.low is not None else p.rating for p in points]
    highs = [p.high if p.high is not None else p.rating for p in points]
    floor, ceiling = min(lows), max(highs)
    if ceiling - floor < 1.0:
        floor, ceiling = floor - 10.0, ceiling + 10.0
    start, end = points[0].at, points[-1].at
    span = max(end - start, 1e-9)

    def x(at: float) -> float:
        return left + (at - start) / span * (width - left - right)

    def y(value: float) -> float:
        return top + (ceiling - value) / (ceiling - floor) * (height - top - bottom)

    line = " ".join(f"{x(p.at):.1f},{y(p.rating):.1f}" for p in points)
    band = " ".join(
        [f"{x(p.at):.1f},{y(h):.1f}" for p, h in zip(points, highs, strict=True)]
        + [f"{x(p.at):.1f},{y(lo):.1f}" for p, lo in reversed(list(zip(points, lows, strict=True)))]
    )
    return {
        "width": int(width),
        "height": int(height),
        "line": line,
        "band": band,
        "left": left,
        "right": width - right,
        "top": top,
        "bottom": height - bottom,
        "high": f"{ceiling:.0f}",
        "low": f"{floor:.0f}",
        "first": _when(start),
        "last": _when(end),
        "label_y": height - 8,
    }


def _board_json(board: Board) -> dict[str, Any]:
    return {
        "at": board.at,
        "series": board.series,
        "approximate": board.approximate,
        "bots": [_row_json(row) for row in board.rows],
    }


def _row_json(row: BoardRow) -> dict[str, Any]:
    data = asdict(row)
    data["state"] = row.state.value
    return data


def _json_error(status: int, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    return JSONResponse({"error": message}, status, headers=headers)


def _sse(event: Event) -> bytes:
    data = json.dumps(event.data, separators=(",", ":"))
    return f"event: {event.kind}\nid: {event.id}\ndata: {data}\n\n".encode()


# --- the app -------------------------------------------------------------------------------------


def create_app(service: ArenaService) -> Starlette:  # noqa: PLR0915 - one closure per route
    """The ASGI app serving ``service``."""
    web = _Web(service)

    def reader() -> Store:
        return service.reader()

    # --- pages ---------------------------------------------------------------------------------

    def leaderboard(request: Request) -> Response:
        store = reader()
        board = service.board
        viewer = web.viewer(request, store)
        troubles = (service.ladder_error, service.board_error)
        cached = web.board_page
        if viewer.author is None and cached is not None and cached[:2] == (board, troubles):
            return HTMLResponse(cached[2], headers={"cache-control": "no-store"})
        ranked = [row for row in board.rows if row.rating is not None]
        unrated = [row for row in board.rows if row.rating is None]
        page = web.page("board.html", viewer, board=board, ranked=ranked, unrated=unrated)
        if viewer.author is None:  # the same for every visitor not logged in: kept per board
            web.board_page = (board, troubles, bytes(page.body))
        return page

    def bot_page(request: Request) -> Response:
        store = reader()
        viewer = web.viewer(request, store)
        ident = request.path_params["ident"]
        name, version = parse_spec(ident)
        row = store.bot(name, version, removed=version is not None)
        if row is None:
            raise _Refused(404, f"no bot {ident}")
        ident = row.ident
        versions = [bot for bot in store.bots() if bot.name == name]
        entrant = store.entrant(ident)
        line = service.board.row(ident)
        against = web.pairwise_of(service.board, ident)
        matches = store.matches_of(LADDER, ident, RECENT_MATCHES)
        faults: list[tuple[str, Fault]] = []
        for match in matches:
            if match.state != MatchState.DONE:
                continue
            result = store.result(match.match_id)
            seat = _seat_of(match, ident)
            if result is None or seat is None:
                continue
            faults.extend(
                (match.match_id, fault) for fault in result.summary.faults if fault.seat == seat
            )
        owner = store.owner(name)
        return web.page(
            "bot.html",
            viewer,
            bot=row,
            versions=versions,
            entrant=entrant,
            line=line,
            against=against,
            matches=matches,
            faults=faults,
            owner=owner,
            mine=viewer.author is not None and viewer.author == owner,
            plot=_rating_plot(store.rating_history(ident)),
        )

    def match_page(request: Request) -> Response:
        store = reader()
        viewer = web.viewer(request, store)
        match_id = request.path_params["match_id"]
        match = store.match(match_id)
        result = store.result(match_id)
        if match is None and result is None:
            raise _Refused(404, f"no match {match_id}")
        if match is not None:
            seats, state = (match.seat0, match.seat1), match.state.value
        else:
            assert result is not None
            seats, state = result.seats, MatchState.DONE.value
        owned = [
            viewer.author is not None and store.owner(parse_spec(seat)[0]) == viewer.author
            for seat in seats
        ]
        stderr: list[str | None] = [None, None]
        if result is not None:
            for seat in (0, 1):
                if owned[seat]:
                    stderr[seat] = _stderr_text(result, seat, STDERR_SHOWN)
        return web.page(
            "match.html",
            viewer,
            match_id=match_id,
            match=match,
            state=state,
            seats=seats,
            result=result,
            owned=owned,
            stderr=stderr,
        )

    def replay_page(request: Request) -> Response:
        store = reader()
        seat_arg = request.query_params.get("seat")
        if seat_arg not in (None, "0", "1"):
            raise _Refused(404, "seat is 0 or 1")
        seat = None if seat_arg is None else int(seat_arg)
        author = web.viewer(request, store).author
        html = web.replay(store, request.path_params["match_id"], seat, author)
        return HTMLResponse(
            html, headers={"content-security-policy": REPLAY_CSP, "cache-control": "no-cache"}
        )

    async def live_page(request: Request) -> Response:
        viewer = web.viewer(request, service.store)
        pairs = [event for event in service.events.recent if event.kind == "pair"][::-1]
        return web.page("live.html", viewer, live=service.live(), pairs=pairs[:20], now=time.time())

    async def events(request: Request) -> Response:
        key = web.hold_stream(_client(request))
        if service.events.listeners >= MAX_LISTENERS:
            web.release_stream(key)
            raise _Refused(503, "too many live pages open: try again later")
        try:
            last = int(request.headers.get("last-event-id", "0"))
        except ValueError:
            last = 0

        async def stream() -> AsyncIterator[bytes]:
            async with service.events.listen() as channel:
                yield b": live\n\n"
                seen = last
                for event in list(service.events.recent):
                    if last and event.id > seen:
                        seen = event.id
                        yield _sse(event)
                while True:
                    with trio.move_on_after(PING_S) as scope:
                        event = await channel.receive()
                    if scope.cancelled_caught:
                        yield b": ping\n\n"
                    elif event.id > seen:
                        seen = event.id
                        yield _sse(event)

        return _HeldStream(
            stream(),
            partial(web.release_stream, key),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    # --- logging in and out --------------------------------------------------------------------

    def login_form(request: Request) -> Response:
        store = reader()
        viewer = web.viewer(request, store)
        nonce = request.cookies.get(_LOGIN_COOKIE, "")
        fresh = len(nonce) != 32
        if fresh:
            nonce = secrets.token_hex(16)
        response = web.page("login.html", viewer, login_csrf=web.csrf("login:" + nonce), message="")
        if fresh:
            _set_cookie(request, response, _LOGIN_COOKIE, nonce, 3600)
        return response

    async def login(request: Request) -> Response:
        web.logins.take(_client(request))
        form = await _read_form(request)
        nonce = request.cookies.get(_LOGIN_COOKIE, "")
        web.check_form(request, form, "login:" + nonce if nonce else "")
        token = form.get("token", "").strip()
        author = author_of(service.store, token)
        if author is None:
            return web.page(
                "login.html",
                _Viewer(),
                401,
                login_csrf=web.csrf("login:" + nonce),
                message="That token is not a live one.",
            )
        response = RedirectResponse("/", 303)
        session = web.open_session(service.store, author, token)
        _set_cookie(request, response, SESSION_COOKIE, session, SESSION_S)
        return response

    async def logout(request: Request) -> Response:
        form = await _read_form(request)
        viewer = web.viewer(request, service.store)
        response = RedirectResponse("/", 303)
        if viewer.author is not None:  # a dead session has nothing to end: just the cookie
            web.check_form(request, form, viewer.session)
            service.store.end_session(_session_digest(viewer.session))
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def retire_form(request: Request) -> Response:
        form = await _read_form(request)
        viewer = web.viewer(request, service.store)
        if viewer.author is None:
            raise _Refused(401, "log in first")
        web.check_form(request, form, viewer.session)
        ident = request.path_params["ident"]
        try:
            service.retire(viewer.author, ident)
        except ArenaRefusal as refusal:
            raise _Refused(refusal.status, str(refusal)) from None
        return RedirectResponse(f"/bots/{_path(ident)}", 303)

    # --- the API -------------------------------------------------------------------------------

    async def upload(request: Request) -> Response:
        author = _api_author(request, service.store, web.uploads)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in ("application/gzip", "application/octet-stream", "application/x-gzip"):
            raise _Refused(415, "send the bot as a gzip'd tar (Content-Type: application/gzip)")
        data = await _read_body(request, intake_module.MAX_UPLOAD_BYTES)
        try:
            submission = service.intake.receive(author, data)
        except intake_module.UploadRefused as refusal:
            raise _Refused(refusal.status, str(refusal)) from None
        return JSONResponse(
            {"id": submission, "state": "queued", "url": f"/api/submissions/{submission}"}, 202
        )

    def submission(request: Request) -> Response:
        store = reader()
        author = _api_author(request, store, web.api)
        found = store.submission(request.path_params["submission_id"])
        if found is None or found.author != author:
            raise _Refused(404, "no such submission of yours")
        checklist = None if found.report is None else json.loads(found.report)
        return JSONResponse(
            {
                "id": found.id,
                "state": found.state.value,
                "bot": found.bot,
                "message": found.message,
                "checklist": checklist,
                "created_at": found.created_at,
                "finished_at": found.finished_at,
            }
        )

    async def retire_api(request: Request) -> Response:
        author = _api_author(request, service.store, web.api)
        await _read_body(request, FORM_BYTES)
        ident = request.path_params["ident"]
        try:
            entrant = service.retire(author, ident)
        except ArenaRefusal as refusal:
            raise _Refused(refusal.status, str(refusal)) from None
        return JSONResponse({"bot": entrant.ident, "state": entrant.state.value})

    def stderr_api(request: Request) -> Response:
        store = reader()
        if _bearer(request) is None:  # a page's link: the session's author
            author = web.viewer(request, store).author
            web.api.take("addr:" + _client(request) if author is None else "author:" + author)
            if author is None:
                raise _Refused(401, "log in, or send Authorization: Bearer TOKEN")
        else:
            author = _api_author(request, store, web.api)
        seat_arg = request.path_params["seat"]
        if seat_arg not in ("0", "1"):
            raise _Refused(404, "seat is 0 or 1")
        seat = int(seat_arg)
        result = store.result(request.path_params["match_id"])
        if result is None:
            raise _Refused(404, "no result for this match")
        if store.owner(parse_spec(result.seats[seat])[0]) != author:
            raise _Refused(403, "that seat's bot is not yours")
        text = _stderr_text(result, seat, None)
        if text is None:
            raise _Refused(404, "no stderr was kept for this seat")
        return PlainTextResponse(text, headers={"cache-control": "no-store"})

    def leaderboard_api(request: Request) -> Response:
        web.api.take("addr:" + _client(request))
        board = service.board
        kept = web.board_json
        if kept is None or kept[0] is not board:  # made once per board
            kept = web.board_json = (board, bytes(JSONResponse(_board_json(board)).body))
        return Response(kept[1], media_type="application/json")

    # --- downloads -----------------------------------------------------------------------------

    def log_download(request: Request) -> Response:
        match_id = request.path_params["match_id"]
        store = reader()
        result = store.result(match_id)
        if result is None or not Path(result.log_path).is_file():
            raise _Refused(404, "no log for this match")
        author = web.viewer(request, store).author if _bearer(request) is None else None
        if _bearer(request) is not None:
            author = _api_author(request, store, web.api)
        visible = _owned_seats(store, result.seats, author)
        try:
            text = redacted_log(Path(result.log_path), visible)
        except (OSError, UnicodeDecodeError):
            raise _Refused(404, "the log of this match cannot be read") from None
        return Response(
            text,
            media_type="application/x-ndjson",
            headers={"content-disposition": f'attachment; filename="{_path(match_id)}.jsonl"'},
        )

    def standings_json(request: Request) -> Response:  # noqa: ARG001 - Starlette's signature
        standings = service.board.standings
        if standings is None:
            raise _Refused(404, "no standings yet")
        return JSONResponse(standings.to_dict())

    def standings_csv(request: Request) -> Response:  # noqa: ARG001 - Starlette's signature
        standings = service.board.standings
        if standings is None:
            raise _Refused(404, "no standings yet")
        return Response(
            standings.to_csv(),
            media_type="text/csv; charset=utf-8",
            headers={"content-disposition": 'attachment; filename="standings.csv"'},
        )

    def static(request: Request) -> Response:
        found = web.static.get(request.path_params["name"])
        if found is None:
            raise _Refused(404, "not found")
        content, kind = found
        return Response(content, media_type=kind, headers={"cache-control": "max-age=300"})

    # --- errors --------------------------------------------------------------------------------

    def error_response(request: Request, status: int, message: str, retry: int | None) -> Response:
        if request.url.path.startswith("/api/"):
            return _json_error(status, message, retry)
        headers = {"cache-control": "no-store"}
        if retry is not None:
            headers["retry-after"] = str(retry)
        html = web.env.get_template("error.html").render(
            viewer=None, csrf="", status=status, message=message
        )
        return HTMLResponse(html, status, headers=headers)

    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, _Refused)
        return error_response(request, error.status, error.message, error.retry_after)

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        words = {404: "not found", 405: "method not allowed"}
        return error_response(
            request, error.status_code, words.get(error.status_code, "refused"), None
        )

    async def server_error(request: Request, error: Exception) -> Response:
        _log.error("error serving %s: %r", request.url.path, error, exc_info=error)
        response = error_response(request, 500, "server error: it has been logged", None)
        for name, value in _HEADERS.items():  # outside the middleware: set them here
            response.headers.setdefault(name, value)
        return response

    get = ["GET"]
    post = ["POST"]
    routes = [
        Route("/", leaderboard, methods=get),
        Route("/bots/{ident}", bot_page, methods=get),
        Route("/bots/{ident}/retire", retire_form, methods=post),
        Route("/matches/{match_id}", match_page, methods=get),
        Route("/matches/{match_id}/replay", replay_page, methods=get),
        Route("/matches/{match_id}/log.jsonl", log_download, methods=get),
        Route("/live", live_page, methods=get),
        Route("/events", events, methods=get),
        Route("/login", login_form, methods=get),
        Route("/login", login, methods=post),
        Route("/logout", logout, methods=post),
        Route("/standings.json", standings_json, methods=get),
        Route("/standings.csv", standings_csv, methods=get),
        Route("/static/{name}", static, methods=get),
        Route("/api/bots", upload, methods=post),
        Route("/api/submissions/{submission_id}", submission, methods=get),
        Route("/api/bots/{ident}/retire", retire_api, methods=post),
        Route("/api/matches/{match_id}/stderr/{seat}", stderr_api, methods=get),
        Route("/api/leaderboard", leaderboard_api, methods=get),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        _Refused: refused,
        HTTPException: http_error,
        Exception: server_error,
    }
    return Starlette(
        debug=False,
        routes=routes,
        middleware=[Middleware(_Hardened)],
        exception_handlers=handlers,
    )


def _set_cookie(request: Request, response: Response, name: str, value: str, age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _stderr_text(result: ResultRow, seat: int, limit: int | None) -> str | None:
    """A seat's kept stderr (already escaped by the referee; shown again for safety), or
    ``None`` when none was kept."""
    if not result.log_path:
        return None
    path = stderr_path(Path(result.log_path), seat)
    try:
        with path.open("rb") as file:
            data = file.read(-1 if limit is None else limit)
    except OSError:
        return None
    return shown(data.decode("utf-8", errors="replace"), lines=True)
