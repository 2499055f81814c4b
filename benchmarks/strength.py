"""Playing strength of the sample policies: duplicate-paired Hollywood series, in-process.

    python -m benchmarks.strength [--pairs N] [--jobs J] [--seed S] [--json FILE]

For each pair index ``i`` a series seed is derived from the base seed, and the two policies play
that series twice: ``play_series(A, B, seed)`` and ``play_series(B, A, seed)``. Both series shuffle
the same decks hand by hand (a shuffle depends only on the seed and the hand number) and deal them
by seat, so in every hand both series reach each policy holds the cards the other held in the
other series, whoever deals; ``benchmarks.duplicate_variance`` measures how much luck that cancels.
Every series gets fresh policy instances (a policy may keep per-series state).

Matchups: ``strong`` against ``greedy`` (the target: a series win rate whose 95% lower bound is
above 55%) and ``greedy`` against ``random`` (a sanity check: greedy should win at least 95%).
For each matchup the report gives series won (a series with no winner counts half to each side),
the win rate with a Wilson 95% interval over series, hands won, the points-per-hand margin with a
95% interval over pairs, games won, and the mean time per decision of each policy.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
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
    pool_map,
    usable_cpus,
    write_report,
)
from referee.rules import (
    Action,
    GreedyPolicy,
    Observation,
    Policy,
    RandomPolicy,
    SeriesEnd,
    SeriesResult,
    play_series,
)
from sample_bots.strong.strategy import StrongPolicy

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""

TARGET_LOWER = 0.55
"""The strong policy's series win rate against greedy must have a 95% lower bound above this."""

GREEDY_FLOOR = 0.95
"""Greedy must win at least this share of its series against random."""


def make_strong(seed: int) -> Policy:  # noqa: ARG001
    """The strong sample policy (deterministic: the seed is not needed)."""
    return StrongPolicy()


def make_greedy(seed: int) -> Policy:  # noqa: ARG001
    """Minimal deadwood, knocks as soon as legal (``referee.rules.greedy_policy``)."""
    return GreedyPolicy(knock_at=10)


def make_patient(seed: int) -> Policy:  # noqa: ARG001
    """Greedy that plays on until its deadwood is 4 or less (``referee.rules.patient_policy``)."""
    return GreedyPolicy(knock_at=4)


def make_random(seed: int) -> Policy:
    """A uniformly random legal action, seeded from the series seed."""
    return RandomPolicy(seed)


POLICIES: dict[str, Callable[[int], Policy]] = {
    "strong": make_strong,
    "greedy": make_greedy,
    "patient": make_patient,
    "random": make_random,
}
"""Policy factories by name: ``factory(series_seed)`` gives a fresh instance."""

MATCHUPS: tuple[tuple[str, str], ...] = (("strong", "greedy"), ("greedy", "random"))


# --- playing -----------------------------------------------------------------------------------


class TimedPolicy:
    """A policy wrapper that counts decisions and the time spent in them: wall clock, and CPU
    time of this process (the figure that other load on the machine barely moves)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.decisions = 0
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        started, cpu_started = time.perf_counter(), time.process_time()
        action = self.policy(view, legal)
        self.cpu_seconds += time.process_time() - cpu_started
        self.seconds += time.perf_counter() - started
        self.decisions += 1
        return action


@dataclass(frozen=True)
class SeriesStats:
    """One series seen from side A (index 0 of every pair below is A, index 1 is B)."""

    seed: int
    a_seat: int
    winner: int | None
    """0: A won the series, 1: B won, ``None``: nobody did."""
    capped: bool
    hands: int
    drawn: int
    hands_won: tuple[int, int]
    points: tuple[int, int]
    games_won: tuple[int, int]
    decisions: tuple[int, int]
    seconds: tuple[float, float]
    cpu_seconds: tuple[float, float]


def summarise_series(
    result: SeriesResult, a_seat: int, timers: tuple[TimedPolicy, TimedPolicy]
) -> SeriesStats:
    """Turn a finished series (seats) into side A / side B figures. ``timers`` is by seat."""
    sides = (a_seat, 1 - a_seat)
    hands_won = [0, 0]
    points = [0, 0]
    drawn = 0
    for record in result.hands:
        outcome = record.outcome
        if outcome.winner is None:
            drawn += 1
            continue
        side = sides.index(outcome.winner)
        hands_won[side] += 1
        points[side] += outcome.points
    games = [sum(1 for w in result.game_winners if w == seat) for seat in sides]
    winner = None if result.winner is None else sides.index(result.winner)
    return SeriesStats(
        seed=result.seed,
        a_seat=a_seat,
        winner=winner,
        capped=result.end is SeriesEnd.HAND_CAP,
        hands=len(result.hands),
        drawn=drawn,
        hands_won=(hands_won[0], hands_won[1]),
        points=(points[0], points[1]),
        games_won=(games[0], games[1]),
        decisions=(timers[sides[0]].decisions, timers[sides[1]].decisions),
        seconds=(timers[sides[0]].seconds, timers[sides[1]].seconds),
        cpu_seconds=(timers[sides[0]].cpu_seconds, timers[sides[1]].cpu_seconds),
    )


def play_one(
    a: Callable[[int], Policy], b: Callable[[int], Policy], seed: int, a_seat: int
) -> SeriesStats:
    """One series with fresh instances of A and B, A in seat ``a_seat``."""
    first, second = (a, b) if a_seat == 0 else (b, a)
    timers = (TimedPolicy(first(seed)), TimedPolicy(second(seed)))
    result = play_series(timers[0], timers[1], seed)
    return summarise_series(result, a_seat, timers)


def play_pair(
    a: Callable[[int], Policy], b: Callable[[int], Policy], seed: int
) -> tuple[SeriesStats, SeriesStats]:
    """The duplicate pair: the same series seed with A in seat 0, then with A in seat 1."""
    return play_one(a, b, seed, 0), play_one(a, b, seed, 1)


def series_seed(base: int, index: int) -> int:
    """The series seed of pair ``index``: 48 bits of SHA-256, the same for every matchup."""
    digest = hashlib.sha256(f"hollywood-gin/strength/{base}/{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


Task = PairTask


def run_task(task: Task) -> tuple[Task, tuple[SeriesStats, SeriesStats]]:
    """Worker entry point: play one pair of the named policies (names keep tasks picklable)."""
    a_name, b_name, _, seed = task
    return task, play_pair(POLICIES[a_name], POLICIES[b_name], seed)


def run_tasks(tasks: Sequence[Task], jobs: int) -> Iterator[tuple[Task, tuple[SeriesStats, ...]]]:
    """Play every task, in worker processes when ``jobs`` > 1; results come as they finish."""
    return pool_map(run_task, tasks, jobs, chunksize=1)


# --- statistics --------------------------------------------------------------------------------


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (``successes`` may hold halves for no-winner
    series); ``(0, 1)`` when there is no trial."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal 95% interval (``mean ± z·sd/√n``)."""
    if not values:
        return 0.0, 0.0, 0.0
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = z * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


@dataclass
class MatchupReport:
    """The figures of one matchup, from side A's point of view where it matters."""

    a: str
    b: str
    pairs: int
    series: int = 0
    series_won: tuple[int, int] = (0, 0)
    no_winner: int = 0
    capped: int = 0
    win_rate: float = 0.0
    win_rate_ci: tuple[float, float] = (0.0, 1.0)
    hands: int = 0
    drawn: int = 0
    hands_won: tuple[int, int] = (0, 0)
    points: tuple[int, int] = (0, 0)
    margin_per_hand: float = 0.0
    margin_ci: tuple[float, float] = (0.0, 0.0)
    pairs_won: tuple[int, int] = (0, 0)
    """Pairs in which one side won both series (a split pair counts for neither)."""
    games_won: tuple[int, int] = (0, 0)
    decisions: tuple[int, int] = (0, 0)
    ms_per_decision: tuple[float, float] = (0.0, 0.0)
    """Mean wall time inside each policy."""
    cpu_ms_per_decision: tuple[float, float] = (0.0, 0.0)
    """Mean CPU time inside each policy."""
    seeds: list[int] = field(default_factory=list)


def summarise(a: str, b: str, pairs: Sequence[tuple[SeriesStats, ...]]) -> MatchupReport:
    """Add up the pairs of one matchup (given in pair order)."""
    report = MatchupReport(a=a, b=b, pairs=len(pairs))
    everything = [stats for pair in pairs for stats in pair]

    def both(pick: Callable[[SeriesStats], tuple[int, int]]) -> tuple[int, int]:
        return (sum(pick(s)[0] for s in everything), sum(pick(s)[1] for s in everything))

    report.series = len(everything)
    report.series_won = (
        sum(1 for s in everything if s.winner == 0),
        sum(1 for s in everything if s.winner == 1),
    )
    report.no_winner = sum(1 for s in everything if s.winner is None)
    report.capped = sum(1 for s in everything if s.capped)
    score = report.series_won[0] + 0.5 * report.no_winner
    report.win_rate = score / report.series if report.series else 0.0
    report.win_rate_ci = wilson(score, report.series)
    report.hands = sum(s.hands for s in everything)
    report.drawn = sum(s.drawn for s in everything)
    report.hands_won = both(lambda s: s.hands_won)
    report.points = both(lambda s: s.points)
    margins = [
        sum(s.points[0] - s.points[1] for s in pair) / max(1, sum(s.hands for s in pair))
        for pair in pairs
    ]
    report.margin_per_hand, low, high = mean_interval(margins)
    report.margin_ci = (low, high)
    report.pairs_won = (
        sum(1 for pair in pairs if all(s.winner == 0 for s in pair)),
        sum(1 for pair in pairs if all(s.winner == 1 for s in pair)),
    )
    report.games_won = both(lambda s: s.games_won)
    report.decisions = both(lambda s: s.decisions)
    seconds = (sum(s.seconds[0] for s in everything), sum(s.seconds[1] for s in everything))
    cpu = (sum(s.cpu_seconds[0] for s in everything), sum(s.cpu_seconds[1] for s in everything))
    report.ms_per_decision = (
        1000 * seconds[0] / max(1, report.decisions[0]),
        1000 * seconds[1] / max(1, report.decisions[1]),
    )
    report.cpu_ms_per_decision = (
        1000 * cpu[0] / max(1, report.decisions[0]),
        1000 * cpu[1] / max(1, report.decisions[1]),
    )
    report.seeds = [pair[0].seed for pair in pairs]
    return report


# --- command line and report -------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """What to run."""

    pairs: int
    jobs: int
    seed: int
    matchups: tuple[tuple[str, str], ...]
    json_path: Path | None
    argv: tuple[str, ...] = ()


parse_matchup = matchup_parser(POLICIES)
"""``A:B`` with both names known (an argparse type)."""


def parse_args(argv: Sequence[str] | None) -> Config:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.strength",
        description="Duplicate-paired Hollywood series between the sample policies.",
    )
    parser.add_argument("--pairs", type=int, default=400, help="series pairs per matchup (400)")
    parser.add_argument(
        "--jobs", type=int, default=usable_cpus() or 1, help="worker processes (default: all CPUs)"
    )
    parser.add_argument("--seed", type=int, default=2024, help="base seed (default 2024)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument(
        "--matchup",
        type=parse_matchup,
        action="append",
        metavar="A:B",
        help="play only this matchup (repeatable; default strong:greedy and greedy:random)",
    )
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.jobs < 1 or args.seed < 0:
        parser.error("--pairs and --jobs must be at least 1, --seed non-negative")
    return Config(
        pairs=args.pairs,
        jobs=args.jobs,
        seed=args.seed,
        matchups=tuple(args.matchup or MATCHUPS),
        json_path=args.json,
        argv=tuple(sys.argv[1:] if argv is None else argv),
    )


def percent(value: float) -> str:
    """A share as a percentage with one decimal."""
    return f"{100 * value:.1f}%"


def print_report(console: Console, reports: Iterable[MatchupReport]) -> None:
    """One table, one row per matchup (A's figures first in every cell)."""
    table = Table(
        title="Duplicate-paired series (A vs B; every cell is A / B)",
        title_justify="left",
        show_lines=True,
    )
    for name in ("A vs B", "pairs", "series won (none)", "A win rate [95% CI]"):
        table.add_column(name, no_wrap=True)
    for name in (
        "hands won (drawn)",
        "A pts/hand margin [95% CI]",
        "games won",
        "ms/decision wall (cpu)",
    ):
        table.add_column(name, no_wrap=True, justify="right")
    for r in reports:
        low, high = r.win_rate_ci
        table.add_row(
            f"{r.a} vs {r.b}",
            str(r.pairs),
            f"{r.series_won[0]} / {r.series_won[1]} ({r.no_winner})",
            f"{percent(r.win_rate)} [{percent(low)}, {percent(high)}]",
            f"{r.hands_won[0]} / {r.hands_won[1]} ({r.drawn})",
            f"{r.margin_per_hand:+.2f} [{r.margin_ci[0]:+.2f}, {r.margin_ci[1]:+.2f}]",
            f"{r.games_won[0]} / {r.games_won[1]}",
            f"{r.ms_per_decision[0]:.2f} ({r.cpu_ms_per_decision[0]:.2f}) / "
            f"{r.ms_per_decision[1]:.2f} ({r.cpu_ms_per_decision[1]:.2f})",
        )
    console.print(table)


def checks(reports: Iterable[MatchupReport]) -> dict[str, bool]:
    """The two bars: strong over greedy (lower bound above 55%), greedy over random (95%)."""
    verdicts = {}
    for r in reports:
        if (r.a, r.b) == ("strong", "greedy"):
            verdicts["strong_beats_greedy"] = r.win_rate_ci[0] > TARGET_LOWER
        if (r.a, r.b) == ("greedy", "random"):
            verdicts["greedy_beats_random"] = r.win_rate >= GREEDY_FLOOR
    return verdicts


def print_checks(console: Console, reports: Sequence[MatchupReport]) -> None:
    """Say whether each bar is met, with the figure it was judged on."""
    verdicts = checks(reports)
    for r in reports:
        if (r.a, r.b) == ("strong", "greedy"):
            ok = verdicts["strong_beats_greedy"]
            console.print(
                f"{'PASS' if ok else 'FAIL'}: strong vs greedy, series win rate 95% lower bound "
                f"{percent(r.win_rate_ci[0])} (must be above {percent(TARGET_LOWER)})",
                highlight=False,
                markup=False,
            )
        if (r.a, r.b) == ("greedy", "random"):
            ok = verdicts["greedy_beats_random"]
            console.print(
                f"{'PASS' if ok else 'FAIL'}: greedy vs random, series win rate "
                f"{percent(r.win_rate)} (must be at least {percent(GREEDY_FLOOR)})",
                highlight=False,
                markup=False,
            )


def write_json(
    path: Path, env: dict[str, object], config: Config, reports: Sequence[MatchupReport]
) -> None:
    """Save the configuration, the machine and every figure in one file."""
    settings = {
        "pairs": config.pairs,
        "jobs": config.jobs,
        "seed": config.seed,
        "matchups": [list(m) for m in config.matchups],
        "command": " ".join(["python -m benchmarks.strength", *config.argv]),
    }
    matchups = {f"{r.a}:{r.b}": asdict(r) for r in reports}
    write_report(path, env, settings, checks=checks(reports), matchups=matchups)


def main(argv: Sequence[str] | None = None) -> int:
    """Play every matchup and print the report."""
    config = parse_args(argv)
    console = Console() if sys.stdout.isatty() else Console(width=200)
    status = Console(stderr=True, log_path=False)
    env = environment()
    started = time.perf_counter()
    console.print(
        f"[bold]Strength benchmark[/bold]: {config.pairs} duplicate pairs per matchup "
        f"(2 series each), base seed {config.seed}, {config.jobs} worker process(es); "
        f"Python {env['python']} on {env['platform']}",
        highlight=False,
    )
    played = play_pairs(
        config.matchups, config.pairs, partial(series_seed, config.seed), run_task,
        jobs=config.jobs, status=status,
    )  # fmt: skip
    reports = [summarise(a, b, played[a, b]) for a, b in config.matchups]
    print_report(console, reports)
    print_checks(console, reports)
    console.print(
        "Win rate: series won by A (no winner counts half) over series played, Wilson 95% "
        "interval. Margin: A's points minus B's per hand dealt, one value per pair (both "
        "series), normal 95% interval over pairs. ms/decision: mean time inside each policy, "
        f"wall clock and (CPU of its process). Total {time.perf_counter() - started:.1f} s; "
        f"loadavg at the end {' '.join(f'{x:.2f}' for x in loadavg() or ())}.",
        highlight=False,
        markup=False,
    )
    if config.json_path is not None:
        write_json(config.json_path, env, config, reports)
        console.print(f"JSON written to {config.json_path}", highlight=False, markup=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
