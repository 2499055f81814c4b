"""The strong sample policy: legal play over whole series, valid knock layouts, determinism."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from referee.rules import (
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    CardSet,
    Discard,
    GreedyPolicy,
    HandEnd,
    HandState,
    Knock,
    MeldKind,
    Observation,
    Phase,
    Policy,
    RandomPolicy,
    arrangement_of,
    observation,
    parse_cards,
    play_series,
)
from sample_bots.strong.strategy import StrongPolicy, neighbours, read_board


class Watched:
    """Checks every action of a policy against the legal list, and keeps its declared knocks.

    ``play_series`` raises on an illegal action too; checking here names the decision.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.knocks: list[tuple[Observation, Knock]] = []
        self.decisions = 0

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        action = self.policy(view, legal)
        self.decisions += 1
        if isinstance(action, Knock) and action.melds is not None:
            assert Knock(action.card) in legal, f"knock with an illegal discard: {action}"
            self.knocks.append((view, action))
        else:
            assert action in legal, f"illegal {action} among {[str(a) for a in legal]}"
        return action


def opponent(name: str, seed: int) -> Policy:
    """A fresh opponent for one series."""
    return GreedyPolicy(knock_at=10) if name == "greedy" else RandomPolicy(seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("strong_seat", [0, 1])
@pytest.mark.parametrize("other", ["greedy", "random"])
def test_strong_plays_whole_series_legally(seed: int, strong_seat: int, other: str) -> None:
    strong = Watched(StrongPolicy())
    rival = opponent(other, seed)
    seats = (strong, rival) if strong_seat == 0 else (rival, strong)
    result = play_series(seats[0], seats[1], 500 + seed)
    assert strong.decisions > 0
    assert strong.knocks, "a whole series without a single knock by the strong policy"
    for view, knock in strong.knocks:
        assert knock.melds is not None
        kept = view.hand - CardSet.of_mask(1 << knock.card)
        layout = arrangement_of(kept, knock.melds)
        assert layout.deadwood <= view.params.knock_limit
    if other == "random":
        assert result.winner == strong_seat


def transcript(seed: int) -> list[str]:
    """Every action of a strong-vs-strong series, as text."""
    moves: list[str] = []

    def recorder(policy: StrongPolicy) -> Policy:
        def play(view: Observation, legal: Sequence[Action]) -> Action:
            action = policy(view, legal)
            moves.append(f"{view.seat}: {action}")
            return action

        return play

    play_series(recorder(StrongPolicy()), recorder(StrongPolicy()), seed)
    return moves


def test_strong_is_deterministic() -> None:
    first = transcript(3)
    assert len(first) > 20
    assert first == transcript(3)


def test_a_policy_instance_depends_only_on_what_it_sees() -> None:
    """The same view gets the same answer from a fresh instance and from a used one."""
    used = StrongPolicy()
    play_series(used, GreedyPolicy(), 8)
    state = HandState.deal(deck_for("Ac 2c 3c 4d 5d 6d 7h 8h Kc Ks", "9h"), dealer=1)
    view = observation(state, 0)
    legal = state.legal_actions()
    assert used(view, legal) == StrongPolicy()(view, legal)


def deck_for(hand: str, upcard: str) -> list[int]:
    """A deck (dealing order) that deals ``hand`` to the non-dealer and turns up ``upcard``."""
    mine = [int(card) for card in parse_cards(hand)]
    up = int(next(iter(parse_cards(upcard))))
    rest = [card for card in range(52) if card not in mine and card != up]
    deck: list[int] = []
    for index in range(20):
        deck.append(mine[index // 2] if index % 2 == 0 else rest.pop())
    return [*deck, up, *rest]


def after_taking_upcard(hand: str, upcard: str) -> HandState:
    """The non-dealer (seat 0) holds ``hand`` and has just taken ``upcard``."""
    state = HandState.deal(deck_for(hand, upcard), dealer=1)
    assert state.hands[0] == parse_cards(hand)
    state.apply(TAKE_UPCARD)
    assert state.phase is Phase.DISCARD
    return state


def test_strong_takes_a_gin_card_and_knocks_gin() -> None:
    state = HandState.deal(deck_for("Ac 2c 3c 4d 5d 6d 7h 8h 9h Ks", "Th"), dealer=1)
    take = StrongPolicy()(observation(state, 0), state.legal_actions())
    assert take == TAKE_UPCARD
    state.apply(take)
    action = StrongPolicy()(observation(state, 0), state.legal_actions())
    assert isinstance(action, Knock)
    state.apply(action)
    assert state.outcome is not None
    assert state.outcome.end is HandEnd.GIN


def knock_in(state: HandState, dead: str = "") -> Knock:
    """The strong policy's knock from ``state``, seeing ``dead`` cards in the discard pile too."""
    view = observation(state, 0)
    pile = tuple(parse_cards(dead)) + view.discard_pile if dead else view.discard_pile
    view = dataclasses.replace(view, discard_pile=pile)
    action = StrongPolicy()(view, state.legal_actions())
    assert isinstance(action, Knock)
    assert action.melds is not None
    state.apply(action)  # the engine accepts the declared layout
    return action


def meld_kinds(knock: Knock) -> set[MeldKind]:
    """The kinds of the melds a knock declared."""
    assert knock.melds is not None
    return {arrangement_of(meld, [meld]).melds[0].kind for meld in knock.melds}


def test_knock_layout_offers_the_fewest_live_layoffs() -> None:
    block = "5c 6c 7c 5d 6d 7d 5h 6h 7h Ks"
    # Nothing is dead: three sets leave one spot each (the spades), three runs two each.
    assert meld_kinds(knock_in(after_taking_upcard(block, "Kd"))) == {MeldKind.SET}
    # Every card that would extend the runs is dead: the runs now leave nothing to lay off.
    dead = "4c 8c 4d 8d 4h 8h"
    assert meld_kinds(knock_in(after_taking_upcard(block, "Kd"), dead)) == {MeldKind.RUN}


def test_neighbours_are_the_cards_that_could_share_a_meld() -> None:
    rng = random.Random(7)
    for _ in range(200):
        mask = sum(1 << card for card in rng.sample(range(52), rng.randint(1, 11)))
        expected = 0
        for card in range(52):
            if mask >> card & 1:
                continue
            for other in range(52):
                if not mask >> other & 1:
                    continue
                same_rank = card % 13 == other % 13
                close_in_suit = card // 13 == other // 13 and abs(card % 13 - other % 13) <= 2
                if same_rank or close_in_suit:
                    expected |= 1 << card
        assert neighbours(mask) == expected


def test_the_board_records_what_the_opponent_declined_and_threw() -> None:
    # Seat 0 (non-dealer) passes the upcard, seat 1 passes too; seat 0 draws and throws, seat 1
    # leaves that card for the stock and throws another: seat 0 sees both as unwanted.
    state = HandState.deal(deck_for("Ac 2c 3c 4d 5d 6d 7h 8h Kc Ks", "9s"), dealer=1)
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    state.apply(DRAW_STOCK)
    state.apply(Discard(Card.parse("Ks")))
    state.apply(DRAW_STOCK)
    thrown = next(iter(state.hands[1]))
    state.apply(Discard(thrown))
    board = read_board(observation(state, 0))
    assert board.rejected == Card.parse("9s").bit | Card.parse("Ks").bit | thrown.bit
    assert board.opp_draws == 1
    assert board.opp_known == 0
    assert board.unseen.bit_count() == 52 - 10 - 3  # all but our 10 cards and the 3 in the pile
