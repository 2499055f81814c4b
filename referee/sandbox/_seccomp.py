"""The bots' seccomp deny-list, built with libseccomp (``pyseccomp``) and exported as BPF.

Default action ALLOW; the calls below fail with EPERM (ENOSYS for ``clone3``), so a bot that
tries one gets an error it can print rather than a silent kill. A deny-list suits any language
runtime; an allow-list would need one list per runtime. Syscalls of a foreign architecture
(the 32-bit ABI) hit libseccomp's default bad-arch action, which kills the process.
"""

from __future__ import annotations

import errno
import functools
import os
import socket
import tempfile
import termios
from typing import Any, Final

DENIED: Final = (
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd",
    # namespaces and mounts: the sandbox's own walls
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # kernel attack surface a bot has no use for
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key", "open_by_handle_at",
    "name_to_handle_at", "lookup_dcookie",
    # administration of the machine
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "iopl", "ioperm", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "vhangup",
)  # fmt: skip

CLONE_NAMESPACE_FLAGS: Final = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
TTY_INJECTION_IOCTLS: Final = (termios.TIOCSTI, 0x541C)  # TIOCSTI, TIOCLINUX


def _add_rules(library: Any, rules: Any) -> None:  # type: ignore[explicit-any]  # pyseccomp: untyped
    eperm = library.ERRNO(errno.EPERM)
    for name in DENIED:
        try:
            rules.add_rule(eperm, name)
        except (ValueError, RuntimeError, OSError):
            continue  # not a syscall of this architecture or libseccomp version
    rules.add_rule(eperm, "socket", library.Arg(0, library.NE, socket.AF_UNIX))
    rules.add_rule(eperm, "socketpair", library.Arg(0, library.NE, socket.AF_UNIX))
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(eperm, "clone", library.Arg(0, library.MASKED_EQ, flag, flag))
    # clone3 takes its flags in memory, out of seccomp's sight: make it look missing, and libc
    # falls back to clone(), whose flags are checked above.
    rules.add_rule(library.ERRNO(errno.ENOSYS), "clone3")
    for request in TTY_INJECTION_IOCTLS:
        rules.add_rule(eperm, "ioctl", library.Arg(1, library.MASKED_EQ, 0xFFFFFFFF, request))


@functools.cache
def filter_bpf() -> bytes:
    """The compiled filter (cBPF program). Raises ImportError/OSError if libseccomp is missing."""
    import pyseccomp  # noqa: PLC0415 - optional: loads libseccomp.so.2 when imported

    rules = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    _add_rules(pyseccomp, rules)
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        program = exported.read()
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, f"libseccomp exported {len(program)} bytes of BPF")
    return program


def unavailable_reason() -> str | None:
    """Why the filter cannot be built here, or None if it can."""
    try:
        filter_bpf()
    except ImportError:
        return "pyseccomp is not installed: pip install pyseccomp (it is a project dependency)"
    except (OSError, RuntimeError, ValueError) as error:
        return f"libseccomp failed ({error}): apt-get install libseccomp2"
    return None


def filter_fd() -> int:
    """A fresh memfd holding the BPF program, positioned at 0 (close-on-exec in this process)."""
    fd = os.memfd_create("gin-seccomp")
    try:
        os.write(fd, filter_bpf())
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
