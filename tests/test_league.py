"""Leagues: definitions, the schedule, the store, standings, and real runs (killed and resumed)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.faults import FaultKind
from referee.match import MatchEnd, SeatStats
from referee.replay import verify_log
from referee.sandbox import Sandbox
from tests.hostile_bots import hostile_folder
from tournaments.formats.hands import HandStats
from tournaments.league import (
    LeagueConfig,
    LeagueError,
    StoredLeague,
    create_league,
    derive_seed,
    league_secret,
    load_league,
    public_seed,
    schedule,
)
from tournaments.registry import Arena, RegistryError, submit
from tournaments.restat import RestatReport, restat
from tournaments.runner import LeagueBusy, LeagueRunner
from tournaments.stats.standings import compute
from tournaments.store import MatchState, ResultRow, Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"
KEY = b"k" * 32
"""A league secret for schedule tests (a real one is random, or keyed with the store's)."""


def config(**changes: Any) -> LeagueConfig:
    data: dict[str, Any] = {
        "name": "t",
        "seed": 5,
        "bots": ["a", "b", "c"],
        "series_per_pairing": 4,
        "jobs": 2,
    }
    data.update(changes)
    return LeagueConfig.from_dict(data)


# --- definitions and schedule -----------------------------------------------------------------


def test_league_file_problems_are_all_listed(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "Bad Name"\nseed = -1\nbots = ["a"]\nseries_per_pairing = 3\ncolour = 1\n'
        "[time_control]\nmove_time_ms = -5\n"
    )
    with pytest.raises(LeagueError) as caught:
        load_league(path)
    text = str(caught.value)
    for expected in (
        "unknown field 'colour'",
        "bad or missing name",
        "bad seed -1",
        "at least two different bots",
        "must be even",
        "[time_control]",
    ):
        assert expected in text
    path.write_text("name = ")
    with pytest.raises(LeagueError, match="not valid TOML"):
        load_league(path)


def test_round_robin_with_mirrored_pairs() -> None:
    rows = schedule(config(), ["a@1", "b@1", "c@1"], KEY)
    assert len(rows) == 3 * 4
    for pair in range(0, len(rows), 2):
        first, second = rows[pair], rows[pair + 1]
        assert first.seed == second.seed
        assert (first.seat0, first.seat1) == (second.seat1, second.seat0)
        assert second.duplicate_of == first.match_id
    assert len({row.seed for row in rows}) == 3 * 2
    assert len({row.match_id for row in rows}) == len(rows)


def test_without_duplicate_every_series_has_its_own_deal() -> None:
    rows = schedule(config(duplicate=False, series_per_pairing=3), ["a@1", "b@1"], KEY)
    assert len({row.seed for row in rows}) == 3
    assert [row.seat0 for row in rows] == ["a@1", "b@1", "a@1"]


def test_adding_a_bot_changes_no_existing_match() -> None:
    before = {row.match_id: row for row in schedule(config(), ["a@1", "b@1", "c@1"], KEY)}
    after = {row.match_id: row for row in schedule(config(), ["a@1", "b@1", "c@1", "d@1"], KEY)}
    assert before.keys() < after.keys()
    assert all(after[match_id] == row for match_id, row in before.items())
    assert len(after) - len(before) == 3 * 4


def test_the_league_seed_alone_does_not_give_the_deals(tmp_path: Path) -> None:
    # A bot that knows the league file (seed 5) and the public formulas must not rebuild a deal.
    league = config(bots=["a", "b"], series_per_pairing=2)
    rows = {row.match_id: row.seed for row in schedule(league, ["a@1", "b@1"], KEY)}
    guessable = {
        public_seed(5, "a@1|b@1", 0),
        derive_seed(league_secret(league, b""), "a@1|b@1", 0),
    }
    guessable |= {derive_seed(hashlib.sha256(b"5").digest(), "a@1|b@1", 0)}
    assert not guessable & set(rows.values())
    # The store keys the seed with its own secret: the same file, the same deals in this home;
    # another home deals otherwise.
    one, other = Store(tmp_path / "one.sqlite"), Store(tmp_path / "other.sqlite")
    assert one.secret("home") == one.secret("home") != other.secret("home")
    assert league_secret(league, one.secret("home")) != league_secret(league, other.secret("home"))
    assert (tmp_path / "one.sqlite").stat().st_mode & 0o077 == 0


def test_a_league_without_a_seed_gets_a_random_secret_kept_in_the_store(tmp_path: Path) -> None:
    league = config(bots=["a", "b"], series_per_pairing=2, seed=None)
    assert league_secret(league, KEY) != league_secret(league, KEY)
    store = Store(tmp_path / "s.sqlite")
    rows = schedule(league, ["a@1", "b@1"], KEY)
    store.save_league("t", StoredLeague(league, ()).to_json(), rows, KEY)
    store.save_league("t", StoredLeague(league, ()).to_json(), rows, b"x" * 32)  # keeps the first
    assert store.league_secret("t") == KEY


def test_public_deals_follow_from_the_seed_alone() -> None:
    league = config(bots=["a", "b"], series_per_pairing=2, public_deals=True)
    assert league_secret(league, KEY) == league_secret(league, b"other" * 8)
    with pytest.raises(LeagueError, match="public_deals needs a seed"):
        config(public_deals=True, seed=None)


# --- the store ----------------------------------------------------------------------------------


def summary(
    seats: list[str], winner: int | None, points: tuple[int, int], duplicate_of: str | None = None
) -> dict[str, Any]:
    games = [winner, winner, winner]
    return {
        "seats": seats,
        "winner": winner,
        "end": "complete",
        "forfeited": [],
        "totals": [[0, 0, 0], [0, 0, 0]],
        "game_winners": games,
        "hands": 3,
        "faults": [],
        "duplicate_of": duplicate_of,
        "stats": [
            {"decisions": 10, "mean_ms": 2.0, "max_ms": 5.0},
            {"decisions": 10, "mean_ms": 4.0, "max_ms": 9.0},
        ],
        "hand_stats": [
            {"points": points[0], "hands_won": 1, "knocks": 1},
            {"points": points[1], "hands_won": 1, "gins": 1, "knocks": 1},
        ],
    }


def test_a_result_counts_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    rows = schedule(config(bots=["a", "b"], series_per_pairing=2), ["a@1", "b@1"], KEY)
    assert store.save_league("t", '{"x": 1}', rows, KEY) == 2
    assert store.save_league("t", '{"x": 1}', rows, KEY) == 0
    row = ResultRow.from_stored(
        rows[0].match_id, "t", 0, "complete", "r", summary(["a@1", "b@1"], 0, (5, 1)), "log"
    )
    assert store.record_result(row)
    assert not store.record_result(row)
    assert len(store.results("t")) == 1
    assert store.counts("t") == {"done": 1, "pending": 1}
    assert store.claim(rows[1].match_id)
    assert store.reset_running("t") == 1
    assert store.counts("t") == {"done": 1, "pending": 1}
    store.mark(rows[1].match_id, MatchState.FAILED, "worker failed")
    assert store.reset_running("t") == 0
    assert store.reset_running("t", retry_failed=True) == 1
    assert store.counts("t") == {"done": 1, "pending": 1}


GOLDEN = ROOT / "tests" / "golden" / "format2-strikes.jsonl"
"""A match log of north@1.0 (seat 0) against south@2.0: 17 hands, seat 0 struck twice."""
GOLDEN_HANDS = (
    HandStats(hands_won=8, points=114, knocks=12, undercuts_suffered=4, drawn=1),
    HandStats(hands_won=8, points=134, knocks=4, undercuts_given=4, drawn=1),
)
"""Its hand_end records, counted by hand."""


def golden_league(tmp_path: Path) -> tuple[Store, list[str], Path]:
    """A store whose league's first match has the golden log (copied) but no result yet."""
    store = Store(tmp_path / "s.sqlite")
    league = config(bots=["north", "south"], series_per_pairing=2)
    rows = schedule(league, ["north@1.0", "south@2.0"], KEY)
    store.save_league("t", StoredLeague(league, ()).to_json(), rows, KEY)
    log = tmp_path / "golden.jsonl"
    log.write_bytes(GOLDEN.read_bytes())
    golden_id = json.loads(GOLDEN.read_text().splitlines()[0])["match_id"]
    golden_seed = json.loads(GOLDEN.read_text().splitlines()[-1])["seed"]
    with store.transaction() as db:  # the first match is the golden one, dealt from its seed
        db.execute(
            "UPDATE matches SET match_id = ?, seed = ? WHERE match_id = ?",
            (golden_id, golden_seed, rows[0].match_id),
        )
    return store, [golden_id, *(row.match_id for row in rows[1:])], log


def old_summary(log: Path) -> dict[str, Any]:
    """The golden match's summary as the worker wrote it before typed records: the result
    record, the seed, hand statistics holding only the counts that were not 0."""
    result = json.loads(log.read_text().splitlines()[-1])
    kept = {key: result[key] for key in result if key not in ("type", "salt")}
    hand_stats = [
        {"hands_won": 8, "points": 114, "knocks": 12, "undercuts_suffered": 4, "drawn": 1},
        {"hands_won": 8, "points": 134, "knocks": 4, "undercuts_given": 4, "drawn": 1},
    ]
    return {
        **kept,
        "hand_stats": hand_stats,
        "hello": ["north@1.0", "south@2.0"],
        "log": str(log),
        "seats": ["north@1.0", "south@2.0"],
        "duplicate_of": None,
    }


def store_old_row(store: Store, match_id: str, summary: dict[str, Any], log: Path) -> None:
    """A results row as the store wrote it before typed records."""
    store.db.execute(
        "INSERT INTO results VALUES (?, 't', 1, 'complete', 'all three games ended', ?, ?, 0)",
        (match_id, json.dumps(summary, sort_keys=True), str(log)),
    )
    store.db.execute("UPDATE matches SET state = 'done' WHERE match_id = ?", (match_id,))


def test_a_summary_stored_before_typed_records_is_still_read(tmp_path: Path) -> None:
    store, ids, log = golden_league(tmp_path)
    store_old_row(store, ids[0], old_summary(log), log)
    (result,) = store.results("t")
    assert (result.match_id, result.winner, result.end) == (ids[0], 1, MatchEnd.COMPLETE)
    assert (result.seats, result.duplicate_of) == (("north@1.0", "south@2.0"), None)
    summary = result.summary
    assert summary.hand_stats == GOLDEN_HANDS
    assert summary.stats[0] == SeatStats(275, 0.0, 0.0, 2, (("illegal_action", 2),))
    assert [fault.kind for fault in summary.faults] == [FaultKind.ILLEGAL_ACTION] * 2
    assert (summary.seed, summary.hands, summary.game_winners) == (12, 17, (1, 0, 1))
    assert summary.hello == ("north@1.0", "south@2.0")
    assert store.counts("t") == {MatchState.DONE: 1, MatchState.PENDING: 1}
    north = next(line for line in compute("t", [result]).bots if line.bot == "north@1.0")
    assert (north.points_for, north.points_against, north.undercuts_suffered) == (114, 134, 4)
    assert north.faults == {"illegal_action": 2}
    # Written again, it reads back the same.
    again = ResultRow.from_stored(
        ids[0], "t", 1, "complete", "r", json.loads(result.stored_summary()), str(log)
    )
    assert again.summary == summary
    assert (again.seats, again.duplicate_of) == (result.seats, result.duplicate_of)


def test_restat_restores_a_damaged_statistic_from_the_log(tmp_path: Path) -> None:
    store, ids, log = golden_league(tmp_path)
    store_old_row(store, ids[0], old_summary(log), log)
    assert restat(store, "t") == RestatReport(1, ())  # the old row's counts are the log's
    with store.transaction() as db:  # damaged, or counted by an older worker
        db.execute("UPDATE results SET summary = json_set(summary, '$.hand_stats[1].points', 999)")
    assert store.results("t")[0].summary.hand_stats[1].points == 999
    assert restat(store, "t") == RestatReport(1, (ids[0],))
    (result,) = store.results("t")
    assert result.summary.hand_stats == GOLDEN_HANDS
    south = next(line for line in compute("t", [result]).bots if line.bot == "south@2.0")
    assert south.points_for == 134
    assert restat(store, "t") == RestatReport(1, ())
    # A result whose log is gone is left as it is, and said so.
    store_old_row(store, ids[1], old_summary(log), tmp_path / "gone.jsonl")
    report = restat(store, "t")
    assert (report.checked, report.changed) == (1, ())
    assert [match_id for match_id, _ in report.refused] == [ids[1]]
    assert "does not verify" in report.refused[0][1]


def test_restat_trusts_only_a_verified_log_of_the_same_match(tmp_path: Path) -> None:
    store, ids, log = golden_league(tmp_path)
    store_old_row(store, ids[0], old_summary(log), log)
    with store.transaction() as db:  # a field this code does not know, and damaged counts
        db.execute("UPDATE results SET summary = json_set(summary, '$.note', 'kept')")
        db.execute("UPDATE results SET summary = json_set(summary, '$.hand_stats[0].points', 5)")
    other = tmp_path / "other.jsonl"  # the golden log, as the log of another match
    other.write_bytes(GOLDEN.read_bytes())
    store_old_row(store, ids[1], old_summary(other), other)
    report = restat(store, "t")
    assert report.changed == (ids[0],)
    assert [(match_id, why.split(":")[0]) for match_id, why in report.refused] == [
        (ids[1], f"its log {other} is of match {ids[0]}")
    ]
    stored = json.loads(store.db.execute("SELECT summary FROM results LIMIT 1").fetchone()[0])
    assert stored["note"] == "kept"  # only the hand statistics were rewritten
    assert store.results("t")[0].summary.hand_stats == GOLDEN_HANDS
    tampered = log.read_text().replace('"points":', '"points":1', 1)  # a hand's points
    log.write_text(tampered)
    with store.transaction() as db:
        db.execute("UPDATE results SET summary = json_set(summary, '$.hand_stats[0].points', 5)")
    report = restat(store, "t")
    assert report.changed == ()
    assert "does not verify" in dict(report.refused)[ids[0]]
    assert store.results("t")[0].summary.hand_stats[0].points == 5  # left as it was


def test_a_damaged_result_is_a_one_line_error_and_verify_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415 - only these tests drive the CLI

    from tournaments.cli.app import app  # noqa: PLC0415

    monkeypatch.setenv("GIN_HOME", str(tmp_path))
    store, ids, log = golden_league(tmp_path)
    store.close()  # the arena's store is the golden league's
    (tmp_path / "s.sqlite").rename(Arena(tmp_path).store_path)
    store = Arena(tmp_path).open_store()
    store_old_row(store, ids[0], {**old_summary(log), "end": "resigned"}, log)
    runner = CliRunner()
    standings = runner.invoke(app, ["league", "standings", "t"])
    said = " ".join(standings.output.split())  # one message, wrapped to the terminal
    assert standings.exit_code == 2
    assert said.startswith(f"error: the store's result of match {ids[0]} cannot be read")
    assert "'resigned' is not a valid MatchEnd" in said
    assert standings.exception is None or isinstance(standings.exception, SystemExit)
    verify = runner.invoke(app, ["league", "verify", "t"])  # runs, and finds the damage
    said_verify = " ".join(verify.output.split())
    assert verify.exit_code == 1
    assert (
        f'mismatch {ids[0]}: end is "resigned" in the store, "complete" in its log' in said_verify
    )
    assert said_verify.endswith(
        "1 of 1 match logs verified; 2 scheduled: 1 pending, 1 done; 1 mismatch in the store"
    ), said_verify
    store.db.execute("UPDATE matches SET state = 'paused' WHERE match_id = ?", (ids[1],))
    status = runner.invoke(app, ["league", "status", "t"])
    assert status.exit_code == 2
    assert "'paused' is not a valid MatchState" in " ".join(status.output.split())


# --- standings ----------------------------------------------------------------------------------


def test_standings_from_known_results() -> None:
    results = [
        ResultRow.from_stored("m0", "t", 0, "complete", "", summary(["a", "b"], 0, (100, 40)), ""),
        ResultRow.from_stored(
            "m1", "t", 1, "complete", "", summary(["b", "a"], 1, (30, 110), "m0"), ""
        ),
        ResultRow.from_stored("m2", "t", 0, "complete", "", summary(["a", "c"], 0, (100, 0)), ""),
        ResultRow.from_stored(
            "m3", "t", None, "hand_cap", "", summary(["c", "b"], None, (50, 50)), ""
        ),
    ]
    standings = compute("t", results)
    lines = {line.bot: line for line in standings.bots}
    assert standings.bots[0].bot == "a"
    a, b = lines["a"], lines["b"]
    assert (a.series, a.series_won, a.series_lost, a.series_drawn) == (3, 3, 0, 0)
    assert (b.series_won, b.series_lost, b.series_drawn) == (0, 2, 1)
    assert a.games_won == 9
    assert a.points_for == 100 + 110 + 100
    assert a.points_against == 40 + 30 + 0
    assert a.gins == 1  # as seat 1 in m1
    assert a.mean_ms == pytest.approx((2 + 4 + 2) / 3, abs=0.01)
    assert a.worst_ms == 9.0
    # a won every series: its rating is only a lower bound; c drew and lost, so has both ends.
    assert (a.rating_bound, a.rating_high) == ("lower", None)
    assert a.rating_low is not None
    assert a.rating_low < a.rating
    c = lines["c"]
    assert c.rating_bound is None
    assert c.rating_low is not None
    assert c.rating_high is not None
    assert c.rating_low < c.rating < c.rating_high
    assert a.rating > c.rating
    pair = next(p for p in standings.pairwise if (p.bot, p.opponent) == ("a", "b"))
    assert (pair.series, pair.units, pair.wins, pair.losses, pair.score) == (2, 1, 2, 0, 1.0)
    assert pair.pentanomial == (0, 0, 0, 0, 1)
    # One pair won: a bound, not an estimate; its LOS is exact from one pair (1 - 0.5^2).
    assert (pair.los, pair.elo, pair.elo_bound) == (0.75, None, "lower")
    # The mirrored pair m0/m1: a scored 100 + 110, b 40 + 30.
    assert (pair.margin, pair.margin_low) == (140, None)
    data = standings.to_dict()
    assert json.loads(json.dumps(data))["bots"][0]["bot"] == "a"
    header = standings.to_csv().splitlines()[0].split(",")
    assert header[:3] == ["rank", "bot", "series"]


# --- real leagues -----------------------------------------------------------------------------


def submit_all(arena: Arena, store: Store, folders: list[Path]) -> list[str]:
    return [trio.run(submit, arena, store, folder, None).ident for folder in folders]


def test_submitting_clashing_code_is_refused(tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    bot = tmp_path / "bot"
    (bot).mkdir()
    (bot / "bot.toml").write_text('name = "x"\nversion = "1"\ncommand = ["python", "bot.py"]\n')
    (bot / "bot.py").write_text("print(1)\n")
    first = trio.run(submit, arena, store, bot, None)
    assert trio.run(submit, arena, store, bot, None) == first
    assert not os.access(first.path / "bot.py", os.W_OK) or os.geteuid() == 0
    (bot / "bot.py").write_text("print(2)\n")
    with pytest.raises(RegistryError, match="already submitted with different code"):
        trio.run(submit, arena, store, bot, None)


@pytest.mark.slow
def test_league_with_hostile_bots_records_every_match(tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    folders = [
        SAMPLES / "greedy",
        hostile_folder(tmp_path, "crash"),
        hostile_folder(tmp_path, "hang"),
        hostile_folder(tmp_path, "probes"),
    ]
    idents = submit_all(arena, store, folders)
    league = config(
        name="hostile",
        bots=idents,
        series_per_pairing=2,
        time_control={"move_time_ms": 400, "grace_ms": 100, "time_bank_ms": 0},
    )
    create_league(store, league)
    progress = trio.run(LeagueRunner(arena, store, league, 2).run)
    assert progress.failed == 0
    results = store.results("hostile")
    assert len(results) == len(store.matches("hostile")) == 6 * 2
    assert all(result.reason for result in results)
    for result in results:
        seats = result.seats
        if "hostile@crash" in seats or "hostile@hang" in seats:
            bad = seats.index("hostile@crash" if "hostile@crash" in seats else "hostile@hang")
            assert result.summary.forfeited == (bad,)
            assert "forfeited" in result.reason
        assert Path(result.log_path).exists()
    reports = [verify_log(Path(result.log_path)) for result in results]
    assert [report.summary() for report in reports if not report.ok] == []
    standings = compute("hostile", results)
    assert standings.bots[-1].faults
    assert_nothing_left(Sandbox())


def assert_nothing_left(sandbox: Sandbox) -> None:
    leftovers = [
        path.name for path in sandbox.root_dir.iterdir() if path.name.startswith("hostile")
    ]
    assert leftovers == []


@pytest.mark.slow
def test_killed_runner_resumes_without_losing_or_double_counting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    arena = Arena(home)
    store = arena.open_store()
    idents = submit_all(arena, store, [SAMPLES / "greedy", SAMPLES / "random"])
    league = config(name="resume", bots=idents, series_per_pairing=8, jobs=2)
    create_league(store, league)
    env = {**os.environ, "GIN_HOME": str(home), "COLUMNS": "100"}
    runner = subprocess.Popen(
        [sys.executable, "-m", "tournaments.cli.entry", "league", "run", "resume", "-j", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: done_count(home) >= 2, 120)
        os.kill(runner.pid, signal.SIGKILL)  # the runner only: its workers die with it
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    partial = done_count(home)
    assert 2 <= partial < 8
    # The killed runner's workers notice, stop their matches and tear their bots down (checked
    # before the resume, whose start would sweep what they left).
    root = Sandbox().root_dir
    wait_for(lambda: not [path for path in root.iterdir() if path.name.startswith("resume_")], 20)
    progress = trio.run(LeagueRunner(arena, Store(home / "arena.sqlite"), league, 2).run)
    assert progress.done == 8
    results = store.results("resume")
    assert len(results) == 8
    assert len({result.match_id for result in results}) == 8
    assert store.counts("resume") == {"done": 8}


def done_count(home: Path) -> int:
    with sqlite3.connect(home / "arena.sqlite", timeout=30) as db:
        return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def wait_for(condition: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {seconds} s")
        time.sleep(0.2)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a command in the background


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stop", "background"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c", "sigterm", "sigterm-in-the-background"],
)
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(
    tmp_path: Path, stop: signal.Signals, background: bool
) -> None:
    """Ctrl-C, or SIGTERM (also where the shell left SIGINT ignored, in the background), stops
    the run cleanly and says how to resume; SIGTERM used to end it silently."""
    home = tmp_path / "home"
    arena = Arena(home)
    store = arena.open_store()
    idents = submit_all(arena, store, [SAMPLES / "greedy", SAMPLES / "random"])
    create_league(store, config(name="stop", bots=idents, series_per_pairing=8))
    env = {**os.environ, "GIN_HOME": str(home), "COLUMNS": "100"}
    runner = subprocess.Popen(
        [sys.executable, "-m", "tournaments.cli.entry", "league", "run", "stop", "-j", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_ignore_sigint if background else None,  # noqa: PLW1509 - one call, no threads
    )
    try:
        wait_for(lambda: done_count(home) >= 1, 120)
        runner.send_signal(stop)
        output, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert runner.returncode == 130
    assert b"Resume with: gin league run stop" in output
    counts = Store(home / "arena.sqlite").counts("stop")
    assert "running" not in counts
    assert counts.get(MatchState.DONE, 0) + counts.get(MatchState.PENDING, 0) == 8


@pytest.mark.slow
def test_cli_league_flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415 - only this test drives the CLI

    from tournaments.cli.app import app  # noqa: PLC0415

    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    arena = Arena(tmp_path / "home")
    submit_all(arena, arena.open_store(), [SAMPLES / "greedy", SAMPLES / "random"])
    definition = tmp_path / "cli.toml"
    definition.write_text(
        'name = "cli"\nseed = 3\nbots = ["greedy", "random"]\nseries_per_pairing = 2\n'
    )
    runner = CliRunner()
    created = runner.invoke(app, ["league", "create", str(definition)])
    assert created.exit_code == 0, created.output
    assert "2 bots, 2 matches (2 new)" in created.output
    ran = runner.invoke(app, ["league", "run", "cli", "-j", "2"])
    assert ran.exit_code == 0, ran.output
    verified = runner.invoke(app, ["league", "verify", "cli"])
    assert "2 of 2 match logs verified" in verified.output
    recounted = runner.invoke(app, ["league", "restat", "cli"])  # the worker counted as the log
    assert recounted.exit_code == 0, recounted.output
    assert "2 results recounted from their logs, 0 changed" in recounted.output
    as_json = runner.invoke(app, ["league", "standings", "cli", "--format", "json"])
    document = json.loads(as_json.output)
    assert document["bots"][0]["bot"] == "greedy@1.0.0"
    assert document["series"] == 2
    status = runner.invoke(app, ["league", "status", "cli"])
    assert "done: 2" in status.output
    missing = runner.invoke(app, ["league", "run", "nope"])
    assert missing.exit_code == 2
    assert "no league 'nope'" in missing.output


def test_a_league_from_before_secrets_gets_one_for_its_new_matches(tmp_path: Path) -> None:
    # A store made before league secrets: its league's matches came from the public seed. They
    # stay as they were; the bots added now are dealt from a secret, stored from then on.
    store = Store(tmp_path / "s.sqlite")
    league = config(bots=["a", "b"], series_per_pairing=2)
    old = schedule(league, ["a@1", "b@1"], None)
    store.save_league("t", StoredLeague(league, ("a@1", "b@1")).to_json(), old, None)
    assert store.league_secret("t") is None
    new = schedule(league, ["a@1", "b@1", "c@1"], KEY)
    store.save_league("t", StoredLeague(league, ()).to_json(), new, KEY)
    assert store.league_secret("t") == KEY
    seeds = {row.match_id: row.seed for row in store.matches("t")}
    assert all(seeds[row.match_id] == row.seed for row in old)  # nothing dealt changes
    added = [row for row in new if row.match_id not in {o.match_id for o in old}]
    assert added
    assert all(row.seed != public_seed(5, row.pairing, row.series_index // 2) for row in added)


def test_two_leagues_with_one_seed_deal_differently(tmp_path: Path) -> None:
    home = Store(tmp_path / "s.sqlite").secret("home")
    spring, autumn = config(name="spring"), config(name="autumn")
    assert league_secret(spring, home) != league_secret(autumn, home)


def test_an_old_world_readable_store_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path).close()
    path.chmod(0o644)
    Store(path).close()
    assert path.stat().st_mode & 0o077 == 0


def test_a_second_runner_of_a_league_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    league = config(name="busy", bots=["a", "b"], series_per_pairing=2)
    rows = schedule(league, ["a@1", "b@1"], KEY)
    store.save_league("busy", StoredLeague(league, ()).to_json(), rows, KEY)
    first = store.matches("busy")[0].match_id
    assert store.claim(first)  # as the running runner left it
    (arena.home / "locks").mkdir()
    with (arena.home / "locks" / "busy.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242")
        held.flush()
        with pytest.raises(LeagueBusy, match=r"another gin league run \(process 4242\)"):
            trio.run(LeagueRunner(arena, store, league, 2).run)
    assert store.counts("busy") == {"running": 1, "pending": 1}  # not reset under the other
