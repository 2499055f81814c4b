"""The other engines we measure against, loaded only if installed, behind one small adapter each.

* OpenSpiel (PyPI ``open_spiel``): ``pyspiel``, a C++ engine behind pybind11. Its card numbers
  run suit by suit in the order ``s c d h``, ace to king.
* RLCard (PyPI ``rlcard``): a pure-Python engine whose cards are ``Card`` objects with upper-case
  suits (``'S' 'H' 'D' 'C'``). Its own game deals the 52 shared objects of ``utils.get_card``, so
  hands here hold those same objects.

Each adapter turns our cards into the library's native form (done before any timing) and offers
the calls a user of that library would make. Where the library has no single call for a question,
the adapter composes its public utilities the way its own code does, and says so in ``CALLS``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from referee.rules import Card

KNOCK_LIMIT = 10
"""The knock limit all three engines use by default."""


@dataclass(frozen=True)
class Skipped:
    """A peer that could not be loaded, and why."""

    library: str
    reason: str


def import_failure(error: BaseException) -> str:
    """A one-line reason for a failed import."""
    return f"{type(error).__name__}: {error}"


class OpenSpiel:
    """``pyspiel``'s Gin Rummy game and its ``GinRummyUtils`` (13 ranks, 4 suits, hand of 10)."""

    library = "OpenSpiel"

    def __init__(self, pyspiel: Any) -> None:
        self.game: Any = pyspiel.load_game("gin_rummy")
        self.utils: Any = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        self.min_deadwood: Callable[[list[int]], int] = self.utils.min_deadwood
        """The bound C++ ``GinRummyUtils.min_deadwood``: exact for 10 cards; for 11 it melds
        first, then drops the highest-ranked leftover card (not always the true minimum)."""
        legal = self.utils.legal_discards

        def legal_discards(hand: list[int]) -> list[int]:
            cards: list[int] = legal(hand, KNOCK_LIMIT)
            return cards

        self.legal_discards = legal_discards
        """``GinRummyUtils.legal_discards(hand, 10)``: every discard that leaves a knockable
        10-card hand (exact: it runs the 10-card minimum once per card)."""

    def hand(self, cards: Iterable[Card]) -> list[int]:
        """Our cards as OpenSpiel card numbers (both sides use the notation ``'As' 'Td'``)."""
        return [int(card) for card in self.utils.card_strings_to_card_ints(list(map(str, cards)))]

    def card_name(self, card: int) -> str:
        """OpenSpiel's notation of one of its card numbers."""
        return str(self.utils.card_string(card))

    def min_over_discards(self, hand: list[int]) -> int:
        """Exact least deadwood after one discard: the 10-card minimum of each of the 11 keeps."""
        deadwood = self.min_deadwood
        return min(deadwood(hand[:i] + hand[i + 1 :]) for i in range(len(hand)))

    def best_discards(self, hand: list[int]) -> tuple[int, set[int]]:
        """Exact least deadwood after one discard and every discard reaching it (untimed check)."""
        deadwood = self.min_deadwood
        values = {card: deadwood([c for c in hand if c != card]) for card in hand}
        best = min(values.values())
        return best, {card for card, value in values.items() if value == best}


class RLCard:
    """RLCard's Gin Rummy melding utilities and judge."""

    library = "RLCard"

    def __init__(self, melding: Any, utils: Any, judge: Any) -> None:
        self._melding = melding
        self._utils = utils
        self._judge = judge
        deck = [utils.get_card(card_id) for card_id in range(52)]
        self._by_name: dict[str, Any] = {card.rank + card.suit.lower(): card for card in deck}
        self.going_out_cards: Callable[[list[Any]], tuple[list[Any], list[Any]]] = (
            functools.partial(judge.get_going_out_cards, going_out_deadwood_count=KNOCK_LIMIT)
        )
        """``judge.get_going_out_cards(hand, 10)``: (knock cards, gin cards) of an 11-card hand."""

    def hand(self, cards: Iterable[Card]) -> list[Any]:
        """Our cards as RLCard's shared ``Card`` objects."""
        return [self._by_name[str(card)] for card in cards]

    def name(self, card: Any) -> str:
        """One of RLCard's cards in our notation (``'TD'`` becomes ``'Td'``)."""
        return str(card.rank + card.suit.lower())

    def going_out_names(self, hand: list[Any]) -> frozenset[str]:
        """Every knock or gin card of ``get_going_out_cards``, in our notation (untimed check)."""
        knock, gin = self.going_out_cards(hand)
        return frozenset(map(self.name, [*knock, *gin]))

    def min_deadwood(self, hand: list[Any]) -> int:
        """Least deadwood of 10 cards, as RLCard's own scoring step computes it: the first of
        ``melding.get_best_meld_clusters``, then ``utils.get_deadwood_count``."""
        clusters = self._melding.get_best_meld_clusters(hand)
        cluster = clusters[0] if clusters else []
        count: int = self._utils.get_deadwood_count(hand, cluster)
        return count

    def min_after_discard(self, hand: list[Any]) -> int:
        """Exact least deadwood of 11 cards after one discard: over every cluster of
        ``melding.get_meld_clusters`` (and no melds at all), the unmelded cards' value less the
        largest of them."""
        value: Callable[[Any], int] = self._utils.get_deadwood_value
        values = [value(card) for card in hand]
        best = sum(values) - max(values)
        for cluster in self._melding.get_meld_clusters(hand):
            melded = [card for meld in cluster for card in meld]
            left = [value(card) for card in hand if card not in melded]
            best = min(best, sum(left) - max(left, default=0))
        return best


def load_openspiel() -> OpenSpiel | Skipped:
    """OpenSpiel, or why it is skipped."""
    try:
        import pyspiel  # noqa: PLC0415 - optional peer, imported only when measured

        return OpenSpiel(pyspiel)
    except Exception as error:
        return Skipped(OpenSpiel.library, import_failure(error))


def load_rlcard() -> RLCard | Skipped:
    """RLCard, or why it is skipped."""
    try:
        from rlcard.games.gin_rummy import judge  # noqa: PLC0415 - optional peer
        from rlcard.games.gin_rummy.utils import melding, utils  # noqa: PLC0415

        return RLCard(melding, utils, judge)
    except Exception as error:
        return Skipped(RLCard.library, import_failure(error))


__all__ = ["KNOCK_LIMIT", "OpenSpiel", "RLCard", "Skipped", "load_openspiel", "load_rlcard"]
