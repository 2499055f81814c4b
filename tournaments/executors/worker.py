"""A league worker: a long-lived process that plays match after match and reports each as JSON.

``python -m tournaments.executors.worker`` reads :class:`~tournaments.formats.records.MatchJob` s
(JSON, one a line) on stdin and writes :class:`WorkerLine` s on stdout: for each job its outcome (or
why there is none) as soon as the match's log is complete, then, once its bots are torn down and
their stderr kept, that it is closed. A match gets a fresh sandbox jail and fresh bot
processes, unless it continues a sitting (``MatchJob.sitting``): then the bots of the sitting's
previous series that said they can play on, and are still sound, rest between the two series
(frozen, nothing torn down) and play this one too; the sitting's last series
(``MatchJob.sitting_ends``) closes them, and a sitting whose next series does not come within
:data:`REST_LIMIT_S` is closed by the worker. Only the referee's own imports are kept warm
between sittings. The close of a match runs while the next one starts, so it does not hold the
worker. A job sent while a match plays has its bots
started at once, and its series begins when the one before it has ended (one series at a time,
in the order sent): so the next bots start while the current match finishes.

It ends at the end of its stdin (after the closes in progress), after ``--idle-exit`` seconds
without a job, and when its runner goes away (even after a ``kill -9``); on SIGTERM it stops the
match in progress and tears its bots down before exiting, so an interrupted league leaves
nothing behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from protocol.bounded import JsonObject
from referee.sandbox import Sandbox, SandboxLimits, harden_referee_process

harden_referee_process()  # before grpc is imported

import trio  # noqa: E402

from protocol.manifest import load_manifest  # noqa: E402
from referee.local import play_folders, remote_seat  # noqa: E402
from referee.match import MatchConfig, MatchEnd, MatchResult  # noqa: E402
from referee.remote import RemoteSeat  # noqa: E402
from tournaments.executors.packing import BotCodeMismatchError  # noqa: E402
from tournaments.formats.records import MatchJob, MatchOutcome, MatchSummary  # noqa: E402

__all__ = ["Worker", "WorkerLine", "reason"]


PARENT_POLL_S = 0.5
REST_LIMIT_S = 60.0
"""How long a sitting's bots may rest waiting for its next series before they are closed."""
ORPHAN_EXIT_S = 30.0
MAX_JOB_LINE = 1 << 20
"""The longest job line read (a job is about a kilobyte)."""

REASONS = {
    MatchEnd.COMPLETE: "all three games ended",
    MatchEnd.DECIDED: "decided (stop when decided)",
    MatchEnd.HAND_CAP: "hand cap reached",
}


@dataclass(frozen=True, slots=True)
class WorkerLine:
    """One line of a worker's stdout, about one match: exactly one of ``outcome``,
    ``interrupted`` (stopped: no outcome, the runner tries it again later), ``failure`` (no
    outcome, and why) or ``closed`` (its bots are gone and their stderr is kept)."""

    match_id: str
    outcome: MatchOutcome | None = None
    interrupted: bool = False
    failure: str | None = None
    closed: bool = False
    times: dict[str, float] = field(default_factory=dict)
    """When (``time.time()``) the match's moments came, for measurements: with an outcome,
    ``received`` (the job), ``connected`` (both bots up), ``began`` (its series, once the one
    before it ended) and ``ended``; with ``closed``, ``closed``."""

    def to_json(self) -> str:
        """The line as the worker writes it."""
        data: JsonObject = {"match": self.match_id}
        if self.outcome is not None:
            data["outcome"] = json.loads(self.outcome.to_json())
        if self.interrupted:
            data["interrupted"] = True
        if self.failure is not None:
            data["failure"] = self.failure
        if self.closed:
            data["closed"] = True
        if self.times:
            data["times"] = self.times
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str | bytes) -> WorkerLine:
        """Read :meth:`to_json`'s form.

        Raises:
            KeyError, TypeError, ValueError: not that form.
        """
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("a worker line is a JSON object")
        outcome = data.get("outcome")
        failure = data.get("failure")
        times = data.get("times", {})
        if not isinstance(times, dict):
            raise TypeError("a worker line's times are a JSON object")
        line = cls(
            str(data["match"]),
            None if outcome is None else MatchOutcome.from_json(json.dumps(outcome)),
            data.get("interrupted") is True,
            None if failure is None else str(failure),
            data.get("closed") is True,
            {str(key): float(value) for key, value in times.items()},
        )
        said = (line.outcome is not None, line.interrupted, line.failure is not None, line.closed)
        if sum(said) != 1:
            raise ValueError("a worker line says exactly one thing of its match")
        return line


def reason(result: MatchResult) -> str:
    """One phrase: why the match ended."""
    if result.forfeited:
        faults = [f for f in result.faults if f.seat in result.forfeited]
        last = faults[-1] if faults else None
        why = f"{last.kind.value}: {last.detail}" if last else "forfeit"
        return f"seat {','.join(map(str, result.forfeited))} forfeited ({why})"
    return REASONS.get(result.end, result.end.value)


@dataclass(slots=True)
class SittingLink:
    """A series of a sitting, as the sitting's next series sees it: its bots, once known, and
    the moments the next series waits for. A series' link is made as its job arrives, so the
    next job, which may come while it plays, always finds it."""

    bots: tuple[str, str]
    hashes: tuple[str, str]
    seats: tuple[RemoteSeat, RemoteSeat] | None = None
    known: trio.Event = field(default_factory=trio.Event)
    """Set once :attr:`seats` is (``None`` still: the series never got its seats)."""
    connected: trio.Event = field(default_factory=trio.Event)
    """Set once its bots have said hello (or failed to): then it is known which play on."""
    closed: trio.Event = field(default_factory=trio.Event)
    """Set once its close is done (for a bot that plays on, only a rest) and stderr kept."""
    closed_at: float = math.inf

    def settle(self) -> None:
        """Whatever happened, the next series waits no more."""
        for event in (self.known, self.connected, self.closed):
            event.set()
        self.closed_at = min(self.closed_at, time.monotonic())


class Worker:
    """Plays jobs, their series one after another; the closes of finished matches run in
    ``closing``."""

    def __init__(self, closing: trio.Nursery) -> None:
        self.closing = closing
        self.sandboxes: dict[tuple[SandboxLimits, bool], Sandbox] = {}
        self.table = trio.Lock()
        """Held by the match playing its series: one at a time (a lock is fair: in turn)."""
        self.links: dict[str, SittingLink] = {}
        """The last series sent of each sitting that goes on, by ``MatchJob.sitting``."""

    def sandbox(self, job: MatchJob) -> Sandbox:
        """The sandbox for the job's limits (made once per kind of job)."""
        key = (job.limits, job.strict)
        if key not in self.sandboxes:
            self.sandboxes[key] = Sandbox(job.limits, strict=job.strict)
        return self.sandboxes[key]

    def close(self) -> None:
        """Let go of the sandboxes' folders."""
        for sandbox in self.sandboxes.values():
            sandbox.close()

    async def play(self, job: MatchJob) -> WorkerLine:
        """Play the job's match: its outcome line (the ``closed`` line follows on its own).

        Raises:
            BotCodeMismatchError: a bot's folder no longer hashes to its registry hash.
        """
        received = time.time()
        prior = self.links.pop(job.sitting, None) if job.sitting else None
        plays_on = bool(job.sitting) and not job.sitting_ends
        link = SittingLink(job.bots, job.hashes) if plays_on else None
        if link is not None:
            self.links[job.sitting] = link
        try:
            return await self._play(job, received, prior, link)
        finally:
            if link is not None and link.seats is None:
                link.settle()  # it never got its seats: the next series starts afresh

    async def _play(
        self, job: MatchJob, received: float, prior: SittingLink | None, link: SittingLink | None
    ) -> WorkerLine:
        sandbox = self.sandbox(job)
        seats = await self._seats(job, sandbox, prior)
        for seat in seats:
            seat.play_on_after = link is not None
        if link is not None:
            link.seats = (seats[0], seats[1])
            link.known.set()
        config = MatchConfig(
            job.match_id,
            job.seed,
            params=job.rules,
            time_control=job.time_control,
            fault_policy=job.fault_policy,
            sandbox=tuple(s.layer.value for s in sandbox.layers if s.active),
            bot_seeds=None if job.bot_seeds == (0, 0) else job.bot_seeds,
        )
        log_path = Path(job.log)

        def closed() -> None:
            write_line(WorkerLine(job.match_id, closed=True, times={"closed": time.time()}))
            if link is not None:
                link.settle()

        times = {"received": received}
        try:
            result = await play_folders(
                (seats[0], seats[1]),
                config,
                log_path,
                closing=self.closing,
                on_closed=closed,
                gate=self._at_table(times, link),
            )
        except BaseException:
            with trio.CancelScope(shield=True):  # a series that did not end: no sitting goes on
                for seat in seats:
                    await _close_for_good(seat)
                if link is not None:
                    link.settle()
            raise
        outcome = MatchOutcome(MatchSummary.of(result, log_path), reason(result))
        return WorkerLine(job.match_id, outcome, times=times)

    async def _seats(
        self, job: MatchJob, sandbox: Sandbox, prior: SittingLink | None
    ) -> list[RemoteSeat]:
        """The job's seats: those of its sitting's previous series whose bots play on and
        still can, fresh ones for the rest.

        Raises:
            BotCodeMismatchError: a fresh bot's folder no longer hashes to its registry hash.
        """
        found: list[RemoteSeat | None] = [None, None]
        refused: list[Exception] = []  # raised as it is, not in a group: the job's failure

        async def take(index: int) -> None:
            try:
                seat = await self._take_up(job, index, prior)
                if seat is None:  # in a thread: reading and hashing a big bot folder takes a
                    # while, and the series this worker may be playing meanwhile must not wait
                    label = f"{job.match_id}-{index}"
                    seat = await trio.to_thread.run_sync(_seat, job.bots[index], sandbox, label)
                    _check_hash(seat, job.hashes[index])
            except Exception as error:  # a folder gone, a code changed: this job's alone
                refused.append(error)
                return
            found[index] = seat

        try:
            async with trio.open_nursery() as nursery:  # a fresh bot need not wait for the other
                for index in (0, 1):
                    nursery.start_soon(take, index)
            if refused:
                raise refused[0]
        except BaseException:
            for seat in found:
                if seat is not None and seat.resting:
                    self.closing.start_soon(_close_for_good, seat)
            raise
        return [seat for seat in found if seat is not None]

    async def _take_up(
        self, job: MatchJob, index: int, prior: SittingLink | None
    ) -> RemoteSeat | None:
        """The bot of seat ``index`` in the sitting's previous series, if it plays this one:
        the same folder and hash, a bot that plays on, rested sound. A bot that does not play
        on is known at its hello: this series' fresh bot starts then, while that one plays."""
        if prior is None:
            return None
        await prior.known.wait()
        if prior.seats is None:
            return None
        seat = prior.seats[index]
        same = (prior.bots[index], prior.hashes[index]) == (job.bots[index], job.hashes[index])
        if not same:  # (the runner never sends this) whatever rests of it goes
            await prior.closed.wait()
            self.closing.start_soon(_close_for_good, seat)
            return None
        await prior.connected.wait()
        if not seat.plays_on:
            return None
        await prior.closed.wait()  # its close: a bot that can play on rests, its stderr kept
        if await seat.ready_to_go_on():
            return seat
        if seat.resting:
            self.closing.start_soon(_close_for_good, seat)
        return None

    async def close_resting(self, older_than_s: float = -math.inf) -> None:
        """Close the bots of the sittings resting longer than ``older_than_s`` (by default all,
        resting or still playing: at the worker's end), with their goodbye."""
        now = time.monotonic()
        stale = [key for key, link in self.links.items() if now - link.closed_at >= older_than_s]
        async with trio.open_nursery() as nursery:
            for key in stale:
                link = self.links.pop(key)
                for seat in link.seats or ():
                    nursery.start_soon(_close_for_good, seat)

    async def reap_resting(self) -> None:
        """Close, now and then, the sittings whose next series has not come."""
        while True:
            await trio.sleep(REST_LIMIT_S / 4)
            await self.close_resting(REST_LIMIT_S)

    @contextlib.asynccontextmanager
    async def _at_table(
        self, times: dict[str, float], link: SittingLink | None
    ) -> AsyncIterator[None]:
        """The gate of a match whose bots are up: its series, once the one before has ended."""
        times["connected"] = time.time()
        if link is not None:
            link.connected.set()
        async with self.table:
            times["began"] = time.time()
            try:
                yield
            finally:
                times["ended"] = time.time()


async def _close_for_good(seat: RemoteSeat) -> None:
    """Close a seat whether or not its bot could play on (a resting one says goodbye)."""
    seat.play_on_after = False
    with trio.CancelScope(shield=True):
        await seat.close("sitting over")


def _check_hash(seat: RemoteSeat, expected: str) -> None:
    """Raises:
    BotCodeMismatchError: the seat's folder does not hash to ``expected``."""
    if seat.code_hash != expected:
        raise BotCodeMismatchError(
            f"the code in {seat.manifest.folder} hashes to {seat.code_hash[:12]}, not "
            f"to its registered {expected[:12]}: refusing to play it"
        )


class NotAJobError(ValueError):
    """A line of the worker's input that is not a job: it ends the worker."""


def _seat(folder: str, sandbox: Sandbox, label: str) -> RemoteSeat:
    """The seat of the bot in ``folder``: its manifest read, its code hashed."""
    return remote_seat(load_manifest(Path(folder)), sandbox.prepare, label)


def write_line(line: WorkerLine) -> None:
    """One line on stdout, at once."""
    sys.stdout.write(line.to_json() + "\n")
    sys.stdout.flush()


async def job_lines(idle_exit_s: float | None, busy: Callable[[], bool]) -> AsyncIterator[bytes]:
    """The lines of stdin, until its end or ``idle_exit_s`` without a line while not ``busy``.

    Raises:
        NotAJobError: a line longer than :data:`MAX_JOB_LINE`.
    """
    stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    buffer = bytearray()
    async with stream:
        while True:
            while (end := buffer.find(b"\n")) < 0:
                if len(buffer) > MAX_JOB_LINE:
                    raise NotAJobError(f"a line of over {MAX_JOB_LINE} bytes")
                with trio.move_on_after(idle_exit_s or math.inf) as idle:
                    chunk = await stream.receive_some(65536)
                if idle.cancelled_caught:
                    if busy():
                        continue
                    return
                if not chunk:
                    if buffer.strip():
                        yield bytes(buffer)  # a last line without its newline
                    return
                buffer += chunk
            line, buffer = bytes(buffer[:end]), buffer[end + 1 :]
            if line.strip():
                yield line


async def serve(idle_exit_s: float | None) -> None:
    """Play each job read on stdin, until its end; SIGTERM or SIGINT stops the matches in
    progress (their seats are still closed) and ends the worker."""
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as closing:
            worker = Worker(closing)
            try:
                async with trio.open_nursery() as nursery:

                    async def stop_on_signal() -> None:
                        async for _ in signals:
                            nursery.cancel_scope.cancel()
                            return

                    nursery.start_soon(stop_on_signal)
                    nursery.start_soon(worker.reap_resting)
                    await play_lines(worker, idle_exit_s, nursery.cancel_scope)
                    nursery.cancel_scope.cancel()
            finally:
                with trio.CancelScope(shield=True):
                    await worker.close_resting()
                worker.close()


async def play_lines(worker: Worker, idle_exit_s: float | None, stop: trio.CancelScope) -> None:
    """The loop of :func:`serve`: each job is played as it comes (its bots start at once, its
    series once the match before it has ended), and a line goes out for every job in."""
    async with trio.open_nursery() as jobs:
        async for text in job_lines(idle_exit_s, lambda: bool(jobs.child_tasks)):
            try:
                job = MatchJob.from_json(text.decode())
            except (KeyError, TypeError, ValueError) as error:  # a runner of another version
                raise NotAJobError(f"not a job: {error}") from None
            jobs.start_soon(play_one, worker, job, stop)


async def play_one(worker: Worker, job: MatchJob, stop: trio.CancelScope) -> None:
    """Play one job and write its line: a job that cannot be played (its bot's code changed,
    its folder gone, its log not writable...) gets a failure line of its own, and the match
    beside it plays on."""
    try:
        line = await worker.play(job)
    except BotCodeMismatchError as error:
        line = WorkerLine(job.match_id, failure=str(error))
    except Exception as error:  # whatever it is, it is this job's alone
        line = WorkerLine(job.match_id, failure=f"{type(error).__name__}: {error}")
    finally:
        if stop.cancel_called:
            write_line(WorkerLine(job.match_id, interrupted=True))
    write_line(line)


def watch_parent(parent: int) -> None:
    """Stop the match (SIGTERM to ourselves: the seats are closed, the bots torn down) once the
    runner is gone. A thread polls, since the kernel's parent-death signal follows the thread
    that started us, and trio starts processes from short-lived threads."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_EXIT_S)  # the teardown hangs: go; the bots die by PDEATHSIG, and a
        os._exit(1)  # sweep takes their jails (they stay locked until we are gone)

    threading.Thread(target=watch, name="watch-runner", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Serve jobs until stdin ends."""
    parser = argparse.ArgumentParser(
        prog="python -m tournaments.executors.worker", description=__doc__
    )
    parser.add_argument("--idle-exit", type=float, metavar="S", help="end after S s without a job")
    args = parser.parse_args(argv)
    watch_parent(os.getppid())
    try:
        trio.run(serve, args.idle_exit)
    except BaseExceptionGroup as group:
        refused = group.subgroup(NotAJobError)
        if refused is None:
            raise
        first: BaseException = refused
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        print(f"error: {first}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
