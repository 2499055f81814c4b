"""The sequential test of ``gin match`` (``tournaments.stats.sprt``): error rates, length, and what
it saves on strong against greedy.

    python -m benchmarks.sprt_bench [--runs R] [--pairs P] [--jobs J] [--seed S] [--json FILE]

(a) Synthetic pairs. Pair outcomes are drawn from a pentanomial model: a symmetric shape at Elo 0
(``BASE``: 6% 0-2, 22% 0.5-1.5, 44% 1-1, 22%, 6%; a pair score's standard deviation 0.24),
exponentially tilted until its mean pair score is that of the true Elo. At each true Elo the
test (``elo0=0, elo1=20, alpha=beta=0.05``) is run ``R`` times to its verdict; the figures are
the share of runs that accepted H1 and the mean and 90th percentile of the pairs it took, beside
the pairs a fixed-length test with the same alpha and beta needs (its n from the normal
approximation: ``((z(1-alpha) + z(1-beta)) sd / (s1 - s0))^2`` pairs, ``sd`` the pair score's
standard deviation at the true Elo).

(b) Strong against greedy. ``P`` duplicate pairs are played in-process with the sample policies
(``benchmarks.strength``, one process per job), and their pentanomial taken. Pairs are then drawn
from that empirical distribution to simulate ``R`` runs of ``gin match strong greedy`` with the
test ``elo0=0, elo1=50`` (is strong better by a clear margin?), and compared with the fixed-length
test of the same error rates; and the series needed to separate the two at 95% (a 95% interval
of the score that excludes one half, with 95% chance) by a fixed-length test, against the
sequential test ``elo0=0, elo1=Elo`` placed at the measured difference.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

from benchmarks.harness import environment
from benchmarks.strength import SeriesStats, run_tasks, series_seed
from referee.rules import SeriesState
from tournaments.stats.sprt import ELO_LIMIT, PAIR_SCORES, SprtRun, SprtSettings, Verdict, elo_score

BASE = (0.06, 0.22, 0.44, 0.22, 0.06)
"""The synthetic pentanomial at Elo 0: pairs split 1-1 are the commonest outcome."""

PAIR_CAP = 1_000_000
"""A run still undecided after this many pairs is counted as undecided (none ever was)."""


def tilted(base: Sequence[float], elo: float) -> list[float]:
    """``base`` exponentially tilted (``p_i ~ base_i e^(k x_i)``) to the mean pair score of
    ``elo``."""
    target = elo_score(elo)
    low, high = -60.0, 60.0
    weights = list(base)
    for _ in range(200):
        k = (low + high) / 2.0
        weights = [b * math.exp(k * x) for b, x in zip(base, PAIR_SCORES, strict=True)]
        mean = sum(w * x for w, x in zip(weights, PAIR_SCORES, strict=True)) / sum(weights)
        low, high = (k, high) if mean < target else (low, k)
    total = sum(weights)
    return [w / total for w in weights]


def spread(probabilities: Sequence[float]) -> tuple[float, float]:
    """The mean and standard deviation of the pair score under ``probabilities``."""
    mean = sum(p * x for p, x in zip(probabilities, PAIR_SCORES, strict=True))
    variance = sum(p * (x - mean) ** 2 for p, x in zip(probabilities, PAIR_SCORES, strict=True))
    return mean, math.sqrt(variance)


def run_once(
    rng: random.Random, cumulative: Sequence[float], settings: SprtSettings
) -> tuple[Verdict | None, int]:
    """One sequential test on pairs drawn from ``cumulative`` (cumulative outcome weights)."""
    run = SprtRun(settings)
    outcomes = range(len(PAIR_SCORES))
    for _ in range(PAIR_CAP):
        now = run.add(rng.choices(outcomes, cum_weights=cumulative)[0])
        if now.verdict is not None:
            return now.verdict, now.pairs
    return None, PAIR_CAP


Chunk = tuple[tuple[float, ...], dict[str, float], int, int]
"""(outcome probabilities, settings as a dict, seed, runs): what one worker call simulates."""


def run_chunk(chunk: Chunk) -> list[tuple[str | None, int]]:
    """``runs`` seeded runs of the test (a worker's share)."""
    probabilities, settings, seed, runs = chunk
    rng = random.Random(seed)
    cumulative = list(accumulate(probabilities))
    test = SprtSettings.from_dict(settings)
    results = []
    for _ in range(runs):
        verdict, pairs = run_once(rng, cumulative, test)
        results.append((None if verdict is None else verdict.value, pairs))
    return results


@dataclass
class Simulated:
    """What ``runs`` runs of the test did on one model."""

    true_elo: float
    runs: int
    accepted_h1: float
    """The share of runs that accepted H1."""
    undecided: int
    mean_pairs: float
    p90_pairs: int
    fixed_pairs: int
    """The pairs of the fixed-length test with the same alpha and beta at this model's spread."""


def fixed_length(settings: SprtSettings, sd: float) -> int:
    """Pairs a fixed-length one-sided test of ``elo0`` against ``elo1`` needs for the settings'
    alpha and beta, by the normal approximation, at a pair score spread ``sd``."""
    normal = statistics.NormalDist()
    z = normal.inv_cdf(1.0 - settings.alpha) + normal.inv_cdf(1.0 - settings.beta)
    gap = elo_score(settings.elo1) - elo_score(settings.elo0)
    return math.ceil((z * sd / gap) ** 2)


def percentile(values: Sequence[int], share: float) -> int:
    """The smallest value at or above ``share`` of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def simulate(
    probabilities: Sequence[float],
    settings: SprtSettings,
    true_elo: float,
    *,
    runs: int,
    seed: int,
    jobs: int,
) -> Simulated:
    """``runs`` runs of the test on pairs drawn from ``probabilities``, over ``jobs`` processes."""
    shares = [runs // jobs + (1 if j < runs % jobs else 0) for j in range(jobs)]
    chunks: list[Chunk] = [
        (tuple(probabilities), settings.to_dict(), seed * 1000 + j, share)
        for j, share in enumerate(shares)
        if share
    ]
    with multiprocessing.Pool(len(chunks)) as pool:
        results = [result for part in pool.map(run_chunk, chunks) for result in part]
    pairs = [n for _, n in results]
    return Simulated(
        true_elo=true_elo,
        runs=runs,
        accepted_h1=sum(v == Verdict.H1.value for v, _ in results) / runs,
        undecided=sum(v is None for v, _ in results),
        mean_pairs=statistics.fmean(pairs),
        p90_pairs=percentile(pairs, 0.9),
        fixed_pairs=fixed_length(settings, spread(probabilities)[1]),
    )


def synthetic(runs: int, seed: int, jobs: int) -> dict[str, object]:
    """Part (a): the test at several true Elos on the synthetic model."""
    settings = SprtSettings(elo0=0.0, elo1=20.0)
    rows = []
    for index, elo in enumerate((-20.0, 0.0, 10.0, 20.0, 40.0)):
        row = simulate(tilted(BASE, elo), settings, elo, runs=runs, seed=seed + index, jobs=jobs)
        rows.append(asdict(row))
        print(
            f"true {elo:+.0f} Elo: H1 {row.accepted_h1:.1%}, pairs mean {row.mean_pairs:.0f}"
            f" p90 {row.p90_pairs} (fixed-length {row.fixed_pairs})",
            file=sys.stderr,
        )
    return {"model": list(BASE), "settings": settings.to_dict(), "rows": rows}


def pair_outcome(pair: Sequence[SeriesStats]) -> int:
    """Side A's outcome index (its series score in the pair, times two) in one played pair."""
    total = sum(0.5 if leg.winner is None else float(leg.winner == 0) for leg in pair)
    return round(2 * total)


def dealing() -> str:
    """The dealing rule ``play_series`` used (by seat, from the shuffle, if the rules have it)."""
    parameter = inspect.signature(SeriesState).parameters.get("dealing")
    if parameter is None:
        return "relative to the dealer (no seat-dealing rule in referee.rules)"
    return f"{parameter.default} (referee.rules.SeriesState's default)"


def strong_greedy(pairs: int, runs: int, seed: int, jobs: int) -> dict[str, object]:
    """Part (b): play strong against greedy, then resample its pairs through the test."""
    tasks = [("strong", "greedy", i, series_seed(seed, i)) for i in range(pairs)]
    started = time.monotonic()
    played = sorted(run_tasks(tasks, jobs), key=lambda item: item[0][2])
    seconds = time.monotonic() - started
    outcomes = [pair_outcome(legs) for _, legs in played]
    counts = [outcomes.count(i) for i in range(len(PAIR_SCORES))]
    probabilities = [c / pairs for c in counts]
    mean, sd = spread(probabilities)
    elo = -400.0 * math.log10(1.0 / mean - 1.0) if 0.0 < mean < 1.0 else math.inf
    print(f"strong-greedy: {counts}, score {mean:.3f}, {elo:+.0f} Elo", file=sys.stderr)

    big_gap = SprtSettings(elo0=0.0, elo1=50.0)
    sprt = simulate(probabilities, big_gap, elo, runs=runs, seed=seed + 100, jobs=jobs)
    played_run = SprtRun(big_gap)
    decided_at = None
    for outcome in outcomes:
        if played_run.add(outcome).verdict is not None:
            decided_at = played_run.counts
            break

    normal = statistics.NormalDist()
    two_sided, power = normal.inv_cdf(0.975), normal.inv_cdf(0.95)
    separate_pairs = math.ceil(((two_sided + power) * sd / max(mean - 0.5, 1e-9)) ** 2)
    # The test placed at the measured difference (this needs A ahead: strong is, by far).
    at_measured = SprtSettings(elo0=0.0, elo1=float(round(min(max(elo, 1.0), ELO_LIMIT))))
    sprt_measured = simulate(probabilities, at_measured, elo, runs=runs, seed=seed + 200, jobs=jobs)
    return {
        "dealing": dealing(),
        "pairs_played": pairs,
        "seconds_to_play": round(seconds, 1),
        "pentanomial": counts,
        "score": mean,
        "pair_score_sd": sd,
        "elo": elo if math.isfinite(elo) else None,
        "sprt": {"settings": big_gap.to_dict(), **asdict(sprt)},
        "sprt_series_mean": 2 * sprt.mean_pairs,
        "sprt_series_p90": 2 * sprt.p90_pairs,
        "fixed_series": 2 * sprt.fixed_pairs,
        "played_sequence_decided_after_pairs": None if decided_at is None else sum(decided_at),
        "separate_at_95": {
            "fixed_series": 2 * separate_pairs,
            "note": "series for a 95% interval of the score to exclude 0.5 with 95% chance",
            "sprt": {"settings": at_measured.to_dict(), **asdict(sprt_measured)},
            "sprt_series_mean": 2 * sprt_measured.mean_pairs,
            "sprt_series_p90": 2 * sprt_measured.p90_pairs,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run both parts and print (or write) the figures as JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sprt_bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=2000, help="test runs per figure")
    parser.add_argument("--pairs", type=int, default=300, help="strong-greedy pairs to play")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=2024, help="base seed (default 2024)")
    parser.add_argument("--skip-play", action="store_true", help="part (a) only")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.pairs < 1 or args.jobs < 1 or args.seed < 0:
        parser.error("--runs, --pairs and --jobs must be at least 1, --seed non-negative")
    report: dict[str, object] = {
        "command": "python -m benchmarks.sprt_bench "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "environment": environment(),
        "synthetic": synthetic(args.runs, args.seed, args.jobs),
    }
    if not args.skip_play:
        report["strong_greedy"] = strong_greedy(args.pairs, args.runs, args.seed, args.jobs)
    text = json.dumps(report, indent=2)
    if args.json is None:
        print(text)
    else:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
