"""The pages a browser reads: the leaderboard, a bot, a match and a match's replay.

They are plain (``def``) endpoints, which Starlette runs in its thread pool; they read through
:meth:`ArenaService.reader` (one store connection per thread). The leaderboard is the service's
snapshot (``service.board``): no request computes standings.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from referee.faults import Fault
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore
from tournaments.arena.web._auth import viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._hardening import REPLAY_CSP
from tournaments.arena.web._plot import rating_plot
from tournaments.arena.web._state import HELD, stderr_text, web_of
from tournaments.registry import parse_spec
from tournaments.store import MatchRow, MatchState

__all__ = ["RECENT_MATCHES", "STDERR_SHOWN", "bot_page", "leaderboard", "match_page", "replay_page"]


STDERR_SHOWN: Final = 64 * 1024
"""The most of a seat's kept stderr the match page shows (the download has it all)."""
RECENT_MATCHES: Final = 20
"""The matches a bot's page lists (its latest)."""


def leaderboard(request: Request) -> Response:
    """``/``: the leaderboard (one page for every visitor not logged in, kept per board)."""
    web = web_of(request)
    store = web.service.reader()
    board = web.service.board
    viewer = viewer_of(request, store)
    troubles = (web.service.ladder_error, web.service.board_error)
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
    """``/bots/{ident}``: a bot, its versions, its line against each opponent, its latest
    matches and their faults, and its rating over time."""
    web = web_of(request)
    store = web.service.reader()
    viewer = viewer_of(request, store)
    ident = request.path_params["ident"]
    name, version = parse_spec(ident)
    row = store.bot(name, version, removed=version is not None)
    if row is None:
        raise Refused(404, f"no bot {ident}")
    ident = row.ident
    versions = [bot for bot in store.bots() if bot.name == name]
    entrant = store.entrant(ident)
    line = web.service.board.row(ident)
    against = web.pairwise_of(web.service.board, ident)
    matches = store.matches_of(LADDER, ident, RECENT_MATCHES)
    faults = _faults_of(store, matches, ident)
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
        plot=rating_plot(store.rating_history(ident)),
    )


def _faults_of(store: ArenaStore, matches: list[MatchRow], ident: str) -> list[tuple[str, Fault]]:
    """The faults a bot made in the finished ones of ``matches``, with the match of each."""
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
    return faults


def _seat_of(match: MatchRow, ident: str) -> int | None:
    """The seat a bot plays in a match (``None``: it does not play in it)."""
    if match.seat0 == ident:
        return 0
    return 1 if match.seat1 == ident else None


def match_page(request: Request) -> Response:
    """``/matches/{match_id}``: a match, scheduled, playing or done, with the kept stderr of the
    seats the viewer owns."""
    web = web_of(request)
    store = web.service.reader()
    viewer = viewer_of(request, store)
    match_id = request.path_params["match_id"]
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
    stderr: list[str | None] = [None, None]
    if result is not None:
        for seat in (0, 1):
            if owned[seat]:
                stderr[seat] = stderr_text(result, seat, STDERR_SHOWN)
    return web.page(
        "match.html",
        viewer,
        held=HELD if result is not None and store.mirror_pending(match_id) else None,
        match_id=match_id,
        match=match,
        state=state,
        seats=seats,
        result=result,
        owned=owned,
        stderr=stderr,
    )


def replay_page(request: Request) -> Response:
    """``/matches/{match_id}/replay``: a finished match's replay, as a seat saw it with
    ``?seat=``, under its own Content Security Policy."""
    web = web_of(request)
    store = web.service.reader()
    seat_arg = request.query_params.get("seat")
    if seat_arg not in (None, "0", "1"):
        raise Refused(404, "seat is 0 or 1")
    seat = None if seat_arg is None else int(seat_arg)
    author = viewer_of(request, store).author
    html = web.replay(store, request.path_params["match_id"], seat, author)
    return HTMLResponse(
        html, headers={"content-security-policy": REPLAY_CSP, "cache-control": "no-cache"}
    )
