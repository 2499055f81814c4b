"""Import time of the modules every bot and match process loads, each in fresh interpreters.

    python -m benchmarks.import_bench [--runs N] [--json FILE] [--target KEY ...]

For each import (``python -c pass`` as the floor, ``referee.rules``, ``grpc``, ``protocol.sdk``,
``tournaments.executors.worker``, and ``referee.rules`` once ``grpc`` is loaded: what it adds to a
bot) a new interpreter is started per run, twice:

* ``warm``: bytecode caches present, as in a sandboxed bot whose code folder has them. The caches
  live under ``-X pycache_prefix`` in a temporary folder, written by one untimed start first, so
  the checkout and the interpreter's own folders are neither used nor touched.
* ``cold``: no caches at all, every module (the standard library's too) compiled from source:
  ``-X pycache_prefix`` pointing at an empty temporary folder, with ``PYTHONDONTWRITEBYTECODE=1``
  so nothing is written there.

Two figures per start: the import itself, timed with ``time.perf_counter`` inside the child and
printed by it, and the wall time of the whole process (start, import, exit) seen by the parent.
The starts go round-robin like :mod:`benchmarks.harness`: run ``r`` begins with variant ``r mod
n``, so machine drift spreads over all of them. The table gives medians with min and max; the last
column is the process wall time minus that of ``python -c pass`` in the same run and cache mode
(median of the per-run differences).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.harness import environment, loadavg, write_report

ROOT = Path(__file__).resolve().parent.parent
MODES = ("warm", "cold")


@dataclass(frozen=True)
class Target:
    """One import to time."""

    key: str
    """Short id (command line and JSON)."""
    label: str
    """What is timed, as shown to the reader."""
    timed: str
    """The statement timed inside the child."""
    setup: str = ""
    """Run untimed in the child before the timed statement."""


TARGETS = (
    Target("pass", "python -c pass", "pass"),
    Target("rules", "import referee.rules", "import referee.rules"),
    Target("grpc", "import grpc", "import grpc"),
    Target("sdk", "import protocol.sdk", "import protocol.sdk"),
    Target("worker", "import tournaments.executors.worker", "import tournaments.executors.worker"),
    Target(
        "rules_after_grpc",
        "import referee.rules, grpc already imported",
        "import referee.rules",
        setup="import grpc",
    ),
)
BY_KEY = {target.key: target for target in TARGETS}


@dataclass
class Series:
    """The starts of one target in one cache mode."""

    target: Target
    mode: str
    import_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    failure: str | None = None


@dataclass(frozen=True)
class Config:
    """What to run."""

    runs: int
    targets: tuple[Target, ...]
    json_path: Path | None


def parse_args(argv: Sequence[str] | None) -> Config:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.import_bench",
        description="Import times in fresh interpreters, with and without bytecode caches.",
    )
    parser.add_argument("--runs", type=int, default=15, help="starts per import and mode (15)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument(
        "--target",
        action="append",
        choices=list(BY_KEY),
        help="time only this import (repeatable; python -c pass is always timed)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    keys = ["pass", *(key for key in BY_KEY if key in (args.target or BY_KEY) and key != "pass")]
    return Config(args.runs, tuple(BY_KEY[key] for key in keys), args.json)


def child_code(target: Target) -> str:
    """The program one child runs: the setup, then the timed statement, then its duration."""
    return (
        f"{target.setup}\n"
        "import time as _time\n"
        "_start = _time.perf_counter()\n"
        f"{target.timed}\n"
        "print(repr(_time.perf_counter() - _start))\n"
    )


def child_command(target: Target, prefix: Path) -> list[str]:
    """The interpreter command of one start, its bytecode caches under ``prefix``."""
    return [sys.executable, "-X", f"pycache_prefix={prefix}", "-c", child_code(target)]


def child_env(mode: str) -> dict[str, str]:
    """The environment of a child: writes caches when warm, never when cold."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    if mode == "cold":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def start(target: Target, mode: str, prefix: Path) -> tuple[float, float] | str:
    """One fresh interpreter: ``(import ms, process wall ms)``, or why it failed."""
    began = time.perf_counter()
    done = subprocess.run(
        child_command(target, prefix),
        cwd=ROOT,
        env=child_env(mode),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        error = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"{target.label} failed: {error}"
    try:
        inside = float(lines[-1])
    except ValueError:
        return f"{target.label} printed {lines[-1]!r}, not its time"
    return inside * 1e3, wall * 1e3


def measure(config: Config, folder: Path, status: Console) -> list[Series]:
    """Prime the warm caches, then every start of every variant, round-robin."""
    prefixes = {"warm": folder / "warm", "cold": folder / "empty"}
    for prefix in prefixes.values():
        prefix.mkdir()
    series = [Series(target, mode) for mode in MODES for target in config.targets]
    for entry in series:
        if entry.mode == "warm":
            primed = start(entry.target, "warm", prefixes["warm"])
            if isinstance(primed, str):
                entry.failure = primed
    count = len(series)
    for run in range(config.runs):
        for offset in range(count):
            entry = series[(run + offset) % count]
            if entry.failure is not None:
                continue
            timed = start(entry.target, entry.mode, prefixes[entry.mode])
            if isinstance(timed, str):
                entry.failure = timed
            else:
                entry.import_ms.append(timed[0])
                entry.wall_ms.append(timed[1])
        status.log(f"run {run + 1}/{config.runs} done")
    if any(prefixes["cold"].iterdir()):
        status.log("warning: a cold start wrote bytecode caches; cold figures may be warm")
    return series


def spread(values: Sequence[float]) -> str:
    """``median (min-max)`` in milliseconds."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def over_floor(entry: Series, floor: Series | None) -> float | None:
    """Median over runs of this start's wall time minus ``python -c pass``'s in the same run."""
    if floor is None or floor is entry or not floor.wall_ms or not entry.wall_ms:
        return None
    pairs = zip(entry.wall_ms, floor.wall_ms, strict=False)
    return statistics.median(mine - base for mine, base in pairs)


def floors(series: Sequence[Series]) -> dict[str, Series]:
    """The ``python -c pass`` series of each cache mode."""
    return {entry.mode: entry for entry in series if entry.target.key == "pass"}


def results_table(series: Sequence[Series], runs: int) -> Table:
    """Medians with min and max, per import and cache mode."""
    table = Table(
        title=f"Import times, ms: median (min-max) of {runs} fresh interpreters",
        title_justify="left",
        show_lines=True,
    )
    for header in ("import", "caches", "import, timed inside", "process wall", "wall - pass"):
        table.add_column(header, justify="left" if header in ("import", "caches") else "right")
    base = floors(series)
    for entry in sorted(series, key=row_order):
        if entry.failure is not None or not entry.import_ms:
            table.add_row(entry.target.label, entry.mode, entry.failure or "no starts", "", "")
            continue
        extra = over_floor(entry, base.get(entry.mode))
        table.add_row(
            entry.target.label,
            entry.mode,
            "-" if entry.target.key == "pass" else spread(entry.import_ms),
            spread(entry.wall_ms),
            "" if extra is None else f"{extra:.1f}",
        )
    return table


def row_order(entry: Series) -> tuple[int, int]:
    """Rows in the order of :data:`TARGETS`, warm before cold."""
    return TARGETS.index(entry.target), MODES.index(entry.mode)


def series_json(entry: Series, floor: Series | None) -> dict[str, object]:
    """One variant's raw figures and summary."""
    document: dict[str, object] = {
        "target": entry.target.key,
        "label": entry.target.label,
        "mode": entry.mode,
        "failure": entry.failure,
        "import_ms": entry.import_ms,
        "wall_ms": entry.wall_ms,
    }
    if entry.import_ms:
        document["import_ms_median"] = statistics.median(entry.import_ms)
        document["wall_ms_median"] = statistics.median(entry.wall_ms)
        document["wall_over_pass_ms_median"] = over_floor(entry, floor)
    return document


def main(argv: Sequence[str] | None = None) -> int:
    """Time every import and print the table."""
    config = parse_args(argv)
    console = Console() if sys.stdout.isatty() else Console(width=140)
    status = Console(stderr=True, log_path=False)
    env = environment()
    console.print(
        f"python {env['python']} ({sys.executable}), {env['usable_cpus']} usable CPUs, "
        f"loadavg {' '.join(f'{value:.2f}' for value in loadavg() or ())}",
        highlight=False,
        markup=False,
    )
    with tempfile.TemporaryDirectory(prefix="import-bench-") as folder:
        series = measure(config, Path(folder), status)
    console.print(results_table(series, config.runs))
    console.print(
        f"loadavg at the end: {' '.join(f'{value:.2f}' for value in loadavg() or ())}",
        highlight=False,
        markup=False,
    )
    if config.json_path is not None:
        base = floors(series)
        write_report(
            config.json_path,
            env,
            {"runs": config.runs, "targets": [target.key for target in config.targets]},
            results=[series_json(entry, base.get(entry.mode)) for entry in series],
        )
        console.print(f"JSON written to {config.json_path}", highlight=False, markup=False)
    return 1 if any(entry.failure for entry in series) else 0


if __name__ == "__main__":
    raise SystemExit(main())
