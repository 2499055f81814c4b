"""A Hollywood series: who deals, when it ends, the caps and options, and determinism."""

from __future__ import annotations

import itertools

import pytest

from referee.rules import (
    Dealing,
    HandRecord,
    HandState,
    HollywoodScore,
    Policy,
    RandomPolicy,
    RuleParams,
    Scoring,
    SeriesEnd,
    SeriesResult,
    SeriesState,
    card_set,
    dealt_deck,
    first_dealer,
    greedy_policy,
    observation,
    patient_policy,
    play_series,
    shuffled_deck,
)

SEEDS = range(8)
DEFAULT = RuleParams()


def play_stepwise(
    first: Policy,
    second: Policy,
    seed: int,
    params: RuleParams = DEFAULT,
    dealing: Dealing = Dealing.BY_SEAT,
) -> SeriesState:
    """Play a series action by action, checking after every finished hand that it goes on
    exactly while some game is still open, and that each hand is dealt from the seed."""
    series = SeriesState(seed, params, dealing)
    policies = (first, second)
    finished = 0
    while not series.is_over:
        assert series.hand.deck == dealt_deck(seed, series.hand_number, series.hand.dealer, dealing)
        seat = series.to_move
        series.apply(policies[seat](observation(series, seat), series.legal_actions()))
        if len(series.finished) > finished:
            finished = len(series.finished)
            if not series.is_over:
                assert not all(series.score.games_over), "a finished sheet did not end the series"
                assert series.hand_number == finished
    assert series.legal_actions() == []
    return series


def check_dealers(seed: int, hands: tuple[HandRecord, ...]) -> tuple[int, int]:
    """The first dealer comes from the seed; the winner deals next, a drawn hand keeps the
    dealer. Returns how many drawn hands and how many changes of dealer were checked."""
    assert hands[0].dealer == first_dealer(seed)
    drawn = changes = 0
    for before, after in itertools.pairwise(hands):
        assert after.number == before.number + 1
        winner = before.outcome.winner
        if winner is None:
            drawn += 1
            assert before.games == ()
            assert after.dealer == before.dealer, f"hand {after.number}: a draw moved the deal"
        else:
            changes += winner != before.dealer
            assert after.dealer == winner, f"hand {after.number}: the winner did not deal"
    return drawn, changes


def reference_sheet(
    hands: tuple[HandRecord, ...], games: int = 3, target: int = 100
) -> tuple[list[tuple[int, ...]], list[list[int]], list[int | None]]:
    """The rule book's entering rule, written out again: each hand's games, totals, winners."""
    totals = [[0] * games for _ in range(2)]
    entered: list[set[int]] = [set(), set()]
    winners: list[int | None] = [None] * games
    per_hand: list[tuple[int, ...]] = []
    for hand in hands:
        seat = hand.outcome.winner
        if seat is None:
            per_hand.append(())
            continue
        open_games = [game for game in range(games) if winners[game] is None]
        chosen = [game for game in open_games if game in entered[seat]]
        chosen += [game for game in open_games if game not in entered[seat]][:1]
        for game in chosen:
            entered[seat].add(game)
            totals[seat][game] += hand.outcome.points
            if totals[seat][game] >= target:
                winners[game] = seat
        per_hand.append(tuple(sorted(chosen)))
    return per_hand, totals, winners


def check_sheet(result: SeriesResult) -> None:
    games = result.params.games
    per_hand, totals, winners = reference_sheet(result.hands, games, result.params.game_target)
    assert [hand.games for hand in result.hands] == per_hand
    assert result.totals == (tuple(totals[0]), tuple(totals[1]))
    if result.end is not SeriesEnd.HAND_CAP:
        assert list(result.game_winners) == winners


# --- who deals ---------------------------------------------------------------------------------


def test_first_dealer_comes_from_the_seed_and_varies() -> None:
    dealers = {first_dealer(seed) for seed in range(16)}
    assert dealers == {0, 1}
    for seed in range(16):
        series = SeriesState(seed)
        assert series.first_dealer == first_dealer(seed)
        assert series.hand.dealer == first_dealer(seed)
        assert series.to_move == 1 - first_dealer(seed)
        assert first_dealer(seed) == first_dealer(seed)


def test_winner_deals_next_and_a_drawn_hand_keeps_the_dealer() -> None:
    drawn = changes = 0
    for seed in SEEDS:
        result = play_series(greedy_policy, patient_policy, seed=seed)
        counts = check_dealers(seed, result.hands)
        drawn, changes = drawn + counts[0], changes + counts[1]
        # Random players rarely knock, so most of their hands are drawn.
        capped = RuleParams(hand_cap=12)
        series = play_stepwise(RandomPolicy(seed), RandomPolicy(seed + 100), seed, capped)
        counts = check_dealers(seed, tuple(series.finished))
        drawn, changes = drawn + counts[0], changes + counts[1]
    # Both branches of the rule were exercised, many times.
    assert drawn >= 10
    assert changes >= 10


# --- what each seat is dealt ------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_each_seat_receives_the_same_shuffled_positions_whoever_deals(seed: int) -> None:
    for number in range(3):
        shuffle = shuffled_deck(seed, number)
        for dealer in (0, 1):
            hand = HandState.deal(dealt_deck(seed, number, dealer), dealer)
            assert hand.hands == (card_set(shuffle[0:20:2]), card_set(shuffle[1:20:2]))
            assert hand.discard_pile == (shuffle[20],)
            assert hand.stock == shuffle[21:]
            assert hand.to_move == 1 - dealer  # the non-dealer still plays first


@pytest.mark.parametrize("seed", SEEDS)
def test_dealing_by_dealer_deals_the_shuffle_in_order(seed: int) -> None:
    """The rule of log formats 1 and 2: the non-dealer gets the shuffle's even positions."""
    shuffle = shuffled_deck(seed, 1)
    for dealer in (0, 1):
        assert dealt_deck(seed, 1, dealer, Dealing.BY_DEALER) == shuffle
        hand = HandState.deal(dealt_deck(seed, 1, dealer, Dealing.BY_DEALER), dealer)
        assert hand.hands[1 - dealer] == card_set(shuffle[0:20:2])


def test_a_series_deals_by_its_dealing() -> None:
    for dealing in Dealing:
        series = play_stepwise(greedy_policy, patient_policy, 5, dealing=dealing)
        assert series.dealing is dealing
        assert {record.dealer for record in series.finished} == {0, 1}  # both seats dealt


def test_dealt_deck_refuses_a_dealer_that_is_no_seat() -> None:
    with pytest.raises(ValueError, match="dealer must be seat 0 or 1"):
        dealt_deck(1, 0, 2)


# --- when a series ends ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_series_ends_exactly_when_all_three_games_have_ended(seed: int) -> None:
    series = play_stepwise(greedy_policy, RandomPolicy(seed), seed)
    result = series.result
    assert result is not None
    assert result.end is SeriesEnd.COMPLETE
    assert series.score.games_over == (True, True, True)
    assert result.winner is not None
    assert result.game_winners.count(result.winner) >= 2
    assert None not in result.game_winners
    for game, winner in enumerate(result.game_winners):
        assert winner is not None
        assert result.totals[winner][game] >= 100
        assert result.totals[1 - winner][game] < 100
    check_sheet(result)
    check_dealers(seed, result.hands)


@pytest.mark.parametrize("seed", SEEDS)
def test_stop_when_decided_ends_as_soon_as_one_player_has_two_games(seed: int) -> None:
    full = play_series(greedy_policy, patient_policy, seed=seed)
    decided = play_series(
        greedy_policy, patient_policy, seed=seed, params=RuleParams(stop_when_decided=True)
    )
    # Same deals, same players: the stopped series is the start of the full one.
    assert decided.hands == full.hands[: len(decided.hands)]
    assert decided.winner == full.winner
    # It stops after the first hand that gives someone two games.
    winners_after = [reference_sheet(full.hands[:n])[2] for n in range(1, len(full.hands) + 1)]
    stop = next(n for n, won in enumerate(winners_after, 1) if max(won.count(0), won.count(1)) >= 2)
    assert len(decided.hands) == stop
    assert decided.winner is not None
    if None in winners_after[stop - 1]:
        assert decided.end is SeriesEnd.DECIDED
        assert decided.game_winners.count(decided.winner) == 2
        assert decided.game_winners.count(None) == 1
    else:  # the last games ended on the same hand
        assert decided.end is SeriesEnd.COMPLETE
        assert (decided.hands, decided.game_winners) == (full.hands, full.game_winners)


def test_stop_when_decided_stops_some_series_early() -> None:
    ends = {
        play_series(
            greedy_policy, patient_policy, seed=seed, params=RuleParams(stop_when_decided=True)
        ).end
        for seed in SEEDS
    }
    assert ends == {SeriesEnd.DECIDED, SeriesEnd.COMPLETE}


def test_decided_series_is_not_stopped_by_default() -> None:
    # Seed 1: seat 0 holds games 1 and 2 after hand 7 but the series plays on to 13 hands.
    result = play_series(greedy_policy, patient_policy, seed=1)
    assert result.end is SeriesEnd.COMPLETE
    assert len(result.hands) == 13
    assert result.game_winners == (0, 0, 0)


@pytest.mark.parametrize("seed", [3, 5])
def test_hand_cap_gives_open_games_to_the_leader_and_leaves_ties_unwon(seed: int) -> None:
    result = play_series(greedy_policy, patient_policy, seed=seed, params=RuleParams(hand_cap=3))
    assert result.end is SeriesEnd.HAND_CAP
    assert len(result.hands) == 3
    check_sheet(result)
    for game, winner in enumerate(result.game_winners):
        mine, theirs = result.totals[0][game], result.totals[1][game]
        expected = None if mine == theirs else (0 if mine > theirs else 1)
        assert winner == expected, f"game {game + 1}: {mine} to {theirs}"
    assert result.game_winners[2] is None  # nobody has three wins: game 3 is 0 to 0


def test_hand_cap_seed_5_leaves_the_series_unwon() -> None:
    # Seat 0 wins hands 1 and 2 (2 points each), seat 1 hand 3 (12 points): game 1 goes to
    # seat 1 (4 to 12), game 2 to seat 0 (2 to 0), game 3 is tied 0 to 0.
    result = play_series(greedy_policy, patient_policy, seed=5, params=RuleParams(hand_cap=3))
    assert [hand.outcome.winner for hand in result.hands] == [0, 0, 1]
    assert result.totals == ((4, 2, 0), (12, 0, 0))
    assert result.game_winners == (1, 0, None)
    assert result.winner is None


def test_hand_cap_seed_3_goes_to_the_leader_of_two_games() -> None:
    result = play_series(greedy_policy, patient_policy, seed=3, params=RuleParams(hand_cap=3))
    assert result.totals == ((3, 0, 0), (25, 13, 0))
    assert result.game_winners == (1, 1, None)
    assert result.winner == 1


def test_close_capped_tie_with_points_is_unwon() -> None:
    sheet = HollywoodScore()
    sheet.record(0, 12)
    sheet.record(1, 12)
    sheet.record(1, 30)
    sheet.close_capped()
    assert sheet.totals(0) == (12, 0, 0)
    assert sheet.totals(1) == (42, 30, 0)
    assert sheet.game_winners == (1, 1, None)
    assert sheet.games_over == (True, True, True)
    assert sheet.winner == 1


# --- variants and determinism ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_plain_scoring_is_one_game_to_100(seed: int) -> None:
    params = RuleParams(scoring=Scoring.PLAIN)
    result = play_series(greedy_policy, patient_policy, seed=seed, params=params)
    assert result.end is SeriesEnd.COMPLETE
    assert len(result.totals[0]) == len(result.totals[1]) == 1
    assert len(result.game_winners) == 1
    winner = result.winner
    assert winner is not None
    assert result.game_winners == (winner,)
    assert result.totals[winner][0] >= 100
    assert result.totals[1 - winner][0] < 100
    for hand in result.hands:
        assert hand.games == (() if hand.outcome.winner is None else (0,))
    for seat in (0, 1):
        won = sum(hand.outcome.points for hand in result.hands if hand.outcome.winner == seat)
        assert result.totals[seat] == (won,)
    # It ends on the hand that first reaches 100.
    last = result.hands[-1].outcome
    assert last.winner == winner
    assert result.totals[winner][0] - last.points < 100
    check_sheet(result)


def test_same_seed_and_policies_give_identical_results() -> None:
    for seed in (0, 5):
        first = play_series(greedy_policy, RandomPolicy(seed), seed=seed)
        again = play_series(greedy_policy, RandomPolicy(seed), seed=seed)
        assert first == again
        assert [hand.outcome for hand in first.hands] == [hand.outcome for hand in again.hands]
    # A different seed deals different hands.
    one = play_series(greedy_policy, RandomPolicy(0), seed=1)
    zero = play_series(greedy_policy, RandomPolicy(0), seed=0)
    assert one.hands[0].outcome.hands != zero.hands[0].outcome.hands


def test_stepwise_play_matches_play_series() -> None:
    series = play_stepwise(greedy_policy, patient_policy, seed=2)
    assert series.result == play_series(greedy_policy, patient_policy, seed=2)


def test_series_result_records_the_params() -> None:
    params = RuleParams(hand_cap=2, gin_bonus=20)
    result = play_series(greedy_policy, greedy_policy, seed=0, params=params)
    assert result.params == params
    assert result.seed == 0
    assert len(result.hands) <= 2
