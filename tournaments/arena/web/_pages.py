"""The pages a browser reads: the leaderboard, a bot, a match and a match's replay.

A visitor's (no live session) come from the published tree (``_publish``): most are answered
by the app's front (``_front``) before they reach these endpoints; here, on the event loop when
the tree holds the page in memory and there is no session cookie. The rest runs in Starlette's
thread pool: a request with a session cookie is a visitor's unless the cookie is a live
session (a forged or ended one gets the tree's page, never a page rendered for it); a page for a
logged-in author, or a visitor's page of a match not final yet, is rendered per request and read
through :meth:`ArenaService.reader` (one store connection per thread). The leaderboard is the
service's snapshot (``service.board``): no request computes standings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.faults import Fault
from tournaments.arena.board import Board
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore
from tournaments.arena.web._auth import SESSION_COOKIE, Viewer, viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._front import query_arg, served
from tournaments.arena.web._hardening import REPLAY_CSP
from tournaments.arena.web._plot import rating_plot
from tournaments.arena.web._state import HELD, Web, stderr_text, web_of
from tournaments.arena.web._tree import Page
from tournaments.registry import parse_spec
from tournaments.store import MatchRow, MatchState

if TYPE_CHECKING:
    from tournaments.arena.web._publish import Published

__all__ = [
    "EVENTS_LISTED",
    "RECENT_MATCHES",
    "STDERR_SHOWN",
    "bot_page",
    "leaderboard",
    "match_page",
    "peeked",
    "render_board",
    "render_bot",
    "render_match",
    "replay_page",
    "visitor",
]


STDERR_SHOWN: Final = 64 * 1024
"""The most of a seat's kept stderr the match page shows (the download has it all)."""
EVENTS_LISTED: Final = 5
"""The events the leaderboard links to (the latest deadlines)."""
RECENT_MATCHES: Final = 20
"""The matches a bot's page lists (its latest)."""


async def leaderboard(request: Request) -> Response:
    """``/``: the leaderboard (a visitor's from the published tree)."""
    page = peeked(request, lambda published: published.board(peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_leaderboard, request)


def _leaderboard(request: Request) -> Response:
    web = web_of(request)
    store = web.service.reader()
    viewer = viewer_of(request, store)
    if web.published is not None and viewer.author is None:
        page = web.published.board()
        if page is not None:  # None: a newer board is being published
            return served(request, page)
    return render_board(web, viewer, web.service.board)


def render_board(web: Web, viewer: Viewer, board: Board) -> HTMLResponse:
    """The leaderboard page of ``board``."""
    ranked = [row for row in board.rows if row.rating is not None]
    unrated = [row for row in board.rows if row.rating is None]
    events = web.service.reader().arena_events()[:EVENTS_LISTED]
    return web.page(
        "board.html", viewer, board=board, ranked=ranked, unrated=unrated, events=events
    )


async def bot_page(request: Request) -> Response:
    """``/bots/{ident}``: a bot, its versions, its line against each opponent, its latest
    matches and their faults, and its rating over time (a visitor's from the published tree)."""
    ident = request.path_params["ident"]
    page = peeked(request, lambda published: published.bot(ident, peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_bot_page, request)


def _bot_page(request: Request) -> Response:
    web = web_of(request)
    ident = request.path_params["ident"]
    store = web.service.reader()
    viewer = viewer_of(request, store)
    if web.published is not None and viewer.author is None:
        page = web.published.bot(ident)
        if page is not None:
            return served(request, page)
    return render_bot(web, store, viewer, ident, web.service.board)


def render_bot(
    web: Web, store: ArenaStore, viewer: Viewer, ident: str, board: Board
) -> HTMLResponse:
    """A bot's page, its line and its opponents' as ``board`` has them.

    Raises:
        Refused: no such bot (404).
    """
    name, version = parse_spec(ident)
    row = store.bot(name, version, removed=version is not None)
    if row is None:
        raise Refused(404, f"no bot {ident}")
    ident = row.ident
    versions = store.bots(name)  # not every bot's row for each page: 1,000 bots a board
    matches = store.matches_of(LADDER, ident, RECENT_MATCHES)
    owner = store.owner(name)
    return web.page(
        "bot.html",
        viewer,
        bot=row,
        versions=versions,
        entrant=store.entrant(ident),
        line=board.row(ident),
        against=web.pairwise_of(board, ident),
        matches=matches,
        faults=_faults_of(store, matches, ident),
        owner=owner,
        mine=viewer.author is not None and viewer.author == owner,
        plot=rating_plot(store.rating_history(ident)),
    )


def _faults_of(store: ArenaStore, matches: list[MatchRow], ident: str) -> list[tuple[str, Fault]]:
    """The faults a bot made in the finished ones of ``matches``, with the match of each."""
    faults: list[tuple[str, Fault]] = []
    for match in matches:
        if match.state != MatchState.DONE or store.mirror_pending(match.match_id):
            continue  # a held first leg's faults can name the cards its mirror leg is dealt
        result = store.result(match.match_id)
        seat = _seat_of(match, ident)
        if result is None or seat is None:
            continue
        faults.extend(
            (match.match_id, fault) for fault in result.summary.faults if fault.seat == seat
        )
    return faults


def _seat_of(match: MatchRow, ident: str) -> int | None:
    """The seat a bot plays in a match (``None``: it does not play in it)."""
    if match.seat0 == ident:
        return 0
    return 1 if match.seat1 == ident else None


async def match_page(request: Request) -> Response:
    """``/matches/{match_id}``: a match, scheduled, playing or done, with the kept stderr of the
    seats the viewer owns (a visitor's from the published tree once it is final)."""
    match_id = request.path_params["match_id"]
    page = peeked(request, lambda published: published.match(match_id, peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_match_page, request)


def _match_page(request: Request) -> Response:
    web = web_of(request)
    match_id = request.path_params["match_id"]
    store = web.service.reader()
    viewer = viewer_of(request, store)
    if web.published is not None and viewer.author is None:
        page = web.published.match(match_id)
        if page is not None:
            return served(request, page)
    return render_match(web, store, viewer, match_id)


def render_match(web: Web, store: ArenaStore, viewer: Viewer, match_id: str) -> HTMLResponse:
    """A match's page as ``viewer`` may see it.

    Raises:
        Refused: no such match (404).
    """
    match = store.match(match_id)
    result = store.result(match_id)
    if match is None and result is None:
        raise Refused(404, f"no match {match_id}")
    if match is not None:
        seats, state = (match.seat0, match.seat1), match.state.value
    else:
        assert result is not None
        seats, state = result.seats, MatchState.DONE.value
    owned = [
        viewer.author is not None and store.owner(parse_spec(seat)[0]) == viewer.author
        for seat in seats
    ]
    held = result is not None and store.mirror_pending(match_id)
    if held:  # its result, faults and stderr can say what its mirror leg is dealt: for no one
        result = None
    stderr: list[str | None] = [None, None]
    if result is not None:
        for seat in (0, 1):
            if owned[seat]:
                stderr[seat] = stderr_text(result, seat, STDERR_SHOWN)
    return web.page(
        "match.html",
        viewer,
        held=HELD if held else None,
        match_id=match_id,
        match=match,
        state=state,
        seats=seats,
        result=result,
        owned=owned,
        stderr=stderr,
    )


async def replay_page(request: Request) -> Response:
    """``/matches/{match_id}/replay``: a finished match's replay, as a seat saw it with
    ``?seat=``, under its own Content Security Policy (a visitor's from the published tree).
    ``?seat=`` is read as nginx reads it (the first one, its name in any case, not decoded; empty
    is none), so that the app and nginx show the same view of one URL."""
    seat_arg = query_arg(request.scope["query_string"], b"seat")
    if seat_arg not in (None, "", "0", "1"):
        raise Refused(404, "seat is 0 or 1")
    seat = int(seat_arg) if seat_arg else None
    match_id = request.path_params["match_id"]
    page = peeked(request, lambda published: published.replay(match_id, seat, peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_replay_page, request, match_id, seat)


def _replay_page(request: Request, match_id: str, seat: int | None) -> Response:
    web = web_of(request)
    store = web.service.reader()
    author = viewer_of(request, store).author
    if web.published is not None and author is None:
        page = web.published.replay(match_id, seat)
        if page is not None:
            return served(request, page)
    html = web.replay(store, match_id, seat, author)
    return HTMLResponse(
        html, headers={"content-security-policy": REPLAY_CSP, "cache-control": "no-cache"}
    )


def peeked(request: Request, look: Callable[[Published], Page | None]) -> Page | None:
    """A visitor's page if the tree holds it in memory, up to date (``None``: ask again off
    the event loop): what the ``async`` endpoints serve without a thread."""
    published = web_of(request).published
    if published is None or not visitor(request):
        return None
    return look(published)


def visitor(request: Request) -> bool:
    """Whether a request has no session cookie: a visitor's, answered from the tree on the event
    loop (one with a cookie is looked up in the store, off the loop)."""
    return SESSION_COOKIE not in request.cookies
