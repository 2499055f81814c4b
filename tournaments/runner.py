"""The league runner: N matches at once, each in a worker process, driven by trio.

Every match is marked running before its worker starts and done when its result is written
(once, keyed by match id). A runner killed outright leaves some matches marked running: the
next run puts them back to pending (their partial logs are kept aside) and plays them again, so
no result is lost or counted twice. Ctrl-C stops the workers (they tear their bots down) and
leaves the league resumable.

The two legs of a duplicate pair (same decks, seats swapped) never run at the same time, so a
bot cannot pass what it saw in one leg to itself in the other: a leg whose mirror is running
waits without taking a slot, and other matches go ahead. The pairs come from the store's
``duplicate_of``, so a resumed league keeps the rule. One runner holds a league at a time (a
lock file in the arena home): a second one is refused before it touches anything.

A run may stop early: a league with a sequential test (``LeagueConfig.sprt``, a match of two
bots) stops once the test over its complete pairs decides, and a caller may give a condition of
its own. Both are checked before the first match and after each recorded result; once one holds
no new match starts, the running ones finish and are recorded, and :meth:`LeagueRunner.run`
returns with the rest still pending (a later run carries on from there). A pair left with one
leg played is not counted by the test (:func:`tournaments.stats.pairs.pentanomial` counts complete
pairs only); its other leg is played by the next run. So that few are, and complete pairs come
in as soon as they can, such a run plays both legs of a pair on one slot, one after the other
(a league's run lets first legs go ahead, which keeps every slot busy to the end).

Where the executor keeps bots between series (``Executor.sittings``), a run plays in blocks:
up to :data:`SITTING_MAX` consecutive pairs of one pairing on one slot, first their first legs
in order (one sitting: the same bot processes, which saves a start-up per series), then their
second legs in the same order (another sitting, on fresh processes). So each leg of a pair meets
a bot in the same state (as many series played before it in its sitting), the two legs of a pair
never play at once, and no process ever holds both legs of one pair. A block is as long as
spreads the pending pairs over the executor's tables (``Executor.tables``), so a short league
still keeps every table busy; a run that may stop early uses shorter blocks
(:data:`STOPPING_SITTING_MAX`), since a stop leaves the started block's mirrors for later.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import shutil
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from tournaments import rounds
from tournaments.executors import Executor, ExecutorError
from tournaments.executors.local import LocalExecutor
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import LeagueConfig, stored_league
from tournaments.registry import Arena, parse_spec
from tournaments.stats.margin_sprt import sequential_status
from tournaments.stats.pairs import PairOutcome, Pentanomial, pair_outcomes
from tournaments.stats.sprt import SprtStatus
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow, Store, StoreDamaged

__all__ = [
    "AHEAD_PER_SLOT",
    "RETRIES",
    "SITTING_MAX",
    "STOPPING_SITTING_MAX",
    "LeagueBusy",
    "LeagueRunner",
    "Listener",
    "PairTally",
    "Progress",
    "blocks",
    "duplicate_pair",
    "pairs_in_order",
    "runner_of",
    "sittings_of",
]


RETRIES: Final = 2
"""Attempts at a match whose worker failed (not a bot's fault: that is a result)."""
CAPACITY_POLL_S: Final = 5.0
MIN_FREE_BYTES: Final = 32 * 1024 * 1024
"""The room a match needs on the home's disk (its log, its stderr files, the store's growth)."""
AHEAD_PER_SLOT: Final = 4
"""Matches started (playing, or waiting for a slot or a mirror) per slot: the runner's window
onto the league's pending matches."""
SITTING_MAX: Final = 16
"""Series in one sitting at most (a block of pairs: twice as many series)."""
STOPPING_SITTING_MAX: Final = 4
"""Series in one sitting at most in a run that may stop early (a sequential test)."""


@dataclass
class Progress:
    """What the live display shows; updated by the runner."""

    league: str
    total: int
    done: int
    failed: int = 0
    started_at: float = field(default_factory=time.monotonic)
    finished_now: int = 0
    running: dict[str, float] = field(default_factory=dict)
    faults: deque[str] = field(default_factory=lambda: deque(maxlen=6))
    durations: deque[float] = field(default_factory=lambda: deque(maxlen=50))
    slots: int = 1
    """Matches at once (a cluster's capacity changes as workers come and go)."""
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=8))
    """The last matches recorded, a line each (who won, the games), newest last."""
    stopped: bool = False
    """The run's stop condition held: no new match starts (the sequential test decided, or the
    caller's condition)."""

    def eta_s(self) -> float | None:
        """Seconds left, from the recent matches' durations."""
        if not self.durations:
            return None
        left = self.total - self.done - self.failed
        mean = sum(self.durations) / len(self.durations)
        return left * mean / max(1, min(self.slots, max(left, 1)))


Listener = Callable[[Progress], None]
StopCondition = Callable[[], bool]
"""A caller's reason to stop a run early, asked before the first match and after each result."""


class PairTally:
    """The duplicate pairs of a two-bot league from ``bot``'s side, counted result by result
    (what the sequential test and ``gin match``'s display read).

    A leg waits for its mirror; the pair is counted when both are in, whichever came first.
    """

    def __init__(self, bot: str, results: Iterable[ResultRow] = ()) -> None:
        self.bot = bot
        self.units: list[PairOutcome] = []
        """Every complete pair, in the order they were completed."""
        self.series = 0
        """Series counted (complete pairs' legs and lone legs)."""
        self._counts = [0, 0, 0, 0, 0]
        self._waiting: dict[str, ResultRow] = {}
        for result in results:
            self.add(result)

    def add(self, result: ResultRow) -> PairOutcome | None:
        """Count one result (once: the runner passes the ones it recorded); returns the pair it
        completed, if it did."""
        self.series += 1
        key = result.duplicate_of or result.match_id
        other = self._waiting.pop(key, None)
        if other is None:
            self._waiting[key] = result
            return None
        (unit,) = pair_outcomes([other, result])
        if unit.bot != self.bot:
            unit = unit.flipped()
        self.units.append(unit)
        self._counts[round(2 * sum(unit.scores))] += 1
        return unit

    @property
    def counts(self) -> Pentanomial:
        """The complete pairs by ``bot``'s series score in them: 0, 0.5, 1, 1.5, 2."""
        counts = self._counts
        return counts[0], counts[1], counts[2], counts[3], counts[4]

    @property
    def half_pairs(self) -> int:
        """Pairs with one leg in and the other not (not counted)."""
        return len(self._waiting)


class LeagueRunner:
    """Runs a league's pending matches."""

    def __init__(
        self,
        arena: Arena,
        store: Store,
        config: LeagueConfig,
        jobs: int,
        *,
        strict: bool = False,
        listener: Listener | None = None,
        executor: Executor | None = None,
        stop: StopCondition | None = None,
        tally: PairTally | None = None,
        advance: Callable[[], int] | None = None,
    ) -> None:
        """``stop``: the caller's condition to stop early; ``tally``: the pairs counted so far
        (made from the store when the league has a sequential test and none is given; the
        runner adds each result it records); ``advance``: what schedules the next matches once
        every pending one is played, returning how many (an event's next round,
        :func:`tournaments.rounds.advance`, for an event when none is given)."""
        self.arena = arena
        self.store = store
        self.config = config
        self.executor: Executor = executor or LocalExecutor(jobs)
        self.strict = strict
        self.listener = listener or (lambda _progress: None)
        self.stop = stop
        self.tally = tally
        self.advance = advance
        if advance is None and config.event:
            self.advance = functools.partial(rounds.advance, store, config.name)
        if tally is None and config.sprt is not None and not config.event:  # a knockout's: ties'
            recorded = store.results(config.name, as_recorded=True)
            self.tally = PairTally(_first_bot(store, config), recorded)
        self._started = 0
        """Tasks started and not ended: the window onto the pending matches."""
        self._room = trio.lowlevel.ParkingLot()
        """Where the reader of pending matches waits for room in the window."""
        self.decision: SprtStatus | None = None
        """The sequential test's status when it decided (``None``: it has not, or none)."""
        counts = store.counts(config.name)
        self.progress = Progress(
            config.name,
            sum(counts.values()),
            counts.get(MatchState.DONE, 0),
            slots=self.executor.slots,
        )

    async def run(self) -> Progress:
        """Play every pending match; returns the final progress.

        Raises:
            KeyboardInterrupt: passed on after the running matches were stopped and put back.
            LeagueBusy: another runner is playing this league (nothing was touched).
        """
        with _league_lock(self.arena, self.config.name):
            return await self._run()

    async def _run(self) -> Progress:
        await self._sweep()
        self.store.reset_running(self.config.name, retry_failed=True)
        self.progress.failed = 0
        self._resume_decision()
        self._check_stop()
        self._advanced()  # an event killed between rounds pairs its next one now
        self.listener(self.progress)  # the display shows the league at once, even with nothing left
        limiter = trio.CapacityLimiter(self.progress.slots)
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._follow_capacity, limiter)
                while True:  # a league once; an event a round at a time
                    async with trio.open_nursery() as nursery:
                        if not self.progress.stopped:
                            await self._start(nursery, limiter)
                    if not self._advanced():
                        break
                outer.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            if group.subgroup(KeyboardInterrupt) is not None:
                raise KeyboardInterrupt from None  # Ctrl-C, whichever task it reached
            lost = group.subgroup(ExecutorError)
            if lost is not None:
                raise _first(lost) from None
            raise
        finally:
            try:
                with trio.CancelScope(shield=True):
                    await self.executor.aclose()
            finally:
                self._put_back()
        return self.progress

    def _advanced(self) -> bool:
        """Schedule the next matches (an event's next round) if there is a way to and the run
        goes on; whether any were."""
        if self.advance is None or self.progress.stopped:
            return False
        added = self.advance()
        self.progress.total += added
        return added > 0

    def _put_back(self) -> None:
        """Put the matches left running back to pending; on a full disk, leave them for the
        next run, which does it first (the error that stopped this run is the one to say)."""
        try:
            self.store.reset_running(self.config.name)
        except sqlite3.OperationalError as error:
            if not _disk_full(error):
                raise

    async def _sweep(self) -> None:
        """Take the jails and cgroups of killed referees (never a live one's), and say so."""
        swept = await self.executor.sweep()
        if swept:
            self.progress.faults.append(f"swept {swept} jail(s) of killed referees")

    async def _follow_capacity(self, limiter: trio.CapacityLimiter) -> None:
        """Keep the number of matches at once to the executor's capacity as it changes."""
        while True:
            await trio.sleep(CAPACITY_POLL_S)
            slots = await self.executor.capacity()
            if slots != limiter.total_tokens:
                limiter.total_tokens = self.progress.slots = slots
                self._room.unpark_all()  # the window grows (or shrinks) with the slots

    async def _start(self, nursery: trio.Nursery, limiter: trio.CapacityLimiter) -> None:
        """Start the pending matches as the store gives them, keeping a few per slot started
        (:data:`AHEAD_PER_SLOT`): so the runner holds a window of the league, not the league, and
        Ctrl-C has only that window to stop. A league: a task per match (first legs go ahead
        while mirrors wait, which keeps every slot busy to the end). A run that may stop early:
        a task per pair that plays both legs on one slot, one after the other, so complete pairs
        come in as soon as they can and a stop leaves few half-played."""
        by_pairs = self.config.sprt is not None or self.stop is not None
        size = self._sitting_size(by_pairs)
        if size > 1:
            await self._start_blocks(nursery, size)
            return
        for legs in pairs_in_order(self.store.pending(self.config.name)):
            places = 1 if by_pairs else len(legs)  # each task holds a place in the window
            while self._started + places > AHEAD_PER_SLOT * max(self.progress.slots, 1):
                await self._room.park()  # a task ended, or the executor grew
            if self.progress.stopped:
                return
            self._started += places
            if by_pairs:
                nursery.start_soon(self._windowed, self._play_pair(legs, limiter))
                continue
            pair = trio.Lock()  # the legs of a pair are scheduled together: one lock each
            for match in legs:
                nursery.start_soon(self._windowed, self._play(match, limiter, pair))

    def _sitting_size(self, by_pairs: bool) -> int:
        """Pairs per block (1: no sittings): the pending pairs spread over the tables."""
        if not self.executor.sittings:
            return 1
        pending = self.store.counts(self.config.name).get(MatchState.PENDING, 0)
        pairs = -(-pending // 2)
        tables = max(1, self.executor.tables)
        cap = STOPPING_SITTING_MAX if by_pairs else SITTING_MAX
        return max(1, min(cap, -(-pairs // tables)))

    async def _start_blocks(self, nursery: trio.Nursery, size: int) -> None:
        """A task per block of pairs (:func:`blocks`), a block per table at once: its sittings
        one after the other (see the module's docstring)."""
        tables = trio.CapacityLimiter(max(1, self.executor.tables))
        ahead = 2 if self.executor.slots > self.executor.tables else 1
        for block in blocks(pairs_in_order(self.store.pending(self.config.name)), size):
            while self._started + 1 > AHEAD_PER_SLOT * max(self.progress.slots, 1):
                await self._room.park()
            if self.progress.stopped:
                return
            self._started += 1
            nursery.start_soon(self._windowed, self._play_block(block, tables, ahead))

    async def _play_block(
        self, block: list[list[MatchRow]], tables: trio.CapacityLimiter, ahead: int
    ) -> None:
        """A block's series in order, each sent once the one before is (so a worker gets a
        sitting's series in order), ``ahead`` at once: with two, the next series is with the
        worker while one plays (its fresh bots, if any, start meanwhile). A leg waits for its
        mirror to end."""
        mirrors = {duplicate_pair(legs[0]): trio.Lock() for legs in block}
        room = trio.Semaphore(ahead)
        async with tables, trio.open_nursery() as nursery:
            for sitting in sittings_of(block):
                key = f"{self.config.name}/{sitting[0].match_id}"
                for index, match in enumerate(sitting):
                    await room.acquire()
                    sent = trio.Event()
                    ends = index == len(sitting) - 1
                    mirror = mirrors[duplicate_pair(match)]
                    nursery.start_soon(
                        functools.partial(
                            self._play_in_block,
                            match,
                            sitting=key,
                            ends=ends,
                            mirror=mirror,
                            room=room,
                            sent=sent,
                        )
                    )
                    await sent.wait()

    async def _play_in_block(
        self,
        match: MatchRow,
        *,
        sitting: str,
        ends: bool,
        mirror: trio.Lock,
        room: trio.Semaphore,
        sent: trio.Event,
    ) -> None:
        try:
            async with mirror:
                await self._play_leg(match, sitting, ends=ends, sent=sent.set)
        finally:
            sent.set()
            room.release()

    async def _windowed(self, play: Awaitable[None]) -> None:
        try:
            await play
        finally:
            self._started -= 1
            self._room.unpark_all()

    async def _play(self, match: MatchRow, limiter: trio.CapacityLimiter, pair: trio.Lock) -> None:
        async with pair, limiter:  # the pair first: a leg waiting for its mirror holds no slot
            await self._play_leg(match)

    async def _play_pair(self, legs: list[MatchRow], limiter: trio.CapacityLimiter) -> None:
        async with limiter:
            for match in legs:
                await self._play_leg(match)

    async def _play_leg(
        self,
        match: MatchRow,
        sitting: str = "",
        *,
        ends: bool = True,
        sent: Callable[[], None] | None = None,
    ) -> None:
        for attempt in range(1, RETRIES + 1):
            if self.progress.stopped:
                if attempt > 1:  # held since its first attempt: put back for a later run
                    self.store.mark(match.match_id, MatchState.PENDING)
                return  # left pending for a later run
            self._check_room()
            try:
                if not self.store.claim(match.match_id, retry=attempt > 1):
                    self.progress.faults.append(f"{match.match_id}: taken by another runner")
                    return
                failure = await self._attempt(match, sitting, ends, sent)
            except (sqlite3.OperationalError, OSError) as error:
                if not _disk_full(error):
                    raise
                raise ExecutorError(self._full_disk(str(error))) from None
            if failure is None:
                return
            await self._sweep()  # a worker that died left its jails: take them now, not later
            if attempt == RETRIES:
                self.store.mark(match.match_id, MatchState.FAILED, failure.message)
                self.progress.failed += 1
                self.progress.faults.append(f"{match.match_id}: worker failed: {failure}")
                self.listener(self.progress)

    async def _attempt(
        self,
        match: MatchRow,
        sitting: str = "",
        ends: bool = True,
        sent: Callable[[], None] | None = None,
    ) -> WorkerFailure | None:
        """One worker run of a match this run has claimed; None when a result was recorded,
        else what went wrong."""
        log_path = self._fresh_log(match)
        self.progress.running[match.match_id] = time.monotonic()
        self.listener(self.progress)
        started = time.monotonic()
        try:
            outcome = await self.executor.play(self._job(match, log_path, sitting, ends), sent=sent)
        finally:
            self.progress.running.pop(match.match_id, None)
        if isinstance(outcome, WorkerFailure):
            return outcome
        self._record(match, outcome, log_path)
        self.progress.durations.append(time.monotonic() - started)
        self.listener(self.progress)
        return None

    def _record(self, match: MatchRow, outcome: MatchOutcome, log_path: Path) -> None:
        summary = outcome.summary
        seats = (match.seat0, match.seat1)
        row = ResultRow(
            match.match_id,
            self.config.name,
            summary.winner,
            summary.end,
            outcome.reason,
            summary,
            str(log_path),
            seats,
            match.duplicate_of,
        )
        fresh = self.store.record_result(row)
        if fresh:
            if self.tally is not None:
                self.tally.add(row)
            self._check_stop()
            self.progress.done += 1
            self.progress.finished_now += 1
            self.progress.recent.append(_result_line(row))
            for fault in summary.faults:
                self.progress.faults.append(
                    f"{seats[fault.seat]}: {fault.kind.value}: {fault.detail}"[:160]
                )

    def _check_room(self) -> None:
        """Stop before a match when the home's disk is (nearly) full: its log and result would
        not fit, and the store must stay writable to be resumed.

        Raises:
            ExecutorError: under :data:`MIN_FREE_BYTES` free.
        """
        try:
            free = shutil.disk_usage(self.arena.home).free
        except OSError:
            return  # not knowable here: the writes themselves will tell
        if free < MIN_FREE_BYTES:
            raise ExecutorError(self._full_disk(f"{free // 1024} KiB free"))

    def _full_disk(self, what: str) -> str:
        return (
            f"the disk of {self.arena.home} is full ({what}): free some space, then resume "
            "(nothing recorded is lost)"
        )

    def _resume_decision(self) -> None:
        """A match decided in an earlier run stays decided: what finished since changes
        nothing, and what a killed run left pending is dropped."""
        tested = self.config.sprt is not None and not self.config.event
        kept = self.store.decision(self.config.name) if tested else None
        if kept is not None:
            self.decision = _kept_decision(self.store.decide(self.config.name, kept))
            self.progress.stopped = True

    def _check_stop(self) -> None:
        """Mark the run stopped when the sequential test has decided or the caller's condition
        holds (once stopped, it stays so: the first decision is the one kept)."""
        if self.progress.stopped:
            return
        settings = self.config.sprt
        if settings is not None and self.tally is not None:
            margins = [unit.margin for unit in self.tally.units]
            now = sequential_status(settings, self.tally.counts, margins)
            if now.verdict is not None:
                self.decision = _kept_decision(self.store.decide(self.config.name, now.to_json()))
                self.progress.stopped = True
        if self.stop is not None and self.stop():
            self.progress.stopped = True

    def _fresh_log(self, match: MatchRow) -> Path:
        """The match's log path, a partial log of an earlier attempt moved aside."""
        folder = self.arena.logs_dir(self.config.name)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{match.match_id}.jsonl"
        if path.exists():
            path.rename(path.with_name(f"{path.name}.aborted-{int(time.time() * 1000)}"))
        return path

    def _job(
        self, match: MatchRow, log_path: Path, sitting: str = "", ends: bool = True
    ) -> MatchJob:
        bots = [self._bot(ident, match) for ident in (match.seat0, match.seat1)]
        seeds = league_bot_seeds(
            self.store.league_secret(self.config.name), self.store.secret("home"), match.match_id
        )
        return MatchJob(
            match.match_id,
            match.seed,
            (str(bots[0].path), str(bots[1].path)),
            (bots[0].hash, bots[1].hash),
            self.config.rules,
            self.config.time_control,
            self.config.fault_policy,
            str(log_path),
            self.strict,
            os.getpid(),
            bot_seeds=seeds,
            sitting=sitting,
            sitting_ends=ends,
        )

    def _bot(self, ident: str, match: MatchRow) -> BotRow:
        name, version = parse_spec(ident)
        row = self.store.bot(name, version)
        if row is None:  # removed behind the league's back (gin bot remove refuses it)
            raise ExecutorError(
                f"bot {ident} of match {match.match_id} is no longer in the registry: submit it "
                "again (gin bot submit DIR), then resume"
            )
        return row


def _first_bot(store: Store, config: LeagueConfig) -> str:
    """The resolved first bot of a league (the side a match's test is from)."""
    stored = stored_league(store, config.name)
    if stored is not None and stored.resolved:
        return stored.resolved[0]
    return config.bots[0]


def _result_line(row: ResultRow) -> str:
    """One line for a recorded match: who beat whom (by forfeit, if so) and the games, the
    winner's first (a test of the runner shows it)."""
    games = [sum(1 for game in row.summary.game_winners if game == seat) for seat in (0, 1)]
    first, second = row.seats
    if row.winner is None:
        return f"{row.match_id}: {first} and {second} drew, games {games[0]}-{games[1]}"
    winner, loser = row.seats[row.winner], row.seats[1 - row.winner]
    forfeit = " by forfeit" if row.summary.forfeited else ""
    won, lost = games[row.winner], games[1 - row.winner]
    return f"{row.match_id}: {winner} beat {loser}{forfeit}, games {won}-{lost}"


def _kept_decision(text: str) -> SprtStatus:
    """A decision as the store keeps it.

    Raises:
        StoreDamaged: it cannot be read.
    """
    try:
        return SprtStatus.from_json(text)
    except ValueError as error:
        raise StoreDamaged("decision of the match", str(error)) from None


def _disk_full(error: sqlite3.OperationalError | OSError) -> bool:
    """Whether an error of a write says the disk is full."""
    if isinstance(error, OSError):
        return error.errno in (errno.ENOSPC, errno.EDQUOT)
    return "disk is full" in str(error) or getattr(error, "sqlite_errorcode", None) == 13


def pairs_in_order(matches: Iterable[MatchRow]) -> Iterator[list[MatchRow]]:
    """The matches in schedule order, the legs of a duplicate pair together (a pair's legs are
    scheduled one after the other; a leg whose mirror is not pending comes alone)."""
    group: list[MatchRow] = []
    for match in matches:
        if group and duplicate_pair(match) != duplicate_pair(group[0]):
            yield group
            group = []
        group.append(match)
    if group:
        yield group


def blocks(pairs: Iterable[list[MatchRow]], size: int) -> Iterator[list[list[MatchRow]]]:
    """The pairs (as :func:`pairs_in_order` gives them) in blocks of up to ``size``
    consecutive pairs of one pairing."""
    block: list[list[MatchRow]] = []
    for legs in pairs:
        if block and (len(block) == size or legs[0].pairing != block[0][0].pairing):
            yield block
            block = []
        block.append(legs)
    if block:
        yield block


def sittings_of(block: list[list[MatchRow]]) -> list[list[MatchRow]]:
    """A block's sittings, in the order they play: its pairs' first legs in order, then their
    second legs in the same order, each cut where the seats change (a leg whose mirror was
    played already comes alone in its pair, and may seat the bots the other way round). No
    sitting holds both legs of one pair."""
    sittings: list[list[MatchRow]] = []
    for leg in (0, 1):
        run: list[MatchRow] = []
        for legs in block:
            if len(legs) <= leg:
                continue
            match = legs[leg]
            if run and (run[-1].seat0, run[-1].seat1) != (match.seat0, match.seat1):
                sittings.append(run)
                run = []
            run.append(match)
        if run:
            sittings.append(run)
    return sittings


def duplicate_pair(match: MatchRow) -> str:
    """The duplicate pair a match is a leg of, by its first leg's id (its own id if it has no
    mirror): the runner never plays two matches of one pair at once."""
    return match.duplicate_of or match.match_id


class LeagueBusy(RuntimeError):  # noqa: N818 - named for what is so, as LogNotFound
    """Another runner holds the league: two would play every match twice, and the legs of a
    duplicate pair at once."""


@contextmanager
def _league_lock(arena: Arena, league: str) -> Iterator[None]:
    """Hold the league's lock file (``locks/<league>.lock`` in the arena home) while running.

    Raises:
        LeagueBusy: another process holds it.
    """
    folder = arena.home / "locks"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(folder / f"{league}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "?"
            raise LeagueBusy(
                f"league {league} is being run by another gin league run (process {holder}); "
                "wait for it or stop it, then run again"
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def runner_of(arena: Arena, league: str) -> int | None:
    """The process id of the runner playing ``league`` now (``None``: none is), by its lock:
    the kernel drops the lock when the runner dies, however it dies, so rows it left running
    are told from rows a live runner holds."""
    path = arena.home / "locks" / f"{league}.lock"
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
            return int(holder) if holder.isdigit() else 0
        return None
    finally:
        os.close(descriptor)


def _first(group: BaseExceptionGroup[ExecutorError]) -> ExecutorError:
    """The first executor error of a (nested) group."""
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error
