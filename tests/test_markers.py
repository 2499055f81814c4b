"""The fast inner loop stays honest: ``make check`` is ``make test`` without the tests marked slow,
some tests are marked slow, and ``make test`` (what CI runs) selects no subset at all."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLLECT = (sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider")
COLLECT_TIMEOUT_S = 300


def recipe(target: str) -> list[str]:
    """The commands of a Makefile target: the tab-indented lines under ``target:``."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    commands: list[str] = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        commands.append(line.strip())
    return commands


def pytest_arguments(target: str) -> list[str]:
    """What a target passes to pytest (after ``$(BIN)/python -m pytest``)."""
    [command] = [command for command in recipe(target) if " -m pytest" in command]
    return shlex.split(command)[3:]


def marks_slow(path: Path) -> bool:
    """Whether a test module names ``pytest.mark.slow`` (a decorator, ``pytestmark``, a param)."""
    return any(
        isinstance(node, ast.Attribute) and ast.unparse(node) == "pytest.mark.slow"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
    )


def test_make_check_is_make_test_without_the_slow_tests() -> None:
    assert pytest_arguments("test") == []
    assert pytest_arguments("check") == ["-m", "not slow"]
    lint = [command for command in recipe("test") if " -m pytest" not in command]
    assert lint == [command for command in recipe("check") if " -m pytest" not in command]
    assert "$(BIN)/mypy" in lint


def test_the_end_to_end_tests_are_marked_slow() -> None:
    marked = {path.name for path in (ROOT / "tests").glob("test_*.py") if marks_slow(path)}
    # The wheel install, the Dask cluster, real leagues, real sandboxed bots, Chromium.
    end_to_end = {"test_install", "test_cluster", "test_league", "test_hostile", "test_replay_html"}
    assert {f"{name}.py" for name in end_to_end} <= marked


@pytest.mark.slow
def test_make_checks_selection_leaves_out_the_slow_tests() -> None:
    """Collected as ``make check`` selects: the slow tests (the install's among them) are left
    out, the rest (these among them) are in."""
    done = subprocess.run(
        [*COLLECT, *pytest_arguments("check")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=COLLECT_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", done.stdout)
    assert summary is not None, done.stdout
    selected, total, deselected = map(int, summary.groups())
    assert 0 < deselected < total
    assert selected + deselected == total
    collected = done.stdout.splitlines()
    assert not [line for line in collected if line.startswith("tests/test_install.py::")]
    assert "tests/test_markers.py::test_make_check_is_make_test_without_the_slow_tests" in collected
