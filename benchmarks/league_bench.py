"""League throughput and the runner's memory: ``python -m benchmarks.league_bench``.

1. Series per minute, greedy against greedy (real sandboxed bot processes, start-up included),
   with the runner at ``-j`` 1, 2 and 4, interleaved over ``--runs`` runs.
2. The runner's resident memory after 100 and after ``--long`` series (it must stay flat:
   results go to SQLite, the display keeps only the last few lines).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.sandbox import harden_referee_process

harden_referee_process()

import trio  # noqa: E402
from rich.console import Console  # noqa: E402

from benchmarks.harness import rss_kib  # noqa: E402
from tournaments.league import LeagueConfig, create_league  # noqa: E402
from tournaments.registry import Arena, submit  # noqa: E402
from tournaments.runner import LeagueRunner, Progress  # noqa: E402

GREEDY = Path(__file__).resolve().parent.parent / "sample_bots" / "greedy"
console = Console()


def greedy_league(home: Path, name: str, series: int, seed: int) -> tuple[Arena, LeagueConfig]:
    """A league of two copies of greedy (two names, the same code) with ``series`` series."""
    arena = Arena(home)
    store = arena.open_store()
    idents = []
    for copy in ("a", "b"):
        folder = home / "src" / copy
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bot.py").write_text((GREEDY / "bot.py").read_text())
        (folder / "bot.toml").write_text(
            f'name = "greedy-{copy}"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
        )
        idents.append(trio.run(submit, arena, store, folder, None).ident)
    config = LeagueConfig.from_dict(
        {"name": name, "seed": seed, "bots": idents, "series_per_pairing": series}
    )
    create_league(store, config)
    return arena, config


def throughput(jobs: int, series: int, seed: int) -> float:
    """Series per minute at ``-j jobs``."""
    with tempfile.TemporaryDirectory() as folder:
        arena, config = greedy_league(Path(folder), "speed", series, seed)
        runner = LeagueRunner(arena, arena.open_store(), config, jobs)
        start = time.perf_counter()
        trio.run(runner.run)
        return series * 60 / (time.perf_counter() - start)


def memory(long: int, jobs: int) -> dict[str, int]:
    """Runner RSS (KiB) before, after 100 series and after ``long`` series."""
    marks: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        arena, config = greedy_league(Path(folder), "memory", long, 77)
        marks["start"] = rss_kib()

        def listen(progress: Progress) -> None:
            for mark in (10, 100, long):
                if progress.done >= mark and f"after {mark}" not in marks:
                    marks[f"after {mark}"] = rss_kib()
                    console.log(f"{progress.done} series: runner RSS {marks[f'after {mark}']} KiB")

        runner = LeagueRunner(arena, arena.open_store(), config, jobs, listener=listen)
        progress = trio.run(runner.run)
        marks[f"at the end ({progress.done} done, {progress.failed} failed)"] = rss_kib()
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=16, help="series per throughput run")
    parser.add_argument("--long", type=int, default=1000, help="series of the memory run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    console.print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loadavg "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    rates: dict[int, list[float]] = {1: [], 2: [], 4: []}
    for run in range(args.runs):
        for jobs in list(rates)[run % 3 :] + list(rates)[: run % 3]:
            rates[jobs].append(throughput(jobs, args.series, 1000 * run + jobs))
        console.log(
            f"run {run + 1}/{args.runs}: "
            + ", ".join(f"-j {jobs}: {values[-1]:.1f}" for jobs, values in rates.items())
        )
    measured = {jobs: values for jobs, values in rates.items() if values}
    figures: dict[str, Any] = {
        "series_per_minute": {f"-j {j}": statistics.median(v) for j, v in measured.items()},
        "ranges": {f"-j {j}": [min(v), max(v)] for j, v in measured.items()},
    }
    for key, value in figures["series_per_minute"].items():
        low, high = figures["ranges"][key]
        console.print(f"{key}: {value:.1f} series/min (runs {low:.1f}-{high:.1f})")
    if args.long:
        figures["runner_rss_kib"] = memory(args.long, 2)
        console.print(f"runner RSS (KiB): {figures['runner_rss_kib']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
