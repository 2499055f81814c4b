"""A damaged or misplaced store or arena home is a one-line error naming the file and what to do;
a store moved with its home keeps finding its logs."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner, Result

from referee.local import code_hash
from tests.test_league import golden_league, old_summary, store_old_row
from tournaments.cli.app import app
from tournaments.registry import Arena, submit
from tournaments.store import SCHEMA_VERSION, ResultRow, Store


def arena_with_golden(home: Path) -> tuple[Store, list[str]]:
    """An arena home whose league ``t`` has the golden match's result, its log where a league run
    keeps it (``logs/t/<match>.jsonl``) and its path stored absolute, as the store did before."""
    store, ids, log = golden_league(home)
    store.close()
    (home / "s.sqlite").rename(Arena(home).store_path)
    kept = Arena(home).logs_dir("t") / f"{ids[0]}.jsonl"
    kept.parent.mkdir(parents=True)
    log.rename(kept)
    store = Arena(home).open_store()
    store_old_row(store, ids[0], old_summary(kept), kept.absolute())
    return store, ids


def gin(monkeypatch: pytest.MonkeyPatch, home: Path, *args: str) -> Result:
    monkeypatch.setenv("GIN_HOME", str(home))
    return CliRunner().invoke(app, list(args))


def assert_refused(result: Result, path: Path, *words: str) -> str:
    """Exit 2 with a one-line ``error:`` message naming ``path``; no traceback."""
    said = result.output.strip()
    assert (result.exit_code, said[:7]) == (2, "error: "), result.output
    assert "\n" not in said
    assert str(path) in said
    assert isinstance(result.exception, SystemExit), result.exception
    for word in words:
        assert word in said
    return said


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """The home of a store with a league and a result, closed: a test damages its file."""
    home = tmp_path / "home"
    home.mkdir()
    store, _ = arena_with_golden(home)
    store.close()
    return home


def test_a_truncated_store(damaged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Arena(damaged).store_path
    store.write_bytes(store.read_bytes()[: store.stat().st_size // 2])
    said = assert_refused(gin(monkeypatch, damaged, "league", "status", "t"), store, "damaged")
    assert "restore it from a backup" in said


def page_of(store: Path, table: str) -> tuple[int, int]:
    """Where the first page of a table is in the store's file (start, end)."""
    with contextlib.closing(sqlite3.connect(store)) as db:
        (size,) = db.execute("PRAGMA page_size").fetchone()
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    return (root - 1) * size, root * size


@pytest.mark.parametrize("where", ["everywhere", "meta", "results"])
def test_random_bytes_in_the_store(
    damaged: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    store = Arena(damaged).store_path
    data = bytearray(store.read_bytes())
    start, end = (0, len(data)) if where == "everywhere" else page_of(store, where)
    data[start:end] = random.Random(17).randbytes(end - start)
    store.write_bytes(bytes(data))
    # status reads no result: only the check on opening finds a damaged results page
    said = assert_refused(gin(monkeypatch, damaged, "league", "status", "t"), store, "damaged")
    assert "move it aside" in said


def test_a_folder_in_place_of_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Arena(tmp_path).store_path
    store.mkdir()
    said = assert_refused(gin(monkeypatch, tmp_path, "bot", "list"), store, "is a folder")
    assert "move it aside" in said


def test_an_arena_home_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    said = assert_refused(gin(monkeypatch, home, "league", "status", "t"), home, "is a file")
    assert "GIN_HOME" in said
    below = home / "arena"  # a home whose folder cannot be made
    assert_refused(gin(monkeypatch, below, "bot", "list"), below, "cannot be created")


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` read-only while inside: by its mode, or for root (whom modes do not stop) by the
    immutable attribute."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", folder], check=False).returncode:
        pytest.skip("running as root, and chattr +i (root's only read-only folder here) failed")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", folder], check=True)


def test_a_read_only_home(damaged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for home in (damaged, empty):  # a store there to read, and none yet
        with read_only(home):
            result = gin(monkeypatch, home, "league", "status", "t")
        said = assert_refused(result, Arena(home).store_path, "cannot be opened or written")
        assert f"make it and {home} readable and writable" in said


def test_a_store_of_a_newer_schema_is_refused(
    damaged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(Arena(damaged).store_path)
    store.db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    store.close()
    said = assert_refused(
        gin(monkeypatch, damaged, "league", "standings", "t"), Arena(damaged).store_path
    )
    assert (
        f"written by a newer version of the arena (schema {SCHEMA_VERSION + 1}, this one reads "
        f"up to {SCHEMA_VERSION}): upgrade"
    ) in said


@pytest.mark.parametrize(
    "config", [b'{"name": "t", "bots": ', b'{"name": "T!"}', b"[]", b'{"resolved": 5}', b"\x80\xff"]
)
def test_a_stored_league_that_no_longer_parses(
    damaged: Path, monkeypatch: pytest.MonkeyPatch, config: bytes
) -> None:
    store = Store(Arena(damaged).store_path)
    store.db.execute("UPDATE leagues SET config = CAST(? AS TEXT) WHERE name = 't'", (config,))
    store.close()
    said = assert_refused(
        gin(monkeypatch, damaged, "league", "standings", "t"),
        Arena(damaged).store_path,
        "league 't'",
        "restore the store from a backup",
    )
    assert "cannot be read" in said


def test_a_moved_home_keeps_its_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store, ids = arena_with_golden(home)  # its result's log stored absolute, as before
    store.close()
    moved = tmp_path / "elsewhere" / "arena"
    moved.parent.mkdir()
    home.rename(moved)
    log = Arena(moved).logs_dir("t") / f"{ids[0]}.jsonl"
    store = Arena(moved).open_store()
    ((result,), (logged,)) = store.results("t"), store.logged_results("t")
    assert Path(result.log_path) == Path(logged.log_path) == log
    assert log.is_file()
    store.close()
    verify = gin(monkeypatch, moved, "league", "verify", "t")
    last = verify.output.strip().splitlines()[-1]  # after any notes on the bots' code
    assert (verify.exit_code, last) == (
        0,
        "1 of 1 match logs verified; 2 scheduled: 1 pending, 1 done",
    )


def test_a_copied_home_reads_its_own_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store, ids = arena_with_golden(home)  # its result's log stored absolute, as before
    store.close()
    copy = tmp_path / "copy"
    shutil.copytree(home, copy)  # a backup restored beside the original, say
    store = Arena(copy).open_store()
    (result,) = store.results("t")
    assert Path(result.log_path) == Arena(copy).logs_dir("t") / f"{ids[0]}.jsonl"
    store.close()
    verify = gin(monkeypatch, copy, "league", "verify", "t")
    last = verify.output.strip().splitlines()[-1]  # no log of the copy is an orphan
    assert (verify.exit_code, last) == (
        0,
        "1 of 1 match logs verified; 2 scheduled: 1 pending, 1 done",
    )


def test_a_log_in_the_home_is_stored_relative_to_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store, ids = arena_with_golden(home)
    log = Arena(home).logs_dir("t") / f"{ids[1]}.jsonl"
    shutil.copyfile(Arena(home).logs_dir("t") / f"{ids[0]}.jsonl", log)
    summary = {**old_summary(log), "log": str(log)}
    assert store.record_result(
        ResultRow.from_stored(ids[1], "t", 1, "complete", "r", summary, str(log))
    )
    stored = store.db.execute("SELECT log_path FROM results WHERE match_id = ?", (ids[1],))
    assert stored.fetchone()[0] == f"logs/t/{ids[1]}.jsonl"
    found = store.result(ids[1])
    assert found is not None
    assert found.log_path == str(log)  # read back as the path it was given
    store.close()
    moved = tmp_path / "moved"
    home.rename(moved)
    store = Arena(moved).open_store()
    logs = [Path(result.log_path) for result in store.results("t")]
    assert logs == [Arena(moved).logs_dir("t") / f"{match_id}.jsonl" for match_id in ids]
    assert all(log.is_file() for log in logs)
    store.close()


@pytest.mark.parametrize(
    ("table", "column", "args"),
    [("bots", "author", ("bot", "list")), ("results", "summary", ("league", "standings", "t"))],
)
def test_text_that_is_not_utf8_in_a_row_is_one_line(
    damaged: Path, table: str, column: str, args: tuple[str, ...]
) -> None:
    """Damage found only when a row is read, long after the store was opened, from the real
    ``gin`` entry point: one line, whichever command met it."""
    with contextlib.closing(sqlite3.connect(damaged / "arena.sqlite")) as db:
        if table == "bots":
            db.execute("INSERT INTO bots VALUES ('x', '1', 'h', '/x', '', '', 0, 0)")
        db.execute(f"UPDATE {table} SET {column} = CAST(x'ff41' AS TEXT)")
        db.commit()
    run = subprocess.run(
        [sys.executable, "-m", "tournaments.cli.entry", *args],
        env={**os.environ, "GIN_HOME": str(damaged), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    said = (run.stdout + run.stderr).strip()
    assert run.returncode == 2, said
    assert "\n" not in said
    assert said.startswith("error: the store's text cannot be read (b'\\xffA' is not UTF-8); ")
    assert said.endswith("restore the store from a backup")


def test_a_moved_home_keeps_its_bots(tmp_path: Path) -> None:
    """A bot's copy is kept relative to the home, so pending matches still find it after the
    home moves; a row an older arena wrote with an absolute path is found in the new home."""
    old_home = tmp_path / "old"
    arena = Arena(old_home)
    store = arena.open_store()
    samples = Path(__file__).resolve().parent.parent / "sample_bots"
    for name in ("random", "greedy"):
        trio.run(submit, arena, store, samples / name, None)
    kept = store.bot("greedy")
    assert kept is not None
    with contextlib.closing(sqlite3.connect(arena.store_path)) as db:
        db.execute("UPDATE bots SET path = ? WHERE name = 'greedy'", (str(kept.path),))
        db.commit()  # as an older arena kept it: absolute
    store.close()
    new_home = tmp_path / "new"
    old_home.rename(new_home)
    moved = Arena(new_home).open_store()
    for name in ("random", "greedy"):
        row = moved.bot(name)
        assert row is not None
        assert row.path.is_dir()
        assert row.path.is_relative_to(new_home)
        assert code_hash(row.path) == row.hash
