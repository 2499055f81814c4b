"""Swiss pairing: each round pairs bots of equal or near score, no two twice while avoidable.

The method is the **Monrad system** (the simplest of the Swiss systems, used by the Danish
chess federation; FIDE Handbook C.04.1 states the general Swiss rules it follows): the bots are
ranked by score, then by their seed (the order they were seeded in, strongest first); the top
unpaired bot meets the next ranked bot it has not met, and so on down the ranking, with
backtracking when the bots left cannot all be paired without a repeat. Only when no pairing of
the round avoids repeats (searched up to :data:`SEARCH_BUDGET` steps) is one allowed: then each
bot, top down, meets the next ranked bot it has met the fewest times.

An odd field has a bye each round: it goes to the lowest ranked bot that has had no bye yet (when
every bot has had one, the lowest ranked of those with the fewest), and counts as a win (one
point) with nothing added to anybody's Buchholz.

A round's pairing is a pure function of the seeds and the results before it
(:func:`swiss_round`); the final standings (:func:`swiss_table`) rank by score, then by
**Buchholz** (the sum of the scores of the bots met), then by seed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tournaments.events.ties import Tie, TieResult

__all__ = ["SEARCH_BUDGET", "SwissLine", "swiss_round", "swiss_table"]

SEARCH_BUDGET: Final = 20_000
"""Steps of the search for a round without repeats before it allows them (a few ms)."""

Played = Sequence[Sequence[TieResult]]
"""The rounds played, in order, each its ties' results."""


@dataclass(frozen=True, slots=True)
class SwissLine:
    """One bot's line of a Swiss: its score, Buchholz, whom it met and its byes."""

    bot: str
    score: float
    buchholz: float
    opponents: tuple[str, ...]
    byes: int


def _scores(seeds: Sequence[str], played: Played) -> dict[str, float]:
    scores = dict.fromkeys(seeds, 0.0)
    for round_ in played:
        for result in round_:
            mine, theirs = result.match_points()
            scores[result.tie.first] += mine
            if result.tie.second is not None:
                scores[result.tie.second] += theirs
    return scores


def _met(played: Played) -> dict[str, Counter[str]]:
    met: dict[str, Counter[str]] = defaultdict(Counter)
    for round_ in played:
        for result in round_:
            first, second = result.tie.first, result.tie.second
            if second is not None:
                met[first][second] += 1
                met[second][first] += 1
    return met


def _byes(played: Played) -> Counter[str]:
    return Counter(r.tie.first for round_ in played for r in round_ if r.tie.bye)


def _ranking(seeds: Sequence[str], played: Played) -> list[str]:
    """The bots by score (highest first), then by seed."""
    scores = _scores(seeds, played)
    place = {bot: index for index, bot in enumerate(seeds)}
    return sorted(seeds, key=lambda bot: (-scores[bot], place[bot]))


def swiss_round(seeds: Sequence[str], played: Played) -> tuple[Tie, ...]:
    """The next round's ties: a pure function of the seeds (strongest first) and the rounds
    played before it. The ties are in ranking order; a bye, if any, comes last.

    >>> swiss_round(["a", "b", "c", "d"], [])
    (Tie(first='a', second='b'), Tie(first='c', second='d'))
    >>> won = [TieResult(Tie("a", "b"), 2, 2.0, 9), TieResult(Tie("c", "d"), 2, 0.0, -9)]
    >>> swiss_round(["a", "b", "c", "d"], [won])
    (Tie(first='a', second='d'), Tie(first='b', second='c'))

    Raises:
        ValueError: fewer than two bots, or a bot named twice.
    """
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError("a Swiss needs at least two different bots")
    order = _ranking(seeds, played)
    ties: list[Tie] = []
    if len(order) % 2:
        bye = _bye(order, _byes(played))
        order.remove(bye)
        ties.append(Tie(bye))
    met = _met(played)
    pairs = _without_repeats(order, met) or _fewest_repeats(order, met)
    return tuple([Tie(first, second) for first, second in pairs] + ties)


def _bye(order: list[str], byes: Counter[str]) -> str:
    """The lowest ranked bot among those with the fewest byes."""
    fewest = min(byes[bot] for bot in order)
    return next(bot for bot in reversed(order) if byes[bot] == fewest)


def _without_repeats(
    order: list[str], met: dict[str, Counter[str]]
) -> list[tuple[str, str]] | None:
    """The Monrad pairing of ``order`` with no repeat (``None``: none found in the budget)."""
    steps = [0]

    def search(left: list[str]) -> list[tuple[str, str]] | None:
        steps[0] += 1
        if not left or steps[0] > SEARCH_BUDGET:
            return [] if not left else None
        top, rest = left[0], left[1:]
        for index, other in enumerate(rest):
            if met[top][other]:
                continue
            found = search(rest[:index] + rest[index + 1 :])
            if found is not None:
                return [(top, other), *found]
        return None

    return search(order)


def _fewest_repeats(order: list[str], met: dict[str, Counter[str]]) -> list[tuple[str, str]]:
    """Top down, each bot with the next ranked bot it has met the fewest times."""
    left, pairs = list(order), []
    while left:
        top = left.pop(0)
        other = min(left, key=lambda bot: met[top][bot])  # min keeps the first of equals
        left.remove(other)
        pairs.append((top, other))
    return pairs


def swiss_table(seeds: Sequence[str], played: Played) -> list[SwissLine]:
    """The standings of a Swiss: by score, then Buchholz, then seed.

    >>> won = [TieResult(Tie("a", "b"), 2, 2.0, 9), TieResult(Tie("c"))]
    >>> [(line.bot, line.score, line.buchholz) for line in swiss_table(["a", "b", "c"], [won])]
    [('a', 1.0, 0.0), ('c', 1.0, 0.0), ('b', 0.0, 1.0)]
    """
    scores, met, byes = _scores(seeds, played), _met(played), _byes(played)
    place = {bot: index for index, bot in enumerate(seeds)}
    lines = []
    for bot in seeds:
        opponents = tuple(sorted(met[bot].elements(), key=place.__getitem__))
        buchholz = sum((scores[other] for other in opponents), 0.0)
        lines.append(SwissLine(bot, scores[bot], buchholz, opponents, byes[bot]))
    return sorted(lines, key=lambda line: (-line.score, -line.buchholz, place[line.bot]))
