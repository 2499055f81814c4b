"""Looking at processes through /proc: who is alive, whose, whose child. Raw reads: a full scan
of a few hundred processes takes a few milliseconds."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

_DEAD_STATES: Final = frozenset({"Z", "X", "x"})
_STARTED: Final[set[int]] = set()
_STARTED_LOCK: Final = threading.Lock()


def _read(path: str, limit: int = 4096) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks: list[bytes] = []
        while sum(map(len, chunks)) < limit and (chunk := os.read(fd, limit)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Proc:
    """One line of a process table."""

    pid: int
    comm: str
    state: str
    ppid: int

    @property
    def alive(self) -> bool:
        """Running or sleeping: not a zombie."""
        return self.state not in _DEAD_STATES


def proc(pid: int) -> Proc | None:
    """The process ``pid`` as /proc/<pid>/stat shows it, or None if it is gone."""
    raw = _read(f"/proc/{pid}/stat")
    if not raw or b")" not in raw:
        return None
    head, _, tail = raw.rpartition(b")")
    fields = tail.split()
    comm = head.partition(b"(")[2].decode(errors="replace")
    return Proc(pid, comm, fields[0].decode(), int(fields[1]))


def all_pids() -> list[int]:
    """Every pid visible in /proc."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def table() -> list[Proc]:
    """Every process (a snapshot)."""
    return [found for pid in all_pids() if (found := proc(pid)) is not None]


def is_alive(pid: int) -> bool:
    """Exists and is not a zombie."""
    found = proc(pid)
    return found is not None and found.alive


def uids(pid: int) -> tuple[int, ...]:
    """Real, effective, saved and filesystem uid (empty if gone)."""
    raw = _read(f"/proc/{pid}/status")
    if raw is None:
        return ()
    for line in raw.split(b"\n"):
        if line.startswith(b"Uid:"):
            return tuple(int(field) for field in line.split()[1:])
    return ()


def pids_of_uid(uid: int, processes: Iterable[Proc] | None = None) -> list[int]:
    """Live processes with ``uid`` as any of their user ids."""
    return [p.pid for p in processes or table() if p.alive and uid in uids(p.pid)]


def descendants(roots: Iterable[int], processes: Iterable[Proc] | None = None) -> set[int]:
    """Live descendants of ``roots`` (not the roots), found through the parent links."""
    snapshot = list(processes or table())
    children: dict[int, list[int]] = {}
    for found in snapshot:
        children.setdefault(found.ppid, []).append(found.pid)
    living = {found.pid for found in snapshot if found.alive}
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen & living


def my_zombies() -> list[Proc]:
    """Zombie children of this process (including adopted orphans, as a subreaper)."""
    me = os.getpid()
    return [found for found in table() if found.ppid == me and not found.alive]


def reap(pid: int) -> None:
    """Collect the exit status of a zombie child (no-op if it is not ours any more)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def cmdline(pid: int) -> bytes:
    """The raw command line (empty if gone or unreadable)."""
    return _read(f"/proc/{pid}/cmdline", limit=1 << 20) or b""


def wait_gone(pids: Iterable[int], timeout: float) -> list[int]:
    """Wait up to ``timeout`` seconds for the pids to die; returns those still alive."""
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if is_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.005)
        alive = [pid for pid in alive if is_alive(pid)]
    return alive


def started(pid: int) -> None:
    """Note a process started (and waited for) through ``subprocess``: never reap it here."""
    with _STARTED_LOCK:
        _STARTED.add(pid)


def forget(pid: int) -> None:
    """The started process was reaped by its ``Popen``."""
    with _STARTED_LOCK:
        _STARTED.discard(pid)


def reap_orphans(extra: Iterable[int] = (), jail_uids: Iterable[int] = ()) -> int:
    """Reap zombie children that no ``Popen`` waits for; returns how many.

    The referee is a child subreaper, so orphans of the bots' trees become its children. bwrap's
    outer process exits as soon as it has the bot's status, without waiting for the sandbox's
    pid-1 process: that one lands here and would stay a zombie, holding a pid and a count of
    the bot uid's RLIMIT_NPROC. Reaped: zombies named bwrap, those of a jail's uid, and the
    ``extra`` pids (seen in a jail), never one of the ``started`` processes.
    """
    wanted_uids = set(jail_uids)
    wanted = set(extra)
    with _STARTED_LOCK:
        protected = set(_STARTED)
    count = 0
    for zombie in my_zombies():
        if zombie.pid in protected:
            continue
        if zombie.comm == "bwrap" or zombie.pid in wanted or wanted_uids & set(uids(zombie.pid)):
            reap(zombie.pid)
            count += 1
    return count
