"""Small samples say what they know (issue 32): a sweep's exact bound counts every series of its
pairs, and is wrong at most 2.5% of the time; a pairing reads better, worse, undecided or too
few pairs; one vocabulary (W-L-D, score, draws, pairs ratio, the LLR's % of its bound) in the
tables, ``gin match`` and the JSON."""

from __future__ import annotations

import json
import random

import pytest

from tests.test_standings_pairwise import row
from tournaments.cli.match import summary_line
from tournaments.cli.render import pairwise_grid, standings_grid
from tournaments.headtohead import match_config, match_report
from tournaments.runner import PairTally
from tournaments.stats.inference import elo_from_score, score_estimate
from tournaments.stats.sprt import SprtSettings, SprtStatus, Verdict
from tournaments.stats.standings import compute
from tournaments.store import ResultRow


def pairs_of(
    first: str, second: str, legs: list[tuple[int, int]], margin: int = 100, tag: str = ""
) -> list[ResultRow]:
    """Duplicate pairs of ``first`` against ``second``: each leg 1 if ``first`` won it, 0 if it
    lost; the winner of a leg takes ``margin`` points more."""
    rows = []
    for index, (one, two) in enumerate(legs):
        mid = f"{tag}{first}{second}{index}"
        points = (margin + 10, 10) if one else (10, margin + 10)
        rows.append(row(mid, (first, second), 0 if one else 1, points))
        back = (10, margin + 10) if two else (margin + 10, 10)
        rows.append(row(f"{mid}r", (second, first), 1 if two else 0, back, mid))
    return rows


def cells(grid_rows: tuple[tuple[str, ...], ...], columns: list[str], heading: str) -> list[str]:
    return [line[columns.index(heading)] for line in grid_rows]


# --- a sweep ------------------------------------------------------------------------------------


def test_a_sweep_of_four_pairs_reads_better_not_may_be_72_weaker() -> None:
    """8-0 in 4 pairs: the bound counts the 8 series (0.025^(1/8): +93), not the 4 pairs as if
    each were one trial (0.025^(1/4): -72, "greedy may be 72 Elo weaker")."""
    standings = compute("t", pairs_of("a", "b", [(1, 1)] * 4))
    pair = next(p for p in standings.pairwise if p.bot == "a")
    assert pair.elo_low == pytest.approx(elo_from_score(0.025 ** (1 / 8)), abs=0.1)
    assert pair.elo_low is not None
    assert pair.elo_low > 90
    assert pair.los == round(1 - 0.5**8, 4)
    assert pair.reading == "better"
    grid = pairwise_grid(standings)
    columns = [heading for heading, _ in grid.columns]
    assert cells(grid.rows, columns, "Elo diff (95% CI)") == [">= +93 (all won)"]
    assert cells(grid.rows, columns, "series W-L-D") == ["8-0-0"]
    assert cells(grid.rows, columns, "at 95%") == ["better"]
    assert cells(grid.rows, columns, "pairs ratio") == ["inf"]


@pytest.mark.parametrize("pairs", [2, 4, 8])
def test_a_sweeps_bound_is_wrong_at_most_2_5_percent_of_the_time(pairs: int) -> None:
    """Simulated: pairs whose legs are won independently with chance ``s`` (the worst case the
    bound allows: mirrored deals only make the legs' results less alike), at true strengths
    just under, at and above where the bound turns wrong. P(a sweep whose ``>=`` is above the
    true Elo) stays at most 2.5% (a bound from one-sided 95%, 0.05, reaches 4-5%)."""
    rng = random.Random(pairs)
    trials = 40_000
    turn = 0.025 ** (1 / (2 * pairs))  # below this s, a sweep's bound is above the truth
    for s in (0.99 * turn, 0.96 * turn, 0.9 * turn, turn + 0.02, 0.8):
        truth = elo_from_score(s)
        wrong = 0
        for _ in range(trials):
            if all(rng.random() < s for _ in range(2 * pairs)):  # every series won
                bound = score_estimate([1.0] * pairs, series=2 * pairs).elo_low
                assert bound is not None
                wrong += bound > truth
        assert wrong / trials <= 0.025 + 0.003, (pairs, s, wrong / trials)


def test_a_bots_bound_counts_every_series_of_its_pairs() -> None:
    """A bot that won all 8 series of 4 pairs: its ``>=`` is wrong only where winning all 8
    had a chance of at most 2.5% (two bots: the bot's centred rating is half the gap)."""
    a = next(bot for bot in compute("t", pairs_of("a", "b", [(1, 1)] * 4)).bots if bot.bot == "a")
    assert (a.rating_bound, a.rating_high) == ("lower", None)
    assert a.rating_low is not None
    assert a.rating_low == pytest.approx(elo_from_score(0.025 ** (1 / 8)) / 2, abs=0.1)
    for gap in range(0, 1201, 5):
        chance = (1 / (1 + 10 ** (-gap / 400))) ** 8
        assert not gap / 2 < a.rating_low or chance <= 0.025 + 1e-9, (gap, chance)


def test_a_winless_bot_is_marked_and_its_bound_is_below_the_field() -> None:
    """Four bots: d lost every series. Its cell says ``<=`` and ``lost all``, and its bound is
    below every other bot's estimate (the bound that counted pairs as one trial was not)."""
    rows = (
        pairs_of("a", "b", [(1, 0), (1, 1), (0, 1), (1, 0)])
        + pairs_of("a", "c", [(1, 1), (1, 0), (1, 0), (0, 1)])
        + pairs_of("b", "c", [(1, 0), (0, 1), (1, 1), (0, 0)])
        + [result for bot in "abc" for result in pairs_of(bot, "d", [(1, 1)] * 4)]
    )
    standings = compute("t", rows)
    grid = standings_grid(standings)
    columns = [heading for heading, _ in grid.columns]
    last = grid.rows[-1]
    assert last[columns.index("bot")] == "d"
    assert last[columns.index("Elo")].startswith("<= ")
    assert last[columns.index("95% CI")] == "lost all"
    assert last[columns.index("score")] == "0%"
    d = standings.bots[-1]
    assert d.rating_high is not None
    assert all(d.rating_high < bot.rating for bot in standings.bots[:-1])


# --- readings -----------------------------------------------------------------------------------


def test_too_few_pairs_undecided_split_and_series_only_read_so() -> None:
    few = compute("t", pairs_of("a", "b", [(1, 0), (1, 1), (0, 1)]))
    assert next(p for p in few.pairwise if p.bot == "a").reading == "too few pairs (3 of 4)"
    even = compute("t", pairs_of("a", "b", [(1, 0), (0, 1), (1, 0), (0, 1)]))
    assert next(p for p in even.pairwise if p.bot == "a").reading == "undecided"
    # a wins every series of 4 pairs, but not on points: +30, -20, +10, -25 a pair
    points = [(60, 30), (40, 60), (50, 40), (30, 55)]
    swept = []
    for index, (mine, theirs) in enumerate(points):
        swept.append(row(f"s{index}", ("a", "b"), 0, (mine, 0)))
        swept.append(row(f"s{index}r", ("b", "a"), 1, (theirs, 0), f"s{index}"))
    pair = next(p for p in compute("t", swept).pairwise if p.bot == "a")
    assert (pair.elo_bound, pair.reading) == ("lower", "better (series only)")


def test_a_match_says_what_its_pairs_show_from_as_side() -> None:
    rows = pairs_of("b@1", "a@1", [(0, 0)] * 4)  # the results list b first: a won all
    config = match_config("m", ("a@1", "b@1"), 4, None, 2, None)
    report = match_report(config, PairTally("a@1", rows), None, None)
    assert report.record == (8, 0, 0)
    assert report.reading_line() == "8-0 (4 pairs, all won): better at 95%"
    assert report.to_dict()["series_won"] == 8
    # the standings' pairwise row of the same league, from a's side (the definition's first)
    grid = pairwise_grid(compute("m", rows), config.bots)
    columns = [heading for heading, _ in grid.columns]
    assert cells(grid.rows, columns, "bot") == ["a@1"]
    assert cells(grid.rows, columns, "series W-L-D") == ["8-0-0"]
    assert cells(pairwise_grid(compute("m", rows)).rows, columns, "bot") == ["a@1"]  # a < b
    flipped = pairwise_grid(compute("m", rows), ("b@1", "a@1"))
    assert cells(flipped.rows, columns, "bot") == ["b@1"]


def test_the_llr_is_shown_as_a_percentage_of_its_bound() -> None:
    decided = SprtStatus(2.96, -2.944, 2.944, Verdict.H1, 90)
    assert round(decided.percent, 1) == 100.5
    assert SprtStatus(-1.472, -2.944, 2.944, None, 30).percent == pytest.approx(50.0)
    rows = pairs_of("a@1", "b@1", [(1, 1), (1, 0), (0, 1), (1, 1)])
    config = match_config("m", ("a@1", "b@1"), 8, SprtSettings(0.0, 20.0), 2, None)
    report = match_report(config, PairTally("a@1", rows), decided, 100)
    assert "LLR +2.96 (100.5%) [-2.94, +2.94]" in summary_line(report)
    assert report.to_dict()["llr_percent"] == 100.5


# --- one vocabulary ----------------------------------------------------------------------------


def test_counts_are_integers_in_json_and_the_ratios_are_there() -> None:
    rows = pairs_of("a", "b", [(1, 1), (1, 0), (0, 0), (1, 1), (1, 1)])
    rows.append(row("x", ("a", "b"), None, (50, 50)))  # a lone drawn series
    document = json.loads(json.dumps(compute("t", rows).to_dict()))
    a = next(bot for bot in document["bots"] if bot["bot"] == "a")
    assert (a["series_won"], a["series_lost"], a["series_drawn"]) == (7, 3, 1)
    assert all(type(a[key]) is int for key in ("series_won", "series_lost", "series_drawn"))
    assert a["score"] == round(7.5 / 11, 4)
    pair = next(p for p in document["pairwise"] if p["bot"] == "a")
    assert (pair["wins"], pair["losses"], pair["draws"]) == (7, 3, 1)
    assert all(type(pair[key]) is int for key in ("wins", "losses", "draws"))
    assert pair["draw_ratio"] == round(1 / 11, 4)
    assert pair["pentanomial"] == [1, 0, 1, 0, 3]
    assert pair["pairs_ratio"] == 3.0  # 3 pairs won, 1 lost
    grid = standings_grid(compute("t", rows))
    columns = [heading for heading, _ in grid.columns]
    assert cells(grid.rows, columns, "series W-L-D") == ["7-3-1", "3-7-1"]
    assert cells(grid.rows, columns, "score") == ["68%", "32%"]
