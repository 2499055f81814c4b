"""Bytecode caches that hold inside the sandbox: bots import the project's packages read-only,
with PYTHONDONTWRITEBYTECODE, so the referee writes the caches they need before they start."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.sandbox._mounts import compile_bytecode, project_bytecode

ROOT = Path(__file__).resolve().parent.parent


def cache_of(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_missing_and_stale_caches_are_written_and_fresh_ones_left(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("A = 1\n")
    assert compile_bytecode([package]) == 2
    assert cache_of(package / "a.py").is_file()
    assert compile_bytecode([package]) == 0  # fresh: nothing to do
    (package / "a.py").write_text("A = 22\n")  # another size
    os.utime(package / "a.py", (1, 1))  # and an mtime in the past: a stale cache, not a newer one
    assert compile_bytecode([package]) == 1
    (package / "broken.py").write_text("def (:\n")  # not Python: left for the bot to report
    assert compile_bytecode([package]) == 0


def test_a_written_cache_is_the_one_python_uses_without_writing(tmp_path: Path) -> None:
    """Imported under PYTHONDONTWRITEBYTECODE from a read-only view, the module comes from the
    cache: proved by a cache whose code differs from the source's (same mtime and size)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("A = 1\n")
    compile_bytecode([package])
    stat = (package / "a.py").stat()
    (package / "a.py").write_text("A = 2\n")  # same size
    os.utime(package / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tmp_path)}
    shown = subprocess.run(
        [sys.executable, "-c", "import pkg.a; print(pkg.a.A)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "1"  # the cache's code: import used it


def test_the_sandbox_writes_the_caches_of_the_sdk_and_the_rules() -> None:
    sdk = ROOT / "protocol" / "sdk.py"
    rules = ROOT / "referee" / "rules" / "melds.py"
    for source in (sdk, rules):
        cache_of(source).unlink(missing_ok=True)
    assert project_bytecode.__wrapped__() >= 2
    assert cache_of(sdk).is_file()
    assert cache_of(rules).is_file()


def test_a_folder_that_cannot_be_written_is_not_compiled_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only install costs each process a look, not a compile of every file."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("A = 1\n")

    def refuse(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("compiled where nothing can be written")

    monkeypatch.setattr("referee.sandbox._mounts.os.access", lambda _path, _mode: False)
    monkeypatch.setattr("referee.sandbox._mounts.py_compile.compile", refuse)
    assert compile_bytecode([package]) == 0
