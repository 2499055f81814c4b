"""What a round of an event is made of: its ties (two bots, or a bye) and their results.

A tie is the round's unit between two bots: a fixed number of series (duplicate pairs), read as
one result. Its result keeps what both formats need: the first bot's series points and point
margin over the tie, from which Swiss match points and a knockout winner both follow.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tie", "TieResult"]


@dataclass(frozen=True, slots=True)
class Tie:
    """Two bots of one round, the higher ranked first; a bye when ``second`` is ``None``."""

    first: str
    second: str | None = None

    @property
    def bye(self) -> bool:
        """Whether the tie is a bye (the first bot goes through without playing)."""
        return self.second is None

    def bots(self) -> tuple[str, ...]:
        """The bots of the tie (one for a bye)."""
        return (self.first,) if self.second is None else (self.first, self.second)


@dataclass(frozen=True, slots=True)
class TieResult:
    """A played tie, from its first bot's side (a bye: no series, and a win)."""

    tie: Tie
    series: int = 0
    """Series played."""
    points: float = 0.0
    """The first bot's series points: 1 a series won, 0.5 drawn."""
    margin: int = 0
    """The first bot's game points minus the second's, over the tie's series."""
    decided_for: str | None = None
    """The winner a sequential test over the tie's pairs chose (``None``: none did)."""

    def match_points(self) -> tuple[float, float]:
        """The Swiss points of each side: 1 to the bot a sequential test chose, if one did;
        else 1 to the bot with more series points, ½ each when level; a bye is a win.

        >>> TieResult(Tie("a", "b"), 4, 2.5, -30).match_points()
        (1.0, 0.0)
        >>> TieResult(Tie("a", "b"), 4, 2.0, 55).match_points(), TieResult(Tie("a")).match_points()
        ((0.5, 0.5), (1.0, 0.0))
        >>> TieResult(Tie("a", "b"), 8, 4.5, 20, decided_for="b").match_points()
        (0.0, 1.0)
        """
        if self.tie.bye:
            return 1.0, 0.0
        if self.decided_for is not None:
            return (1.0, 0.0) if self.decided_for == self.tie.first else (0.0, 1.0)
        half = self.series / 2
        if self.points == half:
            return 0.5, 0.5
        return (1.0, 0.0) if self.points > half else (0.0, 1.0)

    def winner(self) -> str:
        """Who goes through in a knockout: the bot a sequential test chose, if one did; else more
        series points; when level, the greater point margin; when that is level too, the first
        bot (the higher seed).

        >>> level = Tie("a", "b")
        >>> TieResult(level, 4, 2.0, -1).winner(), TieResult(level, 4, 2.0, 0).winner()
        ('b', 'a')
        """
        if self.tie.second is None:
            return self.tie.first
        if self.decided_for is not None:
            return self.decided_for
        half = self.series / 2
        if self.points != half:
            return self.tie.first if self.points > half else self.tie.second
        return self.tie.second if self.margin < 0 else self.tie.first
