"""A Dask cluster on this machine, on 127.0.0.1: to try the Dask executor; the tests and the
cluster benchmark use it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from distributed import Client

from tournaments.executors.cluster_task import CONNECT_TIMEOUT_S, ClusterError, end_groups

__all__ = ["local_cluster", "loopback_up"]


_SIOCGIFFLAGS: Final = 0x8913
_SIOCSIFFLAGS: Final = 0x8914
_IFF_UP: Final = 0x1
LOCAL_START_TIMEOUT_S: Final = 60.0


def loopback_up() -> list[str]:
    """Bring ``lo`` up (a fresh network namespace, ``unshare -n``, starts with it down); the
    interfaces this process's namespace has."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        if not flags & _IFF_UP:
            fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))
    return sorted(name for _, name in socket.if_nameindex())


@contextlib.contextmanager
def local_cluster(
    folder: Path, env: dict[str, str] | None = None, *, workers: int = 2, threads: int = 1
) -> Iterator[tuple[str, Client]]:
    """A Dask scheduler and ``workers`` workers (each a nanny and a worker process with
    ``threads`` threads) on 127.0.0.1, logging into ``folder``; yields (address, a client).

    Each process leads its own process group, and only those groups are ended at the close.
    """
    started: list[subprocess.Popen[bytes]] = []
    scheduler_file = folder / "scheduler.json"
    logs = folder / "cluster-logs"
    logs.mkdir(parents=True, exist_ok=True)

    def start(name: str, argv: list[str]) -> None:
        with open(logs / f"{name}.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", *argv],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            started.append(process)

    try:
        scheduler = ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
        start("scheduler", [*scheduler, "--no-dashboard", "--scheduler-file", str(scheduler_file)])
        deadline = time.monotonic() + LOCAL_START_TIMEOUT_S
        while not (scheduler_file.exists() and scheduler_file.stat().st_size > 0):
            if time.monotonic() > deadline or started[0].poll() is not None:
                raise ClusterError(f"the scheduler did not start: see {logs / 'scheduler.log'}")
            time.sleep(0.05)
        address = str(json.loads(scheduler_file.read_text())["address"])
        for index in range(1, workers + 1):
            worker = ["distributed.cli.dask_worker", address, "--host", "127.0.0.1"]
            worker += ["--nthreads", str(threads), "--no-dashboard", "--name", f"w{index}"]
            worker += ["--preload", "tournaments.executors.cluster_task"]
            start(f"worker{index}", [*worker, "--local-directory", str(folder / f"w{index}")])
        with Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=LOCAL_START_TIMEOUT_S)
            yield address, client
    finally:
        end_groups(started[::-1])
