"""How much luck a duplicate pair cancels: the variance of a pair's outcome against that of two
independent series, under the old dealing (by dealer) and the new one (by seat), side by side.

    python -m benchmarks.duplicate_variance [--pairs N] [--jobs J] [--seed S] [--boot B]
        [--matchup A:B ...] [--json FILE]

For each pair index a series seed is derived from the base seed, and the two policies play that
series twice, A in seat 0 then A in seat 1, once under each :class:`referee.rules.Dealing`: four
series per index, in-process. Every statistic is taken from A's side, per series:

- ``score``: the series score, 1 for a win, 0.5 with no winner, 0 for a loss (what the ratings
  and the pair scores of the standings count);
- ``points``: the points of the hands A won minus those B won (the standings' paired margin);
- ``sheet``: A's Hollywood sheet totals minus B's, all games summed (a hand's points count in
  every game they were entered in);
- ``games``: games won minus games lost;
- ``hands``: hands won minus hands lost.

A pair's statistic is the sum over its two legs, ``X1 + X2``. Two independent series (other
seeds, the same seats) would give ``Var(X1) + Var(X2)``, the legs' variances estimated over all
pairs. The figure reported is ``ratio = Var(X1 + X2) / (Var(X1) + Var(X2))``: below 1 the pair
cancels luck, 1 is no better than independent series, above 1 the legs' luck adds up. Its 95%
interval is the percentile bootstrap over pairs (``--boot`` resamples, seeded).

The report also counts, over the hand numbers played in both legs of a pair, how often a bot held
the same ten cards in both legs (a replica, luck counted twice) and how often each bot held in
leg 2 the cards its opponent held in leg 1 (a mirror).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.harness import (
    PairTask,
    environment,
    loadavg,
    matchup_parser,
    play_pairs,
    usable_cpus,
    write_report,
)
from referee.rules import (
    CardSet,
    Dealing,
    GreedyPolicy,
    Policy,
    SeriesResult,
    SeriesState,
    observation,
)
from sample_bots.strong.strategy import StrongPolicy

STATISTICS = ("score", "points", "sheet", "games", "hands")
"""The per-series statistics, from A's side (see the module's docstring)."""

STANDINGS_STATISTIC = "score"
"""The statistic the standings rate bots by."""

GOAL = 0.7
"""Issue 16's goal for the ratio of the standings' statistic."""

POLICIES: dict[str, Callable[[], Policy]] = {
    "strong": StrongPolicy,
    "greedy": lambda: GreedyPolicy(knock_at=10),
    "patient": lambda: GreedyPolicy(knock_at=4),
}
"""Policy factories by name; every series gets fresh instances. All are deterministic."""

MATCHUPS: tuple[tuple[str, str], ...] = (("strong", "greedy"), ("greedy", "patient"))
"""Strong against greedy, and the closer greedy against patient. Not a policy against itself:
the sample policies are deterministic, so both legs of such a pair are the same series with the
seats relabelled, and the pair cancels exactly (ratio 0) under either dealing."""


# --- playing -----------------------------------------------------------------------------------


def play(
    first: Policy, second: Policy, seed: int, dealing: Dealing
) -> tuple[SeriesResult, list[tuple[CardSet, CardSet]]]:
    """One series, ``first`` in seat 0; its result and each hand's ten cards per seat as dealt."""
    series = SeriesState(seed, dealing=dealing)
    policies = (first, second)
    dealt = [series.hand.hands]
    while series.result is None:
        seat = series.to_move
        series.apply(policies[seat](observation(series, seat), series.legal_actions()))
        if series.result is None and len(dealt) == series.hand_number:
            dealt.append(series.hand.hands)
    return series.result, dealt


def series_statistics(result: SeriesResult, a_seat: int) -> dict[str, float]:
    """Every statistic of one series, from the side of A (in seat ``a_seat``)."""
    b_seat = 1 - a_seat
    won = [0, 0]
    points = [0, 0]
    for record in result.hands:
        winner = record.outcome.winner
        if winner is not None:
            won[winner] += 1
            points[winner] += record.outcome.points
    games = [sum(1 for w in result.game_winners if w == seat) for seat in (0, 1)]
    score = 0.5 if result.winner is None else float(result.winner == a_seat)
    return {
        "score": score,
        "points": points[a_seat] - points[b_seat],
        "sheet": sum(result.totals[a_seat]) - sum(result.totals[b_seat]),
        "games": games[a_seat] - games[b_seat],
        "hands": won[a_seat] - won[b_seat],
    }


@dataclass(frozen=True, slots=True)
class PairPlay:
    """One pair under one dealing: each leg's statistics (A's side) and its deal counts."""

    legs: tuple[dict[str, float], dict[str, float]]
    aligned: int
    """Hand numbers played in both legs."""
    replicas: int
    """Of those, hands where some bot held the same ten cards in both legs."""
    mirrors: int
    """Of those, hands where each bot held in leg 2 the cards its opponent held in leg 1."""


def play_pair(a: str, b: str, seed: int, dealing: Dealing) -> PairPlay:
    """The duplicate pair of ``seed``: A in seat 0, then A in seat 1."""
    first, first_dealt = play(POLICIES[a](), POLICIES[b](), seed, dealing)
    second, second_dealt = play(POLICIES[b](), POLICIES[a](), seed, dealing)
    aligned = replicas = mirrors = 0
    for one, other in zip(first_dealt, second_dealt, strict=False):
        aligned += 1
        # A holds seat 0 in leg 1 and seat 1 in leg 2; B the other way round.
        replicas += one[0] == other[1] or one[1] == other[0]
        mirrors += one[0] == other[0] and one[1] == other[1]
    legs = (series_statistics(first, 0), series_statistics(second, 1))
    return PairPlay(legs, aligned, replicas, mirrors)


def series_seed(base: int, index: int) -> int:
    """The series seed of pair ``index``: 48 bits of SHA-256, the same for every matchup."""
    digest = hashlib.sha256(f"hollywood-gin/duplicate-variance/{base}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


Task = PairTask


def run_task(task: Task) -> tuple[Task, dict[Dealing, PairPlay]]:
    """Worker entry point: the pair of one seed under each dealing."""
    a, b, _, seed = task
    return task, {dealing: play_pair(a, b, seed, dealing) for dealing in Dealing}


# --- statistics --------------------------------------------------------------------------------


def variance_ratio(first: Sequence[float], second: Sequence[float]) -> float:
    """``Var(X1 + X2) / (Var(X1) + Var(X2))`` over paired samples (1.0 if both are constant).

    >>> variance_ratio([1, 2, 3, 4], [4, 3, 2, 1])
    0.0
    >>> variance_ratio([1, 2, 3, 4], [1, 2, 3, 4])
    2.0
    """
    apart = statistics.pvariance(first) + statistics.pvariance(second)
    if apart == 0:
        return 1.0
    return statistics.pvariance([x + y for x, y in zip(first, second, strict=True)]) / apart


def _fast_ratio(first: Sequence[float], second: Sequence[float], picks: Sequence[int]) -> float:
    """:func:`variance_ratio` of the resample ``picks``, from sums (the bootstrap's inner loop)."""
    n = len(picks)
    s1 = s2 = q1 = q2 = c = 0.0
    for index in picks:
        x, y = first[index], second[index]
        s1 += x
        s2 += y
        q1 += x * x
        q2 += y * y
        c += x * y
    v1 = q1 / n - (s1 / n) ** 2
    v2 = q2 / n - (s2 / n) ** 2
    if v1 + v2 <= 0:
        return 1.0
    return 1.0 + 2.0 * (c / n - s1 * s2 / n / n) / (v1 + v2)


@dataclass(frozen=True, slots=True)
class Ratio:
    """A variance ratio with its bootstrap 95% interval, and the variances behind it."""

    ratio: float
    low: float
    high: float
    pair_variance: float
    """``Var(X1 + X2)``."""
    independent_variance: float
    """``Var(X1) + Var(X2)``."""
    mean: float
    """The mean pair statistic ``X1 + X2``."""


def ratio_of(
    first: Sequence[float], second: Sequence[float], resamples: Sequence[Sequence[int]]
) -> Ratio:
    """The ratio of paired samples and its percentile interval over ``resamples`` (index lists)."""
    boot = sorted(_fast_ratio(first, second, picks) for picks in resamples)
    low = boot[int(0.025 * (len(boot) - 1))] if boot else float("nan")
    high = boot[int(0.975 * (len(boot) - 1))] if boot else float("nan")
    sums = [x + y for x, y in zip(first, second, strict=True)]
    return Ratio(
        ratio=variance_ratio(first, second),
        low=low,
        high=high,
        pair_variance=statistics.pvariance(sums),
        independent_variance=statistics.pvariance(first) + statistics.pvariance(second),
        mean=statistics.fmean(sums),
    )


@dataclass(frozen=True, slots=True)
class DealingReport:
    """One matchup under one dealing."""

    dealing: str
    ratios: dict[str, Ratio]
    aligned_hands: int
    replica_share: float
    """Share of aligned hands in which a bot held the same ten cards in both legs."""
    mirror_share: float
    """Share of aligned hands in which each bot held its opponent's cards of the other leg."""


@dataclass(frozen=True, slots=True)
class MatchupReport:
    """One matchup: the pairs played and each dealing's figures."""

    a: str
    b: str
    pairs: int
    dealings: dict[str, DealingReport]


def summarise(
    a: str, b: str, plays: Sequence[dict[Dealing, PairPlay]], boot: int, seed: int
) -> MatchupReport:
    """Each dealing's ratios (one resampling of the pairs shared by every statistic and dealing,
    so the two dealings' intervals are comparable) and its deal counts."""
    rng = random.Random(seed)
    n = len(plays)
    resamples = [rng.choices(range(n), k=n) for _ in range(boot)]
    reports = {}
    for dealing in Dealing:
        pairs = [play[dealing] for play in plays]
        ratios = {
            name: ratio_of(
                [pair.legs[0][name] for pair in pairs],
                [pair.legs[1][name] for pair in pairs],
                resamples,
            )
            for name in STATISTICS
        }
        aligned = sum(pair.aligned for pair in pairs)
        reports[dealing.value] = DealingReport(
            dealing.value,
            ratios,
            aligned,
            sum(pair.replicas for pair in pairs) / max(1, aligned),
            sum(pair.mirrors for pair in pairs) / max(1, aligned),
        )
    return MatchupReport(a, b, n, reports)


# --- the command -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """What to run (read from the command line)."""

    pairs: int
    jobs: int
    seed: int
    boot: int
    matchups: tuple[tuple[str, str], ...]
    json_path: Path | None
    argv: tuple[str, ...]


parse_matchup = matchup_parser(POLICIES)
"""``A:B`` with both names known (an argparse type)."""


def parse_args(argv: Sequence[str] | None) -> Config:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.duplicate_variance",
        description="Variance of a duplicate pair against two independent series, both dealings.",
    )
    parser.add_argument("--pairs", type=int, default=500, help="pairs per matchup (500)")
    parser.add_argument(
        "--jobs", type=int, default=min(2, usable_cpus() or 1), help="worker processes (2)"
    )
    parser.add_argument("--seed", type=int, default=2026, help="base seed (2026)")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (1000)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument(
        "--matchup",
        type=parse_matchup,
        action="append",
        metavar="A:B",
        help="play only this matchup (repeatable; default strong:greedy and greedy:patient)",
    )
    args = parser.parse_args(argv)
    if args.pairs < 2 or args.jobs < 1 or args.seed < 0 or args.boot < 1:
        parser.error("--pairs must be at least 2, --jobs and --boot 1, --seed non-negative")
    return Config(
        pairs=args.pairs,
        jobs=args.jobs,
        seed=args.seed,
        boot=args.boot,
        matchups=tuple(args.matchup or MATCHUPS),
        json_path=args.json,
        argv=tuple(sys.argv[1:] if argv is None else argv),
    )


def print_report(console: Console, reports: Sequence[MatchupReport]) -> None:
    """One table per matchup: a row per statistic, the two dealings side by side."""
    for r in reports:
        table = Table(
            title=f"{r.a} vs {r.b}, {r.pairs} pairs: Var(pair) / Var(two independent series)",
            title_justify="left",
        )
        table.add_column("statistic", no_wrap=True)
        for dealing in Dealing:
            table.add_column(f"{dealing.value} ratio [95% CI]", no_wrap=True, justify="right")
        table.add_column("mean pair (by_seat)", justify="right")
        for name in STATISTICS:
            cells = []
            for dealing in Dealing:
                ratio = r.dealings[dealing.value].ratios[name]
                cells.append(f"{ratio.ratio:.3f} [{ratio.low:.3f}, {ratio.high:.3f}]")
            mean = r.dealings[Dealing.BY_SEAT.value].ratios[name].mean
            marker = " (standings)" if name == STANDINGS_STATISTIC else ""
            table.add_row(name + marker, *cells, f"{mean:+.3f}")
        table.add_row(
            "replica hands",
            *(f"{100 * r.dealings[d.value].replica_share:.1f}%" for d in Dealing),
            "",
        )
        table.add_row(
            "mirrored hands",
            *(f"{100 * r.dealings[d.value].mirror_share:.1f}%" for d in Dealing),
            "",
        )
        console.print(table)


def verdicts(reports: Sequence[MatchupReport]) -> dict[str, dict[str, object]]:
    """Per matchup, by seat: whether the standings' statistic meets the goal, and the best one."""
    found: dict[str, dict[str, object]] = {}
    for r in reports:
        ratios = r.dealings[Dealing.BY_SEAT.value].ratios
        best = min(STATISTICS, key=lambda name: ratios[name].ratio)
        found[f"{r.a}:{r.b}"] = {
            "standings_ratio": ratios[STANDINGS_STATISTIC].ratio,
            "meets_goal": ratios[STANDINGS_STATISTIC].ratio <= GOAL,
            "best_statistic": best,
            "best_ratio": ratios[best].ratio,
        }
    return found


def write_json(
    path: Path, env: dict[str, object], config: Config, reports: Sequence[MatchupReport]
) -> None:
    """Save the configuration, the machine and every figure in one file."""
    settings = {
        "pairs": config.pairs,
        "jobs": config.jobs,
        "seed": config.seed,
        "boot": config.boot,
        "matchups": [list(m) for m in config.matchups],
        "command": " ".join(["python -m benchmarks.duplicate_variance", *config.argv]),
    }
    matchups = {f"{r.a}:{r.b}": asdict(r) for r in reports}
    write_report(path, env, settings, verdicts=verdicts(reports), matchups=matchups)


def main(argv: Sequence[str] | None = None) -> int:
    """Play every matchup under both dealings and print the ratios."""
    config = parse_args(argv)
    console = Console() if sys.stdout.isatty() else Console(width=200)
    status = Console(stderr=True, log_path=False)
    env = environment()
    started = time.perf_counter()
    console.print(
        f"[bold]Duplicate variance[/bold]: {config.pairs} pairs per matchup, each under both "
        f"dealings (4 series), base seed {config.seed}, {config.jobs} worker process(es), "
        f"{config.boot} bootstrap resamples; Python {env['python']} on {env['platform']}",
        highlight=False,
    )
    played = play_pairs(
        config.matchups, config.pairs, partial(series_seed, config.seed), run_task,
        jobs=config.jobs, status=status, chunksize=4,
    )  # fmt: skip
    reports = [summarise(a, b, played[a, b], config.boot, config.seed) for a, b in config.matchups]
    print_report(console, reports)
    for matchup, verdict in verdicts(reports).items():
        console.print(
            f"{matchup} by seat: the standings' {STANDINGS_STATISTIC} ratio "
            f"{verdict['standings_ratio']:.3f} {'meets' if verdict['meets_goal'] else 'misses'} "
            f"the goal of {GOAL}; the best statistic is {verdict['best_statistic']} "
            f"({verdict['best_ratio']:.3f})",
            highlight=False,
            markup=False,
        )
    console.print(
        f"Total {time.perf_counter() - started:.1f} s; loadavg at the end "
        f"{' '.join(f'{x:.2f}' for x in loadavg() or ())}.",
        highlight=False,
        markup=False,
    )
    if config.json_path is not None:
        write_json(config.json_path, env, config, reports)
        console.print(f"JSON written to {config.json_path}", highlight=False, markup=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
