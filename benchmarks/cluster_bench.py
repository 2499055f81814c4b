"""League throughput, local runner against a Dask cluster: ``python -m benchmarks.cluster_bench``.

The same greedy-against-greedy league (real sandboxed bot processes, start-up included) is played
by the local runner (``-j`` = the cluster's worker count) and by the Dask executor on a cluster
of this machine (a scheduler and ``--workers`` workers of one thread, on 127.0.0.1), the two
interleaved over ``--runs`` runs. Also: the cluster's start-up, the coordinator's connect and
checks, and per match where the Dask path spends its time (submit, queue and transfer, fetch,
unpacking the bots, the match itself).

As root the whole benchmark re-runs itself inside ``unshare -n`` (loopback only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.sandbox import harden_referee_process

harden_referee_process()

import trio  # noqa: E402
from rich.console import Console  # noqa: E402

from benchmarks.league_bench import greedy_league, throughput  # noqa: E402
from tournaments.executors.cluster import DaskExecutor, MatchTimings  # noqa: E402
from tournaments.executors.local_cluster import local_cluster, loopback_up  # noqa: E402
from tournaments.runner import LeagueRunner  # noqa: E402

console = Console()


def dask_rate(address: str, series: int, seed: int) -> tuple[float, float, list[MatchTimings]]:
    """Series per minute on the cluster; the connect-and-check time; per-match timings."""
    with tempfile.TemporaryDirectory() as folder:
        arena, config = greedy_league(Path(folder), "dask", series, seed)
        began = time.perf_counter()
        executor, _report = DaskExecutor.connect(address)
        connected = time.perf_counter() - began
        runner = LeagueRunner(arena, arena.open_store(), config, 0, executor=executor)
        start = time.perf_counter()
        progress = trio.run(runner.run)
        if progress.done != series:
            raise RuntimeError(f"the Dask league finished {progress.done} of {series} series")
        return series * 60 / (time.perf_counter() - start), connected, executor.timings


def breakdown(timings: list[MatchTimings]) -> dict[str, float]:
    """Median milliseconds per match of each part of the Dask path."""
    parts = {
        "submit (pickle + send the task, bots included)": [t.submit_s for t in timings],
        "queue + transfer + worker overhead": [t.wait_s - t.match_s - t.unpack_s for t in timings],
        "unpack + hash-check the bots (cached after first)": [t.unpack_s for t in timings],
        "the match (worker process, sandbox, bots)": [t.match_s for t in timings],
        "fetch the result and log": [t.fetch_s for t in timings],
    }
    return {name: round(statistics.median(values) * 1000, 1) for name, values in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=16, help="series per run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.geteuid() == 0 and not args.in_netns and shutil.which("unshare"):
        argv = ["unshare", "--net", "--", sys.executable, "-m", "benchmarks.cluster_bench"]
        sys.exit(subprocess.call([*argv, *sys.argv[1:], "--in-netns"]))
    if args.in_netns:
        console.print(f"network namespace of its own; interfaces: {loopback_up()}")
    console.print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loadavg "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    local: list[float] = []
    dask: list[float] = []
    connects: list[float] = []
    timings: list[MatchTimings] = []
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        with local_cluster(Path(folder), workers=args.workers) as (address, _client):
            started = time.perf_counter() - began
            console.log(f"cluster of {args.workers} workers up in {started:.2f} s at {address}")
            for run in range(args.runs):
                seed = 1000 * run
                order = ["local", "dask"] if run % 2 == 0 else ["dask", "local"]
                for kind in order:
                    if kind == "local":
                        local.append(throughput(args.workers, args.series, seed))
                    else:
                        rate, connect, matches = dask_rate(address, args.series, seed)
                        dask.append(rate)
                        connects.append(connect)
                        timings += matches
                console.log(
                    f"run {run + 1}/{args.runs}: local {local[-1]:.1f}, dask {dask[-1]:.1f} "
                    "series/min"
                )
    ratios = [d / lo for d, lo in zip(dask, local, strict=True)]
    figures: dict[str, Any] = {
        "series_per_minute": {"local": statistics.median(local), "dask": statistics.median(dask)},
        "ranges": {"local": [min(local), max(local)], "dask": [min(dask), max(dask)]},
        "dask_over_local": {"median": statistics.median(ratios), "runs": ratios},
        "cluster_start_s": started,
        "connect_and_check_s": statistics.median(connects),
        "per_match_ms": breakdown(timings),
        "bundle_bytes_per_match": statistics.median(t.bundle_bytes for t in timings),
        "log_bytes_per_match_compressed": statistics.median(t.log_bytes for t in timings),
    }
    for kind in ("local", "dask"):
        low, high = figures["ranges"][kind]
        value = figures["series_per_minute"][kind]
        console.print(f"{kind}: {value:.1f} series/min (runs {low:.1f}-{high:.1f})")
    console.print(f"dask / local: {figures['dask_over_local']['median']:.2f}x (median of runs)")
    console.print(
        f"cluster start {started:.2f} s; connect + worker checks "
        f"{figures['connect_and_check_s']:.2f} s"
    )
    for part, value in figures["per_match_ms"].items():
        console.print(f"  {part}: {value} ms")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
