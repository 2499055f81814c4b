"""The league runner's logic, on the scripted executor and trio's mock clock: no processes, no
bots, instant. (Real leagues, with real bot processes: tests/test_league.py.)"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from referee.faults import Fault, FaultKind
from referee.match import MatchEnd
from tournaments import runner as runner_module
from tournaments.executors import ExecutorError
from tournaments.executors.fake import Attempt, FakeExecutor, played
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.league import LeagueConfig, LeagueError, create_league, extend_league
from tournaments.registry import Arena
from tournaments.runner import RETRIES, LeagueRunner, Progress, duplicate_pair
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow, Store

BOTS = ("a", "b", "c")


def league(tmp_path: Path, **changes: Any) -> tuple[Arena, Store, LeagueConfig]:
    """Three registered bots (never started), three pairings of two series: six matches, in
    three duplicate pairs."""
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    for index, name in enumerate(BOTS):
        digest = f"{index}" * 64
        row = BotRow(name, "1", digest, tmp_path / name, "", "", time.time() + index)
        store.add_bot(row)
    data: dict[str, Any] = {"name": "r", "seed": 1, "bots": list(BOTS), "series_per_pairing": 2}
    config = LeagueConfig.from_dict({**data, **changes})
    create_league(store, config)
    return arena, store, config


def run(
    arena: Arena, store: Store, config: LeagueConfig, executor: FakeExecutor, **options: Any
) -> Progress:
    runner = LeagueRunner(arena, store, config, executor.slots, executor=executor, **options)
    return trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))


def ids(store: Store, state: MatchState | None = None) -> list[str]:
    return [match.match_id for match in store.matches("r", state)]


def test_every_pending_match_is_played_once_and_recorded(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(2)
    progress = run(arena, store, config, executor)
    assert sorted(job.match_id for job in executor.jobs) == sorted(ids(store))
    assert store.counts("r") == {MatchState.DONE: 6}
    assert (progress.done, progress.finished_now, progress.failed, progress.total) == (6, 6, 0, 6)
    assert executor.closed
    jobs = {job.match_id: job for job in executor.jobs}
    for match, result in zip(store.matches("r"), store.results("r"), strict=True):
        job = jobs[match.match_id]
        assert result.match_id == match.match_id
        assert result.summary == played(job).summary  # as the executor gave it back
        assert (result.seats, result.duplicate_of) == (
            (match.seat0, match.seat1),
            match.duplicate_of,
        )
        assert (result.winner, result.end, result.reason) == (0, MatchEnd.COMPLETE, "scripted")
        assert result.log_path == job.log == str(arena.logs_dir("r") / f"{match.match_id}.jsonl")
        bots = [store.bot(*ident.split("@")) for ident in (match.seat0, match.seat1)]
        assert job.hashes == tuple(bot.hash for bot in bots if bot is not None)
        assert (job.seed, job.rules, job.time_control) == (
            match.seed,
            config.rules,
            config.time_control,
        )
    # Nothing is left to play: a second run starts no match.
    again = FakeExecutor(2)
    assert run(arena, store, config, again).done == 6
    assert again.jobs == []


def test_a_failing_worker_is_retried_then_the_match_is_marked_failed(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    broken, flaky = ids(store)[0], ids(store)[2]
    executor = FakeExecutor(2)
    executor.expect(broken, *[Attempt(WorkerFailure("exit 1: boom"))] * RETRIES)
    executor.expect(flaky, Attempt(WorkerFailure("exit 1: once")))
    progress = run(arena, store, config, executor)
    assert executor.started(broken) == RETRIES
    assert executor.started(flaky) == 2
    assert store.counts("r") == {MatchState.DONE: 5, MatchState.FAILED: 1}
    (failed,) = store.matches("r", MatchState.FAILED)
    assert (failed.match_id, failed.note, failed.attempts) == (broken, "exit 1: boom", RETRIES)
    assert (progress.done, progress.failed) == (5, 1)
    assert f"{broken}: worker failed: exit 1: boom" in progress.faults
    # The next run tries the failed match again.
    again = FakeExecutor(2)
    progress = run(arena, store, config, again)
    assert [job.match_id for job in again.jobs] == [broken]
    assert (progress.done, progress.failed) == (6, 0)
    assert store.counts("r") == {MatchState.DONE: 6}


def test_the_legs_of_a_duplicate_pair_never_run_at_once(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(6)  # slots for every match: only the pairs hold legs back
    run(arena, store, config, executor)
    pairs = {match.match_id: duplicate_pair(match) for match in store.matches("r")}
    assert len(set(pairs.values())) == 3
    together = [
        (one.match_id, other.match_id)
        for one, other in itertools.combinations(executor.spans, 2)
        if pairs[one.match_id] == pairs[other.match_id] and one.overlaps(other)
    ]
    assert together == []
    assert executor.peak == 3  # one leg of each pair at once: the other pairs went ahead
    assert store.counts("r") == {MatchState.DONE: 6}


def test_a_leg_waiting_for_its_mirror_holds_no_slot(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(2)  # six matches of 1 s, in three pairs, on two slots
    run(arena, store, config, executor)
    # Both slots busy throughout: a leg that took a slot before its pair's lock would leave one
    # idle while its mirror plays, from the start (the first two to ask are a pair's legs).
    assert sorted(span.started for span in executor.spans) == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]
    assert max(span.ended for span in executor.spans) == 3.0
    assert executor.peak == 2
    assert store.counts("r") == {MatchState.DONE: 6}


def twin_result(store: Store, job: MatchJob) -> ResultRow:
    """The result of ``job``'s match as another task playing it too would record it."""
    (match,) = [m for m in store.matches("r") if m.match_id == job.match_id]
    summary = played(job, winner=1).summary
    seats = (match.seat0, match.seat1)
    return ResultRow(
        job.match_id, "r", 1, MatchEnd.COMPLETE, "twin", summary, job.log, seats, match.duplicate_of
    )


def test_a_match_with_a_result_is_not_played_or_counted_again(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    first = ids(store)[0]
    job = MatchJob(
        first, 0, ("", ""), ("", ""), config.rules, config.time_control, config.fault_policy, "l"
    )
    assert store.record_result(twin_result(store, job))
    executor = FakeExecutor(2)
    progress = run(arena, store, config, executor)
    assert first not in [job.match_id for job in executor.jobs]
    assert (progress.done, progress.finished_now) == (6, 5)
    assert len(store.results("r")) == 6
    assert store.counts("r") == {MatchState.DONE: 6}


def test_a_second_result_of_a_match_is_refused_and_not_counted(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    twinned = ids(store)[2]

    def record_a_twin(job: MatchJob) -> None:  # as another task playing it would, meanwhile
        if job.match_id == twinned:
            assert store.record_result(twin_result(store, job))

    executor = FakeExecutor(2, on_start=record_a_twin)
    progress = run(arena, store, config, executor)
    assert executor.started(twinned) == 1
    # The runner counts the results it wrote: the twin's is not counted a second time.
    assert (progress.done, progress.finished_now) == (5, 5)
    assert len(store.results("r")) == 6
    assert store.counts("r") == {MatchState.DONE: 6}
    stored = store.result(twinned)
    assert stored is not None
    assert (stored.reason, stored.winner) == ("twin", 1)  # the first result written stays


def test_ctrl_c_leaves_the_unfinished_matches_pending(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(3, seconds=lambda _job: 10.0)  # a leg of each pair starts at once
    for leg in ids(store)[2:4]:  # either leg of a pair may go first
        executor.expect(leg, Attempt(KeyboardInterrupt(), seconds=1.0))
    with pytest.raises(KeyboardInterrupt):
        run(arena, store, config, executor)
    # The Ctrl-C came 1 s in; the other pairs' first legs, scripted for 10 s, were stopped then.
    (interrupted,) = [span for span in executor.spans if span.match_id in ids(store)[2:4]]
    assert (interrupted.started, interrupted.ended) == (0.0, 1.0)
    stopped = [span for span in executor.spans if span is not interrupted]
    assert [(span.started, span.ended) for span in stopped] == [(0.0, 1.0)] * 2
    assert store.counts("r") == {MatchState.PENDING: 6}  # nothing left running
    assert executor.closed


def test_a_cancelled_run_leaves_the_unfinished_matches_pending(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(2)
    scope = trio.CancelScope()

    def cancel_at_four(progress: Progress) -> None:
        if progress.done == 4:
            scope.cancel()

    runner = LeagueRunner(arena, store, config, 2, executor=executor, listener=cancel_at_four)

    async def until_cancelled() -> None:
        with scope:
            await runner.run()

    trio.run(until_cancelled, clock=trio.testing.MockClock(autojump_threshold=0))
    counts = store.counts("r")
    assert counts == {MatchState.DONE: 4, MatchState.PENDING: 2}
    assert runner.progress.done == 4
    assert executor.closed


def test_a_lost_executor_stops_the_league_resumably(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    with pytest.raises(ExecutorError, match="the fake cluster is gone") as caught:
        run(arena, store, config, FakeExecutor(2, lost_after=2))
    assert type(caught.value) is ExecutorError  # the error itself, not a group of them
    counts = store.counts("r")
    assert set(counts) == {MatchState.DONE, MatchState.PENDING}
    assert counts[MatchState.DONE] == 2
    left = ids(store, MatchState.PENDING)
    again = FakeExecutor(2)
    assert run(arena, store, config, again).done == 6
    assert sorted(job.match_id for job in again.jobs) == sorted(left)


def test_the_listener_sees_the_progress(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    seen: list[tuple[int, int, tuple[str, ...]]] = []

    def listen(progress: Progress) -> None:
        seen.append((progress.done, progress.failed, tuple(sorted(progress.running))))

    broken = ids(store)[4]
    executor = FakeExecutor(2)
    executor.expect(broken, *[Attempt(WorkerFailure("exit 1: boom"))] * RETRIES)
    progress = run(arena, store, config, executor, listener=listen)
    assert seen[0] == (0, 0, ())  # at once, before any match: the display shows the league
    assert len(seen[1][2]) == 1  # then the first match started
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
    assert seen[-1][:2] == (5, 1)
    assert {match for _, _, running in seen for match in running} == set(ids(store))
    assert max(len(running) for _, _, running in seen) == 2
    assert (progress.total, progress.done, progress.failed, progress.finished_now) == (6, 5, 1, 5)
    assert progress.running == {}
    assert len(progress.durations) == 5
    assert progress.eta_s() == 0


def test_a_matchs_faults_reach_the_progress_display(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    match = store.matches("r")[0]  # a@1 against b@1
    log = arena.logs_dir("r") / f"{match.match_id}.jsonl"
    job = LeagueRunner(arena, store, config, 1, executor=FakeExecutor(1))._job(match, log)
    outcome = played(job)
    fault = Fault(1, FaultKind.TIMEOUT, "no answer within 2000 ms")
    faulted = dataclasses.replace(
        outcome,
        summary=dataclasses.replace(
            outcome.summary, result=dataclasses.replace(outcome.summary.result, faults=(fault,))
        ),
    )
    executor = FakeExecutor(2)
    executor.expect(match.match_id, Attempt(faulted))
    progress = run(arena, store, config, executor)
    assert list(progress.faults) == ["b@1: timeout: no answer within 2000 ms"]
    assert progress.done == 6


def test_the_runner_follows_the_executors_capacity(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path, duplicate=False)
    executor = FakeExecutor(1, seconds=lambda _job: 12.0, capacities=[3])
    progress = run(arena, store, config, executor)
    assert executor.peak == 3
    assert progress.slots == 3
    assert store.counts("r") == {MatchState.DONE: 6}


def test_what_the_sweep_took_is_reported(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    progress = run(arena, store, config, FakeExecutor(2, swept=(2,)))
    assert "swept 2 jail(s) of killed referees" in progress.faults
    assert progress.done == 6


# --- what crosses to a worker and back ------------------------------------------------------


def test_a_job_and_an_outcome_read_back_as_written(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    runner = LeagueRunner(arena, store, config, 1, strict=True, executor=FakeExecutor(1))
    job = runner._job(store.matches("r")[1], tmp_path / "log.jsonl")
    assert MatchJob.from_json(job.to_json()) == job
    assert job.strict
    outcome = played(job, winner=None)
    assert MatchOutcome.from_json(outcome.to_json()) == outcome


# --- stopping early: a match's sequential test, a caller's condition ----------------------------


class FirstBotWins(FakeExecutor):
    """Bot ``a`` wins every series, whichever seat it has."""

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        outcome = await super().play(job, sent=sent)
        if isinstance(outcome, WorkerFailure):
            return outcome
        return played(job, winner=0 if job.hashes[0] == "0" * 64 else 1)


SPRT = {"elo0": 0.0, "elo1": 100.0}
"""Twelve pairs won 2-0 accept H1 (eleven do not)."""


def match_league(tmp_path: Path) -> tuple[Arena, Store, LeagueConfig]:
    """a against b in 30 duplicate pairs, with a sequential test."""
    return league(tmp_path, bots=["a", "b"], series_per_pairing=60, sprt=SPRT)


def test_a_decided_test_starts_no_new_match_and_lets_the_running_ones_finish(
    tmp_path: Path,
) -> None:
    arena, store, config = match_league(tmp_path)
    executor = FirstBotWins(3)
    seen: list[tuple[int, int]] = []

    def at_the_stop(progress: Progress) -> None:
        if progress.stopped and not seen:
            seen.append((progress.done, len(executor.running)))

    runner = LeagueRunner(arena, store, config, 3, executor=executor, listener=at_the_stop)
    progress = trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert config.sprt is not None
    assert runner.decision is not None
    assert runner.decision.verdict == "H1"
    assert runner.decision.pairs == 12  # as soon as the test decided: 11 pairs did not
    done_then, running_then = seen[0]
    assert running_then <= 2
    # No match started after the decision; the ones running then were finished and recorded.
    assert len(executor.jobs) == done_then + running_then == progress.done
    assert store.counts("r")[MatchState.DONE] == progress.done
    # The matches it will never play are dropped (its bots can be removed); the decision kept.
    assert store.counts("r") == {MatchState.DONE: progress.done}
    assert store.decision("r") is not None
    assert progress.stopped
    # The tally counts complete pairs only; a half-played pair is left for a later run.
    tally = runner.tally
    assert tally is not None
    done = {result.match_id for result in store.results("r")}
    complete = [
        m for m in store.matches("r") if m.duplicate_of and {m.match_id, m.duplicate_of} <= done
    ]
    assert tally.counts == (0, 0, 0, 0, len(complete))
    assert tally.series == progress.done


def test_a_decided_match_plays_nothing_more_when_run_again(tmp_path: Path) -> None:
    arena, store, config = match_league(tmp_path)
    run(arena, store, config, FirstBotWins(3))
    before = store.counts("r")
    again = FirstBotWins(3)
    progress = run(arena, store, config, again)
    assert again.jobs == []
    assert progress.stopped
    assert store.counts("r") == before


def test_a_decision_is_kept_whatever_finishes_after_it(tmp_path: Path) -> None:
    """Pairs that finish after the test decided (they were running then) never reverse it: a
    second run keeps the first decision and plays nothing, even where the pairs now in the
    store would no longer decide, or decide otherwise."""
    arena, store, config = match_league(tmp_path)
    first = LeagueRunner(arena, store, config, 3, executor=FirstBotWins(3))
    trio.run(first.run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert first.decision is not None
    assert first.decision.verdict == "H1"
    store.db.execute(  # as if every pair had been lost after all
        "UPDATE results SET summary = json_set(summary, '$.winner', 1 - json_extract(summary,"
        " '$.winner'))"
    )
    again = FirstBotWins(3)
    second = LeagueRunner(arena, store, config, 3, executor=again)
    progress = trio.run(second.run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert again.jobs == []
    assert progress.stopped
    assert second.decision == first.decision
    with pytest.raises(LeagueError, match="is decided"):
        extend_league(store, "r", 10)


def test_without_a_decision_the_run_plays_every_match(tmp_path: Path) -> None:
    arena, store, config = league(
        tmp_path, bots=["a", "b"], series_per_pairing=8, sprt={"elo0": 0.0, "elo1": 5.0}
    )
    progress = run(arena, store, config, FirstBotWins(2))
    assert (progress.done, progress.stopped) == (8, False)


def test_a_callers_condition_stops_the_run(tmp_path: Path) -> None:
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(2)
    runner = LeagueRunner(arena, store, config, 2, executor=executor)
    runner.stop = lambda: runner.progress.done >= 3
    progress = trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert progress.stopped
    assert 3 <= progress.done == len(executor.jobs) <= 4  # the third, and one running with it
    assert store.counts("r")[MatchState.PENDING] == 6 - progress.done


def test_two_runners_at_once_never_play_a_match_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each match is claimed in the store before it starts, so two runners on one store play
    every match once between them, even without the league lock (which keeps them apart on one
    machine: here it is taken away, as for two machines sharing a store)."""
    arena, store, config = league(tmp_path)
    monkeypatch.setattr(runner_module, "_league_lock", lambda *_args: contextlib.nullcontext())
    executors = [FakeExecutor(2), FakeExecutor(2)]
    stores = [store, arena.open_store()]

    async def both() -> None:
        async with trio.open_nursery() as nursery:
            for executor, own in zip(executors, stores, strict=True):
                runner = LeagueRunner(arena, own, config, 2, executor=executor)
                nursery.start_soon(runner.run)

    trio.run(both, clock=trio.testing.MockClock(autojump_threshold=0))
    played_ids = [job.match_id for executor in executors for job in executor.jobs]
    assert sorted(played_ids) == sorted(ids(store))  # each once, between the two
    assert all(executor.jobs for executor in executors)  # both did play
    assert store.counts("r") == {MatchState.DONE: 6}
    assert len(store.results("r")) == 6


def test_a_dead_workers_jails_are_swept_by_the_runner_at_once(tmp_path: Path) -> None:
    """A worker that dies leaves its jails; the runner sweeps after the failure, not only at the
    next run."""
    arena, store, config = league(tmp_path)
    executor = FakeExecutor(2, swept=(0, 3))  # nothing at the start; three after the failure
    first = ids(store)[0]
    executor.expect(first, Attempt(WorkerFailure("worker killed")))
    progress = run(arena, store, config, executor)
    assert "swept 3 jail(s) of killed referees" in progress.faults
    assert progress.done == 6


def test_the_runner_holds_a_window_of_the_league_not_the_league(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending matches are read from the store as slots free up: at every start, the runner has
    taken no more than its window ahead of the matches started (a league of two million series
    once held 1.7 GiB and took 22 s to stop on Ctrl-C)."""
    arena, store, config = league(tmp_path, series_per_pairing=200)  # 600 matches
    taken: list[str] = []
    ahead: list[int] = []
    reading = store.pending

    def counted(league_name: str, page: int = 1000) -> Iterator[MatchRow]:
        for match in reading(league_name, page):
            taken.append(match.match_id)
            yield match

    monkeypatch.setattr(store, "pending", counted)
    started: list[str] = []

    def on_start(job: MatchJob) -> None:
        started.append(job.match_id)
        ahead.append(len(taken) - len(started))

    executor = FakeExecutor(2, on_start=on_start)
    run(arena, store, config, executor)
    assert store.counts("r") == {MatchState.DONE: 600}
    assert len(executor.jobs) == 600
    window = runner_module.AHEAD_PER_SLOT * 2
    assert max(ahead) <= window + 3  # the next pair is read to know where one ends
    assert len(taken) == 600


def test_the_window_grows_with_the_executor(tmp_path: Path) -> None:
    """A cluster that grows from one slot to eight gets eight matches at once: the window onto
    the pending matches follows the capacity, not the slots there were at the start."""
    arena, store, config = league(tmp_path, series_per_pairing=10, duplicate=False)
    executor = FakeExecutor(1, capacities=[8], seconds=lambda _job: 60.0)
    run(arena, store, config, executor)
    assert executor.peak == 8
    assert store.counts("r") == {MatchState.DONE: 30}


def test_a_league_too_large_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    _, store, _ = league(tmp_path)
    huge = LeagueConfig.from_dict(
        {"name": "huge", "bots": list(BOTS), "series_per_pairing": 2_000_000}
    )
    with pytest.raises(LeagueError, match="would have 6,000,000 matches; the limit is 250,000"):
        create_league(store, huge)
    assert "huge" not in store.leagues()


def test_a_full_disk_stops_the_run_cleanly_and_resumably(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home's disk filling up mid-run stops the run before the next match with one message
    (the CLI prints it and how to resume); nothing recorded is lost and a later run plays the
    rest."""
    arena, store, config = league(tmp_path)
    real = shutil.disk_usage
    started: list[str] = []

    def filling(path: object) -> Any:
        usage = real(path)  # type: ignore[arg-type]
        return usage._replace(free=0) if len(started) >= 2 else usage

    monkeypatch.setattr(shutil, "disk_usage", filling)
    executor = FakeExecutor(2, on_start=lambda job: started.append(job.match_id))
    with pytest.raises(ExecutorError, match=r"the disk of .* is full \(0 KiB free\): free some"):
        run(arena, store, config, executor)
    counts = store.counts("r")
    assert counts[MatchState.DONE] == len(started) == 2
    assert counts[MatchState.PENDING] == 4
    monkeypatch.setattr(shutil, "disk_usage", real)
    assert run(arena, store, config, FakeExecutor(2)).done == 6


def test_a_store_write_that_finds_the_disk_full_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena, store, config = league(tmp_path)

    def full(_row: ResultRow) -> bool:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "record_result", full)
    with pytest.raises(ExecutorError, match="is full \\(database or disk is full\\)"):
        run(arena, store, config, FakeExecutor(2))
    assert store.counts("r") == {MatchState.PENDING: 6}  # the claimed ones were put back


def test_a_full_disk_that_stops_even_the_put_back_is_still_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a really full disk the store cannot put the running matches back either: the run
    still ends with its one disk-full error, and the next run puts them back first."""
    arena, store, config = league(tmp_path)

    def full(*_args: object, **_kwargs: object) -> bool:
        raise sqlite3.OperationalError("database or disk is full")

    resets = store.reset_running
    monkeypatch.setattr(store, "record_result", full)
    calls: list[int] = []

    def failing_put_back(league_name: str, *, retry_failed: bool = False) -> int:
        calls.append(1)
        if len(calls) > 1:  # the start of the run works; the put-back at its end does not
            raise sqlite3.OperationalError("database or disk is full")
        return resets(league_name, retry_failed=retry_failed)

    monkeypatch.setattr(store, "reset_running", failing_put_back)
    with pytest.raises(ExecutorError, match="is full"):
        run(arena, store, config, FakeExecutor(2))
    assert MatchState.RUNNING in store.counts("r")  # left for the next run
    monkeypatch.undo()
    assert run(arena, store, config, FakeExecutor(2)).done == 6


def test_a_bot_removed_behind_a_running_leagues_back_stops_it_with_what_to_do(
    tmp_path: Path,
) -> None:
    """Not a trio ExceptionGroup traceback: one error saying what to do, the league resumable."""
    arena, store, config = league(tmp_path)
    store.db.execute("UPDATE bots SET removed = 1 WHERE name = 'c'")
    with pytest.raises(ExecutorError, match=r"bot c@1 of match .* is no longer in the registry"):
        run(arena, store, config, FakeExecutor(2))
    assert MatchState.RUNNING not in store.counts("r")


def test_a_decided_match_drops_what_a_killed_run_left_behind(tmp_path: Path) -> None:
    """A run killed after the decision may leave a match running; the next run puts it back
    and then drops it, so the decided match holds no pending row (its bots can be removed)."""
    arena, store, config = match_league(tmp_path)
    run(arena, store, config, FirstBotWins(3))
    store.db.execute(  # a match that was running, without a result, when the run was killed
        "INSERT INTO matches (match_id, league, pairing, series_index, seat0, seat1, seed,"
        " duplicate_of, state) SELECT 'r~killed', league, pairing, 999, seat0, seat1, seed,"
        " NULL, 'running' FROM matches LIMIT 1"
    )
    again = FirstBotWins(3)
    run(arena, store, config, again)
    assert again.jobs == []
    assert MatchState.PENDING not in store.counts("r")
    assert MatchState.RUNNING not in store.counts("r")
    assert "r~killed" not in {match.match_id for match in store.matches("r")}
