"""The standings of large fields: above ``DENSE_FIT_MAX_BOTS`` bots the ratings come from a sparse
fit (the same ratings as the dense one) and their intervals from an estimate of the covariance,
which covers the truth as the exact one does.

``python -m tests.test_standings_scale --measure`` prints the coverage figures of
``docs/standings.md`` ("Large fields"), on more leagues than the tests play; the timings are
``python -m benchmarks.scale_bench --ratings-only``'s.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass

import pytest

from benchmarks.scale_bench import rated_results
from tournaments.stats import standings
from tournaments.stats.inference import score_from_elo
from tournaments.stats.pairs import PairOutcome
from tournaments.stats.standings import DENSE_FIT_MAX_BOTS, Ratings, compute, fit_ratings


def field(
    rng: random.Random, bots: int, pairs: int, *, band: int | None = None, cancel: float = 0.6
) -> tuple[list[float], list[PairOutcome]]:
    """True strengths (Elo, normal with sd 150, in strength order) and ``pairs`` duplicate
    pairs, each between a random bot and a random opponent (or one within ``band`` places of
    it, as a ladder pairs); with probability ``cancel`` a pair's second leg has the mirror of
    the first's luck (the legs' correlation is negative, as with duplicate deals)."""
    truth = sorted(rng.gauss(0.0, 150.0) for _ in range(bots))
    played = []
    for _ in range(pairs):
        i = rng.randrange(bots)
        if band is None:
            j = rng.randrange(bots - 1)
            j += j >= i
        else:
            j = min(bots - 1, max(0, i + rng.choice([k for k in range(-band, band + 1) if k])))
            j = j if j != i else (i - 1 if i else 1)
        p = score_from_elo(truth[i] - truth[j])
        luck = rng.random()
        other = 1 - luck if rng.random() < cancel else rng.random()
        played.append(PairOutcome(str(i), str(j), (float(luck < p), float(other < p)), 0))
    return truth, played


def variance_of_difference(ratings: Ratings, i: int, j: int) -> float:
    cov = ratings.covariance
    return cov[i][i] + cov[j][j] - 2 * cov[i][j]


@dataclass
class Coverage:
    """Shares of 95% intervals holding the truth: of each bot's centred rating, and of the
    rating differences of pairings that played."""

    ratings: float
    differences: float


def coverage(
    bots: int, pairs: int, leagues: int, *, band: int | None = None, seed: str = "scale"
) -> tuple[Coverage, Coverage]:
    """The coverage of the sparse fit's intervals and of the dense fit's, on the same leagues."""
    rng = random.Random(f"{seed}/{bots}/{pairs}/{band}")
    names = [str(i) for i in range(bots)]
    inside = {"sparse": [0, 0], "dense": [0, 0]}
    differences = 0
    for _ in range(leagues):
        truth, played = field(rng, bots, pairs, band=band)
        level = statistics.fmean(truth)
        met = sorted({(int(u.bot), int(u.opponent)) for u in played})[::7]
        differences += len(met)
        for path, limit in (("sparse", 0), ("dense", bots)):
            fitted = fit_ratings(played, names, dense_max_bots=limit)
            for i, name in enumerate(names):
                _, low, high = fitted.rating(name)
                inside[path][0] += low <= truth[i] - level <= high
            for i, j in met:
                _, low, high = fitted.difference(names[i], names[j])
                inside[path][1] += low <= truth[i] - truth[j] <= high
    sparse, dense = (
        Coverage(inside[path][0] / (leagues * bots), inside[path][1] / differences)
        for path in ("sparse", "dense")
    )
    return sparse, dense


def test_the_sparse_fit_gives_the_dense_ratings_and_close_intervals() -> None:
    _, played = field(random.Random(1), 60, 1500)
    names = [str(i) for i in range(60)]
    dense = fit_ratings(played, names)
    sparse = fit_ratings(played, names, dense_max_bots=59)
    assert not dense.approximate
    assert sparse.approximate
    assert max(abs(a - b) for a, b in zip(dense.elo, sparse.elo, strict=True)) < 1e-6
    assert (sparse.dispersion, sparse.df) == (dense.dispersion, dense.df)
    ratios = [sparse.covariance[i][i] / dense.covariance[i][i] for i in range(60)]
    assert max(abs(ratio - 1) for ratio in ratios) < 0.03, ratios
    met = {(int(u.bot), int(u.opponent)) for u in played}
    ratios = [
        variance_of_difference(sparse, i, j) / variance_of_difference(dense, i, j) for i, j in met
    ]
    assert max(abs(ratio - 1) for ratio in ratios) < 0.05
    assert abs(statistics.fmean(ratios) - 1) < 0.005


def test_the_intervals_of_a_ladder_are_close_to_the_exact_ones() -> None:
    """Bots that only meet bots near them in strength (within 4 places): the ratings far apart
    are tied by long chains of results, which the estimate's broad part carries; without it
    (the Neumann terms and probes only) the variances were off by 59% (sd) on such a field."""
    _, played = field(random.Random(2), 120, 3000, band=4)
    names = [str(i) for i in range(120)]
    dense = fit_ratings(played, names)
    sparse = fit_ratings(played, names, dense_max_bots=0)
    assert max(abs(a - b) for a, b in zip(dense.elo, sparse.elo, strict=True)) < 1e-6
    ratios = [sparse.covariance[i][i] / dense.covariance[i][i] for i in range(120)]
    assert statistics.pstdev(ratios) < 0.02
    assert max(abs(ratio - 1) for ratio in ratios) < 0.06
    met = {(int(u.bot), int(u.opponent)) for u in played}
    ratios = [
        variance_of_difference(sparse, i, j) / variance_of_difference(dense, i, j) for i, j in met
    ]
    assert statistics.pstdev(ratios) < 0.04
    assert abs(statistics.fmean(ratios) - 1) < 0.01


def test_the_estimate_is_the_same_for_the_same_results() -> None:
    _, played = field(random.Random(3), 40, 600)
    names = [str(i) for i in range(40)]
    first, second = (fit_ratings(played, names, dense_max_bots=0) for _ in range(2))
    assert [first.rating(name) for name in names] == [second.rating(name) for name in names]
    assert first.difference("3", "7") == second.difference("3", "7")


@pytest.mark.slow
def test_the_sparse_intervals_cover_95_percent_as_the_dense_ones() -> None:
    """64 bots, 800 duplicate pairs whose luck cancels (dispersion about 0.6), 16 leagues: the
    sparse path's 95% intervals cover 92-98% of the true centred ratings and rating
    differences, within a point of the dense path's on the same leagues."""
    sparse, dense = coverage(64, 800, 16)
    for found in (sparse, dense):
        assert 0.92 <= found.ratings <= 0.98, found
        assert 0.92 <= found.differences <= 0.98, found
    assert abs(sparse.ratings - dense.ratings) <= 0.01, (sparse, dense)
    assert abs(sparse.differences - dense.differences) <= 0.01, (sparse, dense)


def test_a_field_above_the_threshold_says_its_intervals_are_approximate() -> None:
    results = rated_results(DENSE_FIT_MAX_BOTS + 1, 20)
    table = compute("big", results)
    assert table.approximate
    assert table.to_dict()["approximate"] is True
    assert list(table.to_dict())[:3] == ["league", "series", "approximate"]
    small = compute("small", rated_results(DENSE_FIT_MAX_BOTS, 1))
    assert not small.approximate
    assert "approximate" not in small.to_dict()


def test_the_threshold_chooses_the_path_and_the_ratings_stay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results = rated_results(12, 60)
    exact = compute("small", results)
    monkeypatch.setattr(standings, "DENSE_FIT_MAX_BOTS", 11)
    estimated = compute("small", results)
    assert not exact.approximate
    assert estimated.approximate
    assert [line.bot for line in estimated.bots] == [line.bot for line in exact.bots]
    for ours, theirs in zip(estimated.bots, exact.bots, strict=True):
        assert math.isclose(ours.rating, theirs.rating, abs_tol=0.1 + 1e-9)
        assert ours.rating_low is not None
        assert ours.rating_high is not None
        assert theirs.rating_low is not None
        assert theirs.rating_high is not None
        width = ours.rating_high - ours.rating_low
        assert math.isclose(width, theirs.rating_high - theirs.rating_low, rel_tol=0.03)


def main() -> None:
    """Print the coverage of both paths on several kinds of field (``--measure``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="print the coverage figures")
    parser.add_argument("--leagues", type=int, default=60)
    args = parser.parse_args()
    if not args.measure:
        parser.print_help()
        return
    cases = [
        ("64 bots, 800 pairs, random opponents", 64, 800, None),
        ("150 bots, 3,000 pairs, random opponents", 150, 3000, None),
        ("120 bots, 3,000 pairs, a ladder (opponents within 4 places)", 120, 3000, 4),
    ]
    for what, bots, pairs, band in cases:
        start = time.perf_counter()
        sparse, dense = coverage(bots, pairs, args.leagues, band=band, seed="measure")
        print(
            f"{what}, {args.leagues} leagues: ratings sparse {sparse.ratings:.1%} dense "
            f"{dense.ratings:.1%}; differences sparse {sparse.differences:.1%} dense "
            f"{dense.differences:.1%} ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
