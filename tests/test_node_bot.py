"""The Node.js sample bot (sample_bots/node) plays a whole series over the real gRPC contract.

The bot runs as a real ``node`` subprocess against the scripted fake referee, so the only thing
it shares with this code base is hollywood_gin.proto: the contract is language-neutral. Every
action it sends goes through ``SeriesState.apply``, which raises on an illegal one.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol import hollywood_gin_pb2 as pb
from referee.rules import SeriesState
from tests.fake_referee import (
    FakeReferee,
    assert_plays_a_scripted_series,
    assert_plays_a_scripted_sitting,
    request,
    run_bot_process,
    welcome,
)
from tests.sitting_checks import (
    assert_refuses_a_request_for_another_seat,
    assert_starts_each_series_afresh,
)

ROOT = Path(__file__).resolve().parent.parent
BOT_DIR = ROOT / "sample_bots" / "node"
SERIES_TIMEOUT_S = 120.0
# Above 2**53, so a bot that read request_id as a JavaScript number would echo it wrongly.
BIG_IDS = (2**53 + 1, 2**64 - 1)


def node_or_skip() -> str:
    """The path of ``node``, or skip the test when it is not installed (CI has it)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed: the Node.js sample bot needs Node 20+ (make node-bot)")
    if not (BOT_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail("sample_bots/node/node_modules is missing: run `make node-bot` (npm ci)")
    return node


def run_node_bot(node: str, environment: dict[str, str]) -> tuple[int, str, str]:
    """Run the bot until it exits; ``(exit code, stdout, stderr)``."""
    env = {**environment, "PATH": os.environ.get("PATH", "")}
    return run_bot_process([node, "bot.js"], BOT_DIR, env, SERIES_TIMEOUT_S)


@pytest.mark.slow
def test_node_bot_plays_a_whole_series(tmp_path: Path) -> None:
    node = node_or_skip()
    manifest = tomllib.loads((BOT_DIR / "bot.toml").read_text())
    assert manifest["command"] == ["node", "bot.js"]
    assert manifest["name"] == "node-greedy"
    assert_plays_a_scripted_series(
        tmp_path,
        lambda environment: run_node_bot(node, environment),
        (manifest["name"], manifest["version"]),
        BIG_IDS,
        "node",
    )


@pytest.mark.slow
def test_node_bot_plays_a_sitting_of_three_series(tmp_path: Path) -> None:
    node = node_or_skip()  # (seats 0, 1, 0; each series must finish with every id echoed)
    assert_plays_a_scripted_sitting(
        tmp_path, lambda environment: run_node_bot(node, environment), "node", series=3
    )


@pytest.mark.slow
def test_node_bot_starts_each_series_of_a_sitting_afresh(tmp_path: Path) -> None:
    node = node_or_skip()
    assert_starts_each_series_afresh(
        tmp_path, lambda environment: run_node_bot(node, environment), "node"
    )


@pytest.mark.slow
def test_node_bot_refuses_a_request_for_another_seat(tmp_path: Path) -> None:
    node = node_or_skip()
    assert_refuses_a_request_for_another_seat(
        tmp_path, lambda environment: run_node_bot(node, environment)
    )


@pytest.mark.slow
def test_node_bot_errors_go_to_stderr_with_the_request(tmp_path: Path) -> None:
    node = node_or_skip()

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        message = request(SeriesState(1), 42)
        message.request.observation.hand.append("Zz")
        yield message
        next(incoming, None)

    with FakeReferee(tmp_path, script) as referee:
        code, out, err = run_node_bot(node, {"GIN_REFEREE": referee.address, "GIN_TOKEN": "t"})
    assert code == 1
    assert out == ""
    assert "error on request 42" in err
    assert 'not a card: "Zz"' in err


@pytest.mark.slow
def test_node_bot_fails_loudly_without_the_environment() -> None:
    node = node_or_skip()
    code, out, err = run_node_bot(node, {})
    assert code == 1
    assert out == ""
    assert "GIN_REFEREE and GIN_TOKEN must be set" in err


def test_node_bot_proto_is_the_contract() -> None:
    copy = (BOT_DIR / "hollywood_gin.proto").read_bytes()
    assert copy == (ROOT / "protocol" / "hollywood_gin.proto").read_bytes()
