"""Hand scores and the Hollywood score sheet."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import HollywoodScore, RuleParams, Scoring, score_hand


@pytest.mark.parametrize(
    ("knocker", "defender", "gin", "params", "expected"),
    [
        (0, 31, True, RuleParams(), ("knocker", 56)),
        (0, 0, True, RuleParams(), ("knocker", 25)),  # gin beats a defender at 0: no undercut
        (0, 12, True, RuleParams(gin_bonus=20), ("knocker", 32)),
        (7, 20, False, RuleParams(), ("knocker", 13)),
        (8, 3, False, RuleParams(), ("defender", 15)),
        (8, 3, False, RuleParams(undercut_bonus=25), ("defender", 30)),
        (6, 6, False, RuleParams(), ("defender", 10)),  # the tie is an undercut
        (0, 0, False, RuleParams(), ("defender", 10)),  # a knock at 0 not declared gin
        (6, 6, False, RuleParams(undercut_on_tie=False), ("knocker", 0)),
    ],
)
def test_score_hand(
    knocker: int, defender: int, gin: bool, params: RuleParams, expected: tuple[str, int]
) -> None:
    assert score_hand(knocker, defender, gin, params) == expected


def test_score_hand_refuses_impossible_inputs() -> None:
    with pytest.raises(ValueError, match="gin needs"):
        score_hand(3, 10, gin=True)
    with pytest.raises(ValueError, match="negative"):
        score_hand(-1, 10, gin=False)


def sheet_after(wins: list[tuple[int, int]], params: RuleParams | None = None) -> HollywoodScore:
    sheet = HollywoodScore(params or RuleParams())
    for seat, points in wins:
        sheet.record(seat, points)
    return sheet


def test_worked_example_from_the_sources() -> None:
    # Bob is seat 1, Alexandra seat 0.
    sheet = sheet_after([(1, 10), (0, 18), (1, 30), (1, 4)])
    assert sheet.totals(0) == (18, 0, 0)
    assert sheet.totals(1) == (44, 34, 4)


def test_games_close_at_100_and_the_closing_hand_counts_in_full() -> None:
    sheet = sheet_after([(0, 60), (0, 30), (0, 70)])
    assert sheet.totals(0) == (160, 100, 70)
    assert sheet.games_over == (True, True, False)
    assert sheet.game_winners == (0, 0, None)
    assert sheet.winner == 0
    assert not sheet.over
    sheet.record(0, 30)
    assert sheet.totals(0) == (160, 100, 100)
    assert sheet.over
    with pytest.raises(ValueError, match="already over"):
        sheet.record(1, 5)


def test_no_points_enter_an_ended_game() -> None:
    sheet = sheet_after([(0, 100), (1, 20), (1, 20)])
    # Seat 1's first win went to game 2 (game 1 had ended), the second to games 2 and 3.
    assert sheet.totals(1) == (0, 40, 20)
    assert sheet.totals(0) == (100, 0, 0)


def test_shut_out_ruling_first_win_opens_the_next_open_game() -> None:
    sheet = sheet_after([(0, 60), (0, 50)])  # game 1 ends (110); seat 1 never won in it
    assert sheet.games_over == (True, False, False)
    assert sheet.record(1, 15) == (1,)
    assert sheet.record(1, 5) == (1, 2)
    assert sheet.totals(1) == (0, 20, 5)
    # Seat 0 had entered games 1 and 2; its next win goes to game 2 and opens game 3.
    assert sheet.record(0, 7) == (1, 2)


def test_winner_by_two_games_of_three() -> None:
    sheet = sheet_after([(1, 100), (0, 100), (1, 100)])
    assert sheet.game_winners == (1, 0, 1)
    assert sheet.winner == 1
    assert sheet.games_won == (1, 2)


def test_hand_cap_gives_open_games_to_the_leader_and_ties_to_nobody() -> None:
    sheet = sheet_after([(0, 20), (1, 20), (1, 5)])
    sheet.close_capped()
    assert sheet.totals(0) == (20, 0, 0)
    assert sheet.totals(1) == (25, 5, 0)
    assert sheet.game_winners == (1, 1, None)
    assert sheet.over


def test_plain_gin_rummy_is_one_game() -> None:
    sheet = sheet_after([(0, 50), (1, 20), (0, 50)], RuleParams(scoring=Scoring.PLAIN))
    assert sheet.totals(0) == (100,)
    assert sheet.over
    assert sheet.winner == 0


def test_record_checks_its_arguments() -> None:
    sheet = HollywoodScore()
    with pytest.raises(ValueError, match="seat"):
        sheet.record(2, 10)
    with pytest.raises(ValueError, match="negative"):
        sheet.record(0, -1)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 60)), max_size=40))
def test_sheet_invariants(wins: list[tuple[int, int]]) -> None:
    sheet = HollywoodScore()
    for seat, points in wins:
        if sheet.over:
            break
        before = [sheet.totals(0), sheet.totals(1)]
        games = sheet.record(seat, points)
        # Entries go into a non-empty run of consecutive games, never into an ended one.
        assert list(games) == list(range(games[0], games[0] + len(games)))
        for game in range(3):
            delta = sheet.totals(seat)[game] - before[seat][game]
            assert delta == (points if game in games else 0)
        assert sheet.totals(1 - seat) == before[1 - seat]
    for seat in (0, 1):
        first, second, third = sheet.totals(seat)
        assert first >= second >= third or sheet.games_over[0]
    # Games end in order.
    assert list(sheet.games_over) == sorted(sheet.games_over, reverse=True)
