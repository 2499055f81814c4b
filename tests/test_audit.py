"""``gin league verify`` checks the store against the logs: a league played in-process (real logs,
mock clock, no bot processes), then the store or the log folder tampered with as by hand."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from referee.control import FaultPolicy
from referee.match import MatchConfig, MatchResult, play_match
from referee.matchlog import MatchLog, stderr_path
from referee.rules import Policy, greedy_policy, patient_policy
from referee.seats import BotIdentity, InProcessSeat
from tournaments.audit import AuditReport, audit
from tournaments.cli.app import app
from tournaments.formats.records import MatchSummary
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import LeagueConfig, StoredLeague, schedule
from tournaments.registry import Arena, parse_spec
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow, Store

LEAGUE = "audit"
POLICIES: dict[str, Policy] = {"north": greedy_policy, "south": patient_policy}
HASHES = {"north": "a" * 64, "south": "b" * 64}
"""The registry's code hashes, which the in-process seats give in their hello as a real seat
gives its folder's."""
KEY = b"k" * 32
"""The league secret (a real one is random): the same deals in every run."""


class League:
    """A two-bot league whose matches were played in-process and recorded as the runner does."""

    def __init__(self, tmp_path: Path) -> None:
        self.arena = Arena(tmp_path / "home")
        self.store = self.arena.open_store()
        for index, name in enumerate(POLICIES):
            row = BotRow(name, "1", HASHES[name], tmp_path / name, "", "", time.time() + index)
            self.store.add_bot(row)
        data = {"name": LEAGUE, "seed": 3, "bots": list(POLICIES), "series_per_pairing": 2}
        config = LeagueConfig.from_dict(data)
        idents = [f"{name}@1" for name in POLICIES]
        stored = StoredLeague(config, tuple(idents)).to_json()
        self.store.save_league(LEAGUE, stored, schedule(config, idents, KEY), KEY)
        self.logs = self.arena.logs_dir(LEAGUE)
        self.logs.mkdir(parents=True)
        self.ids = [match.match_id for match in self.store.matches(LEAGUE)]
        for match in self.store.matches(LEAGUE):
            seeds = league_bot_seeds(
                self.store.league_secret(LEAGUE), self.store.secret("home"), match.match_id
            )  # as the runner gives them
            self.record(match, play(match, self.log(match.match_id), seeds))

    def log(self, match_id: str) -> Path:
        return self.logs / f"{match_id}.jsonl"

    def record(self, match: MatchRow, result: MatchResult) -> None:
        summary = MatchSummary.of(result, self.log(match.match_id))
        row = ResultRow(
            match.match_id,
            LEAGUE,
            summary.winner,
            summary.end,
            "played in-process",
            summary,
            str(self.log(match.match_id)),
            (match.seat0, match.seat1),
            match.duplicate_of,
        )
        assert self.store.record_result(row)

    def sql(self, statement: str, *args: object) -> None:
        self.store.db.execute(statement, args)

    def audit(self) -> AuditReport:
        return audit(self.store, LEAGUE, self.logs)


def seat(ident: str) -> InProcessSeat:
    name, version = parse_spec(ident)
    assert version is not None
    playing = InProcessSeat(POLICIES[name], name, version)
    playing.identity = BotIdentity(name, version, HASHES[name])
    return playing


def play(match: MatchRow, path: Path, bot_seeds: tuple[int, int]) -> MatchResult:
    config = MatchConfig(
        match.match_id, match.seed, fault_policy=FaultPolicy(strikes=3), bot_seeds=bot_seeds
    )

    async def main() -> MatchResult:
        with MatchLog(path) as log:
            return await play_match((seat(match.seat0), seat(match.seat1)), config, log)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.fixture
def league(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> League:
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    return League(tmp_path)


def verify() -> tuple[int, str]:
    """``gin league verify``: its exit code and its output on one line."""
    ran = CliRunner().invoke(app, ["league", "verify", LEAGUE])
    return ran.exit_code, " ".join(ran.output.split())


# --- tampering ---------------------------------------------------------------------------------


def flip_winners(league: League) -> list[tuple[str, str]]:
    """Both winners flipped by hand, in the table and in the summary the standings read."""
    league.sql(
        "UPDATE results SET winner = 1 - winner,"
        " summary = json_set(summary, '$.winner', 1 - json_extract(summary, '$.winner'))"
        " WHERE winner IS NOT NULL"
    )
    flipped = [r.match_id for r in league.store.results(LEAGUE) if r.winner is not None]
    assert len(flipped) == 2
    return [(match_id, "winner is") for match_id in flipped]


def copy_result(league: League) -> list[tuple[str, str]]:
    """The second match's result replaced by a copy of the first's, under its own id."""
    first, second = league.ids
    league.sql("DELETE FROM results WHERE match_id = ?", second)
    league.sql(
        "INSERT INTO results SELECT ?, league, winner, end, reason, summary, log_path,"
        " recorded_at FROM results WHERE match_id = ?",
        second,
        first,
    )
    return [
        (second, f"is of match {first}"),
        (second, f"is also the log of the result of match {first}"),
        (second, "belongs to no result"),  # its own log
    ]


def copy_result_to_a_pending_match(league: League) -> list[tuple[str, str]]:
    first, second = league.ids
    league.sql("DELETE FROM results WHERE match_id = ?", second)
    league.sql("UPDATE matches SET state = 'pending' WHERE match_id = ?", second)
    league.sql(
        "INSERT INTO results SELECT ?, league, winner, end, reason, summary, log_path,"
        " recorded_at FROM results WHERE match_id = ?",
        second,
        first,
    )
    return [(second, "a result, but the match is pending"), (second, f"is of match {first}")]


def delete_result(league: League) -> list[tuple[str, str]]:
    second = league.ids[1]
    league.sql("DELETE FROM results WHERE match_id = ?", second)
    return [
        (second, "is gone from the store, though the match is done"),
        (second, "belongs to no result"),
    ]


def swap_logs(league: League) -> list[tuple[str, str]]:
    """Two matches' logs swapped (the files renamed): each log verifies, but is the other's."""
    first, second = (league.log(match_id) for match_id in league.ids)
    first.rename(first.with_name("swap"))
    second.rename(first)
    first.with_name("swap").rename(second)
    return [
        (league.ids[0], f"is of match {league.ids[1]}"),
        (league.ids[1], f"is of match {league.ids[0]}"),
    ]


def remove_a_log(league: League) -> list[tuple[str, str]]:
    league.log(league.ids[0]).unlink()
    return [(league.ids[0], "its log does not verify: it cannot be read")]


def unplay_a_match(league: League) -> list[tuple[str, str]]:
    """A played match's result, log and running state removed by hand and the match set back
    to pending: the store's ledger of recorded results still has it."""
    first = league.ids[0]
    league.sql("DELETE FROM results WHERE match_id = ?", first)
    league.sql("UPDATE matches SET state = 'pending', attempts = 0 WHERE match_id = ?", first)
    league.log(first).unlink()
    return [(first, "is gone from the store, and the match is pending again")]


def unschedule_a_match(league: League) -> list[tuple[str, str]]:
    """A match's row deleted by hand (foreign keys off), its result kept."""
    league.sql("PRAGMA foreign_keys=OFF")
    league.sql("DELETE FROM matches WHERE match_id = ?", league.ids[1])
    league.sql("PRAGMA foreign_keys=ON")
    return [(league.ids[1], "a result of a match the schedule does not have")]


def orphan_log(league: League) -> list[tuple[str, str]]:
    shutil.copy(league.log(league.ids[0]), league.logs / "extra.jsonl")
    return [("extra", "belongs to no result")]


def other_code(league: League) -> list[tuple[str, str]]:
    """A log whose header says seat 0 ran code other than the registry's (it still verifies)."""
    path = league.log(league.ids[0])
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seats"][0]["code_hash"] = "c" * 64
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return [(league.ids[0], "seat 0 (")]


def damage_summary(league: League) -> list[tuple[str, str]]:
    league.sql("UPDATE results SET summary = '{not json' WHERE match_id = ?", league.ids[0])
    return [(league.ids[0], "its summary is not JSON")]


def swap_seats(league: League) -> list[tuple[str, str]]:
    """The summary's seats swapped: the standings credit each bot with the other's series."""
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.seats',"
        " json_array(json_extract(summary, '$.seats[1]'), json_extract(summary, '$.seats[0]')))"
        " WHERE match_id = ?",
        league.ids[0],
    )
    return [(league.ids[0], "seats are")]


def change_hand_stats(league: League) -> list[tuple[str, str]]:
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.hand_stats[0].points', 999)"
        " WHERE match_id = ?",
        league.ids[0],
    )
    return [(league.ids[0], f"gin league restat {LEAGUE} recounts them")]


def add_a_fault(league: League) -> list[tuple[str, str]]:
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.faults',"
        ' json(\'[{"seat": 1, "kind": "timeout"}]\')) WHERE match_id = ?',
        league.ids[0],
    )
    return [(league.ids[0], "faults are 1 timeout by seat 1 in the store, none in its log")]


def flip_the_table_winner(league: League) -> list[tuple[str, str]]:
    """Only the results table's column, not the summary."""
    league.sql("UPDATE results SET winner = 1 - winner WHERE match_id = ?", league.ids[0])
    return [(league.ids[0], "the results table's winner is")]


def damage_the_end_column(league: League) -> list[tuple[str, str]]:
    league.sql("UPDATE results SET end = 'resigned' WHERE match_id = ?", league.ids[1])
    return [(league.ids[1], f"the store's result of match {league.ids[1]} cannot be read")]


def change_timing(league: League) -> list[tuple[str, str]]:
    """A seat's decision times (what the standings' ms columns show) changed in the store."""
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.stats[1].mean_ms', 0.5)"
        " WHERE match_id = ?",
        league.ids[0],
    )
    return [(league.ids[0], "stats is ")]


def change_hello(league: League) -> list[tuple[str, str]]:
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.hello[0]', 'impostor@9')"
        " WHERE match_id = ?",
        league.ids[1],
    )
    return [(league.ids[1], 'hello is ["impostor@9"')]


def change_seed(league: League) -> list[tuple[str, str]]:
    league.sql(
        "UPDATE results SET summary = json_set(summary, '$.seed', 1) WHERE match_id = ?",
        league.ids[0],
    )
    return [(league.ids[0], "seed is 1 in the store")]


def edit_header(league: League, match_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = league.log(match_id)
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    change(header)
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))


def other_bot_seeds(league: League) -> list[tuple[str, str]]:
    """The log says its bots were given other seeds (it still verifies on its own)."""
    edit_header(league, league.ids[0], lambda header: header.update(bot_seeds=[1, 2]))
    return [(league.ids[0], "its bots were given seeds [1, 2], not the")]


def no_bot_seeds(league: League) -> list[tuple[str, str]]:
    edit_header(league, league.ids[1], lambda header: header.pop("bot_seeds"))
    return [(league.ids[1], "its log's header gives its bots no seeds")]


Tamper = Callable[[League], list[tuple[str, str]]]
TAMPERS: dict[str, Tamper] = {
    "winners-flipped": flip_winners,
    "result-copied": copy_result,
    "result-copied-to-a-pending-match": copy_result_to_a_pending_match,
    "result-deleted": delete_result,
    "logs-swapped": swap_logs,
    "log-removed": remove_a_log,
    "orphan-log": orphan_log,
    "match-unplayed": unplay_a_match,
    "match-unscheduled": unschedule_a_match,
    "other-code": other_code,
    "summary-damaged": damage_summary,
    "seats-swapped": swap_seats,
    "hand-stats-changed": change_hand_stats,
    "fault-added": add_a_fault,
    "table-winner-flipped": flip_the_table_winner,
    "end-column-damaged": damage_the_end_column,
    "timing-changed": change_timing,
    "hello-changed": change_hello,
    "seed-changed": change_seed,
    "bot-seeds-changed": other_bot_seeds,
    "bot-seeds-removed": no_bot_seeds,
}


# --- the tests ---------------------------------------------------------------------------------


def test_a_clean_league_verifies(league: League) -> None:
    report = league.audit()
    assert report == AuditReport(2, 2, (), (), ((MatchState.DONE, 2),))
    assert report.ok
    assert verify() == (0, "2 of 2 match logs verified; 2 scheduled: 2 done")


def test_verify_and_status_count_the_schedule_alike(league: League) -> None:
    """A match not played yet is no mismatch, but verify says it is scheduled and not verified,
    in the counts ``gin league status`` gives; once the match was recorded, removing its result
    is a mismatch for both."""
    second = league.ids[1]
    league.sql("DELETE FROM results WHERE match_id = ?", second)
    league.sql("DELETE FROM recorded WHERE match_id = ?", second)  # as if never recorded
    league.sql("UPDATE matches SET state = 'pending' WHERE match_id = ?", second)
    assert verify() == (0, "1 of 1 match logs verified; 2 scheduled: 1 pending, 1 done")
    status = json.loads(CliRunner().invoke(app, ["league", "status", LEAGUE, "--json"]).stdout)
    ran = CliRunner().invoke(app, ["league", "verify", LEAGUE, "--json"])
    document = json.loads(ran.output)
    assert ran.exit_code == 0
    counted = {state: n for state, n in status["counts"].items() if n}
    assert document["scheduled"] == counted == {"pending": 1, "done": 1}
    assert status["unrecorded"] == []
    unplay_a_match(league)
    status = json.loads(CliRunner().invoke(app, ["league", "status", LEAGUE, "--json"]).stdout)
    assert status["unrecorded"] == [league.ids[0]]
    code, output = verify()
    assert code == 1
    assert output.endswith(
        "0 of 0 match logs verified; 2 scheduled: 2 pending; 1 mismatch in the store"
    )


def test_a_store_from_before_the_ledger_gets_one_entry_per_result(league: League) -> None:
    """The ledger is filled from the results once, when a store without it is opened."""
    league.sql("DROP TABLE recorded")
    league.sql("DELETE FROM meta WHERE key = 'ledger'")
    league.store.close()
    store = league.arena.open_store()
    rows = store.db.execute("SELECT match_id FROM recorded ORDER BY match_id").fetchall()
    assert [row["match_id"] for row in rows] == sorted(league.ids)
    store.db.execute("DELETE FROM results WHERE match_id = ?", (league.ids[0],))
    store.close()
    reopened = league.arena.open_store()  # not filled again: the removed result stays lost
    assert reopened.lost_results(LEAGUE)[0][0] == league.ids[0]


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
def test_each_disagreement_is_found_by_match_id(league: League, tamper: Tamper) -> None:
    expected = tamper(league)
    report = league.audit()
    assert not report.ok
    for match_id, phrase in expected:
        found = [item.what for item in report.discrepancies if item.match_id == match_id]
        assert any(phrase in what for what in found), (match_id, phrase, report.discrepancies)


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
def test_verify_exits_1_naming_the_match(league: League, tamper: Tamper) -> None:
    expected = tamper(league)
    code, output = verify()
    assert code == 1, output
    assert "mismatch" in output
    for match_id, _ in expected:
        assert match_id in output


def test_a_log_that_does_not_verify_is_still_counted_as_before(league: League) -> None:
    path = league.log(league.ids[1])
    lines = path.read_text().splitlines(keepends=True)
    deal = json.loads(lines[1])
    deal["commitment"] = "0" * 64  # the log no longer verifies; the store still says what it says
    path.write_text(lines[0] + json.dumps(deal) + "\n" + "".join(lines[2:]))
    report = league.audit()
    assert (report.results, report.verified) == (2, 1)
    (found,) = report.discrepancies
    assert found.match_id == league.ids[1]
    assert "does not verify: FAILED at line" in found.what
    code, output = verify()
    assert code == 1
    assert "1 of 2 match logs verified; 2 scheduled: 2 done; 1 mismatch in the store" in output


def test_set_aside_attempts_stderr_and_unfinished_matches_are_not_orphans(
    league: League,
) -> None:
    first, second = league.ids
    shutil.copy(league.log(first), league.log(first).with_name(f"{first}.jsonl.aborted-1"))
    stderr_path(league.log(first), 0).write_text("a bot's stderr\n")
    league.sql("DELETE FROM results WHERE match_id = ?", second)  # as if it were being played
    league.sql("DELETE FROM recorded WHERE match_id = ?", second)
    league.sql("UPDATE matches SET state = 'running' WHERE match_id = ?", second)
    running = ((MatchState.RUNNING, 1), (MatchState.DONE, 1))
    assert league.audit() == AuditReport(1, 1, (), (), running)
    league.store.mark(second, MatchState.FAILED, "its worker failed")  # its attempt's log stays
    failed = ((MatchState.DONE, 1), (MatchState.FAILED, 1))
    assert league.audit() == AuditReport(1, 1, (), (), failed)


def test_a_removed_bot_is_checked_by_its_kept_hash_and_a_lost_one_is_noted(
    league: League,
) -> None:
    assert league.store.remove_bot("south", "1")  # out of the registry, its hash kept
    report = league.audit()
    assert (report.ok, report.unchecked) == (True, ())
    assert verify() == (0, "2 of 2 match logs verified; 2 scheduled: 2 done")
    league.sql("DELETE FROM bots WHERE name = ?", "south")  # gone from the store altogether
    report = league.audit()
    assert report.ok
    assert {item.match_id for item in report.unchecked} == set(league.ids)
    assert all("south@1 is not in the registry" in item.what for item in report.unchecked)
    code, output = verify()
    assert code == 0
    assert output.startswith(f"not checked {league.ids[0]}: seat ")
    assert output.endswith("2 of 2 match logs verified; 2 scheduled: 2 done")


def test_a_match_recorded_while_verify_reads_is_no_mismatch(
    league: League, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = league.store.db.execute(
        "SELECT * FROM results WHERE match_id = ?", (league.ids[1],)
    ).fetchone()
    league.sql("DELETE FROM results WHERE match_id = ?", league.ids[1])
    league.sql("DELETE FROM recorded WHERE match_id = ?", league.ids[1])  # not recorded yet
    league.sql("UPDATE matches SET state = 'running' WHERE match_id = ?", league.ids[1])
    runner = Store(league.store.path)  # the league's runner, on a connection of its own
    listed = Store.matches

    def matches_then_a_result(store: Store, *args: Any, **kwargs: Any) -> list[MatchRow]:
        rows = listed(store, *args, **kwargs)
        with runner.transaction() as db:  # the running match ends between verify's two reads
            db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tuple(row))
            db.execute("INSERT INTO recorded VALUES (?, ?, ?)", (row[0], row[1], row[-1]))
            db.execute("UPDATE matches SET state = 'done' WHERE match_id = ?", (league.ids[1],))
        return rows

    monkeypatch.setattr(Store, "matches", matches_then_a_result)
    report = league.audit()
    assert report.discrepancies == ()  # the match as running, with no result yet: consistent
    assert report.results == 1
    runner.close()


def test_a_store_that_cannot_list_its_matches_is_an_error(league: League) -> None:
    league.sql("UPDATE matches SET state = 'paused' WHERE match_id = ?", league.ids[0])
    code, output = verify()
    assert code == 2
    assert f"the store's match {league.ids[0]} cannot be read" in output
