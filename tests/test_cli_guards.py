"""Commands that must refuse, in one line, what would lose data or leave a league stuck
(issue 17): removing a bot a league still needs, a demo home that is not one, a move time out of
bounds."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing
import typer
from rich.console import Console
from typer.testing import CliRunner

from referee.control import duration_ms
from tournaments.cli import render
from tournaments.cli.app import app
from tournaments.cli.common import seconds
from tournaments.cli.live import PlainProgress
from tournaments.executors.fake import FakeExecutor
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner
from tournaments.stats.standings import compute
from tournaments.store import BotRow, MatchState, Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(place))
    return place


def one_line_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def test_a_bot_a_league_still_needs_cannot_be_removed(home: Path) -> None:
    arena = Arena(home)
    store = arena.open_store()
    for name in ("random", "greedy"):
        trio.run(submit, arena, store, SAMPLES / name, None)
    create_league(store, LeagueConfig("spring", 1, ("random", "greedy")))
    result = runner.invoke(app, ["bot", "remove", "random@1.0.0"])
    assert result.exit_code == 2
    line = one_line_error(result.output)
    assert line.startswith("error: random@1.0.0 still has matches to play in league(s) spring")
    assert store.bot("random", "1.0.0") is not None
    for match in store.matches("spring"):
        store.mark(match.match_id, MatchState.DONE)
    result = runner.invoke(app, ["bot", "remove", "random@1.0.0"])
    assert result.exit_code == 0, result.output
    assert store.bot("random", "1.0.0") is None


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_the_demo_never_empties_a_home_that_is_not_one(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "precious"
    if kind == "file":
        target.write_text("keep me")
    else:
        target.mkdir()
        (target / "thesis.tex").write_text("keep me")
    result = runner.invoke(app, ["league", "demo", "--home", str(target)])
    assert result.exit_code == 2
    assert one_line_error(result.output).startswith(f"error: --home {target}")
    assert (target.read_text() if kind == "file" else (target / "thesis.tex").read_text()) == (
        "keep me"
    )


@pytest.mark.parametrize("seconds", ["0", "0.001", "601", "5ms", "11min"])
def test_a_move_time_out_of_bounds_is_one_line(tmp_path: Path, seconds: str) -> None:
    result = runner.invoke(app, ["bot", "check", str(SAMPLES / "random"), "--move-time", seconds])
    assert result.exit_code == 2
    line = one_line_error(result.output)
    assert line.endswith("must be between 0.01 and 600 seconds")


@pytest.mark.parametrize("args", [[], ["bot"], ["league"], ["sandbox"], ["-h"], ["league", "-h"]])
def test_a_command_group_alone_prints_its_help_and_exits_0(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert re.fullmatch(r"gin \d+\.\d+\.\d+\S*\n", result.output)


def test_standings_off_a_terminal_are_never_cut_to_80_columns(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In CI, cron or ``> file`` every name and column is whole: two versions of one long name
    can be told apart (they were both ``my-b…``)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    store = Arena(home).open_store()
    names = ["my-bot-with-a-rather-long-name@0.2.0", "my-bot-with-a-rather-long-name@0.3.0"]
    for index, ident in enumerate([*names, "greedy@1.0.0"]):
        name, version = ident.split("@")
        store.add_bot(BotRow(name, version, f"{index}" * 64, home / name, "", "", float(index)))
    config = LeagueConfig("long", 1, (*names, "greedy@1.0.0"), series_per_pairing=4)
    create_league(store, config)
    runner_ = LeagueRunner(Arena(home), store, config, 2, executor=FakeExecutor(2))
    trio.run(runner_.run, clock=trio.testing.MockClock(autojump_threshold=0))
    result = runner.invoke(app, ["league", "standings", "long", "--crosstable"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    for ident in names:
        assert ident in result.output
    assert max(len(line) for line in result.output.splitlines()) > 80  # its natural width


def two_bot_league(home: Path) -> Store:
    store = Arena(home).open_store()
    for index, name in enumerate(("random", "greedy")):
        store.add_bot(BotRow(name, "1.0.0", f"{index}" * 64, home / name, "", "", float(index)))
    create_league(store, LeagueConfig("spring", 1, ("random", "greedy"), series_per_pairing=4))
    return store


def test_status_tells_a_dead_runner_from_a_live_one(home: Path) -> None:
    """Rows left running by a runner that was killed are not "running" (issue 18)."""
    store = two_bot_league(home)
    for match in store.matches("spring")[:2]:
        assert store.claim(match.match_id)  # as a runner killed outright leaves them
    result = runner.invoke(app, ["league", "status", "spring"])
    assert result.exit_code == 0, result.output
    assert "the 2 running match(es) were left by a runner that stopped" in result.output
    locks = home / "locks"  # a live runner holds the league's lock (as LeagueRunner.run does)
    locks.mkdir(exist_ok=True)
    with (locks / "spring.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write(str(os.getpid()))
        held.flush()
        result = runner.invoke(app, ["league", "status", "spring"])
    assert f"runner: process {os.getpid()} is playing it" in result.output


def test_league_list(home: Path) -> None:
    assert "no leagues in" in runner.invoke(app, ["league", "list"]).output
    two_bot_league(home)
    result = runner.invoke(app, ["league", "list"])
    assert result.exit_code == 0, result.output
    [row] = [line for line in result.output.splitlines() if "spring" in line]
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells == ["spring", "round robin", "2", "0/4", "4", "0", "-"]


def test_a_league_run_off_a_terminal_prints_a_line_per_match(home: Path) -> None:
    """In CI or cron, ``gin league run`` says each result as it comes, not nothing until the
    end (issue 18)."""
    store = two_bot_league(home)
    console = Console(file=io.StringIO(), width=80)
    plain = PlainProgress(console)
    config = LeagueConfig("spring", 1, ("random", "greedy"), series_per_pairing=4)
    executor = FakeExecutor(2)  # seat 0 wins every match
    runner_ = LeagueRunner(Arena(home), store, config, 2, executor=executor, listener=plain.update)
    trio.run(runner_.run, clock=trio.testing.MockClock(autojump_threshold=0))
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 4
    assert sorted(line.split("] ")[0] for line in lines) == ["[1/4", "[2/4", "[3/4", "[4/4"]
    first, second = store.matches("spring")[:2]
    assert f"{first.match_id}: {first.seat0} beat {first.seat1}, games 3-0" in "\n".join(lines)
    assert f"{second.match_id}: {second.seat0} beat {second.seat1}, games 3-0" in "\n".join(lines)


def test_a_closed_pipe_ends_gin_silently_by_sigpipe(tmp_path: Path) -> None:
    """``gin league standings X | head`` ends as any Unix tool does when its reader has gone:
    by SIGPIPE, with nothing on stderr (it used to exit 1, or print a traceback)."""
    gin = subprocess.Popen(
        [sys.executable, "-m", "tournaments.cli.entry", "--help"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "GIN_HOME": str(tmp_path / "home")},
    )
    assert gin.stdout is not None
    assert gin.stderr is not None
    gin.stdout.close()  # the reader goes before gin writes anything
    with gin.stderr:
        said = gin.stderr.read()
    assert gin.wait(timeout=60) == -signal.SIGPIPE
    assert said == b""


def test_a_bad_choice_names_the_allowed_values_not_pydantic(home: Path) -> None:
    result = runner.invoke(app, ["league", "standings", "x", "--format", "xml"])
    assert result.exit_code == 2
    assert "'xml' is not one of table, json, csv" in result.output
    assert "Value error" not in result.output


def test_html_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    golden = Path(__file__).resolve().parent / "golden" / "format3-bank.jsonl"
    target = tmp_path / "no" / "such" / "page.html"
    result = runner.invoke(app, ["replay", str(golden), "--html", str(target)])
    assert result.exit_code == 2
    assert one_line_error(result.output) == (
        f"error: --html {target}: no folder {target.parent} (make it first)"
    )


def test_the_demo_never_empties_a_real_arena_home(home: Path) -> None:
    two_bot_league(home)  # a league named spring: not the demo's
    result = runner.invoke(app, ["league", "demo", "--home", str(home)])
    assert result.exit_code == 2
    assert "is an arena home with more than the demo (spring)" in one_line_error(result.output)
    assert Arena(home).open_store().leagues() == ["spring"]


class FailingExecutor(FakeExecutor):
    """Every attempt ends without a result, as a worker that keeps dying."""

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        await super().play(job, sent=sent)
        return WorkerFailure("the worker died")


def test_a_league_run_whose_matches_fail_exits_1(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not 0: a script or CI sees that matches failed (issue 17)."""
    two_bot_league(home)
    monkeypatch.setattr("tournaments.runner.LocalExecutor", lambda _jobs: FailingExecutor(2))
    monkeypatch.setattr("tournaments.cli.league.open_sandbox", lambda _strict: None)
    result = runner.invoke(app, ["league", "run", "spring"])
    assert result.exit_code == 1, result.output
    assert "4 match(es) failed" in result.output
    assert "gin league run spring tries them again" in result.output


def test_bot_new_says_it_made_a_folder_and_a_file_in_the_way_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bot", "new", "alpha", "--dir", str(tmp_path / "new" / "dir")])
    assert result.exit_code == 0, result.output
    assert f"made {tmp_path / 'new' / 'dir'}/ for it" in result.output
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = runner.invoke(app, ["bot", "new", "beta", "--dir", str(blocker)])
    assert result.exit_code == 2
    assert one_line_error(result.output).startswith(f"error: cannot make {blocker / 'beta'}: ")


@pytest.mark.parametrize("output", ["markdown", "html"])
def test_standings_ready_to_publish(home: Path, output: str) -> None:
    """Markdown to paste, or a self-contained HTML page (nothing loaded from elsewhere)."""
    store = two_bot_league(home)
    config = LeagueConfig("spring", 1, ("random", "greedy"), series_per_pairing=4)
    runner_ = LeagueRunner(Arena(home), store, config, 2, executor=FakeExecutor(2))
    trio.run(runner_.run, clock=trio.testing.MockClock(autojump_threshold=0))
    result = runner.invoke(app, ["league", "standings", "spring", "--format", output])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "greedy@1.0.0" in text
    assert "random@1.0.0" in text
    if output == "markdown":
        assert "### Standings: spring (4 series)" in text
        assert "| # | bot | Elo |" in text
        assert "### Pairwise" in text
    else:
        assert text.startswith("<!doctype html>")
        assert "<h2>Crosstable" in text
        assert "<script" not in text
        assert "src=" not in text
        assert "href=" not in text


def test_status_list_and_verify_speak_json(home: Path) -> None:
    store = two_bot_league(home)
    assert store.claim(store.matches("spring")[0].match_id)  # left running by a dead runner
    status = runner.invoke(app, ["league", "status", "spring", "--json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.output) == {
        "league": "spring",
        "counts": {"pending": 3, "running": 1, "done": 0, "failed": 0},
        "runner": None,
        "left_running": 1,
        "failed": [],
        "unrecorded": [],
    }
    listed = runner.invoke(app, ["league", "list", "--json"])
    assert json.loads(listed.output) == [
        {
            "league": "spring",
            "kind": "round robin",
            "bots": ["random@1.0.0", "greedy@1.0.0"],
            "done": 0,
            "total": 4,
            "pending": 4,
            "failed": 0,
            "runner": None,
        }
    ]
    verify = runner.invoke(app, ["league", "verify", "spring", "--json"])
    assert verify.exit_code == 0, verify.output
    assert json.loads(verify.output) == {
        "league": "spring",
        "ok": True,
        "results": 0,
        "verified": 0,
        "scheduled": {"pending": 3, "running": 1},
        "mismatches": [],
        "unchecked": [],
    }


@pytest.mark.slow
def test_bot_check_speaks_json(home: Path) -> None:
    result = runner.invoke(
        app, ["bot", "check", str(SAMPLES / "random"), "--decisions", "30", "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert (document["bot"], document["passed"], document["never_started"]) == (
        "random@1.0.0",
        True,
        None,
    )
    assert document["items"]
    assert all(item["verdict"] == "passed" for item in document["items"])
    assert document["decisions"] >= 30


def test_flags_show_no_bool_metavar() -> None:
    """A flag takes no value: its help shows none (it said ``<bool>``)."""
    for args in (["league", "run", "-h"], ["play", "-h"], ["league", "standings", "-h"]):
        result = runner.invoke(app, args, env={"COLUMNS": "160"})
        flags = [
            line
            for line in result.output.splitlines()
            if any(f in line for f in ("--strict", "--crosstable", "--json", "--plain"))
        ]
        assert flags, result.output
        assert not [line for line in flags if "<bool>" in line], flags


def test_a_narrow_terminal_folds_names_never_figures() -> None:
    """At 80 columns a long name is folded over lines, but a figure is never split (it showed
    ``0/98`` and then ``4``)."""
    rows = tuple(
        (str(i), f"a-bot-with-a-really-long-name-{i}@1.0.{i}", "+120", "-40..+280", "12-4-0",
         "75%", "36-12", "120", "2898/963", "2/96/5", "-", "4.6")
        for i in range(1, 4)
    )  # fmt: skip
    columns = render.standings_grid(compute("l", [])).columns
    grid = render.Grid("t", tuple(c for c in columns if c[0] != "LOS next"), rows)
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(render.rich_table(grid))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for figure in ("2898/963", "-40..+280", "12-4-0", "2/96/5"):
        assert figure in text


def test_league_list_names_a_damaged_league_instead_of_crashing(home: Path) -> None:
    store = two_bot_league(home)
    store.db.execute("UPDATE leagues SET config = '{bad' WHERE name = 'spring'")
    listed = runner.invoke(app, ["league", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    [entry] = json.loads(listed.output)
    assert entry["league"] == "spring"
    assert entry["error"].startswith("bad league definition: not JSON")
    assert runner.invoke(app, ["league", "list"]).exit_code == 0


def test_errors_go_to_stderr_so_json_stays_one_document(home: Path) -> None:
    gin = subprocess.run(
        [sys.executable, "-m", "tournaments.cli.entry", "league", "status", "nope", "--json"],
        env={**os.environ, "GIN_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert gin.returncode == 2
    assert gin.stdout == ""
    assert gin.stderr.startswith("error: no league 'nope'")


def test_an_absurdly_long_duration_is_one_line_not_an_overflow() -> None:
    with pytest.raises(ValueError, match="is longer than any time limit"):
        duration_ms("9" * 400)
    with pytest.raises(typer.BadParameter):
        seconds("9" * 400 + "ms")
