"""What the web app asks of the hosted arena: one object over the store, the ladder, the intake
of uploads, the leaderboard and the events the live pages follow.

Threads: the store's main connection (``store``) belongs to the trio thread, which runs the
ladder, the intake and the web app's ``async`` endpoints. Work that reads much (a page, the
leaderboard's fit) runs in worker threads, each on its own connection (:meth:`reader`): SQLite in
WAL lets them read while the ladder writes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final, Protocol

import trio

from protocol.bounded import JsonObject
from referee.control import TimeControl
from tournaments.arena.board import Board, BoardProcess, compute_board, new_points
from tournaments.arena.ladder import LADDER, UNKNOWN_WIDTH, Known, Ladder
from tournaments.arena.store import ArenaStore, Entrant, EntrantState
from tournaments.executors import Executor
from tournaments.registry import Arena, Checker, parse_spec
from tournaments.runner import LeagueBusy, Progress
from tournaments.store import BotRow, MatchRow, MatchState

__all__ = [
    "MAX_LISTENERS",
    "REFRESH_SHARE",
    "ArenaRefusal",
    "ArenaService",
    "Event",
    "LiveMatch",
    "Publisher",
]


_log = logging.getLogger("gin.arena")
EVENT_BUFFER: Final = 64
"""Events a slow reader may fall behind by before it misses some (it never blocks the arena)."""
BOARD_RETRY_S: Final = 30.0
"""How long after a failed computation of the board the next is tried."""
REFRESH_SHARE: Final = 0.2
"""The most of the time the board's refresh may take (the rest it waits between two)."""
BOARD_PROCESS_RESULTS: Final = 5000
"""From this many ladder results, the board's fit runs in a process of its own, not a thread."""
BOARD_PROCESS_AFTER_S: Final = 0.5
"""A fit in a thread that took this long moves to a process of its own for the next boards."""
MAX_LISTENERS: Final = 1000
"""Live pages open at once (each holds a connection)."""


class ArenaRefusal(ValueError):  # noqa: N818 - named for what it is, as LeagueBusy
    """A request the arena refuses (not found, not yours); ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened, for the live pages (server-sent events)."""

    id: int
    kind: str
    """``started``, ``finished``, ``pair``, ``board``, ``entered``, ``left``, ``stopped``,
    ``event`` (an arena event frozen, not played or finished)."""
    data: JsonObject
    """The event's payload, the one free-form field here: it goes out as JSON to the live
    pages' script as it is (``tournaments.arena.web``), and nothing in Python reads it back;
    each kind's few fields are set where it is published (:class:`ArenaService`)."""


class EventHub:
    """Fans events out to every listener, each through a small buffer: a listener that does not
    keep up loses events rather than slowing anything down."""

    def __init__(self) -> None:
        self._listeners: set[trio.MemorySendChannel[Event]] = set()
        self._next = 1
        self.recent: deque[Event] = deque(maxlen=EVENT_BUFFER)

    def publish(self, kind: str, data: JsonObject) -> Event:
        """Send an event to every listener (never waits)."""
        event = Event(self._next, kind, data)
        self._next += 1
        self.recent.append(event)
        for channel in list(self._listeners):
            try:
                channel.send_nowait(event)
            except trio.WouldBlock:
                pass  # a slow reader: it misses this one
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._listeners.discard(channel)
        return event

    @property
    def listeners(self) -> int:
        """How many listen now."""
        return len(self._listeners)

    @asynccontextmanager
    async def listen(self) -> AsyncIterator[trio.MemoryReceiveChannel[Event]]:
        """A channel of the events from now on, for as long as the block lasts.

        Raises:
            ArenaRefusal: :data:`MAX_LISTENERS` listen already (status 503).
        """
        if len(self._listeners) >= MAX_LISTENERS:
            raise ArenaRefusal("too many live pages open: try again later", 503)
        send, receive = trio.open_memory_channel[Event](EVENT_BUFFER)
        self._listeners.add(send)
        try:
            yield receive
        finally:
            self._listeners.discard(send)
            send.close()


class Publisher(Protocol):
    """What publishes the pages a visitor reads when they change (the web app's tree)."""

    def board_computed(self, board: Board) -> None:
        """A board just computed, before it is shown (called in a worker thread)."""

    def board_shown(self, board: Board) -> float:
        """A board just shown: the rest of its pages (called in a worker thread, its time
        counted in the board's refresh but for the seconds it returns: those it paused to
        leave the interpreter to the web)."""

    def recorded(self, match_ids: Sequence[str]) -> None:
        """Matches just recorded (called on the trio thread: it must not block)."""


@dataclass
class LiveMatch:
    """A match in flight, as the live page shows it."""

    match_id: str
    seats: tuple[str, str]
    started: float
    """Wall-clock time it started."""


class ArenaService:
    """The arena a server serves: the store, the ladder, the intake, the board, the events."""

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        *,
        jobs: int = 2,
        executor: Executor | None = None,
        checker: Checker | None = None,
        strict: bool = False,
        time_control: TimeControl | None = None,
        seed: int | None = None,
        ladder: bool = True,
        events: bool | None = None,
    ) -> None:
        """``checker`` runs the conformance kit on each upload (``None``: none, for tests of
        trusted code only); ``ladder=False`` serves pages and takes uploads without playing;
        ``events``: whether it freezes and plays the arena's events (``None``: as ``ladder``)."""
        from tournaments.arena.intake import Intake  # noqa: PLC0415 - intake uses this module

        self.arena = arena
        self.store = store
        self.jobs = jobs
        self.strict = strict
        self.executor = executor
        """The executor given (``None``: the ladder's own local pool); an event plays on it."""
        self.time_control = time_control
        self.events = EventHub()
        self.board = Board.empty()
        self.board_seconds = 0.0
        """How long the last board took to compute."""
        self.board_process = BoardProcess(arena.store_path)
        """Where a big ladder's fit runs (started when first needed: see :meth:`_compute`)."""
        self._fit_apart = False
        self.publish_seconds = 0.0
        """How long the pages of the last board took to publish after it was shown."""
        self.board_error = ""
        """Why the board is older than the store (empty: it is not)."""
        self.ladder_error = ""
        """Why the ladder stopped (empty: it plays, or was never started)."""
        self.event_error = ""
        """Why the events stopped (empty: they did not)."""
        self._running: dict[str, LiveMatch] = {}
        """The matches in flight, by id (what the live page shows)."""
        self._held: dict[str, JsonObject] = {}
        """The ``finished`` events of first legs whose mirror leg is still to be recorded, by
        match id: sent with the pair (what a first leg says is held until then)."""
        self._local = threading.local()
        self._board_wanted = trio.Event()
        self._board_wanted.set()  # the first board at once
        self.ladder: Ladder | None = None
        self.plays_events = ladder if events is None else events
        if ladder:
            self.ladder = Ladder(
                arena,
                store,
                jobs,
                executor=executor,
                listener=self._progress,
                on_pair=self._pair_done,
                strict=strict,
                time_control=time_control,
                seed=seed,
            )
        self.intake = Intake(self, checker)
        self.started_at = time.time()
        self.publisher: Publisher | None = None
        """Told of each board and each recorded match (set by the web app)."""

    # --- running -------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the ladder, the intake, the board's refresh and the events until cancelled."""
        from tournaments.arena.event import run_events  # noqa: PLC0415 - it uses this module

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._refresh_board)
                nursery.start_soon(self.intake.run)
                if self.plays_events:
                    nursery.start_soon(self._run_events, run_events)
                if self.ladder is not None:
                    nursery.start_soon(self._run_ladder, self.ladder)
                task_status.started()
        finally:
            self.board_process.stop()

    async def _run_ladder(self, ladder: Ladder) -> None:
        """The ladder until cancelled; one that fails (a full disk, a lost cluster, a damaged
        store) stops alone, said on the pages and in the log, while the pages go on. Another
        server playing this home's ladder stops this one (its pages would show a ladder they do
        not play)."""
        try:
            await ladder.run()
        except LeagueBusy:
            raise
        except Exception as error:  # said on the pages, logged in full
            _log.exception("the ladder stopped")
            self.ladder_error = f"the ladder stopped: {error}"
            self.events.publish("stopped", {"why": self.ladder_error})
            self.want_board()  # its pages say so

    async def _run_events(self, run: Callable[[ArenaService], Awaitable[None]]) -> None:
        """The events until cancelled; one that fails is logged and said, as the ladder's."""
        try:
            await run(self)
        except LeagueBusy:
            raise
        except Exception as error:  # said on the pages, logged in full
            _log.exception("the events stopped")
            self.event_error = f"the event stopped: {error}"
            self.events.publish("stopped", {"why": self.event_error})

    def event_finished(self, name: str) -> None:
        """An event just finished: its download is made (in a worker thread)."""
        from tournaments.arena.bundle import write_bundle  # noqa: PLC0415 - it uses this module

        try:
            write_bundle(self.reader(), self.arena, name)
        except Exception:  # the page offers none; the event's results stand
            _log.exception("the download of event %s could not be made", name)

    def reader(self) -> ArenaStore:
        """This thread's own connection to the store (for reads off the trio thread)."""
        store: ArenaStore | None = getattr(self._local, "store", None)
        if store is None:
            store = ArenaStore(self.arena.store_path)
            self._local.store = store
        return store

    async def _refresh_board(self) -> None:
        """Recompute the board whenever a pair ended (or bots came or went) since the last: after
        every pair, on a ladder whose fit takes milliseconds; on a big one (a fit of seconds), at
        most once per :data:`REFRESH_SHARE` of the time, so the fit never takes more than that
        share of a core from the matches (its pages' publishing counted in)."""
        while True:
            await self._board_wanted.wait()
            self._board_wanted = trio.Event()
            before = self.board
            started = trio.current_time()
            try:
                board = await self._next_board()
            except Exception as error:  # a damaged row: the last board stays
                _log.exception("the leaderboard could not be computed")
                self.board_error = f"the leaderboard is as of its last computation: {error}"
                await trio.sleep(BOARD_RETRY_S)
                self._board_wanted.set()
                continue
            self.board = board
            self.board_seconds = trio.current_time() - started
            points = new_points(before, board)
            if points:
                self.store.add_ratings(points)
            if self.ladder is not None:
                self.ladder.known = {
                    row.ident: Known(row.rating, _half_width(row.rating, row.low, row.high))
                    for row in board.rows
                    if row.rating is not None
                }
            self.events.publish("board", {"series": board.series, "bots": len(board.rows)})
            self.publish_seconds = await self._board_shown(board)
            spent = self.board_seconds + self.publish_seconds
            await trio.sleep(spent * (1 / REFRESH_SHARE - 1))

    async def _board_shown(self, board: Board) -> float:
        """Tell the publisher of the board now shown, in a thread; the seconds it worked (its
        pauses not counted)."""
        if self.publisher is None:
            return 0.0
        started = trio.current_time()
        paused = 0.0
        try:
            paused = await trio.to_thread.run_sync(
                self.publisher.board_shown, board, abandon_on_cancel=True
            )  # a stop does not wait for the pages (their writes are atomic; the rest next time)
        except Exception:  # a full disk, a damaged row: the pages are rendered on request
            _log.exception("the leaderboard's bot pages could not be published")
        return max(0.0, trio.current_time() - started - paused)

    async def _next_board(self) -> Board:
        """The board as the store has it now, published before it is shown (a publisher that
        fails is logged: the pages are rendered again on request)."""
        board = await self._compute()
        self.board_error = ""
        if self.publisher is not None:
            await trio.to_thread.run_sync(self._publish, board)
        return board

    async def _compute(self) -> Board:
        """The fit: in a thread while it is quick; in :attr:`board_process` from
        :data:`BOARD_PROCESS_RESULTS` results, or once a fit in a thread has taken
        :data:`BOARD_PROCESS_AFTER_S` (measured: 21 s for 100,000 results, during which a thread
        of this process would take most of the interpreter from the web)."""
        if not self._fit_apart:
            done = self.store.counts(LADDER).get(MatchState.DONE, 0)
            self._fit_apart = done >= BOARD_PROCESS_RESULTS
        if self._fit_apart:
            try:
                return await trio.to_thread.run_sync(
                    self.board_process.compute, abandon_on_cancel=True
                )
            except trio.Cancelled:
                self.board_process.stop()  # the abandoned thread's read ends with it
                raise
        started = time.perf_counter()
        board = await trio.to_thread.run_sync(lambda: compute_board(self.reader()))
        self._fit_apart = time.perf_counter() - started >= BOARD_PROCESS_AFTER_S
        return board

    def _publish(self, board: Board) -> None:
        assert self.publisher is not None
        try:
            self.publisher.board_computed(board)
        except Exception:
            _log.exception("the leaderboard's pages could not be published")

    def want_board(self) -> None:
        """Ask for a fresh board (coalesced: one computation at a time)."""
        self._board_wanted.set()

    def progressed(self, progress: Progress) -> None:
        """A runner's progress (the ladder's, an event's): matches started or ended, as events."""
        self._progress(progress)

    def _progress(self, progress: Progress) -> None:
        """The ladder's progress: matches that started or ended, as events."""
        running = progress.running
        ended = [m for m in self._running if m not in running]
        for match_id in ended:
            seats = self._running.pop(match_id).seats
            finished: JsonObject = {"match": match_id, "seats": list(seats)}
            if self.store.mirror_pending(match_id):
                self._held[match_id] = finished
            else:
                self.events.publish("finished", finished)
        if ended and self.publisher is not None:
            self.publisher.recorded(ended)
        for match_id in running:
            if match_id not in self._running:
                match = self.store.match(match_id)
                seats = ("", "") if match is None else (match.seat0, match.seat1)
                self._running[match_id] = LiveMatch(match_id, seats, time.time())
                self.events.publish("started", {"match": match_id, "seats": list(seats)})

    def _pair_done(self, legs: list[MatchRow]) -> None:
        if self.publisher is not None:  # the first leg, held until now, with the second
            self.publisher.recorded([leg.match_id for leg in legs])
        for leg in legs:
            held = self._held.pop(leg.match_id, None)
            if held is not None:
                self.events.publish("finished", held)
        self.events.publish(
            "pair",
            {"matches": [leg.match_id for leg in legs], "seats": [legs[0].seat0, legs[0].seat1]},
        )
        self.want_board()

    def live(self) -> list[LiveMatch]:
        """The matches in flight, oldest first."""
        return sorted(self._running.values(), key=lambda match: match.started)

    # --- bots ----------------------------------------------------------------------------------

    def admit(self, row: BotRow) -> list[str]:
        """A bot just registered enters the ladder; the older versions of its name still active
        leave it (replaced). Returns the idents that left."""
        left = []
        for entrant in self.store.entrants(EntrantState.ACTIVE):
            if entrant.name == row.name and entrant.ident != row.ident:
                self.store.set_entrant(
                    entrant.ident, EntrantState.RETIRED, f"replaced by {row.ident}"
                )
                left.append(entrant.ident)
        self.store.enter(row.ident, row.name)
        self.events.publish("entered", {"bot": row.ident, "replaced": left})
        self._changed()
        return left

    def retire(self, author: str, ident: str) -> Entrant:
        """An author retires one of their bots from the ladder.

        Raises:
            ArenaRefusal: no such bot in the ladder (404), or not this author's (403).
        """
        entrant = self.store.entrant(ident)
        name, _ = parse_spec(ident)
        if entrant is None:
            raise ArenaRefusal(f"no bot {ident} in the ladder", 404)
        if self.store.owner(name) != author:
            raise ArenaRefusal(f"{ident} is not yours", 403)
        self.store.set_entrant(ident, EntrantState.RETIRED, f"retired by {author}")
        self.events.publish("left", {"bot": ident, "why": "retired"})
        self._changed()
        found = self.store.entrant(ident)
        assert found is not None
        return found

    def _changed(self) -> None:
        if self.ladder is not None:
            self.ladder.wake()
        self.want_board()


def _half_width(rating: float, low: float | None, high: float | None) -> float:
    """The half-width of a rating's interval; of a one-sided one (a bot that won or lost every
    series), the distance from the rating to its one bound."""
    if low is not None and high is not None:
        return max((high - low) / 2, 1.0)
    bound = low if low is not None else high
    return UNKNOWN_WIDTH if bound is None else max(abs(rating - bound), 1.0)
