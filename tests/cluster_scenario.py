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
import fcntl
import json
import os
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distributed import Client

from tournaments.cluster import swept

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
WAIT_S = 60.0


def loopback_up() -> list[str]:
    """Bring ``lo`` up (a fresh network namespace starts with it down); the interfaces seen."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        if not flags & IFF_UP:
            fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))
    return sorted(name for _, name in socket.if_nameindex())


def children(pid: int) -> list[int]:
    """Processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def match_processes(worker_pid: int) -> dict[int, str]:
    """The worker's match processes (``tournaments.worker``) and the folders they play in."""
    found = {}
    for child in children(worker_pid):
        with contextlib.suppress(OSError):
            if b"tournaments.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                found[child] = os.readlink(f"/proc/{child}/fd/0")
    return found


def wait_until(condition: Any, seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {seconds} s")
        time.sleep(0.05)


@contextlib.contextmanager
def cluster(folder: Path, env: dict[str, str]) -> Iterator[tuple[str, Client]]:
    """A scheduler and two workers on 127.0.0.1; (address, a client)."""
    started: list[subprocess.Popen[bytes]] = []
    scheduler_file = folder / "scheduler.json"
    logs = folder / "cluster-logs"
    logs.mkdir(parents=True, exist_ok=True)

    def start(name: str, argv: list[str]) -> None:
        with open(logs / f"{name}.log", "wb") as log:
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", *argv],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    try:
        scheduler = ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
        start("scheduler", [*scheduler, "--no-dashboard", "--scheduler-file", str(scheduler_file)])
        wait_until(lambda: scheduler_file.exists() and scheduler_file.stat().st_size > 0)
        address = json.loads(scheduler_file.read_text())["address"]
        for index in (1, 2):
            worker = ["distributed.cli.dask_worker", address, "--host", "127.0.0.1"]
            worker += ["--nthreads", "1", "--no-dashboard", "--name", f"w{index}"]
            start(f"worker{index}", [*worker, "--local-directory", str(folder / f"w{index}")])
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=WAIT_S)
            yield address, client
    finally:
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


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
    time.sleep(0.5)  # well into the match
    os.kill(victim["pid"], signal.SIGKILL)
    match_pids = list(victim["matches"])
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in match_pids), 30)
    victim["match_folder"] = Path(next(iter(victim["matches"].values()))).parent.name
    victim["matches"] = {str(k): v for k, v in victim["matches"].items()}
    return victim


def done(home: Path, league: str) -> int:
    """Results of ``league`` so far."""
    with sqlite3.connect(home / "arena.sqlite", timeout=30) as db:
        query = "SELECT COUNT(*) FROM results WHERE league = ?"
        return int(db.execute(query, (league,)).fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--league", required=True)
    parser.add_argument("--netns", action="store_true", help="bring lo up first")
    parser.add_argument("--kill-worker", action="store_true")
    parser.add_argument("--interrupt", action="store_true")
    parser.add_argument("--plant", type=Path, help="an abandoned match folder to be swept")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    if args.netns:
        report["interfaces"] = loopback_up()
    env = {**os.environ, "GIN_HOME": str(args.home), "COLUMNS": "120"}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    with cluster(args.out.parent, env) as (address, client):
        report["address"] = address
        run = [sys.executable, "-m", "tournaments.entry", "league", "run", args.league]
        run += ["--executor", "dask", "--scheduler", address]
        coordinator = subprocess.Popen(
            run, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            if args.kill_worker:
                report["killed"] = kill_a_playing_worker(client)
                wait_until(lambda: len(client.nthreads()) == 2)  # the nanny started a new one
            if args.interrupt:
                wait_until(lambda: done(args.home, args.league) >= 1, 120)
                coordinator.send_signal(signal.SIGINT)
                pids = worker_pids(client)
                output, _ = coordinator.communicate(timeout=60)
                report["interrupt"] = {
                    "code": coordinator.returncode,
                    "output": output.decode(errors="replace")[-2000:],
                    "left_playing": {a: list(match_processes(p)) for a, p in pids.items()},
                }
                coordinator = subprocess.Popen(
                    run,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            output, _ = coordinator.communicate(timeout=600)
        finally:
            if coordinator.poll() is None:
                os.killpg(coordinator.pid, signal.SIGKILL)
                coordinator.wait()
        report["code"] = coordinator.returncode
        report["output"] = output.decode(errors="replace")[-4000:]
        pids = worker_pids(client)
        report["left_playing"] = {a: list(match_processes(p)) for a, p in pids.items()}
        report["swept"] = client.run(swept)
        if args.plant is not None:
            report["plant_left"] = args.plant.exists()
    args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
