"""The local executor: warm worker processes (``python -m tournaments.worker``) on this machine.

A pool of at most ``slots`` long-lived workers plays match after match, so no match pays for
starting Python and importing the referee; each match still gets fresh jails and fresh bots.
A worker gets a job only once its previous match has reported (its close may still be running:
it overlaps the next match's start). A worker that dies, says something that is not its
match's line, or is cancelled mid-match is ended and replaced by a fresh one on the next job;
one that has played :data:`RECYCLE_AFTER` matches retires, so nothing a long league leaks
accumulates.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import IO, Final

import trio

from tournaments.executors import sweep_here
from tournaments.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.worker import WorkerLine

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
WORKER_COMMAND: Final = (sys.executable, "-m", "tournaments.worker")


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
        self.buffer = bytearray()
        self.played = 0
        self.broken = False

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

    async def play(self, job: MatchJob) -> MatchOutcome | WorkerFailure:
        """Send the job; its outcome, or the failure the worker reported.

        Raises:
            WorkerGone: the worker died or spoke out of turn (it is marked broken).
        """
        assert self.process.stdin is not None
        self.played += 1
        try:
            await self.process.stdin.send_all(job.to_json().encode() + b"\n")
            while True:
                line = await self._line()
                if line.match_id == job.match_id and not line.closed:
                    break
                if not line.closed:  # a closed line of an earlier match is expected
                    raise WorkerGone(f"a line about {line.match_id} while playing {job.match_id}")
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            self.broken = True
            raise WorkerGone(await self._death(WorkerGone(f"its input closed: {error}"))) from None
        except WorkerGone as gone:
            self.broken = True
            raise WorkerGone(await self._death(gone)) from None
        except BaseException:
            self.broken = True
            raise
        if line.outcome is not None:
            return line.outcome
        if line.failure is not None:
            return WorkerFailure(line.failure)
        self.broken = True  # interrupted: it was told to stop, and is ending
        return WorkerFailure("the worker was interrupted")

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
            return WorkerLine.from_json(text)
        except (KeyError, TypeError, ValueError) as error:
            raise WorkerGone(f"not a worker line: {error}") from None

    async def _death(self, gone: WorkerGone) -> str:
        """What a broken worker says of itself: its exit status and the tail of its stderr. One
        whose output ended is exiting: it gets a moment; one that spoke out of turn is ended."""
        if gone.ended:
            with trio.move_on_after(DEATH_WAIT_S):
                await self.process.wait()
        await self.stop()
        return f"{gone}; exit {self.process.returncode}: {self.stderr_tail() or 'no output'}"

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
    """Matches in a pool of warm ``python -m tournaments.worker`` processes on this machine."""

    def __init__(
        self,
        slots: int,
        *,
        recycle_after: int = RECYCLE_AFTER,
        command: Sequence[str] = WORKER_COMMAND,
    ) -> None:
        """``command`` starts a worker (another program speaking its protocol, in tests)."""
        self.slots = slots
        self.recycle_after = recycle_after
        self.command = tuple(command)
        self.idle: list[WarmWorker] = []
        self.retiring: set[WarmWorker] = set()
        self.started = 0
        """Worker processes started so far."""

    async def play(self, job: MatchJob) -> MatchOutcome | WorkerFailure:
        """Play the job in an idle worker (a fresh one if none is idle)."""
        worker = self.idle.pop() if self.idle else await self._fresh()
        try:
            outcome = await worker.play(job)
        except WorkerGone as gone:
            return WorkerFailure(str(gone))
        finally:
            if worker.broken:
                await worker.stop()
                worker.release()
            elif worker.played >= self.recycle_after:
                await self._retire(worker)
            else:
                self.idle.append(worker)
        return outcome

    async def _fresh(self) -> WarmWorker:
        self.started += 1
        return await WarmWorker.start(self.command)

    async def _retire(self, worker: WarmWorker) -> None:
        self.retiring.add(worker)
        try:
            await worker.retire()
        finally:
            self.retiring.discard(worker)

    async def capacity(self) -> int:
        """As many as asked for."""
        return self.slots

    async def sweep(self) -> int:
        """This machine's leftovers: the workers' jails are here."""
        return await sweep_here()

    async def aclose(self) -> None:
        """Retire every idle worker (each finishes the close of its last match)."""
        idle, self.idle = self.idle, []
        async with trio.open_nursery() as nursery:
            for worker in idle:
                nursery.start_soon(worker.retire)
