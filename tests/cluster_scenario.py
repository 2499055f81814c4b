"""A real Dask cluster on 127.0.0.1 playing a league through ``gin league run --executor dask``.

``python -m tests.cluster_scenario OUT.json --home HOME --league NAME [--kill-worker]
[--interrupt] [--plant DIR]`` starts a scheduler and two workers (each a nanny and a worker
process, one thread), runs the league with the real CLI, and writes what it saw to OUT.json.
tests/test_cluster.py runs it inside ``unshare -n`` (a network namespace with only loopback) when
it can, so nothing of the cluster can reach beyond this machine. Every process it starts leads a
process group of its own, and only those groups are killed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from distributed import Client

from referee.sandbox import default_jail_root
from referee.sandbox._procs import is_alive, table
from tournaments.executors.cluster_task import match_slug, started_processes, swept
from tournaments.executors.local_cluster import local_cluster, loopback_up

WAIT_S = 60.0


def match_processes(worker_pid: int) -> dict[int, str]:
    """The worker's match processes (``tournaments.executors.worker``) playing a match now, and the
    log each has open in its match folder (a warm one between matches has none, and is left out)."""
    found = {}
    for child in (p.pid for p in table() if p.ppid == worker_pid and p.alive):
        with contextlib.suppress(OSError):
            if b"tournaments.executors.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                log = open_match_log(child)
                if log is not None:
                    found[child] = log
    return found


def open_match_log(pid: int) -> str | None:
    """The file of a match folder (``.../matches/<folder>/...``) the process has open, if any."""
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = Path(os.readlink(f"/proc/{pid}/fd/{fd}"))
                if target.parent.parent.name == "matches":
                    return str(target)
    return None


def wait_until(condition: Any, seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {seconds} s")
        time.sleep(0.05)


def worker_pids(client: Client) -> dict[str, int]:
    return {address: int(pid) for address, pid in client.run(os.getpid).items()}


def kill_a_playing_worker(client: Client) -> dict[str, Any]:
    """SIGKILL the first worker process seen playing a match; what was killed."""
    victim: dict[str, Any] = {}

    def playing() -> bool:
        for address, pid in worker_pids(client).items():
            matches = match_processes(pid)
            if matches:
                victim.update(address=address, pid=pid, matches=matches)
                return True
        return False

    wait_until(playing)
    log = Path(next(iter(victim["matches"].values())))
    wait_until(lambda: _records(log) >= 4)  # well into the match: its first hand is being played
    folder = log.parent
    os.kill(victim["pid"], signal.SIGKILL)
    victim["folder_at_kill"] = folder.is_dir()  # still there: the kill came mid-match
    match_pids = list(victim["matches"])
    # A zombie counts as gone: an orphan may be reparented to a subreaper that never reaps it,
    # such as a test process that made a sandbox.
    wait_until(lambda: not any(is_alive(pid) for pid in match_pids), 30)
    victim["match_folder"] = Path(next(iter(victim["matches"].values()))).parent.name
    victim["matches"] = {str(k): v for k, v in victim["matches"].items()}
    return victim


def _records(log: Path) -> int:
    """How many records a log being written has so far (0 while it cannot be read)."""
    try:
        return log.read_bytes().count(b"\n")
    except OSError:
        return 0


def done(home: Path, league: str) -> int:
    """Results of ``league`` so far."""
    with sqlite3.connect(home / "arena.sqlite", timeout=30) as db:
        query = "SELECT COUNT(*) FROM results WHERE league = ?"
        return int(db.execute(query, (league,)).fetchone()[0])


def playing(client: Client) -> dict[str, list[int]]:
    """Each worker's running match processes."""
    return {a: list(match_processes(pid)) for a, pid in worker_pids(client).items()}


def busy(client: Client) -> bool:
    return any(playing(client).values())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--league", required=True)
    parser.add_argument("--netns", action="store_true", help="bring lo up first")
    parser.add_argument("--kill-worker", action="store_true")
    parser.add_argument("--interrupt", action="store_true")
    parser.add_argument("--kill-coordinator", action="store_true")
    parser.add_argument("--kill-scheduler", action="store_true", help="the last step")
    parser.add_argument("--plant", type=Path, help="an abandoned match folder to be swept")
    parser.add_argument(
        "--arena", type=int, default=0, help="serve the arena's ladder until this many results"
    )
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.netns:
        report["interfaces"] = loopback_up()
    env = {**os.environ, "GIN_HOME": str(args.home), "COLUMNS": "120"}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    with local_cluster(args.out.parent, env) as (address, client):
        report["address"] = address
        run = [sys.executable, "-m", "tournaments.cli.entry", "league", "run", args.league]
        if args.arena:
            run = [sys.executable, "-m", "tournaments.cli.entry", "arena", "serve", "--port", "0"]
            run += ["-j", "2"]
        run += ["--executor", "dask", "--scheduler", address]

        def coordinate() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                run,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        coordinator = coordinate()
        try:
            if args.kill_worker:
                report["killed"] = kill_a_playing_worker(client)
                wait_until(lambda: len(client.nthreads()) == 2)  # the nanny started a new one
            if args.interrupt:
                wait_until(lambda: done(args.home, args.league) >= 1 and busy(client), 120)
                coordinator.send_signal(signal.SIGINT)
                output, _ = coordinator.communicate(timeout=60)
                report["interrupt"] = {
                    "code": coordinator.returncode,
                    "output": output.decode(errors="replace")[-2000:],
                    "left_playing": playing(client),  # the coordinator waited for them to stop
                }
                coordinator = coordinate()
            if args.kill_coordinator:
                wait_until(lambda: busy(client), 120)
                os.kill(coordinator.pid, signal.SIGKILL)
                coordinator.wait()
                killed_at = time.monotonic()
                wait_until(lambda: not busy(client), 30)
                report["orphan_matches_stopped_s"] = time.monotonic() - killed_at
                coordinator = coordinate()
            if args.kill_scheduler:
                wait_until(lambda: done(args.home, args.league) >= 1 and busy(client), 120)
                os.kill(int(client.run_on_scheduler(os.getpid)), signal.SIGKILL)
            if args.arena:  # a server plays for ever: stopped once it has played enough
                wait_until(lambda: done(args.home, args.league) >= args.arena, 300)
                coordinator.send_signal(signal.SIGTERM)
            output, _ = coordinator.communicate(timeout=600)
        finally:
            if coordinator.poll() is None:
                os.killpg(coordinator.pid, signal.SIGKILL)
                coordinator.wait()
        report["code"] = coordinator.returncode
        report["output"] = output.decode(errors="replace")[-4000:]
        if args.kill_scheduler:
            args.out.write_text(json.dumps(report, indent=1))
            return 0
        report["left_playing"] = playing(client)
        report["processes_started"] = client.run(started_processes)
        report["swept"] = client.run(swept)
        prefix = match_slug(args.league) + "_"
        report["jails_left"] = [p.name for p in default_jail_root().glob(f"{prefix}*")]
        if args.plant is not None:
            report["plant_left"] = args.plant.exists()
    args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
