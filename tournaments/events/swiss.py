"""Swiss pairing: each round pairs bots of equal or near score, no two twice while avoidable.

The method is the **Monrad system** (the simplest of the Swiss systems, used by the Danish
chess federation; FIDE Handbook C.04.1 states the general Swiss rules it follows): the bots are
ranked by score, then by their seed (the order they were seeded in, strongest first); the top
unpaired bot meets the next ranked bot it has not met, and so on down the ranking, going back
when the bots left cannot be paired so. An odd field has a bye each round, a win (one point)
with nothing added to anybody's Buchholz. Two versions of it exist (:data:`PAIRING_METHODS`);
an event keeps the one its first round was paired with, so a stored event re-pairs as it was:

- **1** (the first): the bye goes to the lowest ranked bot among those with the fewest byes,
  then the rest are paired with backtracking, repeat-free if that is found within
  :data:`SEARCH_BUDGET` steps; else each bot, top down, meets the next ranked bot it has met the
  fewest times. No look-ahead: a round can leave pairings no later round completes.
- **2** (:data:`PAIRING_METHOD`, the current one): the first pairing in the same order (the bye
  first, to the lowest ranked bot without one, then Monrad) **after which the pairings never
  played still hold every round left**, as that many perfect matchings with no pairing in
  common (the bye a vertex that meets each bot once); if none does, the rounds it must leave
  room for drop one at a time, down to this round alone. Each check is exact (an exhaustive
  search) within :data:`LOOKAHEAD_BUDGET` steps; a check that runs out counts as failed. So
  when the field's rounds fit in a round robin (at most N - 1, N for an odd field: always so in
  a league) and no search runs out, **no round of the event repeats a pairing, whatever the
  results**: round 1 leaves room for all the others, and each round finds the room the one
  before left it. When even this round alone cannot avoid a repeat, the pairing is the one of
  **fewest repeats** (the sum, over its ties, of the times the two have met), among those that
  give the bye to a bot with the fewest byes (so a second bye only once every bot has had one,
  as in version 1), the first in Monrad order among equals: a branch and bound, exact when it
  ends within :data:`FALLBACK_BUDGET` steps; past that, the best it found.

A round's pairing is a pure function of the seeds, the results before it, the rounds planned and
the version (:func:`swiss_round`); the final standings (:func:`swiss_table`) rank by score, then
by **Buchholz** (the sum of the scores of the bots met), then by seed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from tournaments.events._matching import (
    Budget,
    BudgetSpentError,
    bits,
    cheapest_matching,
    disjoint_matchings,
    ranked_matchings,
)
from tournaments.events.ties import Tie, TieResult

__all__ = [
    "FALLBACK_BUDGET",
    "LOOKAHEAD_BUDGET",
    "LOOKAHEAD_TOTAL",
    "PAIRING_METHOD",
    "PAIRING_METHODS",
    "SEARCH_BUDGET",
    "SwissLine",
    "swiss_round",
    "swiss_table",
]

PAIRING_METHODS: Final = (1, 2)
"""The versions of the pairing (the module's docstring); an event keeps its first round's."""
PAIRING_METHOD: Final = 2
"""The version a new event is paired with."""
SEARCH_BUDGET: Final = 20_000
"""Version 1: steps of the search for a round without repeats before it allows them."""
LOOKAHEAD_BUDGET: Final = 50_000
"""Version 2: steps of each look-ahead (one per number of rounds it leaves room for)."""
LOOKAHEAD_TOTAL: Final = 250_000
"""Version 2: steps of a round's look-aheads beyond the round itself, together (this round
alone always has :data:`LOOKAHEAD_BUDGET` more)."""
FALLBACK_BUDGET: Final = 100_000
"""Version 2: steps of the search for the round of fewest repeats."""

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


def swiss_round(
    seeds: Sequence[str], played: Played, rounds: int = 0, method: int = PAIRING_METHOD
) -> tuple[Tie, ...]:
    """The next round's ties: a pure function of the seeds (strongest first), the rounds
    played before it, the rounds planned in all (``rounds``; 0: this one is the last) and the
    pairing's version. The ties are in ranking order; a bye, if any, comes last.

    >>> swiss_round(["a", "b", "c", "d"], [])
    (Tie(first='a', second='b'), Tie(first='c', second='d'))
    >>> won = [TieResult(Tie("a", "b"), 2, 2.0, 9), TieResult(Tie("c", "d"), 2, 0.0, -9)]
    >>> swiss_round(["a", "b", "c", "d"], [won])
    (Tie(first='a', second='d'), Tie(first='b', second='c'))

    Raises:
        ValueError: fewer than two bots, a bot named twice, or a version not in
            :data:`PAIRING_METHODS`.
    """
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError("a Swiss needs at least two different bots")
    if method not in PAIRING_METHODS:
        raise ValueError(f"no Swiss pairing method {method} (known: 1, 2)")
    if method == 1:
        return _first_method(seeds, played)
    order = _ranking(seeds, played)
    return _looking_ahead(order, _met(played), _byes(played), max(0, rounds - len(played) - 1))


def _first_method(seeds: Sequence[str], played: Played) -> tuple[Tie, ...]:
    """Version 1: the bye first, then Monrad with backtracking, else greedy fewest repeats."""
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


def _looking_ahead(
    order: list[str], met: dict[str, Counter[str]], byes: Counter[str], after: int
) -> tuple[Tie, ...]:
    """Version 2: the first pairing in Monrad order that leaves room for ``after`` rounds more
    without repeats (fewer when it cannot), else the one of fewest repeats."""
    bots: list[str | None] = [*order, None] if len(order) % 2 else list(order)
    adjacent = [_unmet(bots, index, met, byes) for index in range(len(bots))]
    total = LOOKAHEAD_TOTAL  # the steps of every look-ahead beyond this round, together
    for room in range(after, -1, -1):
        if min(mask.bit_count() for mask in adjacent) <= room:
            continue  # some bot has not room rounds more of new opponents after this one
        steps = LOOKAHEAD_BUDGET if room == 0 else min(LOOKAHEAD_BUDGET, total)
        budget = Budget(steps)
        try:
            pairs = _first_fit(adjacent, room, budget)
        except BudgetSpentError:
            pairs = None
        if room:
            total -= steps - max(budget.left, 0)
        if pairs is not None:
            return _ties(bots, pairs)
    return _ties(bots, _fewest(bots, met, byes))


def _unmet(
    bots: list[str | None], index: int, met: dict[str, Counter[str]], byes: Counter[str]
) -> int:
    """The vertices a vertex has not met, as a bitmask: a bot, the bots it has not met and
    the bye if it has had none; the bye (``None``), the bots that have not had it."""
    mask = 0
    one = bots[index]
    for other_index, other in enumerate(bots):
        if other_index == index:
            continue
        if one is None or other is None:
            fresh = _bye_cost(one, other, byes) == 0
        else:
            fresh = not met[one][other]
        mask |= fresh << other_index
    return mask


def _bye_cost(one: str | None, other: str | None, byes: Counter[str]) -> int:
    """The byes a bot has had, of a bot and the bye (the bye with itself: 0)."""
    bot = one if other is None else other
    return 0 if bot is None else byes[bot]


def _first_fit(adjacent: list[int], room: int, budget: Budget) -> list[tuple[int, int]] | None:
    """The first round in preference order (the bye from the bottom up, then Monrad) whose
    pairings taken out leave ``room`` disjoint perfect matchings of the pairings unplayed."""
    everyone = (1 << len(adjacent)) - 1
    for pairs in _preferred(adjacent, everyone, budget):
        rest = list(adjacent)
        for one, other in pairs:
            rest[one] &= ~(1 << other)
            rest[other] &= ~(1 << one)
        if disjoint_matchings(rest, everyone, room, budget):
            return pairs
    return None


def _preferred(
    adjacent: list[int], everyone: int, budget: Budget
) -> Iterator[list[tuple[int, int]]]:
    """The repeat-free rounds in preference order: in an odd field (the bye is the last
    vertex) each bot that may have the bye, the lowest ranked first, then the Monrad pairings
    of the others."""
    if len(adjacent) % 2 == 0 or len(adjacent) == 0:
        yield from ranked_matchings(adjacent, everyone, budget)
        return
    bye = len(adjacent) - 1
    for bot in reversed(list(bits(adjacent[bye]))):
        rest = everyone & ~(1 << bye) & ~(1 << bot)
        for pairs in ranked_matchings(adjacent, rest, budget):
            yield [*pairs, (bot, bye)]


def _fewest(
    bots: list[str | None], met: dict[str, Counter[str]], byes: Counter[str]
) -> list[tuple[int, int]]:
    """The round of fewest byes again, then fewest repeats (exact within
    :data:`FALLBACK_BUDGET` steps; else the best found)."""
    most = max((count for seen in met.values() for count in seen.values()), default=0)
    weight = 1 + len(bots) // 2 * most  # a bye again costs more than any repeats of a round

    def cost(one: str | None, other: str | None) -> int:
        if one is None or other is None:
            return weight * _bye_cost(one, other, byes)
        return met[one][other] if one != other else 0

    costs = [[cost(one, other) for other in bots] for one in bots]
    pairs, _ = cheapest_matching(range(len(bots)), costs, Budget(FALLBACK_BUDGET))
    assert pairs is not None, "the search's first round comes within a step per tie"
    return pairs


def _ties(bots: list[str | None], pairs: list[tuple[int, int]]) -> tuple[Tie, ...]:
    """The round's ties, in ranking order of their better bot, a bye last."""
    ties = []
    bye = None
    for one, other in sorted(pairs):
        first, second = bots[min(one, other)], bots[max(one, other)]
        assert first is not None, "the bye is the last vertex"
        if second is None:
            bye = Tie(first)
        else:
            ties.append(Tie(first, second))
    return tuple(ties + ([bye] if bye is not None else []))


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
