"""The command line: the demo series and the deadwood helper."""

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocol.manifest import load_manifest
from tournaments.cli.app import app

runner = CliRunner()


def test_demo_plays_a_series_and_shows_the_score_sheet() -> None:
    result = runner.invoke(app, ["demo", "--seed", "7"])
    assert result.exit_code == 0, result.output
    assert "Score sheet" in result.output
    assert "game 3" in result.output
    assert "wins the series" in result.output or "no winner" in result.output


def test_demo_is_deterministic_for_a_seed() -> None:
    first = runner.invoke(app, ["demo", "--seed", "3"]).output
    assert runner.invoke(app, ["demo", "--seed", "3"]).output == first


def test_plain_demo_has_one_game() -> None:
    result = runner.invoke(app, ["demo", "--plain", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "game 1" in result.output
    assert "game 2" not in result.output


def test_deadwood_command_shows_the_best_discard() -> None:
    result = runner.invoke(app, ["deadwood", "3c 6s 3s 7d Ac 4s 3h 9d 8d 2c 5s"])
    assert result.exit_code == 0, result.output
    assert "best discards: 3h (deadwood 0 after)" in result.output


def test_deadwood_command_reports_bad_cards_without_a_traceback() -> None:
    result = runner.invoke(app, ["deadwood", "As As"])
    assert result.exit_code == 2
    assert "appears twice" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_bot_new_writes_a_folder_whose_own_test_passes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bot", "new", "my-first_bot", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "my-first_bot"
    assert load_manifest(folder).name == "my-first_bot"
    assert "class MyFirstBot(Bot)" in (folder / "bot.py").read_text()
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout


def test_bot_new_refuses_bad_names_and_existing_folders(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bot", "new", "Bad Name", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad bot name" in result.output
    runner.invoke(app, ["bot", "new", "twice", "--dir", str(tmp_path)])
    result = runner.invoke(app, ["bot", "new", "twice", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "already exists" in result.output
