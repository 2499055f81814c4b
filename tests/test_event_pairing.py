"""Swiss and knockout pairings on hand-made result sequences (issue 33): every round of a Swiss,
its byes and forced repeats, the Buchholz tie-break, a bracket's seeding, byes and winners."""

from __future__ import annotations

import itertools

import pytest

from tournaments.events import (
    Tie,
    TieResult,
    bracket_order,
    knockout_round,
    knockout_rounds,
    swiss_round,
    swiss_table,
)
from tournaments.events.swiss import SEARCH_BUDGET

SIX = ["a", "b", "c", "d", "e", "f"]


def won(first: str, second: str) -> TieResult:
    """A tie of two series that ``first`` won both of."""
    return TieResult(Tie(first, second), 2, 2.0, 50)


def lost(first: str, second: str) -> TieResult:
    return TieResult(Tie(first, second), 2, 0.0, -50)


def drawn(first: str, second: str, margin: int = 0) -> TieResult:
    return TieResult(Tie(first, second), 2, 1.0, margin)


def play(seeds: list[str], rounds: int) -> list[list[TieResult]]:
    """A Swiss played out: the better seed wins every tie (byes as they come)."""
    played: list[list[TieResult]] = []
    for _ in range(rounds):
        ties = swiss_round(seeds, played)
        results = []
        for tie in ties:
            if tie.second is None:
                results.append(TieResult(tie))
            elif seeds.index(tie.first) < seeds.index(tie.second):
                results.append(won(tie.first, tie.second))
            else:
                results.append(lost(tie.first, tie.second))
        played.append(results)
    return played


def test_every_round_of_a_swiss_of_six() -> None:
    """Round by round: the first pairs by seed, each later one by score, then seed, no repeat."""
    played: list[list[TieResult]] = []
    assert swiss_round(SIX, played) == (Tie("a", "b"), Tie("c", "d"), Tie("e", "f"))
    played.append([won("a", "b"), drawn("c", "d"), lost("e", "f")])
    # scores: a 1, f 1, c 0.5, d 0.5, b 0, e 0
    assert swiss_round(SIX, played) == (Tie("a", "f"), Tie("c", "b"), Tie("d", "e"))
    played.append([won("a", "f"), won("c", "b"), won("d", "e")])
    # scores: a 2, c 1.5, d 1.5, f 1, b 0, e 0; c and d met, so c meets f, d meets b
    assert swiss_round(SIX, played) == (Tie("a", "c"), Tie("d", "f"), Tie("b", "e"))


def test_backtracking_avoids_a_repeat_further_down() -> None:
    """Top down without looking ahead would leave d and e, who met, to each other: the search
    goes back and pairs c with e instead of a."""
    played = [
        [lost("a", "b"), won("c", "d"), lost("e", "f")],
        [drawn("b", "c"), lost("f", "a"), drawn("d", "e")],
    ]
    # b 1.5, c 1.5, a 1, f 1, d 0.5, e 0.5; b met c and a, so b-f; then c-a would leave d-e
    assert swiss_round(SIX, played) == (Tie("b", "f"), Tie("c", "e"), Tie("a", "d"))


def test_no_repeat_while_avoidable() -> None:
    """Five rounds of six bots: a round robin, every pairing once."""
    played = play(SIX, 5)
    met = [frozenset(r.tie.bots()) for round_ in played for r in round_]
    assert len(met) == len(set(met)) == 15


def test_forced_repeat_once_every_pairing_was_played() -> None:
    """Four bots, a fourth round: every pairing met once, so repeats are forced, and taken
    with the fewest meetings, top down."""
    seeds = ["a", "b", "c", "d"]
    played = play(seeds, 3)
    assert {frozenset(r.tie.bots()) for round_ in played for r in round_} == {
        frozenset(p) for p in itertools.combinations(seeds, 2)
    }
    assert swiss_round(seeds, played) == (Tie("a", "b"), Tie("c", "d"))


def test_a_bye_goes_to_the_lowest_ranked_without_one_and_counts_as_a_win() -> None:
    seeds = ["a", "b", "c", "d", "e"]
    first = swiss_round(seeds, [])
    assert first == (Tie("a", "b"), Tie("c", "d"), Tie("e"))
    played = [[won("a", "b"), won("c", "d"), TieResult(Tie("e"))]]
    # a 1, c 1, e 1 (bye), b 0, d 0: d is the lowest ranked without a bye
    second = swiss_round(seeds, played)
    assert second[-1] == Tie("d")
    assert second[:-1] == (Tie("a", "c"), Tie("e", "b"))
    table = {line.bot: line for line in swiss_table(seeds, played)}
    assert table["e"].score == 1.0
    assert table["e"].byes == 1
    assert table["e"].buchholz == 0.0


def test_every_bot_gets_one_bye_before_any_gets_two() -> None:
    seeds = ["a", "b", "c", "d", "e"]
    played = play(seeds, 5)
    byes = [r.tie.first for round_ in played for r in round_ if r.tie.bye]
    assert sorted(byes) == seeds
    nxt = swiss_round(seeds, played)
    assert nxt[-1].bye
    assert nxt[-1].first == swiss_table(seeds, played)[-1].bot


def test_buchholz_breaks_a_tie_of_score() -> None:
    """c and d both score 1; d met a (2) and c (1), c met d (1) and b (0): d ranks above c,
    though c is the better seed."""
    seeds = ["a", "b", "c", "d"]
    played = [[won("a", "b"), lost("c", "d")], [won("a", "d"), won("c", "b")]]
    table = swiss_table(seeds, played)
    assert [(line.bot, line.score, line.buchholz) for line in table] == [
        ("a", 2.0, 1.0),
        ("d", 1.0, 3.0),
        ("c", 1.0, 1.0),
        ("b", 0.0, 3.0),
    ]
    assert table[1].opponents == ("a", "c")


def test_the_pairing_is_a_pure_function_of_the_results_before_it() -> None:
    """The same results give the same round, whatever the order the results are handed over
    in within a round."""
    played = play(SIX, 3)
    again = [list(reversed(round_)) for round_ in played]
    assert swiss_round(SIX, played) == swiss_round(SIX, again) == swiss_round(list(SIX), played)


def test_a_search_that_runs_out_falls_back_to_fewest_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Method 1: with no budget the repeat-free search gives up at once: the round is still
    paired, top down, each with the least-met bot."""
    monkeypatch.setattr("tournaments.events.swiss.SEARCH_BUDGET", 0)
    played = [[won("a", "b"), won("c", "d"), won("e", "f")]]
    assert swiss_round(SIX, played, method=1) == (Tie("a", "c"), Tie("e", "b"), Tie("d", "f"))
    assert SEARCH_BUDGET > 1000


def test_a_swiss_refuses_a_field_of_one() -> None:
    with pytest.raises(ValueError, match="at least two"):
        swiss_round(["a"], [])
    with pytest.raises(ValueError, match="at least two"):
        swiss_round(["a", "a"], [])


def test_bracket_order_keeps_the_top_seeds_apart() -> None:
    assert bracket_order(2) == [1, 2]
    assert bracket_order(4) == [1, 4, 2, 3]
    order = bracket_order(16)
    assert sorted(order) == list(range(1, 17))
    assert order.index(1) < 8 <= order.index(2)  # 1 and 2 in different halves
    quarters = [set(order[i : i + 4]) for i in range(0, 16, 4)]
    assert all(len(quarter & {1, 2, 3, 4}) == 1 for quarter in quarters)
    for pair in zip(order[::2], order[1::2], strict=True):
        assert sum(pair) == 17  # 1 v 16, 8 v 9, ...
    with pytest.raises(ValueError, match="power of two"):
        bracket_order(6)


def test_byes_go_to_the_top_seeds() -> None:
    seeds = [f"s{n}" for n in range(1, 7)]  # six: a bracket of eight, two byes
    first = knockout_round(seeds, [])
    assert first == (Tie("s1"), Tie("s4", "s5"), Tie("s2"), Tie("s3", "s6"))
    assert knockout_rounds(6) == 3


def test_a_knockout_to_its_end() -> None:
    seeds = [f"s{n}" for n in range(1, 7)]
    played: list[list[TieResult]] = []
    first = knockout_round(seeds, played)
    played.append(
        [TieResult(first[0]), lost("s4", "s5"), TieResult(first[2]), drawn("s3", "s6", -4)]
    )
    second = knockout_round(seeds, played)
    assert second == (Tie("s1", "s5"), Tie("s2", "s6"))  # the better seed first
    played.append([lost("s1", "s5"), drawn("s2", "s6")])  # level margin: the better seed
    final = knockout_round(seeds, played)
    assert final == (Tie("s2", "s5"),)
    played.append([won("s2", "s5")])
    assert knockout_round(seeds, played) == ()


def test_a_knockout_refuses_rounds_it_did_not_pair() -> None:
    with pytest.raises(ValueError, match="not the one the bracket pairs"):
        knockout_round(["a", "b", "c", "d"], [[won("a", "b"), won("c", "d")]])
    with pytest.raises(ValueError, match="at least two"):
        knockout_round(["a"], [])


def test_an_undecided_tie_goes_by_margin_then_seed() -> None:
    assert drawn("a", "b", margin=-1).winner() == "b"
    assert drawn("a", "b", margin=1).winner() == "a"
    assert drawn("a", "b", margin=0).winner() == "a"
    assert TieResult(Tie("a", "b"), 4, 2.5, -100).winner() == "a"  # series first, then margin
