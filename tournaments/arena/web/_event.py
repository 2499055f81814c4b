"""The arena's event pages: ``/events/NAME`` (its state, deadline, frozen field with hashes, its
rounds or bracket as they are played, then its final result, each match linked to its page and
replay) and ``/events/NAME/event.tar.gz``, the download ``gin league verify`` checks offline.

Rendered per request in Starlette's thread pool, through :meth:`ArenaService.reader`; a page is
kept until the event's matches or phase change (the finals' visitors read one rendering).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from tournaments.arena.bundle import bundle_path
from tournaments.arena.event import SnapshotBot, snapshot_of, withdrawn
from tournaments.arena.store import ArenaStore, EventPhase, EventRow
from tournaments.arena.web._auth import Viewer, viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._state import Web, web_of
from tournaments.events import Tie
from tournaments.league import StoredLeague, stored_league
from tournaments.rounds import TiePlan, event_standings, event_state, tie_plan, tie_result
from tournaments.stats.standings import read_standings
from tournaments.store import MatchState, ResultRow

__all__ = [
    "EventView",
    "RoundView",
    "TieView",
    "event_download",
    "event_page",
    "event_view",
    "render_event",
]


@dataclass(frozen=True, slots=True)
class TieView:
    """A tie as the page shows it: its bots, how far it is, its score and its matches."""

    first: str
    second: str | None
    state: str
    score: str
    winner: str | None
    matches: tuple[tuple[str, bool], ...]
    """Each match's id and whether it is played."""


@dataclass(frozen=True, slots=True)
class RoundView:
    """A round (a knockout's: a column of the bracket; a round robin's one: every pairing)."""

    title: str
    ties: tuple[TieView, ...]


@dataclass(frozen=True, slots=True)
class EventView:
    """What the event page shows."""

    row: EventRow
    field: tuple[SnapshotBot, ...]
    withdrawn: dict[str, str]
    rounds: tuple[RoundView, ...]
    standings: tuple[tuple[str, str, str], ...]
    """Each bot in order: its name, its score, and its stage or tie-break."""
    played: int
    total: int
    download: bool


def event_view(store: ArenaStore, name: str, download: bool = False) -> EventView:
    """The event page's content, read from the store.

    Raises:
        Refused: no such event (404).
    """
    row = store.arena_event(name)
    if row is None:
        raise Refused(404, f"no event {name!r}")
    league = stored_league(store, name) if row.phase in _FROZEN else None
    rounds: tuple[RoundView, ...] = ()
    standings: tuple[tuple[str, str, str], ...] = ()
    played = total = 0
    if league is not None:
        results = {result.match_id: result for result in store.results(name)}
        counts = store.counts(name)
        played, total = counts.get(MatchState.DONE, 0), sum(counts.values())
        if league.config.event:
            rounds, standings = _event_rounds(store, league, results)
        else:
            rounds, standings = _round_robin(store, name, results)
    field = tuple(snapshot_of(row))
    return EventView(row, field, withdrawn(store, row), rounds, standings, played, total, download)


_FROZEN = (EventPhase.PLAYING, EventPhase.FINISHED)


def _event_rounds(
    store: ArenaStore, league: StoredLeague, results: dict[str, ResultRow]
) -> tuple[tuple[RoundView, ...], tuple[tuple[str, str, str], ...]]:
    name = league.config.name
    state = event_state(store, name)
    secret = store.league_secret(name)
    knockout = league.config.format == "knockout"
    met: Counter[frozenset[str]] = Counter()
    rounds = []
    for number, stored in enumerate(state.rounds):
        ties = []
        for tie in stored.ties:
            plan = tie_plan(league, secret, tie, met, results)
            ties.append(_tie_view(tie, plan, results, knockout=knockout))
        rounds.append(RoundView(_round_title(number, len(state.seeds), knockout), tuple(ties)))
    ratings = _ratings(store, name)
    lines = event_standings(state, ratings)
    standings = tuple(
        (
            line.bot,
            f"{line.score:g}",
            line.reached or ("" if line.buchholz is None else f"Buchholz {line.buchholz:g}"),
        )
        for line in lines
    )
    return tuple(rounds), standings


def _round_title(number: int, field: int, knockout: bool) -> str:
    if not knockout:
        return f"round {number + 1}"
    total = max(1, (field - 1).bit_length())
    left = total - 1 - number
    return ("final", "semi-finals", "quarter-finals")[left] if left < 3 else f"round {number + 1}"


def _tie_view(tie: Tie, plan: TiePlan, results: dict[str, ResultRow], *, knockout: bool) -> TieView:
    state, result = plan.state, plan.result
    ids = tuple(match.match_id for match in plan.matches)
    if tie.second is None:
        return TieView(tie.first, None, "bye", "bye", tie.first, ())
    score = f"{result.points:g}-{result.series - result.points:g}" if result.series else ""
    winner = None
    if state == "played":
        level = 2 * result.points == result.series
        winner = None if level and not knockout else result.winner()
    played = tuple((match_id, match_id in results) for match_id in ids)
    return TieView(tie.first, tie.second, state, score, winner, played)


def _ratings(store: ArenaStore, name: str) -> dict[str, float]:
    try:
        return {line.bot: line.rating for line in read_standings(store, name).bots}
    except ValueError:
        return {}


def _round_robin(
    store: ArenaStore, name: str, results: dict[str, ResultRow]
) -> tuple[tuple[RoundView, ...], tuple[tuple[str, str, str], ...]]:
    by_pairing: dict[str, list[str]] = {}
    for match in store.matches(name):
        by_pairing.setdefault(match.pairing, []).append(match.match_id)
    ties = []
    for pairing, ids in by_pairing.items():
        first, _, second = pairing.partition("|")
        found = [results[m] for m in ids if m in results]
        state = "played" if len(found) == len(ids) else "pending"
        result = tie_result(Tie(first, second), found)
        score = f"{result.points:g}-{result.series - result.points:g}" if found else ""
        winner = None
        if state == "played" and 2 * result.points != result.series:
            winner = result.winner()
        played = tuple((m, m in results) for m in ids)
        ties.append(TieView(first, second, state, score, winner, played))
    try:
        lines = read_standings(store, name).bots if results else []
    except ValueError:
        lines = []
    standings = tuple(
        (line.bot, f"{line.series_won + 0.5 * line.series_drawn:g}", f"rating {line.rating:.0f}")
        for line in lines
    )
    return (RoundView("every pairing", tuple(ties)),), standings


CACHED_PAGES = 256
"""Event pages kept rendered (by home, event and viewer), the oldest dropped first."""
_cache_lock = threading.Lock()
_cache: dict[tuple[str, str, str], tuple[tuple[object, ...], bytes]] = {}


async def event_page(request: Request) -> Response:
    """``/events/{name}``: an event's page."""
    return await run_in_threadpool(_event_page, request)


def _event_page(request: Request) -> Response:
    web = web_of(request)
    store = web.service.reader()
    name = request.path_params["name"]
    viewer = viewer_of(request, store)
    row = store.arena_event(name)
    if row is None:
        raise Refused(404, f"no event {name!r}")
    key = (str(web.service.arena.home), name, viewer.author or "")
    done = store.counts(name).get(MatchState.DONE, 0)
    exists = bundle_path(web.service.arena, name).is_file()  # made after the phase changes
    version = (
        row.phase,
        row.changed_at,
        done,
        tuple(withdrawn(store, row)),
        web.troubles(),
        exists,
    )
    with _cache_lock:
        kept = _cache.get(key)
    if kept is not None and kept[0] == version:
        return HTMLResponse(kept[1], headers={"cache-control": "no-store"})
    page = render_event(web, store, viewer, name, exists)
    with _cache_lock:
        _cache.pop(key, None)
        while len(_cache) >= CACHED_PAGES:  # the oldest first: one page per viewer and event
            _cache.pop(next(iter(_cache)))
        _cache[key] = (version, bytes(page.body))
    return page


def render_event(
    web: Web, store: ArenaStore, viewer: Viewer, name: str, download: bool
) -> HTMLResponse:
    """The event page of ``name`` as ``viewer`` reads it."""
    return web.page("event.html", viewer, event=event_view(store, name, download))


def event_download(request: Request) -> Response:
    """``/events/{name}/event.tar.gz``: a finished event's results and logs."""
    web = web_of(request)
    name = request.path_params["name"]
    store = web.service.reader()
    row = store.arena_event(name)
    path = bundle_path(web.service.arena, name)
    if row is None or row.phase is not EventPhase.FINISHED or not path.is_file():
        raise Refused(404, "no download for this event (it is made when the event is over)")
    return FileResponse(
        path,
        media_type="application/gzip",
        filename=f"{name}.tar.gz",
        headers={"cache-control": "no-store"},
    )
