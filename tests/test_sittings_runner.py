"""How the runner cuts a league into sittings, on the scripted executor and trio's mock clock:
which series may share bot processes, in what order, and what never happens (both legs of one
duplicate pair in one sitting, or at once). The sittings played by real bots:
tests/test_sittings.py."""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio
import trio.testing

from tournaments.executors.fake import Attempt, FakeExecutor
from tournaments.formats.records import MatchJob, WorkerFailure
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena
from tournaments.runner import (
    SITTING_MAX,
    STOPPING_SITTING_MAX,
    LeagueRunner,
    blocks,
    duplicate_pair,
    pairs_in_order,
    sittings_of,
)
from tournaments.store import BotRow, MatchRow, MatchState, Store


def league(tmp_path: Path, bots: int = 3, series: int = 8, **changes: Any) -> tuple[Arena, Store]:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    names = [chr(ord("a") + index) for index in range(bots)]
    for index, name in enumerate(names):
        store.add_bot(BotRow(name, "1", f"{index}" * 64, tmp_path / name, "", "", time.time()))
    data: dict[str, Any] = {"name": "s", "seed": 1, "bots": names, "series_per_pairing": series}
    create_league(store, LeagueConfig.from_dict({**data, **changes}))
    return arena, store


def run(arena: Arena, store: Store, executor: FakeExecutor, **options: Any) -> LeagueRunner:
    config = LeagueConfig.from_dict(
        {
            "name": "s",
            "seed": 1,
            "bots": [bot.name for bot in store.bots()],
            "series_per_pairing": 8,
            **options.pop("config", {}),
        }
    )
    runner = LeagueRunner(arena, store, config, executor.slots, executor=executor, **options)
    trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))
    return runner


def by_sitting(jobs: list[MatchJob]) -> dict[str, list[MatchJob]]:
    sittings: defaultdict[str, list[MatchJob]] = defaultdict(list)
    for job in jobs:
        assert job.sitting, f"{job.match_id} was sent outside a sitting"
        sittings[job.sitting].append(job)
    return sittings


def matches(store: Store) -> dict[str, MatchRow]:
    return {match.match_id: match for match in store.matches("s")}


def test_a_sitting_never_holds_both_legs_of_a_pair_and_keeps_its_seats(tmp_path: Path) -> None:
    arena, store = league(tmp_path)
    executor = FakeExecutor(2, sittings=True)
    run(arena, store, executor)
    rows = matches(store)
    sittings = by_sitting(executor.jobs)
    assert len(executor.jobs) == len(rows) == 24
    for jobs in sittings.values():
        pairs = [duplicate_pair(rows[job.match_id]) for job in jobs]
        assert len(pairs) == len(set(pairs))  # one leg of each pair at most
        assert len({job.bots for job in jobs}) == 1  # the same bots in the same seats
        assert [job.sitting_ends for job in jobs] == [False] * (len(jobs) - 1) + [True]
    assert max(len(jobs) for jobs in sittings.values()) > 1  # sittings save start-ups
    assert store.counts("s") == {MatchState.DONE: 24}


def test_each_leg_meets_its_bots_after_as_many_series_as_its_mirror(tmp_path: Path) -> None:
    """The second legs play in the order of the first legs: a pair's legs are each the k-th
    series of their sitting."""
    arena, store = league(tmp_path)
    executor = FakeExecutor(2, sittings=True)
    run(arena, store, executor)
    rows = matches(store)
    place: dict[str, int] = {}
    for jobs in by_sitting(executor.jobs).values():
        for index, job in enumerate(jobs):
            place[job.match_id] = index
    for match in rows.values():
        if match.duplicate_of is not None:
            assert place[match.match_id] == place[match.duplicate_of]


def test_the_legs_of_a_pair_never_run_at_once_and_every_table_is_busy(tmp_path: Path) -> None:
    arena, store = league(tmp_path, bots=2, series=16)
    executor = FakeExecutor(2, sittings=True)
    run(arena, store, executor)
    rows = matches(store)
    together = [
        (one.match_id, other.match_id)
        for one, other in itertools.combinations(executor.spans, 2)
        if duplicate_pair(rows[one.match_id]) == duplicate_pair(rows[other.match_id])
        and one.overlaps(other)
    ]
    assert together == []
    # Eight pairs on two tables: two blocks of four pairs, each two sittings of four series.
    assert sorted(len(jobs) for jobs in by_sitting(executor.jobs).values()) == [4, 4, 4, 4]
    assert executor.peak == 2
    assert max(span.ended for span in executor.spans) == 8.0


def test_without_sittings_the_executor_gets_lone_series(tmp_path: Path) -> None:
    arena, store = league(tmp_path)
    executor = FakeExecutor(2)
    run(arena, store, executor)
    assert {(job.sitting, job.sitting_ends) for job in executor.jobs} == {("", True)}


def test_a_block_is_as_long_as_spreads_the_pairs_over_the_tables() -> None:
    def row(index: int, pairing: str, leg: int) -> MatchRow:
        first = f"{pairing}-{index}-0"
        seats = ("a", "b") if leg == 0 else ("b", "a")
        mirror = None if leg == 0 else first
        match_id = first if leg == 0 else f"{pairing}-{index}-1"
        return MatchRow(match_id, "s", pairing, index, *seats, 1, mirror, MatchState.PENDING, 0, "")

    pending = [row(index, "p", leg) for index in range(5) for leg in (0, 1)]
    pending += [row(0, "q", 0)]  # a lone first leg of another pairing
    cut = list(blocks(pairs_in_order(pending), 2))
    assert [[legs[0].match_id for legs in block] for block in cut] == [
        ["p-0-0", "p-1-0"],
        ["p-2-0", "p-3-0"],
        ["p-4-0"],
        ["q-0-0"],
    ]
    (first, second) = sittings_of(cut[0])
    assert [m.match_id for m in first] == ["p-0-0", "p-1-0"]
    assert [m.match_id for m in second] == ["p-0-1", "p-1-1"]
    # A resumed block: a second leg whose mirror is done, seated the other way round, sits
    # apart from the first legs.
    resumed = [[row(0, "p", 1)], [row(1, "p", 0), row(1, "p", 1)]]
    assert [[m.match_id for m in s] for s in sittings_of(resumed)] == [
        ["p-0-1"],
        ["p-1-0"],
        ["p-1-1"],
    ]
    assert STOPPING_SITTING_MAX < SITTING_MAX


def test_a_failed_series_is_retried_and_its_sitting_goes_on(tmp_path: Path) -> None:
    arena, store = league(tmp_path, bots=2, series=8)
    first = min(matches(store))
    executor = FakeExecutor(1, sittings=True)
    executor.expect(first, Attempt(WorkerFailure("exit 1: once")))
    run(arena, store, executor)
    assert executor.started(first) == 2
    assert store.counts("s") == {MatchState.DONE: 8}
