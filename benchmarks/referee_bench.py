"""The referee's speed, side by side in one run: ``python -m benchmarks.referee_bench``.

1. Per-decision round trip from the referee to a trivial bot over the full stack (match loop,
   rules, conversions, the match log written to a file as ``gin play`` does, the trio/gRPC
   bridge, a sandboxed process), beside a bare grpcio bidirectional stream (same messages, same
   direction, plain threads) and a raw Unix-socket ping-pong between two processes. Each
   decision of a match also gives the other bot the opponent's action. A bot without
   Hello.events_in_requests gets it as an event right before its own request: the "event +
   request" row is the bare stream doing that (two messages down per round trip). The echo bot
   sets the flag, so the action rides in its next request and the full stack sends one message
   per decision, like the plain bare row. The full stack is shown as the mean of the referee's
   decision times (as the match stats give it) and as their median (the bare rows are medians),
   with the referee process's CPU time per decision. Both placements are measured: free (the
   scheduler's choice) and pinned (``--pin-cpus``: the referee, or the bare stream's server, on
   one CPU and the bots on the others). Each pinned row is compared with the bare stream pinned
   the same way. On the reference machine (2 vCPUs) a decision took about 370 µs pinned against
   about 520 µs free, and the bare gRPC stream about 255 µs against 330 µs (the reason
   ``referee.sandbox`` offers ``pin_cpus``). The bare stream's server side is measured in CPU
   time per decision too (its process: the server's threads and the queues' reader), and the
   referee's CPU per decision is given as a ratio to it, run by run (``transport_bench`` has the
   transports alone, and the CPU by thread).
2. Series per second with two greedy bots (sandboxed processes, start-up included), free and
   pinned.
3. Bot start-up (process start to hello) with every sandbox layer, and with none.
4. The referee's memory per running match.

Variants are interleaved over ``--runs`` runs; figures are medians over runs. The full-stack
series are short (``--hands``, about 3,000 decisions, 2-3 s), so that each sits within seconds of
the bare figures of its run: on a shared machine the speed of the same code drifts by 20-40% over
tens of seconds, and "÷ bare, run by run" compares figures taken side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import queue
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

from referee.sandbox import (
    CpuPlacement,
    Layer,
    Sandbox,
    SandboxUnavailable,
    harden_referee_process,
    on_spawner_thread,
    pin_cpus,
)

harden_referee_process()  # before grpc is imported (it sets GRPC_ENABLE_FORK_SUPPORT=0)

import grpc  # noqa: E402
import trio  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks.harness import rss_kib  # noqa: E402
from protocol import hollywood_gin_pb2 as pb  # noqa: E402
from protocol import hollywood_gin_pb2_grpc as pb_grpc  # noqa: E402
from protocol.convert import DECISION_KINDS, action_to_pb, observation_to_pb  # noqa: E402
from protocol.manifest import load_manifest  # noqa: E402
from referee.control import TimeControl  # noqa: E402
from referee.local import Watcher, play_folders, remote_seat  # noqa: E402
from referee.match import MatchConfig, MatchResult  # noqa: E402
from referee.records import ActionRecord, LogRecord  # noqa: E402
from referee.rules import RandomPolicy, RuleParams, SeriesState, observation  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ECHO = ROOT / "benchmarks" / "bots" / "echo"
GREEDY = ROOT / "sample_bots" / "greedy"
EVERY_LAYER_OFF = tuple(Layer)
console = Console()


# --- payloads ------------------------------------------------------------------------------------


def sample_request() -> pb.RefereeMessage:
    """A realistic mid-hand decision request (about 1 KB)."""
    series = SeriesState(seed=7)
    policy = RandomPolicy(7)
    for _ in range(40):
        series.apply(policy(observation(series, series.to_move), series.legal_actions()))
    view = observation(series, series.to_move)
    return pb.RefereeMessage(
        request=pb.DecisionRequest(
            request_id=1,
            kind=DECISION_KINDS[view.phase],
            observation=observation_to_pb(view),
            legal_actions=[action_to_pb(action) for action in series.legal_actions()],
            time_left_ms=1000,
        )
    )


# --- raw Unix socket ping-pong -------------------------------------------------------------------

RAW_ECHO = r"""
import socket, struct, sys
server = socket.socket(socket.AF_UNIX); server.bind(sys.argv[1]); server.listen(1)
print("ready", flush=True)
conn, _ = server.accept()
while True:
    head = conn.recv(4, socket.MSG_WAITALL)
    if len(head) < 4: break
    size = struct.unpack("!I", head)[0]
    conn.recv(size, socket.MSG_WAITALL)
    conn.sendall(struct.pack("!I", 8) + b"answer!!")
"""


def raw_socket(n: int, payload: bytes) -> list[float]:
    """Round trips (µs) of a length-prefixed request and an 8-byte answer between processes."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "raw.sock")
        child = subprocess.Popen([sys.executable, "-c", RAW_ECHO, path], stdout=subprocess.PIPE)
        assert child.stdout is not None
        child.stdout.readline()
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(path)
            frame = struct.pack("!I", len(payload)) + payload
            times = []
            for _ in range(n):
                start = time.perf_counter()
                sock.sendall(frame)
                size = struct.unpack("!I", sock.recv(4, socket.MSG_WAITALL))[0]
                sock.recv(size, socket.MSG_WAITALL)
                times.append((time.perf_counter() - start) * 1e6)
        child.wait(timeout=5)
    return times


# --- bare grpcio bidirectional stream ------------------------------------------------------------


class _BareReferee(pb_grpc.RefereeServicer):
    """The minimum a threaded gRPC referee does: queue out, queue in."""

    def __init__(self) -> None:
        self.outbox: queue.SimpleQueue[pb.RefereeMessage | None] = queue.SimpleQueue()
        self.inbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()

    def Play(  # noqa: N802
        self,
        request_iterator: Iterator[pb.BotMessage],
        context: grpc.ServicerContext,  # noqa: ARG002
    ) -> Iterator[pb.RefereeMessage]:
        def read() -> None:
            try:
                for message in request_iterator:
                    self.inbox.put(message)
            except grpc.RpcError:
                pass  # the server stopped at the end of a run
            self.inbox.put(None)

        threading.Thread(target=read, daemon=True).start()
        while (item := self.outbox.get()) is not None:
            yield item


OPPONENT_EVENT = pb.RefereeMessage(
    event=pb.Event(
        opponent_action=pb.PublicEvent(seat=1, kind=pb.PublicEvent.KIND_DISCARD, card="Kd")
    )
)
"""What a match sends a bot before each of its requests: the opponent's last action."""


def bare_grpc(
    n: int, request: pb.RefereeMessage, *, event: bool = False, cpu_us: list[float] | None = None
) -> list[float]:
    """Round trips (µs): the echo bot answering requests on a plain threaded gRPC server.

    With ``event``, each request follows an opponent-action event, as in a match. With
    ``cpu_us``, the server process's CPU time per round trip (µs, all its threads: the server's
    side of the stream) is appended to it.
    """
    with tempfile.TemporaryDirectory() as folder:
        address = f"unix://{folder}/bare.sock"
        servicer = _BareReferee()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=3))
        pb_grpc.add_RefereeServicer_to_server(servicer, server)
        server.add_insecure_port(address)
        server.start()
        env = {**os.environ, "GIN_REFEREE": address, "GIN_TOKEN": "bench"}
        # Started like the referee starts bots, so that a CPU placement applies to it too.
        launch = functools.partial(subprocess.Popen, [sys.executable, "bot.py"], cwd=ECHO, env=env)
        bot = on_spawner_thread(launch, bot=True)
        servicer.inbox.get(timeout=30)  # the hello
        times = []
        cpu = time.process_time()
        for index in range(n):
            request.request.request_id = index + 1
            start = time.perf_counter()
            if event:
                servicer.outbox.put(OPPONENT_EVENT)
            servicer.outbox.put(request)
            servicer.inbox.get(timeout=10)
            times.append((time.perf_counter() - start) * 1e6)
        if cpu_us is not None:
            cpu_us.append((time.process_time() - cpu) * 1e6 / n)
        servicer.outbox.put(
            pb.RefereeMessage(goodbye=pb.Goodbye(reason=pb.GOODBYE_REASON_SERIES_OVER))
        )
        servicer.outbox.put(None)
        bot.wait(timeout=10)
        server.stop(grace=None)
    return times


# --- the full stack ------------------------------------------------------------------------------


def play(
    sandbox: Sandbox,
    folders: tuple[Path, Path],
    seed: int,
    watcher: Watcher | None = None,
    params: RuleParams | None = None,
    *,
    log: Path | None = None,
) -> MatchResult:
    """One series between two bot folders, both sandboxed processes (logged to ``log``)."""
    seats = (
        remote_seat(load_manifest(folders[0]), sandbox.prepare, f"bench-{seed}-0"),
        remote_seat(load_manifest(folders[1]), sandbox.prepare, f"bench-{seed}-1"),
    )
    config = MatchConfig(
        f"bench-{seed}",
        seed,
        params=params or RuleParams(),
        time_control=TimeControl(move_time_ms=5000),
    )
    return trio.run(play_folders, seats, config, log, watcher)


def full_stack(sandbox: Sandbox, seed: int, hands: int = 500) -> tuple[float, float, int, float]:
    """Referee-measured decision times (µs) over one echo-vs-echo series of at most ``hands``
    hands, with its match log written to a file: mean, median, count, and the referee process's
    CPU time per decision (µs, all its threads, jail set-up included).
    """
    times: list[float] = []

    def watch(record: LogRecord) -> None:
        if isinstance(record, ActionRecord) and record.by == ActionRecord.BOT:
            times.append(record.ms * 1000)

    with tempfile.TemporaryDirectory() as folder:
        cpu = time.process_time()
        log = Path(folder) / "match.jsonl"
        result = play(sandbox, (ECHO, ECHO), seed, watch, RuleParams(hand_cap=hands), log=log)
        cpu = time.process_time() - cpu
    decisions = sum(stats.decisions for stats in result.stats)
    total_ms = sum(stats.mean_ms * stats.decisions for stats in result.stats)
    return total_ms * 1000 / decisions, median(times), decisions, cpu * 1e6 / decisions


def series_rate(sandbox: Sandbox, series: int, seed: int) -> float:
    """Greedy-vs-greedy series per second, one after another."""
    start = time.perf_counter()
    for index in range(series):
        play(sandbox, (GREEDY, GREEDY), seed + index)
    return series / (time.perf_counter() - start)


def startup_ms(sandbox: Sandbox) -> float:
    """Process start to hello of the greedy bot, as the referee measures it."""
    seat = remote_seat(load_manifest(GREEDY), sandbox.prepare, "bench-start")

    async def main() -> float:
        try:
            await seat.connect(0)
        finally:
            await seat.close("bench")
        assert seat.startup_ms is not None
        return seat.startup_ms

    return trio.run(main)


def memory_per_match(sandbox: Sandbox, matches: int, seed: int) -> tuple[int, int]:
    """(RSS before, peak RSS increase per concurrent match), in KiB."""
    before = rss_kib()
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, rss_kib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for index in range(matches):
                seats = (
                    remote_seat(load_manifest(GREEDY), sandbox.prepare, f"mem-{index}-0"),
                    remote_seat(load_manifest(GREEDY), sandbox.prepare, f"mem-{index}-1"),
                )
                config = MatchConfig(f"mem-{index}", seed + index)
                nursery.start_soon(play_folders, seats, config)

    trio.run(main)
    done.set()
    sampler.join()
    return before, (peak - before) // matches


# --- running and reporting -----------------------------------------------------------------------


def median(values: list[float]) -> float:
    """The median."""
    return statistics.median(values)


def interleaved(runs: int, variants: dict[str, Callable[[int], float]]) -> dict[str, list[float]]:
    """Each variant once per run, the order rotating, so drift spreads evenly."""
    names = list(variants)
    results: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        for name in names[run % len(names) :] + names[: run % len(names)]:
            results[name].append(variants[name](run))
        console.log(f"run {run + 1}/{runs} done")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument(
        "--hands",
        type=int,
        default=50,
        help="hand cap of each full-stack series (about 60 decisions a hand)",
    )
    parser.add_argument("--pings", type=int, default=2000, help="round trips per ping-pong run")
    parser.add_argument("--series", type=int, default=5, help="greedy series per rate run")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="run beside N busy processes (a loaded run)",
    )
    args = parser.parse_args()
    with busy_processes(args.load):
        measure(args)


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes spinning on a CPU each (a loaded machine), ended afterwards."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def measure(args: argparse.Namespace) -> None:
    """The whole benchmark, as ``main`` parsed it."""
    console.print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loadavg "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, {args.load} busy processes beside"
    )
    full = Sandbox()
    bare = Sandbox(switched_off=EVERY_LAYER_OFF)
    console.print("sandbox layers: " + ", ".join(s.layer.name for s in full.layers if s.active))
    request = sample_request()
    payload = request.SerializeToString()
    console.print(f"decision request: {len(payload)} bytes")

    placement: CpuPlacement | None = None
    try:
        placement = CpuPlacement.split()
    except SandboxUnavailable as error:
        console.print(f"pinned rows left out: {error}")
    else:
        console.print(f"pinned rows: {placement.describe()}")

    pinning = [False]

    def pinned(measure: Callable[[int], float]) -> Callable[[int], float]:
        def run(index: int) -> float:
            pin_cpus(placement)
            pinning[0] = True
            try:
                return measure(index)
            finally:
                pinning[0] = False
                pin_cpus(None)

        return run

    decisions: list[int] = []
    medians: dict[str, list[float]] = {FREE: [], PINNED: []}
    cpu: dict[str, list[float]] = {FREE: [], PINNED: []}

    def full_variant(where: str) -> Callable[[int], float]:
        def run(index: int) -> float:
            mean, middle, count, cpu_us = full_stack(full, 1000 + index, args.hands)
            decisions.append(count)
            medians[where].append(middle)
            cpu[where].append(cpu_us)
            return mean

        return run

    bare_cpu: dict[str, list[float]] = {FREE: [], PINNED: []}

    def bare_stream(_: int) -> float:
        where = FREE if placement is None or not pinning[0] else PINNED
        return median(bare_grpc(args.pings, request, cpu_us=bare_cpu[where]))

    variants: dict[str, Callable[[int], float]] = {
        RAW: lambda _: median(raw_socket(args.pings, payload)),
        BARE: bare_stream,
        "bare gRPC, event + request": lambda _: median(bare_grpc(args.pings, request, event=True)),
        FULL: full_variant(FREE),
    }
    if placement is not None:
        variants[BARE_PINNED] = pinned(bare_stream)
        variants[FULL_PINNED] = pinned(full_variant(PINNED))
    measured = interleaved(args.runs, variants)
    latency = {name: measured[name] for name in list(measured)[:4]}
    latency[FULL + " (median)"] = medians[FREE]
    if placement is not None:
        latency[BARE_PINNED] = measured[BARE_PINNED]
        latency[FULL_PINNED] = measured[FULL_PINNED]
        latency[FULL_PINNED + " (median)"] = medians[PINNED]
    starts = interleaved(
        args.runs,
        {
            "every layer": lambda _: startup_ms(full),
            "no layer": lambda _: startup_ms(bare),
        },
    )

    def rate(run: int) -> float:
        return series_rate(full, args.series, 2000 + run * 100)

    rate_variants: dict[str, Callable[[int], float]] = {"greedy vs greedy": rate}
    if placement is not None:
        rate_variants["greedy vs greedy, pinned"] = pinned(rate)
    rates = interleaved(max(1, args.runs // 4), rate_variants)
    before, per_match = memory_per_match(full, 4, 3000)

    figures: dict[str, Any] = {
        "latency_us": {name: median(values) for name, values in latency.items()},
        "ratio_per_run": {
            name: median(
                [value / base for value, base in zip(values, latency[_base(name)], strict=True)]
            )
            for name, values in latency.items()
        },
        "startup_ms": {name: median(values) for name, values in starts.items()},
        "series_per_s": {name: median(values) for name, values in rates.items()},
        "referee_rss_kib": before,
        "rss_kib_per_match": per_match,
        "decisions_per_series": median([float(count) for count in decisions]),
        "referee_cpu_us_per_decision": {
            where: median(values) for where, values in cpu.items() if values
        },
        "bare_grpc_server_cpu_us_per_decision": {
            where: median(values) for where, values in bare_cpu.items() if values
        },
        "referee_cpu_per_decision_over_bare_server_run_by_run": {
            where: median([a / b for a, b in zip(cpu[where], bare_cpu[where], strict=False)])
            for where in cpu
            if cpu[where] and bare_cpu[where]
        },
        "placement": None if placement is None else placement.to_dict(),
        "runs": args.runs,
        "busy_processes": args.load,
        "latency_us_per_run": latency,
        "referee_cpu_us_per_decision_per_run": cpu,
    }
    report(figures, latency, starts)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


FREE, PINNED = "free", "pinned"
RAW = "raw Unix socket"
BARE = "bare gRPC stream"
FULL = "referee, full stack"
BARE_PINNED = BARE + ", pinned"
FULL_PINNED = FULL + ", pinned"


def _base(name: str) -> str:
    """The bare row a row is compared with: the one under the same CPU placement."""
    return BARE_PINNED if name.startswith((BARE_PINNED, FULL_PINNED)) else BARE


def report(
    figures: dict[str, Any], latency: dict[str, list[float]], starts: dict[str, list[float]]
) -> None:
    """Print the tables."""
    table = Table(title="1. per-decision round trip (µs, median over runs)")
    for column in ("variant", "median", "range", "÷ bare gRPC", "÷ bare, run by run"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for name, values in latency.items():
        base = figures["latency_us"][_base(name)]
        table.add_row(
            name,
            f"{median(values):.0f}",
            f"{min(values):.0f}-{max(values):.0f}",
            f"{median(values) / base:.2f}",
            f"{figures['ratio_per_run'][name]:.2f}",
        )
    console.print(table)
    console.print(
        "(÷ bare: against the bare stream under the same CPU placement; run by run: the median "
        "over runs of each run's ratio to the bare stream of the same run)"
    )
    for name, values in latency.items():
        console.print(f"  {name}, run by run: " + ", ".join(f"{value:.0f}" for value in values))
    for where, values in figures["referee_cpu_us_per_decision_per_run"].items():
        if values:
            console.print(
                f"referee CPU per decision ({where}, all its threads): "
                f"{median(values):.0f} µs (runs: " + ", ".join(f"{v:.0f}" for v in values) + ")"
            )
    for where, values in figures["bare_grpc_server_cpu_us_per_decision"].items():
        ratio = figures["referee_cpu_per_decision_over_bare_server_run_by_run"].get(where, 0.0)
        console.print(
            f"bare gRPC stream's server side, CPU per decision ({where}): {values:.0f} µs; "
            f"the referee's ÷ it, run by run: {ratio:.2f}"
        )
    table = Table(title="3. bot start-up, process start to hello (ms)")
    for column in ("sandbox", "median", "range"):
        table.add_column(column)
    for name, values in starts.items():
        table.add_row(name, f"{median(values):.0f}", f"{min(values):.0f}-{max(values):.0f}")
    console.print(table)
    added = figures["startup_ms"]["every layer"] - figures["startup_ms"]["no layer"]
    console.print(f"sandbox adds {added:.0f} ms to a bot's start")
    for name, rate in figures["series_per_s"].items():
        console.print(f"2. series per second, {name} (sandboxed, start-up included): {rate:.2f}")
    console.print(
        f"4. referee memory: {figures['referee_rss_kib'] / 1024:.1f} MiB before, "
        f"+{figures['rss_kib_per_match'] / 1024:.2f} MiB per running match (peak, "
        "4 at once)"
    )


if __name__ == "__main__":
    main()
