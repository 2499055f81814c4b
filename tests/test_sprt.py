"""The sequential test of ``gin match`` (``tournaments.stats.sprt``): its settings, its LLR against
the theory, and its error rates by simulation on synthetic pairs."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import accumulate

import pytest

from tournaments.stats.pairs import Pentanomial
from tournaments.stats.sprt import (
    EMPTY_CELL,
    PAIR_SCORES,
    SprtRun,
    SprtSettings,
    Verdict,
    elo_score,
    fit_mean,
    llr,
    llr_normal,
    status,
)

SHAPE = (0.06, 0.22, 0.44, 0.22, 0.06)
"""A realistic pentanomial at Elo 0: a 1-1 pair is the commonest outcome."""

SAMPLES: list[Pentanomial] = [
    (10, 40, 100, 60, 30),
    (30, 60, 100, 40, 10),
    (3, 11, 25, 9, 2),
    (0, 4, 9, 6, 1),
    (1, 0, 0, 0, 0),
    (0, 0, 7, 0, 0),
]


def tilted(elo: float) -> list[float]:
    """``SHAPE`` exponentially tilted to the mean pair score of ``elo`` (the true model)."""
    low, high = -60.0, 60.0
    weights = list(SHAPE)
    for _ in range(200):
        k = (low + high) / 2.0
        weights = [p * math.exp(k * x) for p, x in zip(SHAPE, PAIR_SCORES, strict=True)]
        mean = sum(w * x for w, x in zip(weights, PAIR_SCORES, strict=True)) / sum(weights)
        low, high = (k, high) if mean < elo_score(elo) else (low, k)
    return [w / sum(weights) for w in weights]


# --- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"elo0": math.nan, "elo1": 5.0}, "elo0"),
        ({"elo0": 0.0, "elo1": math.inf}, "elo1"),
        ({"elo0": 5.0, "elo1": 5.0}, "elo1"),
        ({"elo0": 0.0, "elo1": 5000.0}, "elo1"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.5}, "alpha"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": -0.1}, "beta"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": math.nan}, "beta"),
    ],
)
def test_settings_out_of_range_name_the_field(fields: dict[str, float], named: str) -> None:
    with pytest.raises(ValueError, match=named) as caught:
        SprtSettings(**fields)
    assert "\n" not in str(caught.value)


def test_bounds_are_walds() -> None:
    lower, upper = SprtSettings(elo0=0.0, elo1=5.0, alpha=0.05, beta=0.1).bounds
    assert lower == pytest.approx(math.log(0.1 / 0.95))
    assert upper == pytest.approx(math.log(0.9 / 0.05))


def test_settings_round_trip_through_a_dict() -> None:
    settings = SprtSettings(elo0=-1.5, elo1=3.0, alpha=0.1, beta=0.02)
    assert SprtSettings.from_dict(settings.to_dict()) == settings
    assert SprtSettings.from_dict({"elo0": 0, "elo1": 5}) == SprtSettings(0.0, 5.0)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"elo1": 5.0}, "elo0"),
        ({"elo0": 0.0, "elo1": "5"}, "elo1"),
        ({"elo0": True, "elo1": 5.0}, "elo0"),
        ({"elo0": 0.0, "elo1": 5.0, "gamma": 0.1}, "gamma"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": None}, "alpha"),
    ],
)
def test_bad_settings_dicts_are_refused(data: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        SprtSettings.from_dict(data)


@pytest.mark.parametrize("counts", [(1, 2, 3, 4), (1, 2, 3, 4, -1), (0, 0, 0, 0, 0, 0)])
def test_counts_that_are_not_a_pentanomial_are_refused(counts: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="pentanomial"):
        llr(counts, SprtSettings(0.0, 5.0))  # type: ignore[arg-type]


# --- the LLR against the theory -------------------------------------------------------------


def log_likelihood(frequencies: Sequence[float], model: Sequence[float]) -> float:
    return sum(f * math.log(p) for f, p in zip(frequencies, model, strict=True))


@pytest.mark.parametrize("counts", SAMPLES)
@pytest.mark.parametrize("elo", [-30.0, 0.0, 12.0, 200.0])
def test_the_fit_is_the_constrained_maximum_likelihood(counts: Pentanomial, elo: float) -> None:
    """The fit has the asked mean, and no distribution near it with the same total and mean
    (moved along a second difference of the equally spaced scores) is more likely."""
    cells = [c if c else EMPTY_CELL for c in counts]
    frequencies = [c / sum(cells) for c in cells]
    fitted = fit_mean(frequencies, elo_score(elo))
    assert sum(fitted) == pytest.approx(1.0, abs=1e-12)
    assert sum(p * x for p, x in zip(fitted, PAIR_SCORES, strict=True)) == pytest.approx(
        elo_score(elo), abs=1e-12
    )
    best = log_likelihood(frequencies, fitted)
    for start in range(3):
        for step in (1e-6, -1e-6):
            moved = list(fitted)
            for offset, weight in enumerate((1.0, -2.0, 1.0)):
                moved[start + offset] += step * weight
            if min(moved) > 0.0:
                assert log_likelihood(frequencies, moved) <= best + 1e-15


@pytest.mark.parametrize("counts", SAMPLES)
def test_the_llr_is_the_log_ratio_of_the_two_fits(counts: Pentanomial) -> None:
    settings = SprtSettings(elo0=-5.0, elo1=15.0)
    cells = [c if c else EMPTY_CELL for c in counts]
    frequencies = [c / sum(cells) for c in cells]
    fit0 = fit_mean(frequencies, elo_score(-5.0))
    fit1 = fit_mean(frequencies, elo_score(15.0))
    expected = sum(c * math.log(p1 / p0) for c, p0, p1 in zip(cells, fit0, fit1, strict=True))
    assert llr(counts, settings) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("counts", SAMPLES)
def test_mirrored_pairs_and_hypotheses_negate_the_llr(counts: Pentanomial) -> None:
    """Seen from the other bot, each pair's outcome and each hypothesis are mirrored: H0 and H1
    swap, and so does the sign of the LLR."""
    mirrored = (counts[4], counts[3], counts[2], counts[1], counts[0])
    here = llr(counts, SprtSettings(elo0=0.0, elo1=20.0))
    there = llr(mirrored, SprtSettings(elo0=-20.0, elo1=0.0))
    assert there == pytest.approx(-here, rel=1e-9, abs=1e-12)


def test_better_results_raise_the_llr() -> None:
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    assert llr((20, 40, 100, 40, 20), settings) < 0.0
    assert llr((10, 40, 100, 60, 30), settings) > 0.0
    assert llr((10, 40, 100, 60, 30), settings) < llr((10, 40, 90, 60, 40), settings)


def test_the_pair_is_the_unit() -> None:
    """The same series results (60 won, 40 lost) say more when the pairs were split 1-1 than
    when the luck stayed in the pair (the two legs won or lost together): counting the legs as
    independent series would give the two the same LLR."""
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    split = llr((0, 0, 40, 0, 10), settings)
    together = llr((20, 0, 0, 0, 30), settings)
    assert split > 2.0 * together > 0.0


def test_the_normal_approximation_is_close_for_a_small_gap() -> None:
    settings = SprtSettings(elo0=0.0, elo1=5.0)
    counts = (60, 230, 450, 240, 70)
    assert llr_normal(counts, settings) == pytest.approx(llr(counts, settings), rel=0.01)


def test_empty_outcomes_are_regularised() -> None:
    """A few pairs all of one outcome give a finite LLR of the right sign, not an infinity or a
    failure to fit (fishtest's small count for each empty cell)."""
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    assert -math.inf < llr((0, 0, 3, 0, 0), settings) < 0.0
    assert 0.0 < llr((0, 0, 0, 0, 1), settings) < math.inf
    assert -math.inf < llr((2, 0, 0, 0, 0), settings) < 0.0
    assert llr((0, 0, 0, 0, 0), settings) == 0.0


def test_status_reports_the_verdict_at_the_bounds() -> None:
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    assert status((0, 0, 0, 0, 0), settings).verdict is None
    better = status((10, 40, 100, 60, 30), settings)
    assert better.verdict is Verdict.H1
    assert better.llr >= better.upper
    assert better.pairs == 240
    worse = status((30, 60, 100, 40, 10), settings)
    assert worse.verdict is Verdict.H0
    assert worse.llr <= worse.lower


def test_a_run_pair_by_pair_matches_the_counts() -> None:
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    rng = random.Random(7)
    run = SprtRun(settings, counts=(1, 0, 2, 0, 0))
    for _ in range(300):
        now = run.add(rng.choices(range(5), weights=SHAPE)[0])
        direct = status(run.counts, settings)
        assert now.llr == pytest.approx(direct.llr, abs=1e-9)
        assert (now.verdict, now.pairs) == (direct.verdict, direct.pairs)
    with pytest.raises(ValueError, match="outcome"):
        run.add(5)


# --- error rates by simulation --------------------------------------------------------------

RUNS = 1000
"""Runs per hypothesis: at a 5% rate one standard error is 0.69 points, so +-2 is 2.9 of them."""


def accepted_h1(elo: float, settings: SprtSettings, seed: int) -> float:
    """The share of ``RUNS`` runs, pair by pair on pairs from ``tilted(elo)``, that ended
    accepting H1."""
    rng = random.Random(seed)
    cumulative = list(accumulate(tilted(elo)))
    outcomes = range(5)
    accepted = 0
    for _ in range(RUNS):
        run = SprtRun(settings)
        verdict = None
        while verdict is None:
            verdict = run.add(rng.choices(outcomes, cum_weights=cumulative)[0]).verdict
        accepted += verdict is Verdict.H1
    return accepted / RUNS


@pytest.mark.slow
def test_false_positives_and_power_are_nominal() -> None:
    """With the truth at elo0 the test accepts H1 in 5% +-2 of the runs; at elo1 in 95% +-2."""
    settings = SprtSettings(elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05)
    false_positives = accepted_h1(0.0, settings, seed=1)
    power = accepted_h1(20.0, settings, seed=2)
    assert 0.03 <= false_positives <= 0.07, false_positives
    assert 0.93 <= power <= 0.97, power
