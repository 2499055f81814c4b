"""Strength of the ``house`` sample bot per search budget, in-process, in duplicate pairs.

    python -m benchmarks.house_strength [--budgets 20,50,100,200r] [--rivals strong,greedy]
        [--pairs N] [--jobs J] [--seed S] [--json FILE]
    python -m benchmarks.house_strength --sprt [--budgets 100] [--elo0 0 --elo1 50]
        [--max-pairs 400] [--jobs J]
    python -m benchmarks.house_strength --hands N [--budgets 300r] [--rivals strong] [--jobs J]

The first form plays, for every budget (milliseconds of search a decision, or with an ``r``
played-out hands a decision: ``300r``, the same work however busy the machine) and every rival,
``N`` duplicate pairs (:func:`benchmarks.strength.play_pair`: one series seed, the house bot in
seat 0 then in seat 1, the same decks) and reports the house bot's score with its Elo difference
and 95% interval (:func:`tournaments.stats.inference.score_estimate` over pair scores, as
``gin match`` reports them), the series win rate, the points-per-hand margin and the time per
decision. Every pair uses the same series seeds for every budget and rival.

The second form is the sequential test of ``gin match house strong`` played in-process (no
sandbox, no referee, no clock): pairs are played ``J`` at a time until the test
(:class:`tournaments.stats.sprt.SprtRun`) accepts a hypothesis or ``--max-pairs`` is reached.

The third form plays single hands instead of series: ``N`` deals, each played twice with the
seats swapped (the house bot holds each side's cards once, against the same stock), and reports
the house bot's points per hand with its 95% interval over the deals. A hand's points are the
measure a series' win rate only blurs: against ``strong`` at 300 hands a decision, 400 deals
gave an interval of about ±0.85 points a hand (so a thousand, about ±0.5).

The budget is wall-clock time, so a busy machine makes the bot weaker: the figures depend on
the load, which the report prints.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.harness import environment, loadavg, pool_map, usable_cpus
from benchmarks.strength import (
    POLICIES,
    MatchupReport,
    SeriesStats,
    TimedPolicy,
    mean_interval,
    play_pair,
    series_seed,
    summarise,
)
from referee.rules import HandState, Policy, play_hand, shuffled_deck
from sample_bots.house.strategy import CONFIDENCE, SCREEN, Budget, HousePolicy
from tournaments.stats.inference import ScoreEstimate, score_estimate
from tournaments.stats.sprt import SprtRun, SprtSettings, SprtStatus

BUDGETS = ("20", "50", "100", "200")
RIVALS = ("strong", "greedy")

Task = tuple[str, str, int, int]
"""``(budget, rival, pair index, series seed)``."""


@dataclass(frozen=True)
class Variant:
    """A budget and the search's settings, as one ``--budgets`` entry names them."""

    budget: Budget
    confidence: float = CONFIDENCE
    wary: bool = False
    screen: int = SCREEN


def parse_budget(spec: str) -> Variant:
    """``"50"`` or ``"50ms"``: 50 ms of search a decision; ``"300r"``: 300 played-out hands a
    decision, whatever the time; then, each after a ``/``, settings other than the defaults:
    ``wary`` (the wary play-out), ``gate=1`` (standard errors to overrule ``strong``),
    ``screen=0`` (deals before the screen; 0, none): ``300r/wary/gate=1``.

    Raises:
        ValueError: neither form, not positive, or an unknown setting.
    """
    text, *settings = spec.strip().lower().split("/")
    if text.endswith("r"):
        budget = Budget(seconds=3600.0, rollouts=int(text[:-1]))
        count = budget.rollouts or 0
    else:
        count = int(text.removesuffix("ms"))
        budget = Budget(seconds=count / 1000)
    if count < 1:
        raise ValueError(spec)
    variant = Variant(budget)
    for setting in settings:
        name, _, value = setting.partition("=")
        if name == "wary" and not value:
            variant = replace(variant, wary=True)
        elif name == "gate" and float(value) >= 0:
            variant = replace(variant, confidence=float(value))
        elif name == "screen" and int(value) >= 0:
            variant = replace(variant, screen=int(value))
        else:
            raise ValueError(spec)
    return variant


def label(spec: str) -> str:
    """A budget as the table shows it: ``50 ms`` or ``300 hands``, then its settings."""
    text, *settings = spec.strip().lower().split("/")
    shown = f"{text[:-1]} hands" if text.endswith("r") else f"{text.removesuffix('ms')} ms"
    return " ".join([shown, *settings])


def make_house(budget: str, seed: int) -> Policy:
    """A house policy searching ``budget`` a decision, seeded from the series seed."""
    variant = parse_budget(budget)
    return HousePolicy(
        variant.budget,
        seed=seed,
        confidence=variant.confidence,
        wary=variant.wary,
        screen=variant.screen,
    )


def run_task(task: Task) -> tuple[Task, tuple[SeriesStats, SeriesStats]]:
    """Worker entry point: one duplicate pair of house (side A) against the rival."""
    budget, rival, _, seed = task
    return task, play_pair(partial(make_house, budget), POLICIES[rival], seed)


def pair_score(pair: Sequence[SeriesStats]) -> float:
    """Side A's share of a pair's series (a series with no winner counts half)."""
    return sum(1.0 if s.winner == 0 else 0.5 if s.winner is None else 0.0 for s in pair) / 2


@dataclass
class Row:
    """One budget against one rival."""

    budget: str
    rival: str
    estimate: ScoreEstimate
    report: MatchupReport


def play_table(
    budgets: Sequence[str], rivals: Sequence[str], pairs: int, seed: int, jobs: int
) -> list[Row]:
    """Play every budget against every rival; the rows in the order asked."""
    tasks = [
        (budget, rival, i, series_seed(seed, i))
        for budget in budgets
        for rival in rivals
        for i in range(pairs)
    ]
    played: dict[tuple[str, str], dict[int, tuple[SeriesStats, ...]]] = {}
    for (budget, rival, index, _), pair in pool_map(run_task, tasks, jobs):
        played.setdefault((budget, rival), {})[index] = pair
    rows = []
    for budget in budgets:
        for rival in rivals:
            found = [played[budget, rival][i] for i in range(pairs)]
            estimate = score_estimate([pair_score(p) for p in found], series=2 * pairs)
            rows.append(Row(budget, rival, estimate, summarise("house", rival, found)))
    return rows


def elo_cell(estimate: ScoreEstimate) -> str:
    """``+120 [+60, +190]``, with open ends as ``-inf`` / ``+inf``."""
    if estimate.los is None:
        return "n/a (too few pairs)"
    low, high = estimate.elo_interval
    centre = "bound" if estimate.elo is None else f"{estimate.elo:+.0f}"
    return f"{centre} [{low:+.0f}, {high:+.0f}]"


def print_table(console: Console, rows: Sequence[Row]) -> None:
    """One row per budget and rival."""
    table = Table(title="house against each rival, duplicate pairs", title_justify="left")
    for name in ("budget", "vs", "pairs", "score", "Elo [95% CI]", "series won (none)"):
        table.add_column(name, no_wrap=True)
    for name in ("pts/hand margin", "house ms/decision (cpu)"):
        table.add_column(name, no_wrap=True, justify="right")
    for row in rows:
        r = row.report
        table.add_row(
            label(row.budget),
            row.rival,
            str(r.pairs),
            f"{row.estimate.mean:.3f}",
            elo_cell(row.estimate),
            f"{r.series_won[0]} / {r.series_won[1]} ({r.no_winner})",
            f"{r.margin_per_hand:+.2f} [{r.margin_ci[0]:+.2f}, {r.margin_ci[1]:+.2f}]",
            f"{r.ms_per_decision[0]:.1f} ({r.cpu_ms_per_decision[0]:.1f})",
        )
    console.print(table)


# --- single hands, duplicated ------------------------------------------------------------------


@dataclass(frozen=True)
class DealResult:
    """One deal played both ways: the house bot's points in each, and its decisions' time."""

    points: tuple[int, int]
    decisions: int
    cpu_seconds: float


def play_deal(task: Task) -> tuple[Task, DealResult]:
    """Worker entry point: deal ``seed``'s deck (its hand ``index``) and play it with the house
    bot in seat 0, then in seat 1, the same dealer both times, so each seat's cards and the
    stock's order meet both players."""
    budget, rival, index, seed = task
    deck = shuffled_deck(seed, index)
    points: list[int] = []
    timed_total, cpu = 0, 0.0
    for house_seat in (0, 1):
        house = TimedPolicy(make_house(budget, seed + index))
        other = POLICIES[rival](seed + index)
        first, second = (house, other) if house_seat == 0 else (other, house)
        outcome = play_hand(first, second, HandState.deal(deck, dealer=0)).outcome
        assert outcome is not None
        won = 0 if outcome.winner is None else outcome.points
        points.append(won if outcome.winner == house_seat else -won)
        timed_total, cpu = timed_total + house.decisions, cpu + house.cpu_seconds
    return task, DealResult((points[0], points[1]), timed_total, cpu)


@dataclass
class HandsRow:
    """One budget against one rival, over duplicated single hands."""

    budget: str
    rival: str
    deals: int
    per_hand: tuple[float, float, float]
    """The house bot's mean points a hand and its 95% interval (over the deals' means)."""
    won: int
    lost: int
    cpu_ms: float


def play_hands(
    budgets: Sequence[str], rivals: Sequence[str], deals: int, seed: int, jobs: int
) -> list[HandsRow]:
    """Every budget against every rival on the same ``deals`` deals; rows in the order asked."""
    tasks = [(b, r, i, seed) for b in budgets for r in rivals for i in range(deals)]
    played: dict[tuple[str, str], list[DealResult]] = {}
    for (budget, rival, _, _), result in pool_map(play_deal, tasks, jobs, chunksize=4):
        played.setdefault((budget, rival), []).append(result)
    rows = []
    for budget in budgets:
        for rival in rivals:
            found = played[budget, rival]
            hands = [p for r in found for p in r.points]
            decisions = sum(r.decisions for r in found)
            rows.append(
                HandsRow(
                    budget,
                    rival,
                    len(found),
                    mean_interval([sum(r.points) / 2 for r in found]),
                    sum(p > 0 for p in hands),
                    sum(p < 0 for p in hands),
                    1000 * sum(r.cpu_seconds for r in found) / max(1, decisions),
                )
            )
    return rows


def print_hands(console: Console, rows: Sequence[HandsRow]) -> None:
    """One row per budget and rival."""
    table = Table(title="house against each rival, duplicated hands", title_justify="left")
    for name in ("budget", "vs", "deals", "pts/hand [95% CI]", "hands won / lost", "cpu ms"):
        table.add_column(name, no_wrap=True)
    for row in rows:
        mean, low, high = row.per_hand
        table.add_row(
            label(row.budget),
            row.rival,
            str(row.deals),
            f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]",
            f"{row.won} / {row.lost}",
            f"{row.cpu_ms:.1f}",
        )
    console.print(table)


# --- the sequential test, in-process -----------------------------------------------------------


def sprt_pairs(budget: str, seed: int, cap: int, jobs: int) -> Iterator[tuple[SeriesStats, ...]]:
    """House against strong, pairs in order of their index, ``jobs`` at a time up to ``cap``."""
    for start in range(0, cap, jobs):
        batch = [(budget, "strong", i, series_seed(seed, i)) for i in range(start, start + jobs)]
        for _, pair in sorted(pool_map(run_task, batch[: cap - start], jobs)):
            yield pair


def run_sprt(
    budget: str, settings: SprtSettings, *, seed: int, cap: int, jobs: int, status: Console
) -> tuple[SprtStatus | None, list[float]]:
    """Play pairs until the test decides (or ``cap`` pairs); the status and the pair scores."""
    test = SprtRun(settings)
    scores: list[float] = []
    now: SprtStatus | None = None
    for pair in sprt_pairs(budget, seed, cap, jobs):
        scores.append(pair_score(pair))
        now = test.add(round(4 * scores[-1]))
        status.print(
            f"pair {now.pairs}: score {scores[-1]:.2f}, LLR {now.llr:+.2f} "
            f"[{now.lower:+.2f}, {now.upper:+.2f}]",
            highlight=False,
        )
        if now.verdict is not None:
            break
    return now, scores


# --- command line ------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.house_strength",
        description="The house bot against strong and greedy, per search budget.",
    )
    parser.add_argument(
        "--budgets",
        default=",".join(BUDGETS),
        help="ms (50) or played-out hands (300r), each with /wary, /gate=G, /screen=N if wanted;"
        " comma-separated",
    )
    parser.add_argument(
        "--rivals", default=",".join(RIVALS), help="strong, greedy, patient, random"
    )
    parser.add_argument("--pairs", type=int, default=40, help="pairs per budget and rival (40)")
    parser.add_argument("--jobs", type=int, default=usable_cpus() or 1, help="worker processes")
    parser.add_argument("--seed", type=int, default=2026, help="base seed (2026)")
    parser.add_argument("--sprt", action="store_true", help="run the sequential test instead")
    parser.add_argument(
        "--hands", type=int, default=0, metavar="N", help="play N duplicated single deals instead"
    )
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=50.0)
    parser.add_argument("--max-pairs", type=int, default=400, help="the test's cap (400)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    args = parser.parse_args(argv)
    try:
        args.budgets = args.budgets.split(",")
        for spec in args.budgets:
            parse_budget(spec)
    except ValueError:
        parser.error(
            "--budgets: positive whole milliseconds (50) or hands (300r), each with /wary,"
            " /gate=G or /screen=N if wanted, comma-separated"
        )
    args.rivals = args.rivals.split(",")
    if any(rival not in POLICIES for rival in args.rivals):
        parser.error(f"--rivals: each one of {', '.join(POLICIES)}")
    if args.pairs < 4 or args.jobs < 1 or args.max_pairs < 1:
        parser.error("--jobs and --max-pairs at least 1, --pairs at least 4")
    if args.hands < 0 or args.hands == 1 or (args.hands and args.sprt):
        parser.error("--hands: at least 2 deals, and not with --sprt")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Play the table (or the test) and print it."""
    args = parse_args(argv)
    console = Console() if sys.stdout.isatty() else Console(width=200)
    status = Console(stderr=True, log_path=False)
    started = time.perf_counter()
    result: dict[str, object] = {"environment": environment(), "argv": sys.argv[1:]}
    if args.sprt:
        settings = SprtSettings(elo0=args.elo0, elo1=args.elo1)
        budget = args.budgets[0]
        now, scores = run_sprt(
            budget, settings, seed=args.seed, cap=args.max_pairs, jobs=args.jobs, status=status
        )
        estimate = score_estimate(scores, series=2 * len(scores))
        verdict = "undecided" if now is None or now.verdict is None else now.verdict.value
        console.print(
            f"house ({label(budget)}) vs strong, SPRT elo0={args.elo0:g} elo1={args.elo1:g}: "
            f"{verdict} "
            f"after {len(scores)} pairs; score {estimate.mean:.3f}, Elo {elo_cell(estimate)}",
            highlight=False,
        )
        result["sprt"] = {"status": None if now is None else json.loads(now.to_json())}
        result["estimate"] = asdict(estimate)
    elif args.hands:
        hand_rows = play_hands(args.budgets, args.rivals, args.hands, args.seed, args.jobs)
        print_hands(console, hand_rows)
        result["hands"] = [{**asdict(r), "budget": label(r.budget)} for r in hand_rows]
    else:
        rows = play_table(args.budgets, args.rivals, args.pairs, args.seed, args.jobs)
        print_table(console, rows)
        result["rows"] = [
            {"budget": label(r.budget), "rival": r.rival, "estimate": asdict(r.estimate)}
            for r in rows
        ]
    load = " ".join(f"{x:.2f}" for x in loadavg() or ())
    console.print(
        f"{args.jobs} worker(s), {time.perf_counter() - started:.0f} s, loadavg at the end {load} "
        "(the budget is wall-clock time: a busy machine plays weaker).",
        highlight=False,
    )
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
