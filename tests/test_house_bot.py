"""The house sample bot: its table plays hands as the rules do, its deals are the seat's view
only, it plays legal whole series, keeps to its budget, replays with a seed, passes the check."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from protocol.sdk import SeriesInfo
from referee.conformance import check_bot
from referee.rules import (
    DRAW_STOCK,
    Action,
    HandState,
    Observation,
    Phase,
    Policy,
    RandomPolicy,
    RuleParams,
    SeriesEnd,
    SeriesState,
    best_throw,
    deadwood_of_mask,
    dealt_deck,
    greedy_policy,
    observation,
    parse_cards,
    play_hand,
    play_series,
)
from referee.sandbox import Sandbox
from sample_bots.house.bot import HouseBot, budget_for
from sample_bots.house.strategy import Budget, HousePolicy, search, shortlist
from sample_bots.house.table import Table, imagine, improves
from sample_bots.house.table import best_throw as table_best_throw
from sample_bots.strong.strategy import StrongPolicy, Tuning, bits

HOUSE = Path(__file__).resolve().parent.parent / "sample_bots" / "house"
FAST = Budget(seconds=60.0, rollouts=12)
"""A budget of work, not of time: a dozen played-out hands a decision."""


def fake_clock(step: float) -> Callable[[], float]:
    """A clock that moves ``step`` seconds each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) * step


class Watched:
    """A policy that keeps every view it was asked about and the action it chose."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.seen: list[tuple[Observation, list[Action], Action]] = []

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        action = self.policy(view, legal)
        self.seen.append((view, list(legal), action))
        return action


def views_of(seed: int, seat: int) -> list[tuple[Observation, list[Action]]]:
    """Every view ``seat`` had, with its legal actions, in a series of strong (seat 0) against
    greedy."""
    watched = [Watched(StrongPolicy()), Watched(greedy_policy)]
    play_series(watched[0], watched[1], seed)
    return [(view, legal) for view, legal, _ in watched[seat].seen]


# --- the table ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_greedy_play_on_a_table_ends_each_hand_as_the_rules_do(seed: int) -> None:
    for dealer, params in itertools.product((0, 1), (RuleParams(), RuleParams(stock_end=8))):
        deck = [int(card) for card in dealt_deck(seed, 0, dealer)]
        real = play_hand(greedy_policy, greedy_policy, HandState.deal(deck, dealer, params))
        table = Table.deal(deck, dealer, params).play_greedy()
        assert real.outcome is not None
        assert (table.winner, table.points, table.turns) == (
            real.outcome.winner,
            real.outcome.points,
            real.turns,
        )
        assert [table.hands[0], table.hands[1]] == [hand.mask for hand in real.outcome.hands]


def some_hands(count: int, size: int, seed: int) -> list[int]:
    """Random hands of ``size`` cards, half of them from five ranks only (sets and ties in
    plenty), as masks."""
    rng = random.Random(seed)
    hands = []
    for index in range(count):
        ranks = rng.sample(range(13), 5) if index % 2 else range(13)
        pool = [suit * 13 + rank for suit in range(4) for rank in ranks]
        hands.append(sum(1 << card for card in rng.sample(pool, size)))
    return hands


MELDED = ["4s 5s 6s 7s 9c 9d 9h 9s Jc Jd Jh", "Ac 2c 3c 4c 5c 7d 7h 7s Qd Kd Jd"]
"""Eleven cards all melded: throws tie on deadwood, the card's value decides."""


def test_the_tables_fast_throw_and_take_are_the_rules_greedy_choices() -> None:
    for hand in [parse_cards(text).mask for text in MELDED] + some_hands(600, 11, seed=1):
        forbidden = 1 << bits(hand)[len(bits(hand)) // 2]
        assert table_best_throw(hand, forbidden) == best_throw(hand, forbidden)
        assert table_best_throw(hand) == best_throw(hand)
    for hand in some_hands(600, 10, seed=2):
        for card in bits(((1 << 52) - 1) & ~hand)[::5]:
            after, _ = best_throw(hand | 1 << card, 1 << card)
            assert improves(hand, card) == (after < deadwood_of_mask(hand))


@pytest.mark.parametrize("seat", [0, 1])
def test_imagined_deals_hold_what_the_seat_sees_and_every_card_once(seat: int) -> None:
    rng = random.Random(5)
    views = views_of(3, seat)
    assert len(views) > 100
    for view, _ in views:
        table = imagine(view, rng)
        mine, theirs = table.hands[seat], table.hands[1 - seat]
        assert mine == view.hand.mask
        assert theirs & view.opponent_known.mask == view.opponent_known.mask
        assert theirs.bit_count() == view.opponent_hand_size
        assert len(table.stock) == view.stock_count
        assert table.pile == list(view.discard_pile)
        assert (table.phase, table.to_move, table.turns) == (view.phase, seat, view.turns)
        places = [mine, theirs, *(1 << c for c in table.stock), *(1 << c for c in table.pile)]
        assert sum(mask.bit_count() for mask in places) == 52
        everything = 0
        for mask in places:
            everything |= mask
        assert everything == (1 << 52) - 1


def test_the_first_draw_after_two_passes_is_from_the_stock() -> None:
    series = SeriesState(seed=1)
    while series.to_move is not None and series.hand.phase is Phase.UPCARD:
        series.apply(series.legal_actions()[1])  # pass, pass
    view = observation(series, series.to_move)
    table = imagine(view, random.Random(0))
    assert table.stock_only
    assert series.legal_actions() == [DRAW_STOCK]


# --- whole series -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rival", "seed"), [(StrongPolicy(), 7), (RandomPolicy(seed=2), 8)], ids=["strong", "random"]
)
def test_plays_legal_complete_series_in_either_seat(rival: Policy, seed: int) -> None:
    for seat in (0, 1):
        house = Watched(HousePolicy(FAST, seed=seed))
        first, second = (house, rival) if seat == 0 else (rival, house)
        result = play_series(first, second, seed)
        assert result.end is SeriesEnd.COMPLETE
        assert len(house.seen) > 50


def test_every_decision_keeps_to_its_rollouts() -> None:
    policy = HousePolicy(Budget(seconds=60.0, rollouts=20), seed=1)
    searched = 0
    for view, legal in views_of(4, 0)[:80]:
        policy(view, legal)
        if policy.last is not None:
            searched += 1
            assert policy.last.rollouts <= 20
            assert policy.last.rollouts + len(policy.last.actions) > 20  # it used its budget
    assert searched > 10


def test_a_deal_is_begun_only_if_it_ends_within_the_time() -> None:
    view, legal = next((v, a) for v, a in views_of(4, 0) if v.phase is Phase.DISCARD)
    actions = shortlist(view, legal, Tuning())
    assert len(actions) > 1
    # Each read of the clock moves it a second: a deal "takes" a second, the budget is 3.5.
    found = search(view, actions, Budget(seconds=3.5, clock=fake_clock(1.0)), random.Random(0))
    assert found.deals == 3  # a fourth would end at 4 seconds
    found = search(view, actions, Budget(seconds=0.0, clock=fake_clock(1.0)), random.Random(0))
    assert found.deals == 1  # one deal always, to have an answer


# --- what it may see, and replays ---------------------------------------------------------------


def hidden_swapped(series: SeriesState) -> SeriesState:
    """A copy of ``series`` (same seed, same actions) whose player-not-to-move holds a different
    hidden card: one of its stock-dealt cards swapped with a card deep in the stock."""
    seat = 1 - series.to_move
    hand = series.hand
    known = hand.known_cards(seat).mask
    hidden = next(c for c in hand.cards_of(seat) if not known >> c & 1)
    deep = hand.stock[-1]
    hand._hands[seat] ^= 1 << hidden | 1 << deep  # the test changes the truth
    hand._stock = (*hand._stock[:-1], hidden)
    return series


def test_the_opponents_real_hidden_hand_does_not_move_a_decision() -> None:
    for seed in (11, 12, 13):
        states = []
        for _ in range(2):
            series = SeriesState(seed)
            for _ in range(9):  # into the hand, the same actions in both
                series.apply(
                    greedy_policy(observation(series, series.to_move), series.legal_actions())
                )
            states.append(series)
        before = states[0].hand.cards_of(1 - states[0].to_move)
        changed = hidden_swapped(states[1])
        assert changed.hand.cards_of(1 - changed.to_move) != before  # the truth differs
        seat = states[0].to_move
        views = [observation(state, seat) for state in states]
        assert views[0] == views[1]  # the seat cannot tell
        policies = [HousePolicy(FAST, seed=3) for _ in states]
        actions = [p(v, s.legal_actions()) for p, v, s in zip(policies, views, states, strict=True)]
        assert actions[0] == actions[1]
        if policies[0].last is not None and policies[1].last is not None:
            assert policies[0].last.scores == policies[1].last.scores


def test_the_same_seed_replays_a_series_and_another_seed_searches_differently() -> None:
    runs = []
    for seed in (5, 5, 6):
        house = Watched(HousePolicy(FAST, seed=seed))
        play_series(house, StrongPolicy(), 21)
        runs.append(house)
    assert [a for _, _, a in runs[0].seen] == [a for _, _, a in runs[1].seen]
    view, legal = next((v, a) for v, a, _ in runs[0].seen if v.phase is Phase.DISCARD)
    scores = []
    for seed in (5, 6):
        policy = HousePolicy(FAST, seed=seed)
        policy(view, legal)
        assert policy.last is not None
        scores.append(policy.last.scores)
    assert scores[0] != scores[1]


# --- the bot ------------------------------------------------------------------------------------


def test_the_bot_cuts_its_budget_to_the_clock_and_takes_the_referees_seed() -> None:
    assert budget_for(0).seconds == Budget().seconds
    assert budget_for(200).seconds == pytest.approx(0.05)
    assert budget_for(1000, Budget(seconds=0.02, rollouts=9)) == Budget(seconds=0.02, rollouts=9)
    bot = HouseBot()
    bot.seed_random(77)
    bot.on_series_start(SeriesInfo(0, RuleParams(), 100, 1000, "greedy", "1.0.0", "m", 77))
    assert bot.policy.seed == 77
    assert bot.policy.budget.seconds == pytest.approx(0.025)
    assert load_manifest(HOUSE).name == bot.name == "house"


@pytest.mark.slow
def test_the_house_bot_passes_the_conformance_check_sandboxed(sandbox: Sandbox) -> None:
    report = trio.run(lambda: check_bot(HOUSE, sandbox.prepare, decisions=60))
    assert report.passed, [item for item in report.items if not item.passed]
    assert report.decisions >= 60
