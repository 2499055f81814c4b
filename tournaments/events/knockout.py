"""A knockout bracket: seeded so that the top seeds meet last, byes to the top seeds.

The bracket has room for the next power of two of bots; its first round places seed 1 against
the last place, seed 2 against the one before it, and so on, in the standard order (for eight:
1-8, 4-5, 2-7, 3-6), which keeps seeds 1 and 2 apart until the final. A place beyond the field
is a bye, so the byes go to the top seeds and every round after the first is full. Each later
round pairs the winners of neighbouring ties, the better seed first (the winner of an undecided
tie: :meth:`tournaments.events.ties.TieResult.winner`). As a Swiss round, each round is a pure
function of the seeds and the rounds before it (:func:`knockout_round`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.events.ties import Tie, TieResult

__all__ = ["bracket_order", "knockout_round", "knockout_rounds"]


def bracket_order(size: int) -> list[int]:
    """The seeds (1-based) of a bracket of ``size`` places (a power of two), in bracket order:
    neighbours meet in the first round.

    >>> bracket_order(8)
    [1, 8, 4, 5, 2, 7, 3, 6]

    Raises:
        ValueError: ``size`` is not a power of two.
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"a bracket has a power of two of places, not {size}")
    order = [1]
    while len(order) < size:
        width = 2 * len(order) + 1
        order = [seed for first in order for seed in (first, width - first)]
    return order


def knockout_rounds(field: int) -> int:
    """How many rounds a knockout of ``field`` bots has.

    >>> knockout_rounds(8), knockout_rounds(9), knockout_rounds(2)
    (3, 4, 1)
    """
    return max(0, field - 1).bit_length()


def knockout_round(seeds: Sequence[str], played: Sequence[Sequence[TieResult]]) -> tuple[Tie, ...]:
    """The next round's ties (empty: the knockout is over), from the seeds (strongest first) and
    the rounds played before it.

    >>> knockout_round(["a", "b", "c"], [])
    (Tie(first='a', second=None), Tie(first='b', second='c'))
    >>> first = [TieResult(Tie("a")), TieResult(Tie("b", "c"), 2, 0.5, -20)]
    >>> knockout_round(["a", "b", "c"], [first])
    (Tie(first='a', second='c'),)

    Raises:
        ValueError: fewer than two bots, a bot named twice, or a round played whose ties are
            not the ones this bracket pairs.
    """
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError("a knockout needs at least two different bots")
    size = 1 << knockout_rounds(len(seeds))
    places = [seeds[seed - 1] if seed <= len(seeds) else None for seed in bracket_order(size)]
    ties = _first_round(places)
    rank = {bot: index for index, bot in enumerate(seeds)}
    for round_ in played:
        if tuple(result.tie for result in round_) != ties:
            raise ValueError("a round played is not the one the bracket pairs")
        ties = _next_round([result.winner() for result in round_], rank)
    return ties


def _first_round(places: list[str | None]) -> tuple[Tie, ...]:
    ties = []
    for first, second in zip(places[::2], places[1::2], strict=True):
        assert first is not None, "the better seed of a first-round place is in the field"
        ties.append(Tie(first, second))
    return tuple(ties)


def _next_round(winners: list[str], rank: dict[str, int]) -> tuple[Tie, ...]:
    if len(winners) < 2:
        return ()
    ties = []
    for one, other in zip(winners[::2], winners[1::2], strict=True):
        first, second = sorted((one, other), key=rank.__getitem__)
        ties.append(Tie(first, second))
    return tuple(ties)
