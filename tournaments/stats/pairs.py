"""The unit of comparison: a duplicate pair (both legs of one deal), or a lone series.

Luck of the deal cancels only within a pair, so every statistic that compares two bots (the
pairwise score and Elo difference, LOS, the paired margin, the sequential test of ``gin match``)
counts pairs, never the two legs as if they were independent series. A league without duplicate
deals has lone series: each is a unit of its own.

A unit's *score* is the bot's share of its series, draws half: 0, 0.25, 0.5, 0.75 or 1 for a pair
(the pentanomial view fishtest uses for paired openings), 0, 0.5 or 1 for a lone series.

>>> one = PairOutcome("a@1", "b@1", (1.0, 0.5), 40)
>>> one.score, one.flipped().score, one.flipped().margin, one.complete
(0.75, 0.25, -40, True)
>>> pentanomial([one, one.flipped(), PairOutcome("a@1", "b@1", (1.0, 0.0), 3)])
(0, 1, 1, 1, 0)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tournaments.store.rows import ResultRow, StoreDamaged

__all__ = ["PairOutcome", "Pentanomial", "by_pairing", "pair_outcomes", "pentanomial", "units_of"]


Pentanomial = tuple[int, int, int, int, int]
"""How many pairs the bot scored 0, 0.5, 1, 1.5 and 2 series in (of two)."""


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """One unit, from ``bot``'s side: its score in each series and its point margin."""

    bot: str
    opponent: str
    scores: tuple[float, ...]
    """The bot's score in each series of the unit (1 win, 0.5 draw, 0 loss): two legs of a
    pair, first leg first, or one lone series."""
    margin: int
    """The bot's points minus the opponent's, over the unit's series."""

    @property
    def complete(self) -> bool:
        """Whether both legs of a duplicate pair are in (a lone series is never complete)."""
        return len(self.scores) == 2

    @property
    def score(self) -> float:
        """The bot's share of the unit's series (draws half)."""
        return sum(self.scores) / len(self.scores)

    def flipped(self) -> PairOutcome:
        """The same unit from the opponent's side."""
        return PairOutcome(
            self.opponent, self.bot, tuple([1.0 - s for s in self.scores]), -self.margin
        )


def pair_outcomes(results: Iterable[ResultRow]) -> list[PairOutcome]:
    """The units of a league's results, each from the side of its first leg's seat 0.

    A second leg whose first leg is among ``results`` joins it into a pair; a first leg whose
    second leg is not in yet, and a series outside any pair, is a lone unit. A pair is never
    counted twice, and each series belongs to exactly one unit.
    """
    return units_of(results, _leg)


class _Played(Protocol):
    """What :func:`units_of` reads of a series: its match, its duplicate pair, its seats."""

    @property
    def match_id(self) -> str: ...
    @property
    def duplicate_of(self) -> str | None: ...
    @property
    def seats(self) -> tuple[str, str]: ...


_S = TypeVar("_S", bound=_Played)


def units_of(
    results: Iterable[_S], leg: Callable[[_S, int], tuple[float, int]]
) -> list[PairOutcome]:
    """:func:`pair_outcomes` of any kind of series: ``leg`` gives a series' score (1 win, 0.5
    draw, 0 loss) and point margin from the side of the bot in a seat.

    Raises:
        StoreDamaged: a second leg whose seats are not its first leg's.
    """
    rows = list(results)
    seconds: dict[str, _S] = {}
    by_id = {row.match_id: row for row in rows}
    for row in rows:
        if row.duplicate_of is not None and row.duplicate_of in by_id:
            seconds[row.duplicate_of] = row
    paired = {row.match_id for row in seconds.values()}
    units = []
    for row in rows:
        if row.match_id in paired:
            continue
        bot, opponent = row.seats
        first = leg(row, 0)
        second = seconds.get(row.match_id)
        if second is None:
            units.append(PairOutcome(bot, opponent, (first[0],), first[1]))
            continue
        if sorted(second.seats) != sorted(row.seats):  # a hand edit of the schedule
            raise StoreDamaged(
                f"match {second.match_id}",
                f"it mirrors {row.match_id}, but its seats {list(second.seats)} are not "
                f"{list(row.seats)}",
            )
        other = leg(second, second.seats.index(bot))
        units.append(PairOutcome(bot, opponent, (first[0], other[0]), first[1] + other[1]))
    return units


def _leg(result: ResultRow, mine: int) -> tuple[float, int]:
    """One series from the side of the bot in seat ``mine``: its score and its points minus its
    opponent's."""
    summary = result.summary
    winner = summary.winner
    stats = summary.hand_stats
    score = 0.5 if winner is None else float(winner == mine)
    return score, stats[mine].points - stats[1 - mine].points


def by_pairing(units: Iterable[PairOutcome]) -> dict[tuple[str, str], list[PairOutcome]]:
    """Units grouped by ordered pairing: ``(a, b)`` holds every unit of a against b from a's
    side, and ``(b, a)`` the same units from b's side."""
    grouped: dict[tuple[str, str], list[PairOutcome]] = defaultdict(list)
    for unit in units:
        grouped[unit.bot, unit.opponent].append(unit)
        flipped = unit.flipped()
        grouped[flipped.bot, flipped.opponent].append(flipped)
    return dict(grouped)


def pentanomial(units: Sequence[PairOutcome]) -> Pentanomial:
    """Counts of complete pairs by the bot's series score in them: 0, 0.5, 1, 1.5, 2 (lone
    series and half-played pairs are left out)."""
    counts = [0, 0, 0, 0, 0]
    for unit in units:
        scores = unit.scores
        if len(scores) == 2:  # complete
            counts[round(2 * (scores[0] + scores[1]))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]
