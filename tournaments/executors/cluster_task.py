"""The Dask task of a league's match, on a cluster's worker: the worker's side of
:mod:`tournaments.executors.cluster` (whose notes say what can go wrong, and what happens).

``play_on_worker`` unpacks the bots' code (:mod:`tournaments.executors.packing`) into this machine's
cache, runs ``python -m tournaments.executors.worker`` in a match folder of its own, stops it when
the coordinator asks or is gone, and sends the outcome and the log back. Each worker sweeps what
killed matches left on its machine when it starts (``SweepOnStart``, or ``--preload``) and after a
match process that died hard.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from distributed import Event, Worker, WorkerPlugin, get_worker

import protocol
import referee
from protocol.bounded import JsonObject
from referee.matchlog import stderr_path
from referee.sandbox import (
    SandboxUnavailable,
    SweepReport,
    detect_layers,
    hold_owner_lock,
    on_spawner_thread,
    private_dir,
    remove_tree,
    safe_name,
    sweep_jails,
)
from tournaments.executors import ExecutorError
from tournaments.executors.packing import unpack_bot
from tournaments.executors.worker import WorkerLine
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure

__all__ = [
    "CONNECT_TIMEOUT_S",
    "STOP_GRACE_S",
    "STOP_POLL_S",
    "ClusterError",
    "SweepOnStart",
    "TaskReply",
    "arena_code",
    "end_groups",
    "match_slug",
    "play_on_worker",
    "retire_idle",
    "started_processes",
    "swept",
    "worker_probe",
]


STOP_POLL_S: Final = 0.5
IDLE_EXIT_S: Final = 300.0
"""A warm match process idle this long ends by itself (one left idle for half of it is not
given another job, so none ends while it is handed one)."""
RECYCLE_AFTER: Final = 200
"""Matches a warm match process plays before it is ended for a fresh one."""
STOP_GRACE_S: Final = 15.0
"""How long a stopped match may take to tear down before its process is killed."""
CONNECT_TIMEOUT_S: Final = 20.0
UNWANTED_STATES: Final = ("cancelled", "released", "forgotten")

logger = logging.getLogger(__name__)


class ClusterError(ExecutorError):
    """The cluster cannot run this league (unreachable, no workers, workers not set up)."""


def cluster_dir() -> Path:
    """This machine's folder for the cluster's bot cache and match folders (``GIN_CLUSTER_DIR``
    or ``<tmp>/gin-cluster-<uid>``)."""
    configured = os.environ.get("GIN_CLUSTER_DIR")
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"gin-cluster-{os.geteuid()}"


def _own_folder(path: Path) -> Path:
    """``path`` as a folder of ours only (made if missing; refused if someone else's, or a
    symlink: another user could have planted it in a shared /tmp)."""
    try:
        return private_dir(path, 0o700)
    except SandboxUnavailable as error:
        raise ClusterError(f"refusing {path}: {error}") from None


_SWEPT: dict[str, list[str]] = {}
"""Folder names this worker process's sweeps removed, by kind."""
_SWEPT_LOCK: Final = threading.Lock()


def _packed(path: Path) -> bytes | None:
    """A file's bytes, compressed for the trip to the coordinator; None if there is none."""
    return zlib.compress(path.read_bytes(), 6) if path.exists() else None


def sweep_worker_leftovers() -> dict[str, SweepReport]:
    """Remove what killed matches left on this machine: match folders and jails whose owner is
    dead (and their cgroups and stray bot processes). Safe beside running matches."""
    return {"matches": sweep_jails(cluster_dir() / "matches"), "jails": sweep_jails()}


def _sweep(*, again: bool = False) -> None:
    """Sweep once per worker process (at its start), and ``again`` after a match process that
    ended badly (killed, say: its jails are left behind)."""
    with _SWEPT_LOCK:
        if _SWEPT and not again:
            return
        for kind, report in sweep_worker_leftovers().items():
            _SWEPT.setdefault(kind, []).extend(report.jails)


def swept() -> dict[str, list[str]]:
    """What this worker process's sweeps removed (folder names, by kind)."""
    with _SWEPT_LOCK:
        return {kind: list(names) for kind, names in _SWEPT.items()}


def dask_setup(worker: Worker) -> None:  # noqa: ARG001 - the preload hook's signature
    """``dask worker --preload tournaments.executors.cluster``: sweep leftovers as it starts."""
    _sweep()


def match_slug(match_id: str) -> str:
    """The match id as the start of a folder name."""
    return safe_name(match_id, 80)


def _match_argv() -> list[str]:
    setpriv = shutil.which("setpriv")
    program = [
        sys.executable,
        "-m",
        "tournaments.executors.worker",
        "--idle-exit",
        str(IDLE_EXIT_S),
    ]
    return [setpriv, "--pdeathsig", "TERM", "--", *program] if setpriv else program


class _WorkerGone(Exception):  # noqa: N818 - named for what is so
    """A match process ended or broke its protocol; the message says how."""


class MatchProcess:
    """A warm ``python -m tournaments.executors.worker`` of this Dask worker: it plays one task's
    match at a time, and match after match, so a task does not pay for Python's start and the
    referee's imports. Its stdout lines are read by a thread into a queue."""

    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in end()
        try:
            # The sandbox's spawner thread: the parent-death signal comes when this worker
            # process dies, not when a thread of Dask's pool retires.
            self.process: subprocess.Popen[bytes] = on_spawner_thread(self._popen)
        except BaseException:
            self.stderr.close()
            raise
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.played = 0
        self.last_used = time.monotonic()
        threading.Thread(target=self._read, name="match-process-out", daemon=True).start()

    def _popen(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            _match_argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            start_new_session=True,
        )

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put(raw)
        self.lines.put(None)
        self.process.wait()  # reaped here when it ends by itself (idle, or retired)

    def fresh_enough(self) -> bool:
        """Alive, well short of its idle exit, and not due to retire."""
        idle = time.monotonic() - self.last_used
        return (
            self.process.poll() is None and idle < IDLE_EXIT_S / 2 and self.played < RECYCLE_AFTER
        )

    def send(self, job: MatchJob) -> None:
        """Give it a job.

        Raises:
            _WorkerGone: it is gone.
        """
        assert self.process.stdin is not None
        self.played += 1
        try:
            self.process.stdin.write(job.to_json().encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as error:
            raise _WorkerGone(f"cannot send the job: {error}") from None

    def line(self, timeout: float) -> WorkerLine | None:
        """Its next line; None if none came within ``timeout``.

        Raises:
            _WorkerGone: it ended, or wrote something that is not a worker line.
        """
        try:
            raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if raw is None:
            self.lines.put(None)  # stays ended for a later read
            raise _WorkerGone("end of output")
        try:
            return WorkerLine.from_json(raw)
        except (KeyError, TypeError, ValueError) as error:
            raise _WorkerGone(f"not a worker line: {error}") from None

    def death(self) -> str:
        """Its exit status and the tail of its stderr (it is ended first if still running)."""
        end_groups([self.process])
        tail = ""
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            tail = " | ".join(self.stderr.read().decode(errors="replace").strip().splitlines()[-3:])
        return f"exit {self.process.returncode}: {tail or 'no output'}"

    def end(self) -> None:
        """Stop it (its match closes its seats), then let go of its files."""
        end_groups([self.process])
        for stream in (self.process.stdin, self.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()


_STARTED = [0]
"""Match processes this Dask worker started (see :func:`started_processes`)."""
_IDLE: list[MatchProcess] = []
"""This Dask worker's warm match processes not playing now."""
_IDLE_LOCK: Final = threading.Lock()


def _take_process() -> MatchProcess:
    """An idle warm match process, or a fresh one; stale ones are ended on the way."""
    with _IDLE_LOCK:
        while _IDLE:
            candidate = _IDLE.pop()
            if candidate.fresh_enough():
                return candidate
            threading.Thread(target=candidate.end, daemon=True).start()
        _STARTED[0] += 1
    return MatchProcess()


def started_processes() -> int:
    """How many match processes this Dask worker has started: fewer than its matches, since
    they are warm (the coordinator's tests ask it with ``client.run``)."""
    with _IDLE_LOCK:
        return _STARTED[0]


def retire_idle() -> int:
    """End this Dask worker's idle match processes (a league's coordinator, as it closes, runs
    this on every worker: nothing of its run stays behind). Each is told that its input ended,
    so it finishes what it was closing and exits; how many."""
    with _IDLE_LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
    for process in idle:
        with contextlib.suppress(OSError, ValueError):
            if process.process.stdin is not None:
                process.process.stdin.close()
        process.stderr.close()
    return len(idle)


def _give_back(process: MatchProcess) -> None:
    process.last_used = time.monotonic()
    with _IDLE_LOCK:
        _IDLE.append(process)


def _await_line(
    process: MatchProcess, match_id: str, closed: bool, event_name: str
) -> WorkerLine | None:
    """The match process's line about ``match_id`` (its outcome, or with ``closed`` its closed
    line); None if the match was stopped because the coordinator asked or nobody wants the
    result any more (a coordinator killed outright, say): the process is ended then.

    Raises:
        _WorkerGone: the process ended, or spoke out of turn.
    """
    worker = get_worker()
    key = worker.get_current_task()
    while True:
        line = process.line(STOP_POLL_S)
        if line is None:
            if _unwanted(worker, key) or _stop_requested(event_name):
                process.end()
                return None
            continue
        if line.match_id == match_id and line.closed == closed:
            return line
        if not line.closed:
            raise _WorkerGone(f"a line about {line.match_id} while playing {match_id}")


def _stop_requested(event_name: str) -> bool:
    """Whether the coordinator asked its run's tasks to stop (False if it cannot be asked)."""
    try:
        return bool(Event(event_name).is_set())
    except (OSError, TimeoutError, RuntimeError, ValueError) as error:
        # The scheduler cannot be reached (OSError: a closed comm; TimeoutError), or there is no
        # client to ask it with (RuntimeError, ValueError): nobody asked, as far as we know.
        logger.debug("cannot ask whether %s is set: %r", event_name, error)
        return False


def _unwanted(worker: Worker, key: object) -> bool:
    """Whether the scheduler dropped this running task (cancelled, or its client went away)."""
    try:
        task = worker.state.tasks.get(key)  # type: ignore[call-overload]
    except (AttributeError, TypeError) as error:  # the worker's internals moved: assume wanted
        logger.debug("cannot see the state of task %s: %r", key, error)
        return False
    return task is None or task.state in UNWANTED_STATES


def end_groups(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM the process groups these processes lead (a match closes its seats and tears its
    bots down), wait up to ``STOP_GRACE_S`` for each, then SIGKILL the groups still there."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass(frozen=True, slots=True)
class TaskTimings:
    """Where a task's time went on its worker (seconds)."""

    unpack_s: float
    match_s: float


@dataclass(frozen=True, slots=True)
class TaskReply:
    """What a task sends back to the coordinator (pickled by Dask)."""

    outcome: MatchOutcome | WorkerFailure
    log: bytes | None = None
    """The match log, zlib-compressed."""
    stderr: tuple[bytes | None, bytes | None] = (None, None)
    """Each bot's stderr as kept beside the log, zlib-compressed."""
    stopped: bool = False
    """The match was stopped (the coordinator asked, or nobody wants it any more)."""
    worker: str = ""
    timings: TaskTimings = TaskTimings(0.0, 0.0)


def play_on_worker(job: MatchJob, bundles: list[bytes], stop_event: str) -> TaskReply:
    """The Dask task: play ``job`` with the bots in ``bundles``; its outcome and its log.

    ``job`` is the local runner's job without paths: the bots' folders (unpacked from
    ``bundles``, under ``job.hashes``) and the log are made here, in a match folder that holds an
    owner lock while the match runs.
    """
    began = time.monotonic()
    if _stop_requested(stop_event):  # queued when the coordinator stopped the league
        return TaskReply(WorkerFailure("stopped before it began"), stopped=True)
    _sweep()
    root = _own_folder(cluster_dir())
    folders = [
        unpack_bot(bundle, digest, _own_folder(root / "bots"))
        for bundle, digest in zip(bundles, job.hashes, strict=True)
    ]
    unpacked = time.monotonic()
    matches = _own_folder(root / "matches")
    folder = matches / f"{match_slug(job.match_id)}-{secrets.token_hex(4)}"
    folder.mkdir(mode=0o700)
    owner = hold_owner_lock(folder)
    process: MatchProcess | None = None
    reusable = False
    try:
        local = dataclasses.replace(  # the match process hashes the cached code again
            job,
            bots=(str(folders[0]), str(folders[1])),
            log=str(folder / "log.jsonl"),
            parent=os.getpid(),
        )
        process = _take_process()
        outcome: MatchOutcome | WorkerFailure
        try:
            process.send(local)
            line = _await_line(process, job.match_id, False, stop_event)
            if line is not None and line.outcome is not None:  # its stderr comes with the close
                closed = _await_line(process, job.match_id, True, stop_event)
                line = line if closed is not None else None
        except _WorkerGone as gone:
            outcome = WorkerFailure(f"{gone}; {process.death()}")
            _sweep(again=True)  # a match process that died hard leaves its jails behind
            stopped = False
        else:
            stopped = line is None
            if line is None:
                outcome = WorkerFailure("stopped")
            elif line.outcome is not None:
                outcome, reusable = line.outcome, True
            else:
                outcome = WorkerFailure(line.failure or "the match process was interrupted")
                reusable = line.failure is not None
        ended = time.monotonic()
        log = folder / "log.jsonl"
        return TaskReply(
            outcome,
            _packed(log),
            (_packed(stderr_path(log, 0)), _packed(stderr_path(log, 1))),
            stopped,
            get_worker().address,
            TaskTimings(unpacked - began, ended - unpacked),
        )
    finally:
        if process is not None:
            if reusable:
                _give_back(process)
            else:
                process.end()
        remove_tree(folder)
        os.close(owner)


@functools.cache
def arena_code() -> str:
    """A hash of the code that plays matches (the referee, the protocol, the tournaments
    package): a cluster whose workers run other code than the coordinator is refused, since
    its results would not be those of this version."""
    digest = hashlib.sha256()
    league_code = Path(__file__).resolve().parent.parent  # tournaments/, without importing it
    for root in (
        Path(referee.__file__ or "").parent,
        Path(protocol.__file__ or "").parent,
        league_code,
    ):
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def worker_probe() -> JsonObject:
    """What the coordinator checks of each worker before it sends matches (plain data, read by
    :meth:`WorkerProbe.from_dict`: a worker of another version still answers readably)."""
    layers = detect_layers()
    return {
        "code": arena_code(),
        "python": sys.version.split()[0],
        "setpriv": shutil.which("setpriv") is not None,
        "layers": [status.layer.value for status in layers if status.active],
        "missing": [status.warning() for status in layers if not status.active],
    }


class SweepOnStart(WorkerPlugin):
    """Registered by the coordinator: every worker, and every restarted one, sweeps as it starts."""

    def setup(self, worker: Worker) -> None:  # noqa: ARG002 - the plugin hook's signature
        """Sweep this machine's leftovers of killed matches (once per worker process)."""
        _sweep()
