"""The defender's showdown: own melds plus layoffs onto the knocker's melds, at least deadwood.

For each knocker meld the defender may add nothing, the fourth card of a three-card set, or any
unbroken chain of cards directly below and directly above a run. Every combination of those
bundles (no card used twice) is tried, and the cards left over are melded at minimum deadwood.
The defender's own melds may be broken to lay off, since only the result counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import NamedTuple

from referee.rules.cards import LANE, CardSet, CardsLike, to_mask
from referee.rules.melds import Meld, MeldKind, deadwood_of_mask, min_deadwood


class Layoff(NamedTuple):
    """Cards the defender added to one of the knocker's melds."""

    cards: CardSet
    onto: Meld

    def __str__(self) -> str:
        return f"{self.cards} onto [{self.onto}]"


class DefenderLayout(NamedTuple):
    """The defender's final layout: own melds, layoffs, and what is left."""

    melds: tuple[Meld, ...]
    laid_off: tuple[Layoff, ...]
    deadwood: int
    unmatched: int
    """The cards left unmatched, as a mask (``deadwood_cards`` as a card set)."""

    @property
    def deadwood_cards(self) -> CardSet:
        """The defender's cards in no meld and not laid off."""
        return CardSet.of_mask(self.unmatched)

    def __str__(self) -> str:
        parts = [f"[{meld}]" for meld in self.melds]
        parts += [f"({layoff})" for layoff in self.laid_off]
        if self.unmatched:
            parts.append(str(self.deadwood_cards))
        return f"{' | '.join(parts)} = {self.deadwood}"


def _extensions(meld: Meld, held: int) -> list[int]:
    """Every bundle of held cards that may be laid off onto ``meld`` (0 = nothing)."""
    mask = meld.mask
    if meld.kind is MeldKind.SET:
        if mask.bit_count() == 4:
            return [0]
        low = (mask & -mask).bit_length() - 1
        rank = low % LANE
        fourth = sum(1 << (suit * LANE + rank) for suit in range(4)) & ~mask
        return [0, fourth] if held & fourth else [0]
    low = (mask & -mask).bit_length() - 1
    high = mask.bit_length() - 1
    below, above = [0], [0]
    card = low - 1
    while card >= 0 and card // LANE == low // LANE and held >> card & 1:
        below.append(below[-1] | 1 << card)
        card -= 1
    card = high + 1
    while card // LANE == high // LANE and held >> card & 1:
        above.append(above[-1] | 1 << card)
        card += 1
    return [b | a for b in below for a in above]


def lay_off(knocker_melds: Iterable[CardsLike], defender_cards: CardsLike) -> DefenderLayout:
    """The defender's best layout against a knock: least deadwood over melds and layoffs.

    Chains grow at both ends of a run, and the defender breaks its own meld when laying off
    from it leaves less deadwood:

    >>> best = lay_off(["6h 7h 8h", "Kc Kd Ks"], "4h 5h 9h Th Kh 2c 2d 2s 3s Qd")
    >>> best.deadwood, [str(layoff) for layoff in best.laid_off]
    (13, ['4h 5h 9h Th onto [6h 7h 8h]', 'Kh onto [Kc Kd Ks]'])
    >>> str(best)
    '[2c 2d 2s] | (4h 5h 9h Th onto [6h 7h 8h]) | (Kh onto [Kc Kd Ks]) | Qd 3s = 13'

    Raises:
        ValueError: a knocker meld is not a meld, or the cards are not valid card sets.
    """
    melds = [item if isinstance(item, Meld) else Meld.of(item) for item in knocker_melds]
    held = to_mask(defender_cards)
    options = [_extensions(meld, held) for meld in melds]
    best: tuple[int, tuple[int, ...]] | None = None
    for combo in itertools.product(*options):
        laid = 0
        for bundle in combo:
            if laid & bundle:
                break
            laid |= bundle
        else:
            value = deadwood_of_mask(held & ~laid)
            if best is None or value < best[0]:
                best = (value, combo)
    assert best is not None  # the empty combination is always there
    combo = best[1]
    laid_total = 0
    layoffs = []
    for meld, bundle in zip(melds, combo, strict=True):
        if bundle:
            layoffs.append(Layoff(CardSet.of_mask(bundle), meld))
            laid_total |= bundle
    own = min_deadwood(CardSet.of_mask(held & ~laid_total))
    return DefenderLayout(own.melds, tuple(layoffs), own.deadwood, own.unmatched)


def no_layoffs(defender_cards: CardsLike) -> DefenderLayout:
    """The defender's layout against gin: own melds only.

    >>> no_layoffs("4h 5h 6h 9c").deadwood
    9
    """
    own = min_deadwood(defender_cards)
    return DefenderLayout(own.melds, (), own.deadwood, own.unmatched)
