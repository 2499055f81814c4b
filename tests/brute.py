"""A slow, obviously-correct reference: every combination of disjoint melds."""

from referee.rules.cards import mask_value
from referee.rules.melds import MELDS_BY_MASK


def brute_deadwood(mask: int) -> int:
    """Least deadwood over every set of pairwise-disjoint melds inside ``mask``."""
    melds = [meld for meld in MELDS_BY_MASK if meld & ~mask == 0]
    best = mask_value(mask)

    def search(start: int, used: int) -> None:
        nonlocal best
        best = min(best, mask_value(mask & ~used))
        for index in range(start, len(melds)):
            if not melds[index] & used:
                search(index + 1, used | melds[index])

    search(0, 0)
    return best
