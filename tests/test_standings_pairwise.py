"""Per pairing: the pair is the unit; LOS is calibrated, the margin interval covers; the
crosstable, JSON and CSV views."""

from __future__ import annotations

import csv
import io
import json
import math
import random
from typing import Any

import pytest

from tournaments.stats.inference import mean_estimate, score_estimate, score_from_elo
from tournaments.stats.standings import compute
from tournaments.store import ResultRow

# --- LOS with no real difference ---------------------------------------------------------------


def null_pairs(rng: random.Random, n: int, cancel: float) -> list[tuple[float, float]]:
    """``n`` duplicate pairs of equal bots: the legs' luck mirrored with probability ``cancel``
    (luck cancels), or, for ``cancel`` < 0, the same with probability ``-cancel`` (it doubles)."""
    pairs = []
    for _ in range(n):
        first, second = rng.random(), rng.random()
        if rng.random() < abs(cancel):
            second = 1 - first if cancel > 0 else first
        pairs.append((float(first < 0.5), float(second < 0.5)))
    return pairs


def per_series_los(pairs: list[tuple[float, float]]) -> float:
    """The LOS the standings showed before: both legs as independent series."""
    wins = sum(leg for pair in pairs for leg in pair)
    losses = 2 * len(pairs) - wins
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))


@pytest.mark.parametrize("cancel", [0.3, 0.0, -0.6])
def test_los_above_95_percent_comes_up_5_percent_of_the_time_with_no_difference(
    cancel: float,
) -> None:
    rng = random.Random(f"los/{cancel}")
    trials = high = old_high = 0
    for n in (10, 20, 40):
        for _ in range(2000):
            pairs = null_pairs(rng, n, cancel)
            los = score_estimate([sum(pair) / 2 for pair in pairs]).los
            assert los is not None
            high += los > 0.95
            old_high += per_series_los(pairs) > 0.95
            trials += 1
    assert 0.035 <= high / trials <= 0.065, f"P(LOS > 95%) = {high / trials:.1%}"
    if cancel != 0.0:  # the per-series LOS is off whenever the legs are correlated
        assert not 0.035 <= old_high / trials <= 0.065, f"per series: {old_high / trials:.1%}"


# --- the margin's interval ---------------------------------------------------------------------


def heavy(rng: random.Random) -> float:
    """Student's t with 3 degrees of freedom, scaled: heavy tails, mean 0."""
    return 60 * rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 2 / 3))


def lopsided(rng: random.Random) -> float:
    """Mostly near the middle, now and then a big series one way: skewed, mean 0."""
    return rng.gauss(20, 60) if rng.random() < 0.8 else rng.gauss(-80, 150)


@pytest.mark.parametrize("n", [4, 8, 16])
@pytest.mark.parametrize("draw", [heavy, lopsided])
def test_margin_interval_covers_95_percent(n: int, draw: Any) -> None:
    rng = random.Random(f"margin/{n}/{draw.__name__}")
    trials = 6000
    hits = 0
    for _ in range(trials):
        found = mean_estimate([draw(rng) for _ in range(n)])
        assert found.low is not None
        assert found.high is not None
        hits += found.low <= 0 <= found.high
    assert 0.93 <= hits / trials <= 0.97, f"covered {hits / trials:.1%}"


# --- the standings of a league -----------------------------------------------------------------


def row(
    match_id: str,
    seats: tuple[str, str],
    winner: int | None,
    points: tuple[int, int],
    duplicate_of: str | None = None,
) -> ResultRow:
    """A result of one series (the figures the standings read)."""
    summary = {
        "seats": list(seats),
        "winner": winner,
        "end": "complete" if winner is not None else "hand_cap",
        "forfeited": [],
        "totals": [[0, 0, 0], [0, 0, 0]],
        "game_winners": [winner] * 3,
        "hands": 3,
        "faults": [],
        "duplicate_of": duplicate_of,
        "stats": [{"decisions": 1, "mean_ms": 1.0, "max_ms": 1.0}] * 2,
        "hand_stats": [{"points": points[0]}, {"points": points[1]}],
    }
    end = "complete" if winner is not None else "hand_cap"
    return ResultRow.from_stored(match_id, "t", winner, end, "", summary, "")


def duplicate_league(rng: random.Random, pairs: int) -> list[ResultRow]:
    """Three bots, ``pairs`` duplicate pairs per pairing, a stronger than b stronger than c."""
    strength = {"a": 0.7, "b": 0.5, "c": 0.3}
    rows = []
    for first, second in (("a", "b"), ("a", "c"), ("b", "c")):
        p = 0.5 + strength[first] - strength[second]
        for index in range(pairs):
            mid = f"{first}{second}{index}"
            legs = [rng.random() < p, rng.random() < p]
            margins = [rng.randrange(-50, 150), rng.randrange(-50, 150)]
            rows.append(row(mid, (first, second), 0 if legs[0] else 1, (margins[0] + 50, 50)))
            rows.append(
                row(mid + "r", (second, first), 1 if legs[1] else 0, (50, margins[1] + 50), mid)
            )
    return rows


def test_the_pair_is_the_unit_and_los_agrees_with_the_elo_interval() -> None:
    rng = random.Random(11)
    for pairs in (2, 4, 6, 12):
        standings = compute("t", duplicate_league(rng, pairs))
        for pair in standings.pairwise:
            assert (pair.series, pair.units) == (2 * pairs, pairs)
            assert pair.pentanomial is not None
            assert sum(pair.pentanomial) == pairs
            if pairs < 4:  # no t interval; a sweep's exact bound is given from one pair
                assert (pair.los is None) == (pair.elo_bound is None)
                assert pair.margin_low is None
                continue
            assert pair.los is not None
            assert pair.margin_low is not None
            if pair.elo_bound is None:
                assert pair.elo_low is None or (pair.los > 0.975) == (pair.elo_low > 0)
                assert pair.elo_high is None or (pair.los < 0.025) == (pair.elo_high < 0)
        opposite = {(p.bot, p.opponent): p for p in standings.pairwise}
        for pair in standings.pairwise:
            other = opposite[pair.opponent, pair.bot]
            assert pair.score + other.score == pytest.approx(1)
            assert pair.margin == pytest.approx(-(other.margin or 0))


def test_unbeaten_bot_and_pairing_are_bounds() -> None:
    rows = [  # a wins 8 series of 8, by 90 points each, no duplicate pairs
        row(f"m{i}", ("a", "b"), 0, (100, 10))
        if i % 2 == 0
        else row(f"m{i}", ("b", "a"), 1, (10, 100))
        for i in range(8)
    ]
    standings = compute("t", rows)
    a, b = standings.bots
    assert (a.bot, a.rating_bound, a.rating_high) == ("a", "lower", None)
    assert (b.bot, b.rating_bound, b.rating_low) == ("b", "upper", None)
    pair = next(p for p in standings.pairwise if p.bot == "a")
    assert (pair.units, pair.pentanomial, pair.elo_bound, pair.elo) == (8, None, "lower", None)
    assert pair.elo_low is not None
    assert pair.elo_low > 0  # 8 series won of 8, unpaired
    assert pair.los == round(1 - 0.5**8, 4)
    assert (pair.margin, pair.margin_low) == (90, 90)


@pytest.mark.parametrize("series", [8, 16, 40])
def test_an_unbeaten_bots_bound_is_wrong_at_most_2_5_percent_of_the_time(series: int) -> None:
    """Two bots, ``series`` lone series all won by a: the ``>=`` shown must be wrong (above a's
    true centred rating, half the true gap) with probability at most 2.5%, whatever the gap.
    That probability is P(a wins them all) = p(gap)^n where the bound is wrong, 0 elsewhere; the
    bound the fit's prior gave was wrong 9-25% of the time (for 40-0 it said >= +293)."""
    rows = [row(f"m{i}", ("a", "b"), 0, (100, 10)) for i in range(series)]
    a = next(bot for bot in compute("t", rows).bots if bot.bot == "a")
    assert (a.rating_bound, a.rating_high) == ("lower", None)
    assert a.rating_low is not None
    for gap in range(0, 1201, 5):
        wrong = gap / 2 < a.rating_low
        chance = score_from_elo(gap) ** series
        assert not wrong or chance <= 0.025 + 1e-9, (gap, a.rating_low, chance)
    pair = next(p for p in compute("t", rows).pairwise if p.bot == "a")
    assert (pair.rating_diff_low, pair.rating_diff_high) == (pair.elo_low, None)


def test_crosstable_json_and_csv() -> None:
    standings = compute("t", duplicate_league(random.Random(3), 4))
    grid = standings.crosstable()
    assert grid.bots == tuple(bot.bot for bot in standings.bots)
    document = json.loads(json.dumps(standings.to_dict()))
    cross = document["crosstable"]
    assert cross["bots"] == list(grid.bots)
    for i, first in enumerate(grid.bots):
        assert cross["score"][i][i] is None
        for j, second in enumerate(grid.bots):
            if i != j:
                cell = grid.cell(first, second)
                assert cell is not None
                assert cross["score"][i][j] == cell.score
                assert cross["units"][i][j] == 4
    assert {"los", "elo", "elo_low", "margin", "pentanomial", "rating_diff"} <= set(
        document["pairwise"][0]
    )
    rows = list(csv.DictReader(io.StringIO(standings.pairwise_csv())))
    assert len(rows) == 6  # ordered pairings of three bots
    top = standings.pairwise[0]
    assert rows[0]["bot"] == top.bot
    assert float(rows[0]["score"]) == top.score
    assert top.pentanomial is not None
    assert [int(rows[0][f"penta_{k}"]) for k in range(5)] == list(top.pentanomial)


def test_a_league_with_no_results_yet_has_empty_standings() -> None:
    standings = compute("t", [])
    assert (standings.bots, standings.pairwise, standings.crosstable().bots) == ([], [], ())
    assert json.loads(json.dumps(standings.to_dict()))["crosstable"]["score"] == []
    assert standings.pairwise_csv().startswith("bot,opponent,series,units,")


def test_a_few_units_on_their_expectation_do_not_give_intervals_of_width_zero() -> None:
    rows = []
    for index in range(2):  # two pairs, each split: every series score is what the fit expects
        rows.append(row(f"m{index}", ("a", "b"), 0, (60, 40)))
        rows.append(row(f"m{index}r", ("b", "a"), 0, (60, 40), f"m{index}"))
    a = next(bot for bot in compute("t", rows).bots if bot.bot == "a")
    assert a.rating_low is not None
    assert a.rating_high is not None
    assert a.rating_high - a.rating_low > 100
