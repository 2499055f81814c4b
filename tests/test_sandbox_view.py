"""What a bot sees of the machine: ``/dev`` is read-only but for its device nodes and a capped
``/dev/shm``, and ``/proc``'s machine-wide counters are the jail's own, idle, figures.

The hostile bots (``tests/hostile/dev_writer.py``, ``tests/hostile/counters.py``) play a real
series in the real sandbox; the referee's side keeps a CPU busy meanwhile, so that a bot
reading the machine's counters would see them move.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.remote import RemoteSeat
from referee.sandbox import Layer, Sandbox, SandboxLimits
from referee.sandbox._mounts import MASKED_PROC, SHM, bwrap_argv, proc_views

HERE = Path(__file__).resolve().parent
GREEDY = HERE.parent / "sample_bots" / "greedy"
FAST = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=8000)


def bot_folder(parent: Path, script: str, *args: str) -> Path:
    folder = parent / Path(script).stem
    folder.mkdir()
    shutil.copy(HERE / "hostile" / script, folder / script)
    command = ", ".join(json.dumps(part) for part in ["python", script, *args])
    (folder / "bot.toml").write_text(
        f'name = "hostile"\nversion = "{folder.name}"\ncommand = [{command}]\n'
    )
    return folder


def play(sandbox: Sandbox, folder: Path, tmp_path: Path) -> RemoteSeat:
    """A series of the bot in ``folder`` (seat 0) against greedy; the bot's seat, after it."""
    bot = remote_seat(load_manifest(folder), sandbox.prepare, f"{folder.name}-0")
    greedy = remote_seat(load_manifest(GREEDY), sandbox.prepare, f"{folder.name}-1")
    config = MatchConfig(folder.name, 5, time_control=FAST, fault_policy=FaultPolicy(strikes=3))
    result = trio.run(play_folders, (bot, greedy), config, tmp_path / f"{folder.name}.jsonl")
    assert result.faults == (), result.faults
    assert result.end == "complete"
    return bot


def verdicts(seat: RemoteSeat) -> dict[str, str]:
    assert seat.stderr is not None
    lines = [line.split() for line in seat.stderr.text().splitlines() if line.startswith("PROBE ")]
    return {words[1]: words[2] for words in lines}


def needs_bwrap(sandbox: Sandbox) -> None:
    for status in sandbox.layers:
        if status.layer is Layer.BWRAP and not status.active:
            pytest.skip(f"sandbox layer BWRAP unavailable: {status.detail}")


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """A process of the referee's side spinning on a CPU while the test runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


# --- the argv and the views, without a process ------------------------------------------------


def test_dev_is_remounted_read_only_after_its_capped_shm() -> None:
    argv = bwrap_argv("bwrap", [], 1 << 20, None, 2 << 20)
    dev, shm, remount = argv.index("/dev"), argv.index(SHM), argv.index("--remount-ro")
    assert argv[dev - 1] == "--dev"
    assert argv[remount + 1] == "/dev"
    assert argv[shm - 3 : shm] == ["--size", str(2 << 20), "--tmpfs"]
    assert dev < shm < remount


def test_the_proc_views_are_the_jails_own_figures() -> None:
    limits = SandboxLimits(memory_mb=300, cpus=1.5)
    views = proc_views(limits)
    assert {"stat", "loadavg", "meminfo"} <= views.keys() <= set(MASKED_PROC)
    cpu_lines = [line for line in views["stat"].splitlines() if line.startswith("cpu")]
    assert len(cpu_lines) == 1 + math.ceil(limits.cpus)
    assert all(set(line.split()[1:]) == {"0"} for line in cpu_lines)
    assert "MemTotal:         307200 kB" in views["meminfo"].splitlines()
    assert views["loadavg"].startswith("0.00 0.00 0.00 ")


# --- real bots, real sandbox --------------------------------------------------------------------


@pytest.mark.slow
def test_a_bot_cannot_write_to_dev_and_shm_is_capped(sandbox: Sandbox, tmp_path: Path) -> None:
    needs_bwrap(sandbox)
    over = sandbox.limits.shm_mb + 4
    seat = play(sandbox, bot_folder(tmp_path, "dev_writer.py", str(over)), tmp_path)
    assert verdicts(seat) == {
        "dev_create": "BLOCKED",
        "dev_mkdir": "BLOCKED",
        "dev_symlink": "BLOCKED",
        "dev_replace_null": "BLOCKED",
        "dev_null": "ALLOWED",
        "shm_small": "ALLOWED",
        "shm_over_cap": "BLOCKED",
    }
    assert seat.stderr is not None
    assert "No space left on device" in seat.stderr.text()


@pytest.mark.slow
@pytest.mark.usefixtures("busy_machine")
def test_a_bot_sees_no_machine_wide_counter_move(sandbox: Sandbox, tmp_path: Path) -> None:
    needs_bwrap(sandbox)
    seat = play(sandbox, bot_folder(tmp_path, "counters.py", "1.0"), tmp_path)
    seen = verdicts(seat)
    present = {name for name in MASKED_PROC if Path("/proc", name).is_file()}
    assert {f"counter_{name.replace('/', '_')}" for name in present} <= seen.keys()
    moved = sorted(name for name, verdict in seen.items() if verdict != "BLOCKED")
    assert moved == [], f"the bot saw the machine's counters move: {moved}"
    assert seat.stderr is not None
    line = next(line for line in seat.stderr.text().splitlines() if line.startswith("MACHINE "))
    machine = json.loads(line.removeprefix("MACHINE "))
    cpus = math.ceil(sandbox.limits.cpus)
    assert machine["cpus"] == machine["os_cpus"] == cpus  # the jail's, not the machine's
    assert machine["mem_total_kb"] == str(sandbox.limits.memory_mb * 1024)
    assert machine["loadavg"].startswith("0.00 0.00 0.00")
