"""The arena's ladder with readers and without (``python -m benchmarks.arena_readers``).

Issue 30 asks that load on the web cannot slow the ladder: its series per minute with 200
readers at least 0.9x of those with none. On this machine the ladder's matches run in warm worker
processes (:mod:`tournaments.executors.local`); the server process keeps the ladder's scheduling,
the recording of results, the board's fit and the publishing of pages, beside the web.

1. A fresh home with ``--bots`` sample bots entered in the ladder, ``gin arena serve -j JOBS
   --port 0`` on it (in its own process group), and Debian's nginx serving its published tree
   with docs/arena.md's configuration (what it does not have, it asks the app for).
2. Once ``--warm`` series are recorded, windows of ``--seconds`` in turn, ``--runs`` times: no
   readers; ``--readers`` readers asking the app; the same readers asking nginx. Each reader
   holds one keep-alive connection and asks for a page every ``--every`` seconds (the board, a
   match page or a replay of a match recorded so far, at random): a class refreshing its pages
   at a deadline, paced, not a flood (a reader whose answer is late asks again at once).
3. For each window: the series recorded (by the store's times), the readers' requests per second,
   p50 and p99 per kind, their statuses, and the CPU of the server process, of nginx and of this
   process (the readers). Prints the medians and the ratio to the windows without readers.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import trio

from benchmarks.arena_load import _Connection, _quantile, _Server, cpu_of, stop_group
from tests.test_arena_server import arena_home
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore
from tournaments.registry import Arena

KINDS = ("board", "match", "replay")


@dataclass
class Window:
    """What one window saw."""

    phase: str
    series: int = 0
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    statuses: Counter[str] = field(default_factory=Counter)
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def per_minute(self) -> float:
        return 60 * self.series / self.seconds

    @property
    def requests(self) -> int:
        return sum(len(values) for values in self.latencies.values())


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start_nginx(tree: Path, app_port: int, scratch: Path) -> tuple[subprocess.Popen[str], int]:
    """Debian's nginx, one worker, docs/arena.md's server block on ``tree``; its worker's pid is
    the one whose CPU counts (the master only waits)."""
    from tests.test_arena_published import free_port, nginx_config  # noqa: PLC0415

    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).is_file():
        raise SystemExit("this benchmark needs nginx: make browser-deps")
    port = free_port()
    (scratch / "nginx.conf").write_text(nginx_config(tree, port, app_port, scratch))
    command = [nginx, "-c", str(scratch / "nginx.conf"), "-p", str(scratch)]
    process = subprocess.Popen(
        [*command, "-e", str(scratch / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return process, port
        time.sleep(0.05)
    stop_group(process)
    raise SystemExit("nginx did not start")


def nginx_workers(master: int) -> list[int]:
    """The pids of nginx's workers (its master's children)."""
    try:
        text = Path(f"/proc/{master}/task/{master}/children").read_text()
    except OSError:
        return []
    return [int(pid) for pid in text.split()]


def recorded_between(store: ArenaStore, start: float, end: float) -> int:
    row = store.db.execute(
        "SELECT COUNT(*) FROM results WHERE league = ? AND recorded_at >= ? AND recorded_at < ?",
        (LADDER, start, end),
    ).fetchone()
    return int(row[0])


def targets(store: ArenaStore) -> list[tuple[str, str]]:
    """(kind, path) of the pages readers may ask for: the board, and the match page and replay of
    every match recorded (a first leg whose mirror is to play is left out: it is held)."""
    found = [("board", "/")]
    for row in store.results(LADDER):
        if store.mirror_pending(row.match_id):
            continue
        mid = quote(row.match_id, safe="@~")
        found += [("match", f"/matches/{mid}"), ("replay", f"/matches/{mid}/replay")]
    return found


async def read_for(
    port: int, readers: int, every: float, seconds: float, pages: list[tuple[str, str]]
) -> Window:
    """``readers`` paced readers on ``port`` for ``seconds``."""
    window = Window("readers")
    rng = random.Random(11)
    ends = trio.current_time() + seconds
    headers = [("accept-encoding", "gzip")]

    async def reader(offset: float) -> None:
        connection = _Connection(port)
        await trio.sleep(offset)
        try:
            while trio.current_time() < ends:
                asked = trio.current_time()
                kind, path = rng.choice(pages)
                try:
                    status, _ = await connection.request("GET", path, headers)
                except (OSError, ConnectionError, trio.BrokenResourceError):
                    status = 0
                    await connection.close()
                window.latencies[kind].append(trio.current_time() - asked)
                window.statuses[str(status)] += 1
                await trio.sleep_until(asked + every)
        finally:
            await connection.close()

    async with trio.open_nursery() as nursery:
        for index in range(readers):
            nursery.start_soon(reader, every * index / readers)
    return window


def run_window(
    phase: str, port: int | None, args: argparse.Namespace, store: ArenaStore, pids: dict[str, int]
) -> Window:
    """One window of ``phase``: readers on ``port``, or none."""
    pages = targets(store)
    cpu_before = {name: cpu_of(pid) for name, pid in pids.items()} | {"readers": own_cpu()}
    start = time.time()
    if port is None:
        time.sleep(args.seconds)
        window = Window(phase)
    else:
        window = trio.run(read_for, port, args.readers, args.every, args.seconds, pages)
        window.phase = phase
    end = time.time()
    window.seconds = end - start
    window.series = recorded_between(store, start, end)
    cpu_after = {name: cpu_of(pid) for name, pid in pids.items()} | {"readers": own_cpu()}
    window.cpu = {name: cpu_after[name] - cpu_before[name] for name in cpu_after}
    return window


def describe(window: Window) -> str:
    line = f"{window.phase:>7}: {window.per_minute:6.1f} series/min ({window.series:3} series)"
    if window.requests:
        line += f", {window.requests / window.seconds:6.0f} req/s"
        for kind in KINDS:
            values = window.latencies[kind]
            if values:
                p50, p99 = _quantile(values, 0.5), _quantile(values, 0.99)
                line += f", {kind} p50 {p50 * 1000:.0f} p99 {p99 * 1000:.0f} ms"
        bad = {status: n for status, n in window.statuses.items() if status not in {"200", "304"}}
        if bad:
            line += f", not 200: {bad}"
    cpu = ", ".join(f"{name} {spent / window.seconds:.2f}" for name, spent in window.cpu.items())
    return f"{line}; CPU cores: {cpu}"


def wait_for_series(store: ArenaStore, count: int, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 600
    while recorded_between(store, 0, time.time() + 1) < count:
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the ladder did not play its first series")
        time.sleep(0.2)


def report(args: argparse.Namespace, windows: list[Window]) -> None:
    quiet = [w.per_minute for w in windows if w.phase == "none"]
    print(
        f"\nmedians over {args.runs} runs of {args.seconds:.0f} s windows "
        f"({args.readers} readers, one page each every {args.every} s; bots {args.bots}, "
        f"-j {args.jobs}):"
    )
    for phase in ("none", "app", "nginx"):
        rates = [w.per_minute for w in windows if w.phase == phase]
        ratios = [rate / base for rate, base in zip(rates, quiet, strict=True) if base]
        ratio = f", {statistics.median(ratios):.2f}x of none" if phase != "none" else ""
        served = [w.requests / w.seconds for w in windows if w.phase == phase]
        print(
            f"  {phase:>5}: {statistics.median(rates):6.1f} series/min{ratio}"
            + (f", {statistics.median(served):.0f} req/s" if phase != "none" else "")
            + f" (runs {', '.join(f'{rate:.1f}' for rate in rates)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", default="greedy,strong,random")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between a reader's pages")
    parser.add_argument("--seconds", type=float, default=60.0, help="each window")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm", type=int, default=6, help="series before the first window")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        home = arena_home(scratch, tuple(args.bots.split(","))).home
        server = _Server.start(home, ("--jobs", str(args.jobs)))
        port = server.port
        (scratch / "nginx").mkdir()
        nginx, nginx_port = start_nginx(home / "public", port, scratch / "nginx")
        try:
            store = ArenaStore(Arena(home).store_path)
            wait_for_series(store, args.warm, server.process)
            pids = {"server": server.process.pid} | {
                f"nginx{i}": pid for i, pid in enumerate(nginx_workers(nginx.pid))
            }
            windows: list[Window] = []
            for run in range(args.runs):
                for phase, target in (("none", None), ("app", port), ("nginx", nginx_port)):
                    windows.append(run_window(phase, target, args, store, pids))
                    print(f"run {run + 1} {describe(windows[-1])}", flush=True)
            report(args, windows)
        finally:
            stop_group(nginx)
            server.stop()


if __name__ == "__main__":
    main()
