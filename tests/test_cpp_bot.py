"""The C++ sample bot (sample_bots/cpp) is a compiled bot that plays over the real gRPC contract.

``make cpp-bot`` builds its binary from Debian's gRPC and protobuf packages (``make test`` runs it
first), so a missing binary fails these tests rather than skipping them. The binary is static:
the sandbox shows a bot only the machine's /usr and its own folder, so it must load no library
from anywhere else. The bot shares nothing with this code base but hollywood_gin.proto: it runs
as its own binary against the scripted fake referee (every action goes through
``SeriesState.apply``, which raises on an illegal one), passes ``gin bot check``, and plays a
real sandboxed series whose log verifies.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.conformance import elf_interpreter
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
from tests.test_guide import section

ROOT = Path(__file__).resolve().parent.parent
BOT_DIR = ROOT / "sample_bots" / "cpp"
BINARY = BOT_DIR / "gin-cpp-bot"
SAMPLES = ROOT / "sample_bots"
SERIES_TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 300.0
RECIPE_TIMEOUT_S = 600.0
# The largest uint64 and one above 2**53: a bot that lost some of the 64 bits would echo them wrong.
BIG_IDS = (2**64 - 1, 2**53 + 1)
ELF_TYPE_OFFSET = 16
ET_EXEC = 2
"""An ELF file's e_type at byte 16: 2 for a fixed-address executable (a static link without PIE;
a dynamic one, or a static-pie, is type 3)."""

pytestmark = pytest.mark.slow  # each test needs the built binary (make cpp-bot); most run it


def binary() -> Path:
    """The built bot; a missing one fails the test (``make test`` builds it first)."""
    if not os.access(BINARY, os.X_OK):
        pytest.fail("sample_bots/cpp/gin-cpp-bot is missing: run make cpp-bot")
    return BINARY


def run_cpp_bot(environment: dict[str, str]) -> tuple[int, str, str]:
    """Run the bot until it exits; ``(exit code, stdout, stderr)``."""
    return run_bot_process([str(binary())], BOT_DIR, environment, SERIES_TIMEOUT_S)


def bot_check(folder: Path) -> subprocess.CompletedProcess[str]:
    """``gin bot check folder``, run as an author runs it."""
    gin = Path(sys.executable).parent / "gin"
    command = [str(gin)] if gin.exists() else [shutil.which("gin") or "gin"]
    return subprocess.run(
        [*command, "bot", "check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
        check=False,
    )


def test_cpp_bot_manifest_names_its_binary() -> None:
    binary()
    manifest = load_manifest(BOT_DIR)
    assert manifest.command == ("./gin-cpp-bot",)
    assert manifest.argv() == [str(BINARY)]
    assert (manifest.name, manifest.version) == ("cpp-greedy", "1.0.0")


def test_cpp_bot_is_a_static_binary() -> None:
    # No ELF interpreter means no dynamic loader and so no shared library to find in the sandbox.
    head = binary().read_bytes()[:64]
    assert head[:4] == b"\x7fELF"
    assert elf_interpreter(BINARY) == "", "gin-cpp-bot is dynamically linked: link it -static"
    assert int.from_bytes(head[ELF_TYPE_OFFSET : ELF_TYPE_OFFSET + 2], "little") == ET_EXEC


def test_cpp_bot_plays_a_whole_scripted_series(tmp_path: Path) -> None:
    binary()
    manifest = load_manifest(BOT_DIR)
    identity = (manifest.name, manifest.version)
    assert_plays_a_scripted_series(tmp_path, run_cpp_bot, identity, BIG_IDS, "cpp")


def test_cpp_bot_plays_a_sitting_of_three_series(tmp_path: Path) -> None:
    binary()  # (seats 0, 1, 0; each series must finish with every id echoed)
    assert_plays_a_scripted_sitting(tmp_path, run_cpp_bot, "cpp", series=3)


def test_cpp_bot_starts_each_series_of_a_sitting_afresh(tmp_path: Path) -> None:
    binary()
    assert_starts_each_series_afresh(tmp_path, run_cpp_bot, "cpp")


def test_cpp_bot_refuses_a_request_for_another_seat(tmp_path: Path) -> None:
    binary()
    assert_refuses_a_request_for_another_seat(tmp_path, run_cpp_bot)


def test_cpp_bot_fails_loudly_without_the_environment() -> None:
    code, out, err = run_cpp_bot({})
    assert code == 1
    assert out == ""
    assert "GIN_REFEREE and GIN_TOKEN must be set" in err


def test_cpp_bot_passes_bot_check() -> None:
    binary()
    result = bot_check(BOT_DIR)
    assert result.returncode == 0, f"gin bot check failed:\n{result.stdout}\n{result.stderr}"


def test_cpp_bot_plays_a_real_sandboxed_series(tmp_path: Path) -> None:
    binary()
    with Sandbox(root_dir=tmp_path / "jails") as sandbox:
        seats = (
            remote_seat(load_manifest(BOT_DIR), sandbox.prepare, "cpp-0"),
            remote_seat(load_manifest(SAMPLES / "greedy"), sandbox.prepare, "greedy-1"),
        )
        log = tmp_path / "series.jsonl"
        result = trio.run(play_folders, seats, MatchConfig("cpp-real", 4243), log)
    assert result.faults == ()
    assert result.end == "complete"
    assert result.winner is not None
    assert [identity.name for identity in result.identities if identity] == ["cpp-greedy", "greedy"]
    report = verify_log(log)
    assert report.ok, report.summary()
    assert report.hands == result.hands


def test_the_guides_cpp_recipe_builds_a_static_bot_that_passes_check(tmp_path: Path) -> None:
    # The guide's commands, as written, in a bot folder outside the checkout (make cpp-bot has
    # installed the Debian packages they need).
    binary()
    [recipe] = re.findall(r"```sh\n(.*?)```", section("### The worked example: C++"), re.S)
    assert "PATH/TO/protocol" in recipe
    folder = tmp_path / "my-bot"
    folder.mkdir()
    for name in ("main.cc", "bot.toml"):
        shutil.copy(BOT_DIR / name, folder / name)
    script = recipe.replace("PATH/TO/protocol", str(ROOT / "protocol"))
    built = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=RECIPE_TIMEOUT_S,
        check=False,
    )
    assert built.returncode == 0, f"the guide's C++ recipe failed:\n{built.stderr}"
    assert elf_interpreter(folder / "gin-cpp-bot") == "", "the guide's recipe links dynamically"
    assert (folder / ".ginignore").read_text() == "build/\n"
    result = bot_check(folder)
    assert result.returncode == 0, f"gin bot check failed:\n{result.stdout}\n{result.stderr}"
