"""Exec-wrapper used only when bubblewrap is missing: load a seccomp BPF program, then exec.

Usage: ``python -I seccomp_exec.py FD PROGRAM [ARG...]``. It reads the program from FD (as
``bwrap --seccomp FD`` would), sets NO_NEW_PRIVS, installs the filter and execs PROGRAM. It runs
as a fresh process, standard library only, so nothing of the referee (threads, gRPC) is in it.
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class SockFprog(ctypes.Structure):
    """``struct sock_fprog``: the number of 8-byte instructions and a pointer to them."""

    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _install(program: bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    zero = ctypes.c_ulong(0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    mode = ctypes.c_ulong(SECCOMP_MODE_FILTER)
    if libc.prctl(PR_SET_SECCOMP, mode, ctypes.byref(fprog), zero, zero) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def main(argv: list[str]) -> int:
    """Install the filter read from ``argv[1]`` and exec ``argv[2:]``."""
    if len(argv) < 3:
        print("usage: seccomp_exec.py FD PROGRAM [ARG...]", file=sys.stderr)
        return 2
    try:
        _install(_read_all(int(argv[1])))
        os.execvp(argv[2], argv[2:])
    except OSError as error:
        print(f"seccomp_exec: {error}", file=sys.stderr)
    return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv))
