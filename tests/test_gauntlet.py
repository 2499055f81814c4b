"""Gauntlet leagues (candidates against the field), a match's test in a league file, and
``gin league extend``: more series, no existing deal changed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from tournaments.cli.app import app
from tournaments.executors.fake import FakeExecutor
from tournaments.league import (
    LeagueConfig,
    LeagueError,
    create_league,
    extend_league,
    load_league,
    pairings,
    schedule,
    stored_league,
)
from tournaments.registry import Arena
from tournaments.runner import LeagueRunner
from tournaments.stats.sprt import SprtSettings
from tournaments.store import BotRow, MatchRow, MatchState, Store

KEY = b"k" * 32


def config(**changes: Any) -> LeagueConfig:
    data: dict[str, Any] = {
        "name": "g",
        "seed": 3,
        "bots": ["new", "a", "b", "c"],
        "candidates": ["new"],
        "series_per_pairing": 4,
    }
    data.update(changes)
    return LeagueConfig.from_dict(data)


def home(tmp_path: Path, *names: str) -> tuple[Arena, Store]:
    """An arena with bots of these names registered (version 1; never started)."""
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    for index, name in enumerate(names):
        row = BotRow(name, "1", f"{index:x}" * 64, tmp_path / name, "", "", time.time() + index)
        store.add_bot(row)
    return arena, store


def by_id(rows: list[MatchRow]) -> dict[str, MatchRow]:
    return {row.match_id: row for row in rows}


# --- who plays whom ---------------------------------------------------------------------------


def test_a_gauntlet_plays_each_candidate_against_the_field_only() -> None:
    idents = ["new@1", "a@1", "b@1", "c@1"]
    rows = schedule(config(), idents, KEY, candidates={"new@1"})
    assert len(rows) == 3 * 4
    met = {frozenset((row.seat0, row.seat1)) for row in rows}
    assert met == {frozenset(("new@1", field)) for field in ("a@1", "b@1", "c@1")}
    for pairing in met:
        assert sum(1 for row in rows if {row.seat0, row.seat1} == pairing) == 4


def test_candidates_do_not_play_each_other_nor_the_field_itself() -> None:
    league = config(bots=["new", "next", "a", "b", "c"], candidates=["new", "next"])
    rows = schedule(league, ["new@1", "next@1", "a@1", "b@1", "c@1"], KEY, {"new@1", "next@1"})
    met = {frozenset((row.seat0, row.seat1)) for row in rows}
    assert len(met) == 2 * 3
    assert all(len(pairing & {"new@1", "next@1"}) == 1 for pairing in met)
    assert len(rows) == 6 * 4


def test_without_candidates_it_is_a_round_robin() -> None:
    assert pairings(["b", "a", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    rows = schedule(config(candidates=[]), ["new@1", "a@1", "b@1", "c@1"], KEY)
    assert len({frozenset((row.seat0, row.seat1)) for row in rows}) == 6


def test_a_gauntlet_deals_as_the_round_robin_would_for_the_same_pairing() -> None:
    idents = ["new@1", "a@1", "b@1", "c@1"]
    gauntlet = by_id(schedule(config(), idents, KEY, {"new@1"}))
    robin = by_id(schedule(config(candidates=[]), idents, KEY))
    assert all(robin[match_id] == row for match_id, row in gauntlet.items())


# --- checking the definition ------------------------------------------------------------------


def test_every_problem_of_candidates_and_a_test_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "g"\nbots = ["a", "b", "c"]\ncandidates = ["a", "z", "a"]\nduplicate = false\n'
        "[sprt]\nelo0 = 5\nelo1 = 0\n"
    )
    with pytest.raises(LeagueError) as caught:
        load_league(path)
    text = str(caught.value)
    for expected in (
        "candidates z are not among bots",
        "candidates must name each bot once",
        "[sprt] needs exactly two bots and duplicate on",
        "[sprt]: elo1 must be greater than elo0",
    ):
        assert expected in text
    with pytest.raises(LeagueError, match="at least one bot of bots that is not a candidate"):
        config(candidates=["new", "a", "b", "c"])
    with pytest.raises(LeagueError, match="candidates must be a list"):
        config(candidates="new")
    with pytest.raises(LeagueError, match=r"\[sprt\] must be a table"):
        config(bots=["a", "b"], candidates=[], sprt=5)


def test_candidates_and_a_test_are_kept_with_the_league() -> None:
    league = config(bots=["a", "b"], candidates=["a"], sprt={"elo0": 0, "elo1": 10})
    assert league.candidates == ("a",)
    assert league.sprt == SprtSettings(0.0, 10.0)
    assert LeagueConfig.from_dict(league.to_dict()) == league
    plain = config(candidates=[])
    assert "candidates" not in plain.to_dict()  # a round robin is stored as before
    assert "sprt" not in plain.to_dict()


def test_adding_bots_to_either_side_of_a_gauntlet_changes_no_deal(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "next", "a", "b", "c", "d")
    create_league(store, config())
    before = by_id(store.matches("g"))
    bigger = config(bots=["new", "next", "a", "b", "c", "d"], candidates=["new", "next"])
    _, added = create_league(store, bigger)
    after = by_id(store.matches("g"))
    assert all(after[match_id] == row for match_id, row in before.items())
    assert added == len(after) - len(before) == (2 * 4 - 3) * 4
    assert not [row for row in after.values() if {row.seat0, row.seat1} <= {"a@1", "b@1", "d@1"}]


def test_a_field_bot_cannot_become_a_candidate(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    with pytest.raises(LeagueError, match="exists with other settings"):
        create_league(store, config(candidates=["new", "a"]))
    with pytest.raises(LeagueError, match="exists with other settings"):
        create_league(store, config(candidates=[]))


# --- gin league extend ------------------------------------------------------------------------


def test_extending_adds_series_and_changes_no_existing_deal(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    before = by_id(store.matches("g"))
    grown, added = extend_league(store, "g", 6)
    after = by_id(store.matches("g"))
    assert added == 3 * 6 == len(after) - len(before)
    for match_id, row in before.items():  # id, seats, seed, mirror and state unchanged
        assert after[match_id] == row
    new = [row for match_id, row in after.items() if match_id not in before]
    assert sorted({row.series_index for row in new}) == list(range(4, 10))
    assert not {row.seed for row in new} & {row.seed for row in before.values()}
    assert len({row.seed for row in new}) == 3 * 3  # a fresh deal per new pair
    for row in new:
        if row.series_index % 2:
            mirror = after[str(row.duplicate_of)]
            assert (mirror.seed, mirror.seat0, mirror.seat1) == (row.seed, row.seat1, row.seat0)
    stored = stored_league(store, "g")
    assert stored is not None
    assert stored.config.series_per_pairing == grown.series_per_pairing == 10
    # The original file, created again, removes nothing and adds nothing.
    again, none = create_league(store, config())
    assert (again, none) == (["new@1", "a@1", "b@1", "c@1"], 0)
    stored = stored_league(store, "g")
    assert stored is not None
    assert stored.config.series_per_pairing == 10


def test_a_bot_added_after_extending_gets_every_series(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c", "d")
    create_league(store, config())
    extend_league(store, "g", 2)
    create_league(store, config(bots=["new", "a", "b", "c", "d"]))
    rows = [row for row in store.matches("g") if "d@1" in (row.seat0, row.seat1)]
    assert len(rows) == 6


def test_more_series_in_the_file_than_stored_points_to_extend(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    with pytest.raises(LeagueError, match="gin league extend g --series N"):
        create_league(store, config(series_per_pairing=6))


@pytest.mark.parametrize("series", [0, -2, 3])
def test_extending_by_a_bad_count_is_refused(tmp_path: Path, series: int) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    with pytest.raises(LeagueError, match="--series must be positive and even"):
        extend_league(store, "g", series)
    assert len(store.matches("g")) == 12


def test_extending_without_duplicate_takes_any_positive_count(tmp_path: Path) -> None:
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config(duplicate=False, series_per_pairing=3))
    assert extend_league(store, "g", 1)[1] == 3
    with pytest.raises(LeagueError, match="no league 'nope'"):
        extend_league(store, "nope", 2)


def test_the_added_series_are_played_by_the_next_run(tmp_path: Path) -> None:
    arena, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    clock = trio.testing.MockClock(autojump_threshold=0)
    trio.run(LeagueRunner(arena, store, config(), 2, executor=FakeExecutor(2)).run, clock=clock)
    grown, _ = extend_league(store, "g", 2)
    executor = FakeExecutor(2)
    clock = trio.testing.MockClock(autojump_threshold=0)
    progress = trio.run(LeagueRunner(arena, store, grown, 2, executor=executor).run, clock=clock)
    assert sorted({int(job.match_id[-3:]) for job in executor.jobs}) == [4, 5]
    assert len(executor.jobs) == 6
    assert store.counts("g") == {MatchState.DONE: 18}
    assert progress.done == 18


def test_the_extend_command_says_what_it_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    _, store = home(tmp_path, "new", "a", "b", "c")
    create_league(store, config())
    result = CliRunner().invoke(app, ["league", "extend", "g", "--series", "2"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # as the terminal would wrap it, unwrapped
    assert said == "league g: 6 series per pairing, 6 new matches; play them with: gin league run g"
    for args, message in (
        (["g", "--series", "3"], "--series must be positive and even (duplicate pairs), not 3"),
        (["nope", "--series", "2"], "no league 'nope'"),
    ):
        result = CliRunner().invoke(app, ["league", "extend", *args])
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert len(store.matches("g")) == 18


def test_one_bot_named_two_ways_and_every_unknown_bot_are_listed_at_once(tmp_path: Path) -> None:
    """``greedy`` and ``greedy@1.0.0`` are one bot: it may not play itself (issue 17); and every
    bot not submitted is named in one error, not one per attempt (issue 18)."""
    store = Store(tmp_path / "s.sqlite")
    store.add_bot(BotRow("greedy", "1.0.0", "h1", tmp_path, "", "", 0.0))
    store.add_bot(BotRow("random", "1.0.0", "h2", tmp_path, "", "", 0.0))
    with pytest.raises(LeagueError) as caught:
        create_league(
            store, LeagueConfig("twice", 1, ("greedy", "random", "greedy@1.0.0", "zed", "yak"))
        )
    problems = str(caught.value).splitlines()[1:]
    assert problems[0] == (
        "  - greedy and greedy@1.0.0 are the same bot (greedy@1.0.0): name it once"
    )
    assert problems[1].startswith("  - no submitted bot 'zed'")
    assert problems[2].startswith("  - no submitted bot 'yak'")
    assert store.leagues() == []


def test_a_round_robin_does_not_become_a_gauntlet_when_a_candidate_is_added(
    tmp_path: Path,
) -> None:
    """Adding a bot as a candidate to a round robin would make it a gauntlet whose old pairings
    ``gin league extend`` then skips: it is refused, as the other way round is."""
    store = Store(tmp_path / "s.sqlite")
    for index, name in enumerate(("a", "b", "c", "x")):
        store.add_bot(BotRow(name, "1", str(index) * 64, tmp_path, "", "", float(index)))
    create_league(store, LeagueConfig("rr", 1, ("a", "b", "c")))
    with pytest.raises(LeagueError, match="only adding bots is allowed"):
        create_league(store, LeagueConfig("rr", 1, ("a", "b", "c", "x"), candidates=("x",)))
    stored = stored_league(store, "rr")
    assert stored is not None
    assert stored.config.candidates == ()
