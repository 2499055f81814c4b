"""Melds, minimum deadwood and the best discard.

The search is table-driven. Every arrangement is a choice of sets (only ranks held three or four
times can give one) plus, inside each suit, runs only. The best runs-only split of a suit depends
on that suit's 13-bit lane alone, so it is precomputed for all 8,192 lanes; what is left is a
handful of set choices, each costing four table look-ups. The result is the exact minimum.

>>> best = min_deadwood("As 2s 3s 4s 7c 7d 7h 7s Kd Qh")
>>> best.deadwood, [str(meld) for meld in best.melds], str(best.deadwood_cards)
(20, ['7c 7d 7h 7s', 'As 2s 3s 4s'], 'Kd Qh')
"""

from __future__ import annotations

import enum
import itertools
import operator
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, NamedTuple

from referee.rules import _tables
from referee.rules.cards import (
    CARDS,
    LANE,
    LANE_MASK,
    RANK_VALUES,
    Card,
    CardSet,
    CardsLike,
    iter_cards,
    lanes,
    mask_value,
    to_mask,
)


class MeldKind(enum.Enum):
    """A meld is a set (one rank) or a run (one suit, consecutive ranks)."""

    SET = "set"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class Meld:
    """A legal meld. Iterates as its cards, lowest rank first.

    >>> meld = Meld.of("9h Th Jh")
    >>> meld.kind.value, len(meld), str(meld), [card.rank for card in meld]
    ('run', 3, '9h Th Jh', [8, 9, 10])
    """

    mask: int
    kind: MeldKind

    @staticmethod
    def of(cards: CardsLike) -> Meld:
        """The meld made of these cards.

        Raises:
            ValueError: the cards are not a set of 3-4 or a run of 3 or more.
        """
        mask = to_mask(cards)
        meld = MELDS_BY_MASK.get(mask)
        if meld is None:
            raise ValueError(
                f"not a meld: {CardSet(mask)} (a set is 3 or 4 cards of one rank, "
                "a run 3 or more consecutive cards of one suit, ace low)"
            )
        return meld

    @property
    def cards(self) -> CardSet:
        """The meld's cards as a card set."""
        return CardSet(self.mask)

    def __iter__(self) -> Iterator[Card]:
        cards = list(iter_cards(self.mask))
        return iter(sorted(cards, key=lambda card: (card.rank, card.suit)))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __str__(self) -> str:
        return " ".join(str(card) for card in self)

    def __repr__(self) -> str:
        return f"Meld.of({str(self)!r})"


def _run_mask(suit: int, start: int, length: int) -> int:
    return ((1 << length) - 1) << (suit * LANE + start)


def _build_melds() -> dict[int, Meld]:
    melds: dict[int, Meld] = {}
    for rank in range(LANE):
        suits_of_rank = [1 << (suit * LANE + rank) for suit in range(4)]
        for size in (3, 4):
            for chosen in itertools.combinations(suits_of_rank, size):
                mask = sum(chosen)
                melds[mask] = Meld(mask, MeldKind.SET)
    for suit in range(4):
        for length in range(3, LANE + 1):
            for start in range(LANE - length + 1):
                mask = _run_mask(suit, start, length)
                melds[mask] = Meld(mask, MeldKind.RUN)
    return melds


MELDS_BY_MASK: Final = _build_melds()
"""Every legal meld (65 sets and 264 runs), by mask."""


LANE_RUN_DEADWOOD = list(_tables.LANE_RUN_DEADWOOD)
"""Runs-only minimum deadwood of every 13-bit lane (shipped precomputed, see ``_tablegen``)."""


def _u16_table(data: bytes) -> tuple[int, ...]:
    """A table of two-byte little-endian entries as a tuple of ints."""
    return struct.unpack(f"<{len(data) // 2}H", data)


# ---------------------------------------------------------------------------------------------
# Set choices. A rank held 3 times gives two choices (no set, the set); a rank held 4 times six
# (no set, the 4-set, each of the four 3-sets). _SET_CHOICES[rank][suits] lists them as card masks
# for each 4-bit pattern of suits holding the rank.


def _build_set_choices() -> tuple[tuple[tuple[int, ...], ...], ...]:
    # A choice for one rank is that rank's bit in each chosen suit: the same suit groups for
    # every rank, shifted. Listed once for rank 0 (one list per suit pattern), then shifted.
    per_pattern = []
    for pattern in range(16):
        held = [suit for suit in range(4) if pattern >> suit & 1]
        choices = [0]
        for size in (4, 3) if len(held) == 4 else (3,) if len(held) == 3 else ():
            for group in itertools.combinations(held, size):
                choices.append(sum(1 << (suit * LANE) for suit in group))
        per_pattern.append(choices)
    return tuple(
        tuple([tuple([choice << rank for choice in choices]) for choices in per_pattern])
        for rank in range(LANE)
    )


_SET_CHOICES: Final = _build_set_choices()


def _set_ranks(c: int, d: int, h: int, s: int) -> int:
    """Lane mask of the ranks held in three or four suits."""
    return (c & d & (h | s)) | (h & s & (c | d))


def _set_options(c: int, d: int, h: int, s: int, ranks: int) -> list[tuple[int, ...]]:
    """For each rank that can form a set, its choices as card masks (0 = no set)."""
    options = []
    while ranks:
        rank_bit = ranks & -ranks
        ranks ^= rank_bit
        rank = rank_bit.bit_length() - 1
        pattern = (
            (c >> rank & 1) | (d >> rank & 1) << 1 | (h >> rank & 1) << 2 | (s >> rank & 1) << 3
        )
        options.append(_SET_CHOICES[rank][pattern])
    return options


def _lane_deadwood(mask: int) -> int:
    """Runs-only minimum deadwood of a card mask (sets not considered)."""
    table = LANE_RUN_DEADWOOD
    return (
        table[mask & LANE_MASK]
        + table[mask >> LANE & LANE_MASK]
        + table[mask >> 2 * LANE & LANE_MASK]
        + table[mask >> 3 * LANE]
    )


def _set_combos(mask: int, ranks: int) -> Iterable[int]:
    """Every choice of sets for a hand, each as one mask of the set cards (0 = no set)."""
    c, d, h, s = lanes(mask)
    options = _set_options(c, d, h, s, ranks)
    if len(options) == 1:
        return options[0]
    return [sum(combo) for combo in itertools.product(*options)]


def _best_sets(mask: int, ranks: int) -> tuple[int, int]:
    """Among all set choices of a hand: ``(least deadwood, the chosen sets as one mask)``.

    The first best combination in a fixed order wins, with "no set" tried first for each rank.
    """
    table = LANE_RUN_DEADWOOD
    best, best_sets = 1 << 30, 0
    for sets in _set_combos(mask, ranks):
        rest = mask ^ sets
        total = (
            table[rest & LANE_MASK]
            + table[rest >> LANE & LANE_MASK]
            + table[rest >> 2 * LANE & LANE_MASK]
            + table[rest >> 3 * LANE]
        )
        if total < best:
            best, best_sets = total, sets
    return best, best_sets


def deadwood_of_mask(mask: int) -> int:
    """Exact minimum deadwood of a card mask (the fast path behind :func:`min_deadwood`).

    >>> deadwood_of_mask(to_mask("As 2s 3s 4s 4c 4d Kd"))  # the 4s goes to the set
    10
    """
    c = mask & LANE_MASK
    d = mask >> LANE & LANE_MASK
    h = mask >> 2 * LANE & LANE_MASK
    s = mask >> 3 * LANE
    table = LANE_RUN_DEADWOOD
    ranks = (c & d & (h | s)) | (h & s & (c | d))
    if not ranks:
        return table[c] + table[d] + table[h] + table[s]
    return _best_sets(mask, ranks)[0]


# ---------------------------------------------------------------------------------------------
# Arrangements


class Arrangement(NamedTuple):
    """A hand laid out as melds plus unmatched cards, and the deadwood of those cards."""

    melds: tuple[Meld, ...]
    deadwood: int
    unmatched: int
    """The unmatched cards as a mask (``deadwood_cards`` is the same as a card set)."""

    @property
    def deadwood_cards(self) -> CardSet:
        """The cards in no meld."""
        return CardSet.of_mask(self.unmatched)

    @property
    def cards(self) -> CardSet:
        """Every card of the arrangement, melded or not."""
        mask = self.unmatched
        for meld in self.melds:
            mask |= meld.mask
        return CardSet.of_mask(mask)

    def __str__(self) -> str:
        parts = [f"[{meld}]" for meld in self.melds]
        if self.unmatched:
            parts.append(str(self.deadwood_cards))
        return f"{' | '.join(parts)} = {self.deadwood}"


_new_arrangement: Final = tuple.__new__  # NamedTuple construction without its Python frame


def _meld_order(meld: Meld) -> tuple[int, int]:
    """Order of melds in an arrangement: sets by rank, then runs by suit and rank."""
    low = (meld.mask & -meld.mask).bit_length() - 1
    if meld.kind is MeldKind.SET:
        return (0, low % LANE)
    return (1, low)


def _make_arrangement(mask: int, meld_masks: Iterable[int]) -> Arrangement:
    melds = tuple(sorted((MELDS_BY_MASK[m] for m in meld_masks), key=_meld_order))
    rest = mask
    for meld in melds:
        rest &= ~meld.mask
    return Arrangement(melds, mask_value(rest), rest)


def _split_sets(sets: int) -> tuple[Meld, ...]:
    """The set melds packed in one mask (at most one set per rank), by rank."""
    melds = []
    ranks = sets | sets >> LANE | sets >> 2 * LANE | sets >> 3 * LANE
    ranks &= LANE_MASK
    while ranks:
        rank_bit = ranks & -ranks
        ranks ^= rank_bit
        melds.append(MELDS_BY_MASK[sets & _RANK_MASKS[rank_bit.bit_length() - 1]])
    return tuple(melds)


_RUN_STARTS: Final = sum(((1 << (LANE - 2)) - 1) << (suit * LANE) for suit in range(4))
"""Card positions where a run of three may start (ranks ace to jack of each suit)."""
_RANK_MASKS: Final = tuple(
    sum(1 << (suit * LANE + rank) for suit in range(4)) for rank in range(LANE)
)

# For each suit and lane: the tabled best runs as Meld objects, and the lane bits they cover.
# Each suit gets one tuple of melds per distinct split, shared by every lane of that split.


def _build_lane_run_melds() -> tuple[tuple[tuple[Meld, ...], ...], ...]:
    pick = operator.itemgetter(*_u16_table(_tables.LANE_SPLIT))  # lane -> its split's tuple
    runs = {run for split in _tables.RUN_SPLITS for run in split}
    by_suit = []
    for suit in range(4):
        meld_of = {run: MELDS_BY_MASK[run << (suit * LANE)] for run in runs}.__getitem__
        by_suit.append(pick(tuple([tuple(map(meld_of, split)) for split in _tables.RUN_SPLITS])))
    return tuple(by_suit)


_LANE_RUN_MELDS: Final = _build_lane_run_melds()
_LANE_LEFT: Final = _u16_table(_tables.LANE_LEFT)


def min_deadwood(cards: CardsLike) -> Arrangement:
    """The smallest deadwood of a hand, with one arrangement that reaches it.

    Works for any number of cards. Ties between arrangements are broken by a fixed search order
    (the referee's knock layout uses :func:`knock_layout` instead, which minds layoffs).

    >>> best = min_deadwood("7c 7d 7h 8h 9h Kc Kd")  # the 7h is wanted by a set and a run
    >>> best.deadwood, [str(meld) for meld in best.melds], str(best.deadwood_cards)
    (34, ['7h 8h 9h'], '7c Kc 7d Kd')
    >>> min_deadwood("Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc").deadwood
    0

    Raises:
        ValueError: the cards are not a valid card set.
    """
    mask = cards.mask if type(cards) is CardSet else to_mask(cards)
    # Literal lane shifts (13, 26, 39) and mask (8191): this is the hot path of every bot.
    c = mask & 8191
    d = mask >> 13 & 8191
    h = mask >> 26 & 8191
    s = mask >> 39
    ranks = (c & d & (h | s)) | (h & s & (c | d))
    if not ranks and not mask & mask >> 1 & mask >> 2 & _RUN_STARTS:
        values = LANE_RUN_DEADWOOD  # no set and no run anywhere: everything is deadwood
        return _new_arrangement(
            Arrangement, ((), values[c] + values[d] + values[h] + values[s], mask)
        )
    by_suit = _LANE_RUN_MELDS
    if ranks:
        sets = _best_sets(mask, ranks)[1]
        if sets:
            rest = mask ^ sets
            c, d, h, s = rest & 8191, rest >> 13 & 8191, rest >> 26 & 8191, rest >> 39
            melds = _split_sets(sets) + by_suit[0][c] + by_suit[1][d] + by_suit[2][h]
            melds += by_suit[3][s]
        else:
            melds = by_suit[0][c] + by_suit[1][d] + by_suit[2][h] + by_suit[3][s]
    else:
        melds = by_suit[0][c] + by_suit[1][d] + by_suit[2][h] + by_suit[3][s]
    left = _LANE_LEFT
    table = LANE_RUN_DEADWOOD
    return _new_arrangement(
        Arrangement,
        (
            melds,
            table[c] + table[d] + table[h] + table[s],
            left[c] | left[d] << 13 | left[h] << 26 | left[s] << 39,
        ),
    )


def best_discards(cards: CardsLike) -> tuple[int, tuple[Card, ...]]:
    """For an 11-card hand: the least deadwood reachable by one discard, and every such discard.

    This is the true minimum over all eleven discards (a shortcut that melds first and throws the
    largest leftover card misses some hands, like this one, where throwing a three goes gin):

    >>> dw, discards = best_discards("3c 6s 3s 7d Ac 4s 3h 9d 8d 2c 5s")
    >>> dw, [str(card) for card in discards]
    (0, ['3h'])

    Raises:
        ValueError: the hand does not hold exactly 11 cards.
    """
    mask = to_mask(cards)
    if mask.bit_count() != 11:
        raise ValueError(f"best_discards needs 11 cards, got {mask.bit_count()}")
    best, found = discard_deadwoods(mask)
    return best, tuple(CARDS[card] for card in found)


def _discard_values(mask: int, candidates: int) -> Iterator[tuple[int, int]]:
    """``(card, deadwood of mask without card)`` for each card of ``candidates``.

    When no rank is held three times, sets are out of play and removing a card changes only its
    own suit's lane, so each candidate costs two table look-ups.
    """
    c, d, h, s = lanes(mask)
    if _set_ranks(c, d, h, s):
        while candidates:
            low = candidates & -candidates
            candidates ^= low
            yield low.bit_length() - 1, deadwood_of_mask(mask ^ low)
        return
    table = LANE_RUN_DEADWOOD
    suit_lanes = (c, d, h, s)
    base = table[c] + table[d] + table[h] + table[s]
    while candidates:
        low = candidates & -candidates
        candidates ^= low
        card = low.bit_length() - 1
        lane = suit_lanes[card // LANE]
        yield card, base - table[lane] + table[lane ^ (1 << card % LANE)]


def discard_deadwoods(mask: int) -> tuple[int, list[int]]:
    """Least deadwood after one discard from ``mask`` and the card numbers that reach it."""
    best = 1 << 30
    found: list[int] = []
    for card, value in _discard_values(mask, mask):
        if value < best:
            best, found = value, [card]
        elif value == best:
            found.append(card)
    return best, found


def knock_discards(mask: int, limit: int, forbidden: int = 0) -> list[int]:
    """Card numbers of ``mask`` whose discard leaves deadwood ``limit`` or less.

    ``forbidden`` is a mask of cards that may not be discarded (the card just taken from the
    discard pile). Keeping 10 of 11 cards lowers the deadwood by at most the discarded card's
    value, so a hand whose deadwood exceeds ``limit + 10`` is rejected after one search.
    """
    if deadwood_of_mask(mask) > limit + 10:
        return []
    return [card for card, value in _discard_values(mask, mask & ~forbidden) if value <= limit]


# ---------------------------------------------------------------------------------------------
# Every optimal arrangement, and the referee's knock layout


def _lane_all_optimal(lane: int) -> list[tuple[int, ...]]:
    """Every runs-only split of a lane that reaches the tabled minimum, as run lane-masks."""
    if not lane:
        return [()]
    target = LANE_RUN_DEADWOOD[lane]
    low = lane & -lane
    rank = low.bit_length() - 1
    splits: list[tuple[int, ...]] = []
    if LANE_RUN_DEADWOOD[lane ^ low] + RANK_VALUES[rank] == target:
        splits.extend(_lane_all_optimal(lane ^ low))
    length, run = 1, low
    while rank + length < LANE and lane >> (rank + length) & 1:
        run |= 1 << (rank + length)
        length += 1
        if length >= 3 and LANE_RUN_DEADWOOD[lane ^ run] == target:
            splits.extend((run, *tail) for tail in _lane_all_optimal(lane ^ run))
    return splits


def optimal_meld_groups(mask: int) -> list[tuple[int, ...]]:
    """Every meld group (tuple of meld masks) that leaves the minimum deadwood of ``mask``.

    >>> groups = optimal_meld_groups(to_mask("Ac 2c 3c 4c 5c 6c"))  # one run or two
    >>> sorted(" | ".join(str(CardSet(meld)) for meld in group) for group in groups)
    ['Ac 2c 3c 4c 5c 6c', 'Ac 2c 3c | 4c 5c 6c']
    """
    target = deadwood_of_mask(mask)
    c, d, h, s = lanes(mask)
    groups: list[tuple[int, ...]] = []
    for combo in itertools.product(*_set_options(c, d, h, s, _set_ranks(c, d, h, s))):
        sets = tuple(meld for meld in combo if meld)
        left = mask ^ sum(sets)
        if _lane_deadwood(left) != target:
            continue
        per_suit = [
            [tuple(run << (suit * LANE) for run in split) for split in _lane_all_optimal(lane)]
            for suit, lane in enumerate(lanes(left))
        ]
        for runs in itertools.product(*per_suit):
            groups.append((*sets, *itertools.chain.from_iterable(runs)))
    return groups


def layoff_spots(meld_masks: Iterable[int]) -> int:
    """Mask of the cards that could be laid off directly onto these melds."""
    spots = 0
    for meld_mask in meld_masks:
        meld = MELDS_BY_MASK[meld_mask]
        if meld.kind is MeldKind.SET:
            if meld_mask.bit_count() == 3:
                low = (meld_mask & -meld_mask).bit_length() - 1
                rank = low % LANE
                spots |= sum(1 << (suit * LANE + rank) for suit in range(4)) & ~meld_mask
        else:
            low = (meld_mask & -meld_mask).bit_length() - 1
            high = meld_mask.bit_length() - 1
            if low % LANE > 0:
                spots |= 1 << (low - 1)
            if high % LANE < LANE - 1:
                spots |= 1 << (high + 1)
    return spots


def knock_layout(cards: CardsLike) -> Arrangement:
    """The arrangement the referee lays out for a knock that declares none.

    Among all minimum-deadwood arrangements of the knocker's 10 cards it takes the one that
    offers the defender the fewest layoff spots (cards outside the knocker's hand that would
    extend a meld: the fourth card of a three-card set, the card just below or above a run),
    then the one with fewer melds, then the smallest sorted tuple of meld masks. It looks only at
    the knocker's own cards.

    Laid as three runs, this block would offer six spots (a four and an eight in each suit); laid
    as three sets it offers three (the spade of each rank), so sets are chosen:

    >>> str(knock_layout("5c 6c 7c 5d 6d 7d 5h 6h 7h Ks"))
    '[5c 5d 5h] | [6c 6d 6h] | [7c 7d 7h] | Ks = 10'

    Raises:
        ValueError: the cards are not a valid card set.
    """
    mask = to_mask(cards)
    own = mask

    def key(group: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        return ((layoff_spots(group) & ~own).bit_count(), len(group), tuple(sorted(group)))

    best = min(optimal_meld_groups(mask), key=key)
    return _make_arrangement(mask, best)


def arrangement_of(cards: CardsLike, melds: Iterable[CardsLike]) -> Arrangement:
    """Check a declared layout: ``melds`` must be legal, disjoint and inside ``cards``.

    >>> str(arrangement_of("7c 7d 7h 8h 9h Kc Kd", ["7h 8h 9h"]))
    '[7h 8h 9h] | 7c Kc 7d Kd = 34'

    Raises:
        ValueError: a meld is not legal, uses a card twice, or uses a card not in the hand.
    """
    mask = to_mask(cards)
    used = 0
    meld_masks = []
    for declared in melds:
        meld = Meld.of(declared)
        if meld.mask & used:
            raise ValueError(f"meld [{meld}] uses a card already used by another meld")
        if meld.mask & ~mask:
            raise ValueError(
                f"meld [{meld}] uses cards not in the hand: {CardSet(meld.mask & ~mask)}"
            )
        used |= meld.mask
        meld_masks.append(meld.mask)
    return _make_arrangement(mask, meld_masks)


__all__ = [
    "MELDS_BY_MASK",
    "Arrangement",
    "Meld",
    "MeldKind",
    "arrangement_of",
    "best_discards",
    "deadwood_of_mask",
    "discard_deadwoods",
    "knock_discards",
    "knock_layout",
    "layoff_spots",
    "min_deadwood",
    "optimal_meld_groups",
]
