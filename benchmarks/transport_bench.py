"""The referee's transport options side by side: ``python -m benchmarks.transport_bench``.

CPU time of the referee's process per decision (all its threads), for the echo bot
(``benchmarks/bots/echo``) answering realistic decision requests, interleaved run by run:

* ``bare grpcio (threads)``: a plain threaded grpcio server's side of the stream, queues in and
  out (the yardstick of the brief: the referee should cost no more per decision);
* ``bare grpc.aio (asyncio)``: grpcio's asyncio server on a plain asyncio loop, the floor of
  option (b) (a trio match on it would add trio's guest mode on top);
* ``channel: (a) grpcio bridge`` and ``channel: (c) trio HTTP/2``: the seat's ``SeatChannel``
  alone in a trio loop (``benchmarks.grpc_bridge``, the transport before; ``referee.bridge``,
  the one chosen), sending each request and awaiting its answer as ``RemoteSeat.decide`` does;
* ``full stack: (a)`` and ``full stack: (c)``: a whole echo-vs-echo series (match, rules, log
  file, sandboxed bots), with ``referee.remote`` using one transport or the other.

The round-trip medians come with it, and, for the full stacks, the referee's CPU by thread over
the series (``/proc/self/task/*/stat``; Python threads by name, others by their kernel name).
Bare and channel rows start the bot unsandboxed (like the bare row of ``referee_bench``); the
full stacks sandbox both bots with every layer.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import trio

from benchmarks import grpc_bridge
from benchmarks.referee_bench import (
    ECHO,
    bare_grpc,
    interleaved,
    play,
    sample_request,
)
from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from referee import bridge, remote
from referee.records import ActionRecord, LogRecord, ResultRecord
from referee.rules import RuleParams
from referee.sandbox import Sandbox, on_spawner_thread

CHANNELS: dict[str, Any] = {
    "(a) grpcio bridge": grpc_bridge.SeatChannel,
    "(c) trio HTTP/2": bridge.SeatChannel,
}
_TICK = os.sysconf("SC_CLK_TCK")


# --- CPU by thread ----------------------------------------------------------------------------


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by name (Python's, else the kernel's;
    threads of one name summed, trailing numbers dropped)."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    cpu: dict[str, float] = {}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as stat:
                text = stat.read()
        except OSError:
            continue  # ended meanwhile
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / _TICK
        name = names.get(int(task), comm)
        name = "trio (main)" if name == "MainThread" else re.sub(r"[-_ ]?\d+$", "", name)
        cpu[name] = cpu.get(name, 0.0) + seconds
    return cpu


def cpu_since(before: dict[str, float]) -> dict[str, float]:
    """CPU seconds per thread name since ``before`` (threads born since count from zero)."""
    now = thread_cpu()
    return {name: now[name] - before.get(name, 0.0) for name in now}


# --- option (b)'s floor: grpc.aio on asyncio -----------------------------------------------------


class _AioReferee(pb_grpc.RefereeServicer):
    def __init__(self) -> None:
        self.outbox: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
        self.inbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()

    async def Play(  # noqa: N802
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: Any,  # noqa: ARG002
    ) -> AsyncIterator[pb.RefereeMessage]:
        async def read() -> None:
            async for message in request_iterator:
                await self.inbox.put(message)

        reader = asyncio.ensure_future(read())
        while (item := await self.outbox.get()) is not None:
            yield item
        reader.cancel()


def bare_aio(n: int, request: pb.RefereeMessage) -> tuple[list[float], float]:
    """Round trips (µs) and the server process's CPU per decision (µs) on grpc.aio."""

    async def main() -> tuple[list[float], float]:
        with tempfile.TemporaryDirectory() as folder:
            address = f"unix://{folder}/aio.sock"
            servicer = _AioReferee()
            server = grpc.aio.server()
            pb_grpc.add_RefereeServicer_to_server(servicer, server)
            server.add_insecure_port(address)
            await server.start()
            bot = _start_echo(address)
            await servicer.inbox.get()
            times: list[float] = []
            cpu = time.process_time()
            for index in range(n):
                request.request.request_id = index + 1
                start = time.perf_counter()
                await servicer.outbox.put(request)
                await servicer.inbox.get()
                times.append((time.perf_counter() - start) * 1e6)
            cpu = time.process_time() - cpu
            await servicer.outbox.put(_goodbye())
            await servicer.outbox.put(None)
            await asyncio.get_running_loop().run_in_executor(None, bot.wait, 10)
            await server.stop(None)
        return times, cpu * 1e6 / n

    return asyncio.run(main())


def _goodbye() -> pb.RefereeMessage:
    return pb.RefereeMessage(goodbye=pb.Goodbye(reason=pb.GOODBYE_REASON_SERIES_OVER))


def _start_echo(address: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GIN_REFEREE": address, "GIN_TOKEN": "bench"}

    def launch() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "bot.py"], cwd=ECHO, env=env)

    return on_spawner_thread(launch, bot=True)


def bare_threads(n: int, request: pb.RefereeMessage) -> tuple[list[float], float]:
    """``referee_bench.bare_grpc``, with the server process's CPU per decision (µs)."""
    cpu = time.process_time()
    times = bare_grpc(n, request)
    return times, (time.process_time() - cpu) * 1e6 / n


# --- a seat's channel alone --------------------------------------------------------------------


def channel_alone(kind: Any, n: int, request: pb.RefereeMessage) -> tuple[list[float], float]:
    """Round trips (µs) and CPU per decision (µs) of a ``SeatChannel`` class in trio."""
    wire = request.SerializeToString()

    async def main() -> tuple[list[float], float]:
        with tempfile.TemporaryDirectory() as folder:
            channel = kind(Path(folder) / "seat.sock")
            channel.start()
            bot = _start_echo(channel.address)
            await channel.receive()  # the hello
            times: list[float] = []
            cpu = time.process_time()
            for index in range(n):
                request.request.request_id = index + 1
                data = request.SerializeToString() if index % 64 == 0 else wire
                start = time.perf_counter()
                channel.send(data, hand_over=True)
                await channel.receive()
                times.append((time.perf_counter() - start) * 1e6)
            cpu = time.process_time() - cpu
            channel.send(_goodbye())
            channel.end_stream()
            await trio.to_thread.run_sync(bot.wait, 10)
            await trio.to_thread.run_sync(channel.stop)
        return times, cpu * 1e6 / n

    return trio.run(main)


# --- the full stack with either transport -------------------------------------------------------


def full_stack(
    sandbox: Sandbox, kind: Any, seed: int, hands: int
) -> tuple[float, float, dict[str, float]]:
    """One echo-vs-echo series with ``referee.remote`` on ``kind``: the median decision time
    (µs), the referee's CPU per decision (µs), and its CPU by thread over the series (s)."""
    times: list[float] = []
    by_thread: dict[str, float] = {}
    before = thread_cpu()

    def watch(record: LogRecord) -> None:
        if isinstance(record, ActionRecord) and record.by == ActionRecord.BOT:
            times.append(record.ms * 1000)
        if isinstance(record, ResultRecord):  # the series is over; its bots are not torn down yet
            by_thread.update(cpu_since(before))

    original = vars(remote)["SeatChannel"]
    setattr(remote, "SeatChannel", kind)  # noqa: B010  (the name remote.py calls)
    try:
        with tempfile.TemporaryDirectory() as folder:
            cpu = time.process_time()
            log = Path(folder) / "match.jsonl"
            result = play(sandbox, (ECHO, ECHO), seed, watch, RuleParams(hand_cap=hands), log=log)
            cpu = time.process_time() - cpu
    finally:
        setattr(remote, "SeatChannel", original)  # noqa: B010
    decisions = sum(stats.decisions for stats in result.stats)
    return statistics.median(times), cpu * 1e6 / decisions, by_thread


# --- running and reporting --------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--pings", type=int, default=2000, help="round trips per bare run")
    parser.add_argument("--hands", type=int, default=50, help="hand cap of each series")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    request = sample_request()
    sandbox = Sandbox()
    latency: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    threads: dict[str, list[dict[str, float]]] = {}

    def record(
        name: str, measure: Callable[[int], tuple[list[float], float]]
    ) -> Callable[[int], float]:
        def run(_: int) -> float:
            times, cpu_us = measure(args.pings)
            latency.setdefault(name, []).append(statistics.median(times))
            cpu.setdefault(name, []).append(cpu_us)
            return cpu_us

        return run

    def full(name: str, kind: Any) -> Callable[[int], float]:
        def run(index: int) -> float:
            middle, cpu_us, by_thread = full_stack(sandbox, kind, 1000 + index, args.hands)
            latency.setdefault(name, []).append(middle)
            cpu.setdefault(name, []).append(cpu_us)
            threads.setdefault(name, []).append(by_thread)
            return cpu_us

        return run

    variants: dict[str, Callable[[int], float]] = {
        BARE: record(BARE, lambda n: bare_threads(n, request)),
        "bare grpc.aio (asyncio)": record(
            "bare grpc.aio (asyncio)", lambda n: bare_aio(n, request)
        ),
    }
    for label, kind in CHANNELS.items():
        name = f"channel: {label}"
        variants[name] = record(name, functools.partial(channel_alone, kind, request=request))
    for label, kind in CHANNELS.items():
        variants[f"full stack: {label}"] = full(f"full stack: {label}", kind)
    interleaved(args.runs, variants)
    report(latency, cpu, threads)
    if args.json:
        figures = {"latency_us": latency, "cpu_us_per_decision": cpu, "cpu_s_by_thread": threads}
        args.json.write_text(json.dumps(figures, indent=2))
    sandbox.close()


BARE = "bare grpcio (threads)"


def report(
    latency: dict[str, list[float]],
    cpu: dict[str, list[float]],
    threads: dict[str, list[dict[str, float]]],
) -> None:
    """Print the figures: medians over runs, and ratios to the bare row run by run."""
    print(
        f"{'variant':<30} {'round trip µs':>13} {'CPU µs/decision':>16} {'÷ bare, run by run':>19}"
    )
    for name, values in cpu.items():
        ratio = statistics.median(a / b for a, b in zip(values, cpu[BARE], strict=True))
        print(
            f"{name:<30} {statistics.median(latency[name]):>13.0f} "
            f"{statistics.median(values):>16.0f} {ratio:>19.2f}"
        )
        print("    runs: " + ", ".join(f"{value:.0f}" for value in values))
    for name, runs in threads.items():
        names = sorted({thread for run in runs for thread in run})
        shares = {
            thread: statistics.median(run.get(thread, 0.0) for run in runs) for thread in names
        }
        shown = ", ".join(
            f"{thread} {seconds:.3f}"
            for thread, seconds in sorted(shares.items(), key=lambda x: -x[1])
            if seconds >= 0.005
        )
        print(f"CPU s by thread over one series, {name} (median over runs): {shown}")


if __name__ == "__main__":
    main()
