"""Matchings of a small graph, searched with a step budget: what a Swiss round's look-ahead and
its fewest-repeats fallback need.

A graph is a list of neighbour bitmasks (vertex ``v``'s neighbours are the set bits of
``adjacent[v]``); the vertices in play are the set bits of ``alive``. Every search counts its
steps against a :class:`Budget` and raises :class:`BudgetSpentError` past it, so its cost is bounded
and its answer, like everything in a pairing, a pure function of its input.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "Budget",
    "BudgetSpentError",
    "bits",
    "cheapest_matching",
    "disjoint_matchings",
    "perfect_matchings",
    "ranked_matchings",
]

Pairs = list[tuple[int, int]]


class BudgetSpentError(Exception):
    """A search used its whole budget without an answer."""


@dataclass(slots=True)
class Budget:
    """Steps a search may take (each node of its search tree is one)."""

    left: int

    def step(self) -> None:
        """Count one step.

        Raises:
            BudgetSpentError: none left.
        """
        self.left -= 1
        if self.left < 0:
            raise BudgetSpentError


def bits(mask: int) -> Iterator[int]:
    """The set bits of ``mask``, lowest first.

    >>> list(bits(0b10110))
    [1, 2, 4]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _tightest(adjacent: Sequence[int], alive: int) -> int:
    """The vertex in play with the fewest neighbours in play (the lowest of equals)."""
    return min(bits(alive), key=lambda v: (adjacent[v] & alive).bit_count())


def perfect_matchings(
    adjacent: Sequence[int], alive: int, budget: Budget, first: int = -1, above: int = -1
) -> Iterator[Pairs]:
    """Every perfect matching of the vertices of ``alive``, each once; with ``first``, only
    those that pair it with a neighbour numbered above ``above``.

    >>> square = [0b1010, 0b0101, 0b1010, 0b0101]
    >>> list(perfect_matchings(square, 0b1111, Budget(100)))
    [[(0, 1), (2, 3)], [(0, 3), (1, 2)]]

    Raises:
        BudgetSpentError: the budget ran out.
    """
    if not alive:
        yield []
        return
    vertex = first if first >= 0 else _tightest(adjacent, alive)
    floor = above if first >= 0 else -1
    for other in bits(adjacent[vertex] & alive & ~((1 << (floor + 1)) - 1)):
        budget.step()
        rest = alive & ~(1 << vertex) & ~(1 << other)
        for pairs in perfect_matchings(adjacent, rest, budget):
            yield [(vertex, other), *pairs]


def ranked_matchings(adjacent: Sequence[int], alive: int, budget: Budget) -> Iterator[Pairs]:
    """Every perfect matching of ``alive`` in preference order, the Monrad system's: the lowest
    vertex (the best ranked) with each of its neighbours, lowest first, then so on for the
    vertices left.

    >>> every = [0b1110, 0b1101, 0b1011, 0b0111]
    >>> list(ranked_matchings(every, 0b1111, Budget(100)))
    [[(0, 1), (2, 3)], [(0, 2), (1, 3)], [(0, 3), (1, 2)]]

    Raises:
        BudgetSpentError: the budget ran out.
    """
    if not alive:
        yield []
        return
    top = (alive & -alive).bit_length() - 1
    for other in bits(adjacent[top] & alive & ~(1 << top)):
        budget.step()
        for pairs in ranked_matchings(adjacent, alive & ~(1 << top) & ~(1 << other), budget):
            yield [(top, other), *pairs]


def disjoint_matchings(
    adjacent: Sequence[int], alive: int, count: int, budget: Budget, above: int = -1
) -> bool:
    """Whether the graph holds ``count`` perfect matchings of ``alive`` with no edge in common
    (exact: the search is exhaustive, up to the order of the matchings, which it fixes by the
    partner of the lowest vertex, increasing).

    >>> triangle_pairs = [0b1110, 0b1101, 0b1011, 0b0111]  # four vertices, every edge
    >>> disjoint_matchings(triangle_pairs, 0b1111, 3, Budget(100))
    True
    >>> disjoint_matchings(triangle_pairs, 0b1111, 4, Budget(100))
    False

    Raises:
        BudgetSpentError: the budget ran out before an answer.
    """
    if count == 0 or not alive:
        return True
    if any((adjacent[v] & alive).bit_count() < count for v in bits(alive)):
        return False
    lowest = (alive & -alive).bit_length() - 1
    for pairs in perfect_matchings(adjacent, alive, budget, lowest, above):
        rest = list(adjacent)
        for one, other in pairs:
            rest[one] &= ~(1 << other)
            rest[other] &= ~(1 << one)
        if disjoint_matchings(rest, alive, count - 1, budget, pairs[0][1]):
            return True
    return False


def cheapest_matching(
    order: Sequence[int], cost: Sequence[Sequence[int]], budget: Budget
) -> tuple[Pairs | None, bool]:
    """The perfect matching of the complete graph on ``order`` of the least total ``cost``,
    the first of equals in preference order (the first unpaired vertex of ``order`` with each
    other unpaired one in ``order``'s order): branch and bound, pruned by the cheapest edge
    left at each vertex. Returns it (``None``: none found before the budget ran out) and
    whether the search finished (the answer is the optimum).

    >>> cost = [[0, 0, 1, 1], [0, 0, 1, 0], [1, 1, 0, 2], [1, 0, 2, 0]]
    >>> cheapest_matching([0, 1, 2, 3], cost, Budget(100))
    ([(0, 2), (1, 3)], True)
    """
    best: list[Pairs | None] = [None]
    limit = [sum(max(row) for row in cost) * len(order) + 1]

    def search(left: list[int], spent: int, pairs: Pairs) -> None:
        budget.step()
        if not left:
            best[0], limit[0] = list(pairs), spent
            return
        if spent + _floor(left, cost) >= limit[0]:
            return
        top, rest = left[0], left[1:]
        for index, other in enumerate(rest):
            pairs.append((top, other))
            search(rest[:index] + rest[index + 1 :], spent + cost[top][other], pairs)
            pairs.pop()

    try:
        search(list(order), 0, [])
    except BudgetSpentError:
        return best[0], False
    return best[0], True


def _floor(left: list[int], cost: Sequence[Sequence[int]]) -> int:
    """A lower bound of the cost of pairing ``left``: half the sum of each vertex's cheapest
    edge to another (rounded up: costs are whole)."""
    total = sum(min(cost[v][u] for u in left if u != v) for v in left)
    return (total + 1) // 2
