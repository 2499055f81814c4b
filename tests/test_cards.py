"""Card notation, card sets and their errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import Card, CardSet, deadwood_value, format_cards, parse_cards
from referee.rules.cards import CARDS, to_mask


def test_notation_of_every_card_round_trips() -> None:
    for card in CARDS:
        assert Card.parse(str(card)) == card
    assert [str(card) for card in CARDS[:3]] == ["Ac", "2c", "3c"]
    assert str(CARDS[51]) == "Ks"


def test_card_values_are_ace_low_and_pictures_ten() -> None:
    assert [Card.parse(text).value for text in ("Ah", "2h", "9h", "Th", "Jh", "Qh", "Kh")] == [
        1,
        2,
        9,
        10,
        10,
        10,
        10,
    ]


def test_parse_accepts_lowercase_ranks_and_extra_spaces() -> None:
    assert parse_cards("  as  td ") == parse_cards("As Td")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1s", "rank must be one of"),
        ("Ax", "suit must be one of"),
        ("10h", "a card is a rank then a suit"),
        ("As As", "appears twice"),
        ("A", "a card is a rank then a suit"),
    ],
)
def test_bad_notation_is_a_clear_value_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_cards(text)


def test_card_set_operations() -> None:
    hand = parse_cards("7c 7d 7h")
    assert Card.parse("7d") in hand
    assert Card.parse("7s") not in hand
    assert 99 not in hand
    assert len(hand | parse_cards("8c")) == 4
    assert hand - parse_cards("7d") == parse_cards("7c 7h")
    assert hand & parse_cards("7h 8h") == parse_cards("7h")
    assert parse_cards("7c") <= hand
    with pytest.raises(AttributeError):
        setattr(hand, "mask", 0)  # noqa: B010


def test_to_mask_refuses_duplicates_and_non_cards() -> None:
    with pytest.raises(ValueError, match="appears twice"):
        to_mask([3, 3])
    with pytest.raises(ValueError, match="not a card"):
        to_mask([52])
    with pytest.raises(ValueError, match="out of range"):
        CardSet(1 << 52)


@given(st.sets(st.integers(0, 51)))
def test_format_then_parse_is_identity(cards: set[int]) -> None:
    text = format_cards(cards)
    assert parse_cards(text).mask == sum(1 << card for card in cards)
    assert deadwood_value(text) == sum(CARDS[card].value for card in cards)
