"""Standings and verify at scale, as ``benchmarks/scale_bench.py`` measures them: the same
answers as before they were made fast, and reads that do not grow a query per result.

``tests/golden/scale_standings.json`` holds what the code gave before (standings as JSON and
CSV, verify's verdicts on a clean and on a tampered league) on the benchmark's synthetic leagues;
the synthetic results follow from the match ids alone, so they are the same in every store.
"""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.scale_bench import (
    LEAGUE,
    standings_of,
    synthetic_league,
    synthetic_logs,
    verify_of,
)
from tournaments.audit import audit
from tournaments.registry import Arena
from tournaments.store import Store, StoreDamaged

GOLDEN = Path(__file__).parent / "golden" / "scale_standings.json"
RECORDED = re.compile(r"recorded \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
"""When a removed result was recorded, as verify says it: another time in every run."""


def tamper(arena: Arena, store: Store) -> None:
    """Winner flipped in the table, a result deleted, hand statistics and seats changed, two
    results sharing a log, a stray log, a bot whose hash no longer matches."""
    ids = [match.match_id for match in store.matches(LEAGUE)]
    sql = store.db.execute
    sql("UPDATE results SET winner = 1 - winner WHERE match_id = ?", (ids[0],))
    sql("DELETE FROM results WHERE match_id = ?", (ids[1],))
    sql(
        "UPDATE results SET summary = json_set(summary, '$.hand_stats[0].points', 999)"
        " WHERE match_id = ?",
        (ids[2],),
    )
    sql(
        "UPDATE results SET summary = json_set(summary, '$.seats', json('[\"x@1\",\"y@1\"]'))"
        " WHERE match_id = ?",
        (ids[3],),
    )
    sql(
        "UPDATE results SET log_path = (SELECT log_path FROM results WHERE match_id = ?)"
        " WHERE match_id = ?",
        (ids[5], ids[4]),
    )
    (arena.logs_dir(LEAGUE) / "stray.jsonl").touch()
    sql("UPDATE bots SET hash = 'f' WHERE name = 'bot01'")


def as_before(tmp_path: Path, bots: int, results: int) -> dict[str, Any]:
    """What the golden file holds for one synthetic league, computed now."""
    home = tmp_path / f"h{bots}"
    arena = synthetic_league(home, results, bots)
    store = arena.open_store()
    found: dict[str, Any] = {}
    standings = standings_of(store)
    key = f"{bots}x{results}"
    found[key] = standings.to_dict()
    found[f"{key} csv"] = standings.to_csv()
    found[f"{key} pairwise csv"] = standings.pairwise_csv()
    report = verify_of(store, arena)
    found[f"{key} verify"] = [report.results, report.verified, [], []]
    assert report.ok
    tamper(arena, store)
    report = verify_of(store, arena)
    found[f"{key} tampered verify"] = [
        report.results,
        report.verified,
        [
            RECORDED.sub("recorded TIME", str(item).replace(str(home), "HOME"))
            for item in report.discrepancies
        ],
        [str(item) for item in report.unchecked],
    ]
    store.close()
    normalised: dict[str, Any] = json.loads(json.dumps(found))  # lists, not tuples
    return normalised


def golden(*keys: str) -> dict[str, Any]:
    every = json.loads(GOLDEN.read_text())
    return {key: value for key, value in every.items() if key.split(" ")[0] in keys}


@pytest.mark.parametrize(("bots", "results"), [(3, 7), (5, 30)])
def test_standings_and_verdicts_are_those_of_before(
    tmp_path: Path, bots: int, results: int
) -> None:
    assert as_before(tmp_path, bots, results) == golden(f"{bots}x{results}")


@pytest.mark.slow
def test_a_larger_league_is_as_before(tmp_path: Path) -> None:
    assert as_before(tmp_path, 8, 600) == golden("8x600")


def statements(store: Store, call: Any) -> list[str]:
    """The SQL statements ``call`` runs on the store's connection."""
    ran: list[str] = []
    store.db.set_trace_callback(ran.append)
    try:
        call()
    finally:
        store.db.set_trace_callback(None)
    return ran


def test_standings_and_verify_read_a_league_in_as_many_queries_whatever_its_size(
    tmp_path: Path,
) -> None:
    counts = []
    for results in (6, 90):
        arena = synthetic_league(tmp_path / f"h{results}", results, 3)
        store = arena.open_store()
        counts.append(
            (
                len(statements(store, lambda store=store: standings_of(store))),
                len(statements(store, lambda s=store, a=arena: verify_of(s, a))),
            )
        )
        store.close()
    assert counts[0] == counts[1]
    assert counts[0][0] == 1  # the standings: one query


def test_a_log_linked_to_another_results_log_is_found_shared(tmp_path: Path) -> None:
    arena = synthetic_league(tmp_path / "home", 4, 2)
    store = arena.open_store()
    first, second = (match.match_id for match in store.matches(LEAGUE)[:2])
    logs = arena.logs_dir(LEAGUE)
    (logs / f"{second}.jsonl").unlink()
    os.symlink(logs / f"{first}.jsonl", logs / f"{second}.jsonl")
    report = verify_of(store, arena)
    shared = [item for item in report.discrepancies if "is also the log of" in item.what]
    assert [item.match_id for item in shared] == [second]


def test_logs_reached_through_a_linked_folder_are_no_orphans(tmp_path: Path) -> None:
    arena = synthetic_league(tmp_path / "home", 4, 2)
    store = arena.open_store()
    linked = tmp_path / "linked"
    os.symlink(arena.logs_dir(LEAGUE), linked)
    with synthetic_logs(store):
        report = audit(store, LEAGUE, linked)
    assert report.ok, report.discrepancies
    (linked / "stray.jsonl").touch()
    with synthetic_logs(store):
        report = audit(store, LEAGUE, linked)
    assert [item.match_id for item in report.discrepancies] == ["stray"]


def test_a_log_path_written_unnormalised_is_found_as_before(tmp_path: Path) -> None:
    arena = synthetic_league(tmp_path / "home", 1, 2)
    store = arena.open_store()
    (result,) = store.results(LEAGUE)
    stored = Path(result.log_path).relative_to(arena.home)
    odd = f"{stored.parent}/./{stored.name}"
    store.db.execute("UPDATE results SET log_path = ?", (odd,))
    (again,) = store.results(LEAGUE)
    assert again.log_path == result.log_path == str(arena.home / stored)
    store.db.execute("UPDATE results SET log_path = ?", (f"{stored.parent}/{stored.name}",))
    Path(result.log_path).unlink()  # not there: where the row says, in the home
    (gone,) = store.results(LEAGUE)
    assert gone.log_path == str(arena.home / stored)


def test_reading_a_league_leaves_the_collector_as_it_was(tmp_path: Path) -> None:
    arena = synthetic_league(tmp_path / "home", 2, 2)
    store = arena.open_store()
    store.results(LEAGUE)
    assert gc.isenabled()
    store.db.execute("UPDATE results SET summary = 'not json'")
    with pytest.raises(StoreDamaged):
        store.results(LEAGUE)
    assert gc.isenabled()
    gc.disable()  # off already: left off
    try:
        store.logged_results(LEAGUE)
        assert not gc.isenabled()
    finally:
        gc.enable()
