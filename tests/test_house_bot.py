"""The house sample bot: its table plays hands as the rules do, its deals are the seat's view
only, it plays legal whole series, keeps to its budget, replays with a seed, passes the check."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import trio

from benchmarks import house_strength
from benchmarks.house_strength import label, parse_budget, play_deal
from protocol.manifest import load_manifest
from protocol.sdk import SeriesInfo
from referee.conformance import check_bot
from referee.rules import (
    CARD_VALUES,
    DISCARDS,
    DRAW_STOCK,
    KNOCKS,
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
    optimal_meld_groups,
    parse_cards,
    play_hand,
    play_series,
)
from referee.sandbox import Sandbox
from sample_bots.house.bot import HouseBot, budget_for
from sample_bots.house.strategy import SCREEN, Budget, HousePolicy, Search, search, shortlist
from sample_bots.house.table import WARY_MARGIN, Table, feeds, imagine, improves, safe_throw
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


def melds_with(hand: int, card: int) -> bool:
    """Whether ``card`` is in every least-deadwood layout of ``hand`` with it, written out
    from the rules' layouts."""
    return all(card_in(card, group) for group in optimal_meld_groups(hand | 1 << card))


def card_in(card: int, group: tuple[int, ...]) -> bool:
    """Whether a meld of ``group`` (masks) holds ``card``."""
    return any(meld >> card & 1 for meld in group)


def wary_choice(hand: HandState) -> Action:
    """The wary play-out's move as its docstring specifies it, from the rules' own helpers and
    the true hands (a policy cannot see them, so the test asks the state)."""
    legal = hand.legal_actions()
    view = observation(hand, hand.to_move)
    if hand.phase is not Phase.DISCARD:
        return greedy_policy(view, legal)
    mine, theirs = hand.cards_of(hand.to_move).mask, hand.cards_of(1 - hand.to_move).mask
    forbidden = 0 if view.taken_this_turn is None else 1 << view.taken_this_turn
    after, card = best_throw(mine, forbidden)
    if after <= hand.params.knock_limit:
        return KNOCKS[card]
    if melds_with(theirs, card):
        throws = sorted(
            (deadwood_of_mask(mine ^ 1 << c), -CARD_VALUES[c], c)
            for c in bits(mine & ~forbidden)
            if c != card
        )
        safe = [c for left, _, c in throws if left <= after + WARY_MARGIN]
        card = next((c for c in safe if not melds_with(theirs, c)), card)
    return DISCARDS[card]


@pytest.mark.parametrize("seed", range(12))
def test_wary_play_on_a_table_ends_each_hand_as_the_rules_do(seed: int) -> None:
    for dealer, params in itertools.product((0, 1), (RuleParams(), RuleParams(stock_end=8))):
        deck = [int(card) for card in dealt_deck(seed, 0, dealer)]
        real = HandState.deal(deck, dealer, params)
        while not real.is_over:
            real.apply(wary_choice(real))
        table = Table.deal(deck, dealer, params).play_out(wary=True)
        assert real.outcome is not None
        assert (table.winner, table.points, table.turns) == (
            real.outcome.winner,
            real.outcome.points,
            real.turns,
        )
        assert [table.hands[0], table.hands[1]] == [hand.mask for hand in real.outcome.hands]


def test_a_wary_throw_keeps_back_a_card_that_melds_for_the_opponent() -> None:
    hand = parse_cards("2c 3c 4c 7d 7h 7s 9c 5s 8d Kd Qh").mask
    greedy = best_throw(hand)
    card = {text: parse_cards(text).mask.bit_length() - 1 for text in ("Kd", "Qh", "9c", "8d")}
    assert greedy == (32, card["Kd"])
    rest = "Ah 3h 6h 4s 2d 6s"

    def throw(theirs: str, forbidden: int = 0) -> int:
        return safe_throw(hand, forbidden, parse_cards(theirs).mask, greedy)

    assert feeds(parse_cards(f"Kc Ks Jd Tc {rest}").mask, card["Kd"])
    assert not feeds(parse_cards(f"Kc Ks Jd Tc {rest}").mask, card["Qh"])
    assert throw(f"Ac 5h Jd Tc {rest}") == card["Kd"]  # melds with nothing of theirs
    assert throw(f"Kc Ks Jd Tc {rest}") == card["Qh"]  # as little deadwood
    assert throw(f"Kc Ks Qc Qs {rest}") == card["9c"]  # one more
    assert throw("Kc Ks Qc Qs 9d 9h 5c 5d Ad As") == card["8d"]  # two more
    assert throw("Kc Ks Qc Qs 9d 9h 5c 5d 8h 8s") == card["Kd"]  # all within 5 meld: greedy's
    assert throw(f"Kc Ks Jd Tc {rest}", forbidden=1 << card["Qh"]) == card["9c"]


def test_wary_and_greedy_play_outs_part_ways() -> None:
    differ = 0
    for seed in range(12):
        deck = [int(card) for card in dealt_deck(seed, 0, 0)]
        tables = [Table.deal(deck, 0, RuleParams()).play_out(wary) for wary in (False, True)]
        differ += tables[0].hands != tables[1].hands
    assert differ >= 3


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
            assert policy.last.rollouts + len(policy.last.live) > 20  # it used its budget
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


def test_after_the_screen_only_strongs_choice_and_the_best_contender_play_on() -> None:
    screened = 0
    for view, legal in views_of(4, 0)[:60]:
        actions = shortlist(view, legal, Tuning())
        found = search(view, actions, Budget(seconds=60.0, rollouts=150), random.Random(1))
        if len(actions) <= 2:
            assert found.screened == 0
            assert found.live == [0, 1][: len(actions)]
            continue
        screened += 1
        edges = [mean_edge(found, i) for i in range(1, len(actions))]
        contender = 1 + edges.index(max(edges))
        assert found.screened == SCREEN
        assert found.live == [0, contender]
        for index, points in enumerate(found.scores):
            assert len(points) == (found.deals if index in found.live else SCREEN)
        assert found.deals > SCREEN
        assert found.rollouts == SCREEN * len(actions) + 2 * (found.deals - SCREEN)
    assert screened > 5


def mean_edge(found: Search, index: int) -> float:
    """Action ``index``'s mean lead over action 0 on the screen's deals."""
    pairs = zip(found.scores[index][:SCREEN], found.scores[0][:SCREEN], strict=False)
    return sum(a - b for a, b in pairs) / SCREEN


def test_the_contender_must_win_on_the_deals_after_the_screen() -> None:
    a, b, c = DRAW_STOCK, DISCARDS[0], DISCARDS[1]
    before = [[0] * 4, [20, 20, 20, 20], [9, 9, 9, 9]]  # b far ahead on the screen's deals

    def found(after_a: list[int], after_b: list[int]) -> Search:
        scores = [before[0] + after_a, before[1] + after_b, before[2]]
        return Search([a, b, c], scores, live=[0, 1], screened=4)

    assert found([0, 0, 0, 0], [1, -1, 0, 0]).best() == a  # no lead later: the screen's is luck
    assert found([0, 0, 0, 0], [3, 4, 5, 3]).best() == b
    assert found([0, 0, 0, 0], [3, 4, 5, 3]).best(confidence=20.0) == a
    assert found([], []).best() == b  # the budget ended at the screen: its deals decide
    alone = Search([a, b, c], [[0, 0, 0], [1, 0, 1], [5, 6, 5]], live=[0, 1, 2])
    assert alone.best() == c  # no screen: every action on every deal


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


# --- the strength benchmark's budgets ----------------------------------------------------------


def test_the_benchmark_reads_a_budget_and_the_searchs_settings() -> None:
    variant = parse_budget("300r/wary/gate=1/screen=0")
    assert variant.budget.rollouts == 300
    assert (variant.wary, variant.confidence, variant.screen) == (True, 1.0, 0)
    plain = parse_budget("50")
    assert (plain.budget.seconds, plain.budget.rollouts) == (0.05, None)
    assert (plain.wary, plain.confidence, plain.screen) == (False, 2.0, SCREEN)
    assert label("300r/wary") == "300 hands wary"
    for bad in ("0r", "300r/fast", "300r/gate=-1", "300r/wary=1", "fast"):
        with pytest.raises(ValueError, match=r"."):
            parse_budget(bad)


def test_a_duplicated_deal_gives_each_player_both_seats_of_the_same_cards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With greedy standing in for the house bot, the two hands of a deal are the same game with
    # the players' names swapped: the points cancel exactly (another deck, or the same seats,
    # would not).
    monkeypatch.setattr(house_strength, "make_house", lambda budget, seed: greedy_policy)
    played = [play_deal(("1r", "greedy", index, 11))[1] for index in range(6)]
    assert all(first == -second for first, second in (r.points for r in played))
    assert any(r.points[0] for r in played)
    assert all(r.decisions > 0 for r in played)
    mixed = play_deal(("5r", "greedy", 0, 11))[1]  # the real house bot plays
    assert mixed.decisions > 0
    assert mixed.cpu_seconds > 0
