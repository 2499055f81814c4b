"""Sweeping what killed referees left behind: jail folders, their cgroups, busy bot users.

A referee that is SIGKILLed (a worker killed mid-match, a machine's OOM killer) cannot tear its
jails down. Its bots die by PDEATHSIG, but their folders, stage folders and cgroups stay, and a
bot user may keep a straggler. Every jail therefore carries an owner lock: ``owner.lock`` in the
jail folder, ``flock``-ed by the referee for the life of the jail; the kernel drops the lock when
the referee dies, however it dies. ``sweep_leftovers`` takes what has no live owner, and never
what a running referee (of this machine, in any process) still holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from referee.sandbox._cgroup import BotCgroup, cgroup_mounts
from referee.sandbox._procs import pids_of_uid
from referee.sandbox._tools import sweep_uid
from referee.sandbox._users import STATE_DIR, USER_PREFIX

OWNER_LOCK: Final = "owner.lock"
CGROUPS_FILE: Final = "cgroups.json"
UNLOCKED_GRACE_S: Final = 60.0
"""A jail folder without an owner lock is taken only when older than this (it may be one being
made right now: the folder exists a moment before its lock)."""


def hold_owner_lock(jail_dir: Path) -> int:
    """Lock ``jail_dir`` for this process; returns the descriptor to close at teardown.

    The lock file is locked under a private name first and only then renamed ``owner.lock``, so
    no sweep ever finds an ``owner.lock`` that is not yet locked.
    """
    making = jail_dir / f".{OWNER_LOCK}-{secrets.token_hex(6)}"
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(making, flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(making, jail_dir / OWNER_LOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def record_cgroup(jail_dir: Path, cgroup: BotCgroup) -> None:
    """Write down the jail's cgroup directories, so a sweep can find them."""
    dirs = {controller: str(path) for controller, path in cgroup.dirs.items()}
    (jail_dir / CGROUPS_FILE).write_text(json.dumps({"version": cgroup.plan.version, "dirs": dirs}))


@contextlib.contextmanager
def _abandoned(jail_dir: Path) -> Iterator[bool]:
    """True (with the lock held meanwhile) when no live process owns ``jail_dir``."""
    try:
        fd = os.open(jail_dir / OWNER_LOCK, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        try:
            age = time.time() - os.lstat(jail_dir).st_mtime
        except FileNotFoundError:
            yield False
            return
        yield age > UNLOCKED_GRACE_S
        return
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def remove_tree(path: Path) -> bool:
    """Delete a jail folder without following symlinks; True if it is gone."""

    def make_writable(_function: Callable[[str], object], failed: str, _info: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), 0o700)  # only our own files here (non-root mode)
            _function(failed)

    if path.is_symlink():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, onerror=make_writable)
    return not os.path.lexists(path)


@dataclass(frozen=True)
class SweepReport:
    """What a sweep took away, and what it could not."""

    jails: tuple[str, ...] = ()
    cgroups: int = 0
    users: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing was found to sweep."""
        return not (self.jails or self.cgroups or self.users or self.problems)


def _bot_group(path: Path) -> bool:
    """Whether ``path`` is a bot cgroup: a real ``gin-*`` directory in a cgroup hierarchy
    (never a path that goes through a symlink or leaves the cgroup filesystems)."""
    unified, legacy = cgroup_mounts()
    mounts = [m for m in (unified, *legacy.values()) if m is not None]
    if not re.fullmatch(r"gin-[A-Za-z0-9_.-]+", path.name) or os.path.realpath(path) != str(path):
        return False
    if not any(path.is_relative_to(mount) and path != mount for mount in mounts):
        return False
    with contextlib.suppress(OSError):
        return stat.S_ISDIR(os.lstat(path).st_mode)
    return False


def _sweep_cgroups(jail_dir: Path) -> tuple[int, list[str]]:
    """Kill and remove the cgroups recorded in an abandoned jail; (removed, problems)."""
    try:
        recorded = json.loads((jail_dir / CGROUPS_FILE).read_text())
    except FileNotFoundError:
        return 0, []
    except (OSError, ValueError) as error:
        return 0, [f"{jail_dir.name}: unreadable {CGROUPS_FILE}: {error}"]
    dirs = {str(k): Path(v) for k, v in recorded.get("dirs", {}).items()}
    refused = [str(path) for path in dirs.values() if path.exists() and not _bot_group(path)]
    if refused:
        return 0, [f"{jail_dir.name}: not bot cgroups, left alone: {', '.join(refused)}"]
    dirs = {k: v for k, v in dirs.items() if v.exists()}
    if not dirs:
        return 0, []
    group = BotCgroup.adopt(int(recorded.get("version", 1)), dirs)
    group.kill()
    if group.remove():
        return len(dirs), []
    return 0, [f"{jail_dir.name}: cgroup {', '.join(map(str, dirs.values()))} still busy"]


def _sweep_users(locks: Path) -> tuple[list[str], list[str]]:
    """Kill the stragglers of bot users that no referee holds; (users swept, problems)."""
    swept: list[str] = []
    problems: list[str] = []
    if not locks.is_dir():
        return swept, problems
    for lock in sorted(locks.glob(f"{USER_PREFIX}*.lock")):
        name = lock.name.removesuffix(".lock")
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # leased by a live referee
            if pids_of_uid(user.pw_uid):
                try:
                    sweep_uid(user.pw_uid, user.pw_gid)
                    swept.append(name)
                except (ValueError, OSError) as error:
                    problems.append(f"{name}: {error}")
        finally:
            os.close(fd)
    return swept, problems


def sweep_leftovers(root_dir: Path) -> SweepReport:
    """Remove the jails under ``root_dir`` whose referee is gone, with their cgroups and stage
    folders, and kill leftover processes of bot users nobody leases (those need root)."""
    if not root_dir.exists():
        return SweepReport()
    info = os.lstat(root_dir)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return SweepReport(
            problems=(
                f"{root_dir}: not a folder of uid {os.geteuid()} that only it may write: not swept",
            )
        )
    jails: list[str] = []
    problems: list[str] = []
    cgroups = 0
    entries = sorted(root_dir.iterdir())
    for jail_dir in entries:
        if jail_dir.is_symlink() or not jail_dir.is_dir():
            continue
        with _abandoned(jail_dir) as abandoned:
            if not abandoned:
                continue
            removed, trouble = _sweep_cgroups(jail_dir)
            cgroups += removed
            problems += trouble
            if trouble:
                continue  # kept, with its record, for another try
            stage = STATE_DIR / "stage" / jail_dir.name
            if remove_tree(jail_dir) and remove_tree(stage):
                jails.append(jail_dir.name)
            else:
                problems.append(f"{jail_dir}: could not be removed")
    users: list[str] = []
    if os.geteuid() == 0:
        users, trouble = _sweep_users(STATE_DIR / "users")
        problems += trouble
    return SweepReport(tuple(jails), cgroups, tuple(users), tuple(problems))
