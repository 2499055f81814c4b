"""The t distribution and the per-pairing estimate of ``tournaments.stats.inference``, against
scipy."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats  # type: ignore[import-untyped]  # dev only; never skipped

from tournaments.stats.inference import (
    MIN_UNITS,
    PRIOR_VARIANCE,
    elo_from_score,
    mean_estimate,
    score_estimate,
    score_from_elo,
    t_cdf,
    t_quantile,
)
from tournaments.stats.pairs import PairOutcome
from tournaments.stats.standings import fit_ratings

DFS = (1, 2, 3, 4, 5, 7, 10, 15, 30, 60, 120, 1000)
PS = (0.0005, 0.005, 0.025, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.975, 0.995, 0.9995)


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_and_cdf_match_scipy(df: int) -> None:
    for p in PS:
        expected = float(stats.t.ppf(p, df))
        assert t_quantile(p, df) == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert t_cdf(expected, df) == pytest.approx(p, rel=1e-9)
    for t in (-50.0, -6.0, -2.5, -1.0, -0.1, 0.0, 0.3, 1.7, 3.0, 12.0, 80.0):
        assert t_cdf(t, df) == pytest.approx(float(stats.t.cdf(t, df)), rel=1e-9, abs=1e-15)


def test_elo_and_score_are_inverse() -> None:
    for elo in (-800.0, -191.0, 0.0, 35.5, 400.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)
    assert score_from_elo(400) == pytest.approx(10 / 11)


def test_mean_interval_is_scipy_t_interval() -> None:
    values = [12.0, -40.0, 7.0, 55.0, 31.0, -3.0]
    estimate = mean_estimate(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=estimate.mean, scale=stats.sem(values))
    assert (estimate.low, estimate.high) == pytest.approx((low, high))
    assert mean_estimate(values[:3]).low is None  # from 4 units up


def test_los_and_elo_interval_agree() -> None:
    """LOS > 97.5% exactly when the Elo interval's lower end is above 0 (and the mirror)."""
    rng = random.Random(7)
    for _ in range(3000):
        n = rng.randrange(MIN_UNITS, 30)
        edge = rng.random()
        scores = [
            rng.choice((0.0, 0.25, 0.5, 0.75, 1.0)) if rng.random() < edge else 1.0
            for _ in range(n)
        ]
        estimate = score_estimate(scores)
        assert estimate.los is not None
        low, high = estimate.elo_interval
        assert (estimate.los > 0.975) == (low > 0), scores
        assert (estimate.los < 0.025) == (high < 0), scores


def test_an_unbeaten_pairing_is_a_bound() -> None:
    estimate = score_estimate([1.0] * 6)
    assert estimate.bound == "lower"
    assert estimate.elo is None
    assert estimate.elo_high is None
    assert estimate.elo_low == pytest.approx(elo_from_score(0.025 ** (1 / 6)))
    assert estimate.los == 1 - 0.5**6
    winless = score_estimate([0.0] * 6)
    assert winless.bound == "upper"
    assert winless.elo_high == pytest.approx(-estimate.elo_low)  # type: ignore[operator]
    assert math.isclose(winless.los or 0, 0.5**6)
    assert score_estimate([1.0] * 3).los == 1 - 0.5**3  # exact from one unit: no t needed


def test_a_pairings_interval_uses_the_t_quantile_of_its_units() -> None:
    """Not 1.96: at six units the half-width is t(5) times the standard error (the mutation
    to the normal quantile passed every coverage test, so the quantile itself is pinned)."""
    scores = [1.0, 0.5, 0.5, 0.0, 1.0, 0.5]
    estimate = score_estimate(scores)
    n, mean = len(scores), sum(scores) / len(scores)
    se = math.sqrt((sum((x - mean) ** 2 for x in scores) + PRIOR_VARIANCE) / n / n)
    high = mean + stats.t.ppf(0.975, n - 1) * se
    assert estimate.elo_high is not None
    assert estimate.elo_high == pytest.approx(elo_from_score(high), rel=1e-6)
    assert estimate.los == pytest.approx(stats.t.cdf((mean - 0.5) / se, n - 1), rel=1e-6)


def test_rating_intervals_use_the_t_quantile_of_the_fits_degrees_of_freedom() -> None:
    units = [PairOutcome("a", "b", (1.0, 0.0), 5)] * 3 + [PairOutcome("a", "b", (1.0, 1.0), 9)]
    units += [PairOutcome("a", "b", (0.0, 0.0), -9)]
    ratings = fit_ratings(units, ["a", "b"])
    assert ratings.df == 4  # five units, two bots
    rating, low, high = ratings.rating("a")
    half = stats.t.ppf(0.975, ratings.df) * math.sqrt(ratings.covariance[0][0])
    assert (high - rating) == pytest.approx(half, rel=1e-6)
    assert (rating - low) == pytest.approx(half, rel=1e-6)
