"""Real series over the whole stack: sandboxed bot processes, the referee, the log, the verifier."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.replay import verify_log
from referee.sandbox import Sandbox

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


@pytest.mark.parametrize(
    ("first", "second"),
    [pytest.param("node", "greedy", marks=pytest.mark.slow), ("greedy", "random")],
)
def test_real_series_completes_and_its_log_verifies(
    first: str, second: str, tmp_path: Path
) -> None:
    if first == "node" and shutil.which("node") is None:
        pytest.skip("node not installed: the Node.js sample bot cannot run (make node-bot)")
    if first == "node" and not (SAMPLES / "node" / "node_modules").is_dir():
        pytest.fail("sample_bots/node/node_modules is missing: run make node-bot")
    with Sandbox(root_dir=tmp_path / "jails") as sandbox:
        seats = (
            remote_seat(load_manifest(SAMPLES / first), sandbox.prepare, f"{first}-0"),
            remote_seat(load_manifest(SAMPLES / second), sandbox.prepare, f"{second}-1"),
        )
        log = tmp_path / "series.jsonl"
        result = trio.run(play_folders, seats, MatchConfig("real", 4242), log)
    assert result.faults == ()
    assert result.end == "complete"
    assert result.winner is not None
    assert [identity.name for identity in result.identities if identity] == [
        load_manifest(SAMPLES / name).name for name in (first, second)
    ]
    report = verify_log(log)
    assert report.ok, report.summary()
    assert report.hands == result.hands
