"""``gin arena`` from the organiser's shell: authors and tokens, entering and retiring bots, and
every bad input answered in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from tests.test_cli_guards import one_line_error
from tournaments.arena.accounts import author_of
from tournaments.arena.store import ArenaStore, EntrantState
from tournaments.cli.app import app
from tournaments.registry import Arena, submit

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(place))
    monkeypatch.setenv("COLUMNS", "200")
    return place


def gin(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_in_a_terminal_the_token_comes_after_its_caption(home: Path) -> None:
    """Both on one terminal: the caption first (the token was printed above it), then the
    token alone on its line."""
    primary, secondary = os.openpty()
    try:
        ran = subprocess.run(
            [sys.executable, "-m", "tournaments.cli.entry", "arena", "author", "add", "tty"],
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=secondary,
            env={**os.environ, "GIN_HOME": str(home), "TERM": "dumb"},
            timeout=60,
            check=False,
        )
        os.close(secondary)
        secondary = -1
        said = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert ran.returncode == 0
    lines = [line.strip() for line in said.decode().splitlines() if line.strip()]
    assert lines[0].startswith("author tty added; their token"), lines
    assert lines[1].startswith("gin_"), lines


def test_an_author_s_token_is_printed_once_stored_hashed_and_revocable(home: Path) -> None:
    code, out, err = gin("arena", "author", "add", "ada")
    assert code == 0, err
    token = out.strip()
    assert "shown once" in err
    store = ArenaStore(Arena(home).store_path)
    assert author_of(store, token) == "ada"
    assert token not in (home / "arena.sqlite").read_bytes().decode("latin-1")
    code, out, _ = gin("arena", "author", "token", "ada")
    second = out.strip()
    assert code == 0
    assert author_of(store, second) == "ada"
    code, out, _ = gin("arena", "author", "revoke", "ada", "--token", token)
    assert code == 0
    assert "revoked 1" in out
    assert author_of(store, token) is None
    assert author_of(store, second) == "ada"  # the other one stays
    code, out, _ = gin("arena", "author", "list")
    assert "ada" in out
    assert "1 live token" in out
    code, _, _ = gin("arena", "author", "revoke", "ada")
    assert author_of(store, second) is None


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("arena", "author", "add", "Ada Lovelace"), "bad author name"),
        (("arena", "author", "token", "nobody"), "no author 'nobody'"),
        (("arena", "author", "revoke", "nobody"), "no author 'nobody'"),
        (("arena", "enter", "nobody"), "no submitted bot 'nobody'"),
        (("arena", "enter", "greedy@"), "give NAME or NAME@VERSION"),
        (("arena", "retire", "nobody@1"), "no bot 'nobody@1' in the ladder"),
        (("arena", "serve", "--port", "70000"), "--port must be 0-65535"),
        (("arena", "serve", "-j", "0"), "--jobs must be at least 1"),
    ],
)
def test_bad_input_is_one_line(home: Path, args: tuple[str, ...], said: str) -> None:
    code, out, err = gin(*args)
    assert code == 2
    assert said in one_line_error(out + err)


def test_a_second_author_of_the_same_name_is_refused(home: Path) -> None:
    assert gin("arena", "author", "add", "ada")[0] == 0
    code, out, err = gin("arena", "author", "add", "ada")
    assert code == 2
    assert "exists" in one_line_error(out + err)


def test_a_bot_in_the_ladder_is_retired_before_it_is_removed(home: Path) -> None:
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    trio.run(submit, arena, store, SAMPLES / "greedy", None)
    code, out, _ = gin("arena", "enter", "greedy")
    assert code == 0
    assert "greedy@1.0.0 entered the ladder" in out
    code, out, err = gin("bot", "remove", "greedy@1.0.0")
    assert code == 2
    assert "gin arena retire greedy@1.0.0" in one_line_error(out + err)
    assert gin("arena", "retire", "greedy@1.0.0")[0] == 0
    entrant = store.entrant("greedy@1.0.0")
    assert entrant is not None
    assert entrant.state is EntrantState.RETIRED
    code, out, err = gin("bot", "remove", "greedy@1.0.0")
    assert code == 0, out + err


def test_a_submission_to_a_bad_address_is_one_line(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIN_ARENA_TOKEN", "gin_" + "x" * 43)
    for url in ("http://[::1", "ftp://example.org", "http://127.0.0.1:notaport"):
        code, out, err = gin("bot", "submit", str(SAMPLES / "greedy"), "--arena", url)
        assert code == 2, out + err
        assert "not an arena address" in one_line_error(out + err)


def test_a_banned_name_leaves_the_ladder_and_comes_back_only_when_unbanned(home: Path) -> None:
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    trio.run(submit, arena, store, SAMPLES / "greedy", None)
    assert gin("arena", "enter", "greedy")[0] == 0
    code, out, _ = gin("arena", "ban", "greedy", "--reason", "copied code")
    assert code == 0
    assert "greedy@1.0.0" in out
    assert store.banned("greedy") == "copied code"
    entrant = store.entrant("greedy@1.0.0")
    assert entrant is not None
    assert entrant.state is EntrantState.RETIRED
    assert "banned: copied code" in entrant.reason
    code, out, err = gin("arena", "ban", "nobody")
    assert code == 2
    assert "no bot named 'nobody'" in one_line_error(out + err)
    assert gin("arena", "unban", "greedy")[0] == 0
    assert store.banned("greedy") is None
    code, out, err = gin("arena", "unban", "greedy")
    assert code == 2
    assert "is not banned" in one_line_error(out + err)
