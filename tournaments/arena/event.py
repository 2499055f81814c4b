"""The arena's event: a Swiss, a knockout or a round robin of the ladder's bots, frozen at a
deadline and played on the arena's executor while the ladder pauses.

An organiser schedules one (:func:`create_event`, ``gin arena event create``); one event at a
time may be scheduled or playing. At its deadline (:func:`freeze`) the field is what the ladder
had active then, one version per bot name (:func:`event_field`), and it is frozen: the snapshot
(names, versions, hashes) and the event's league (a league of the store like any other, so
``gin league status|standings|verify NAME`` read it) are written in one transaction. Too small
a field ends the event "not played: N bots", with nothing else written.

The server's loop (:func:`run_events`) holds the ladder (no new pair starts; those in flight
finish), plays the event's league with the league runner on the ladder's executor, and lets the
ladder go on once the event is over. Every step is a state of the store (``arena_events``, the
league's rounds and results), so a server killed at any point resumes where it was: a deadline
passed while it was down freezes at once, with the field as it was at the deadline; a frozen
event plays; a round in flight resumes as any league's does.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import trio

from protocol.bounded import JsonObject, loads_json
from referee.control import TimeControl
from referee.faults import StartupFailure
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.rules import Action, greedy_policy
from referee.seats import BotIdentity, Decision, InProcessSeat, Seat, SeatEvent, Welcome
from tournaments.arena.bundle import bundle_path
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore, EntrantState, EventPhase, EventRow
from tournaments.executors import Executor
from tournaments.executors.worker import reason
from tournaments.formats.records import MatchJob, MatchOutcome, MatchSummary, WorkerFailure
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import (
    EVENT_MIN_BOTS,
    NAME_PATTERN,
    LeagueConfig,
    StoredLeague,
    league_secret,
    schedule,
    stored_league,
)
from tournaments.registry import Arena, parse_spec
from tournaments.rounds import event_state
from tournaments.runner import LeagueBusy, LeagueRunner, Listener
from tournaments.stats.sprt import SprtSettings
from tournaments.store import MatchRow, MatchState

if TYPE_CHECKING:
    from tournaments.arena.service import ArenaService

__all__ = [
    "EVENT_FORMATS",
    "EVENT_POLL_S",
    "EventOptions",
    "EventRefused",
    "EventRunner",
    "LentExecutor",
    "SnapshotBot",
    "WithdrawnSeat",
    "cancel_event",
    "create_event",
    "event_field",
    "event_over",
    "freeze",
    "open_event",
    "parse_deadline",
    "run_events",
    "snapshot_of",
    "upload_note",
    "withdrawn",
]

_log = logging.getLogger("gin.arena")

EVENT_FORMATS: Final = ("round-robin", "swiss", "knockout")
EVENT_POLL_S: Final = 2.0
"""How often the server looks for an event created or cancelled from the shell."""
RETRY_S: Final = 30.0
"""How long after a run that left matches failed the event's run is tried again."""
MIN_FIELD: Final = {"round-robin": 2, **EVENT_MIN_BOTS}
"""The fewest bots each format plays with."""
SEQUENTIAL: Final = SprtSettings(elo0=-100.0, elo1=100.0, alpha=0.1, beta=0.1)
"""A sequential knockout tie's test (docs/events.md's example)."""


class EventRefused(ValueError):  # noqa: N818 - named for what happens, as ArenaRefusal
    """An event the arena will not schedule or cancel (one line saying why)."""


@dataclass(frozen=True, slots=True)
class EventOptions:
    """What a format needs: a Swiss's rounds, the duplicate pairs of a tie, the seeding, and a
    knockout's sequential ties' cap (0: fixed ties of ``pairs`` pairs)."""

    rounds: int = 0
    pairs: int = 1
    seeding: str = "ratings"
    """``ratings`` (the ladder's, at the first round) or ``draw``."""
    max_pairs: int = 0

    def to_json(self) -> str:
        """The ``options`` column."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> EventOptions:
        """Read :meth:`to_json`'s form (a field it lacks keeps its default)."""
        data = loads_json(text)
        if not isinstance(data, dict):
            return cls()
        rounds, pairs, seeding, most = (
            data.get(k) for k in ("rounds", "pairs", "seeding", "max_pairs")
        )
        return cls(
            rounds if isinstance(rounds, int) else 0,
            pairs if isinstance(pairs, int) else 1,
            seeding if isinstance(seeding, str) else "ratings",
            most if isinstance(most, int) else 0,
        )


@dataclass(frozen=True, slots=True)
class SnapshotBot:
    """A bot frozen into an event: the registry's name, version and code hash at the deadline."""

    name: str
    version: str
    hash: str

    @property
    def ident(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def to_dict(self) -> JsonObject:
        """Its JSON form, in the ``snapshot`` column."""
        return {"name": self.name, "version": self.version, "hash": self.hash}


def snapshot_of(row: EventRow) -> list[SnapshotBot]:
    """An event's frozen field (empty before its deadline)."""
    data = loads_json(row.snapshot)
    bots = []
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, dict):
            name, version, digest = (entry.get(key) for key in ("name", "version", "hash"))
            if isinstance(name, str) and isinstance(version, str) and isinstance(digest, str):
                bots.append(SnapshotBot(name, version, digest))
    return bots


def parse_deadline(text: str) -> float:
    """An ISO 8601 time (``2026-12-03T18:00:00+01:00``; one without a zone is UTC) as seconds
    since the epoch.

    Raises:
        EventRefused: not such a time.
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise EventRefused(
            f"--at {text!r} is not an ISO 8601 time (e.g. 2026-12-03T18:00:00+00:00; "
            "no zone means UTC)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _check_options(kind: str, options: EventOptions) -> None:
    """Refuse a format and options that do not go together.

    Raises:
        EventRefused: saying which.
    """
    if kind not in EVENT_FORMATS:
        raise EventRefused(f"--format must be one of {', '.join(EVENT_FORMATS)}, not {kind!r}")
    if options.pairs < 1:
        raise EventRefused(f"--pairs must be at least 1, not {options.pairs}")
    if kind == "swiss" and options.rounds < 1:
        raise EventRefused("a swiss needs --rounds N, at least 1")
    if kind != "swiss" and options.rounds:
        raise EventRefused(f"--rounds is for a swiss; a {kind} plays as many as its format has")
    if options.max_pairs and kind != "knockout":
        raise EventRefused("--max-pairs (sequential ties) is for a knockout only")
    if options.max_pairs < 0:
        raise EventRefused(f"--max-pairs must be at least 1, not {options.max_pairs}")
    if options.seeding not in ("ratings", "draw"):
        raise EventRefused(f"--seeding must be ratings or draw, not {options.seeding!r}")


def create_event(
    store: ArenaStore, name: str, at: float, kind: str, options: EventOptions, *, now: float
) -> EventRow:
    """Schedule an event.

    Raises:
        EventRefused: a bad name, a deadline not in the future, a bad format and option
            combination, a league of that name, or another event scheduled or playing.
    """
    if not NAME_PATTERN.fullmatch(name) or name == LADDER:
        raise EventRefused(
            f"{name!r} is not an event name: 1-40 of a-z, 0-9, _ and -, starting with a letter "
            f"or digit, not {LADDER!r}"
        )
    _check_options(kind, options)
    if at <= now:
        when = datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")
        raise EventRefused(f"the deadline {when} is in the past: give a time to come")
    if name in store.leagues():
        raise EventRefused(f"a league named {name} exists already: give the event another name")
    row = EventRow(name, kind, at, options.to_json(), EventPhase.SCHEDULED, now, now)
    blocking = store.add_event(row)
    if blocking is not None:
        held = store.arena_event(blocking)
        if blocking == name and held is not None and not held.phase.open:
            raise EventRefused(f"an event named {name} was held already: give another name")
        phase = "" if held is None else f" ({held.phase.value})"
        raise EventRefused(
            f"event {blocking} is scheduled or playing{phase}: one event at a time; cancel it "
            "first (gin arena event cancel) or wait for its end"
        )
    return row


def cancel_event(store: ArenaStore, name: str) -> None:
    """Cancel an event whose deadline has not come.

    Raises:
        EventRefused: no such event, or not scheduled (frozen, played, cancelled).
    """
    row = store.arena_event(name)
    if row is None:
        raise EventRefused(f"no event {name!r}")
    if not store.set_event_phase(name, EventPhase.SCHEDULED, EventPhase.CANCELLED, "cancelled"):
        raise EventRefused(f"event {name} is {row.phase.value}: only a scheduled one is cancelled")


def open_event(store: ArenaStore) -> EventRow | None:
    """The event scheduled or playing, if any."""
    return next((row for row in store.arena_events() if row.phase.open), None)


def upload_note(store: ArenaStore, at: float) -> str:
    """What an upload made (or accepted) at ``at`` is told of the event: that its uploads are
    closed and the upload plays in the ladder only, or until when they count (empty: no event
    scheduled or playing)."""
    row = open_event(store)
    if row is None:
        return ""
    when = datetime.fromtimestamp(row.at, UTC).isoformat(timespec="seconds")
    if at >= row.at:
        return (
            f"uploads for event {row.name} closed at {when}: this upload plays in the ladder only"
        )
    return (
        f"event {row.name}: the version of each bot active in the ladder at {when} plays in it "
        "(this one, if it is accepted by then)"
    )


def event_field(store: ArenaStore, at: float) -> list[SnapshotBot]:
    """The bots an event with deadline ``at`` plays, by name: for each bot name, the version
    that was active in the ladder at the deadline (entered by then, and active still or changed
    after it), if the registry still has it. A name has one active version at a time (a new
    one replaces the old), so this is the latest version of it accepted by the deadline, unless
    that one was suspended or retired."""
    field: dict[str, SnapshotBot] = {}
    for entrant in store.entrants():
        if entrant.joined_at >= at:  # accepted by the deadline: before it
            continue
        if entrant.state is not EntrantState.ACTIVE and entrant.changed_at <= at:
            continue
        name, version = parse_spec(entrant.ident)
        row = store.bot(name, version)
        if row is None or version is None:
            continue
        known = field.get(name)
        if known is None or entrant.joined_at >= _joined(store, known):
            field[name] = SnapshotBot(name, version, row.hash)
    return [field[name] for name in sorted(field)]


def _joined(store: ArenaStore, bot: SnapshotBot) -> float:
    entrant = store.entrant(bot.ident)
    return 0.0 if entrant is None else entrant.joined_at


def _config(
    row: EventRow,
    field: list[SnapshotBot],
    store: ArenaStore,
    jobs: int,
    time_control: TimeControl | None,
) -> LeagueConfig:
    """The event's league definition over ``field``."""
    options = EventOptions.from_json(row.options)
    idents = tuple(bot.ident for bot in field)
    rounds = options.rounds
    if row.format == "swiss":
        rounds = min(rounds, len(field) if len(field) % 2 else len(field) - 1)
    seeding = "order"
    if row.format != "round-robin":
        rated = options.seeding == "ratings" and LADDER in store.leagues()
        seeding = f"league:{LADDER}" if rated else "draw"
    sequential = row.format == "knockout" and options.max_pairs > 0
    return LeagueConfig(
        row.name,
        None,
        idents,
        series_per_pairing=2 * options.pairs,
        duplicate=True,
        jobs=jobs,
        time_control=time_control or TimeControl(),
        format=row.format,
        rounds=rounds,
        seeding=seeding,
        sprt=SEQUENTIAL if sequential else None,
        max_pairs=options.max_pairs if sequential else 0,
    )


def freeze(
    store: ArenaStore, row: EventRow, *, jobs: int = 2, time_control: TimeControl | None = None
) -> EventRow:
    """Freeze an event whose deadline has come: its snapshot and its league in one transaction,
    or, with too small a field, the outcome "not played: N bots" alone. Returns the event as it
    is after (another process froze it first: as that one left it)."""
    field = event_field(store, row.at)
    least = MIN_FIELD[row.format]
    if len(field) < least:
        outcome = f"not played: {len(field)} bots (a {row.format} needs at least {least})"
        store.set_event_phase(row.name, EventPhase.SCHEDULED, EventPhase.NOT_PLAYED, outcome)
    else:
        config = _config(row, field, store, jobs, time_control)
        league = StoredLeague(config, config.bots)
        secret = league_secret(config, store.secret("home"))
        matches = [] if config.event else schedule(config, list(config.bots), secret)
        snapshot = json.dumps([bot.to_dict() for bot in field])
        store.freeze_event(row.name, snapshot, league.to_json(), matches, secret)
    found = store.arena_event(row.name)
    assert found is not None
    return found


def event_over(store: ArenaStore, name: str) -> bool:
    """Whether an event's league has nothing left to play."""
    league = stored_league(store, name)
    if league is None:
        return False
    if league.config.event:
        return event_state(store, name).finished
    counts = store.counts(name)
    return sum(counts.values()) == counts.get(MatchState.DONE, 0)


def withdrawn(store: ArenaStore, row: EventRow) -> dict[str, str]:
    """The bots of an event's field retired or suspended since its deadline, with why."""
    out = {}
    for bot in snapshot_of(row):
        entrant = store.entrant(bot.ident)
        if (
            entrant is not None
            and entrant.state is not EntrantState.ACTIVE
            and entrant.changed_at > row.at
            and not entrant.reason.startswith("replaced by")
        ):
            out[bot.ident] = f"{entrant.state.value}: {entrant.reason}"
    return out


class LentExecutor:
    """The arena's executor lent to an event's run: everything but its close, which is its
    owner's (the ladder's, at the server's end: a Dask client closed after the event would
    leave the ladder without its cluster)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    @property
    def slots(self) -> int:
        """The owner's."""
        return self.executor.slots

    @slots.setter
    def slots(self, slots: int) -> None:
        self.executor.slots = slots

    @property
    def tables(self) -> int:
        """The owner's."""
        return self.executor.tables

    @property
    def sittings(self) -> bool:
        """The owner's."""
        return self.executor.sittings

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Played by the owner."""
        return await self.executor.play(job, sent=sent)

    async def capacity(self) -> int:
        """The owner's."""
        return await self.executor.capacity()

    async def sweep(self) -> int:
        """The owner's."""
        return await self.executor.sweep()

    async def aclose(self) -> None:
        """Nothing: the executor stays its owner's, open."""


class WithdrawnSeat:
    """The seat of a bot withdrawn from an event (retired or suspended since its deadline): it
    never starts, so the referee records a start-up failure and the series is forfeited, in a
    log like any other (``gin league verify`` checks it)."""

    def __init__(self, why: str) -> None:
        self.why = why

    async def prepare(self) -> None:
        """Nothing to make."""

    async def connect(self, seat: int) -> BotIdentity:
        """Never: the bot is withdrawn.

        Raises:
            StartupFailure: always.
        """
        raise StartupFailure(f"withdrawn from the event ({self.why})", seat=seat)

    async def welcome(self, welcome: Welcome) -> None:
        """Never called: the series ends at the start."""

    async def decide(self, decision: Decision) -> Action:  # noqa: ARG002 - a seat's shape
        """Never called: the series ends at the start.

        Raises:
            StartupFailure: always.
        """
        raise StartupFailure(f"withdrawn from the event ({self.why})")

    def notify(self, event: SeatEvent) -> None:
        """Nothing to tell."""

    def hold(self, held: bool) -> None:
        """Nothing to pause."""

    async def close(self, detail: str) -> None:
        """Nothing to close."""

    def diagnostics(self) -> dict[str, object]:
        """No evidence: the bot never ran."""
        return {}


class EventRunner(LeagueRunner):
    """The event's league runner: a match with a withdrawn bot (:func:`withdrawn`) is not sent
    to the executor; the referee plays it in-process, the withdrawn seat failing to start, so
    it forfeits the series (both withdrawn: both forfeit), logged and recorded as any match."""

    store: ArenaStore

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        config: LeagueConfig,
        event: EventRow,
        *,
        jobs: int,
        strict: bool = False,
        listener: Listener | None = None,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(
            arena, store, config, jobs, strict=strict, listener=listener, executor=executor
        )
        self.event = event

    async def _attempt(
        self,
        match: MatchRow,
        sitting: str = "",
        ends: bool = True,
        sent: Callable[[], None] | None = None,
    ) -> WorkerFailure | None:
        out = withdrawn(self.store, self.event)
        if match.seat0 not in out and match.seat1 not in out:
            return await super()._attempt(match, sitting, ends, sent)
        log_path = self._fresh_log(match)
        seats = tuple(self._seat(ident, out, match) for ident in (match.seat0, match.seat1))
        config = MatchConfig(
            match.match_id,
            match.seed,
            self.config.rules,
            self.config.time_control,
            self.config.fault_policy,
            bot_seeds=league_bot_seeds(
                self.store.league_secret(self.config.name),
                self.store.secret("home"),
                match.match_id,
            ),
        )
        with MatchLog(log_path) as log:
            result = await play_match((seats[0], seats[1]), config, log)
        self._record(
            match, MatchOutcome(MatchSummary.of(result, log_path), reason(result)), log_path
        )
        self.listener(self.progress)
        return None

    def _seat(self, ident: str, out: dict[str, str], match: MatchRow) -> Seat:
        if ident in out:
            return WithdrawnSeat(out[ident])
        row = self._bot(ident, match)
        seat = InProcessSeat(greedy_policy, row.name, row.version)  # never asked: see above
        seat.identity = BotIdentity(row.name, row.version, row.hash)
        return seat


async def run_events(
    service: ArenaService,
    *,
    poll_s: float = EVENT_POLL_S,
    clock: Callable[[], float] = time.time,
) -> None:
    """The server's events until cancelled: wait for the deadline, freeze, play, finish."""
    store = service.store
    for done in store.arena_events():  # killed after an event's end, before its download
        if done.phase is EventPhase.FINISHED and not bundle_path(service.arena, done.name).exists():
            await trio.to_thread.run_sync(service.event_finished, done.name)
    while True:
        row = open_event(store)
        now = clock()
        if row is None or (row.phase is EventPhase.SCHEDULED and row.at > now):
            wait = poll_s if row is None else min(poll_s, row.at - now)
            await trio.sleep(max(wait, 0.01))
            continue
        if row.phase is EventPhase.SCHEDULED:
            row = freeze(store, row, jobs=service.jobs, time_control=service.time_control)
            service.events.publish("event", {"event": row.name, "phase": row.phase.value})
            service.want_board()
            continue
        await _play(service, row)
        if event_over(store, row.name):
            store.set_event_phase(row.name, EventPhase.PLAYING, EventPhase.FINISHED, "finished")
            await trio.to_thread.run_sync(service.event_finished, row.name)
            service.events.publish("event", {"event": row.name, "phase": "finished"})
            service.want_board()
        else:
            await trio.sleep(RETRY_S)  # matches failed every attempt: try again later


async def _play(service: ArenaService, row: EventRow) -> None:
    """Play the event's league with the ladder held (and idle first, so the event has the
    executor's slots)."""
    league = stored_league(service.store, row.name)
    if league is None:
        return
    ladder = service.ladder
    with ladder.holding() if ladder is not None else nullcontext():
        while ladder is not None and ladder.in_flight:
            await trio.sleep(0.1)
        shared = service.executor or (ladder.executor if ladder is not None else None)
        executor = None if shared is None else LentExecutor(shared)
        runner = EventRunner(
            service.arena,
            service.store,
            league.config,
            row,
            jobs=service.jobs,
            strict=service.strict,
            listener=service.progressed,
            executor=executor,
        )
        try:
            await runner.run()
        except LeagueBusy:  # played elsewhere (gin league run NAME, say): look again later
            _log.warning("event %s is being played by another process", row.name)
            await trio.sleep(RETRY_S)
