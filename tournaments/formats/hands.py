"""Per-seat hand statistics of a match, from its hands' outcomes: one function, whatever the source.

The worker counts the hands of the match it just played (:func:`hand_stats` of its
``hand_records``); ``gin league restat`` counts the ``hand_end`` records of each stored result's
log (:func:`logged_hands`) with the same function, so a statistic added here reaches old results
too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol

from protocol.bounded import JsonObject
from referee.rules import HandEnd

if TYPE_CHECKING:
    from referee.replay import MatchLogData

__all__ = ["HandStats", "hand_stats", "logged_hands", "read_hand_stats"]


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
    def from_dict(cls, data: JsonObject) -> HandStats:
        """Read :meth:`to_dict`'s form; a count it lacks is 0 (summaries stored before this
        record kept only the counts that were not).

        Raises:
            TypeError, ValueError: a count that is not a whole number.
        """
        return cls(*map(int, map(data.get, _COUNTS, _ZEROS)))


_COUNTS: Final = tuple(field.name for field in fields(HandStats))
"""The counts of :class:`HandStats`, by name, in their order (``fields`` is slow, and a league's
standings read two for every result)."""
_ZEROS: Final = (0,) * len(_COUNTS)


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
    counts = [[0] * len(_COUNTS), [0] * len(_COUNTS)]  # each seat's, in the fields' order
    for hand in hands:
        winner, knocker = hand.winner, hand.knocker
        if winner is not None:
            counts[winner][_HANDS_WON] += 1
            counts[winner][_POINTS] += hand.points
        if knocker is None:
            counts[0][_DRAWN] += 1
            counts[1][_DRAWN] += 1
            continue
        counts[knocker][_KNOCKS] += 1
        end = hand.end
        if end is HandEnd.GIN:
            counts[knocker][_GINS] += 1
        if end is HandEnd.UNDERCUT:
            counts[1 - knocker][_UNDERCUTS_GIVEN] += 1
            counts[knocker][_UNDERCUTS_SUFFERED] += 1
    return HandStats(*counts[0]), HandStats(*counts[1])


_HANDS_WON, _POINTS, _GINS, _KNOCKS, _UNDERCUTS_GIVEN, _UNDERCUTS_SUFFERED, _DRAWN = (
    _COUNTS.index(name)
    for name in (
        "hands_won",
        "points",
        "gins",
        "knocks",
        "undercuts_given",
        "undercuts_suffered",
        "drawn",
    )
)
"""Where each count is in :data:`_COUNTS` (a seat's counts as :func:`hand_stats` keeps them)."""


def logged_hands(log: MatchLogData) -> tuple[LoggedHand, ...]:
    """The outcome of each hand a log records as ended."""
    from referee.replay import HandEndRecord  # noqa: PLC0415 - a worker never reads a log

    return tuple(
        LoggedHand(
            _END.get(record.end) or HandEnd(record.end),
            record.winner,
            record.points,
            record.knocker,
        )
        for record in log.records
        if isinstance(record, HandEndRecord)
    )


_END: Final = {end.value: end for end in HandEnd}
"""Each hand end by its log name (``HandEnd(name)`` is slow, and a log ends tens of hands)."""
