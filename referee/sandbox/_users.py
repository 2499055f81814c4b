"""Per-bot system users ``ginbot0``, ``ginbot1``... leased exclusively across referee processes.

A lease is an exclusive ``flock`` on ``/run/gin-sandbox/users/<name>.lock``, held for the life of
the jail; the kernel drops it if the referee dies. A user that still has live processes (say, a
jail of a crashed referee whose bots are still dying) is skipped, never reused while busy. Each
user has its own group of the same name, so no two bots share a gid.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import os
import pwd
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from referee.sandbox._base import SandboxUnavailable
from referee.sandbox._procs import pids_of_uid

STATE_DIR: Final = Path("/run/gin-sandbox")
USER_PREFIX: Final = "ginbot"
MAX_BOT_USERS: Final = 256
USERADD_TIMEOUT_S: Final = 30.0


def private_dir(path: Path, mode: int) -> Path:
    """Create (or check) a root-owned real directory with ``mode``; refuse symlinks or strangers."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=mode, parents=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise SandboxUnavailable(f"{path} is not a directory owned by uid {os.geteuid()}")
    os.chmod(path, mode)
    return path


@dataclass
class UserLease:
    """One bot user, held exclusively until ``release``."""

    name: str
    uid: int
    gid: int
    _lock_fd: int | None = field(default=None, repr=False)

    def release(self) -> None:
        """Give the user back (idempotent)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None


def _ensure_user(name: str) -> pwd.struct_passwd:
    """The user ``name``, created as a locked system user with its own group if missing."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name)
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    command = [useradd, "--system", "--user-group", "--no-create-home"]
    command += ["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    lock_fd = os.open(private_dir(STATE_DIR, 0o755) / "useradd.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)  # one useradd at a time across referees
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=USERADD_TIMEOUT_S, check=False
        )
        if result.returncode != 0:
            raise SandboxUnavailable(f"useradd {name} failed: {result.stderr.strip()}")
        return pwd.getpwnam(name)
    finally:
        os.close(lock_fd)


def _own_group(user: pwd.struct_passwd) -> bool:
    """The user's primary group is its own (same name), not shared with other bots."""
    try:
        return grp.getgrgid(user.pw_gid).gr_name == user.pw_name
    except KeyError:
        return False


def _try_lease(index: int, locks: Path) -> UserLease | None:
    name = f"{USER_PREFIX}{index}"
    fd = os.open(locks / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        user = _ensure_user(name)
    except BaseException:
        os.close(fd)
        raise
    if not _own_group(user) or pids_of_uid(user.pw_uid):
        os.close(fd)  # busy (a dying jail of a dead referee) or not ours to use
        return None
    return UserLease(name, user.pw_uid, user.pw_gid, fd)


def lease_bot_user() -> UserLease:
    """Lease the lowest free bot user, creating it if needed (root only)."""
    locks = private_dir(STATE_DIR / "users", 0o700)
    for index in range(MAX_BOT_USERS):
        lease = _try_lease(index, locks)
        if lease is not None:
            return lease
    raise SandboxUnavailable(f"all {MAX_BOT_USERS} bot users are busy")
