"""A scripted executor: no processes, no bots, for tests of the runner's logic (as python-chess's
``MockTransport`` scripts an engine).

Each match is played for a few seconds of trio time (instant on trio's ``MockClock`` with
``autojump_threshold=0``) and gives back what was scripted for it with :meth:`FakeExecutor.expect`:
an outcome, a worker failure, or an exception to raise (``ExecutorError``, ``KeyboardInterrupt``).
Unscripted attempts give :func:`played`. The executor keeps what it was asked: every job, when
each ran (:attr:`FakeExecutor.spans`), the most at once, whether it was closed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import trio

from referee.match import MatchEnd, SeatStats
from referee.records import ResultRecord
from tournaments.executors import ExecutorError
from tournaments.formats.hands import HandStats
from tournaments.formats.records import MatchJob, MatchOutcome, MatchSummary, WorkerFailure

__all__ = ["Attempt", "FakeExecutor", "played"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One scripted attempt at a match: what it gives back, after how long (trio seconds)."""

    outcome: MatchOutcome | WorkerFailure | BaseException | None = None
    """``None``: :func:`played`; an exception is raised (as a lost cluster or Ctrl-C would)."""
    seconds: float | None = None
    """``None``: the executor's ``seconds`` for the job."""


@dataclass(frozen=True, slots=True)
class Span:
    """When one attempt at a match ran (trio time)."""

    match_id: str
    started: float
    ended: float

    def overlaps(self, other: Span) -> bool:
        """Whether the two ran at the same time (one starting as the other ends does not)."""
        return self.started < other.ended and other.started < self.ended


def played(job: MatchJob, winner: int | None = 0) -> MatchOutcome:
    """A plausible outcome of ``job``: three games to ``winner``, ten decisions a seat, no
    faults."""
    wins = (3, 0) if winner == 0 else (0, 3) if winner == 1 else (0, 0)
    result = ResultRecord(
        line=0,
        match_id=job.match_id,
        seed=job.seed,
        winner=winner,
        end=MatchEnd.COMPLETE.value,
        forfeited=(),
        totals=((100 * (winner == 0),) * 3, (100 * (winner == 1),) * 3),
        game_winners=(winner, winner, winner),
        hands=3,
        faults=(),
        stats=(SeatStats(10, 1.0, 2.0, 0), SeatStats(10, 1.0, 2.0, 0)),
    )
    summary = MatchSummary(
        result,
        (HandStats(hands_won=wins[0], points=100 * wins[0]), HandStats(hands_won=wins[1])),
        log=job.log,
    )
    return MatchOutcome(summary, "scripted")


class FakeExecutor:
    """Plays jobs by script; see the module's notes."""

    def __init__(
        self,
        slots: int = 2,
        *,
        seconds: Callable[[MatchJob], float] = lambda _job: 1.0,
        capacities: Iterable[int] = (),
        lost_after: int | None = None,
        on_start: Callable[[MatchJob], None] = lambda _job: None,
        swept: Iterable[int] = (),
        sittings: bool = False,
    ) -> None:
        """``seconds``: how long an unscripted attempt takes; ``capacities``: what
        :meth:`capacity` answers, in turn (then ``slots``); ``lost_after``: raise
        ``ExecutorError`` instead of starting any match after this many; ``on_start``: called
        with each job as it starts (to act as something else would meanwhile); ``swept``: what
        :meth:`sweep` answers, in turn (then 0); ``sittings``: whether the runner may send
        sittings (as the local executor does)."""
        self.slots = slots
        self.sittings = sittings
        self.seconds = seconds
        self.capacities = deque(capacities)
        self.lost_after = lost_after
        self.on_start = on_start
        self.script: defaultdict[str, deque[Attempt]] = defaultdict(deque)
        self.jobs: list[MatchJob] = []
        """Every job started, in order."""
        self.spans: list[Span] = []
        self.running: set[str] = set()
        self.peak = 0
        """The most matches that ran at once."""
        self.closed = False
        self.swept = deque(swept)

    def expect(self, match_id: str, *attempts: Attempt) -> None:
        """Script the next attempts at a match, in order."""
        self.script[match_id].extend(attempts)

    def started(self, match_id: str) -> int:
        """How many attempts at a match were started."""
        return sum(1 for job in self.jobs if job.match_id == match_id)

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Play the next scripted attempt at the job's match (``sent`` is called as it starts).

        Raises:
            ExecutorError: after ``lost_after`` matches, or as scripted.
        """
        if self.lost_after is not None and len(self.jobs) >= self.lost_after:
            raise ExecutorError("the fake cluster is gone")
        queued = self.script.get(job.match_id)
        attempt = queued.popleft() if queued else Attempt()
        self.jobs.append(job)
        if sent is not None:
            sent()
        self.on_start(job)
        self.running.add(job.match_id)
        self.peak = max(self.peak, len(self.running))
        began = trio.current_time()
        try:
            await trio.sleep(self.seconds(job) if attempt.seconds is None else attempt.seconds)
        finally:
            self.running.discard(job.match_id)
            self.spans.append(Span(job.match_id, began, trio.current_time()))
        if isinstance(attempt.outcome, BaseException):
            raise attempt.outcome
        return played(job) if attempt.outcome is None else attempt.outcome

    @property
    def tables(self) -> int:
        """As many as :attr:`slots`."""
        return self.slots

    async def capacity(self) -> int:
        """The next of ``capacities``, then ``slots``."""
        if self.capacities:
            self.slots = self.capacities.popleft()
        return self.slots

    async def sweep(self) -> int:
        """The next of ``swept``, then 0: nothing of this machine is touched."""
        return self.swept.popleft() if self.swept else 0

    async def aclose(self) -> None:
        """Note that the runner let go of it."""
        self.closed = True
