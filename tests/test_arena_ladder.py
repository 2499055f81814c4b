"""The hosted arena's ladder: which pairing it plays next, and how it plays them (on the scripted
executor and trio's mock clock: no processes, no bots)."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.faults import Fault, FaultKind
from tournaments.arena.ladder import (
    FIRST_PAIRS,
    LADDER,
    SUSPEND_AFTER,
    Known,
    Ladder,
    choose_pairing,
    pairing_key,
)
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore, EntrantState
from tournaments.executors.fake import FakeExecutor, played
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.registry import Arena
from tournaments.runner import duplicate_pair
from tournaments.stats.standings import read_standings
from tournaments.store import BotRow, MatchState

# --- the choice ------------------------------------------------------------------------------


def test_fewer_than_two_bots_give_no_pairing() -> None:
    assert choose_pairing([], {}, {}, {}) is None
    assert choose_pairing(["a"], {}, {}, {}) is None


def test_a_new_bot_plays_first_whatever_the_rest() -> None:
    rng = random.Random(3)
    pairs = {"a": 40, "b": 40, "c": 40, "new": 0}
    for _ in range(50):
        chosen = choose_pairing(pairs, {}, pairs, {}, rng=rng)
        assert chosen is not None
        assert "new" in chosen


def test_close_ratings_and_wide_intervals_are_played_most() -> None:
    """Past their first pairs: a and b are close and uncertain, c and d far apart and known."""
    rng = random.Random(5)
    known = {
        "a": Known(10.0, 150.0),
        "b": Known(0.0, 150.0),
        "c": Known(600.0, 40.0),
        "d": Known(-600.0, 40.0),
    }
    pairs = dict.fromkeys(known, 10)
    chosen = Counter(choose_pairing(known, known, pairs, {}, rng=rng) for _ in range(2000))
    assert chosen.most_common(1)[0][0] == ("a", "b")
    assert chosen[("a", "b")] > 0.5 * 2000
    assert chosen[("c", "d")] < 0.02 * 2000


def test_a_bot_far_from_every_other_plays_little_however_wide_its_interval() -> None:
    """The last by far (one-sided interval: it lost every series) is settled: the three close
    bots play nearly every pair."""
    rng = random.Random(11)
    known = {
        "a": Known(20.0, 60.0),
        "b": Known(0.0, 60.0),
        "c": Known(-20.0, 60.0),
        "z": Known(-900.0, 300.0),
    }
    pairs = dict.fromkeys(known, 10)
    chosen = Counter(choose_pairing(known, known, pairs, {}, rng=rng) for _ in range(2000))
    with_z = sum(count for pairing, count in chosen.items() if pairing and "z" in pairing)
    assert with_z < 0.1 * 2000


def test_few_games_between_two_bots_count_for_them() -> None:
    """Four equal bots, a and b with many pairs between them already: the choice goes elsewhere."""
    rng = random.Random(7)
    known = dict.fromkeys("abcd", Known(0.0, 100.0))
    pairs = dict.fromkeys("abcd", 20)
    between = {pairing_key("a", "b"): 30}
    chosen = Counter(choose_pairing(known, known, pairs, between, rng=rng) for _ in range(1000))
    assert chosen[("a", "b")] < 0.05 * 1000
    assert sum(chosen.values()) == 1000


def test_a_pairing_in_flight_is_chosen_only_when_nothing_else_is_left() -> None:
    rng = random.Random(9)
    known = dict.fromkeys("abc", Known(0.0, 100.0))
    pairs = dict.fromkeys("abc", 10)
    busy = {pairing_key("a", "b"), pairing_key("a", "c")}
    for _ in range(200):
        chosen = choose_pairing(known, known, pairs, {}, busy=busy, rng=rng)
        assert chosen == ("b", "c") or (chosen is not None and "a" not in chosen)
    assert choose_pairing(["a", "b"], {}, pairs, {}, busy={"a|b"}, rng=rng) == ("a", "b")


# --- the ladder, scripted -----------------------------------------------------------------------


def home(tmp_path: Path, names: str = "abcd") -> tuple[Arena, ArenaStore]:
    arena = Arena(tmp_path / "home")
    store = ArenaStore(arena.store_path)
    for index, name in enumerate(names):
        store.add_bot(BotRow(name, "1", f"{index}" * 64, tmp_path / name, "", "", time.time()))
        store.enter(f"{name}@1", name)
    return arena, store


def seats_of(job: MatchJob) -> tuple[str, str]:
    """The idents of a job's seats (the test bots' folders are named after them)."""
    first, second = (f"{Path(folder).name}@1" for folder in job.bots)
    return first, second


class Scripted(FakeExecutor):
    """The fake executor, with outcomes made from each job's seats."""

    def __init__(
        self,
        slots: int,
        outcome: Callable[[MatchJob], MatchOutcome | WorkerFailure] = played,
    ) -> None:
        super().__init__(slots)
        self.outcome = outcome

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        await super().play(job, sent=sent)
        return self.outcome(job)


def run_ladder(
    arena: Arena,
    store: ArenaStore,
    executor: FakeExecutor,
    seconds: float,
    *,
    ready: Callable[[Ladder], None] = lambda _ladder: None,
) -> Ladder:
    """The ladder for ``seconds`` of trio time, then cancelled (as a stopped server cancels it)."""
    ladder = Ladder(arena, store, executor.slots, executor=executor, seed=1)
    ready(ladder)

    async def main() -> None:
        with trio.move_on_after(seconds):
            await ladder.run()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return ladder


def test_the_legs_of_a_pair_never_play_at_once_and_every_slot_stays_busy(
    tmp_path: Path,
) -> None:
    arena, store = home(tmp_path)
    executor = FakeExecutor(3)
    run_ladder(arena, store, executor, 100.5)
    matches = {match.match_id: match for match in store.matches(LADDER)}
    by_pair: dict[str, list[str]] = {}
    for match in matches.values():
        by_pair.setdefault(duplicate_pair(match), []).append(match.match_id)
    spans = {span.match_id: span for span in executor.spans}
    for legs in by_pair.values():
        assert len(legs) == 2  # scheduled as a pair, always
        if all(leg in spans for leg in legs):
            assert not spans[legs[0]].overlaps(spans[legs[1]])
    # three slots for 100 s of 1 s matches: every slot busy all the time
    assert len(executor.spans) >= 3 * 100
    assert executor.peak == 3
    done = store.matches(LADDER, MatchState.DONE)
    assert len(store.results(LADDER)) == len(done) >= 297
    assert {m.state for m in store.matches(LADDER)} <= {MatchState.DONE, MatchState.PENDING}


def test_a_pair_is_one_deal_with_the_seats_swapped(tmp_path: Path) -> None:
    arena, store = home(tmp_path, "ab")
    run_ladder(arena, store, FakeExecutor(1), 10.5)
    matches = store.matches(LADDER)
    assert len(matches) >= 10
    for first, second in zip(matches[::2], matches[1::2], strict=False):
        assert second.duplicate_of == first.match_id
        assert (second.seat0, second.seat1) == (first.seat1, first.seat0)
        assert second.seed == first.seed
    assert len({match.seed for match in matches}) == len(matches) // 2 + len(matches) % 2


def test_a_new_bot_gets_its_first_games_at_once(tmp_path: Path) -> None:
    arena, store = home(tmp_path, "abc")
    store.add_bot(BotRow("n", "1", "9" * 64, tmp_path / "n", "", "", time.time()))
    executor = FakeExecutor(2)
    entered: list[int] = []

    def enter_late(job: MatchJob) -> None:
        if len(executor.jobs) == 60 and not entered:
            store.enter("n@1", "n")
            entered.append(len(executor.jobs))

    executor.on_start = enter_late
    ladder = run_ladder(arena, store, executor, 80.5)
    assert entered
    order = list(executor.jobs)
    first = next(i for i, job in enumerate(order) if "n@1" in seats_of(job))
    # with two slots, two pairs (four legs) at most were already under way when it entered
    assert first - 60 <= 4
    later = order[first : first + 2 * FIRST_PAIRS * 2]
    assert sum("n@1" in seats_of(job) for job in later) >= 2 * FIRST_PAIRS
    assert ladder.pairs_done > 30


def test_a_bot_that_faults_in_every_recent_series_is_suspended(tmp_path: Path) -> None:
    arena, store = home(tmp_path, "abc")

    def crashing_c(job: MatchJob) -> MatchOutcome:
        outcome = played(job)
        seats = seats_of(job)
        if "c@1" not in seats:
            return outcome
        seat = seats.index("c@1")
        fault = Fault(seat, FaultKind.CRASH, "exited with status 1")
        summary = outcome.summary
        import dataclasses  # noqa: PLC0415

        return MatchOutcome(
            dataclasses.replace(
                summary,
                result=dataclasses.replace(summary.result, faults=(fault,), winner=1 - seat),
            ),
            outcome.reason,
        )

    executor = Scripted(2, crashing_c)
    run_ladder(arena, store, executor, 60.5)
    entrant = store.entrant("c@1")
    assert entrant is not None
    assert entrant.state is EntrantState.SUSPENDED
    assert f"last {SUSPEND_AFTER} series" in entrant.reason
    assert "crash (4)" in entrant.reason
    with_c = [i for i, job in enumerate(executor.jobs) if "c@1" in seats_of(job)]
    # suspended after its fourth series: at most the pairs already under way played on
    assert len(with_c) <= SUSPEND_AFTER + 2 * 2 + 1
    assert len(executor.jobs) > 3 * len(with_c)  # a and b played on
    for state in (EntrantState.ACTIVE,):
        assert {e.ident for e in store.entrants(state)} == {"a@1", "b@1"}


def test_one_fault_among_recent_series_does_not_suspend(tmp_path: Path) -> None:
    """Every first leg of c's pairs has a fault of c's: half its series, never all four recent."""
    arena, store = home(tmp_path, "abc")

    def sometimes(job: MatchJob) -> MatchOutcome:
        outcome = played(job)
        seats = seats_of(job)
        if "c@1" in seats and int(job.match_id[-3:]) % 2 == 0:
            fault = Fault(seats.index("c@1"), FaultKind.TIMEOUT, "no answer")
            import dataclasses  # noqa: PLC0415

            result = dataclasses.replace(outcome.summary.result, faults=(fault,))
            summary = dataclasses.replace(outcome.summary, result=result)
            return MatchOutcome(summary, outcome.reason)
        return outcome

    run_ladder(arena, store, Scripted(2, sometimes), 60.5)
    entrant = store.entrant("c@1")
    assert entrant is not None
    assert entrant.state is EntrantState.ACTIVE


def test_a_retired_bot_plays_no_new_pair(tmp_path: Path) -> None:
    arena, store = home(tmp_path, "abc")
    executor = FakeExecutor(1)

    def retire(job: MatchJob) -> None:
        if len(executor.jobs) == 10:
            store.set_entrant("c@1", EntrantState.RETIRED, "retired")

    executor.on_start = retire
    run_ladder(arena, store, executor, 40.5)
    after = [seats_of(job) for job in executor.jobs[12:]]  # its pair under way finishes
    assert after
    assert all("c@1" not in seats for seats in after)


def test_a_killed_server_s_legs_are_played_first_and_nothing_counts_twice(
    tmp_path: Path,
) -> None:
    arena, store = home(tmp_path)
    run_ladder(arena, store, FakeExecutor(2), 20.5)
    before = {r.match_id for r in store.results(LADDER)}
    pending = [m.match_id for m in store.matches(LADDER, MatchState.PENDING)]
    assert pending  # the pairs under way when it stopped
    # a killed server leaves its matches running; one of them was even recorded already
    for match_id in pending:
        store.claim(match_id)
    again = FakeExecutor(2)
    run_ladder(arena, store, again, 20.5)
    first = [job.match_id for job in again.jobs[: len(pending)]]
    assert sorted(first) == sorted(pending)
    results = store.results(LADDER)
    ids = [r.match_id for r in results]
    assert len(ids) == len(set(ids))
    assert before <= set(ids)
    assert {m.state for m in store.matches(LADDER)} <= {MatchState.DONE, MatchState.PENDING}
    # series indices went on from the store: no match id was made twice
    assert len(store.matches(LADDER)) == len({m.match_id for m in store.matches(LADDER)})
    standings = read_standings(store, LADDER)
    assert standings.series == len(results)


@pytest.mark.parametrize("bots", ["ab", "abcdef"])
def test_every_active_pairing_gets_played(tmp_path: Path, bots: str) -> None:
    arena, store = home(tmp_path, bots)
    run_ladder(arena, store, FakeExecutor(2), 120.5)
    played_pairings = {m.pairing for m in store.matches(LADDER, MatchState.DONE)}
    wanted = {pairing_key(f"{a}@1", f"{b}@1") for a in bots for b in bots if a < b}
    assert played_pairings == wanted


def test_a_ladder_that_fails_stops_alone_and_says_why(tmp_path: Path) -> None:
    """A lost cluster (or a full disk) stops the ladder; the service, and its pages, go on."""
    arena, store = home(tmp_path, "ab")
    executor = FakeExecutor(1, lost_after=3, seconds=lambda _job: 0.05)
    service = ArenaService(arena, store, jobs=1, executor=executor, seed=1)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            with trio.fail_after(30):
                while not service.ladder_error:
                    await trio.sleep(0.05)
                service.want_board()  # the rest of the service is still up
                while service.board.series < 2:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert service.ladder_error == "the ladder stopped: the fake cluster is gone"
    assert [event.kind for event in service.events.recent].count("stopped") == 1


def test_no_new_pair_starts_while_the_ladder_is_held_and_play_resumes_after(
    tmp_path: Path,
) -> None:
    """An upload's check holds the ladder: the pairs under way finish, none starts, until the
    hold ends."""
    arena, store = home(tmp_path)
    executor = FakeExecutor(2)
    ladder = Ladder(arena, store, executor.slots, executor=executor, seed=1)
    marks: dict[str, tuple[int, set[str]]] = {}

    async def hold() -> None:
        await trio.sleep(10.5)
        with ladder.holding():
            marks["held"] = (len(executor.jobs), {m.match_id for m in store.matches(LADDER)})
            with ladder.holding():  # holds nest: the outer one still holds after this
                await trio.sleep(5)
            await trio.sleep(15)
            assert not executor.running  # the pairs under way finished
            marks["released"] = (len(executor.jobs), {m.match_id for m in store.matches(LADDER)})

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hold)
            with trio.move_on_after(50):
                await ladder.run()
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    started, scheduled = marks["held"]
    stopped, scheduled_after = marks["released"]
    assert scheduled_after == scheduled  # no pair was scheduled while held
    during = executor.jobs[started:stopped]
    assert {job.match_id for job in during} <= scheduled  # only legs of pairs under way
    assert len(during) <= 2  # the second legs of the two pairs in flight, at most
    assert started >= 2 * 10
    resumed = executor.jobs[stopped:]
    assert len(resumed) >= 2 * 18  # both slots busy again for the last 20 s


def test_a_bot_removed_from_the_registry_is_not_paired_and_its_legs_wait(tmp_path: Path) -> None:
    """Removed behind the ladder's back (by hand, or by an older gin): the ladder plays on
    without it, rather than stopping on a job it cannot make."""
    arena, store = home(tmp_path, "abc")
    run_ladder(arena, store, FakeExecutor(2), 10.5)
    store.reset_running(LADDER)
    left = [m for m in store.matches(LADDER, MatchState.PENDING) if "c@1" in (m.seat0, m.seat1)]
    store.remove_bot("c", "1")
    again = FakeExecutor(2)
    ladder = run_ladder(arena, store, again, 20.5)
    assert again.jobs
    assert all("c@1" not in seats_of(job) for job in again.jobs)
    for match in left:
        found = store.match(match.match_id)
        assert found is not None
        assert found.state is MatchState.PENDING
    assert ladder.pairs_done > 5
