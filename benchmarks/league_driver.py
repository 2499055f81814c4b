"""One timed league, for ``benchmarks.throughput_bench``: run as a script by the Python of the code
being measured (this checkout, or an earlier commit's own virtual environment), so it uses only
what every measured version has: ``Arena``, ``submit``, ``LeagueConfig``, ``create_league``,
``LeagueRunner`` and, for ``--dask``, the Dask executor and a cluster on this machine.

``python benchmarks/league_driver.py OUT.json --series N --jobs J [--dask W] [--bots a,b]``
plays a league of the sample bots named (``greedy,strong`` by default) with ``N`` series and
writes the wall time and, where the code reports them (warm workers), every worker's lines with
their times. ``--startups N`` instead times ``N`` start-ups of the greedy bot (process start to
hello, every sandbox layer).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shutil
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


def league(home: Path, bots: list[str], series: int, seed: int) -> tuple[Arena, LeagueConfig]:
    """A league of sample bots in ``home``."""
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


def local_executor(jobs: int, lines: list[dict[str, Any]]) -> Any:
    """The local executor, with a watch on its workers' lines where it has one."""
    local = module("tournaments.executors.local")
    if local is None:
        return None  # an earlier layout: the runner makes its own

    def watch(worker: Any, line: Any) -> None:
        lines.append({"worker": worker.spawned_at, "match": line.match_id, **line.times})

    try:
        return local.LocalExecutor(jobs, watch=watch)
    except TypeError:
        return None  # no warm workers: nothing to watch


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


def startups(count: int) -> list[float]:
    """Process start to hello of the greedy sample bot, with every sandbox layer that works
    here, as the referee measures it (ms), ``count`` times."""
    from protocol.manifest import load_manifest  # noqa: PLC0415 - only this mode needs them
    from referee.local import remote_seat  # noqa: PLC0415
    from referee.sandbox import Sandbox  # noqa: PLC0415

    sandbox = Sandbox()
    greedy = load_manifest(Path(sample_bots.__file__).parent / "greedy")
    found = []
    for index in range(count):
        seat = remote_seat(greedy, sandbox.prepare, f"bench-start-{index}")

        async def start(seat: Any = seat) -> None:
            try:
                await seat.connect(0)
            finally:
                await seat.close("bench")

        trio.run(start)
        found.append(float(seat.startup_ms or 0.0))
    return found


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
    args = parser.parse_args()
    if args.startups:
        args.out.write_text(json.dumps({"startup_ms": startups(args.startups)}))
        return
    lines: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        arena, config = league(Path(folder), args.bots.split(","), args.series, args.seed)
        if args.dask:
            wall = dask_run(arena, config, args.dask, Path(folder) / "cluster")
        else:
            executor = local_executor(args.jobs, lines)
            runner = LeagueRunner(arena, arena.open_store(), config, args.jobs, executor=executor)
            started = time.time()
            progress = trio.run(runner.run)
            wall = time.time() - started
            check(progress)
            slots = getattr(executor, "size", args.jobs)
            for line in lines:
                line["league_started"] = started
            args.out.write_text(json.dumps({"wall_s": wall, "lines": lines, "workers": slots}))
            return
    args.out.write_text(json.dumps({"wall_s": wall, "lines": [], "workers": args.dask}))


if __name__ == "__main__":
    main()
