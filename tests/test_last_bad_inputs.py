"""The last bad inputs of the issue tracker: each is a one-line error with its exit code, refused
before anything is written, or done as documented; never a traceback, a hang or half a refusal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from protocol.bounded import MAX_DEPTH, MAX_DIGITS, TooComplex, loads_json, loads_toml
from protocol.manifest import ManifestError, load_manifest
from referee.replay import VerifyStatus, load_replay, verify_log
from tests.test_cli_guards import one_line_error, two_bot_league
from tournaments.arena.privacy import redact_text
from tournaments.arena.store import ArenaStore
from tournaments.audit import _summary as audit_summary
from tournaments.cli.app import app
from tournaments.executors.fake import FakeExecutor
from tournaments.league import LeagueConfig, LeagueError, StoredLeague, load_league
from tournaments.registry import Arena, submit
from tournaments.restat import _stored_hand_stats as restat_summary
from tournaments.runner import LeagueRunner
from tournaments.stats.sprt import SprtStatus
from tournaments.stats.standings import read_standings
from tournaments.store import StoreDamaged

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "format3-strikes.jsonl"
SAMPLES = ROOT / "sample_bots"
DEEP = "[" * 100_000 + "]" * 100_000
LONG = "9" * 5000
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(place))
    return place


def played_league(home: Path) -> Arena:
    """The two-bot league ``spring`` of test_cli_guards, all four matches played (fake)."""
    store = two_bot_league(home)
    config = LeagueConfig("spring", 1, ("random", "greedy"), series_per_pairing=4)
    league = LeagueRunner(Arena(home), store, config, 2, executor=FakeExecutor(2))
    trio.run(league.run, clock=trio.testing.MockClock(autojump_threshold=0))
    return Arena(home)


# --- options out of range -------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["-3", "0"])
def test_league_run_refuses_jobs_below_one(home: Path, jobs: str) -> None:
    two_bot_league(home)
    result = runner.invoke(app, ["league", "run", "spring", "-j", jobs])
    assert result.exit_code == 2, result.output
    assert f"--jobs must be at least 1, not {jobs}" in one_line_error(result.output)


def test_league_demo_refuses_jobs_below_one(tmp_path: Path) -> None:
    result = runner.invoke(app, ["league", "demo", "-j", "0", "--home", str(tmp_path / "d")])
    assert result.exit_code == 2, result.output
    assert "--jobs must be at least 1" in one_line_error(result.output)
    assert not (tmp_path / "d").exists()


def test_demo_refuses_a_negative_seed() -> None:
    result = runner.invoke(app, ["demo", "--seed", "-1"])
    assert result.exit_code == 2, result.output
    assert "--seed must be a non-negative integer, not -1" in one_line_error(result.output)


@pytest.mark.parametrize(
    ("option", "says"), [("--series=3", "must be even"), ("--seed=-1", "bad seed -1")]
)
def test_league_demo_with_a_bad_league_writes_nothing(
    tmp_path: Path, option: str, says: str
) -> None:
    demo_home = tmp_path / "D"
    result = runner.invoke(app, ["league", "demo", option, "--home", str(demo_home)])
    assert result.exit_code == 2, result.output
    assert says in one_line_error(result.output)
    assert not demo_home.exists()  # no arena.sqlite, no bot copies


@pytest.mark.parametrize("address", ["not a url", "tcp://host", "tcp://host:99999", "ftp://h:1"])
@pytest.mark.parametrize("command", [["league", "run", "spring"], ["arena", "serve"]])
def test_a_scheduler_that_is_no_address_is_one_line(
    home: Path, address: str, command: list[str]
) -> None:
    """Refused before Dask sees it (its client raised a ValueError, then its destructor
    waited 40 s), and before the store is opened."""
    args = [*command, "--executor", "dask", "--scheduler", address]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "give the Dask scheduler's address as tcp://HOST:PORT" in one_line_error(result.output)
    assert not home.exists()


# --- files that are not files ----------------------------------------------------------------


def test_a_fifo_as_league_file_is_refused_without_waiting(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "l.toml"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "tournaments.cli.entry", "league", "create", str(fifo)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "is not a regular file" in one_line_error(done.stderr)


# --- half-done refusals and silent ones ------------------------------------------------------


def test_arena_enter_with_one_unknown_bot_enters_none(home: Path) -> None:
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    trio.run(submit, arena, store, SAMPLES / "greedy", None)
    result = runner.invoke(app, ["arena", "enter", "greedy", "nosuch"])
    assert result.exit_code == 2, result.output
    assert "no bot entered" in one_line_error(result.output)
    assert ArenaStore(arena.store_path).entrants() == []


def test_replay_refuses_a_hand_the_log_does_not_have(tmp_path: Path) -> None:
    hands = len(load_replay(GOLDEN).hand_starts())
    for mode in (["--print"], ["--html", str(tmp_path / "page.html")]):
        result = runner.invoke(app, ["replay", str(GOLDEN), "--hand", "999", *mode])
        assert result.exit_code == 2, result.output
        assert f"--hand 999: the log has hands 1 to {hands}" in one_line_error(result.output)
    assert not (tmp_path / "page.html").exists()


def test_replay_print_starts_at_the_hand_asked(tmp_path: Path) -> None:
    whole = runner.invoke(app, ["replay", str(GOLDEN), "--print"]).output
    later = runner.invoke(app, ["replay", str(GOLDEN), "--print", "--hand", "2"]).output
    assert next(line for line in whole.splitlines() if line.startswith("hand ")).startswith(
        "hand 1"
    )
    first = next(line for line in later.splitlines() if line.startswith("hand "))
    assert first.startswith("hand 2"), later[:500]
    assert len(later) < len(whole)


def test_status_warns_when_a_done_match_has_no_result(home: Path) -> None:
    arena = played_league(home)
    store = ArenaStore(arena.store_path)
    gone = store.matches("spring")[1].match_id
    store.db.execute("DELETE FROM results WHERE match_id = ?", (gone,))
    store.db.commit()
    result = runner.invoke(app, ["league", "status", "spring"])
    assert result.exit_code == 0, result.output
    assert "done: 4" in result.output
    said = " ".join(result.output.split())
    assert (
        f"1 match has no result in the store though it is marked done or had one recorded ({gone})"
        in said
    )
    assert "the standings leave it out (4 marked done)" in said
    assert read_standings(store, "spring").series == 3
    document = runner.invoke(app, ["league", "status", "spring", "--json"]).stdout
    assert json.loads(document)["unrecorded"] == [gone]


def test_status_says_nothing_more_when_every_done_match_has_its_result(home: Path) -> None:
    played_league(home)
    result = runner.invoke(app, ["league", "status", "spring"])
    assert "warning" not in result.output
    document = runner.invoke(app, ["league", "status", "spring", "--json"]).stdout
    assert json.loads(document)["unrecorded"] == []


# --- the bounded readers: one helper, each reader -------------------------------------------


@pytest.mark.parametrize("text", [DEEP, LONG, f'{{"a": [{LONG}]}}'])
def test_bounded_json_refuses_depth_and_long_numbers(text: str) -> None:
    with pytest.raises(TooComplex):
        loads_json(text)


def test_bounded_json_reads_up_to_its_bounds() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads_json(deepest) is not None
    assert loads_json("9" * MAX_DIGITS) == int("9" * MAX_DIGITS)
    assert loads_json(json.dumps({"s": "[" * 10_000})) == {"s": "[" * 10_000}  # in a string
    with pytest.raises(TooComplex):
        loads_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(TooComplex):
        loads_json("9" * (MAX_DIGITS + 1))


@pytest.mark.parametrize(
    "text",
    [f"x = {DEEP}", "x = " + "{a = " * 3000 + "1" + "}" * 3000, f"x = {LONG}", "x = 1_" + LONG],
)
def test_bounded_toml_refuses_depth_and_long_numbers(text: str) -> None:
    with pytest.raises(TooComplex):
        loads_toml(text)


def test_bounded_toml_reads_the_league_file_of_the_docs() -> None:
    text = (ROOT / "docs" / "league.toml").read_text()
    assert loads_toml(text)["name"]


def write_log(tmp_path: Path, header_edit: str | None = None, body: str | None = None) -> Path:
    lines = GOLDEN.read_text().splitlines()
    if header_edit is not None:
        lines[0] = header_edit
    if body is not None:
        lines[5] = body
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("header", "body", "line"),
    [
        (None, DEEP, 6),
        (None, f'{{"type": "request", "id": {LONG}}}', 6),
        (f'{{"type": "header", "format": {LONG}}}', None, 1),
        (f'{{"type": "header", "format": 3, "x": {DEEP}}}', None, 1),
    ],
    ids=["deep-record", "long-number", "long-format", "deep-header"],
)
@pytest.mark.parametrize("mode", ["--verify", "--print", "--html"])
def test_replay_of_a_deep_or_huge_log_is_one_line(
    tmp_path: Path, header: str | None, body: str | None, line: int, mode: str
) -> None:
    """No RecursionError and no ValueError of the interpreter's digit limit, in any mode: a
    header that cannot be read is exit 1; a later record is where the replay stops, said in a
    warning (as any record that cannot be read), and ``--verify`` fails there."""
    path = write_log(tmp_path, header, body)
    report = verify_log(path)
    assert report.status is VerifyStatus.FAILED
    assert report.problem is not None
    assert report.problem.line == line
    assert "nesting up to 64 levels, numbers up to 100 digits" in report.problem.reason
    args = ["replay", str(path), mode, *([str(tmp_path / "p.html")] if mode == "--html" else [])]
    result = runner.invoke(app, args)
    assert result.exit_code == (1 if mode == "--verify" or line == 1 else 0), result.output
    assert f"line {line}" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_league_file_too_deep_or_too_long_is_a_league_error(tmp_path: Path) -> None:
    for text in (f'name = "x"\nbots = {DEEP}\n', f'name = "x"\nseed = {LONG}\n'):
        path = tmp_path / "l.toml"
        path.write_text(text)
        with pytest.raises(LeagueError, match="is not a league file"):
            load_league(path)


def test_a_stored_league_too_deep_or_too_long_is_a_league_error() -> None:
    for text in (DEEP, f'{{"seed": {LONG}}}'):
        with pytest.raises(LeagueError, match="not JSON"):
            StoredLeague.from_json(text)


def test_a_manifest_too_deep_or_too_long_is_a_manifest_error(tmp_path: Path) -> None:
    for value in (DEEP, LONG):
        folder = tmp_path / "bot"
        folder.mkdir(exist_ok=True)
        (folder / "bot.toml").write_text(f'name = "x"\nextra = {value}\n')
        with pytest.raises(ManifestError, match="not a manifest"):
            load_manifest(folder)


@pytest.mark.parametrize("value", ["[" * 200 + "]" * 200, LONG])  # SQLite's JSON: 1000 deep
def test_a_stored_summary_too_deep_or_too_long_is_store_damage(home: Path, value: str) -> None:
    """Every reader of the store's summaries: results, the standings, the audit, restat."""
    arena = played_league(home)
    store = ArenaStore(arena.store_path)
    gone = store.matches("spring")[1].match_id
    store.db.execute(
        "UPDATE results SET summary = json_set(summary, '$.hands', json(?)) WHERE match_id = ?",
        (value, gone),
    )
    store.db.commit()
    with pytest.raises(StoreDamaged, match=r"nested deeper|digits"):
        store.results("spring")
    with pytest.raises(StoreDamaged, match=r"nested deeper|digits"):
        read_standings(store, "spring")
    [logged] = [row for row in store.logged_results("spring") if row.match_id == gone]
    said = audit_summary(logged.summary)
    assert isinstance(said, str)
    assert "its summary is not JSON" in said
    assert restat_summary(logged) is None  # one it cannot read is rewritten, not a crash


def test_a_sequential_status_too_long_is_refused() -> None:
    text = json.dumps({"llr": 0, "lower": 0, "upper": 0, "verdict": None, "pairs": 1})
    with pytest.raises(ValueError, match="digits"):
        SprtStatus.from_json(text.replace('"pairs": 1', f'"pairs": {LONG}'))


def test_redacting_a_log_line_too_deep_leaves_it_out() -> None:
    line = '{"type": "fault", "evidence": ' + "[" * 1000 + "]" * 1000 + "}\n"
    assert redact_text(line, frozenset()) == ""
