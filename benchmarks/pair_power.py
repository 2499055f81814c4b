"""Which per-pair statistic separates two bots sooner: the series score or the point margin?

    python -m benchmarks.pair_power [--pairs N] [--jobs J] [--seed S] [--matchup A:B ...]
                                    [--json FILE]

Plays duplicate pairs of the sample policies in-process (``benchmarks.strength.play_pair``: the
same series seed with A in seat 0, then in seat 1) and, per pair, takes the two statistics the
standings can show for a pairing:

* the *score*: A's share of the pair's two series (0, 0.25, 0.5, 0.75 or 1, the pentanomial
  view), tested against 0.5;
* the *margin*: A's hand points minus B's over both series, tested against 0.

Their standardized effect sizes ``d = (mean - null) / sd`` per pair say how many pairs a test
needs: a t test reaches a given z after about ``(z / d)^2`` pairs, so ``(d_margin / d_score)^2``
is how many times fewer pairs the margin needs than the score (the relative efficiency; its 95%
interval is a percentile bootstrap over pairs).

It also resamples the played pairs, ``n`` at a time, to measure how often the standings' 95% t
intervals (``tournaments.stats.inference``) hold the mean of all the played pairs at n = 4, 8 and
16: the coverage on the real, skewed and heavy-tailed distributions of those statistics.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.harness import usable_cpus
from benchmarks.strength import SeriesStats, Task, parse_matchup, run_tasks, series_seed
from tournaments.stats.inference import mean_estimate, score_estimate

MATCHUPS: tuple[tuple[str, str], ...] = (("strong", "greedy"), ("greedy", "patient"))
SIZES: tuple[int, ...] = (4, 8, 16)
RESAMPLES = 4000


@dataclass(frozen=True)
class PairFigures:
    """A matchup's per-pair statistics and how well each separates the two policies."""

    a: str
    b: str
    pairs: int
    score_mean: float
    score_sd: float
    margin_mean: float
    margin_sd: float
    margin_skewness: float
    margin_excess_kurtosis: float
    d_score: float
    d_margin: float
    efficiency: float
    """``(d_margin / d_score)^2``: how many times fewer pairs the margin needs."""
    efficiency_ci: tuple[float, float]
    score_coverage: dict[int, float]
    """Pairs resampled n at a time: how often the score's 95% t interval holds the mean."""
    margin_coverage: dict[int, float]


def unit_score(pair: Sequence[SeriesStats]) -> float:
    """A's share of the pair's series (a series with no winner counts half)."""
    return statistics.fmean(0.5 if s.winner is None else float(s.winner == 0) for s in pair)


def unit_margin(pair: Sequence[SeriesStats]) -> float:
    """A's hand points minus B's over the pair's series."""
    return float(sum(s.points[0] - s.points[1] for s in pair))


def effect(values: Sequence[float], null: float) -> float:
    """``(mean - null) / sd``."""
    sd = statistics.stdev(values)
    return (statistics.fmean(values) - null) / sd if sd else math.inf


def moments(values: Sequence[float]) -> tuple[float, float]:
    """Sample skewness and excess kurtosis."""
    mean, sd = statistics.fmean(values), statistics.pstdev(values)
    if not sd:
        return 0.0, 0.0
    skew = statistics.fmean(((v - mean) / sd) ** 3 for v in values)
    kurt = statistics.fmean(((v - mean) / sd) ** 4 for v in values) - 3
    return skew, kurt


def coverage(values: Sequence[float], n: int, rng: random.Random, scores: bool) -> float:
    """Resampling n pairs at a time: the share of 95% t intervals holding the mean of all."""
    truth = statistics.fmean(values)
    hits = 0
    for _ in range(RESAMPLES):
        sample = rng.choices(values, k=n)
        if scores:
            low, high = score_estimate(sample).elo_interval
            centre = 400 * math.log10(truth / (1 - truth))
        else:
            found = mean_estimate(sample)
            low, high, centre = found.low or 0.0, found.high or 0.0, truth
        hits += low <= centre <= high
    return hits / RESAMPLES


def efficiency_interval(
    scores: Sequence[float], margins: Sequence[float], rng: random.Random
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of ``(d_margin / d_score)^2`` over pairs."""
    ratios = []
    indices = range(len(scores))
    for _ in range(1000):
        picked = rng.choices(indices, k=len(scores))
        d_score = effect([scores[i] for i in picked], 0.5)
        d_margin = effect([margins[i] for i in picked], 0.0)
        ratios.append((d_margin / d_score) ** 2 if d_score else math.inf)
    ratios.sort()
    return ratios[25], ratios[974]


def figures(a: str, b: str, pairs: Sequence[Sequence[SeriesStats]], seed: int) -> PairFigures:
    """Every figure of one matchup."""
    rng = random.Random(seed)
    scores = [unit_score(pair) for pair in pairs]
    margins = [unit_margin(pair) for pair in pairs]
    d_score, d_margin = effect(scores, 0.5), effect(margins, 0.0)
    skew, kurt = moments(margins)
    return PairFigures(
        a=a,
        b=b,
        pairs=len(pairs),
        score_mean=statistics.fmean(scores),
        score_sd=statistics.stdev(scores),
        margin_mean=statistics.fmean(margins),
        margin_sd=statistics.stdev(margins),
        margin_skewness=skew,
        margin_excess_kurtosis=kurt,
        d_score=d_score,
        d_margin=d_margin,
        efficiency=(d_margin / d_score) ** 2,
        efficiency_ci=efficiency_interval(scores, margins, rng),
        score_coverage={n: coverage(scores, n, rng, scores=True) for n in SIZES},
        margin_coverage={n: coverage(margins, n, rng, scores=False) for n in SIZES},
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Play the matchups and print one JSON document per matchup (and the file, if asked)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pair_power")
    parser.add_argument("--pairs", type=int, default=300, help="pairs per matchup (300)")
    parser.add_argument("--jobs", type=int, default=usable_cpus() or 1, help="processes")
    parser.add_argument("--seed", type=int, default=2026, help="base seed (2026)")
    parser.add_argument("--matchup", type=parse_matchup, action="append", metavar="A:B")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures")
    args = parser.parse_args(argv)
    if args.pairs < 4 or args.jobs < 1:
        parser.error("--pairs must be at least 4 and --jobs at least 1")
    matchups = tuple(args.matchup or MATCHUPS)
    tasks: list[Task] = [
        (a, b, i, series_seed(args.seed, i)) for a, b in matchups for i in range(args.pairs)
    ]
    played: dict[tuple[str, str], dict[int, tuple[SeriesStats, ...]]] = {m: {} for m in matchups}
    for (a, b, index, _), pair in run_tasks(tasks, args.jobs):
        played[a, b][index] = pair
    report = []
    for a, b in matchups:
        pairs = [played[a, b][i] for i in sorted(played[a, b])]
        found = figures(a, b, pairs, args.seed)
        report.append(asdict(found))
        print(json.dumps(asdict(found)), flush=True)
    if args.json:
        document = {"argv": sys.argv[1:] if argv is None else list(argv), "matchups": report}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
