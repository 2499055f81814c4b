"""The Go sample bot (sample_bots/go) is a compiled bot that plays over the real gRPC contract.

``make go-bot`` builds its binary from Debian's Go packages (``make test`` runs it first), so a
missing binary fails these tests rather than skipping them. The bot shares nothing with this code
base but hollywood_gin.proto: it runs as its own binary against the scripted fake referee (every
action goes through ``SeriesState.apply``, which raises on an illegal one), passes ``gin bot
check``, and plays a real sandboxed series whose log verifies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.replay import verify_log
from referee.sandbox import Sandbox
from tests.fake_referee import (
    assert_plays_a_scripted_series,
    assert_plays_a_scripted_sitting,
    run_bot_process,
)
from tests.sitting_checks import (
    assert_refuses_a_request_for_another_seat,
    assert_starts_each_series_afresh,
)

ROOT = Path(__file__).resolve().parent.parent
BOT_DIR = ROOT / "sample_bots" / "go"
BINARY = BOT_DIR / "gin-go-bot"
SAMPLES = ROOT / "sample_bots"
SERIES_TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 300.0
# The largest uint64 and one above 2**53: a bot that lost some of the 64 bits would echo them wrong.
BIG_IDS = (2**64 - 1, 2**53 + 1)

pytestmark = pytest.mark.slow  # each test needs the built binary (make go-bot); most run it


def binary() -> Path:
    """The built bot; a missing one fails the test (``make test`` builds it first)."""
    if not os.access(BINARY, os.X_OK):
        pytest.fail("sample_bots/go/gin-go-bot is missing: run make go-bot")
    return BINARY


def run_go_bot(environment: dict[str, str]) -> tuple[int, str, str]:
    """Run the bot until it exits; ``(exit code, stdout, stderr)``."""
    return run_bot_process([str(binary())], BOT_DIR, environment, SERIES_TIMEOUT_S)


def test_go_bot_manifest_names_its_binary() -> None:
    binary()
    manifest = load_manifest(BOT_DIR)
    assert manifest.command == ("./gin-go-bot",)
    assert manifest.argv() == [str(BINARY)]
    assert (manifest.name, manifest.version) == ("go-greedy", "1.0.0")


def test_go_bot_plays_a_whole_scripted_series(tmp_path: Path) -> None:
    binary()
    manifest = load_manifest(BOT_DIR)
    identity = (manifest.name, manifest.version)
    assert_plays_a_scripted_series(tmp_path, run_go_bot, identity, BIG_IDS, "go")


def test_go_bot_plays_a_sitting_of_three_series(tmp_path: Path) -> None:
    binary()  # (seats 0, 1, 0; each series must finish with every id echoed)
    assert_plays_a_scripted_sitting(tmp_path, run_go_bot, "go", series=3)


def test_go_bot_starts_each_series_of_a_sitting_afresh(tmp_path: Path) -> None:
    binary()
    assert_starts_each_series_afresh(tmp_path, run_go_bot, "go")


def test_go_bot_refuses_a_request_for_another_seat(tmp_path: Path) -> None:
    binary()
    assert_refuses_a_request_for_another_seat(tmp_path, run_go_bot)


def test_go_bot_fails_loudly_without_the_environment() -> None:
    code, out, err = run_go_bot({})
    assert code == 1
    assert out == ""
    assert "GIN_REFEREE and GIN_TOKEN must be set" in err


def test_go_bot_passes_bot_check() -> None:
    binary()
    gin = Path(sys.executable).parent / "gin"
    command = [str(gin)] if gin.exists() else [shutil.which("gin") or "gin"]
    result = subprocess.run(
        [*command, "bot", "check", str(BOT_DIR)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"gin bot check failed:\n{result.stdout}\n{result.stderr}"


def test_go_bot_plays_a_real_sandboxed_series(tmp_path: Path) -> None:
    binary()
    with Sandbox(root_dir=tmp_path / "jails") as sandbox:
        seats = (
            remote_seat(load_manifest(BOT_DIR), sandbox.prepare, "go-0"),
            remote_seat(load_manifest(SAMPLES / "greedy"), sandbox.prepare, "greedy-1"),
        )
        log = tmp_path / "series.jsonl"
        result = trio.run(play_folders, seats, MatchConfig("go-real", 4243), log)
    assert result.faults == ()
    assert result.end == "complete"
    assert result.winner is not None
    assert [identity.name for identity in result.identities if identity] == ["go-greedy", "greedy"]
    report = verify_log(log)
    assert report.ok, report.summary()
    assert report.hands == result.hands
