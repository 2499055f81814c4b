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
"""

from __future__ import annotations

import fcntl
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from tournaments.executors import Executor, ExecutorError
from tournaments.executors.local import LocalExecutor
from tournaments.league import LeagueConfig
from tournaments.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.registry import Arena, parse_spec
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow, Store

RETRIES: Final = 2
"""Attempts at a match whose worker failed (not a bot's fault: that is a result)."""
CAPACITY_POLL_S: Final = 5.0


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

    def eta_s(self) -> float | None:
        """Seconds left, from the recent matches' durations."""
        if not self.durations:
            return None
        left = self.total - self.done - self.failed
        mean = sum(self.durations) / len(self.durations)
        return left * mean / max(1, min(self.slots, max(left, 1)))


Listener = Callable[[Progress], None]


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
    ) -> None:
        self.arena = arena
        self.store = store
        self.config = config
        self.executor: Executor = executor or LocalExecutor(jobs)
        self.strict = strict
        self.listener = listener or (lambda _progress: None)
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
        swept = await self.executor.sweep()
        if swept:
            self.progress.faults.append(f"swept {swept} jail(s) of killed referees")
        self.store.reset_running(self.config.name, retry_failed=True)
        self.progress.failed = 0
        pending = self.store.matches(self.config.name, MatchState.PENDING)
        limiter = trio.CapacityLimiter(self.progress.slots)
        pairs = {duplicate_pair(match): trio.Lock() for match in pending}
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._follow_capacity, limiter)
                async with trio.open_nursery() as nursery:
                    for match in pending:
                        nursery.start_soon(self._play, match, limiter, pairs[duplicate_pair(match)])
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
                self.store.reset_running(self.config.name)
        return self.progress

    async def _follow_capacity(self, limiter: trio.CapacityLimiter) -> None:
        """Keep the number of matches at once to the executor's capacity as it changes."""
        while True:
            await trio.sleep(CAPACITY_POLL_S)
            slots = await self.executor.capacity()
            if slots != limiter.total_tokens:
                limiter.total_tokens = self.progress.slots = slots

    async def _play(self, match: MatchRow, limiter: trio.CapacityLimiter, pair: trio.Lock) -> None:
        async with pair, limiter:  # the pair first: a leg waiting for its mirror holds no slot
            for attempt in range(1, RETRIES + 1):
                failure = await self._attempt(match)
                if failure is None:
                    return
                if attempt == RETRIES:
                    self.store.mark(match.match_id, MatchState.FAILED, failure.message)
                    self.progress.failed += 1
                    self.progress.faults.append(f"{match.match_id}: worker failed: {failure}")
                    self.listener(self.progress)

    async def _attempt(self, match: MatchRow) -> WorkerFailure | None:
        """One worker run; None when a result was recorded, else what went wrong."""
        self.store.mark_running(match.match_id)
        log_path = self._fresh_log(match)
        self.progress.running[match.match_id] = time.monotonic()
        self.listener(self.progress)
        started = time.monotonic()
        try:
            outcome = await self.executor.play(self._job(match, log_path))
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
        fresh = self.store.record_result(
            ResultRow(
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
        )
        if fresh:
            self.progress.done += 1
            self.progress.finished_now += 1
            for fault in summary.faults:
                self.progress.faults.append(
                    f"{seats[fault.seat]}: {fault.kind.value}: {fault.detail}"[:160]
                )

    def _fresh_log(self, match: MatchRow) -> Path:
        """The match's log path, a partial log of an earlier attempt moved aside."""
        folder = self.arena.logs_dir(self.config.name)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{match.match_id}.jsonl"
        if path.exists():
            path.rename(path.with_name(f"{path.name}.aborted-{int(time.time() * 1000)}"))
        return path

    def _job(self, match: MatchRow, log_path: Path) -> MatchJob:
        bots = [self._bot(ident, match) for ident in (match.seat0, match.seat1)]
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
        )

    def _bot(self, ident: str, match: MatchRow) -> BotRow:
        name, version = parse_spec(ident)
        row = self.store.bot(name, version)
        if row is None:
            raise RuntimeError(f"bot {ident} of match {match.match_id} is not in the registry")
        return row


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


def _first(group: BaseExceptionGroup[ExecutorError]) -> ExecutorError:
    """The first executor error of a (nested) group."""
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error
