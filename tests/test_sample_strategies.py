"""The strong sample policy: legal play over whole series, valid knock layouts, determinism."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from referee.rules import (
    Action,
    GreedyPolicy,
    HandState,
    Knock,
    Observation,
    Phase,
    Policy,
    RandomPolicy,
    arrangement_of,
    parse_cards,
    play_series,
)
from referee.rules.observe import hand_observation
from sample_bots.strong.strategy import StrongPolicy

SEEDS = range(3)


class Watched:
    """A policy wrapper that checks every action against the legal list, and keeps the knocks.

    ``play_series`` already raises on an illegal action; checking here too names the decision.
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


def opponents() -> list[tuple[str, Policy]]:
    """The opponents the strong policy is checked against."""
    return [("greedy", GreedyPolicy(knock_at=10)), ("random", RandomPolicy(seed=5))]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("strong_seat", [0, 1])
@pytest.mark.parametrize("opponent", ["greedy", "random"])
def test_strong_plays_whole_series_legally(seed: int, strong_seat: int, opponent: str) -> None:
    other: Policy = GreedyPolicy() if opponent == "greedy" else RandomPolicy(seed=seed)
    strong = Watched(StrongPolicy())
    seats: tuple[Policy, Policy] = (strong, other) if strong_seat == 0 else (other, strong)
    result = play_series(seats[0], seats[1], seed)
    assert result.winner in (0, 1, None)
    assert strong.decisions > 0
    for view, knock in strong.knocks:
        assert knock.melds is not None
        layout = arrangement_of(view.hand - parse_cards(str(knock.card)), knock.melds)
        assert layout.deadwood <= view.params.knock_limit
        assert len(layout.cards) == 10


def test_strong_beats_greedy_in_most_hands_knocked_here() -> None:
    """A cheap smoke check of strength (the real measure is benchmarks.strength)."""
    wins = 0
    for seed in range(8):
        for seat in (0, 1):
            seats: list[Policy] = [GreedyPolicy(), GreedyPolicy()]
            seats[seat] = StrongPolicy()
            result = play_series(seats[0], seats[1], 1000 + seed)
            wins += result.winner == seat
    assert wins >= 8


def test_strong_is_deterministic() -> None:
    def transcript(seed: int) -> list[str]:
        moves: list[str] = []

        def record(view: Observation, legal: Sequence[Action], policy: StrongPolicy) -> Action:
            action = policy(view, legal)
            moves.append(f"{view.seat}:{action}")
            return action

        first, second = StrongPolicy(), StrongPolicy()
        play_series(
            lambda view, legal: record(view, legal, first),
            lambda view, legal: record(view, legal, second),
            seed,
        )
        return moves

    assert transcript(3) == transcript(3)
    assert len(transcript(4)) > 50


def test_strong_knocks_with_gin_and_declares_a_valid_layout() -> None:
    # Seat 0 holds a gin hand plus one card after a draw: it must knock for gin.
    deck = list(range(52))
    state = HandState.deal(deck, dealer=1)
    view = hand_observation(state, 0)
    assert view.phase is Phase.UPCARD
