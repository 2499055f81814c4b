"""Leagues on a Dask cluster: the coordinator's executor (the task its workers run is
:mod:`tournaments.executors.cluster_task`).

The coordinator (``gin league run NAME --executor dask --scheduler tcp://HOST:PORT``) keeps the
store and the live display, exactly as with local workers; only where a match is played changes.
Each match is one Dask task, ``play_on_worker``, which carries the two bots' code by value (a
deterministic tar, made once per bot) and their registry hashes. On the worker the code is
unpacked into a cache keyed by that hash, and enters it only if the unpacked folder hashes the
same; the match process hashes it again before it plays. The match runs exactly as with the
local runner: ``python -m tournaments.executors.worker`` in a process of its own, with the sandbox.
The task sends the match's outcome and its log back, and the coordinator writes both into its own
store and log folder. Before a league the coordinator checks every worker: the same arena code
as its own, and which sandbox layers work there.

What can go wrong, and what happens:

* A worker dies mid-match. Its match process gets SIGTERM from the kernel (parent-death signal)
  and tears its bots down; the scheduler runs the task again on another worker. The result is
  written once per match id (the store refuses a second), so a task that ran twice counts once.
* A worker was SIGKILLed and could not clean up. Each match folder and each jail holds an owner
  lock; ``sweep_worker_leftovers`` takes whatever has no live owner, and runs when a worker
  starts (a worker plugin that the coordinator registers, or ``dask worker --preload
  tournaments.executors.cluster_task``) and after a match process that died hard.
* Ctrl-C on the coordinator. Dask cannot interrupt a running task, so the tasks poll a
  ``distributed.Event`` of the run: the coordinator sets it, each task stops its match (the
  seats close, the bots are torn down) and returns; then the coordinator cancels what is left,
  and the matches it had marked running go back to pending.
* The coordinator is killed outright: the scheduler drops its tasks, and each running task,
  seeing itself no longer wanted, stops its match the same way.
* The scheduler is lost: the league stops at once with a ``ClusterError`` saying so; it resumes
  like any other.

Trust: whoever can reach the scheduler runs code on the workers, and the coordinator unpickles
what workers return; see the README for TLS.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import secrets
import time
import zlib
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from distributed import Client, Event, Future

from protocol.bounded import JsonObject
from referee.matchlog import stderr_path
from tournaments.executors import sweep_here
from tournaments.executors.cluster_task import (
    CONNECT_TIMEOUT_S,
    STOP_GRACE_S,
    STOP_POLL_S,
    ClusterError,
    SweepOnStart,
    TaskReply,
    arena_code,
    play_on_worker,
    retire_idle,
    worker_probe,
)
from tournaments.executors.packing import BotCodeMismatchError, Bundle, bundle_bot
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure

__all__ = ["ClusterError", "DaskExecutor", "MatchTimings", "ProbeReport", "WorkerProbe"]

logger = logging.getLogger(__name__)

RETIRE_WAIT_S = 5.0
"""How long closing waits for the workers to end their idle match processes."""


@dataclass
class MatchTimings:
    """Where one match's time went, coordinator and worker side (seconds)."""

    submit_s: float
    wait_s: float
    fetch_s: float
    unpack_s: float
    match_s: float
    bundle_bytes: int
    log_bytes: int


@dataclass(frozen=True, slots=True)
class WorkerProbe:
    """What one worker said of itself (:func:`worker_probe`)."""

    code: str
    """:func:`arena_code` there."""
    python: str
    setpriv: bool
    layers: tuple[str, ...]
    """The sandbox layers that work there."""
    missing: tuple[str, ...]
    """Why each other layer does not."""

    @classmethod
    def from_dict(cls, data: JsonObject) -> WorkerProbe:
        """Read :func:`worker_probe`'s answer.

        Raises:
            KeyError, TypeError: not that answer (another version of the arena, say).
        """
        return cls(
            str(data["code"]),
            str(data["python"]),
            bool(data["setpriv"]),
            tuple(str(layer) for layer in data["layers"]),
            tuple(str(warning) for warning in data["missing"]),
        )


@dataclass
class ProbeReport:
    """What the workers said when asked before the league."""

    workers: dict[str, WorkerProbe]
    warnings: list[str] = field(default_factory=list)


class DaskExecutor:
    """Plays a league's matches as tasks on a Dask cluster (see the module's notes)."""

    sittings = False
    """A task may land on any worker: every series gets fresh bots."""

    def __init__(self, client: Client, *, cap: int | None = None) -> None:
        self.client = client
        self.address = str(client.scheduler.address) if client.scheduler else "?"
        self.cap = cap
        self.token = secrets.token_hex(6)
        self.stop_event = f"gin-stop-{self.token}"
        self.timings: list[MatchTimings] = []
        self._bots: dict[str, Bundle] = {}
        self._loading = trio.Lock()  # matches starting together load a bot once, not each
        self._futures: set[Future[Any]] = set()  # type: ignore[explicit-any]  # Dask's futures are untyped
        self._submitted = 0
        self.slots = self._capacity()

    @property
    def tables(self) -> int:
        """As many as :attr:`slots`."""
        return self.slots

    @classmethod
    def connect(
        cls, address: str, *, cap: int | None = None, strict: bool = False
    ) -> tuple[DaskExecutor, ProbeReport]:
        """Connect to the scheduler at ``address``, check its workers, register the sweep.

        Raises:
            ClusterError: unreachable, no workers, workers that cannot run the arena's code, or
                (``strict``) workers missing sandbox layers.
        """
        # A lost scheduler is reported once, plainly (ClusterError), not also as the client's
        # reconnection tracebacks in the middle of the live display (nor as the traceback its
        # batched sender logs at INFO when the connection closes under a send).
        for name in ("distributed.client", "distributed.batched"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        try:
            report = _probe(client, address, strict)
            client.register_plugin(SweepOnStart(), name="gin-sweep")
        except BaseException:
            client.close()
            raise
        return cls(client, cap=cap), report

    def _capacity(self) -> int:
        threads = int(sum(self.client.nthreads().values()))
        return max(1, min(threads, self.cap) if self.cap else threads)

    async def sweep(self) -> int:
        """The coordinator's machine's leftovers (each worker sweeps its own as it starts)."""
        return await sweep_here()

    async def capacity(self) -> int:
        """Matches at once: the workers' threads now (at most ``cap``); unchanged while the
        scheduler cannot be asked."""
        try:
            self.slots = await trio.to_thread.run_sync(self._capacity, abandon_on_cancel=True)
        except Exception as error:  # whatever a lost scheduler's client raises
            # (closed comms, timeouts, a closed client): the league goes on at the old capacity,
            # and the next match sent reports a lost scheduler plainly.
            logger.debug("cannot ask the cluster's capacity: %r", error)
        return self.slots

    async def _bot(self, folder: Path, digest: str) -> Bundle:
        async with self._loading:
            bot = self._bots.get(digest)
            if bot is None:
                bot = await trio.to_thread.run_sync(bundle_bot, folder, digest)
                self._bots[digest] = bot
            return bot

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Send the match to the cluster, wait for it, write its log; its outcome (``sent`` is
        called at once: every series here is on fresh bots, so their order does not matter).

        Raises:
            ClusterError: the scheduler is gone (the match cannot be sent, or was dropped).
        """
        if sent is not None:
            sent()
        try:
            bots = [
                await self._bot(Path(folder), digest)
                for folder, digest in zip(job.bots, job.hashes, strict=True)
            ]
        except (BotCodeMismatchError, OSError) as error:
            return WorkerFailure(f"bot code: {error}")
        # This machine's paths mean nothing on a worker: the task makes its own.
        remote = dataclasses.replace(job, bots=("", ""), log="", parent=0)
        self._submitted += 1
        key = f"gin-match-{job.match_id}-{self.token}-{self._submitted}"
        began = time.monotonic()
        try:
            future: Future[Any] = await trio.to_thread.run_sync(  # type: ignore[explicit-any]  # Dask's futures are untyped
                lambda: self.client.submit(
                    play_on_worker,
                    remote,
                    [bot.bundle for bot in bots],
                    self.stop_event,
                    key=key,
                    pure=False,
                    retries=0,
                )
            )
        except Exception as error:  # a closed client, most often: the scheduler is gone
            raise ClusterError(
                f"could not send match {job.match_id} to {self.address}: {error}"
            ) from None
        submitted = time.monotonic()
        self._futures.add(future)  # kept while it runs, for aclose to stop it
        await _completion(future)
        self._futures.discard(future)
        finished = time.monotonic()
        try:
            reply = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except CancelledError as error:  # only the scheduler cancels (we cancel in aclose)
            raise ClusterError(
                f"the cluster dropped match {job.match_id} ({error}): is the scheduler "
                f"{self.address} still up?"
            ) from None
        except Exception as error:  # the task's own error, whatever it was
            return WorkerFailure(f"cluster task failed: {type(error).__name__}: {error}")
        finally:
            _release(future)
        marks = (began, submitted, finished, time.monotonic())
        try:
            return await trio.to_thread.run_sync(self._outcome, job, reply, bots, marks)
        except (KeyError, TypeError, ValueError, AttributeError, zlib.error) as error:
            return WorkerFailure(
                f"cluster task failed: a malformed reply ({type(error).__name__}: {error})"
            )

    def _outcome(
        self,
        job: MatchJob,
        reply: TaskReply,
        bots: list[Bundle],
        marks: tuple[float, float, float, float],
    ) -> MatchOutcome | WorkerFailure:
        if not isinstance(reply, TaskReply):
            raise TypeError(f"the task sent back a {type(reply).__name__}, not a TaskReply")
        log = Path(job.log)
        if reply.log is not None:
            log.write_bytes(zlib.decompress(reply.log))
        for seat, kept in enumerate(reply.stderr):
            if kept is not None:  # each bot's stderr, kept beside the log here too
                stderr_path(log, seat).write_bytes(zlib.decompress(kept))
        outcome = reply.outcome
        if reply.stopped:
            return WorkerFailure("stopped on the cluster")
        if isinstance(outcome, WorkerFailure):
            return WorkerFailure(f"on {reply.worker}: {outcome.message}")
        summary = dataclasses.replace(outcome.summary, log=str(log), executed_on=reply.worker)
        began, submitted, finished, fetched = marks
        self.timings.append(
            MatchTimings(
                submitted - began,
                finished - submitted,
                fetched - finished,
                reply.timings.unpack_s,
                reply.timings.match_s,
                sum(len(bot.bundle) for bot in bots),
                len(reply.log or b""),
            )
        )
        return dataclasses.replace(outcome, summary=summary)

    async def aclose(self) -> None:
        """Stop the run's tasks on the cluster (they tear their matches down), cancel the rest,
        and disconnect (a lost scheduler: nothing to stop, its tasks are gone with it)."""
        if self.client.status == "running":
            await trio.to_thread.run_sync(self._stop_all)
            with trio.move_on_after(RETIRE_WAIT_S), contextlib.suppress(Exception):
                # (a worker lost meanwhile: its processes went with it)
                await trio.to_thread.run_sync(self.client.run, retire_idle, abandon_on_cancel=True)
        try:
            await trio.to_thread.run_sync(self.client.close)
        except Exception as error:  # whatever closing a lost client raises
            # (closed comms, timeouts): there is nothing left to let go of, and the league's
            # own outcome (or error) is what the user needs to see.
            logger.debug("closing the Dask client: %r", error)

    def _stop_all(self) -> None:
        running = list(self._futures)
        if not running:
            return
        Event(self.stop_event, client=self.client).set()
        deadline = time.monotonic() + STOP_GRACE_S + 2 * STOP_POLL_S
        while not all(future.done() for future in running) and time.monotonic() < deadline:
            time.sleep(0.1)  # each task stops its match and returns
        self.client.cancel(running)
        self._futures.clear()


def _release(future: Future[Any]) -> None:  # type: ignore[explicit-any]  # Dask's futures are untyped
    """Let the scheduler forget a finished task's result (we hold it now)."""
    try:
        future.release()
    except Exception as error:  # a closed client's loop, whatever it raises:
        # the scheduler forgets the task with the client anyway.
        logger.debug("releasing %s: %r", future.key, error)


async def _completion(future: Future[Any]) -> None:  # type: ignore[explicit-any]  # Dask's futures are untyped
    """Wait, without a thread, until ``future`` is done (or cancelled, or erred)."""
    done = trio.Event()
    token = trio.lowlevel.current_trio_token()

    def wake(_future: Future[Any]) -> None:  # type: ignore[explicit-any]  # Dask's futures are untyped
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(done.set)

    future.add_done_callback(wake)
    await done.wait()


def _probe(client: Client, address: str, strict: bool) -> ProbeReport:
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        raise ClusterError(
            f"no worker joined the scheduler at {address} within {CONNECT_TIMEOUT_S:.0f} s"
        ) from None
    try:
        answers: dict[str, JsonObject] = client.run(worker_probe)
        workers = {address_: WorkerProbe.from_dict(probe) for address_, probe in answers.items()}
    except Exception as error:
        raise ClusterError(
            f"the workers cannot run the arena's code ({type(error).__name__}: {error}): install "
            "this project with its dask extra on every worker machine"
        ) from None
    report = ProbeReport(workers)
    others = sorted(a for a, probe in workers.items() if probe.code != arena_code())
    if others:
        raise ClusterError(
            f"worker(s) {', '.join(others)} run other arena code than this coordinator (code "
            f"{arena_code()[:12]}): install the same version everywhere"
        )
    for address_, probe in sorted(workers.items()):
        if not probe.setpriv:
            report.warnings.append(f"{address_}: no setpriv: matches may outlive a killed worker")
        for warning in probe.missing:
            report.warnings.append(f"{address_}: {warning}")
    if strict and any(probe.missing for probe in workers.values()):
        raise ClusterError("strict sandbox: " + "; ".join(report.warnings))
    return report
