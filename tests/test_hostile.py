"""Hostile bots against the real referee: real processes, real sandbox, real gRPC.

Each test plays a series between a hostile bot (seat 0) and the sample greedy bot (seat 1),
both as sandboxed processes, and checks that the fault is classified right, the greedy bot is
unaffected, the result and log are recorded, and nothing leaks: no process, no file descriptor,
no jail folder. Where a sandbox layer is missing here, the tests that need it say so and skip.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.faults import FaultKind
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult
from referee.matchlog import read_records
from referee.remote import RemoteSeat
from referee.sandbox import Layer, Sandbox, SandboxLimits
from tests.hostile_bots import hostile_folder

HERE = Path(__file__).resolve().parent
GREEDY = HERE.parent / "sample_bots" / "greedy"
FAST = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=8000)


@dataclass
class Played:
    result: MatchResult
    hostile: RemoteSeat
    greedy: RemoteSeat
    log: Path

    @property
    def kinds(self) -> list[FaultKind]:
        return [fault.kind for fault in self.result.faults]

    def stderr(self) -> str:
        assert self.hostile.stderr is not None
        return self.hostile.stderr.text()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def settled_fds(target: int, wait_s: float = 3.0) -> int:
    """Open descriptors, once they are down to ``target`` or ``wait_s`` has passed."""
    deadline = time.monotonic() + wait_s
    while (count := open_fds()) > target and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    box = Sandbox(SandboxLimits(memory_mb=256, pids=48), root_dir=tmp_path_factory.mktemp("jails"))
    warm_up(box)
    yield box
    box.close()


def warm_up(box: Sandbox) -> None:
    """Start and stop one bot, so one-time set-up (gRPC's pollers, the sandbox's spawner
    thread) happens before any test counts descriptors."""
    seat = remote_seat(load_manifest(GREEDY), box.prepare, "warm-up")

    async def main() -> None:
        await seat.connect(0)
        await seat.close("warm-up")

    trio.run(main)


def needs(sandbox: Sandbox, *layers: Layer) -> None:
    missing = [status for status in sandbox.layers if status.layer in layers and not status.active]
    if missing:
        pytest.skip(
            "; ".join(f"sandbox layer {s.layer.name} unavailable: {s.detail}" for s in missing)
        )


def play(
    sandbox: Sandbox,
    tmp_path: Path,
    mode: str,
    arg: str = "",
    *,
    control: TimeControl = FAST,
    strikes: int = 3,
    seed: int = 11,
) -> Played:
    folder = hostile_folder(tmp_path, mode, arg)
    hostile = remote_seat(load_manifest(folder), sandbox.prepare, f"{mode}-0")
    greedy = remote_seat(load_manifest(GREEDY), sandbox.prepare, f"{mode}-1")
    config = MatchConfig(
        f"hostile-{mode}", seed, time_control=control, fault_policy=FaultPolicy(strikes=strikes)
    )
    log = tmp_path / f"{mode}.jsonl"
    fds_before = open_fds()
    result = trio.run(play_folders, (hostile, greedy), config, log)
    played = Played(result, hostile, greedy, log)
    assert_recorded_and_clean(played, sandbox, fds_before)
    return played


def assert_recorded_and_clean(played: Played, sandbox: Sandbox, fds_before: int) -> None:
    result = played.result
    # The greedy bot is unaffected: no fault, it left by itself, and it is fully torn down.
    assert all(fault.seat == 0 for fault in result.faults)
    assert played.greedy.exit_after_goodbye == 0 or result.forfeited == (0,)
    for seat in (played.hostile, played.greedy):
        report = seat.teardown_report
        assert report is not None
        assert getattr(report, "leftover", ()) == ()
        assert getattr(report, "folder_removed", False)
    assert list(sandbox.root_dir.iterdir()) == [] or all(
        not path.name.startswith(("hostile", "greedy")) for path in sandbox.root_dir.iterdir()
    )
    # The log holds the whole story, the result last.
    records = read_records(played.log)
    assert records[0]["type"] == "header"
    assert records[-1]["type"] == "result"
    assert records[-1]["end"] == result.end
    assert sum(record["type"] == "fault" for record in records) == len(result.faults)
    # No descriptor of ours is left open (grpc closes its server's in the background).
    assert settled_fds(fds_before + 2) <= fds_before + 2


def assert_forfeit(played: Played, kind: FaultKind) -> None:
    assert played.result.forfeited == (0,)
    assert played.result.winner == 1
    assert played.result.end == "forfeit"
    assert played.kinds[-1] is kind


# --- faults of the game and the protocol --------------------------------------------------------


def test_crash_mid_hand(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "crash")
    assert_forfeit(played, FaultKind.CRASH)
    assert played.result.faults[-1].evidence["exit_status"] == 3


def test_hang_times_out_then_forfeits(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "hang")
    assert played.kinds == [FaultKind.TIMEOUT] * 3
    assert_forfeit(played, FaultKind.TIMEOUT)
    assert all(fault.elapsed_ms >= 500 for fault in played.result.faults)


def test_just_over_the_limit_is_one_timeout_and_the_late_answer_is_dropped(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "slow", "0.65")
    assert played.kinds == [FaultKind.TIMEOUT]
    assert played.result.forfeited == ()
    assert played.result.end == "complete"


def test_illegal_action_is_a_strike_and_play_goes_on(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "illegal")
    assert played.kinds == [FaultKind.ILLEGAL_ACTION]
    assert "is not in seat 0's hand" in played.result.faults[0].detail
    assert played.result.end == "complete"


def test_wrong_request_id(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "wrong_id")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert "echoes request id" in played.result.faults[0].detail


def test_garbage_messages(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "garbage")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert "expected an action" in played.result.faults[0].detail


def test_oversized_message(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "oversized")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert played.result.faults[0].detail == "oversized message: 200014 bytes, the limit is 64 KiB"


def test_never_connects(sandbox: Sandbox, tmp_path: Path) -> None:
    control = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=1500)
    played = play(sandbox, tmp_path, "never_connect", control=control)
    assert_forfeit(played, FaultKind.STARTUP_FAILURE)
    assert played.result.hands == 0


def test_wrong_token(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "wrong_token")
    assert_forfeit(played, FaultKind.STARTUP_FAILURE)
    assert played.result.faults[0].detail == "wrong token in hello"


# --- resources ------------------------------------------------------------------------------


def test_memory_bomb_is_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.CGROUP)
    played = play(sandbox, tmp_path, "memory")
    assert_forfeit(played, FaultKind.CRASH)
    assert played.result.faults[-1].evidence["exit_status"] != 0


def test_fork_bomb_is_capped(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.CGROUP)
    played = play(sandbox, tmp_path, "forks")
    assert_forfeit(played, FaultKind.TIMEOUT)
    # The pids cap (48, threads included) stopped the bomb: fork and gRPC's threads failed,
    # and the teardown found fewer processes than the cap, all killed.
    assert "Resource temporarily unavailable" in played.stderr()
    killed = getattr(played.hostile.teardown_report, "killed", ())
    assert 1 < len(killed) < 48


def test_cpu_spin_ignoring_sigxcpu_loses_on_time_and_is_killed(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "spin")
    assert_forfeit(played, FaultKind.TIMEOUT)


def test_escaper_with_setsid_and_double_fork_is_swept(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.BWRAP)
    played = play(sandbox, tmp_path, "escape")
    assert "PROBE escaper started" in played.stderr()
    assert played.result.end == "complete"
    # (The escaper is gone: assert_recorded_and_clean found nothing of the jail left.)


def test_sigterm_ignorer_is_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "ignore_sigterm")
    assert played.result.end == "complete"
    assert played.result.faults == ()
    assert played.hostile.exit_after_goodbye is None  # it stayed; the teardown killed it
    assert getattr(played.hostile.teardown_report, "killed", ())


def test_output_flood_is_capped(sandbox: Sandbox, tmp_path: Path) -> None:
    rss_before = _rss_kib()
    played = play(sandbox, tmp_path, "flood")
    assert played.hostile.stdout is not None
    assert played.hostile.stdout.total >= 100 * 1024 * 1024
    assert _rss_kib() - rss_before < 64 * 1024
    assert played.result.end in ("complete", "forfeit")


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- escape attempts --------------------------------------------------------------------------


def test_cheating_probes_are_all_blocked(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.BWRAP, Layer.SECCOMP, Layer.USER)
    secret = tmp_path / "referee-secret"
    secret.write_text("HIDDEN-DECK-ORDER")
    secret.chmod(0o600)
    other_code = sandbox.root_dir / "other-bot-code.py"
    other_code.write_text("SECRET STRATEGY")
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as abstract,
    ):
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        abstract.bind("\0gin-test-bait")
        abstract.listen()
        arg = ",".join(
            [
                f"tcp=127.0.0.1:{tcp.getsockname()[1]}",
                "abstract=gin-test-bait",
                f"secret={secret}",
                f"other_code={other_code}",
                f"referee_pid={os.getpid()}",
            ]
        )
        played = play(sandbox, tmp_path, "probes", arg)
    lines = [
        line.split(" ", 3) for line in played.stderr().splitlines() if line.startswith("PROBE ")
    ]
    verdicts = {parts[1]: parts[2] for parts in lines}
    expected = {
        "tcp_loopback",
        "tcp_out",
        "inet_socket",
        "abstract_socket",
        "read_secret",
        "read_other_code",
        "referee_environ",
        "referee_mem",
        "ptrace_referee",
        "tamper_socket",
        "write_run_dir",
    }
    assert expected <= verdicts.keys(), verdicts
    allowed = {name for name in expected if verdicts[name] != "BLOCKED"}
    assert not allowed, [parts for parts in lines if parts[1] in allowed]
    pids = next(parts[3] for parts in lines if parts[1] == "visible_pids")
    assert pids.count("'") // 2 <= 4, pids
    assert played.result.end == "complete"
    assert played.result.faults == ()


def test_token_is_in_no_command_line(sandbox: Sandbox, tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "hang")
    seat = remote_seat(load_manifest(folder), sandbox.prepare, "argv-0")

    async def main() -> list[str]:
        await seat.connect(0)
        lines = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
                except OSError:
                    continue
        await seat.close("done")
        return lines

    lines = trio.run(main)
    assert lines
    assert not any(seat.token in line for line in lines)
    assert sys.argv  # the referee's own argv holds no token either
    assert seat.token not in " ".join(sys.argv)
