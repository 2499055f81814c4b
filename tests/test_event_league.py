"""A Swiss and a knockout league played for real: the sample bots as sandboxed processes,
through ``gin league create|run|status|standings|verify`` (issue 33)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tournaments.cli.app import app

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


def gin(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def league_file(folder: Path, text: str) -> str:
    path = folder / "event.toml"
    path.write_text(text)
    return str(path)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "120")
    twin = tmp_path / "greedy-twin"
    shutil.copytree(SAMPLES / "greedy", twin, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = twin / "bot.toml"
    manifest.write_text(manifest.read_text().replace('"greedy"', '"greedy-twin"'))
    for folder in (SAMPLES / "strong", SAMPLES / "greedy", SAMPLES / "random", twin):
        gin("bot", "submit", str(folder))
    return tmp_path


@pytest.mark.slow
def test_a_swiss_of_the_sample_bots_is_played_and_verified(home: Path) -> None:
    text = (
        'name = "club"\nseed = 4\nbots = ["strong", "greedy", "greedy-twin", "random"]\n'
        'format = "swiss"\nrounds = 2\nseries_per_pairing = 2\n'
    )
    gin("league", "create", league_file(home, text))
    output = gin("league", "run", "club", "-j", "2")
    assert "Swiss: club (by score, then Buchholz, then seed)" in output
    status = json.loads(gin("league", "status", "club", "--json"))
    event = status["event"]
    assert event["finished"] is True
    assert [len(r["ties"]) for r in event["rounds"]] == [2, 2]
    first = event["rounds"][0]["ties"]
    assert [(t["first"], t["second"]) for t in first] == [
        ("strong@1.0.0", "greedy@1.0.0"),
        ("greedy-twin@1.0.0", "random@1.0.0"),
    ]
    met = {frozenset((t["first"], t["second"])) for r in event["rounds"] for t in r["ties"]}
    assert len(met) == 4  # no repeat
    assert status["counts"]["done"] == 8
    standings = json.loads(gin("league", "standings", "club", "--format", "json"))
    lines = standings["event"]["standings"]
    assert sum(line["score"] for line in lines) == 4.0  # two ties a round, a point each
    assert all(line["buchholz"] is not None and line["rating"] is not None for line in lines)
    verified = json.loads(gin("league", "verify", "club", "--json"))
    assert verified["ok"] is True
    assert verified["verified"] == 8
    assert "round 2 of 2 (played)" in gin("league", "status", "club")


@pytest.mark.slow
def test_a_knockout_of_the_sample_bots_is_played_and_verified(home: Path) -> None:
    text = (
        'name = "cup"\nseed = 9\nbots = ["strong", "greedy", "random"]\n'
        'format = "knockout"\nseries_per_pairing = 2\n'
    )
    gin("league", "create", league_file(home, text))
    gin("league", "run", "cup", "-j", "2")
    event = json.loads(gin("league", "status", "cup", "--json"))["event"]
    semi, final = event["rounds"]
    assert semi["ties"][0] == {"first": "strong@1.0.0", "second": None, "state": "bye"}
    assert (semi["ties"][1]["first"], semi["ties"][1]["second"]) == (
        "greedy@1.0.0",
        "random@1.0.0",
    )
    (decider,) = final["ties"]
    assert decider["first"] == "strong@1.0.0"
    assert decider["second"] == semi["ties"][1]["winner"]
    standings = json.loads(gin("league", "standings", "cup", "--format", "json"))
    reached = [line["reached"] for line in standings["event"]["standings"]]
    assert reached == ["winner", "final", "semi-final"]
    assert json.loads(gin("league", "verify", "cup", "--json"))["ok"] is True
    table = gin("league", "standings", "cup")
    assert "Knockout: cup (by stage reached, then seed)" in table


def _results(home: Path) -> int:
    with sqlite3.connect(home / "arena.sqlite", timeout=30) as db:
        return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def _rounds(home: Path) -> list[str]:
    with sqlite3.connect(home / "arena.sqlite", timeout=30) as db:
        rows = db.execute("SELECT pairing FROM event_rounds ORDER BY round").fetchall()
        return [str(row[0]) for row in rows]


@pytest.mark.slow
def test_a_swiss_killed_mid_round_resumes_its_rounds_as_stored(home: Path) -> None:
    """``gin league run`` killed (SIGKILL) in round 2: the resumed run plays round 2 as it
    was stored, pairs round 3, and the whole verifies."""
    text = (
        'name = "killed"\nseed = 3\nbots = ["greedy", "greedy-twin", "random", "strong"]\n'
        'format = "swiss"\nrounds = 3\nseries_per_pairing = 2\n'
    )
    gin("league", "create", league_file(home, text))
    gin_home = home / "home"
    env = {**os.environ, "COLUMNS": "100"}
    runner = subprocess.Popen(
        [sys.executable, "-m", "tournaments.cli.entry", "league", "run", "killed", "-j", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while _results(gin_home) < 5:  # round 1 is 4 series: this is in round 2
            assert time.monotonic() < deadline, "round 2 did not start within 180 s"
            time.sleep(0.2)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    before = _rounds(gin_home)
    assert len(before) == 2
    assert _results(gin_home) < 8
    gin("league", "run", "killed", "-j", "2")
    after = _rounds(gin_home)
    assert after[:2] == before
    assert len(after) == 3
    verified = json.loads(gin("league", "verify", "killed", "--json"))
    assert verified["ok"] is True, verified
    assert verified["verified"] == 12
