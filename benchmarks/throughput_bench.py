"""League throughput against an earlier commit: ``python -m benchmarks.throughput_bench``.

The same sandboxed league (``--bots``, greedy against strong by default) is played by this
checkout and by the code of ``--base`` (default ``5264d30``, the code before warm workers), each
in its own virtual environment (the base's is built once under ``build/bench-base/<commit>``
from ``git archive``; its own ``pip install -e``), at ``-j 1``, ``-j 2`` and, with ``--dask``, on
a Dask cluster of this machine (two one-thread workers; its start-up left out). The variants are
interleaved over ``--runs`` runs (the order rotates), and each figure is the median of its runs;
"now / base" is the median of the per-run ratios. Each run also times five start-ups of the
greedy bot (process start to hello, every sandbox layer) by each code.

For this checkout it also reads the worker lines' times
(``tournaments.executors.worker.WorkerLine``) and gives, per match, where the time went, and the
share of the league's wall time its workers spent starting processes: a worker's own start (spawn to
its first job) plus, for each match, the time its table stood idle waiting for the match's jails and
bots (from the later of the job's arrival and the previous series' end, to the series' start).

As root the whole benchmark re-runs itself inside ``unshare -n`` (loopback only), for the Dask
cluster.
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
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tournaments.executors.local_cluster import loopback_up

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benchmarks" / "league_driver.py"
BASE = "5264d30"
console = Console()


def base_checkout(commit: str) -> Path:
    """The code of ``commit`` with a virtual environment of its own (made once)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    folder = ROOT / "build" / "bench-base" / sha
    stamp = folder / ".ready"
    if stamp.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    console.log(f"building the code of {commit} ({sha}) in {folder} (once)")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder / ".venv")], check=True)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    pip = [str(folder / ".venv" / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "-e", f"{folder}[dask]"], check=True, env=env)
    stamp.touch()
    return folder


def play(root: Path, python: Path, args: list[str]) -> dict[str, Any]:
    """One league by the code in ``root`` (run from there, so its own worker module is found)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.json"
        subprocess.run([str(python), str(DRIVER), str(out), *args], cwd=root, check=True)
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def timeline(result: dict[str, Any]) -> tuple[dict[str, list[float]], float]:
    """Per-match parts (seconds) from a run's worker lines, and the start-up share."""
    matches: dict[float, list[dict[str, float]]] = defaultdict(list)
    closed: dict[str, float] = {}
    for line in result["lines"]:
        if "closed" in line:
            closed[str(line["match"])] = line["closed"]
        else:
            matches[line["worker"]].append(line)
    parts: dict[str, list[float]] = defaultdict(list)
    starting = 0.0
    for spawned, played in matches.items():
        played.sort(key=lambda line: line["began"])
        own_start = played[0]["received"] - spawned
        parts["a worker's own start (once per worker), ms"].append(own_start)
        starting += own_start
        previous_end: float | None = None
        for line in played:
            parts["jails made, both bots started, hellos, ms"].append(
                line["connected"] - line["received"]
            )
            parts["the series (decisions, bots thinking, bookkeeping), ms"].append(
                line["ended"] - line["began"]
            )
            parts["closing the match (beside the next one), ms"].append(
                closed.get(str(line["match"]), line["ended"]) - line["ended"]
            )
            ready = (
                line["received"] if previous_end is None else max(line["received"], previous_end)
            )
            idle = max(0.0, line["began"] - ready)
            parts["table idle, waiting for its bots, ms"].append(idle)
            starting += idle
            if previous_end is not None:
                parts["runner's gap, last series' end to next job, ms"].append(
                    max(0.0, line["received"] - previous_end)
                )
            previous_end = line["ended"]
    share = starting / (result["workers"] * result["wall_s"])
    return parts, share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help=f"the commit to compare with ({BASE})")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=8, help="series per league")
    parser.add_argument("--bots", default="greedy,strong")
    parser.add_argument("--jobs", default="1,2", help="the -j values to measure")
    parser.add_argument("--dask", action="store_true", help="also on a Dask cluster")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    base = base_checkout(args.base)  # before leaving the network: pip needs the index
    if args.dask and os.geteuid() == 0 and not args.in_netns and shutil.which("unshare"):
        argv = ["unshare", "--net", "--", sys.executable, "-m", "benchmarks.throughput_bench"]
        sys.exit(subprocess.call([*argv, *sys.argv[1:], "--in-netns"]))
    if args.in_netns:
        loopback_up()
    codes = {"base": (base, base / ".venv" / "bin" / "python"), "now": (ROOT, Path(sys.executable))}
    modes = [(f"-j {jobs}", ["--jobs", jobs]) for jobs in args.jobs.split(",")]
    if args.dask:
        modes.append(("dask, 2 workers", ["--dask", "2"]))
    console.print(
        f"{args.bots} league of {args.series} series; {os.cpu_count()} CPUs; loadavg "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; base {args.base}"
    )
    rates: dict[tuple[str, str], list[float]] = defaultdict(list)
    parts: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    shares: dict[str, list[float]] = defaultdict(list)
    starts: dict[str, list[float]] = defaultdict(list)
    for run in range(args.runs):
        order = list(codes) if run % 2 == 0 else list(reversed(codes))
        for mode, flags in modes:
            for code in order:
                root, python = codes[code]
                common = ["--series", str(args.series), "--bots", args.bots, "--seed", str(run)]
                result = play(root, python, [*common, *flags])
                rates[mode, code].append(args.series * 60 / result["wall_s"])
                if result["lines"]:
                    seen, share = timeline(result)
                    shares[mode].append(share)
                    for name, values in seen.items():
                        parts[mode][name] += values
        for code in order:
            root, python = codes[code]
            starts[code] += play(root, python, ["--startups", "5"])["startup_ms"]
        said = [f"{m} {rates[m, 'now'][-1]:.1f} vs {rates[m, 'base'][-1]:.1f}" for m, _ in modes]
        console.log(f"run {run + 1}/{args.runs}: {', '.join(said)} series/min (now vs base)")
    table = Table(title="series per minute, and a bot's start-up (medians of runs)")
    for column in ("", f"base {args.base}", "now", "now / base"):
        table.add_column(column, justify="right" if column else "left")
    figures: dict[str, Any] = {"runs": args.runs, "series": args.series, "bots": args.bots}
    for mode, _ in modes:
        base_rates, now_rates = rates[mode, "base"], rates[mode, "now"]
        ratio = statistics.median(n / b for n, b in zip(now_rates, base_rates, strict=True))
        table.add_row(
            mode,
            f"{statistics.median(base_rates):.1f}",
            f"{statistics.median(now_rates):.1f}",
            f"{ratio:.2f}x",
        )
        figures[mode] = {"base": base_rates, "now": now_rates, "ratio": ratio}
    base_start, now_start = (statistics.median(starts[code]) for code in ("base", "now"))
    table.add_row(
        "greedy's start-up to hello, ms (every layer)",
        f"{base_start:.0f}",
        f"{now_start:.0f}",
        f"{base_start / now_start:.2f}x",
    )
    figures["startup_ms"] = dict(starts)
    console.print(table)
    for mode, starting in shares.items():
        breakdown = Table(title=f"now, {mode}: one league series (medians over matches)")
        breakdown.add_column("part")
        breakdown.add_column("ms", justify="right")
        for name, values in parts[mode].items():
            breakdown.add_row(name.removesuffix(", ms"), f"{statistics.median(values) * 1000:.0f}")
        share = statistics.median(starting)
        breakdown.add_row("share of wall time starting processes", f"{share:.0%}")
        console.print(breakdown)
        figures[mode]["share_starting"] = starting
        figures[mode]["parts_ms"] = {
            name: statistics.median(values) * 1000 for name, values in parts[mode].items()
        }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
