"""prctl through libc, and the referee's own hardening."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
import threading
from typing import Final

PR_GET_DUMPABLE: Final = 3
PR_SET_DUMPABLE: Final = 4
PR_SET_CHILD_SUBREAPER: Final = 36
PR_GET_CHILD_SUBREAPER: Final = 37

_LIBC: Final = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_HARDEN_LOCK: Final = threading.Lock()
_hardening: tuple[str, ...] | None = None


def prctl(option: int, arg: int = 0) -> int:
    """``prctl(option, arg, 0, 0, 0)``; raises OSError on failure."""
    zero = ctypes.c_ulong(0)
    result = int(_LIBC.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), zero, zero, zero))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl({option}): {os.strerror(error)}")
    return result


def is_subreaper() -> bool:
    """Whether this process adopts its orphaned descendants."""
    flag = ctypes.c_int(0)
    zero = ctypes.c_ulong(0)
    pointer = ctypes.cast(ctypes.pointer(flag), ctypes.c_void_p)
    if _LIBC.prctl(ctypes.c_int(PR_GET_CHILD_SUBREAPER), pointer, zero, zero, zero) < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_GET_CHILD_SUBREAPER): {os.strerror(error)}")
    return flag.value != 0


def harden_referee_process() -> tuple[str, ...]:
    """Make this process a safe parent for bots; idempotent. Returns the problems found.

    * ``GRPC_ENABLE_FORK_SUPPORT=0``: gRPC's fork handlers must never run in a child. The
      variable only counts if it is set before ``grpc`` is imported, so the CLI calls this
      function first thing at start-up (and the referee never uses ``preexec_fn``, ``user=`` or
      ``group=``, which turn ``subprocess``'s vfork into a fork).
    * ``PR_SET_DUMPABLE=0``: a bot running as the referee's uid cannot ptrace the referee or read
      its ``/proc/<pid>/mem`` or ``environ``.
    * ``PR_SET_CHILD_SUBREAPER``: descendants that escape their parent (``setsid`` plus double
      fork) are re-parented here, not to init, so the teardown can find and reap them.
    * ``RLIMIT_NOFILE`` raised to its hard limit: the referee's descriptors never run out before
      a bot's do (each seat's socket also admits one connection only; see ``referee.bridge``).
    """
    global _hardening  # noqa: PLW0603 - one process-wide state, set once
    with _HARDEN_LOCK:
        if _hardening is None:
            _hardening = _harden()
        return _hardening


def _harden() -> tuple[str, ...]:
    problems: list[str] = []
    before = os.environ.get("GRPC_ENABLE_FORK_SUPPORT")
    os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "0"
    if "grpc" in sys.modules and before != "0":
        problems.append(
            "grpc was imported before GRPC_ENABLE_FORK_SUPPORT=0 was set: "
            "call harden_referee_process() before importing grpc"
        )
    settings = (
        (PR_SET_DUMPABLE, 0, "PR_SET_DUMPABLE=0"),
        (PR_SET_CHILD_SUBREAPER, 1, "PR_SET_CHILD_SUBREAPER=1"),
    )
    for option, value, name in settings:
        try:
            prctl(option, value)
        except OSError as error:
            problems.append(f"prctl {name} failed: {error}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (OSError, ValueError) as error:
            problems.append(f"raising RLIMIT_NOFILE from {soft} to {hard} failed: {error}")
    return tuple(problems)


def hardening_state() -> str:
    """A one-line description of the referee's current hardening (for ``gin sandbox doctor``)."""
    dumpable = prctl(PR_GET_DUMPABLE)
    fork_support = os.environ.get("GRPC_ENABLE_FORK_SUPPORT", "unset")
    return (
        f"dumpable={dumpable}, subreaper={int(is_subreaper())}, "
        f"GRPC_ENABLE_FORK_SUPPORT={fork_support}"
    )
