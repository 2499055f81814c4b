"""The match's books: each seat's clock and tally, and how a match ends.

The match (:mod:`referee.match`) keeps its books with these, and the replay verifier
(:mod:`referee.replay`) keeps them again from the log with the same code, so each rule of
timing, of counting and of a match's end exists once.

>>> book = SeatBook.start(TimeControl(move_time_ms=1000, grace_ms=200, time_bank_ms=500))
>>> book.clock.limit_ms()
1700.0
>>> book.decided(1300.0)  # 300 ms over the move time come out of the bank
>>> book.clock.bank_ms, book.clock.limit_ms(), book.tally.frozen().decisions
(200.0, 1400.0, 1)
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import NamedTuple

from protocol.bounded import JsonObject
from referee.control import FaultPolicy, TimeControl
from referee.faults import FaultKind
from referee.rules import SeriesEnd


class MatchEnd(enum.StrEnum):
    """Why a match ended: a series end, or a forfeit."""

    COMPLETE = "complete"
    """Every game ended."""
    DECIDED = "decided"
    """Stopped once one player had a majority of games (``stop_when_decided``)."""
    HAND_CAP = "hand_cap"
    """The hand cap was reached; open games went to their leaders."""
    FORFEIT = "forfeit"
    """A seat (or both) forfeited under the fault policy."""

    @classmethod
    def of_series(cls, end: SeriesEnd) -> MatchEnd:
        """The match end of a series that ran to its end.

        >>> MatchEnd.of_series(SeriesEnd.HAND_CAP)
        <MatchEnd.HAND_CAP: 'hand_cap'>
        """
        return cls(end.value)


@dataclass(frozen=True, slots=True)
class SeatStats:
    """One seat's decisions and faults in a match (the ``stats`` of the result record)."""

    decisions: int
    mean_ms: float
    max_ms: float
    strikes: int
    faults: tuple[tuple[str, int], ...] = ()
    """Faults by kind (its value), in the order each kind first happened (as the log writes
    them)."""

    def to_dict(self) -> JsonObject:
        """JSON-ready form."""
        return {
            "decisions": self.decisions,
            "mean_ms": self.mean_ms,
            "max_ms": self.max_ms,
            "strikes": self.strikes,
            "faults": dict(self.faults),
        }

    @classmethod
    def from_dict(cls, data: JsonObject) -> SeatStats:
        """Read back :meth:`to_dict`'s form.

        Raises:
            KeyError, TypeError, ValueError: not that form.
        """
        faults = data.get("faults") or {}
        if not isinstance(faults, dict):
            raise TypeError("faults is not an object")
        return cls(
            int(data["decisions"]),
            float(data["mean_ms"]),
            float(data["max_ms"]),
            int(data["strikes"]),
            tuple((str(kind), int(count)) for kind, count in faults.items()),
        )


def too_slow(elapsed_ms: float, limit_ms: float, tolerance_ms: float = 0.0) -> bool:
    """Whether a decision that took ``elapsed_ms`` ran over its limit: a timeout.

    ``tolerance_ms``: slack for times read back from a log, which rounds them.

    >>> too_slow(1700.0, 1700.0), too_slow(1700.2, 1700.0), too_slow(1700.2, 1700.0, 0.5)
    (False, True, False)
    """
    return elapsed_ms > limit_ms + tolerance_ms


@dataclass(slots=True)
class SeatClock:
    """One seat's time in a series: the bank left, and so the limit of its next decision."""

    control: TimeControl
    bank_ms: float

    @classmethod
    def start(cls, control: TimeControl) -> SeatClock:
        """A clock with the whole bank.

        >>> SeatClock.start(TimeControl(time_bank_ms=500)).bank_ms
        500.0
        """
        return cls(control, float(control.time_bank_ms))

    @property
    def time_left_ms(self) -> float:
        """A decision's whole time, grace not included: the move time and the bank left."""
        return self.control.move_time_ms + self.bank_ms

    def limit_ms(self) -> float:
        """When the referee gives up on the next decision (grace included)."""
        return self.control.limit_ms(self.bank_ms)

    def charge(self, elapsed_ms: float) -> None:
        """Take a decision's time over the move time from the bank (which stops at zero).

        >>> clock = SeatClock.start(TimeControl(move_time_ms=100, time_bank_ms=50))
        >>> clock.charge(90.0); clock.bank_ms
        50.0
        >>> clock.charge(130.0); clock.bank_ms
        20.0
        >>> clock.charge(500.0); clock.bank_ms
        0.0
        """
        over = elapsed_ms - self.control.move_time_ms
        if over > 0:
            self.bank_ms = max(0.0, self.bank_ms - over)


@dataclass(slots=True)
class SeatTally:
    """One seat's counters while a match runs: decisions, their times, strikes, faults."""

    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    strikes: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    """Faults by kind (its value)."""

    @property
    def mean_ms(self) -> float:
        """The mean decision time, unrounded (0 before the first decision)."""
        return self.total_ms / self.decisions if self.decisions else 0.0

    def decided(self, elapsed_ms: float) -> None:
        """Count one decision and its time."""
        self.decisions += 1
        self.total_ms += elapsed_ms
        self.max_ms = max(self.max_ms, elapsed_ms)

    def would_forfeit(self, kind: FaultKind, policy: FaultPolicy) -> bool:
        """Whether one more fault of ``kind`` would forfeit the series (nothing is counted)."""
        return policy.forfeits(kind, self.strikes + 1)

    def struck(self, kind: FaultKind, policy: FaultPolicy) -> bool:
        """Count a fault of ``kind`` as a strike; True when it forfeits the series.

        >>> tally = SeatTally()
        >>> [tally.struck(FaultKind.TIMEOUT, FaultPolicy(strikes=2)) for _ in "ab"]
        [False, True]
        >>> tally.frozen().faults
        (('timeout', 2),)
        """
        self.strikes += 1
        self.faults[kind.value] += 1
        return policy.forfeits(kind, self.strikes)

    def frozen(self) -> SeatStats:
        """The counters as the result keeps them."""
        return SeatStats(
            self.decisions,
            round(self.mean_ms, 3),
            round(self.max_ms, 3),
            self.strikes,
            tuple(self.faults.items()),
        )


@dataclass(slots=True)
class SeatBook:
    """One seat's books: its clock and its tally."""

    clock: SeatClock
    tally: SeatTally = field(default_factory=SeatTally)

    @classmethod
    def start(cls, control: TimeControl) -> SeatBook:
        """The books of a seat at the start of a series."""
        return cls(SeatClock.start(control))

    def decided(self, elapsed_ms: float) -> None:
        """A decision of the seat's took ``elapsed_ms``: charge the clock, count it."""
        self.clock.charge(elapsed_ms)
        self.tally.decided(elapsed_ms)


class MatchVerdict(NamedTuple):
    """Who won a match, and why it ended."""

    winner: int | None
    end: MatchEnd


def match_verdict(
    forfeited: Collection[int], series_end: SeriesEnd | None, series_winner: int | None
) -> MatchVerdict:
    """A match's winner and end: a forfeit decides it (the seat left wins, if one is left),
    else the series' end and winner.

    >>> match_verdict([1], None, None)
    MatchVerdict(winner=0, end=<MatchEnd.FORFEIT: 'forfeit'>)
    >>> match_verdict([0, 1], None, None).winner is None
    True
    >>> match_verdict([], SeriesEnd.COMPLETE, 1)
    MatchVerdict(winner=1, end=<MatchEnd.COMPLETE: 'complete'>)

    Raises:
        ValueError: no seat forfeited and the series has not ended.
    """
    if forfeited:
        alive = [seat for seat in (0, 1) if seat not in forfeited]
        return MatchVerdict(alive[0] if len(alive) == 1 else None, MatchEnd.FORFEIT)
    if series_end is None:
        raise ValueError("a match ends with a forfeit or with its series")
    return MatchVerdict(series_winner, MatchEnd.of_series(series_end))
