"""The training environment (``tournaments.workbench.env``): PettingZoo's and Gymnasium's own
checks, the observation against the seat's view of ``referee.rules`` (and never a card the seat
cannot see), seeding as ``play_series`` deals, zero-sum rewards of each kind, the action mask."""

from __future__ import annotations

import random
import subprocess
import sys
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip(
    "pettingzoo", reason="the workbench extra is not installed (pip install .[workbench])"
)
pytest.importorskip(
    "gymnasium", reason="the workbench extra is not installed (pip install .[workbench])"
)

from gymnasium.utils.env_checker import check_env
from pettingzoo.test.api_test import api_test

from referee.rules import (
    CARDS,
    DRAW_STOCK,
    PASS_UPCARD,
    Discard,
    HandState,
    SeriesState,
    greedy_policy,
    observation,
    play_series,
)
from tournaments.workbench.env import (
    ACTIONS,
    AGENTS,
    LAYOUT,
    GinEnv,
    SoloGinEnv,
    action_number,
    encode,
    env,
)


def cards(vector: np.ndarray, field: str) -> set[int]:
    return {int(card) for card in np.flatnonzero(vector[LAYOUT[field]])}


def random_play(game: GinEnv, rng: random.Random) -> Iterator[str]:
    """Step every agent to move with a random legal action until the series ends; yields the
    agent about to move, before its step."""
    for agent in game.agent_iter():
        _, _, terminated, truncated, info = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        yield agent
        game.step(rng.choice(info["legal_actions"]))


def test_pettingzoo_s_own_api_test_passes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice on spaces, and the illegal moves it tries
        api_test(env(), num_cycles=300, verbose_progress=False)  # type: ignore[no-untyped-call]


def test_gymnasium_s_own_checker_passes_for_one_seat_against_a_policy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SoloGinEnv(greedy_policy, seat=1), skip_render_check=True)


@pytest.mark.parametrize("seed", range(3))
def test_the_observation_is_the_seats_view_and_never_a_hidden_card(seed: int) -> None:
    """At every step and for both seats: the vector is ``encode`` of ``referee.rules``'
    ``observation`` of the seat (the SDK's view), its hand is the seat's hand, and no card of the
    opponent's hand shows anywhere in it but those the seat saw the opponent take."""
    game = GinEnv()
    game.reset(seed=seed)
    rng = random.Random(seed)
    steps = 0
    for _ in random_play(game, rng):
        series = game.series
        for seat, agent in enumerate(AGENTS):
            view = observation(series, seat)
            vector = game.observe(agent)["observation"]
            assert np.array_equal(vector, encode(view))
            assert cards(vector, "hand") == set(series.hand.cards_of(seat))
            hidden = set(series.hand.cards_of(1 - seat)) - set(view.opponent_known)
            shown = set()
            for field in ("hand", "upcard", "pile", "taken_this_turn", "opponent_known"):
                shown |= cards(vector, field)
            assert not hidden & shown, (steps, hidden & shown)
        steps += 1
        if steps == 400:  # random play runs to the hand cap: several hands are enough
            break
    assert steps > 50


def test_two_deals_that_differ_only_in_hidden_cards_look_the_same() -> None:
    """Two hands dealt alike but for five of seat 1's cards (swapped with cards deep in the
    stock), played alike: seat 0's vector is the same at every step, though seat 1 holds other
    cards."""
    deck = list(range(52))
    random.Random(4).shuffle(deck)
    other = deck[:]
    for mine, deep in zip((1, 3, 5, 7, 9), (47, 48, 49, 50, 51), strict=True):  # seat 1's
        other[mine], other[deep] = other[deep], other[mine]

    def played(dealt: list[int]) -> tuple[list[np.ndarray], SeriesState]:
        series = SeriesState(seed=11)
        series.hand = HandState(dealt, 1, series.params)
        seen = [encode(observation(series, 0))]
        moves = (
            PASS_UPCARD,
            PASS_UPCARD,
            DRAW_STOCK,
            Discard(CARDS[dealt[0]]),  # one of seat 0's
            DRAW_STOCK,
            Discard(CARDS[dealt[11]]),  # one of seat 1's that both deals give it
        )
        for move in moves:
            series.apply(move)
            seen.append(encode(observation(series, 0)))
        return seen, series

    first, one = played(deck)
    second, two = played(other)
    assert one.hand.cards_of(1) != two.hand.cards_of(1)
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_a_seed_deals_the_series_play_series_deals_and_replays() -> None:
    def greedy_run(seed: int) -> tuple[GinEnv, list[np.ndarray]]:
        game = GinEnv()
        game.reset(seed=seed)
        seen = []
        for agent in game.agent_iter():
            _, _, terminated, truncated, info = game.last()
            seen.append(game.observe(agent)["observation"])
            if terminated or truncated:
                game.step(None)
            else:
                game.step(greedy_policy(info["observation"], info["legal_actions"]))
        return game, seen

    game, seen = greedy_run(21)
    expected = play_series(greedy_policy, greedy_policy, seed=21)
    result = game.series_result
    assert result is not None
    assert (result.winner, result.totals, result.game_winners) == (
        expected.winner,
        expected.totals,
        expected.game_winners,
    )
    _, again = greedy_run(21)
    assert len(again) == len(seen)
    assert all(np.array_equal(a, b) for a, b in zip(seen, again, strict=True))
    _, other = greedy_run(22)
    assert not all(np.array_equal(a, b) for a, b in zip(seen, other, strict=False))


def test_reset_without_a_seed_follows_the_last_seed() -> None:
    first, second = GinEnv(), GinEnv()
    first.reset(seed=5)
    second.reset(seed=5)
    first.reset()
    second.reset()
    assert first.series.seed == second.series.seed != 5


@pytest.mark.parametrize("reward", ["series", "game", "hand"])
def test_rewards_are_zero_sum_and_add_up_to_the_series(reward: str) -> None:
    for seed in range(4):
        game = GinEnv(reward=reward)  # type: ignore[arg-type]
        game.reset(seed=seed)
        totals = dict.fromkeys(AGENTS, 0.0)
        for agent in game.agent_iter():
            _observed, gained, terminated, truncated, info = game.last()
            totals[agent] += gained
            if terminated or truncated:
                game.step(None)
            else:
                game.step(greedy_policy(info["observation"], info["legal_actions"]))
            assert sum(game.rewards.values()) == 0
        result = game.series_result
        assert result is not None
        mine = totals["player_0"]
        if reward == "series":
            assert mine == {0: 1.0, 1: -1.0, None: 0.0}[result.winner]
        elif reward == "game":
            won = sum(w == 0 for w in result.game_winners) - sum(
                w == 1 for w in result.game_winners
            )
            assert mine == won
        else:
            points = sum(
                (h.outcome.points if h.outcome.winner == 0 else -h.outcome.points)
                for h in result.hands
                if h.outcome.winner is not None
            )
            assert mine == points
        assert totals["player_1"] == -mine


def test_the_mask_is_the_legal_actions_and_an_illegal_one_ends_the_series() -> None:
    game = GinEnv()
    game.reset(seed=3)
    rng = random.Random(3)
    for step, agent in enumerate(random_play(game, rng)):
        mask = game.observe(agent)["action_mask"]
        legal = game.series.legal_actions()
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(action_number(a) for a in legal)
        other = AGENTS[1 - AGENTS.index(agent)]
        assert not game.observe(other)["action_mask"].any()
        if step > 40:
            break
    game = GinEnv()
    game.reset(seed=3)
    mover = game.agent_selection
    illegal = next(n for n in range(len(ACTIONS)) if not game.observe(mover)["action_mask"][n])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game.step(illegal)
    assert all(game.terminations.values())
    assert game.rewards[mover] == -1.0
    assert game.series_result is None


def test_the_referee_never_imports_the_training_libraries() -> None:
    code = (
        "import sys, referee, referee.rules, referee.match, referee.remote, protocol.sdk; "
        "bad = [m for m in ('pettingzoo', 'gymnasium') if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0
