"""The README's tour runs as written, and its league file is the one in docs/.

The tour's shell block runs, line after line and stopping at the first failure, in a fresh
folder that holds the checkout's sample bots, docs and virtual environment, with no ``GIN_HOME``
(so the default ``.gin`` of that folder), as a newcomer would run it after ``make test``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def block(heading: str, language: str) -> str:
    found = re.search(rf"{re.escape(heading)}\n.*?```{language}\n(.*?)```", README, re.S)
    assert found, f"no {language} block under {heading!r} in the README"
    return found.group(1)


def test_the_league_file_shown_is_docs_league_toml() -> None:
    assert block("### A league file", "toml") == (ROOT / "docs" / "league.toml").read_text()


@pytest.mark.slow
def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    for name in ("sample_bots", "docs", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    script = "set -euo pipefail\n" + block("## A tour", "sh")
    env = {key: value for key, value in os.environ.items() if key != "GIN_HOME"}
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "verified" in done.stdout
    assert (tmp_path / "first.txt").read_text().strip()
    assert "my-bot" in done.stdout  # the standings
    assert (tmp_path / ".gin" / "arena.sqlite").is_file()


def test_the_readme_opens_with_its_title_then_the_two_commands() -> None:
    lines = README.splitlines()
    assert lines[0] == "# Hollywood Gin bot arena"
    assert lines[1:3] == ["", "```sh"]
    commands = [line.split("#")[0].strip() for line in lines[3:5]]
    assert (commands, lines[5]) == (["make demo", "make test"], "```")
