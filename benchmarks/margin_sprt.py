"""The margin test of ``gin match --statistic margin`` (``tournaments.stats.margin_sprt``): its
error rates on awkward margins, its length beside the pentanomial test on real pairs, and the
estimates after a stop before and after the correction (``tournaments.stats.stopping``).

    python -m benchmarks.margin_sprt [--runs R] [--pairs FILE] [--play N] [--seed S]
                                     [--json FILE] [--quick]

(a) Error rates. Margins are drawn with effect (mean over sd) ``effect0`` (H0) and ``effect1``
(H1) from shapes of unit variance: normal; Student's t with 3 degrees of freedom (heavy
tails); gammas of skew 0.5 and 1 and an exponential (skew 2), each also mirrored (skew -0.5,
-1, -2); a lognormal (skew 6, heavy right tail); and the real strong-greedy margins (skew -0.2),
centred and scaled. Each is tested ``R`` times to its verdict (cap 2000
pairs): alpha is the share of H0 runs that accepted H1, beta of H1 runs that accepted H0.

(b) Real pairs. ``FILE`` holds played strong-greedy pairs (each its score and margin; ``--play
N`` plays N of them in-process first, ``benchmarks.strength.play_pair``, and saves them). A bot
weaker than strong by a known amount is made by flipping each resampled pair to the opponent's
side with chance ``q``: the pair score and the margin shrink together (by ``1 - 2q``), keeping
their joint shape, and ``q = 0.5`` is no difference at all. The pentanomial test ``elo0 = 0,
elo1 = Elo(q1)`` and the margin test ``effect0 = 0, effect1 = effect(q1)`` (each H1 at the same
bot: strong itself, ``q1 = 0``, and a weakened one, ``q1 = 3/8``, a quarter of strong's lead)
are run ``R`` times at ``q = 0.5`` (H0) and ``q = q1`` (H1): their error rates and mean pairs
to a decision. The ratio's interval is the range over 40 bootstrap resamples of the played
pairs (each run ``R / 5`` times): about a 95% interval.

(c) After a stop. Margin tests (normal margins) and pentanomial tests (the real pairs, flipped)
run to a decision at a true difference between their hypotheses and at H1; the estimate of the
pairs seen (fixed-length) and the corrected one are compared with the truth: mean bias, median
bias, and how often the 95% intervals hold the truth.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tournaments.stats.margin_sprt import MarginRun, MarginSettings
from tournaments.stats.pairs import PairOutcome
from tournaments.stats.sprt import SprtRun, SprtSettings, SprtStatus, Verdict
from tournaments.stats.stopping import corrected_estimates

CAP = 2000
"""Pairs at most of a run (``gin match``'s default cap)."""
Q1 = 0.375
"""The flip chance of the weakened bot at H1 of (b) and (c): a quarter of strong's lead."""
FLIPS = (0.0, Q1)
"""The flip chances at H1 of (b): strong itself, and the weakened bot."""

Pair = tuple[float, float]
"""A played pair: the first bot's score (0 to 1) and its margin (points)."""
Draw = Callable[[random.Random], float]


def _student3(rng: random.Random) -> float:
    normal = rng.gauss(0.0, 1.0)
    chi = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
    return normal / math.sqrt(chi / 3.0) / math.sqrt(3.0)


def _exponential(rng: random.Random) -> float:
    return rng.expovariate(1.0) - 1.0


def _gamma16(rng: random.Random) -> float:
    """Skew 0.5."""
    return (rng.gammavariate(16.0, 1.0) - 16.0) / 4.0


def _gamma4(rng: random.Random) -> float:
    """Skew 1."""
    return (rng.gammavariate(4.0, 1.0) - 4.0) / 2.0


_LOGNORMAL_MEAN = math.exp(0.5)
_LOGNORMAL_SD = math.sqrt((math.e - 1.0) * math.e)


def _lognormal(rng: random.Random) -> float:
    return (rng.lognormvariate(0.0, 1.0) - _LOGNORMAL_MEAN) / _LOGNORMAL_SD


def shapes(real: Sequence[float]) -> dict[str, Draw]:
    """The unit-variance, zero-mean draws of (a); ``real``: margins to centre and resample."""
    mean, sd = statistics.fmean(real), statistics.pstdev(real)
    standard = [(x - mean) / sd for x in real]
    return {
        "normal": lambda rng: rng.gauss(0.0, 1.0),
        "t3": _student3,
        "gamma16": _gamma16,
        "-gamma16": lambda rng: -_gamma16(rng),
        "gamma4": _gamma4,
        "-gamma4": lambda rng: -_gamma4(rng),
        "exponential": _exponential,
        "-exponential": lambda rng: -_exponential(rng),
        "lognormal": _lognormal,
        "real": lambda rng: rng.choice(standard),
    }


def margin_run(
    rng: random.Random, draw: Callable[[random.Random], float], settings: MarginSettings
) -> tuple[Verdict | None, int]:
    """One margin test on margins from ``draw`` until it decides or the cap."""
    run = MarginRun(settings)
    for pairs in range(1, CAP + 1):
        verdict = run.add(draw(rng)).verdict
        if verdict is not None:
            return verdict, pairs
    return None, CAP


def pentanomial_run(
    rng: random.Random, draw: Callable[[random.Random], float], settings: SprtSettings
) -> tuple[Verdict | None, int]:
    """One pentanomial test on pair scores from ``draw`` until it decides or the cap."""
    run = SprtRun(settings)
    for pairs in range(1, CAP + 1):
        verdict = run.add(round(4 * draw(rng))).verdict
        if verdict is not None:
            return verdict, pairs
    return None, CAP


@dataclass(frozen=True)
class Rates:
    """A test's runs at one truth."""

    runs: int
    accepted_h1: float
    accepted_h0: float
    undecided: float
    mean_pairs: float
    p90_pairs: int


def rates(outcomes: Sequence[tuple[Verdict | None, int]]) -> Rates:
    """The shares of each verdict and the pairs taken."""
    n = len(outcomes)
    lengths = sorted(pairs for _, pairs in outcomes)
    return Rates(
        n,
        sum(v is Verdict.H1 for v, _ in outcomes) / n,
        sum(v is Verdict.H0 for v, _ in outcomes) / n,
        sum(v is None for v, _ in outcomes) / n,
        statistics.fmean(lengths),
        lengths[min(n - 1, int(0.9 * n))],
    )


def error_rates(
    real: Sequence[float], settings: MarginSettings, runs: int, seed: int
) -> dict[str, dict[str, Rates]]:
    """(a): for each shape, the runs at H0 and at H1."""
    report: dict[str, dict[str, Rates]] = {}
    for index, (name, draw) in enumerate(shapes(real).items()):
        rng = random.Random(seed + index)
        found = {}
        for label, effect in (("H0", settings.effect0), ("H1", settings.effect1)):

            def shifted(r: random.Random, d: Draw = draw, e: float = effect) -> float:
                return e + d(r)

            found[label] = rates([margin_run(rng, shifted, settings) for _ in range(runs)])
        report[name] = found
    return report


def flipped(population: Sequence[Pair], q: float) -> Callable[[random.Random], Pair]:
    """A resampled pair, turned to the opponent's side with chance ``q``."""

    def draw(rng: random.Random) -> Pair:
        score, margin = rng.choice(population)
        return (1.0 - score, -margin) if rng.random() < q else (score, margin)

    return draw


def population_truth(population: Sequence[Pair], q: float) -> tuple[float, float, float]:
    """The flipped population's Elo difference, mean margin and effect."""
    shrink = 1.0 - 2.0 * q
    score = 0.5 + shrink * (statistics.fmean(s for s, _ in population) - 0.5)
    mean = shrink * statistics.fmean(m for _, m in population)
    square = statistics.fmean(m * m for _, m in population)
    return _elo(score), mean, mean / math.sqrt(square - mean * mean)


def _elo(score: float) -> float:
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class RealComparison:
    """(b): both tests on the (weakened) strong bot against greedy."""

    q1: float
    elo1: float
    effect1: float
    margin1: float
    pentanomial: dict[str, Rates]
    margin: dict[str, Rates]
    ratio_h0: float
    ratio_h1: float
    ratio_h0_ci: tuple[float, float]
    ratio_h1_ci: tuple[float, float]


def _both(
    population: Sequence[Pair],
    settings: tuple[SprtSettings, MarginSettings],
    runs: int,
    rng: random.Random,
    q1: float,
) -> dict[str, tuple[Rates, Rates]]:
    """Both tests at H0 and at H1 of (b), on one population."""
    found = {}
    for label, q in (("H0", 0.5), ("H1", q1)):
        draw = flipped(population, q)

        def score(r: random.Random, d: Callable[[random.Random], Pair] = draw) -> float:
            return d(r)[0]

        def margin(r: random.Random, d: Callable[[random.Random], Pair] = draw) -> float:
            return d(r)[1]

        scores = [pentanomial_run(rng, score, settings[0]) for _ in range(runs)]
        margins = [margin_run(rng, margin, settings[1]) for _ in range(runs)]
        found[label] = (rates(scores), rates(margins))
    return found


def real_comparison(population: Sequence[Pair], runs: int, seed: int, q1: float) -> RealComparison:
    """(b) at H1 ``q1``, with its bootstrap intervals."""
    rng = random.Random(seed)
    elo1, margin1, effect1 = population_truth(population, q1)
    settings = (SprtSettings(0.0, round(elo1, 1)), MarginSettings(0.0, round(effect1, 3)))
    main = _both(population, settings, runs, rng, q1)
    ratios: dict[str, list[float]] = {"H0": [], "H1": []}
    for _ in range(40):
        sample = rng.choices(population, k=len(population))
        for label, (score, margin) in _both(sample, settings, max(20, runs // 5), rng, q1).items():
            ratios[label].append(score.mean_pairs / margin.mean_pairs)
    for values in ratios.values():
        values.sort()
    return RealComparison(
        q1,
        settings[0].elo1,
        settings[1].effect1,
        margin1,
        {label: pair[0] for label, pair in main.items()},
        {label: pair[1] for label, pair in main.items()},
        main["H0"][0].mean_pairs / main["H0"][1].mean_pairs,
        main["H1"][0].mean_pairs / main["H1"][1].mean_pairs,
        (ratios["H0"][0], ratios["H0"][-1]),  # the range of the 40 bootstrap populations
        (ratios["H1"][0], ratios["H1"][-1]),
    )


@dataclass(frozen=True)
class StopFigures:
    """(c): a test stopped again and again at one truth."""

    test: str
    truth: float
    """The true effect (margin test) or Elo difference (pentanomial test)."""
    runs: int
    naive_mean_bias: float
    corrected_mean_bias: float
    naive_median_bias: float
    corrected_median_bias: float
    naive_coverage: float
    corrected_coverage: float


def _units(pairs: Sequence[Pair]) -> list[PairOutcome]:
    return [
        PairOutcome("a", "b", (s, s), round(m)) if s in (0.0, 0.5, 1.0) else _odd(s, m)
        for s, m in pairs
    ]


def _odd(score: float, margin: float) -> PairOutcome:
    """A pair of score 0.25 or 0.75 (a win or a loss, and a draw)."""
    return PairOutcome("a", "b", (score * 2 - 0.5, 0.5), round(margin))


def stopped_runs(  # noqa: PLR0917 - a simulation's settings
    test: str,
    truth: float,
    draw: Callable[[random.Random], Pair],
    settings: object,
    runs: int,
    rng: random.Random,
) -> StopFigures:
    """Run a test to its decision ``runs`` times; compare both estimates with ``truth``."""
    naive: list[float] = []
    corrected: list[float] = []
    naive_hits = corrected_hits = 0
    done = 0
    while done < runs:
        pairs: list[Pair] = []
        stop = _run_to_stop(draw, settings, rng, pairs)
        if stop is None:
            continue
        found = corrected_estimates(_units(pairs), settings, stop)  # type: ignore[arg-type]
        if found is None:
            continue
        done += 1
        if isinstance(settings, MarginSettings):
            margins = [m for _, m in pairs]
            sd = statistics.pstdev(margins)
            mean = statistics.fmean(margins)
            half = 1.959964 * statistics.stdev(margins) / math.sqrt(len(margins))
            naive.append(mean / sd)
            corrected.append(found.effect)
            naive_hits += (mean - half) / sd <= truth <= (mean + half) / sd
            low = -math.inf if found.margin_low is None else found.margin_low
            high = math.inf if found.margin_high is None else found.margin_high
            corrected_hits += low / sd <= truth <= high / sd
        else:
            scores = [s for s, _ in pairs]
            mean = statistics.fmean(scores)
            half = 1.959964 * statistics.stdev(scores) / math.sqrt(len(scores))
            naive.append(_elo(min(max(mean, 1e-3), 1 - 1e-3)))
            assert found.elo is not None  # None only when every pair went one way
            corrected.append(found.elo)
            low, high = (_elo(min(max(v, 1e-3), 1 - 1e-3)) for v in (mean - half, mean + half))
            naive_hits += low <= truth <= high
            low = -math.inf if found.elo_low is None else found.elo_low
            high = math.inf if found.elo_high is None else found.elo_high
            corrected_hits += low <= truth <= high
    return StopFigures(
        test,
        truth,
        runs,
        statistics.fmean(naive) - truth,
        statistics.fmean(corrected) - truth,
        statistics.median(naive) - truth,
        statistics.median(corrected) - truth,
        naive_hits / runs,
        corrected_hits / runs,
    )


def _run_to_stop(
    draw: Callable[[random.Random], Pair], settings: object, rng: random.Random, pairs: list[Pair]
) -> SprtStatus | None:
    """Play pairs into ``pairs`` until the test decides (``None``: the cap first)."""
    margin_run_ = MarginRun(settings) if isinstance(settings, MarginSettings) else None
    score_run = SprtRun(settings) if isinstance(settings, SprtSettings) else None
    for _ in range(CAP):
        pair = draw(rng)
        pairs.append(pair)
        if margin_run_ is not None:
            now = margin_run_.add(pair[1])
        else:
            assert score_run is not None
            now = score_run.add(round(4 * pair[0]))
        if now.verdict is not None:
            return now
    return None


def stop_figures(population: Sequence[Pair], runs: int, seed: int) -> list[StopFigures]:
    """(c) at the hypotheses' midpoint and at H1, for both tests."""
    rng = random.Random(seed)
    margin_settings = MarginSettings(0.0, 0.3)
    found = []
    for effect in (0.15, 0.3):

        def normal(r: random.Random, e: float = effect) -> Pair:
            return 0.5, e + r.gauss(0.0, 1.0)

        found.append(stopped_runs("margin", effect, normal, margin_settings, runs, rng))
    for q in (0.4375, Q1):
        elo, _, _ = population_truth(population, q)
        settings = SprtSettings(0.0, round(population_truth(population, Q1)[0], 1))
        found.append(stopped_runs("pentanomial", elo, flipped(population, q), settings, runs, rng))
    return found


def play(count: int, path: Path, seed: int) -> list[Pair]:
    """Play ``count`` strong-greedy pairs in-process (one process) and save them."""
    from benchmarks.pair_power import unit_margin, unit_score  # noqa: PLC0415 - only to play
    from benchmarks.strength import run_tasks, series_seed  # noqa: PLC0415

    started = time.monotonic()
    tasks = [("strong", "greedy", i, series_seed(seed, i)) for i in range(count)]
    played = {task[2]: pair for task, pair in run_tasks(tasks, 1)}
    pairs = [(unit_score(played[i]), unit_margin(played[i])) for i in range(count)]
    document = {
        "matchup": ["strong", "greedy"],
        "seed": seed,
        "seconds": time.monotonic() - started,
        "pairs": [list(pair) for pair in pairs],
    }
    path.write_text(json.dumps(document) + "\n")
    return pairs


def load(path: Path) -> list[Pair]:
    """Pairs saved by :func:`play`.

    Raises:
        ValueError: not such a file.
    """
    try:
        data = json.loads(path.read_text())
        return [(float(score), float(margin)) for score, margin in data["pairs"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a file of played pairs ({error})") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures as JSON (and write them, if asked)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.margin_sprt")
    parser.add_argument("--runs", type=int, default=2000, help="runs per hypothesis (2000)")
    parser.add_argument(
        "--pairs",
        type=Path,
        default=Path("/tmp/margin_pairs_strong_greedy.json"),
        help="played strong-greedy pairs (JSON)",
    )
    parser.add_argument("--play", type=int, metavar="N", help="play N pairs into --pairs first")
    parser.add_argument("--stops", type=int, default=400, help="runs per truth of (c) (400)")
    parser.add_argument("--seed", type=int, default=31, help="base seed (31)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures")
    parser.add_argument("--part", choices=("a", "b", "c"), action="append", help="only these")
    args = parser.parse_args(argv)
    if args.runs < 10 or args.stops < 10:
        parser.error("--runs and --stops must be at least 10")
    try:
        population = play(args.play, args.pairs, args.seed) if args.play else load(args.pairs)
    except ValueError as error:
        parser.error(str(error))
    parts = set(args.part or ("a", "b", "c"))
    started = time.monotonic()
    report: dict[str, object] = {"pairs": len(population), "runs": args.runs}
    if "a" in parts:
        settings = MarginSettings(0.0, 0.3)
        found = error_rates([m for _, m in population], settings, args.runs, args.seed)
        report["error_rates"] = {
            "settings": settings.to_dict(),
            "shapes": {k: {h: asdict(r) for h, r in v.items()} for k, v in found.items()},
        }
        print(json.dumps(report["error_rates"]), flush=True)
    if "b" in parts:
        report["real"] = [
            asdict(real_comparison(population, args.runs, args.seed, q1)) for q1 in FLIPS
        ]
        print(json.dumps(report["real"]), flush=True)
    if "c" in parts:
        report["stops"] = [asdict(f) for f in stop_figures(population, args.stops, args.seed)]
        print(json.dumps(report["stops"]), flush=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        document = {"argv": sys.argv[1:] if argv is None else list(argv), **report}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
