"""One hand of Gin: the upcard offer, turns, the end of the stock, knocks and the showdown.

Hands are dealt from stacked decks with ``dealer=0``, so seat 1 is the non-dealer and moves first.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    CardSet,
    Discard,
    DrawDiscard,
    DrawStock,
    HandEnd,
    HandOutcome,
    HandState,
    IllegalActionError,
    Knock,
    Meld,
    PassUpcard,
    Phase,
    RuleParams,
    TakeUpcard,
    parse_cards,
    shuffled_deck,
)
from tests.brute import brute_deadwood
from tests.decks import stacked_deck

DEFAULT = RuleParams()
DEALER, NON_DEALER = 0, 1

# Melds as 2c3c4c, 7d8d9d, JhQhKh with deadwood 5 (the 5s).
KNOCKER = "2c 3c 4c 7d 8d 9d Jh Qh Kh 5s"
# No meld; against KNOCKER, Ac and 5c fit the clubs run and Td the diamonds run (D = 49).
DEFENDER = "Ac 5c Td 2s 3h 6h 9c 9s Qs Qd"
# Three by three of 5-6-7: laid out as sets by default, declarable as runs.
BLOCK = "5c 6c 7c 5d 6d 7d 5h 6h 7h As"
BLOCK_DEFENDER = "4c 8d 5s 9d Kc Qd Jh Ts 9s 2h"


def card(text: str) -> Card:
    return Card.parse(text)


def deal(
    non_dealer: str, dealer: str, upcard: str, stock: str = "", params: RuleParams = DEFAULT
) -> HandState:
    return HandState.deal(stacked_deck(non_dealer, dealer, upcard, stock), dealer=0, params=params)


def both_pass_and_draw(state: HandState) -> Card:
    """Both players pass the upcard; the non-dealer draws from the stock; returns the card."""
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    event = state.apply(DRAW_STOCK)
    assert event.card is not None
    return event.card


def knock_on_first_draw(
    knocker: str, defender: str, drawn: str, knock: Knock, params: RuleParams = DEFAULT
) -> HandOutcome:
    """Seat 1 (non-dealer) holds ``knocker``, draws ``drawn`` from the stock and plays ``knock``."""
    named = parse_cards(knocker) | parse_cards(defender) | parse_cards(drawn)
    upcard = next(c for c in CardSet((1 << 52) - 1) if c not in named)
    state = deal(knocker, defender, str(upcard), drawn, params)
    assert both_pass_and_draw(state) == card(drawn)
    state.apply(knock)
    assert state.outcome is not None
    assert state.phase is Phase.OVER
    return state.outcome


def melds_of(outcome: HandOutcome) -> set[CardSet]:
    assert outcome.knocker_layout is not None
    return {meld.cards for meld in outcome.knocker_layout.melds}


def laid_off(outcome: HandOutcome) -> set[tuple[CardSet, CardSet]]:
    """``(cards laid off, the knocker meld they went onto)`` pairs."""
    assert outcome.defender_layout is not None
    return {(layoff.cards, layoff.onto.cards) for layoff in outcome.defender_layout.laid_off}


def cards_set(*texts: str) -> set[CardSet]:
    return {parse_cards(text) for text in texts}


def snapshot(state: HandState) -> tuple[object, ...]:
    return (
        state.phase,
        state.to_move,
        state.hands,
        state.stock,
        state.discard_pile,
        state.history,
        state.turns,
        state.taken_this_turn,
        state.took_from_pile(0),
        state.took_from_pile(1),
        state.outcome,
        state.legal_actions(),
    )


def assert_refused(state: HandState, action: Action, match: str) -> None:
    """``verify`` and ``apply`` both refuse ``action`` and leave the state as it was."""
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match=match):
        state.verify(action)
    assert snapshot(state) == before
    with pytest.raises(IllegalActionError, match=match):
        state.apply(action)
    assert snapshot(state) == before


# --- the upcard offer --------------------------------------------------------------------------


def test_deal_gives_ten_cards_each_from_the_stacked_deck() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc", "Kd Ks")
    assert state.hands[NON_DEALER] == parse_cards(KNOCKER)
    assert state.hands[DEALER] == parse_cards(DEFENDER)
    assert state.discard_pile == (card("Kc"),)
    assert state.stock[:2] == (card("Kd"), card("Ks"))
    assert state.stock_count == 31
    assert (state.phase, state.to_move) == (Phase.UPCARD, NON_DEALER)
    assert state.legal_actions() == [TAKE_UPCARD, PASS_UPCARD]


def test_non_dealer_takes_upcard_discards_then_dealer_plays_normal_turn() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    event = state.apply(TAKE_UPCARD)
    assert (event.seat, event.card) == (NON_DEALER, card("Kd"))
    assert (state.phase, state.to_move) == (Phase.DISCARD, NON_DEALER)
    assert state.hands[NON_DEALER] == parse_cards(KNOCKER + " Kd")
    assert list(state.discard_pile) == []
    assert state.took_from_pile(NON_DEALER) == (card("Kd"),)
    assert state.taken_this_turn == card("Kd")
    state.apply(Discard(card("5s")))
    assert (state.phase, state.to_move, state.turns) == (Phase.DRAW, DEALER, 1)
    assert state.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    assert state.discard_pile == (card("5s"),)
    assert state.apply(DRAW_DISCARD).card == card("5s")
    assert state.hands[DEALER] == parse_cards(DEFENDER + " 5s")
    assert state.stock_count == 31


def test_non_dealer_passes_dealer_takes_then_non_dealer_draws_normally() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    state.apply(PASS_UPCARD)
    assert (state.phase, state.to_move) == (Phase.UPCARD, DEALER)
    assert state.legal_actions() == [TAKE_UPCARD, PASS_UPCARD]
    assert state.apply(TAKE_UPCARD).card == card("Kd")
    assert (state.phase, state.to_move) == (Phase.DISCARD, DEALER)
    assert len(state.hands[DEALER]) == 11
    state.apply(Discard(card("Qs")))
    assert (state.phase, state.to_move, state.turns) == (Phase.DRAW, NON_DEALER, 1)
    assert state.legal_actions() == [DRAW_STOCK, DRAW_DISCARD]
    assert state.apply(DRAW_DISCARD).card == card("Qs")
    assert state.hands[NON_DEALER] == parse_cards(KNOCKER + " Qs")
    assert state.discard_pile == ()


def test_both_pass_non_dealer_must_draw_from_stock() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    assert (state.phase, state.to_move) == (Phase.DRAW, NON_DEALER)
    assert state.legal_actions() == [DRAW_STOCK]
    assert_refused(state, DRAW_DISCARD, "first draw must come from the stock")
    assert state.apply(DRAW_STOCK).card == card("Ks")
    assert state.discard_pile == (card("Kd"),)
    state.apply(Discard(card("Ks")))
    # From now on play is normal: the dealer may take the discard.
    assert (state.to_move, state.legal_actions()) == (DEALER, [DRAW_STOCK, DRAW_DISCARD])


def test_dealer_may_take_the_passed_upcard_and_knock_at_once() -> None:
    state = deal(DEFENDER, KNOCKER, "Kd")
    state.apply(PASS_UPCARD)
    state.apply(TAKE_UPCARD)
    assert Knock(card("5s")) in state.legal_actions()
    state.apply(Knock(card("5s")))
    outcome = state.outcome
    assert outcome is not None
    # Kept: 2c3c4c 7d8d9d JhQhKh Kd = 10 against 49 after the Ac 5c Td layoffs.
    assert (outcome.end, outcome.knocker, outcome.winner) == (HandEnd.KNOCK, DEALER, DEALER)
    assert outcome.points == 39
    assert outcome.turns == 1


# --- no re-discard -----------------------------------------------------------------------------


def test_taken_upcard_may_not_be_discarded_or_knocked_with() -> None:
    # Discarding the Kd would leave deadwood 5: only the re-discard rule forbids that knock.
    state = deal(KNOCKER, DEFENDER, "Kd")
    state.apply(TAKE_UPCARD)
    legal = state.legal_actions()
    assert Discard(card("Kd")) not in legal
    assert Knock(card("Kd")) not in legal
    assert [action for action in legal if isinstance(action, Knock)] == [Knock(card("5s"))]
    assert {action.card for action in legal if isinstance(action, Discard)} == set(
        parse_cards(KNOCKER)
    )
    assert_refused(state, Discard(card("Kd")), "Kd was just taken from the discard pile")
    assert_refused(state, Knock(card("Kd")), "Kd was just taken from the discard pile")


def test_card_drawn_from_pile_in_normal_turn_may_not_be_discarded() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    both_pass_and_draw(state)
    state.apply(Discard(card("Ks")))
    state.apply(DRAW_DISCARD)
    assert state.taken_this_turn == card("Ks")
    assert Discard(card("Ks")) not in state.legal_actions()
    assert_refused(state, Discard(card("Ks")), "Ks was just taken from the discard pile")
    state.apply(Discard(card("Qs")))
    # The next turn the card is an ordinary card of the hand again.
    drawn = state.apply(DRAW_STOCK).card
    assert drawn is not None
    state.apply(Discard(drawn))
    state.apply(DRAW_STOCK)
    assert Discard(card("Ks")) in state.legal_actions()


def test_rediscard_allowed_when_rule_is_off() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", params=RuleParams(no_rediscard=False))
    state.apply(TAKE_UPCARD)
    legal = state.legal_actions()
    assert Discard(card("Kd")) in legal
    assert Knock(card("Kd")) in legal
    state.verify(Discard(card("Kd")))
    state.apply(Discard(card("Kd")))
    assert state.discard_pile == (card("Kd"),)
    assert state.hands[NON_DEALER] == parse_cards(KNOCKER)
    assert (state.phase, state.to_move) == (Phase.DRAW, DEALER)


def test_knock_with_retaken_card_scores_when_rule_is_off() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", params=RuleParams(no_rediscard=False))
    state.apply(TAKE_UPCARD)
    state.apply(Knock(card("Kd")))
    assert state.outcome is not None
    assert (state.outcome.end, state.outcome.winner, state.outcome.points) == (
        HandEnd.KNOCK,
        NON_DEALER,
        44,
    )


# --- the end of the stock and the turn cap -----------------------------------------------------


def test_hand_is_drawn_when_a_discard_leaves_two_cards_in_stock() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc")
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    for turn in range(1, 30):
        drawn = state.apply(DRAW_STOCK).card
        assert drawn is not None
        state.apply(Discard(drawn))
        assert state.turns == turn
        assert state.stock_count == 31 - turn
        if turn < 29:
            assert state.phase is Phase.DRAW, f"ended early after turn {turn}"
    assert state.phase is Phase.OVER
    assert state.stock_count == 2
    outcome = state.outcome
    assert outcome is not None
    assert outcome.end is HandEnd.STOCK_EXHAUSTED
    assert outcome.end.drawn
    assert (outcome.winner, outcome.points, outcome.knocker) == (None, 0, None)
    assert (outcome.knocker_layout, outcome.defender_layout) == (None, None)
    assert outcome.turns == 29
    assert outcome.hands == (parse_cards(DEFENDER), parse_cards(KNOCKER))
    assert state.legal_actions() == []


def test_knock_after_drawing_stock_down_to_two_scores() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc")
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    for _ in range(28):
        drawn = state.apply(DRAW_STOCK).card
        assert drawn is not None
        state.apply(Discard(drawn))
    assert (state.phase, state.to_move, state.stock_count) == (Phase.DRAW, NON_DEALER, 3)
    drawn = state.apply(DRAW_STOCK).card
    assert drawn is not None
    assert state.stock_count == 2
    assert Knock(drawn) in state.legal_actions()
    state.apply(Knock(drawn))
    outcome = state.outcome
    assert outcome is not None
    assert (outcome.end, outcome.winner, outcome.knocker) == (HandEnd.KNOCK, NON_DEALER, NON_DEALER)
    assert outcome.points == 44
    assert outcome.turns == 29
    assert state.stock_count == 2


def test_turn_cap_ends_a_hand_of_traded_discards() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc", params=RuleParams(turn_cap=6))
    both_pass_and_draw(state)
    state.apply(Discard(card("5s")))
    for turn in range(2, 7):
        assert state.phase is Phase.DRAW, f"ended early after turn {turn - 1}"
        state.apply(DRAW_DISCARD)
        throw = next(a for a in state.legal_actions() if isinstance(a, Discard))
        state.apply(throw)
        assert state.turns == turn
    assert state.phase is Phase.OVER
    assert state.stock_count == 30
    outcome = state.outcome
    assert outcome is not None
    assert outcome.end is HandEnd.TURN_CAP
    assert outcome.end.drawn
    assert (outcome.winner, outcome.points, outcome.knocker, outcome.turns) == (None, 0, None, 6)


def test_knock_on_the_capped_turn_still_scores() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", params=RuleParams(turn_cap=1))
    state.apply(TAKE_UPCARD)
    state.apply(Knock(card("5s")))
    outcome = state.outcome
    assert outcome is not None
    # Kept: 2c3c4c 7d8d9d JhQhKh + Kd = 10 against 49 after layoffs.
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, NON_DEALER, 39)


# --- knocking and scoring ----------------------------------------------------------------------


def test_plain_knock_scores_defender_deadwood_minus_knocker_deadwood() -> None:
    outcome = knock_on_first_draw(KNOCKER, DEFENDER, "Kd", Knock(card("Kd")))
    assert (outcome.end, outcome.winner, outcome.knocker) == (HandEnd.KNOCK, NON_DEALER, NON_DEALER)
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 5
    assert outcome.knocker_layout.deadwood_cards == parse_cards("5s")
    assert melds_of(outcome) == cards_set("2c 3c 4c", "7d 8d 9d", "Jh Qh Kh")
    assert outcome.defender_layout is not None
    assert laid_off(outcome) == {
        (parse_cards("Ac 5c"), parse_cards("2c 3c 4c")),
        (parse_cards("Td"), parse_cards("7d 8d 9d")),
    }
    assert outcome.defender_layout.melds == ()
    assert outcome.defender_layout.deadwood_cards == parse_cards("2s 3h 6h 9c 9s Qs Qd")
    assert outcome.defender_layout.deadwood == 49
    assert outcome.points == 49 - 5
    assert outcome.hands == (parse_cards(DEFENDER), parse_cards(KNOCKER))


GIN = "2c 3c 4c 5c 7d 8d 9d Jh Qh Kh"
# Ac and 6c would extend the clubs run, 6d and Td the diamonds, Th the hearts: no layoffs on gin.
GIN_DEFENDER = "Ac 6c 6d Td Th 2s 3s 9h Qs Qd"


def test_gin_scores_bonus_plus_defender_deadwood_with_no_layoffs() -> None:
    outcome = knock_on_first_draw(GIN, GIN_DEFENDER, "Ks", Knock(card("Ks")))
    assert (outcome.end, outcome.winner, outcome.knocker) == (HandEnd.GIN, NON_DEALER, NON_DEALER)
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 0
    assert melds_of(outcome) == cards_set("2c 3c 4c 5c", "7d 8d 9d", "Jh Qh Kh")
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.laid_off == ()
    assert outcome.defender_layout.deadwood == 67
    assert outcome.defender_layout.deadwood_cards == parse_cards(GIN_DEFENDER)
    assert outcome.points == 25 + 67


def test_gin_bonus_twenty_variant() -> None:
    params = RuleParams(gin_bonus=20)
    outcome = knock_on_first_draw(GIN, GIN_DEFENDER, "Ks", Knock(card("Ks")), params)
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.GIN, NON_DEALER, 20 + 67)


def test_gin_scores_even_when_defender_has_no_deadwood() -> None:
    outcome = knock_on_first_draw(GIN, "Ac Ad Ah 2d 3d 4d 6s 7s 8s 9s", "Ks", Knock(card("Ks")))
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood == 0
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.GIN, NON_DEALER, 25)


# K = 8 (the 8s). The defender lays off Ac 5c 6c, 6d Td, 9h Th and keeps As 2s 3h = 6.
UNDERCUT_KNOCKER = "2c 3c 4c 7d 8d 9d Jh Qh Kh 8s"
UNDERCUT_DEFENDER = "Ac 5c 6c 6d Td 9h Th As 2s 3h"


def test_undercut_after_layoffs_scores_for_defender() -> None:
    outcome = knock_on_first_draw(UNDERCUT_KNOCKER, UNDERCUT_DEFENDER, "Kd", Knock(card("Kd")))
    assert (outcome.end, outcome.knocker, outcome.winner) == (
        HandEnd.UNDERCUT,
        NON_DEALER,
        DEALER,
    )
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 8
    assert laid_off(outcome) == {
        (parse_cards("Ac 5c 6c"), parse_cards("2c 3c 4c")),
        (parse_cards("6d Td"), parse_cards("7d 8d 9d")),
        (parse_cards("9h Th"), parse_cards("Jh Qh Kh")),
    }
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood_cards == parse_cards("As 2s 3h")
    assert outcome.defender_layout.deadwood == 6
    assert outcome.points == 10 + 8 - 6


def test_undercut_bonus_twenty_five_variant() -> None:
    params = RuleParams(undercut_bonus=25)
    outcome = knock_on_first_draw(
        UNDERCUT_KNOCKER, UNDERCUT_DEFENDER, "Kd", Knock(card("Kd")), params
    )
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.UNDERCUT, DEALER, 25 + 2)


def test_equal_deadwood_is_an_undercut_worth_the_bonus() -> None:
    # As the undercut hand, but the defender keeps 2s 3h 3s = 8 = K.
    outcome = knock_on_first_draw(
        UNDERCUT_KNOCKER, "Ac 5c 6c 6d Td 9h Th 2s 3h 3s", "Kd", Knock(card("Kd"))
    )
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood == 8
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.UNDERCUT, DEALER, 10)


def test_tie_goes_to_the_knocker_for_nothing_when_tie_is_not_an_undercut() -> None:
    params = RuleParams(undercut_on_tie=False)
    outcome = knock_on_first_draw(
        UNDERCUT_KNOCKER, "Ac 5c 6c 6d Td 9h Th 2s 3h 3s", "Kd", Knock(card("Kd")), params
    )
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, NON_DEALER, 0)


def test_knocks_offered_exactly_for_discards_leaving_ten_or_less() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc", "Kd")
    both_pass_and_draw(state)
    legal = state.legal_actions()
    # Throwing Kd leaves 5 (the 5s), throwing 5s leaves 10 (the Kd); any other throw breaks a meld.
    assert {action.card for action in legal if isinstance(action, Knock)} == {
        card("Kd"),
        card("5s"),
    }
    assert {action.card for action in legal if isinstance(action, Discard)} == set(
        parse_cards(KNOCKER + " Kd")
    )
    assert_refused(state, Knock(card("2c")), "deadwood after discarding 2c would be 22")
    assert_refused(state, Knock(card("Kh")), "over the limit of 10")
    state.apply(Knock(card("5s")))
    assert state.outcome is not None
    assert state.outcome.knocker_layout is not None
    assert state.outcome.knocker_layout.deadwood == 10
    assert state.outcome.end is HandEnd.KNOCK


def test_knock_limit_parameter_narrows_the_knocks() -> None:
    state = deal(KNOCKER, DEFENDER, "Kc", "Kd", params=RuleParams(knock_limit=5))
    both_pass_and_draw(state)
    assert [a for a in state.legal_actions() if isinstance(a, Knock)] == [Knock(card("Kd"))]
    assert_refused(state, Knock(card("5s")), "over the limit of 5")


# --- declared knock arrangements ---------------------------------------------------------------


def test_default_knock_layout_lays_the_block_as_sets() -> None:
    outcome = knock_on_first_draw(BLOCK, BLOCK_DEFENDER, "Ks", Knock(card("Ks")))
    assert melds_of(outcome) == cards_set("5c 5d 5h", "6c 6d 6h", "7c 7d 7h")
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 1
    # Only the 5s fits the sets.
    assert laid_off(outcome) == {(parse_cards("5s"), parse_cards("5c 5d 5h"))}
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood == 77 - 5
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, NON_DEALER, 71)


def test_declared_runs_are_used_as_declared_and_change_layoffs() -> None:
    runs = (parse_cards("5c 6c 7c"), Meld.of("5d 6d 7d"), parse_cards("5h 6h 7h"))
    outcome = knock_on_first_draw(BLOCK, BLOCK_DEFENDER, "Ks", Knock(card("Ks"), runs))
    assert melds_of(outcome) == cards_set("5c 6c 7c", "5d 6d 7d", "5h 6h 7h")
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 1
    # The 4c and the 8d 9d chain fit the runs; the 5s no longer fits anything.
    assert laid_off(outcome) == {
        (parse_cards("4c"), parse_cards("5c 6c 7c")),
        (parse_cards("8d 9d"), parse_cards("5d 6d 7d")),
    }
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood_cards == parse_cards("Kc Qd 2h Jh 5s 9s Ts")
    assert outcome.defender_layout.deadwood == 77 - 4 - 8 - 9
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, NON_DEALER, 55)


def test_declared_arrangement_with_deadwood_is_a_knock_not_gin() -> None:
    # The ten cards could go gin, but the knocker declares the 5c as deadwood.
    melds = (parse_cards("2c 3c 4c"), parse_cards("7d 8d 9d"), parse_cards("Jh Qh Kh"))
    outcome = knock_on_first_draw(GIN, GIN_DEFENDER, "Ks", Knock(card("Ks"), melds))
    assert outcome.knocker_layout is not None
    assert outcome.knocker_layout.deadwood == 5
    assert outcome.knocker_layout.deadwood_cards == parse_cards("5c")
    # Not gin, so the defender lays off: Ac onto the clubs, 6d Td onto the diamonds, 9h Th
    # onto the hearts (the 6c cannot follow the 4c: the 5c is deadwood). Left: 6c 2s 3s Qs Qd.
    assert laid_off(outcome) == {
        (parse_cards("Ac"), parse_cards("2c 3c 4c")),
        (parse_cards("6d Td"), parse_cards("7d 8d 9d")),
        (parse_cards("9h Th"), parse_cards("Jh Qh Kh")),
    }
    assert outcome.defender_layout is not None
    assert outcome.defender_layout.deadwood_cards == parse_cards("6c 2s 3s Qs Qd")
    assert outcome.defender_layout.deadwood == 31
    assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, NON_DEALER, 31 - 5)


@pytest.mark.parametrize(
    ("knock_card", "melds", "match"),
    [
        ("Ks", ("5c 6c 7d", "5d 6d 7c", "5h 6h 7h"), "not a meld"),
        ("Ks", ("5c 6c 7c", "5c 5d 5h", "6d 6h 6c"), "already used"),
        ("Ks", ("5c 6c 7c 8c", "5d 6d 7d", "5h 6h 7h"), "not in the hand: 8c"),
        ("7h", ("5c 6c 7c", "5d 6d 7d", "5h 6h 7h"), "not in the hand: 7h"),
        ("Ks", ("5c 6c 7c", "5d 6d 7d"), "would be 19"),
        ("Ks", (), "would be 55"),
    ],
    ids=["not-a-meld", "card-twice", "card-not-held", "knock-discard", "over-limit", "no-melds"],
)
def test_illegal_declared_arrangement_is_refused_and_changes_nothing(
    knock_card: str, melds: tuple[str, ...], match: str
) -> None:
    state = deal(BLOCK, BLOCK_DEFENDER, "Ah", "Ks")
    both_pass_and_draw(state)
    declared = tuple(parse_cards(meld) for meld in melds)
    assert_refused(state, Knock(card(knock_card), declared), match)
    assert (state.phase, state.to_move, len(state.hands[NON_DEALER])) == (
        Phase.DISCARD,
        NON_DEALER,
        11,
    )
    # The same knock without a declaration is still there to play.
    state.apply(Knock(card("Ks")))
    assert state.outcome is not None
    assert state.outcome.points == 71


# --- actions out of turn -----------------------------------------------------------------------


def test_wrong_phase_actions_are_refused_without_change() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    action: Action
    for action in (Discard(card("5s")), Knock(card("5s")), DRAW_STOCK, DRAW_DISCARD):
        assert_refused(state, action, "must take or pass the upcard")
    state.apply(TAKE_UPCARD)
    for action in (DRAW_STOCK, DRAW_DISCARD, TAKE_UPCARD, PASS_UPCARD):
        assert_refused(state, action, "must discard a card or knock")
    assert_refused(state, Discard(card("Qs")), "Qs is not in seat 1's hand")
    assert_refused(state, Knock(card("Qs")), "Qs is not in seat 1's hand")
    state.apply(Discard(card("5s")))
    for action in (Discard(card("Qs")), Knock(card("Qs")), TAKE_UPCARD, PASS_UPCARD):
        assert_refused(state, action, "must draw from the stock or the discard pile")
    state.apply(DRAW_STOCK)
    state.apply(Discard(card("Ks")))
    state.apply(DRAW_DISCARD)
    state.apply(Knock(card("Kd")))
    assert state.is_over
    assert state.legal_actions() == []
    for action in (
        TAKE_UPCARD,
        PASS_UPCARD,
        DRAW_STOCK,
        DRAW_DISCARD,
        Discard(card("2c")),
        Knock(card("2c")),
    ):
        assert_refused(state, action, "the hand is over")


def test_wrong_seat_card_is_refused() -> None:
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    both_pass_and_draw(state)
    # The Ac is the dealer's, not the non-dealer's.
    assert_refused(state, Discard(card("Ac")), "Ac is not in seat 1's hand")


# --- properties of random play -----------------------------------------------------------------

FULL_DECK = (1 << 52) - 1
PARAMS_CHOICES = (
    DEFAULT,
    RuleParams(turn_cap=12),
    RuleParams(no_rediscard=False, turn_cap=40),
    RuleParams(knock_limit=0),
)


def replay(state: HandState) -> HandState:
    """A fresh copy of a hand: the same deal with the same actions replayed."""
    copy = HandState.deal(state.deck, state.dealer, state.params)
    for event in state.history:
        copy.apply(event.action)
    assert copy.history == state.history
    return copy


def check_invariants(state: HandState) -> None:
    hands = state.hands
    parts = [hands[0].mask, hands[1].mask]
    parts += [1 << c for c in state.stock] + [1 << c for c in state.discard_pile]
    union = 0
    for part in parts:
        assert union & part == 0, "a card is in two places"
        union |= part
    assert union == FULL_DECK, "cards went missing"
    sizes = [len(hands[0]), len(hands[1])]
    if state.phase is Phase.DISCARD:
        assert sizes[state.to_move] == 11
        assert sizes[1 - state.to_move] == 10
    else:
        assert sizes == [10, 10]
    assert state.turns <= state.params.turn_cap


def check_discard_phase(state: HandState, legal: list[Action]) -> None:
    """Discards and knocks listed match an independent count of every throw's deadwood."""
    hand = state.hands[state.to_move]
    taken = state.taken_this_turn
    throwable = {c for c in hand if not (state.params.no_rediscard and c == taken)}
    assert {a.card for a in legal if isinstance(a, Discard)} == throwable
    knockable = {
        c for c in throwable if brute_deadwood(hand.mask & ~(1 << c)) <= state.params.knock_limit
    }
    assert {a.card for a in legal if isinstance(a, Knock)} == knockable


def check_outcome(state: HandState) -> None:
    outcome = state.outcome
    assert outcome is not None
    assert outcome.hands == state.hands
    assert outcome.turns == state.turns
    if outcome.end.drawn:
        assert (outcome.winner, outcome.points, outcome.knocker) == (None, 0, None)
        if outcome.end is HandEnd.STOCK_EXHAUSTED:
            assert state.stock_count == state.params.stock_end
        else:
            assert state.turns == state.params.turn_cap
        return
    knocker = outcome.knocker
    assert knocker is not None
    knock_layout, defence = outcome.knocker_layout, outcome.defender_layout
    assert knock_layout is not None
    assert defence is not None
    assert knock_layout.cards == outcome.hands[knocker]
    assert knock_layout.deadwood <= state.params.knock_limit
    defender_cards = defence.unmatched
    for meld in defence.melds:
        defender_cards |= meld.mask
    for layoff in defence.laid_off:
        defender_cards |= layoff.cards.mask
    assert defender_cards == outcome.hands[1 - knocker].mask
    k, d = knock_layout.deadwood, defence.deadwood
    params = state.params
    if k == 0:
        expected = (HandEnd.GIN, knocker, params.gin_bonus + d)
        assert (outcome.end, outcome.winner, outcome.points) == expected
        assert defence.laid_off == ()
    elif k < d:
        assert (outcome.end, outcome.winner, outcome.points) == (HandEnd.KNOCK, knocker, d - k)
    else:
        expected = (HandEnd.UNDERCUT, 1 - knocker, params.undercut_bonus + k - d)
        assert (outcome.end, outcome.winner, outcome.points) == expected


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    deck_seed=st.integers(min_value=0, max_value=2**32),
    policy_seed=st.integers(min_value=0, max_value=2**32),
    dealer=st.sampled_from([0, 1]),
    params=st.sampled_from(PARAMS_CHOICES),
)
def test_random_legal_play_keeps_the_invariants(
    deck_seed: int, policy_seed: int, dealer: int, params: RuleParams
) -> None:
    rng = random.Random(policy_seed)
    state = HandState.deal(shuffled_deck(deck_seed, 0), dealer=dealer, params=params)
    steps = 0
    while not state.is_over:
        check_invariants(state)
        legal = state.legal_actions()
        assert legal, f"no legal action in {state!r}"
        if state.phase is Phase.DISCARD:
            check_discard_phase(state, legal)
        for action in legal:
            state.verify(action)
            if isinstance(action, Knock):
                # Play each offered knock on a replayed copy: it must go through and score.
                other = replay(state)
                other.apply(action)
                check_outcome(other)
        # Knocks are listed late and are rare; favour playing on so hands run long.
        plays_on = [a for a in legal if not isinstance(a, Knock)]
        replay(state).apply(plays_on[rng.randrange(len(plays_on))])  # another one, on a copy
        pool = legal if rng.random() < 0.2 else plays_on
        state.apply(pool[rng.randrange(len(pool))])
        steps += 1
        assert steps <= 2 * params.turn_cap + 2, "the hand does not end"
    check_invariants(state)
    check_outcome(state)
    assert state.legal_actions() == []


def test_action_types_cover_each_phase() -> None:
    """The phase decides which action types legal_actions offers."""
    state = deal(KNOCKER, DEFENDER, "Kd", "Ks")
    assert {type(a) for a in state.legal_actions()} == {TakeUpcard, PassUpcard}
    both_pass_and_draw(state)
    assert {type(a) for a in state.legal_actions()} == {Discard, Knock}
    state.apply(Discard(card("Ks")))
    assert {type(a) for a in state.legal_actions()} == {DrawStock, DrawDiscard}
