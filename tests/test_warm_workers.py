"""Warm workers (issue 19): a league's matches are played by a pool of long-lived worker
processes, each match with fresh jails and fresh bots; a worker that dies, speaks out of turn or
has played its quota is replaced; a match's close does not hold its worker."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from protocol.manifest import Manifest, ManifestError, load_manifest
from referee.control import TimeControl
from referee.local import code_hash, play_folders
from referee.match import MatchConfig
from referee.remote import Jail, RemoteSeat
from referee.rules import Action, GreedyPolicy
from referee.sandbox import Layer, Sandbox, sweep_jails
from referee.seats import Decision, InProcessSeat
from tournaments.executors.fake import played
from tournaments.executors.local import LocalExecutor, WarmWorker
from tournaments.executors.worker import Worker, WorkerLine
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "sample_bots" / "greedy"

# --- the worker's lines ---------------------------------------------------------------------------


def a_job(tmp_path: Path, match_id: str = "m~1") -> MatchJob:
    return MatchJob(
        match_id,
        7,
        (str(GREEDY), str(GREEDY)),
        ("0" * 64, "0" * 64),
        LeagueConfig.from_dict({"name": "x", "seed": 1, "bots": ["a@1", "b@1"]}).rules,
        TimeControl(),
        LeagueConfig.from_dict({"name": "x", "seed": 1, "bots": ["a@1", "b@1"]}).fault_policy,
        str(tmp_path / f"{match_id}.jsonl"),
    )


def test_each_kind_of_worker_line_reads_back_as_written(tmp_path: Path) -> None:
    outcome = played(a_job(tmp_path))
    for line in (
        WorkerLine("m~1", outcome=outcome),
        WorkerLine("m~1", interrupted=True),
        WorkerLine("m~1", failure="the code changed"),
        WorkerLine("m~1", closed=True),
    ):
        assert WorkerLine.from_json(line.to_json()) == line


@pytest.mark.parametrize(
    "text",
    [
        '{"match": "m"}',  # says nothing
        '{"match": "m", "closed": true, "interrupted": true}',  # says two things
        '{"closed": true}',  # of no match
        '["m", "closed"]',
        '{"match": "m", "outcome": {"summary": {"winner": 0}}}',  # not an outcome
        "noise",
    ],
)
def test_anything_else_is_not_a_worker_line(text: str) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        WorkerLine.from_json(text)


# --- the pool, with stand-in workers (no bots) ---------------------------------------------------

FAILING_WORKER = """
import json, os, sys
for text in sys.stdin:
    job = json.loads(text)
    reply = {"match": job["match_id"], "failure": f"scripted {os.getpid()}"}
    print(json.dumps(reply), flush=True)
"""


READ_ONE = "import sys\nsys.stdin.readline()\n"


def stand_in(script: str) -> tuple[str, ...]:
    return (sys.executable, "-c", script)


def play_all(executor: LocalExecutor, jobs: list[MatchJob]) -> list[MatchOutcome | WorkerFailure]:
    async def main() -> list[MatchOutcome | WorkerFailure]:
        try:
            return [await executor.play(job) for job in jobs]
        finally:
            await executor.aclose()

    return trio.run(main)


def test_one_worker_plays_job_after_job_until_its_quota(tmp_path: Path) -> None:
    """Five jobs, a quota of two: three workers, the first playing jobs 1 and 2 (one pid)."""
    executor = LocalExecutor(1, recycle_after=2, command=stand_in(FAILING_WORKER), prefetch=False)
    jobs = [a_job(tmp_path, f"m~{index}") for index in range(5)]
    replies = play_all(executor, jobs)
    pids = [str(reply).split()[-1] for reply in replies]
    assert all(isinstance(reply, WorkerFailure) for reply in replies)
    assert executor.started == 3
    assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4]
    assert not executor.workers


@pytest.mark.parametrize(
    ("script", "says"),
    [
        pytest.param(
            f"{READ_ONE}import json\nprint(json.dumps({{'match': 'other', 'interrupted': True}}),"
            " flush=True)\nsys.stdin.read()",
            "a line about other while playing m~",
            id="another-match",
        ),
        pytest.param(
            f'{READ_ONE}print("garbage", flush=True)\nsys.stdin.read()',
            "not a worker line",
            id="garbage",
        ),
        pytest.param(
            f"{READ_ONE}sys.stderr.write('boom\\n')\nsys.exit(3)",
            "its output ended; exit 3: boom",
            id="dies",
        ),
    ],
)
def test_a_worker_that_breaks_its_protocol_is_ended_and_replaced(
    tmp_path: Path, script: str, says: str
) -> None:
    executor = LocalExecutor(1, command=stand_in(script))
    replies = play_all(executor, [a_job(tmp_path, "m~1"), a_job(tmp_path, "m~2")])
    assert all(isinstance(reply, WorkerFailure) and says in str(reply) for reply in replies)
    assert executor.started == 2  # never handed a second job


def test_a_cancelled_match_ends_its_worker(tmp_path: Path) -> None:
    """Cancelling a play (Ctrl-C, a stopped league) stops the worker's process group."""
    script = "import sys\nsys.stdin.readline()\nimport time\ntime.sleep(60)"
    executor = LocalExecutor(1, command=stand_in(script))
    seen: list[WarmWorker] = []
    playing: list[WarmWorker] = []

    async def main() -> None:
        async def catch() -> None:
            while not executor.workers:
                await trio.sleep(0.01)
            playing.extend(executor.workers)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(catch)
            with trio.move_on_after(1.0):
                await executor.play(a_job(tmp_path))
        seen.extend(executor.workers)

    started = time.monotonic()
    trio.run(main)
    assert not seen  # not put back
    assert executor.started == 1
    (worker,) = playing
    assert worker.process.returncode == -signal.SIGTERM  # stopped, at once (no grace used)
    assert time.monotonic() - started < 5


# --- real workers, real bots ---------------------------------------------------------------------

COUNTING_BOT = """
import os, sys, time
from protocol.sdk import Bot
from referee.rules import GreedyPolicy

PLAYED = [0]  # the process's own count, whichever instance plays a series


class Counting(Bot):
    name = "counting"
    version = "1"
    plays_on = PLAYS_ON

    def __init__(self):
        self.policy = GreedyPolicy(knock_at=10)
        self.paced = 0

    def on_series_start(self, info):
        self.paced = PACED_DECISIONS
        PLAYED[0] += 1
        sys.stderr.write(f"series {PLAYED[0]} of this process\\n")
        sys.stderr.write(f"began {time.time()}\\n")

    def on_series_end(self, summary):
        sys.stderr.write(f"ended {time.time()}\\n")

    def decide(self, view, legal):
        if self.paced:  # a series that takes a while, as real ones do
            self.paced -= 1
            time.sleep(0.1)
        return self.policy(view, legal)

if __name__ == "__main__":
    sys.stderr.write(f"started {time.time()}\\n")
    sys.exit(Counting().run())
"""


def counting_league(
    home: Path, series: int, *, plays_on: bool = False, paced_decisions: int = 0
) -> tuple[Arena, LeagueConfig]:
    """The counting bot against greedy; the counting bot plays on only if ``plays_on``, and
    takes 0.1 s over each of its first ``paced_decisions`` decisions of a series."""
    arena = Arena(home)
    store = arena.open_store()
    folder = home / "src" / "counting"
    folder.mkdir(parents=True)
    bot = COUNTING_BOT.replace("PLAYS_ON", str(plays_on))
    (folder / "bot.py").write_text(bot.replace("PACED_DECISIONS", str(paced_decisions)))
    (folder / "bot.toml").write_text(
        'name = "counting"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
    )
    idents = [trio.run(submit, arena, store, path, None).ident for path in (folder, GREEDY)]
    config = LeagueConfig.from_dict(
        {"name": "warm", "seed": 3, "bots": idents, "series_per_pairing": series}
    )
    create_league(store, config)
    return arena, config


@pytest.mark.slow
def test_a_league_plays_in_one_warm_worker_with_fresh_bots_every_match(tmp_path: Path) -> None:
    arena, config = counting_league(tmp_path / "home", series=4)
    store = arena.open_store()
    executor = LocalExecutor(1)
    progress = trio.run(LeagueRunner(arena, store, config, 1, executor=executor).run)
    assert progress.done == 4
    assert not [fault for fault in progress.faults if not fault.startswith("swept")]
    assert executor.started == 1  # one worker played all four
    logs = sorted(arena.logs_dir("warm").glob("*.stderr"))
    said = [path.read_text() for path in logs if "series" in path.read_text()]
    assert len(said) == 4  # the counting bot's stderr of every match, kept by the worker
    assert all(text.splitlines()[1] == "series 1 of this process" for text in said)


@pytest.mark.slow
def test_a_bot_that_plays_on_plays_its_sitting_on_one_process(tmp_path: Path) -> None:
    """Eight series (four pairs) on one worker: the first legs are one sitting, the second legs
    another, each on one process of the counting bot; each series' stderr is its own."""
    arena, config = counting_league(tmp_path / "home", series=8, plays_on=True)
    store = arena.open_store()
    executor = LocalExecutor(1)
    progress = trio.run(LeagueRunner(arena, store, config, 1, executor=executor).run)
    assert progress.done == 8
    assert not [fault for fault in progress.faults if not fault.startswith("swept")]
    said = [
        path.read_text()
        for path in sorted(arena.logs_dir("warm").glob("*.stderr"))
        if "series" in path.read_text()
    ]
    assert len(said) == 8
    numbers = sorted(int(text.split("series ")[1].split()[0]) for text in said)
    assert numbers == [1, 1, 2, 2, 3, 3, 4, 4]  # two processes of four series each
    assert sum("started" in text for text in said) == 2  # a start in each first series only


def times(text: str) -> dict[str, float]:
    """The counting bot's stderr: when its process started, its series began and ended."""
    words = [line.split() for line in text.splitlines()]
    return {said[0]: float(said[1]) for said in words if said[0] in {"started", "began", "ended"}}


@pytest.mark.slow
@pytest.mark.parametrize("prefetch", [True, False])
def test_a_worker_starts_its_next_bots_while_a_match_plays_one_series_at_a_time(
    tmp_path: Path, prefetch: bool
) -> None:
    # Each series lasts at least 0.8 s, longer than a bot's start even on a loaded machine: a
    # prefetched bot then surely starts while the series before it plays.
    arena, config = counting_league(tmp_path / "home", series=6, paced_decisions=8)
    store = arena.open_store()
    executor = LocalExecutor(1, prefetch=prefetch)
    progress = trio.run(LeagueRunner(arena, store, config, 1, executor=executor).run)
    assert progress.done == 6
    assert executor.started == 1
    stderr = [path.read_text() for path in arena.logs_dir("warm").glob("*.stderr")]
    matches = sorted((times(text) for text in stderr if "series" in text), key=lambda t: t["began"])
    assert len(matches) == 6
    for before, after in itertools.pairwise(matches):
        # One series at a time in a worker (a bot hears of its series' end a moment after the
        # referee has ended it: hence the slack; two series at once would overlap by far more).
        assert after["began"] >= before["ended"] - 0.05
    early = [a["started"] < b["ended"] for b, a in itertools.pairwise(matches)]
    assert any(early) if prefetch else not any(early)


@pytest.mark.slow
def test_a_worker_killed_mid_match_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena, config = counting_league(tmp_path / "home", series=2)
    store = arena.open_store()
    runner = LeagueRunner(arena, store, config, 1)
    matches = store.matches("warm")
    jobs = [
        dataclasses.replace(runner._job(match, tmp_path / f"{index}.jsonl"), parent=os.getpid())
        for index, match in enumerate(matches)
    ]
    executor = LocalExecutor(1)

    async def main() -> list[MatchOutcome | WorkerFailure]:
        replies: list[MatchOutcome | WorkerFailure] = []

        async def kill_when_playing() -> None:
            log = Path(jobs[0].log)
            while not log.exists() or not log.stat().st_size:  # the header: bots are up
                await trio.sleep(0.01)
            (worker,) = executor_workers
            os.killpg(worker.process.pid, signal.SIGKILL)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(kill_when_playing)
            replies.append(await executor.play(jobs[0]))
        replies.append(await executor.play(jobs[1]))
        await executor.aclose()
        return replies

    executor_workers: list[WarmWorker] = []
    original = WarmWorker.start

    async def tracked(command: tuple[str, ...]) -> WarmWorker:
        worker = await original(command)
        executor_workers.append(worker)
        return worker

    monkeypatch.setattr(WarmWorker, "start", tracked)
    first, second = trio.run(main)
    assert isinstance(first, WorkerFailure)
    assert "its output ended; exit -9" in str(first)
    assert isinstance(second, MatchOutcome)
    assert executor.started == 2
    assert sweep_jails().jails  # the killed worker's jails, left for the runner's sweep


# --- the close of a match runs while the next one starts ------------------------------------------


class SlowToClose(InProcessSeat):
    """A seat whose close takes a while (a bot that ignores its goodbye, say); ``stuck``: one
    that never answers a decision either."""

    def __init__(self, events: list[str], *, stuck: bool = False) -> None:
        super().__init__(GreedyPolicy(knock_at=10), "slow-to-close")
        self.said = events
        self.stuck = stuck

    async def decide(self, decision: Decision) -> Action:
        if self.stuck:
            await trio.sleep_forever()
        return await super().decide(decision)

    async def close(self, detail: str) -> None:
        await trio.sleep(0.5)
        await super().close(detail)
        self.said.append("seat closed")


def test_a_finished_match_returns_before_its_seats_close(tmp_path: Path) -> None:
    """With a closing nursery, play_folders returns once the log is complete; the seats close
    in the nursery, and on_closed comes after both."""
    events: list[str] = []
    seats = (SlowToClose(events), SlowToClose(events))
    log = tmp_path / "m.jsonl"

    async def main() -> None:
        async with trio.open_nursery() as closing:
            result = await play_folders(
                seats,
                MatchConfig("m", 5),
                log,
                closing=closing,
                on_closed=lambda: events.append("on_closed"),
            )
            events.append("returned")
            records = [json.loads(line) for line in log.read_text().splitlines()]
            assert records[-1]["type"] == "result"  # the log is whole, and closed
            assert result.end is not None

    started = time.monotonic()
    trio.run(main)
    assert events == ["returned", "seat closed", "seat closed", "on_closed"]
    assert time.monotonic() - started >= 0.5


def test_without_a_closing_nursery_the_seats_close_first(tmp_path: Path) -> None:
    events: list[str] = []
    seats = (SlowToClose(events), SlowToClose(events))

    async def main() -> None:
        await play_folders(
            seats,
            MatchConfig("m", 5),
            tmp_path / "m.jsonl",
            on_closed=lambda: events.append("on_closed"),
        )
        events.append("returned")

    trio.run(main)
    assert events == ["seat closed", "seat closed", "on_closed", "returned"]


def test_a_cancelled_match_closes_its_seats_at_once_even_with_a_nursery(tmp_path: Path) -> None:
    """A match stopped midway is closed before the cancellation goes on (its bots never
    outlive a stop), not handed to the closing nursery."""
    events: list[str] = []
    seats = (SlowToClose(events, stuck=True), SlowToClose(events, stuck=True))

    async def main() -> None:
        async with trio.open_nursery() as closing:
            with trio.move_on_after(0.2):
                await play_folders(
                    seats, MatchConfig("m", 5), tmp_path / "m.jsonl", closing=closing
                )
            events.append("stopped")

    trio.run(main)
    assert events == ["seat closed", "seat closed", "stopped"]


# --- what a hostile review found ------------------------------------------------------------------


async def longest_stall(work: Callable[[], Awaitable[object]]) -> float:
    """The longest the event loop went without running a 10 ms ticker while ``work`` ran."""
    gaps = [0.0]
    ticked = [trio.Event()]

    async def tick(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        last = time.monotonic()
        task_status.started()
        while True:
            await trio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            ticked[0].set()
            ticked[0] = trio.Event()

    async with trio.open_nursery() as nursery:
        await nursery.start(tick)  # ticking before the work begins
        with contextlib.suppress(Exception):
            await work()
        await ticked[0].wait()  # the ticker's next turn: a stall shows as its gap
        nursery.cancel_scope.cancel()
    return max(gaps)


def test_making_a_seats_jail_does_not_stall_the_loop(tmp_path: Path) -> None:
    """A big bot's jail takes a while to make (its code is copied): the worker's loop, which
    may be playing another match's series meanwhile, must not wait for it."""

    def slow_jail(label: str, code_dir: Path) -> Jail:
        time.sleep(0.6)
        raise OSError("no jail today")

    seat = RemoteSeat(load_manifest(GREEDY), slow_jail, "slow", "0" * 64)
    stall = trio.run(longest_stall, lambda: seat.connect(0))
    assert stall < 0.3


def test_reading_and_hashing_a_bot_does_not_stall_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow_manifest(folder: Path) -> Manifest:
        time.sleep(0.6)
        raise ManifestError(folder, ["gone"])

    monkeypatch.setattr("tournaments.executors.worker.load_manifest", slow_manifest)

    async def main() -> float:
        async with trio.open_nursery() as closing:
            worker = Worker(closing)
            return await longest_stall(lambda: worker.play(a_job(tmp_path)))

    assert trio.run(main) < 0.3


def run_worker(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tournaments.executors.worker"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_job_that_cannot_be_played_fails_alone_and_the_worker_goes_on(tmp_path: Path) -> None:
    gone = [
        dataclasses.replace(a_job(tmp_path, f"m~{i}"), bots=(str(tmp_path / "gone"),) * 2)
        for i in (1, 2)
    ]
    done = run_worker("".join(job.to_json() + "\n" for job in gone))
    lines = [WorkerLine.from_json(text) for text in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    assert sorted(line.match_id for line in lines) == ["m~1", "m~2"]  # played side by side
    assert all("ManifestError" in (line.failure or "") for line in lines)


@pytest.mark.parametrize(
    ("text", "says"),
    [("garbage\n", "error: not a job: "), ("x" * (1 << 21), "error: a line of over ")],
    ids=["not-json", "too-long"],
)
def test_a_line_that_is_not_a_job_ends_the_worker_with_one_line(text: str, says: str) -> None:
    done = run_worker(text)
    assert done.returncode == 2
    assert done.stderr.startswith(says)
    assert len(done.stderr.strip().splitlines()) == 1  # no traceback


def test_with_prefetch_a_worker_at_its_quota_is_never_joined_by_another(tmp_path: Path) -> None:
    """``-j 1``: one series at a time, even when the worker is due to retire and a fresh one
    could take the next job at once."""
    script = (
        "import json, sys, time\n"
        "for text in sys.stdin:\n"
        "    time.sleep(0.3)\n"
        "    reply = {'match': json.loads(text)['match_id'], 'failure': 'scripted'}\n"
        "    print(json.dumps(reply), flush=True)\n"
    )
    executor = LocalExecutor(1, recycle_after=1, command=stand_in(script), prefetch=True)
    busy: list[int] = []

    async def main() -> None:
        async def watch() -> None:
            while True:
                busy.append(sum(1 for worker in executor.workers if worker.in_flight))
                await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            async with trio.open_nursery() as plays:
                for index in range(4):
                    plays.start_soon(executor.play, a_job(tmp_path, f"m~{index}"))
            nursery.cancel_scope.cancel()
        await executor.aclose()

    trio.run(main)
    assert executor.started == 4
    assert max(busy) == 1


# --- a bot started early waits frozen -------------------------------------------------------------

SPINNER = """
import sys, threading, time
started = time.monotonic()


def spin():
    while True:
        pass


threading.Thread(target=spin, daemon=True).start()  # burns a CPU from the very start

from protocol.sdk import Bot
from referee.rules import GreedyPolicy


class Spinner(Bot):
    name = "spinner"
    version = "1"

    def __init__(self):
        self.policy = GreedyPolicy(knock_at=10)

    def on_series_start(self, info):
        sys.stderr.write(f"cpu {time.process_time()} wall {time.monotonic() - started}\\n")

    def decide(self, view, legal):
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(Spinner().run())
"""

SLOW = """
import sys, time
from protocol.sdk import Bot
from referee.rules import GreedyPolicy


class Slow(Bot):
    name = "slow"
    version = "1"

    def __init__(self):
        self.policy = GreedyPolicy(knock_at=10)

    def decide(self, view, legal):
        time.sleep(0.05)  # a series of several seconds: the next bots are up well before
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(Slow().run())
"""


def bot_folder(root: Path, name: str, code: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(code)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
    )
    return folder


def job_of(tmp_path: Path, match_id: str, first: Path, second: Path) -> MatchJob:
    return dataclasses.replace(
        a_job(tmp_path, match_id),
        bots=(str(first), str(second)),
        hashes=(code_hash(first), code_hash(second)),
        parent=os.getpid(),
    )


def play_beside(
    executor: LocalExecutor, playing: MatchJob, waiting: MatchJob
) -> dict[str, MatchOutcome | WorkerFailure]:
    """Play ``playing``, and send ``waiting`` once its series has begun (its bots start early,
    beside it); both outcomes, by match id."""
    results: dict[str, MatchOutcome | WorkerFailure] = {}

    async def play(job: MatchJob) -> None:
        results[job.match_id] = await executor.play(job)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play, playing)
            log = Path(playing.log)
            while not log.exists() or not log.stat().st_size:  # its series has begun
                await trio.sleep(0.01)
            nursery.start_soon(play, waiting)
        await executor.aclose()

    trio.run(main)
    return results


@pytest.mark.slow
@pytest.mark.skipif(
    not Sandbox().has(Layer.CGROUP), reason="freezing a waiting bot needs the cgroup layer (root)"
)
def test_a_bot_started_early_gets_no_cpu_while_it_waits(tmp_path: Path) -> None:
    """The next match's bots start while the current series plays, then wait frozen: a bot
    that spins from its first instant has spun only while it was not waiting."""
    slow = bot_folder(tmp_path / "bots", "slow", SLOW)
    spinner = bot_folder(tmp_path / "bots", "spinner", SPINNER)
    times: dict[str, dict[str, float]] = {}

    def watch(_worker: WarmWorker, line: WorkerLine) -> None:
        if line.outcome is not None:
            times[line.match_id] = line.times

    executor = LocalExecutor(1, prefetch=True, watch=watch)
    playing = job_of(tmp_path, "m~a", slow, GREEDY)
    waiting = job_of(tmp_path, "m~b", spinner, GREEDY)
    results = play_beside(executor, playing, waiting)
    first, second = results["m~a"], results["m~b"]
    assert isinstance(first, MatchOutcome)
    assert isinstance(second, MatchOutcome)
    assert not first.summary.faults  # the match beside the spinner played undisturbed
    waited = times["m~b"]["began"] - times["m~b"]["connected"]
    assert waited > 0.5  # the slow series held the table a while
    said = (tmp_path / "m~b.jsonl.seat0.stderr").read_text().split()
    cpu, wall = float(said[1]), float(said[3])
    assert cpu < wall - 0.5 * waited  # it could not spin while it waited


LATE = """
import sys, time
time.sleep(5.0)  # says hello late: its opponent, up long before, waits for it frozen
from protocol.sdk import Bot
from referee.rules import GreedyPolicy


class Late(Bot):
    name = "late"
    version = "1"

    def __init__(self):
        self.policy = GreedyPolicy(knock_at=10)

    def decide(self, view, legal):
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(Late().run())
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not Sandbox().has(Layer.CGROUP), reason="freezing a waiting bot needs the cgroup layer (root)"
)
def test_a_bot_started_early_is_frozen_from_its_own_hello(tmp_path: Path) -> None:
    """A prefetched bot is frozen as soon as it has said hello, not once both bots have: a bot
    that spins from its first instant, waiting for an opponent that says hello 3 s late while
    a slow series plays, spins only until its own hello."""
    slow = bot_folder(tmp_path / "bots", "slow", SLOW)
    hello_said = (
        '    sys.stderr.write(f"hello {time.monotonic() - started}\\n")\n    sys.exit(Spinner'
    )
    spinner = bot_folder(
        tmp_path / "bots", "spinner", SPINNER.replace("    sys.exit(Spinner", hello_said)
    )
    late = bot_folder(tmp_path / "bots", "late", LATE)
    executor = LocalExecutor(1, prefetch=True)
    playing = job_of(tmp_path, "m~a", slow, GREEDY)
    waiting = job_of(tmp_path, "m~b", spinner, late)
    results = play_beside(executor, playing, waiting)
    assert isinstance(results["m~a"], MatchOutcome)
    second = results["m~b"]
    assert isinstance(second, MatchOutcome)
    assert not second.summary.faults
    said = (tmp_path / "m~b.jsonl.seat0.stderr").read_text().split()
    hello, cpu, wall = float(said[1]), float(said[3]), float(said[5])
    print(f"spinner: hello at {hello:.2f} s, cpu {cpu:.2f} s, wall {wall:.2f} s")
    assert wall > 5.0  # it waited for the late bot, and for the slow series
    # Frozen from its hello on, it spun until then (and for the hello itself); frozen only
    # once both bots were in, it would have spun until the late bot's hello, 5 s after its start.
    assert cpu < hello + 1.5
