"""The Dask task of a league's match, on a cluster's worker: the worker's side of
:mod:`tournaments.executors.cluster` (whose notes say what can go wrong, and what happens).

``play_on_worker`` unpacks the bots' code (:mod:`tournaments.packing`) into this machine's cache,
runs ``python -m tournaments.worker`` in a match folder of its own, stops it when the coordinator
asks or is gone, and sends the outcome and the log back. Each worker sweeps what killed matches
left on its machine when it starts (``SweepOnStart``, or ``--preload``) and after a match process
that died hard.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
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
from typing import Any, Final

from distributed import Event, Worker, WorkerPlugin, get_worker

import protocol
import referee
import tournaments
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
from tournaments.executors import ExecutorError, outcome_of
from tournaments.packing import unpack_bot
from tournaments.records import MatchJob, MatchOutcome, WorkerFailure

STOP_POLL_S: Final = 0.5
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
    program = [sys.executable, "-m", "tournaments.worker"]
    return [setpriv, "--pdeathsig", "TERM", "--", *program] if setpriv else program


def _start(folder: Path) -> subprocess.Popen[bytes]:
    with (
        open(folder / "job.json", "rb") as stdin,
        open(folder / "stdout", "wb") as stdout,
        open(folder / "stderr", "wb") as stderr,
    ):
        return subprocess.Popen(
            _match_argv(), stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
        )


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


def _finish(process: subprocess.Popen[bytes], event_name: str) -> bool:
    """Wait for the match process; True if it was stopped, because the coordinator asked or
    because nobody wants the result any more (a coordinator killed outright, say)."""
    worker = get_worker()
    key = worker.get_current_task()
    while True:
        try:
            process.wait(timeout=STOP_POLL_S)
            return False
        except subprocess.TimeoutExpired:
            pass
        if _unwanted(worker, key) or _stop_requested(event_name):
            end_groups([process])
            return True


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
    process: subprocess.Popen[bytes] | None = None
    try:
        local = dataclasses.replace(  # the match process hashes the cached code again
            job,
            bots=(str(folders[0]), str(folders[1])),
            log=str(folder / "log.jsonl"),
            parent=os.getpid(),
        )
        (folder / "job.json").write_text(local.to_json())
        # The sandbox's spawner thread: the parent-death signal comes when this worker process
        # dies, not when a thread of Dask's pool retires.
        process = on_spawner_thread(_start, folder)
        stopped = _finish(process, stop_event)
        ended = time.monotonic()
        if process.returncode and not stopped:
            _sweep(again=True)  # a match process that died hard leaves its jails behind
        log = folder / "log.jsonl"
        return TaskReply(
            outcome_of(
                process.returncode,
                (folder / "stdout").read_bytes(),
                (folder / "stderr").read_bytes(),
            ),
            _packed(log),
            (_packed(stderr_path(log, 0)), _packed(stderr_path(log, 1))),
            stopped,
            get_worker().address,
            TaskTimings(unpacked - began, ended - unpacked),
        )
    finally:
        if process is not None:
            end_groups([process])
        remove_tree(folder)
        os.close(owner)


@functools.cache
def arena_code() -> str:
    """A hash of the code that plays matches (the referee, the protocol, the tournaments
    package): a cluster whose workers run other code than the coordinator is refused, since
    its results would not be those of this version."""
    digest = hashlib.sha256()
    for package in (referee, protocol, tournaments):
        root = Path(package.__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def worker_probe() -> dict[str, Any]:
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
