"""Floods on a bot's own socket cost the referee and the honest opponent nothing.

A seat's gRPC server admits one connection (``grpc.max_allowed_incoming_connections``) and one
stream on it (``grpc.max_concurrent_streams``): further connections are closed as they are
accepted and further streams refused inside gRPC's core, before any Python code of the referee
runs. Each test plays a flooding bot (``tests/hostile/hostile.py``) against the sample greedy bot
with real processes in the real sandbox. ``benchmarks/flood_bench.py`` reports the honest
opponent's decision times beside a run without the flooder.
"""

from __future__ import annotations

import re
import resource
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.control import TimeControl
from referee.faults import FaultKind
from referee.replay import read_records
from referee.sandbox import Sandbox
from tests.test_hostile import play

pytestmark = pytest.mark.slow  # every test plays real processes in the real sandbox

FLOOD_TIME = TimeControl(move_time_ms=200, grace_ms=50, time_bank_ms=0, startup_ms=8000)
MEMORY_BOUND_MIB = 32
"""Most the referee's memory may grow during a flooded series (unbounded before: +177 MiB in 3 s
here, +900 MB in 35 s in the report)."""


def rss_mib() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) // 1024


@contextmanager
def peak_rss() -> Iterator[list[int]]:
    """The referee's resident memory: ``[at the start, the peak]``, sampled every 50 ms."""
    seen = [rss_mib(), rss_mib()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            seen[1] = max(seen[1], rss_mib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield seen
    finally:
        done.set()
        sampler.join()


def test_a_rapid_reset_flood_costs_the_opponent_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    # From its first decision on, the flooder opens a second connection and streams to an
    # unknown method on it, each reset at once, in batches of 64, for the rest of the series.
    with peak_rss() as memory:
        played = play(sandbox, tmp_path, "h2_flood", "4", control=FLOOD_TIME, strikes=10**6)
    assert memory[1] - memory[0] < MEMORY_BOUND_MIB, memory
    assert played.result.end != "forfeit"
    assert played.result.faults == ()  # the honest seat never timed out
    honest = [r for r in read_records(played.log) if r["type"] == "action" and r["seat"] == 1]
    assert honest
    assert all(r["by"] in ("bot", "forced") for r in honest)


def test_a_flood_on_the_bots_own_play_connection_is_refused_in_grpc(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # The flooder speaks HTTP/2 by hand: its Play stream, and on that same connection, after
    # each answer and for as long as the opponent thinks, new streams reset at once. The one
    # stream rule refuses them in gRPC's core (without it: +680 MiB and timeouts in one series).
    with peak_rss() as memory:
        played = play(sandbox, tmp_path, "raw_flood", control=FLOOD_TIME, strikes=10**6)
    assert memory[1] - memory[0] < MEMORY_BOUND_MIB, memory
    assert played.result.end != "forfeit"
    assert played.result.faults == ()
    sent = re.search(r"PROBE raw_misbehaviour raw_flood (\d+)", played.stderr())
    assert sent is not None
    assert int(sent.group(1)) > 1000


def test_a_ping_flood_ends_only_the_flooders_connection(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "raw_ping", control=FLOOD_TIME)
    assert played.result.forfeited == (0,)
    assert played.kinds == [FaultKind.CRASH]


def test_a_connect_and_close_loop_costs_the_referee_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # From its first decision on, 4 children of the flooder connect to its socket and close, over
    # and over. Once the bot's hello is in, its socket's path is gone: each connect fails in the
    # bot. (While the path stayed, gRPC accepted and closed each one: 2.3-2.5 s of the referee's
    # CPU in one series, and the honest seat's worst decision went from 11 to 203 ms.)
    before = resource.getrusage(resource.RUSAGE_SELF)
    played = play(sandbox, tmp_path, "connect_loop", "4", control=FLOOD_TIME, strikes=10**6)
    after = resource.getrusage(resource.RUSAGE_SELF)
    referee_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert played.result.faults == ()
    assert played.result.end != "forfeit"
    made = [int(n) for n in re.findall(r"PROBE loop_connections (\d+) of", played.stderr())]
    assert made
    assert max(made) == 0
    assert referee_cpu < 1.5, f"the referee spent {referee_cpu:.2f} s of CPU on one series"


def test_calls_to_other_methods_before_the_hello_fail_the_start_up_at_once(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # Each call to a method other than Play would cost the referee's Python a little (53,000 of
    # them in 6 s cost it 3.9 s of CPU): the first one is the bot's start-up failure, and the
    # bot is stopped then, not when the series ends.
    played = play(sandbox, tmp_path, "unknown_method", "100000", control=FLOOD_TIME)
    assert played.kinds == [FaultKind.STARTUP_FAILURE]
    assert "called '/nothing.Here/Flood'" in played.result.faults[0].detail
    calls = [int(n) for n in re.findall(r"PROBE unknown_calls (\d+)", played.stderr())]
    assert max(calls, default=0) < 100_000  # stopped long before it could make them all


@contextmanager
def descriptor_limit(limit: int) -> Iterator[None]:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_an_early_connection_flood_hurts_only_the_flooder(sandbox: Sandbox, tmp_path: Path) -> None:
    # Before it says hello, 16 children of the flooder open 250 connections each (4,000 in
    # all, against the referee's 4,096 descriptors), then the flooder plays. Only the first
    # connection is admitted: the flooder's own gRPC channel finds the seat taken and it fails
    # its start-up, while the opponent starts and everything is torn down (``play`` checks
    # jails, processes and descriptors). Without the one-connection rule the referee holds 4,000
    # descriptors and the flooder plays on.
    started = time.monotonic()
    with descriptor_limit(4096):
        played = play(sandbox, tmp_path, "connections", "250x16", control=FLOOD_TIME)
    assert played.kinds == [FaultKind.STARTUP_FAILURE]
    assert played.result.identities[1] is not None  # the honest seat started
    assert "PROBE held_connections" in played.stderr()
    assert time.monotonic() - started < 60
