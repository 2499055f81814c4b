"""Shorter first steps (issue 32, point 6): ``gin league new`` makes a league without a league
file, ``gin match`` and ``gin league new`` take bot folders as well as names, the league demo
deals the same in every fresh home, and the two demos say which is which."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from tournaments.cli import demo
from tournaments.cli.app import app
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import LeagueConfig, create_league, load_league, stored_league
from tournaments.registry import Arena, submit
from tournaments.store import BotRow, Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(place))
    return place


def registered(home: Path, *names: str) -> Store:
    """Bots ``NAME@1`` registered in ``home``, never started."""
    store = Arena(home).open_store()
    for index, name in enumerate(names):
        row = BotRow(name, "1", name[0] * 64, home / name, "", "", time.time() + index)
        store.add_bot(row)
    return store


def samples(home: Path, *names: str) -> Store:
    """Sample bots submitted to ``home`` (trusted: without their conformance check)."""
    arena = Arena(home)
    store = arena.open_store()
    for name in names:
        trio.run(submit, arena, store, SAMPLES / name, None)
    return store


def one_line_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def test_league_new_makes_a_round_robin_and_writes_its_file(home: Path) -> None:
    store = registered(home, "ann", "bob", "cy")
    result = runner.invoke(
        app, ["league", "new", "first", "ann", "bob", "cy@1", "--series", "4", "--move-time", "2s"]
    )
    assert result.exit_code == 0, result.output
    path = home / "leagues" / "first.toml"
    assert f"league first: a round robin of 3 bots, 12 matches; its file: {path}" in result.output
    stored = stored_league(store, "first")
    assert stored is not None
    assert stored.resolved == ("ann@1", "bob@1", "cy@1")
    config = stored.config
    assert (config.series_per_pairing, config.time_control.move_time_ms) == (4, 2000)
    assert config.candidates == ()
    assert config.sprt is None
    assert config.duplicate
    assert config.seed is None
    assert not config.public_deals
    assert load_league(path, store) == config  # the file written is the league
    assert len(store.matches("first")) == 12
    assert not list(path.parent.glob(".*"))  # no staged file left
    status = runner.invoke(app, ["league", "status", "first"])
    assert status.exit_code == 0
    assert "pending: 12" in status.output


def test_league_new_takes_a_league_files_defaults(home: Path) -> None:
    store = registered(home, "ann", "bob")
    assert runner.invoke(app, ["league", "new", "duo", "ann", "bob"]).exit_code == 0
    stored = stored_league(store, "duo")
    assert stored is not None
    assert stored.config == LeagueConfig("duo", None, ("ann@1", "bob@1"))


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["x", "ann"], "error: a league needs two bots or more, not 1"),
        (["x", "ann", "ann"], "error: ann named twice: name each bot once"),
        (["x", "ann", "ann@1"], "error: ann and ann@1 are the same bot (ann@1): name it once"),
        (["x", "ann", "bob", "--series", "3"], "error: --series must be positive and even"),
        (["x", "ann", "bob", "--series", "0"], "error: --series must be positive and even"),
        (["X", "ann", "bob"], "error: league 'X': bad or missing name 'X'"),
        (["taken", "ann", "bob"], "error: a league named taken exists already"),
        (["ladder", "ann", "bob"], "error: ladder is the hosted arena's league"),
        (["x", "ann", "zed"], "error: no submitted bot 'zed' and no folder of that name"),
        (["x", "ann", "./nowhere"], "error: no bot folder at ./nowhere"),
        (["x", "ann", "bob", "--move-time", "0.001"], "error: --move-time 0.001: must be between"),
    ],
)
def test_league_new_refuses_bad_input_in_one_line(
    home: Path, arguments: list[str], expected: str
) -> None:
    store = registered(home, "ann", "bob")
    create_league(store, LeagueConfig("taken", None, ("ann", "bob")))
    result = runner.invoke(app, ["league", "new", *arguments])
    assert result.exit_code == 2
    assert one_line_error(result.output).startswith(expected)
    assert store.leagues() == ["taken"]
    assert not (home / "leagues").exists()


def test_league_new_refuses_a_folder_that_is_not_a_bot_in_one_line(
    home: Path, tmp_path: Path
) -> None:
    registered(home, "ann")
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["league", "new", "x", "ann", str(tmp_path / "empty")])
    assert result.exit_code == 1
    empty = tmp_path / "empty"
    assert one_line_error(result.output) == (
        f"error: {empty} is not a valid bot folder: no bot.toml in {empty}"
    )


def test_a_submitted_folder_given_again_is_the_bot_it_became(home: Path) -> None:
    store = samples(home, "greedy", "random")
    folders = [str(SAMPLES / "greedy"), str(SAMPLES / "random")]
    result = runner.invoke(app, ["league", "new", "again", *folders])
    assert result.exit_code == 0, result.output
    assert f"{folders[0]} is greedy@1.0.0, already submitted with this code" in result.output
    assert f"{folders[1]} is random@1.0.0, already submitted with this code" in result.output
    stored = stored_league(store, "again")
    assert stored is not None
    assert stored.resolved == ("greedy@1.0.0", "random@1.0.0")
    assert 'bots = ["greedy@1.0.0", "random@1.0.0"]' in (home / "leagues/again.toml").read_text()


def test_a_folder_whose_version_has_other_code_is_refused_in_one_line(
    home: Path, tmp_path: Path
) -> None:
    samples(home, "greedy")
    changed = tmp_path / "greedy"
    shutil.copytree(SAMPLES / "greedy", changed, ignore=shutil.ignore_patterns("__pycache__"))
    with (changed / "bot.py").open("a") as code:
        code.write("# changed\n")
    result = runner.invoke(app, ["match", str(changed), "greedy", "--pairs", "1"])
    assert result.exit_code == 1
    assert "greedy@1.0.0 is already submitted with different code" in one_line_error(result.output)


def test_match_takes_a_folder_as_the_bot_it_is(home: Path) -> None:
    samples(home, "greedy")
    folder = str(SAMPLES / "greedy")
    result = runner.invoke(app, ["match", folder, "greedy", "--pairs", "1"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        f"{folder} is greedy@1.0.0, already submitted with this code",
        "error: greedy@1.0.0 and greedy are the same bot (greedy@1.0.0): a match needs two",
    ]
    nothing = runner.invoke(app, ["match", "greedy", "./nothing", "--pairs", "1"])
    assert one_line_error(nothing.output).startswith("error: no bot folder at ./nothing")


def test_the_league_demo_deals_the_same_in_every_fresh_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "demo_bots", lambda: [SAMPLES / "random", SAMPLES / "greedy"])
    made = []
    for place in ("one", "two"):
        _, store, config = demo.prepare_demo(tmp_path / place, 4, 2026)
        secret = store.league_secret("demo")
        assert secret is not None
        rows = [(m.match_id, m.seat0, m.seat1, m.seed) for m in store.matches("demo")]
        bot_seeds = [league_bot_seeds(secret, b"unused", row[0]) for row in rows]
        made.append((rows, bot_seeds, config))
    assert made[0] == made[1]
    assert made[0][2].public_deals


def test_a_real_league_keeps_its_homes_random_secret(tmp_path: Path) -> None:
    seeds = []
    for place in ("one", "two"):
        store = registered(tmp_path / place, "ann", "bob")
        create_league(store, LeagueConfig("demo", 2026, ("ann", "bob")))
        seeds.append([match.seed for match in store.matches("demo")])
    assert seeds[0] != seeds[1]


def test_each_demo_says_what_it_is_and_names_the_other() -> None:
    series_help = runner.invoke(app, ["demo", "-h"]).output
    league_help = runner.invoke(app, ["league", "demo", "-h"]).output
    assert "series demo" in series_help
    assert "gin league demo" in " ".join(series_help.split())
    assert "league demo" in league_help
    assert "gin demo is the other" in " ".join(league_help.split())
    assert "public" in league_help
    shown = runner.invoke(app, ["demo", "--seed", "3"]).output
    assert "the series demo, in-process (gin league demo is the other" in shown


@pytest.mark.slow
def test_league_new_checks_and_submits_a_folder(home: Path) -> None:
    registered(home, "ann")
    folder = str(SAMPLES / "random")
    result = runner.invoke(app, ["league", "new", "checked", "ann", folder])
    assert result.exit_code == 0, result.output
    assert f"submitted {folder} as random@1.0.0" in result.output
    store = Arena(home).open_store()
    row = store.bot("random", "1.0.0")
    assert row is not None
    assert row.path.is_relative_to(home)


@pytest.mark.slow
def test_match_plays_two_folders(home: Path) -> None:
    greedy, random = str(SAMPLES / "greedy"), str(SAMPLES / "random")
    result = runner.invoke(app, ["match", greedy, random, "--pairs", "1"])
    assert result.exit_code == 0, result.output
    assert f"submitted {greedy} as greedy@1.0.0" in result.output
    assert f"submitted {random} as random@1.0.0" in result.output
    assert "greedy-1-0-0-vs-random-1-0-0: greedy@1.0.0 vs random@1.0.0, 1 pairs" in result.output
    store = Arena(home).open_store()
    assert len(store.results("greedy-1-0-0-vs-random-1-0-0")) == 2
    again = runner.invoke(app, ["match", greedy, random, "--pairs", "1", "--json"])
    assert again.exit_code == 0, again.output  # unchanged folders: the same bots, the same match
    assert f"{greedy} is greedy@1.0.0, already submitted with this code" in again.output


@pytest.mark.slow
def test_two_fresh_league_demos_give_the_same_results(tmp_path: Path) -> None:
    played = []
    for place in ("one", "two"):
        demo_home = tmp_path / place
        result = runner.invoke(
            app, ["league", "demo", "--home", str(demo_home), "--series", "2", "-j", "4"]
        )
        assert result.exit_code == 0, result.output
        assert "public deals" in result.output
        assert "gin demo is the other" in result.output
        store = Arena(demo_home).open_store()
        played.append(
            sorted(
                (
                    row.match_id,
                    row.seats,
                    row.summary.seed,
                    row.winner,
                    row.end,
                    row.summary.totals,
                    row.summary.game_winners,
                    row.summary.hands,
                )
                for row in store.results("demo")
            )
        )
    assert played[0] == played[1]
    assert len(played[0]) in (6, 12)  # 3 bots, or 4 with the Node bot: 2 series a pairing


def test_league_new_never_overwrites_a_league_file_not_yet_created(home: Path) -> None:
    registered(home, "ann", "bob")
    hand_written = home / "leagues" / "stale.toml"
    hand_written.parent.mkdir(parents=True)
    hand_written.write_text("# mine\n")
    result = runner.invoke(app, ["league", "new", "stale", "ann", "bob"])
    assert result.exit_code == 2
    assert one_line_error(result.output).startswith(f"error: {hand_written} exists already")
    assert hand_written.read_text() == "# mine\n"


def test_an_unknown_name_is_refused_before_any_folder_is_submitted(home: Path) -> None:
    store = registered(home, "ann")
    result = runner.invoke(app, ["league", "new", "x", str(SAMPLES / "greedy"), "nosuchbot"])
    assert result.exit_code == 2, result.output
    assert "no submitted bot 'nosuchbot'" in one_line_error(result.output)  # and no other line
    assert [bot.name for bot in store.bots()] == ["ann"]
