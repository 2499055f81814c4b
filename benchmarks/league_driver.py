"""One timed league, for ``benchmarks.throughput_bench``: run as a script by the Python of the code
being measured (this checkout, or an earlier commit's own virtual environment), so it uses only
what every measured version has: ``Arena``, ``submit``, ``LeagueConfig``, ``create_league``,
``LeagueRunner`` and, for ``--dask``, the Dask executor and a cluster on this machine.

``python benchmarks/league_driver.py OUT.json --series N --jobs J [--dask W] [--bots a,b]``
plays a league of the sample bots named (``greedy,strong`` by default) with ``N`` series and
writes the wall time and, where the code reports them (warm workers), every worker's lines with
their times. ``--startups N`` instead times ``N`` start-ups of the greedy bot (process start to
hello, every sandbox layer) and gives each one's CPU.

For ``benchmarks.series_bench``: ``--public-deals`` makes the league's deals follow from
``--seed`` alone (the same deals in every version of the code and in the benchmark's floor), and
the output also has every series' result, the driver's CPU before and after the league, and each
warm worker's own CPU and its children's, which the workers write as they exit (they are started
through ``MEASURED_WORKER``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.sandbox import harden_referee_process

harden_referee_process()

import trio  # noqa: E402

import sample_bots  # noqa: E402
from tournaments.league import LeagueConfig, create_league  # noqa: E402
from tournaments.registry import Arena, submit  # noqa: E402
from tournaments.runner import LeagueRunner  # noqa: E402

MEASURED_WORKER = """
import atexit, json, os, resource, runpy, sys
folder = sys.argv[1]
def said():
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    cpu = {"self": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime}
    with open(os.path.join(folder, f"worker-{os.getpid()}.json"), "w") as out:
        json.dump(cpu, out)
atexit.register(said)
sys.argv = ["tournaments.executors.worker"]
runpy.run_module("tournaments.executors.worker", run_name="__main__", alter_sys=True)
"""
"""A warm worker that, as it exits, writes its own CPU (``self``: every thread of it) and its
reaped children's (``children``: its bots' processes, and orphans it adopted as a subreaper)."""


def league(
    home: Path, bots: list[str], series: int, seed: int, public: bool = False
) -> tuple[Arena, LeagueConfig]:
    """A league of sample bots in ``home`` (``public``: its deals from ``seed`` alone)."""
    arena = Arena(home)
    store = arena.open_store()
    samples = Path(sample_bots.__file__).parent
    folders = []
    for index, bot in enumerate(bots):
        folder = samples / bot
        if bots.count(bot) > 1:  # the same bot twice: copies under names of their own
            folder = home / "copies" / f"{bot}-{index}"
            shutil.copytree(samples / bot, folder, ignore=shutil.ignore_patterns("__pycache__"))
            manifest = folder / "bot.toml"
            text = re.sub(r'(?m)^name = "([^"]*)"', rf'name = "\1-{index}"', manifest.read_text())
            manifest.write_text(text)
        folders.append(folder)
    idents = [trio.run(submit, arena, store, folder, None).ident for folder in folders]
    config = LeagueConfig.from_dict(
        {"name": "speed", "seed": seed, "bots": idents, "series_per_pairing": series}
        | ({"public_deals": True} if public else {})
    )
    create_league(store, config)
    return arena, config


def module(*names: str) -> Any:
    """The first of these modules this version of the code has (None if none)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def local_executor(jobs: int, lines: list[dict[str, Any]], cpu_folder: Path) -> Any:
    """The local executor, with a watch on its workers' lines where it has one, and workers that
    write their CPU in ``cpu_folder`` as they exit."""
    local = module("tournaments.executors.local")
    if local is None:
        return None  # an earlier layout: the runner makes its own

    def watch(worker: Any, line: Any) -> None:
        lines.append({"worker": worker.spawned_at, "match": line.match_id, **line.times})

    command = (sys.executable, "-c", MEASURED_WORKER, str(cpu_folder))
    try:
        return local.LocalExecutor(jobs, watch=watch, command=command)
    except TypeError:
        return None  # no warm workers: nothing to watch


def workers_cpu(folder: Path) -> list[dict[str, float]]:
    """The CPU each worker wrote as it exited (a worker killed wrote none)."""
    return [json.loads(path.read_text()) for path in sorted(folder.glob("worker-*.json"))]


def cpu_now() -> dict[str, float]:
    """This process's CPU and its reaped children's so far, in seconds."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return {"self": own.ru_utime + own.ru_stime, "children": children.ru_utime + children.ru_stime}


def results(arena: Arena, config: LeagueConfig) -> list[dict[str, Any]]:
    """Every played series' result (index, seats, deal seed, winner, totals, hands, decisions)."""
    found = []
    for row in arena.open_store().results(config.name):
        summary = row.summary
        found.append(
            {
                "index": int(row.match_id.rsplit("~", 1)[1]),
                "seats": list(row.seats),
                "seed": summary.seed,
                "winner": summary.winner,
                "totals": [list(totals) for totals in summary.totals],
                "hands": summary.hands,
                "decisions": sum(stats.decisions for stats in summary.stats),
                "faults": len(summary.faults),
            }
        )
    return found


def dask_run(arena: Arena, config: LeagueConfig, workers: int, folder: Path) -> float:
    """Seconds to play the league on a fresh cluster of ``workers`` one-thread workers (its
    start-up and the coordinator's connect and checks left out)."""
    executors = module("tournaments.executors.cluster", "tournaments.cluster")
    clusters = module("tournaments.executors.local_cluster", "tournaments.cluster")
    with clusters.local_cluster(folder, workers=workers) as (address, _client):
        executor, _report = executors.DaskExecutor.connect(address)
        runner = LeagueRunner(arena, arena.open_store(), config, 0, executor=executor)
        started = time.perf_counter()
        progress = trio.run(runner.run)
        wall = time.perf_counter() - started
    check(progress)
    return wall


def startups(count: int) -> tuple[list[float], list[dict[str, float]]]:
    """Process start to hello of the greedy sample bot, with every sandbox layer that works
    here, as the referee measures it (ms), ``count`` times; and the CPU of each start and
    close (the jail made and removed by this process, ``self``; the bot's processes, reaped
    here, ``children``)."""
    from protocol.manifest import load_manifest  # noqa: PLC0415 - only this mode needs them
    from referee.local import remote_seat  # noqa: PLC0415
    from referee.sandbox import Sandbox  # noqa: PLC0415

    sandbox = Sandbox()
    greedy = load_manifest(Path(sample_bots.__file__).parent / "greedy")
    found = []
    cpu: list[dict[str, float]] = []
    for index in range(count):
        seat = remote_seat(greedy, sandbox.prepare, f"bench-start-{index}")

        async def start(seat: Any = seat) -> None:
            try:
                await seat.connect(0)
            finally:
                await seat.close("bench")

        before = cpu_now()
        trio.run(start)
        after = cpu_now()
        cpu.append({part: after[part] - before[part] for part in after})
        found.append(float(seat.startup_ms or 0.0))
    return found, cpu


def check(progress: Any) -> None:
    """Every series played, or stop with what went wrong."""
    if progress.done != progress.total:
        faults = "; ".join(list(progress.faults)[-2:])
        raise SystemExit(f"the league finished {progress.done} of {progress.total}: {faults}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--series", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dask", type=int, default=0, metavar="W", help="on a cluster of W")
    parser.add_argument("--bots", default="greedy,strong")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--startups", type=int, default=0, metavar="N", help="time N starts")
    parser.add_argument("--public-deals", action="store_true", help="deals from --seed alone")
    args = parser.parse_args()
    if args.startups:
        took, cpu = startups(args.startups)
        args.out.write_text(json.dumps({"startup_ms": took, "startup_cpu_s": cpu}))
        return
    lines: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        bots = args.bots.split(",")
        arena, config = league(Path(folder), bots, args.series, args.seed, args.public_deals)
        if args.dask:
            wall = dask_run(arena, config, args.dask, Path(folder) / "cluster")
        else:
            cpu_folder = Path(folder) / "cpu"
            cpu_folder.mkdir()
            executor = local_executor(args.jobs, lines, cpu_folder)
            runner = LeagueRunner(arena, arena.open_store(), config, args.jobs, executor=executor)
            setup = cpu_now()
            started = time.time()
            progress = trio.run(runner.run)
            wall = time.time() - started
            check(progress)
            slots = getattr(executor, "size", args.jobs)
            for line in lines:
                line["league_started"] = started
            document = {
                "wall_s": wall,
                "lines": lines,
                "workers": slots,
                "setup_cpu_s": setup,
                "end_cpu_s": cpu_now(),
                "worker_cpu_s": workers_cpu(cpu_folder),
                "workers_started": getattr(executor, "started", None),
                "results": results(arena, config),
            }
            args.out.write_text(json.dumps(document))
            return
    args.out.write_text(json.dumps({"wall_s": wall, "lines": [], "workers": args.dask}))


if __name__ == "__main__":
    main()
