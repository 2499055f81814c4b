"""Hostile bots against the real referee: real processes, real sandbox, real gRPC.

Each test plays a series between a hostile bot (seat 0) and the sample greedy bot (seat 1),
both as sandboxed processes, and checks that the fault is classified right, the greedy bot is
unaffected, the result and log are recorded, and nothing leaks: no process, no file descriptor,
no jail folder. Where a sandbox layer is missing here, the tests that need it say so and skip.
The last tests send text meant to break a terminal or a page, and read what the commands show.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio
from rich.console import Console
from typer.testing import CliRunner, Result

from protocol.manifest import load_manifest
from referee.conformance import CHECK_EXIT_WAIT_S, check_bot
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult
from referee.remote import RemoteSeat
from referee.replay import StepKind, load_replay, read_records, verify_log
from referee.sandbox import Layer, Sandbox
from tests.hostile_bots import hostile_folder
from tournaments.cli.app import app
from tournaments.cli.replay_view import step_view

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


@pytest.mark.slow
def test_crash_mid_hand(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "crash")
    assert_forfeit(played, FaultKind.CRASH)
    assert played.result.faults[-1].evidence["exit_status"] == 3


@pytest.mark.slow
def test_an_error_in_decide_reads_as_the_process_ending_not_as_the_stream(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The SDK closes the stream, prints the traceback and exits 1: the public detail said
    "stream ended (closed, or a message over 1 MiB)", which sent authors looking for a big
    message; it says the process ended, with its status."""
    played = play(sandbox, tmp_path, "raise_after", "3")
    assert_forfeit(played, FaultKind.CRASH)
    fault = played.result.faults[-1]
    assert fault.evidence["exit_status"] == 1
    assert fault.detail.startswith("the bot's process ended (exit status 1)"), fault.detail
    assert "1 MiB" not in fault.detail
    assert "deliberate crash" not in fault.detail  # its stderr stays in the log, for its author


@pytest.mark.slow
def test_hang_times_out_then_forfeits(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "hang")
    assert played.kinds == [FaultKind.TIMEOUT] * 3
    assert_forfeit(played, FaultKind.TIMEOUT)
    assert all(fault.elapsed_ms >= 500 for fault in played.result.faults)


@pytest.mark.slow
def test_just_over_the_limit_is_one_timeout_and_the_late_answer_is_dropped(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "slow", "0.65")
    assert played.kinds == [FaultKind.TIMEOUT]
    assert played.result.forfeited == ()
    assert played.result.end == "complete"


@pytest.mark.slow
def test_illegal_action_is_a_strike_and_play_goes_on(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "illegal")
    assert played.kinds == [FaultKind.ILLEGAL_ACTION]
    assert "is not in seat 0's hand" in played.result.faults[0].detail
    assert played.result.end == "complete"


@pytest.mark.slow
def test_wrong_request_id(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "wrong_id")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert played.kinds == [FaultKind.PROTOCOL_VIOLATION] * 3  # one strike each, no timeouts
    assert "echoes request id" in played.result.faults[0].detail


@pytest.mark.slow
def test_garbage_messages(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "garbage")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert played.kinds == [FaultKind.PROTOCOL_VIOLATION] * 3  # one strike each, no timeouts
    assert "expected an action" in played.result.faults[0].detail


@pytest.mark.slow
def test_oversized_message(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "oversized")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert played.kinds == [FaultKind.PROTOCOL_VIOLATION] * 3  # one strike each, no timeouts
    assert played.result.faults[0].detail == "oversized message: 200014 bytes, the limit is 64 KiB"


@pytest.mark.slow
def test_never_connects(sandbox: Sandbox, tmp_path: Path) -> None:
    control = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=1500)
    played = play(sandbox, tmp_path, "never_connect", control=control)
    assert_forfeit(played, FaultKind.STARTUP_FAILURE)
    assert played.result.hands == 0


@pytest.mark.slow
def test_wrong_token(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "wrong_token")
    assert_forfeit(played, FaultKind.STARTUP_FAILURE)
    assert played.result.faults[0].detail == "wrong token in hello"


# --- resynchronising after a protocol violation -----------------------------------------------


def assert_resynchronised(played: Played, *, settles: bool = False) -> Fault:
    """One violation, one strike: the bot plays every later decision of its seat, the series
    ends normally and its log verifies. A duplicate answer does not settle the decision it
    comes in (the bot's answer to it counts); an answer gone wrong (``settles``) does, once:
    the referee plays for the bot there and the bot's own late answer is dropped unstruck."""
    result = played.result
    assert played.kinds == [FaultKind.PROTOCOL_VIOLATION]
    assert result.forfeited == ()
    assert result.end == "complete"
    records = read_records(played.log)
    fault = result.faults[0]
    fault_at = next(index for index, record in enumerate(records) if record["type"] == "fault")
    choosers = [
        (record["request"], record["by"])
        for record in records[fault_at:]
        if record["type"] == "action" and record["seat"] == 0 and record["by"] != "forced"
    ]
    assert len(choosers) > 10
    expected = {(fault.request_id, "referee")} if settles else set()
    assert {chosen for chosen in choosers if chosen[1] != "bot"} == expected
    report = verify_log(played.log)
    assert report.ok, report.summary()
    assert fault.stray is not settles
    return fault


@pytest.mark.slow
def test_an_answer_sent_twice_costs_one_strike(sandbox: Sandbox, tmp_path: Path) -> None:
    fault = assert_resynchronised(play(sandbox, tmp_path, "answer_twice"))
    # Counted at the seat's next decision, and naming the request it answered twice.
    assert 0 < fault.evidence["echoed_request_id"] < fault.request_id
    assert "a request settled already" in fault.detail


@pytest.mark.slow
def test_an_answer_before_any_request_costs_one_strike(sandbox: Sandbox, tmp_path: Path) -> None:
    fault = assert_resynchronised(play(sandbox, tmp_path, "early_answer"), settles=True)
    assert fault.evidence["echoed_request_id"] == 999_999
    assert "answer echoes request id 999999, expected" in fault.detail


@pytest.mark.slow
def test_a_stale_answer_sent_again_costs_one_strike(sandbox: Sandbox, tmp_path: Path) -> None:
    fault = assert_resynchronised(play(sandbox, tmp_path, "stale_resend"))
    assert 0 < fault.evidence["echoed_request_id"] < fault.request_id


@pytest.mark.slow
def test_a_second_stream_costs_at_most_one_strike_and_play_goes_on(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "second_stream")
    assert "PROBE second_stream BLOCKED" in played.stderr()
    if "ALREADY_EXISTS" not in played.stderr():  # the transport held the stream back: no fault
        assert played.result.faults == ()
        assert played.result.end == "complete"
        return
    fault = assert_resynchronised(played)
    assert fault.detail == "opened a second stream"


@pytest.mark.slow
def test_three_violations_forfeit(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "answer_twice", "3")
    assert_forfeit(played, FaultKind.PROTOCOL_VIOLATION)
    assert played.kinds == [FaultKind.PROTOCOL_VIOLATION] * 3
    faults = played.result.faults
    # Three answers sent twice, each struck once; none took the referee's place in a decision.
    assert [fault.stray for fault in faults] == [True, True, False]
    echoed = [fault.evidence["echoed_request_id"] for fault in faults]
    assert echoed == sorted(set(echoed))
    records = read_records(played.log)
    assert not any(r["type"] == "action" and r["by"] == "referee" for r in records)
    report = verify_log(played.log)
    assert report.ok, report.summary()


# --- resources ------------------------------------------------------------------------------


@pytest.mark.slow
def test_memory_bomb_is_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.CGROUP)
    played = play(sandbox, tmp_path, "memory")
    assert_forfeit(played, FaultKind.CRASH)
    assert played.result.faults[-1].evidence["exit_status"] != 0


@pytest.mark.slow
def test_fork_bomb_is_capped(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.CGROUP)
    played = play(sandbox, tmp_path, "forks")
    assert_forfeit(played, FaultKind.TIMEOUT)
    # The pids cap (48, threads included) stopped the bomb: fork and gRPC's threads failed,
    # and the teardown found fewer processes than the cap, all killed.
    assert "Resource temporarily unavailable" in played.stderr()
    killed = getattr(played.hostile.teardown_report, "killed", ())
    assert 1 < len(killed) < 48


@pytest.mark.slow
def test_cpu_spin_ignoring_sigxcpu_loses_on_time_and_is_killed(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "spin")
    assert_forfeit(played, FaultKind.TIMEOUT)


@pytest.mark.slow
def test_escaper_with_setsid_and_double_fork_is_swept(sandbox: Sandbox, tmp_path: Path) -> None:
    needs(sandbox, Layer.BWRAP)
    played = play(sandbox, tmp_path, "escape")
    assert "PROBE escaper started" in played.stderr()
    assert played.result.end == "complete"
    # (The escaper is gone: assert_recorded_and_clean found nothing of the jail left.)


@pytest.mark.slow
def test_sigterm_ignorer_is_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    played = play(sandbox, tmp_path, "ignore_sigterm")
    assert played.result.end == "complete"
    assert played.result.faults == ()
    assert played.hostile.exit_after_goodbye is None  # it stayed; the teardown killed it
    assert getattr(played.hostile.teardown_report, "killed", ())


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- bot text is data -------------------------------------------------------------------------

EVIL = " ".join(
    (
        "[/]",
        "[bold red]x",
        "\x1b[2J\x1b]0;pwned\x07",
        "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
        "\x9b2J",
    )
)
"""Rich markup, clear-screen, a window title, a hyperlink and a C1 control: one line of text."""
SHOWN = ("[/]", "[boldred]x", "\\x1b[2J\\x1b]0;pwned\\x07", "\\x1b]8;;http://x", "\\x9b2J")
"""How each piece must come out (spaces left out: rich wraps lines)."""
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A control character other than a line break or a tab: none may reach the output."""
GOLDEN_LOG = HERE / "golden" / "format1-strikes.jsonl"


def gin(*argv: str | Path) -> Result:
    return CliRunner().invoke(app, [str(arg) for arg in argv])


def assert_shown_escaped(output: str) -> None:
    assert RAW.search(output) is None, repr(output)
    assert "Traceback" not in output
    flat = "".join(output.split())
    for piece in SHOWN:
        assert piece in flat, (piece, output)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hello", "said"),
    [
        ("greedy@1.0.0", "name 'greedy' version '1.0.0'"),
        ("hostile@9.9", "name 'hostile' version '9.9'"),
        ("x" * 300, f"name '{'x' * 63}…' version 'evil_name'"),
    ],
)
def test_a_hello_that_is_not_the_manifests_is_a_startup_failure(
    sandbox: Sandbox, tmp_path: Path, hello: str, said: str
) -> None:
    played = play(sandbox, tmp_path, "evil_name", hello)
    assert_forfeit(played, FaultKind.STARTUP_FAILURE)
    assert played.result.hands == 0
    assert played.result.faults[0].detail == (
        f"the hello says {said}, but bot.toml says name 'hostile' version 'evil_name': "
        "send the name and version of bot.toml"
    )
    header = read_records(played.log)[0]
    assert header["seats"][0] is None
    assert (header["seats"][1]["name"], header["seats"][1]["version"]) == ("greedy", "1.0.0")


@pytest.mark.slow
def test_an_evil_hello_name_is_refused_and_shown_escaped_by_gin_play(tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "evil_name", EVIL)
    log = tmp_path / "evil.jsonl"
    result = gin("play", folder, GREEDY, "--seed", "5", "--move-time", "0.4", "--log", log)
    assert result.exit_code == 0, result.output
    assert "startup_failure" in result.output
    assert_shown_escaped(result.output)
    [fault] = [record for record in read_records(log) if record["type"] == "fault"]
    assert RAW.search(fault["detail"]) is None  # escaped by the referee, not only on screen


@pytest.mark.slow
def test_gin_play_shows_the_manifests_name_and_an_evil_stderr_escaped(tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "evil_stderr", EVIL)
    log = tmp_path / "stderr.jsonl"
    result = gin("play", folder, GREEDY, "--seed", "5", "--move-time", "0.4", "--log", log)
    assert result.exit_code == 0, result.output
    assert "hostile@evil_stderr" in result.output
    assert "stderr:" in result.output
    assert_shown_escaped(result.output)
    seats = read_records(log)[0]["seats"]
    assert [(seat["name"], seat["version"]) for seat in seats] == [
        ("hostile", "evil_stderr"),
        ("greedy", "1.0.0"),
    ]


@pytest.mark.slow
def test_gin_bot_check_shows_an_evil_stderr_escaped(tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "evil_stderr", EVIL)
    result = gin("bot", "check", folder, "--decisions", "30", "--move-time", "0.4")
    assert result.exit_code == 1, result.output
    assert "handles every event" in result.output
    assert_shown_escaped(result.output)


def test_a_manifest_with_evil_text_is_refused_and_shown_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "evil-manifest"
    folder.mkdir()
    fields = {"name": EVIL, "version": EVIL, "command": ["python", "bot.py"]}
    (folder / "bot.toml").write_text(
        "".join(f"{key} = {json.dumps(value)}\n" for key, value in fields.items())
    )
    (folder / "bot.py").write_text("")
    check = gin("bot", "check", folder)
    assert check.exit_code == 1, check.output
    assert "manifest is valid" in check.output
    played = gin("play", folder, GREEDY, "--log", tmp_path / "never.jsonl")
    assert played.exit_code == 2, played.output
    assert "not a valid bot folder" in " ".join(played.output.split())  # rich may wrap it
    for output in (check.output, played.output):
        assert RAW.search(output) is None, repr(output)
        assert "Traceback" not in output
        assert "[/][boldred]x" in "".join(output.split())


def evil_log(tmp_path: Path) -> Path:
    """A log as a referee that trusted the hello would write it: a bot's text in its header and
    in a fault's detail and evidence."""
    records = [json.loads(line) for line in GOLDEN_LOG.read_text().splitlines()]
    records[0]["seats"][0]["name"] = EVIL
    fault = next(record for record in records if record["type"] == "fault")
    for logged in (fault, records[-1]["faults"][0]):  # the fault record and the result's list
        logged["detail"] = EVIL
        logged["evidence"]["stderr_tail"] = EVIL
    path = tmp_path / "evil.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.mark.parametrize("seat", ["", "0"])
def test_gin_replay_shows_a_logged_evil_name_escaped(tmp_path: Path, seat: str) -> None:
    result = gin("replay", evil_log(tmp_path), "--print", *(["--seat", seat] if seat else []))
    assert result.exit_code == 0, result.output
    assert "deals; the upcard is" in result.output
    assert_shown_escaped(result.output)


def test_the_replay_players_table_shows_a_logged_evil_name_escaped(tmp_path: Path) -> None:
    """The key-driven player needs a terminal, so its screens are rendered here directly."""
    replay = load_replay(evil_log(tmp_path))
    kinds = (StepKind.DEAL, StepKind.FAULT, StepKind.SHOWDOWN)
    shown = [next(step.index for step in replay.steps if step.kind is kind) for kind in kinds]
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, force_terminal=False)
    for index in shown:
        for viewer in (None, 0, 1):
            console.print(step_view(replay, index, viewer))
    assert "score sheet" in out.getvalue()
    assert_shown_escaped(out.getvalue())


def test_gin_replay_verify_shows_an_evil_record_escaped(tmp_path: Path) -> None:
    lines = GOLDEN_LOG.read_text().splitlines()
    record = json.loads(lines[5])
    record["type"] = EVIL
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:5], json.dumps(record), *lines[6:]]) + "\n")
    result = gin("replay", bad, "--verify")
    assert result.exit_code == 1, result.output
    assert "FAILED at line 6" in result.output
    assert_shown_escaped(result.output)


def test_the_replay_page_holds_an_evil_name_as_escaped_text(tmp_path: Path) -> None:
    log = evil_log(tmp_path)
    header = json.loads(log.read_text().splitlines()[0])
    header["match_id"] = "</script><!--<script>alert(1)</script>"
    log.write_text("\n".join([json.dumps(header), *log.read_text().splitlines()[1:]]) + "\n")
    page_file = tmp_path / "page.html"
    result = gin("replay", log, "--html", page_file)
    assert result.exit_code == 0, result.output
    page = page_file.read_text()
    assert "<script>alert(1)" not in page
    assert "<!--" not in page
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page)
    assert found is not None
    data = json.loads(found.group(1))  # the strings as the page's script sees them
    assert data["title"] == header["match_id"]
    assert_shown_escaped("\n".join(strings(data)))


def strings(value: object) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@pytest.mark.slow
def test_the_kit_gives_a_bot_time_to_exit_and_fails_one_that_stays(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """A bot that leaves 1.5 s after its goodbye (as one does on a loaded machine) passes the
    kit's exit check, which waits CHECK_EXIT_WAIT_S; one that never leaves fails it, saying how
    long it was given."""
    (tmp_path / "slow").mkdir()
    (tmp_path / "stays").mkdir()
    slow = hostile_folder(tmp_path / "slow", "slow_exit", "1.5")
    report = trio.run(lambda: check_bot(slow, sandbox.prepare, decisions=20))
    exit_item = next(
        item for item in report.items if item.name == "leaves cleanly after the goodbye"
    )
    assert exit_item.passed, exit_item.detail
    stays = hostile_folder(tmp_path / "stays", "ignore_sigterm")
    report = trio.run(lambda: check_bot(stays, sandbox.prepare, decisions=20))
    exit_item = next(
        item for item in report.items if item.name == "leaves cleanly after the goodbye"
    )
    assert not exit_item.passed
    assert f"still running {CHECK_EXIT_WAIT_S:g} s after the Goodbye" in exit_item.detail
