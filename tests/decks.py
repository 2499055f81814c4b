"""Stacked decks for hand-made tests: name the cards each player gets, the rest follows."""

from __future__ import annotations

from referee.rules import Card


def _cards(text: str) -> list[int]:
    """The cards of a space-separated text, in the order written."""
    return [int(Card.parse(token)) for token in text.split()]


def stacked_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> tuple[int, ...]:
    """A full 52-card deck in dealing order that deals exactly these cards.

    Ten cards go to each player one at a time, the non-dealer first (``deck[0]``, ``deck[2]``,
    ... to the non-dealer; ``deck[1]``, ``deck[3]``, ... to the dealer); ``deck[20]`` is the
    upcard and ``deck[21:]`` the stock in drawing order: the named ``stock`` cards first, then
    every card not named anywhere, lowest card number first.

    >>> from referee.rules import format_cards
    >>> deck = stacked_deck("Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc", "Ad 2d 3d 4d 5d 6d 7d 8d 9d Td",
    ...                     "Kh", "Qs Js")
    >>> format_cards(deck[0:20:2]), format_cards(deck[1:20:2])
    ('Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc', 'Ad 2d 3d 4d 5d 6d 7d 8d 9d Td')
    >>> [str(Card(card)) for card in deck[20:24]]
    ['Kh', 'Qs', 'Js', 'Jc']

    Raises:
        ValueError: a hand does not hold ten cards, or a card is named twice or is malformed.
    """
    first, second, up, top = _cards(non_dealer), _cards(dealer), _cards(upcard), _cards(stock)
    if len(first) != 10 or len(second) != 10:
        raise ValueError(f"each hand needs 10 cards, got {len(first)} and {len(second)}")
    if len(up) != 1:
        raise ValueError(f"the upcard is one card, got {len(up)}")
    named = [*first, *second, *up, *top]
    if len(set(named)) != len(named):
        raise ValueError("a card is named twice")
    dealt = [card for pair in zip(first, second, strict=True) for card in pair]
    rest = [card for card in range(52) if card not in set(named)]
    deck = (*dealt, *up, *top, *rest)
    assert sorted(deck) == list(range(52))
    return deck
