"""Timing machinery shared by the benchmarks: interleaved runs, medians, ratios, machine facts.

Every variant of one benchmark is timed once per run, and the runs go round-robin: run ``r``
starts with variant ``r mod n``, so no variant always runs first or last, and slow drift of the
machine (other load, CPU frequency) spreads evenly over all of them. A figure is the median over
runs; a ratio is the median of the per-run ratios, each taken between two batches timed moments
apart.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from rich.console import Console

T = TypeVar("T")
R = TypeVar("R")

OURS = "ours"
"""The ``library`` name of our own variants."""


@dataclass(frozen=True)
class Variant:
    """One thing to time: a named call of one library over prepared inputs."""

    key: str
    """Short unique id (used in JSON)."""
    library: str
    """``ours``, ``OpenSpiel`` or ``RLCard``."""
    call: str
    """The exact call being timed, as shown to the reader."""
    returns: str
    """What one call answers, so the reader can judge whether two rows do the same work."""
    run: Callable[[int], int]
    """Do the batch of run ``r`` and return how many units (calls or hands) it did."""
    warm: Callable[[], object]
    """A small untimed batch on other inputs, done once before the first run."""


@dataclass
class Measured:
    """The per-run rates (units per second) of one variant."""

    variant: Variant
    rates: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        """Median rate over runs."""
        return statistics.median(self.rates)

    @property
    def low(self) -> float:
        """Slowest run."""
        return min(self.rates)

    @property
    def high(self) -> float:
        """Fastest run."""
        return max(self.rates)


def time_batch(variant: Variant, run: int) -> float:
    """Units per second of one batch (garbage collected first, collector left on)."""
    gc.collect()
    start = time.perf_counter()
    units = variant.run(run)
    elapsed = time.perf_counter() - start
    return units / elapsed


def round_robin(
    variants: Sequence[Variant], runs: int, progress: Callable[[str], None] | None = None
) -> list[Measured]:
    """Time every variant once per run, rotating which one goes first."""
    for variant in variants:
        variant.warm()
    measured = [Measured(variant) for variant in variants]
    count = len(measured)
    for run in range(runs):
        for offset in range(count):
            entry = measured[(run + offset) % count]
            entry.rates.append(time_batch(entry.variant, run))
        if progress is not None:
            progress(f"run {run + 1}/{runs} done")
    return measured


def ratio(ours: Measured, peer: Measured) -> float:
    """Median over runs of ours' rate divided by the peer's (above 1: ours is faster)."""
    return statistics.median(
        mine / theirs for mine, theirs in zip(ours.rates, peer.rates, strict=True)
    )


def package_version(name: str) -> str | None:
    """Installed version of a distribution, or ``None``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def loadavg() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages, where the platform has them."""
    try:
        return os.getloadavg()
    except OSError:
        return None


def usable_cpus() -> int | None:
    """CPUs this process may run on (the affinity mask), where the platform says."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return None


def environment() -> dict[str, object]:
    """Facts about the machine and interpreter that bear on the figures."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "loadavg_start": loadavg(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "versions": {
            name: package_version(name)
            for name in ("hollywood-gin-arena", "open_spiel", "rlcard", "numpy", "rich")
        },
    }


def rss_kib() -> int:
    """This process's resident memory, in KiB (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        lines = status.read().splitlines()
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pool_map(
    function: Callable[[T], R], tasks: Sequence[T], jobs: int, chunksize: int = 1
) -> Iterator[R]:
    """``function`` over every task, in ``jobs`` worker processes when more than one; results
    come as they finish (in any order: each carries its task)."""
    if jobs <= 1:
        yield from map(function, tasks)
        return
    with multiprocessing.Pool(jobs) as pool:
        yield from pool.imap_unordered(function, tasks, chunksize=chunksize)


def matchup_parser(names: Collection[str]) -> Callable[[str], tuple[str, str]]:
    """An argparse type for ``A:B``, with both names among ``names``."""

    def parse(text: str) -> tuple[str, str]:
        a, sep, b = text.partition(":")
        if not sep or a not in names or b not in names:
            raise argparse.ArgumentTypeError(
                f"a matchup is A:B with A and B among {', '.join(names)}, not {text!r}"
            )
        return a, b

    return parse


PairTask = tuple[str, str, int, int]
"""(name of A, name of B, pair index, series seed): what one worker call plays."""


def play_pairs(
    matchups: Sequence[tuple[str, str]],
    pairs: int,
    seed_of: Callable[[int], int],
    run_task: Callable[[PairTask], tuple[PairTask, R]],
    *,
    jobs: int,
    status: Console,
    chunksize: int = 1,
) -> dict[tuple[str, str], list[R]]:
    """Every matchup's pairs ``0 .. pairs - 1`` (pair ``i`` dealt from ``seed_of(i)``), played
    by ``run_task`` in ``jobs`` processes; each matchup's results in pair order. Progress goes
    to ``status`` twenty times."""
    tasks = [(a, b, index, seed_of(index)) for a, b in matchups for index in range(pairs)]
    found: dict[tuple[str, str], dict[int, R]] = {matchup: {} for matchup in matchups}
    started = time.perf_counter()
    step = max(1, len(tasks) // 20)
    for done, (task, played) in enumerate(pool_map(run_task, tasks, jobs, chunksize), start=1):
        found[(task[0], task[1])][task[2]] = played
        if done % step == 0 or done == len(tasks):
            status.log(f"{done}/{len(tasks)} pairs played ({time.perf_counter() - started:.0f} s)")
    return {matchup: [found[matchup][i] for i in range(pairs)] for matchup in matchups}


def write_report(
    path: Path, env: dict[str, object], config: dict[str, object], **sections: object
) -> None:
    """Save a benchmark's configuration, the machine (with the load at the end) and its
    figures (``sections``) in one JSON file."""
    document = {"environment": env | {"loadavg_end": loadavg()}, "config": config, **sections}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
