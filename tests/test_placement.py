"""CPU placement (``--pin-cpus``): the referee's threads on some CPUs, its bots on the others."""

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from protocol.manifest import load_manifest
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.records import LogRecord, Request
from referee.replay import read_records
from referee.rules import RuleParams
from referee.sandbox import (
    CpuPlacement,
    Sandbox,
    SandboxUnavailable,
    current_placement,
    on_spawner_thread,
    pin_cpus,
)
from referee.sandbox._procs import descendants
from tournaments.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "sample_bots" / "greedy"
CPUS = frozenset(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(
    len(CPUS) < 2, reason=f"CPU placement needs two CPUs; this process may use {sorted(CPUS)}"
)


@pytest.fixture
def placement() -> Iterator[CpuPlacement]:
    """This process pinned for the test, and unpinned after it whatever happens."""
    place = CpuPlacement.split()
    pin_cpus(place)
    try:
        yield place
    finally:
        pin_cpus(None)


def child_cpus() -> frozenset[int]:
    """The CPUs a process started from the calling thread may use."""
    code = "import json, os; print(json.dumps(sorted(os.sched_getaffinity(0))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return frozenset(json.loads(out.stdout))


def thread_cpus() -> set[frozenset[int]]:
    """The distinct CPU sets of this process's threads."""
    return {frozenset(os.sched_getaffinity(int(tid))) for tid in os.listdir("/proc/self/task")}


def tree_cpus(pid: int) -> list[frozenset[int]]:
    """The CPU set of every thread of a process and its descendants."""
    return [
        frozenset(os.sched_getaffinity(int(task.name)))
        for process in {pid} | descendants([pid])
        for task in Path(f"/proc/{process}/task").iterdir()
    ]


def test_split_gives_the_referee_a_quarter_of_the_cpus_and_refuses_one() -> None:
    assert CpuPlacement.split([0, 1]) == CpuPlacement(frozenset({0}), frozenset({1}))
    eight = CpuPlacement.split(range(8))
    assert (eight.referee, eight.bots) == (frozenset({0, 1}), frozenset(range(2, 8)))
    assert CpuPlacement.split([9, 2, 5]).to_dict() == {"referee": [2], "bots": [5, 9]}
    assert CpuPlacement.split([0, 2, 5]).describe() == "referee on CPU 0, bots on CPUs 2,5"
    with pytest.raises(SandboxUnavailable, match="two CPUs or more; this process may use CPU 3"):
        CpuPlacement.split([3])
    with pytest.raises(ValueError, match="on both sides"):
        CpuPlacement(frozenset({0, 1}), frozenset({1}))
    with pytest.raises(ValueError, match="at least one CPU"):
        CpuPlacement(frozenset({0}), frozenset())


@two_cpus
def test_pinning_moves_every_thread_and_what_the_spawner_starts(placement: CpuPlacement) -> None:
    assert current_placement() == placement
    assert thread_cpus() == {placement.referee}
    started: list[frozenset[int]] = []
    later = threading.Thread(target=lambda: started.append(frozenset(os.sched_getaffinity(0))))
    later.start()
    later.join()
    assert started == [placement.referee]  # threads started later inherit the referee's CPUs
    assert on_spawner_thread(child_cpus, bot=True) == placement.bots
    assert child_cpus() == placement.referee  # only the spawner's bots go to the bots' CPUs
    assert on_spawner_thread(child_cpus) == placement.referee  # anything else: the referee's
    assert on_spawner_thread(child_cpus, bot=True) == placement.bots
    pin_cpus(None)
    assert current_placement() is None
    assert thread_cpus() == {CPUS}
    assert on_spawner_thread(child_cpus, bot=True) == CPUS


@pytest.mark.slow
@two_cpus
def test_a_pinned_match_runs_its_bots_on_their_cpus_and_logs_the_placement(
    placement: CpuPlacement, tmp_path: Path
) -> None:
    sandbox = Sandbox(root_dir=tmp_path / "jails")
    seats = tuple(
        remote_seat(load_manifest(GREEDY), sandbox.prepare, f"pinned-{index}") for index in (0, 1)
    )
    seen: list[frozenset[int]] = []

    def watch(record: LogRecord) -> None:
        if isinstance(record, Request) and not seen:  # both bots are up by the first request
            for seat in seats:
                assert seat.process is not None
                seen.extend(tree_cpus(seat.process.pid))

    log = tmp_path / "pinned.jsonl"
    config = MatchConfig("pinned", 5, params=RuleParams(hand_cap=2), cpus=placement.as_pair())
    try:
        result = trio.run(play_folders, (seats[0], seats[1]), config, log, watch)
    finally:
        sandbox.close()
    assert result.faults == ()
    assert len(seen) >= 4  # at least two threads of each bot
    assert set(seen) == {placement.bots}
    assert read_records(log)[0]["cpus"] == placement.to_dict()


def test_gin_play_refuses_to_pin_on_one_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    log = tmp_path / "never.jsonl"
    argv = ["play", str(GREEDY), str(GREEDY), "--pin-cpus", "--log", str(log)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "cannot pin CPUs: CPU placement needs two CPUs or more; this process may use CPU 0" in (
        text
    )
    assert current_placement() is None
    assert not log.exists()


@pytest.mark.slow
@two_cpus
def test_gin_play_pins_cpus_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "play.jsonl"
    argv = ["play", str(GREEDY), str(GREEDY), "--pin-cpus", "--seed", "3", "--log", str(log)]
    try:
        result = CliRunner().invoke(app, argv)
        placement = current_placement()
    finally:
        pin_cpus(None)
    assert result.exit_code == 0, result.output
    assert placement == CpuPlacement.split()
    assert f"CPU placement: {placement.describe()}" in result.output
    records = read_records(log)
    assert records[0]["cpus"] == placement.to_dict()
    assert records[-1]["type"] == "result"
