"""Floods on a bot's own socket cost the referee and the honest opponent nothing.

A seat's channel (``referee.bridge``) admits one connection (its listening socket closes once it
is accepted) and one open stream on it; further streams are refused, and every control frame and
stream beside ``Play`` is charged to the connection's budget (``referee.http2``): once it is
spent the connection ends, and the flooder has a protocol violation, then forfeits. Each test
plays a flooding bot (``tests/hostile/hostile.py``, ``tests/hostile/h2_abuse.py``) against the
sample greedy bot with real processes in the real sandbox. ``benchmarks/flood_bench.py`` reports
the honest opponent's decision times and the referee's CPU beside a run without the flooder.
"""

from __future__ import annotations

import re
import resource
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.bridge import ABUSE_BUDGET
from referee.control import FaultPolicy, TimeControl
from referee.faults import FaultKind
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.replay import read_records
from referee.sandbox import Sandbox
from tests.test_hostile import GREEDY, Played, assert_recorded_and_clean, open_fds, play

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


def assert_flooder_pays(played: Played, *frames: str) -> None:
    """The flooder's connection was ended for its flood: a protocol violation naming the frames
    it flooded with, then its forfeit; the honest seat played every decision itself."""
    assert played.result.forfeited == (0,)
    assert played.kinds[0] is FaultKind.PROTOCOL_VIOLATION
    detail = played.result.faults[0].detail
    assert detail.startswith("abused its connection: too many control frames and streams (")
    assert all(name in detail for name in frames), detail
    parsed = sum(int(count) for count in re.findall(r"(\d+) [A-Za-z]", detail))
    assert parsed <= 2 * ABUSE_BUDGET  # the referee parsed about its budget, then stopped
    honest = [r for r in read_records(played.log) if r["type"] == "action" and r["seat"] == 1]
    assert honest
    assert all(r["by"] in ("bot", "forced") for r in honest)


def test_a_rapid_reset_flood_on_the_bots_own_connection_ends_it(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # The flooder speaks HTTP/2 by hand: its Play stream, and on that same connection, after
    # each answer and for as long as the opponent thinks, new streams reset at once. Each is
    # refused and charged to the connection's budget; once it is spent the connection ends
    # (without the budget: thousands of streams, each parsed and refused, for the whole series).
    with peak_rss() as memory:
        played = play(sandbox, tmp_path, "raw_flood", control=FLOOD_TIME, strikes=10**6)
    assert memory[1] - memory[0] < MEMORY_BOUND_MIB, memory
    assert_flooder_pays(played, "streams beside Play", "RST_STREAM")


def test_a_ping_flood_ends_only_the_flooders_connection(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "raw_ping", control=FLOOD_TIME)
    assert_flooder_pays(played, "PING")


ABUSER = Path(__file__).resolve().parent / "hostile" / "h2_abuse.py"


def play_abuser(sandbox: Sandbox, tmp_path: Path, mode: str) -> Played:
    """A series of ``tests/hostile/h2_abuse.py`` in ``mode`` against the greedy bot."""
    folder = tmp_path / f"h2_abuse-{mode}"
    folder.mkdir()
    shutil.copy(ABUSER, folder / "h2_abuse.py")
    (folder / "bot.toml").write_text(
        f'name = "h2_abuse"\nversion = "{mode}"\ncommand = ["python", "h2_abuse.py", "{mode}"]\n'
    )
    abuser = remote_seat(load_manifest(folder), sandbox.prepare, f"abuse-{mode}-0")
    greedy = remote_seat(load_manifest(GREEDY), sandbox.prepare, f"abuse-{mode}-1")
    config = MatchConfig(
        f"abuse-{mode}", 11, time_control=FLOOD_TIME, fault_policy=FaultPolicy(strikes=10**6)
    )
    log = tmp_path / f"{mode}.jsonl"
    fds_before = open_fds()
    played = Played(trio.run(play_folders, (abuser, greedy), config, log), abuser, greedy, log)
    assert_recorded_and_clean(played, sandbox, fds_before)
    return played


@pytest.mark.parametrize(
    ("mode", "frame"),
    [
        ("settings", "SETTINGS"),
        ("window", "WINDOW_UPDATE"),
        ("priority", "PRIORITY"),
        ("reset", "RST_STREAM"),
        ("empty_data", "small DATA frames"),
        ("continuation", "CONTINUATION"),
    ],
)
def test_a_control_frame_flood_on_the_bots_own_connection_ends_it(
    sandbox: Sandbox, tmp_path: Path, mode: str, frame: str
) -> None:
    with peak_rss() as memory:
        played = play_abuser(sandbox, tmp_path, mode)
    assert memory[1] - memory[0] < MEMORY_BOUND_MIB, memory
    assert_flooder_pays(played, frame)


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
    # The flooder's four busy children share two cores with both bots: on a loaded machine a
    # decision may run past 200 ms. A slow decision is the load's; what the referee pays for the
    # loop is its CPU, bounded below, and no connection may get through.
    assert {fault.kind for fault in played.result.faults} <= {FaultKind.TIMEOUT}
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
