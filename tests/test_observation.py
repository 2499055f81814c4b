"""What a seat sees: its own view and nothing it may not know."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    Action,
    HandState,
    Knock,
    Phase,
    SeriesState,
    observation,
    shuffled_deck,
)


def play_random(state: HandState, rng: random.Random, steps: int) -> list[Action]:
    actions: list[Action] = []
    for _ in range(steps):
        if state.is_over:
            break
        # No knocks: a showdown reveals both hands, so nothing is hidden after one.
        legal = [action for action in state.legal_actions() if not isinstance(action, Knock)]
        action = legal[rng.randrange(len(legal))]
        state.apply(action)
        actions.append(action)
    return actions


def unseen_by(state: HandState, seat: int) -> int:
    """Cards the seat cannot know: the opponent's cards not taken from the pile, and the stock."""
    view = observation(state, seat)
    opponent = state.hands[1 - seat].mask & ~view.opponent_known.mask
    return opponent | sum(1 << card for card in state.stock)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 2**32), st.integers(0, 120), st.integers(0, 1))
def test_observation_ignores_what_the_seat_cannot_see(
    seed: int, shuffle_seed: int, steps: int, seat: int
) -> None:
    rng = random.Random(seed)
    deck = shuffled_deck(seed, 0)
    state = HandState.deal(deck, dealer=seed % 2)
    actions = play_random(state, rng, steps)
    hidden = unseen_by(state, seat)
    # Permute the hidden cards among their deck positions and replay the same actions.
    positions = [index for index, card in enumerate(deck) if hidden >> card & 1]
    cards = [deck[index] for index in positions]
    random.Random(shuffle_seed).shuffle(cards)
    other_deck = list(deck)
    for index, card in zip(positions, cards, strict=True):
        other_deck[index] = card
    other = HandState.deal(other_deck, dealer=seed % 2)
    for action in actions:
        other.apply(action)
    assert observation(other, seat) == observation(state, seat)


def test_opponent_stock_draws_are_hidden_and_own_draws_are_shown() -> None:
    state = HandState.deal(shuffled_deck(9, 0), dealer=0)
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    drawn = state.apply(DRAW_STOCK)  # seat 1 draws from the stock
    assert drawn.card is not None
    own = observation(state, 1).history[-1]
    theirs = observation(state, 0).history[-1]
    assert own.card == drawn.card
    assert theirs.card is None
    assert drawn.card in observation(state, 1).hand
    assert drawn.card not in observation(state, 0).hand


def test_cards_taken_from_the_pile_are_known_until_thrown() -> None:
    state = HandState.deal(shuffled_deck(4, 0), dealer=0)
    upcard = state.discard_pile[-1]
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    state.apply(DRAW_STOCK)
    state.apply(state.legal_actions()[0])  # seat 1 discards
    top = state.discard_pile[-1]
    state.apply(DRAW_DISCARD)  # seat 0 takes seat 1's discard
    view = observation(state, 1)
    assert view.opponent_took == (top,)
    assert top in view.opponent_known
    assert observation(state, 0).taken_this_turn == top
    assert observation(state, 1).taken_this_turn is None
    thrown = next(card for card in state.hands[0] if card != top)
    state.apply(DISCARDS[thrown])
    assert top in observation(state, 1).opponent_known
    assert upcard in observation(state, 1).discard_pile


def test_series_observation_carries_the_scores() -> None:
    series = SeriesState(seed=12)
    view = observation(series, 1)
    assert view.seat == 1
    assert view.phase is Phase.UPCARD
    assert view.hand_number == 0
    assert view.totals == ((0, 0, 0), (0, 0, 0))
    assert len(view.hand) == 10
    assert view.opponent_hand_size == 10
    assert view.stock_count == 31


def test_observation_fields_in_order() -> None:
    """``hand_observation`` builds the view positionally: each field, by name, is what it says,
    at many points of a played series (both seats, every phase, scores that are not zero)."""
    series = SeriesState(seed=31)
    rng = random.Random(31)
    checked = 0
    while not series.is_over and (checked < 600 or not any(series.score.totals(0))):
        hand = series.hand
        for seat in (0, 1):
            view = observation(series, seat)
            opponent = 1 - seat
            assert view.seat == seat
            assert view.phase is hand.phase
            assert view.to_move == hand.to_move
            assert view.dealer == hand.dealer
            assert view.hand == hand.hands[seat]
            assert view.discard_pile == hand.discard_pile
            assert view.stock_count == hand.stock_count
            assert view.opponent_took == hand.took_from_pile(opponent)
            assert view.opponent_known == hand.known_cards(opponent)
            assert view.opponent_hand_size == len(hand.hands[opponent])
            expected_taken = hand.taken_this_turn if hand.to_move == seat else None
            assert view.taken_this_turn == expected_taken
            assert view.turns == hand.turns
            assert view.history == hand.seen_history(seat)
            assert view.outcome is None
            assert view.params is series.params
            assert view.hand_number == series.hand_number
            assert view.totals == (series.score.totals(0), series.score.totals(1))
            assert view.game_winners == series.score.game_winners
            checked += 1
        legal = series.legal_actions()
        knocks = [action for action in legal if isinstance(action, Knock)]
        series.apply(knocks[0] if knocks else legal[rng.randrange(len(legal))])
    assert checked >= 600
    assert series.hand_number > 0
    assert any(series.score.totals(0))


def test_observation_of_an_ended_hand_shows_its_outcome() -> None:
    """The ``outcome`` field (never set during a series, whose next hand is dealt at once): after
    a knock both hands are shown; after a drawn hand only the seat's own."""
    ended = {}
    for seed in range(40):
        hand = HandState.deal(shuffled_deck(seed, 0), seed % 2)
        rng = random.Random(seed)
        while not hand.is_over:
            legal = hand.legal_actions()
            knocks = [action for action in legal if isinstance(action, Knock)]
            hand.apply(knocks[0] if knocks and seed % 3 else legal[rng.randrange(len(legal))])
        assert hand.outcome is not None
        ended[hand.outcome.end.drawn] = hand
    assert set(ended) == {True, False}
    for drawn, hand in ended.items():
        outcome = hand.outcome
        assert outcome is not None
        for seat in (0, 1):
            view = observation(hand, seat)
            assert view.outcome is not None
            assert view.outcome.end is outcome.end
            assert view.outcome.hands[seat] == outcome.hands[seat]
            assert bool(view.outcome.hands[1 - seat]) is not drawn
