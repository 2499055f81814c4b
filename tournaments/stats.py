"""Per-seat hand statistics of a match, from its hands' outcomes: one function, whatever the source.

The worker counts the hands of the match it just played (:func:`hand_stats` of its
``hand_records``); ``gin league restat`` counts the ``hand_end`` records of each stored result's
log (:func:`logged_hands`) with the same function, so a statistic added here reaches old results
too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, NamedTuple, Protocol

from referee.replay import HandEndRecord, MatchLogData
from referee.rules import HandEnd


class ScoredHand(Protocol):
    """What the statistics read of a hand's outcome (a ``HandOutcome`` has it)."""

    @property
    def end(self) -> HandEnd:
        """Why the hand ended."""
        ...

    @property
    def winner(self) -> int | None:
        """The seat that scored (``None``: drawn)."""
        ...

    @property
    def points(self) -> int:
        """What the winner scored."""
        ...

    @property
    def knocker(self) -> int | None:
        """The seat that knocked or went gin (``None``: nobody did)."""
        ...


class LoggedHand(NamedTuple):
    """A hand's outcome as its log's ``hand_end`` record gives it."""

    end: HandEnd
    winner: int | None
    points: int
    knocker: int | None


@dataclass(frozen=True, slots=True)
class HandStats:
    """One seat's hands in a match.

    >>> HandStats(hands_won=2, points=30).to_dict()["points"]
    30
    >>> HandStats.from_dict({"points": 30}) == HandStats(points=30)
    True
    """

    hands_won: int = 0
    points: int = 0
    """Points scored in the hands this seat won."""
    gins: int = 0
    knocks: int = 0
    """Hands this seat ended by knocking or going gin."""
    undercuts_given: int = 0
    undercuts_suffered: int = 0
    drawn: int = 0

    def to_dict(self) -> dict[str, int]:
        """JSON-ready form (the ``hand_stats`` of a stored summary)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandStats:
        """Read :meth:`to_dict`'s form; a count it lacks is 0 (summaries stored before this
        record kept only the counts that were not).

        Raises:
            TypeError, ValueError: a count that is not a whole number.
        """
        return cls(**{field.name: int(data.get(field.name, 0)) for field in fields(cls)})


def read_hand_stats(stored: object) -> tuple[HandStats, HandStats] | None:
    """Both seats' statistics from their stored form (a summary's ``hand_stats``); None when
    that is not what ``stored`` is.

    >>> read_hand_stats([{"points": 3}, {}]) == (HandStats(points=3), HandStats())
    True
    >>> read_hand_stats([{"points": "many"}, {}]), read_hand_stats("ab")
    (None, None)
    """
    if not isinstance(stored, list) or len(stored) != 2:
        return None
    if not all(isinstance(seat, dict) for seat in stored):
        return None
    try:
        return HandStats.from_dict(stored[0]), HandStats.from_dict(stored[1])
    except (TypeError, ValueError):
        return None


def hand_stats(hands: Iterable[ScoredHand]) -> tuple[HandStats, HandStats]:
    """Both seats' statistics from a match's hand outcomes, in any order.

    >>> knock = LoggedHand(HandEnd.KNOCK, 0, 12, 0)
    >>> undercut = LoggedHand(HandEnd.UNDERCUT, 0, 25, 1)
    >>> first, second = hand_stats([knock, undercut])
    >>> first.hands_won, first.points, first.undercuts_given, second.undercuts_suffered
    (2, 37, 1, 1)
    """
    counts = [{field.name: 0 for field in fields(HandStats)} for _ in range(2)]
    for hand in hands:
        if hand.winner is not None:
            counts[hand.winner]["hands_won"] += 1
            counts[hand.winner]["points"] += hand.points
        if hand.knocker is None:
            counts[0]["drawn"] += 1
            counts[1]["drawn"] += 1
            continue
        counts[hand.knocker]["knocks"] += 1
        if hand.end is HandEnd.GIN:
            counts[hand.knocker]["gins"] += 1
        if hand.end is HandEnd.UNDERCUT:
            counts[1 - hand.knocker]["undercuts_given"] += 1
            counts[hand.knocker]["undercuts_suffered"] += 1
    return HandStats(**counts[0]), HandStats(**counts[1])


def logged_hands(log: MatchLogData) -> tuple[LoggedHand, ...]:
    """The outcome of each hand a log records as ended."""
    return tuple(
        LoggedHand(HandEnd(record.end), record.winner, record.points, record.knocker)
        for record in log.records
        if isinstance(record, HandEndRecord)
    )
