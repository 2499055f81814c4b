"""Cards, card sets and their notation.

A card is a number 0..51, ``suit * 13 + rank`` with suits ``c d h s`` and ranks ``A 2 .. 9 T J Q
K`` (ace low). A card set is a 52-bit mask: bit ``n`` is card ``n``. Each suit is one 13-bit lane,
so a run is a block of consecutive bits and a set is the same bit in several lanes.

>>> hand = parse_cards("As 2s 3s Kd")
>>> str(hand), len(hand), deadwood_value(hand)
('Kd As 2s 3s', 4, 16)
>>> [card.rank for card in hand]
[12, 0, 1, 2]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, TypeAlias

from referee.rules import _tables

RANKS: Final = "A23456789TJQK"
SUITS: Final = "cdhs"
LANE: Final = 13
LANE_MASK: Final = (1 << LANE) - 1
FULL_DECK: Final = (1 << 52) - 1


class Card(int):
    """One card: an ``int`` 0..51 whose ``str()`` is its notation (``'Td'``).

    >>> card = Card.parse("Td")
    >>> int(card), card.rank, card.suit, card.value, str(card)
    (22, 9, 1, 10, 'Td')
    """

    __slots__ = ()

    @property
    def rank(self) -> int:
        """Rank index: 0 for the ace up to 12 for the king."""
        return self % LANE

    @property
    def suit(self) -> int:
        """Suit index: 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return self // LANE

    @property
    def value(self) -> int:
        """Deadwood value: ace 1, two to nine face value, ten and pictures 10."""
        return RANK_VALUES[self % LANE]

    @property
    def bit(self) -> int:
        """This card as a one-card mask."""
        return 1 << self

    def __str__(self) -> str:
        return CARD_NAMES[self]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read one card in notation (``'As'``, ``'td'`` is accepted as ``'Td'``).

        Raises:
            ValueError: the text is not a rank character followed by a suit character.
        """
        token = text.strip()
        if len(token) != 2:
            raise ValueError(f"bad card {text!r}: a card is a rank then a suit, like 'As' or 'Td'")
        rank = RANKS.find(token[0].upper())
        suit = SUITS.find(token[1].lower())
        if rank < 0:
            raise ValueError(f"bad card {text!r}: rank must be one of {' '.join(RANKS)}")
        if suit < 0:
            raise ValueError(f"bad card {text!r}: suit must be one of {' '.join(SUITS)}")
        return CARDS[suit * LANE + rank]


RANK_VALUES: Final = tuple(min(rank + 1, 10) for rank in range(LANE))
CARD_NAMES: Final = tuple(RANKS[n % LANE] + SUITS[n // LANE] for n in range(52))
"""The notation of each card number (``CARD_NAMES[22] == 'Td'``)."""
CARDS: Final = tuple(Card(n) for n in range(52))
"""Each card number as its :class:`Card`, one shared object per card (what parsing returns)."""
CARD_VALUES: Final = tuple(card.value for card in CARDS)
"""The deadwood value of each card number, for code that works on masks."""

LANE_VALUE: Final = tuple(_tables.LANE_VALUE)
"""Deadwood value of every 13-bit lane (the sum over its set bits), indexed by lane mask."""


def lanes(mask: int) -> tuple[int, int, int, int]:
    """Split a card mask into its four suit lanes (clubs, diamonds, hearts, spades)."""
    return (
        mask & LANE_MASK,
        mask >> LANE & LANE_MASK,
        mask >> 2 * LANE & LANE_MASK,
        mask >> 3 * LANE & LANE_MASK,
    )


def mask_value(mask: int) -> int:
    """Deadwood value of every card in a mask."""
    return (
        LANE_VALUE[mask & LANE_MASK]
        + LANE_VALUE[mask >> LANE & LANE_MASK]
        + LANE_VALUE[mask >> 2 * LANE & LANE_MASK]
        + LANE_VALUE[mask >> 3 * LANE]
    )


def iter_cards(mask: int) -> Iterator[Card]:
    """The cards of a mask, lowest card number first."""
    while mask:
        low = mask & -mask
        yield CARDS[low.bit_length() - 1]
        mask ^= low


class CardSet:
    """An immutable set of cards backed by a 52-bit mask.

    Iterates as :class:`Card` in card-number order (suit by suit ``c d h s``, ace to king), and
    ``str()`` gives the notation in that order.

    >>> cards = parse_cards("7c 7d 7h")
    >>> Card.parse("7d") in cards, len(cards | parse_cards("8c")), str(cards - parse_cards("7d"))
    (True, 4, '7c 7h')
    """

    __slots__ = ("mask",)
    mask: int

    def __init__(self, mask: int = 0) -> None:
        if not 0 <= mask <= FULL_DECK:
            raise ValueError(f"card mask out of range: {mask:#x}")
        object.__setattr__(self, "mask", mask)

    @classmethod
    def of_mask(cls, mask: int) -> CardSet:
        """Wrap a mask already known to be valid (no range check: the hot path)."""
        cards = object.__new__(cls)
        object.__setattr__(cards, "mask", mask)
        return cards

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CardSet is immutable")

    def __iter__(self) -> Iterator[Card]:
        return iter_cards(self.mask)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and 0 <= card < 52 and bool(self.mask >> card & 1)

    def __bool__(self) -> bool:
        return self.mask != 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def __le__(self, other: CardSet) -> bool:
        return self.mask & ~other.mask == 0

    def __str__(self) -> str:
        return format_cards(self)

    def __repr__(self) -> str:
        return f"parse_cards({str(self)!r})"

    @property
    def value(self) -> int:
        """Deadwood value of all the cards."""
        return mask_value(self.mask)


CardsLike: TypeAlias = "CardSet | str | Iterable[int]"
"""What every rules function accepts as a card set: a :class:`CardSet`, notation text, or an
iterable of cards (:class:`Card` or card numbers 0..51)."""


def parse_cards(text: str) -> CardSet:
    """Read a space-separated card set such as ``'As 2s 3s Kd'``.

    >>> len(parse_cards("As 2s 3s")), str(parse_cards("  ks  qs "))
    (3, 'Qs Ks')

    Raises:
        ValueError: a token is not a card, or a card appears twice.
    """
    mask = 0
    for token in text.split():
        bit = Card.parse(token).bit
        if mask & bit:
            raise ValueError(f"card {token!r} appears twice in {text!r}")
        mask |= bit
    return CardSet(mask)


def to_mask(cards: CardsLike) -> int:
    """Turn any card-set-like value into a mask.

    Raises:
        ValueError: a card is out of range or appears twice.
    """
    if isinstance(cards, CardSet):
        return cards.mask
    if isinstance(cards, str):
        return parse_cards(cards).mask
    mask = 0
    for card in cards:
        if not isinstance(card, int) or not 0 <= card < 52:
            raise ValueError(f"not a card: {card!r}")
        bit = 1 << card
        if mask & bit:
            raise ValueError(f"card {CARDS[card]} appears twice")
        mask |= bit
    return mask


def card_set(cards: CardsLike) -> CardSet:
    """Any card-set-like value as a :class:`CardSet`."""
    return cards if isinstance(cards, CardSet) else CardSet(to_mask(cards))


def format_cards(cards: CardsLike) -> str:
    """Notation of a card set, sorted by suit then rank (``'Ac 2c 3c Td'``).

    >>> format_cards([Card.parse("Kd"), Card.parse("2c")])
    '2c Kd'
    """
    return " ".join(str(card) for card in iter_cards(to_mask(cards)))


def deadwood_value(cards: CardsLike) -> int:
    """Sum of the deadwood values of the cards, melded or not.

    >>> deadwood_value("As Td Qh 7c")
    28
    """
    return mask_value(to_mask(cards))
