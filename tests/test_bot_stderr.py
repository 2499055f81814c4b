"""A bot's stderr is kept and shown: beside the match log, after a fault in ``gin play``, in the
conformance kit's report, and by ``gin replay LOG --stderr SEAT``; and the kit ticks a check
only on evidence. Real sandboxed bots (the hostile bot, ``tests/hostile/hostile.py``)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from referee.matchlog import stderr_path
from referee.remote import HEAD_BYTES, TAIL_BYTES, OutputDrain
from referee.sandbox import Sandbox
from tests.hostile_bots import hostile_folder
from tests.test_hostile import EVIL, GOLDEN_LOG, GREEDY, RAW, assert_shown_escaped, gin, play

CRASH = "RuntimeError: deliberate crash after 12 decisions"
"""The last line of the traceback of the ``raise_after`` bot (ARG 12)."""


def traceback_block(lines: list[str]) -> list[str]:
    """The lines from ``Traceback (most recent call last):`` to the crash's own line."""
    start = lines.index("Traceback (most recent call last):")
    return lines[start : lines.index(CRASH, start) + 1]


def test_the_drain_keeps_short_output_whole_and_says_what_it_dropped_of_a_long_one() -> None:
    short = OutputDrain(io.BytesIO(b"one\ntwo\n"), "short")
    short.thread.join()
    assert short.kept() == "one\ntwo\n"
    data = bytes(range(65, 91)) * 4000  # 104,000 bytes of A-Z
    long = OutputDrain(io.BytesIO(data), "long")
    long.thread.join()
    dropped = len(data) - HEAD_BYTES - TAIL_BYTES
    expected = data[:HEAD_BYTES] + f"\n[{dropped} bytes not kept]\n".encode() + data[-TAIL_BYTES:]
    assert long.kept() == expected.decode()


@pytest.mark.slow
def test_a_seats_stderr_is_kept_beside_the_log_and_gin_replay_prints_it_escaped(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    played = play(sandbox, tmp_path, "evil_stderr", EVIL)
    kept = stderr_path(played.log, 0).read_text()
    assert RAW.search(kept) is None, repr(kept)  # escaped in the file already
    assert "\\x1b]0;pwned\\x07" in kept
    assert stderr_path(played.log, 1).is_file()  # the greedy bot's, empty or not
    shown = gin("replay", played.log, "--stderr", "0")
    assert shown.exit_code == 0, shown.output
    assert_shown_escaped(shown.output)
    bare = tmp_path / "bare.jsonl"  # a log with no stderr beside it
    shutil.copy(GOLDEN_LOG, bare)
    missing = gin("replay", bare, "--stderr", "1")
    assert missing.exit_code == 2, missing.output
    assert missing.output.strip().splitlines() == [
        f"error: no stderr kept for seat 1 of {bare} (no file {bare}.seat1.stderr)"
    ]


@pytest.mark.slow
def test_gin_play_shows_the_traceback_of_a_crashing_bot(tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path, "raise_after", "12")
    log = tmp_path / "crash.jsonl"
    result = gin("play", folder, GREEDY, "--seed", "5", "--move-time", "0.4", "--log", log)
    assert result.exit_code == 0, result.output
    assert "seat 0 crash" in result.output
    assert f"gin replay {log} --stderr 0" in result.output
    kept = stderr_path(log, 0).read_text().splitlines()
    shown = traceback_block(result.output.splitlines())
    assert shown == traceback_block(kept)  # every line as the bot wrote it
    assert any(line.endswith(", in deliberate_crash") for line in shown)


@pytest.mark.slow
def test_the_kit_ticks_nothing_unshown_for_a_bot_that_crashes_after_12_decisions(
    tmp_path: Path,
) -> None:
    folder = hostile_folder(tmp_path, "raise_after", "12")
    result = gin("bot", "check", folder, "--move-time", "0.4")
    assert result.exit_code == 1, result.output
    output = result.output
    for check in (
        "answers every request in time",
        "plays only legal actions",
        "made at least 300 decisions",
        "handles every event and plays to the end",
    ):
        assert f"✓ {check}" not in output, output
    assert "✗ made at least 300 decisions: 12 of 300" in output
    assert "? answers every request in time: not shown: 12 of 300 decisions made" in output
    block = traceback_block(output.splitlines())
    assert len(block) >= 4
    assert all(line.startswith("  ") for line in block[1:-1])  # frames indented, as printed
    assert any(line.endswith(", in deliberate_crash") for line in block)
    assert " | " not in output


def test_the_kit_says_in_one_line_that_a_bot_never_started(tmp_path: Path) -> None:
    folder = tmp_path / "no-start"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "no-start"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
    )
    (folder / "bot.py").write_text("import no_such_module_here\n")
    result = gin("bot", "check", folder, "--move-time", "0.4")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("no-start@1 never started: no hello: the bot's process ended")
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in lines
    assert "decisions in" not in result.output
    assert not any(line.startswith(("✓", "✗", "?")) for line in lines)


def test_the_kit_on_a_missing_folder_says_so_in_one_line() -> None:
    result = gin("bot", "check", "/no/such/folder")
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == ["error: no bot folder at /no/such/folder"]
