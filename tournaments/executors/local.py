"""The local executor: warm worker processes (``python -m tournaments.executors.worker``) on this
machine.

A pool of ``slots`` long-lived workers plays match after match, so no match pays for starting
Python and importing the referee; each match still gets fresh jails and fresh bots. A match's
close runs in its worker while the next match starts, and where CPUs allow a worker holds its
next match too, whose bots start while the current one plays (see :class:`LocalExecutor`).
A worker that dies, says something that is not its match's line, or is cancelled mid-match is
ended and replaced by a fresh one on the next job; one that has played :data:`RECYCLE_AFTER`
matches retires, so nothing a long league leaks accumulates.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import IO, Final

import trio

from tournaments.executors import sweep_here
from tournaments.executors.worker import WorkerLine
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure

__all__ = ["LocalExecutor", "WarmWorker"]


STOP_GRACE_S: Final = 10.0
"""How long a cancelled worker may take to tear its bots down before SIGKILL."""
DEATH_WAIT_S: Final = 1.0
"""How long a broken worker may take to exit by itself before it is stopped."""
RETIRE_GRACE_S: Final = 30.0
"""How long a retiring worker may take to finish its closes before SIGTERM."""
RECYCLE_AFTER: Final = 200
"""Matches a worker plays before it retires for a fresh one."""
MAX_LINE: Final = 1 << 22
"""The longest line read from a worker (an outcome is a few kilobytes)."""
WORKER_COMMAND: Final = (sys.executable, "-m", "tournaments.executors.worker")


LineWatcher = Callable[["WarmWorker", WorkerLine], None]


class WorkerGone(Exception):  # noqa: N818 - named for what is so
    """The worker process ended (``ended``: its output did), or broke its protocol; the
    message says how."""

    def __init__(self, message: str, *, ended: bool = False) -> None:
        super().__init__(message)
        self.ended = ended


class WarmWorker:
    """One worker process, its pipes and its stderr (kept in a temporary file)."""

    def __init__(self, process: trio.Process, stderr: IO[bytes]) -> None:
        self.process = process
        self.stderr = stderr
        self.spawned_at = time.time()
        self.watch: LineWatcher | None = None
        """Shown every line the worker writes (measurements)."""
        self.buffer = bytearray()
        self.played = 0
        """Jobs sent to it so far."""
        self.broken = False
        self.in_flight: set[str] = set()
        """The matches sent and not yet reported (two when the next one's bots start early)."""
        self.replies: dict[str, WorkerLine] = {}
        self.sending = trio.Lock()
        self.reading = trio.Lock()
        self.gone: str | None = None
        """Why it broke, once it has (told to every match it had in flight)."""
        self.sittings: set[str] = set()
        """The sittings whose bots rest in it, waiting for their next series."""

    @classmethod
    async def start(cls, command: Sequence[str] = WORKER_COMMAND) -> WarmWorker:
        """A fresh worker, in a process group of its own (its teardown kills the group)."""
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the worker
        try:
            process = await trio.lowlevel.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        except BaseException:
            stderr.close()
            raise
        return cls(process, stderr)

    async def play(
        self, job: MatchJob, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Send the job (then call ``sent``); its outcome, or the failure the worker reported.

        Raises:
            WorkerGone: the worker died or spoke out of turn (it is marked broken).
        """
        assert self.process.stdin is not None
        self.played += 1
        self.in_flight.add(job.match_id)
        if job.sitting:
            if job.sitting_ends:
                self.sittings.discard(job.sitting)
            else:
                self.sittings.add(job.sitting)
        try:
            async with self.sending:
                await self.process.stdin.send_all(job.to_json().encode() + b"\n")
            if sent is not None:
                sent()
            line = await self._reply(job.match_id)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            raise WorkerGone(await self._death(WorkerGone(f"its pipes closed: {error}"))) from None
        except WorkerGone as gone:
            raise WorkerGone(await self._death(gone)) from None
        except BaseException:
            self.broken = True
            raise
        finally:
            self.in_flight.discard(job.match_id)
        if line.outcome is not None:
            return line.outcome
        if line.failure is not None:
            return WorkerFailure(line.failure)
        self.broken = True  # interrupted: it was told to stop, and is ending
        return WorkerFailure("the worker was interrupted")

    async def _reply(self, match_id: str) -> WorkerLine:
        """The line about ``match_id``: one reader at a time; a line about the other match in
        flight is kept for it, a closed line (of an earlier match) passed over."""
        while match_id not in self.replies:
            async with self.reading:
                if match_id in self.replies:
                    break
                line = await self._line()
                if line.closed:
                    continue
                if line.match_id not in self.in_flight:
                    raise WorkerGone(f"a line about {line.match_id} while playing {match_id}")
                self.replies[line.match_id] = line
        return self.replies.pop(match_id)

    async def _line(self) -> WorkerLine:
        assert self.process.stdout is not None
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > MAX_LINE:
                raise WorkerGone(f"a line of over {MAX_LINE} bytes")
            chunk = await self.process.stdout.receive_some(65536)
            if not chunk:
                raise WorkerGone("its output ended", ended=True)
            self.buffer += chunk
        text, self.buffer = bytes(self.buffer[:end]), self.buffer[end + 1 :]
        try:
            line = WorkerLine.from_json(text)
        except (KeyError, TypeError, ValueError) as error:
            raise WorkerGone(f"not a worker line: {error}") from None
        if self.watch is not None:
            self.watch(self, line)
        return line

    async def _death(self, gone: WorkerGone) -> str:
        """What a broken worker says of itself: its exit status and the tail of its stderr. One
        whose output ended is exiting: it gets a moment; one that spoke out of turn is ended."""
        self.broken = True
        if self.gone is None:
            if gone.ended:
                with trio.move_on_after(DEATH_WAIT_S):
                    await self.process.wait()
            await self.stop()
            tail = self.stderr_tail() or "no output"
            self.gone = f"{gone}; exit {self.process.returncode}: {tail}"
        return self.gone

    def stderr_tail(self) -> str:
        """The last lines of the worker's stderr, joined."""
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            lines = self.stderr.read().decode(errors="replace").strip().splitlines()
            return " | ".join(lines[-3:])
        return ""

    async def stop(self) -> None:
        """SIGTERM the worker's group (its match closes its seats), SIGKILL after a grace."""
        with trio.CancelScope(shield=True):
            if self.process.returncode is None:
                self._signal(signal.SIGTERM)
                with trio.move_on_after(STOP_GRACE_S):
                    await self.process.wait()
            if self.process.returncode is None:
                self._signal(signal.SIGKILL)
                await self.process.wait()
            await self._close_pipes()

    async def retire(self) -> None:
        """End of input: the worker finishes its closes and exits; stopped if it takes long."""
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                if self.process.stdin is not None:
                    await self.process.stdin.aclose()
            with trio.move_on_after(RETIRE_GRACE_S):
                await self.process.wait()
            await self.stop()
            self.release()

    def release(self) -> None:
        """Let go of the worker's stderr file (once it is stopped)."""
        self.stderr.close()

    def _signal(self, number: int) -> None:
        """Signal the worker's group: only while the worker is unreaped, so the group id is
        still its own."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, number)

    async def _close_pipes(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stream.aclose()


class LocalExecutor:
    """Matches in a pool of warm ``python -m tournaments.executors.worker`` processes on this
    machine.

    ``prefetch`` (by default: unless there are more workers than CPUs) lets each worker hold a
    second match whose bots start while its current match plays: the runner is offered twice
    as many slots as there are workers, and the series still play one per worker at a time. A
    series leaves much of a CPU idle (its bots and referee take turns), so even with as many
    workers as CPUs the next bots' start fits beside it (``benchmarks.throughput_bench``).
    """

    sittings = True
    """A sitting's series go to the worker where its bots rest (see :meth:`_pick`)."""

    def __init__(
        self,
        slots: int,
        *,
        recycle_after: int = RECYCLE_AFTER,
        command: Sequence[str] = WORKER_COMMAND,
        prefetch: bool | None = None,
        watch: LineWatcher | None = None,
    ) -> None:
        """``slots`` workers; ``command`` starts one (another program speaking its protocol,
        in tests); ``watch`` is shown every line a worker writes (benchmarks read their
        times)."""
        self.watch = watch
        self.prefetch = slots <= usable_cpus() if prefetch is None else prefetch
        self.size = slots
        self.slots = slots * (2 if self.prefetch else 1)
        """Matches at once: with ``prefetch``, each worker's second one only starts its bots
        until the first has ended."""
        self.recycle_after = recycle_after
        self.command = tuple(command)
        self.workers: list[WarmWorker] = []
        """The live workers, busy or idle."""
        self.changed = trio.Condition()
        """Notified whenever a worker finishes a job or leaves the pool."""
        self.started = 0
        """Worker processes started so far."""

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Play the job in the worker where its sitting rests, an idle worker, a fresh one while
        there are fewer than the slots, or (with ``prefetch``) beside a worker's current match;
        ``sent`` is called once the worker has the job."""
        async with self.changed:  # one at a time: a worker being started counts
            while (worker := self._pick(job.sitting)) is None:
                if len(self.workers) < self.size:
                    worker = await self._fresh()
                    break
                await self.changed.wait()  # all busy (one at its quota, say): never more
        try:
            outcome = await worker.play(job, sent)
        except WorkerGone as gone:
            return WorkerFailure(str(gone))
        finally:
            with trio.CancelScope(shield=True):
                if worker.broken:
                    self._forget(worker)
                    await worker.stop()
                    worker.release()
                elif worker.played >= self.recycle_after and not worker.in_flight:
                    self._forget(worker)
                    await worker.retire()
                async with self.changed:
                    self.changed.notify_all()
        return outcome

    def _pick(self, sitting: str = "") -> WarmWorker | None:
        """The worker where the job's sitting rests, if it can take the job now; else an idle
        worker that may take a job; else, with ``prefetch``, one holding a single match; else
        None (a fresh worker if there is room, or a wait)."""
        usable = [w for w in self.workers if not w.broken and w.played < self.recycle_after]
        limit = 2 if self.prefetch else 1
        home = [w for w in usable if sitting and sitting in w.sittings]
        if home and len(home[0].in_flight) < limit:
            return home[0]
        # Workers between two series of a sitting come last: its next series is on its way.
        usable.sort(key=lambda worker: bool(worker.sittings - {sitting}))
        idle = [worker for worker in usable if not worker.in_flight]
        if idle or not self.prefetch or len(self.workers) < self.size:
            return idle[0] if idle else None  # None: a fresh worker while there is room
        holding_one = [worker for worker in usable if len(worker.in_flight) == 1]
        return holding_one[0] if holding_one else None

    async def _fresh(self) -> WarmWorker:
        self.started += 1
        worker = await WarmWorker.start(self.command)
        worker.watch = self.watch
        self.workers.append(worker)
        return worker

    def _forget(self, worker: WarmWorker) -> None:
        if worker in self.workers:
            self.workers.remove(worker)

    @property
    def tables(self) -> int:
        """Series at once: one per worker."""
        return self.size

    async def capacity(self) -> int:
        """As many as :attr:`slots`."""
        return self.slots

    async def sweep(self) -> int:
        """This machine's leftovers: the workers' jails are here."""
        return await sweep_here()

    async def aclose(self) -> None:
        """Retire every worker (each finishes the close of its last match)."""
        workers, self.workers = self.workers, []
        async with trio.open_nursery() as nursery:
            for worker in workers:
                nursery.start_soon(worker.retire)


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
