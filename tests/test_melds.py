"""Melds, minimum deadwood, best discards and the referee's knock layout."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    Meld,
    MeldKind,
    arrangement_of,
    best_discards,
    knock_layout,
    min_deadwood,
    parse_cards,
)
from referee.rules.melds import MELDS_BY_MASK, deadwood_of_mask, optimal_meld_groups
from tests.brute import brute_deadwood


def melds_of(text: str) -> list[str]:
    return [str(meld) for meld in min_deadwood(text).melds]


def test_meld_table_has_every_set_and_run() -> None:
    kinds = [meld.kind for meld in MELDS_BY_MASK.values()]
    assert kinds.count(MeldKind.SET) == 13 * 5
    assert kinds.count(MeldKind.RUN) == 4 * sum(range(1, 12))


@pytest.mark.parametrize(
    "text",
    ["As 2s 3s", "Jd Qd Kd", "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh", "7c 7d 7h", "7c 7d 7h 7s"],
)
def test_legal_melds(text: str) -> None:
    assert Meld.of(text).mask == parse_cards(text).mask


@pytest.mark.parametrize("text", ["Qs Ks As", "Ks As 2s", "As 2s", "7c 7d", "2c 3d 4c", "4c 5c 7c"])
def test_no_wrap_and_no_short_or_mixed_melds(text: str) -> None:
    with pytest.raises(ValueError, match="not a meld"):
        Meld.of(text)


def test_ace_low_runs_and_no_wrap_in_deadwood() -> None:
    assert min_deadwood("As 2s 3s").deadwood == 0
    assert min_deadwood("Qs Ks As").deadwood == 21
    assert min_deadwood("Ks As 2s").deadwood == 13


def test_card_wanted_by_a_set_and_a_run_goes_where_deadwood_is_least() -> None:
    # 7h completes the set 7c 7d 7h and the run 7h 8h 9h: the run leaves 34, the set 37.
    best = min_deadwood("7c 7d 7h 8h 9h Kc Kd")
    assert best.deadwood == 34
    assert melds_of("7c 7d 7h 8h 9h Kc Kd") == ["7h 8h 9h"]
    # With 9h gone, the set wins.
    assert melds_of("7c 7d 7h 8h Kc Kd") == ["7c 7d 7h"]


def test_four_of_a_kind_split_into_runs() -> None:
    # Four sixes, three of them with suit neighbours: three runs beat any set of sixes.
    best = min_deadwood("4c 5c 6c 6d 7d 8d 6h 7h 8h 6s")
    assert best.deadwood == 6
    assert all(meld.kind is MeldKind.RUN for meld in best.melds)
    # A three-card set taken out of four leaves the fourth six for a run.
    best = min_deadwood("6c 6d 6h 6s 7s 8s")
    assert best.deadwood == 0
    assert sorted(melds_of("6c 6d 6h 6s 7s 8s")) == ["6c 6d 6h", "6s 7s 8s"]


def test_long_run_splits_to_feed_a_set() -> None:
    # 3s..9s is one run; splitting 3s-5s / 7s-9s frees 6s for the six set.
    best = min_deadwood("3s 4s 5s 6s 7s 8s 9s 6c 6d Kh")
    assert best.deadwood == 10
    assert sorted(melds_of("3s 4s 5s 6s 7s 8s 9s 6c 6d Kh")) == ["3s 4s 5s", "6c 6d 6s", "7s 8s 9s"]


def test_every_arrangement_accounts_for_all_cards() -> None:
    best = min_deadwood("As 2s 3s 4s 7c 7d 7h 7s Kd Qh")
    assert best.cards == parse_cards("As 2s 3s 4s 7c 7d 7h 7s Kd Qh")
    assert best.deadwood_cards == parse_cards("Kd Qh")
    assert best.deadwood == 20


def test_best_discards_is_the_true_minimum() -> None:
    # Meld-first then throw-the-biggest gives 1 here; throwing 3h is gin.
    least, discards = best_discards("3c 6s 3s 7d Ac 4s 3h 9d 8d 2c 5s")
    assert (least, [str(card) for card in discards]) == (0, ["3h"])


def test_best_discards_lists_every_tied_discard() -> None:
    least, discards = best_discards("Ac 2c 3c 4d 5d 6d 7h 8h 9h Kc Ks")
    assert least == 10
    assert {str(card) for card in discards} == {"Kc", "Ks"}


def test_best_discards_needs_eleven_cards() -> None:
    with pytest.raises(ValueError, match="11 cards"):
        best_discards("As 2s 3s")


def test_declared_arrangement_is_checked() -> None:
    hand = "7c 7d 7h 8h 9h Kc Kd"
    assert arrangement_of(hand, ["7c 7d 7h"]).deadwood == 37
    with pytest.raises(ValueError, match="not a meld"):
        arrangement_of(hand, ["7c 8h 9h"])
    with pytest.raises(ValueError, match="already used"):
        arrangement_of(hand, ["7c 7d 7h", "7h 8h 9h"])
    with pytest.raises(ValueError, match="not in the hand"):
        arrangement_of(hand, ["7s 7d 7h"])


def test_knock_layout_offers_fewest_layoff_spots() -> None:
    # Three sets leave three spots (the spades), three runs leave six.
    layout = knock_layout("5c 6c 7c 5d 6d 7d 5h 6h 7h Ks")
    assert layout.deadwood == 10
    assert all(meld.kind is MeldKind.SET for meld in layout.melds)
    # With 5s 6s 7s in hand too, runs cover everything and offer nothing to lay off... sets
    # would leave spots; the layout never trades deadwood for fewer spots.
    assert knock_layout("5c 6c 7c 5d 6d 7d 5h 6h 7h 9s").deadwood == 9


hands = st.sets(st.integers(0, 51), min_size=0, max_size=11)
# Meld-rich hands: a few ranks, a few suits.
rich_hands = st.sets(
    st.sampled_from([suit * 13 + rank for suit in range(4) for rank in range(3, 9)]),
    min_size=6,
    max_size=11,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(hands, rich_hands))
def test_min_deadwood_equals_brute_force(cards: set[int]) -> None:
    mask = sum(1 << card for card in cards)
    expected = brute_deadwood(mask)
    assert deadwood_of_mask(mask) == expected
    best = min_deadwood(cards)
    assert best.deadwood == expected
    assert best.cards.mask == mask
    for meld in best.melds:
        assert Meld.of(meld.cards) == meld
    assert knock_layout(cards).deadwood == expected
    assert all(
        sum(MELDS_BY_MASK[m].mask for m in g) & ~mask == 0 for g in optimal_meld_groups(mask)
    )


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.sets(st.integers(0, 51), min_size=11, max_size=11),
        rich_hands.filter(lambda cards: len(cards) == 11),
    )
)
def test_best_discards_equals_brute_force(cards: set[int]) -> None:
    mask = sum(1 << card for card in cards)
    values = {card: brute_deadwood(mask & ~(1 << card)) for card in cards}
    least, discards = best_discards(cards)
    assert least == min(values.values())
    assert sorted(discards) == sorted(card for card, value in values.items() if value == least)
