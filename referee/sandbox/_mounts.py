"""What a bot sees under bubblewrap, and the bwrap command line that builds it.

Inside: ``/usr`` (and the usual ``/bin``, ``/lib``... links) read-only, a few files of ``/etc``,
the referee's Python runtime and the project's own packages read-only at their host paths (so
``python bot.py`` with the SDK works), the bot's code read-only at ``/bot``, its run folder
read-only at ``/run/bot`` (the referee's socket is in it: connecting needs no write access to
the mount), a fresh ``/proc`` and a read-only ``/dev`` (its device nodes only), a small tmpfs
``/tmp`` and a smaller ``/dev/shm``. Nothing else of the host. The machine-wide counters of
``/proc`` (CPU, load, memory, pressure...) would show the referee's and the other bot's activity:
each is covered by a file of the jail's own, idle, figures (:func:`proc_views`).

bwrap runs as the bot's uid, so it can only bind what that uid can reach. A source behind a
directory the bot may not traverse (a runtime under ``/root``, say) is first bind-mounted, by
root, onto a neutral staging point in a private mount namespace of the bot's exec chain.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import py_compile
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from protocol.manifest import CODE_MOUNT
from referee.sandbox._base import SandboxLimits

INSIDE_CODE: Final = CODE_MOUNT
INSIDE_RUN: Final = "/run/bot"
PROJECT_PACKAGES: Final = ("protocol", "referee", "sample_bots")
ROOT_LINKS: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES: Final = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives")
NAMESPACE_FLAGS: Final = (
    "--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-net", "--unshare-ipc",
    "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
    "--cap-drop", "ALL", "--hostname", "gin-bot",
)  # fmt: skip


SHM: Final = "/dev/shm"
MASKED_PROC: Final = (
    "stat", "loadavg", "meminfo", "uptime", "pressure/cpu", "pressure/io", "pressure/memory",
    "pressure/irq", "vmstat", "schedstat", "interrupts", "softirqs", "diskstats",
)  # fmt: skip
"""Files of ``/proc`` that count for the whole machine, each covered by a file of the jail's own
(those the machine has): the four a runtime sizes itself by get the jail's figures, the others
are empty."""
_PRESSURE: Final = (
    "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
)


def _idle_stat(cpus: int) -> str:
    """``/proc/stat`` of an idle machine of ``cpus`` CPUs (glibc counts its ``cpuN`` lines for
    ``sysconf(_SC_NPROCESSORS_ONLN)`` when there is no ``/sys``: Python's ``os.cpu_count()``)."""
    zeros = " ".join(["0"] * 10)
    lines = [f"cpu  {zeros}", *(f"cpu{index} {zeros}" for index in range(cpus))]
    lines += ["intr 0", "ctxt 0", f"btime {_boot_time()}", "processes 0"]
    lines += ["procs_running 1", "procs_blocked 0", "softirq " + " ".join(["0"] * 11)]
    return "\n".join(lines) + "\n"


def _boot_time() -> int:
    """When the machine booted (a constant: the one figure of ``/proc/stat`` kept)."""
    return int(time.time() - time.clock_gettime(time.CLOCK_BOOTTIME))


def _meminfo(memory_mb: int) -> str:
    """``/proc/meminfo`` of a machine with the jail's memory cap, all of it free, no swap."""
    kib = memory_mb * 1024
    figures = {"MemTotal": kib, "MemFree": kib, "MemAvailable": kib, "Buffers": 0, "Cached": 0}
    figures |= {"SwapCached": 0, "Active": 0, "Inactive": 0, "SwapTotal": 0, "SwapFree": 0}
    figures |= {"Shmem": 0, "CommitLimit": kib, "Committed_AS": 0}
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in figures.items())


def proc_views(limits: SandboxLimits) -> dict[str, str]:
    """What the bot reads in each of :data:`MASKED_PROC` that this machine has: the jail's own
    CPUs (its ``cpus`` cap, rounded up) and memory cap, an idle load, no pressure, and nothing
    of the machine's counters. Static: a bot learns its own use from ``/proc/self``."""
    views = {
        "stat": _idle_stat(max(1, math.ceil(limits.cpus))),
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "meminfo": _meminfo(limits.memory_mb),
        "uptime": f"{time.clock_gettime(time.CLOCK_BOOTTIME):.2f} 0.00\n",
    }
    return {
        name: views.get(name, _PRESSURE if name.startswith("pressure/") else "")
        for name in MASKED_PROC
        if os.path.isfile(f"/proc/{name}")
    }


def _within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def minimal_roots(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The paths, without duplicates and without those inside another one."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda item: len(item.parts)):
        if not _within(path, kept):
            kept.append(path)
    return tuple(sorted(kept))


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds, does not import (no grpc import here)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@functools.cache
def runtime_dirs() -> tuple[Path, ...]:
    """Host folders the bot needs read-only at the same path: Python runtime and project code."""
    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    found.add(Path(sys.base_exec_prefix))
    executable = Path(sys.executable)
    found.update({executable.parent.parent, executable.resolve().parent.parent})
    found.update(path for name in PROJECT_PACKAGES if (path := _package_dir(name)) is not None)
    usable = {path for path in found if path.is_dir() and path != Path("/")}
    return tuple(path for path in minimal_roots(usable) if not _within(path, [Path("/usr")]))


def compile_bytecode(folders: Iterable[Path]) -> int:
    """Write the missing or stale bytecode caches of the Python files under ``folders`` (even
    where ``PYTHONDONTWRITEBYTECODE`` is set); how many files were compiled.

    Bots run with the project's packages mounted read-only and ``PYTHONDONTWRITEBYTECODE``, so
    a module without a valid cache is compiled again by every bot that imports it (the SDK and
    the rules: about 100 ms of each Python bot's start-up). A cache is valid inside the jail:
    same path, same source mtime and size. A folder we may not write to is left as it is.
    """
    compiled = 0
    for folder in folders:
        for source in sorted(folder.rglob("*.py")):
            cache = Path(importlib.util.cache_from_source(str(source)))
            try:
                if _cache_matches(source, cache) or not _writable(cache.parent):
                    continue
                py_compile.compile(
                    str(source),
                    str(cache),
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
                )
            except (OSError, py_compile.PyCompileError):
                continue  # read-only, or not Python: the bot compiles it, as it would anyway
            compiled += 1
    return compiled


def _writable(folder: Path) -> bool:
    """Whether a cache could be written into ``folder`` (or the folder made): checked before
    compiling, so a read-only install costs a look, not a compile of every file."""
    while not folder.exists():
        folder = folder.parent
    return os.access(folder, os.W_OK)


def _cache_matches(source: Path, cache: Path) -> bool:
    """Whether a timestamp cache records this source's mtime and size (what import checks)."""
    try:
        with cache.open("rb") as handle:
            header = handle.read(16)
    except FileNotFoundError:
        return False
    info = source.stat()
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags, mtime, size = (int.from_bytes(header[i : i + 4], "little") for i in (4, 8, 12))
    wanted = (int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF)
    return flags == 0 and (mtime, size) == wanted


@functools.cache
def project_bytecode() -> int:
    """:func:`compile_bytecode` of the project's own packages, once per process."""
    return compile_bytecode(
        path for name in PROJECT_PACKAGES if (path := _package_dir(name)) is not None
    )


def program_dirs(program: str, visible: Iterable[Path]) -> tuple[Path, ...]:
    """Extra folders to bind so that an absolute ``program`` outside ``visible`` runs inside."""
    if not os.path.isabs(program):
        return ()
    needed: list[Path] = []
    for candidate in (Path(program), Path(program).resolve()):
        if _within(candidate, visible):
            continue
        folder = candidate.parent
        prefix = folder.parent if folder.name == "bin" else folder
        if prefix != Path("/"):
            needed.append(prefix)
    return minimal_roots(needed)


def _may_enter(info: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    """Whether ``uid:gid`` (no supplementary groups) has ``bits`` (octal rwx) on the inode."""
    if info.st_uid == uid:
        return info.st_mode >> 6 & bits == bits
    if info.st_gid == gid:
        return info.st_mode >> 3 & bits == bits
    return info.st_mode & bits == bits


def reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid:gid`` can walk down to ``path`` (all bwrap needs to bind it)."""
    real = path.resolve()
    for folder in [*reversed(real.parents), real]:
        info = os.stat(folder)
        if stat.S_ISDIR(info.st_mode) and not _may_enter(info, uid, gid, 0o1):
            return False
    return True


def staging_point(stage_dir: Path, source: Path) -> Path:
    """The (empty, root-owned 0755) folder of a jail onto which a hidden source is mounted."""
    digest = hashlib.sha256(str(source).encode()).hexdigest()[:16]
    point = stage_dir / digest
    point.mkdir(mode=0o755, parents=True, exist_ok=True)
    return point


def _root_links() -> list[str]:
    argv: list[str] = []
    for name in ROOT_LINKS:
        if os.path.islink(name):
            argv += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            argv += ["--ro-bind", name, name]
    return argv


def bwrap_argv(
    bwrap: str,
    binds: Iterable[tuple[Path, str]],
    tmpfs_bytes: int,
    seccomp_fd: int | None,
    shm_bytes: int,
) -> list[str]:
    """The bwrap command up to and including ``--``: namespaces, the view, the filter.

    ``binds`` are (host source, inside destination) pairs, all read-only; the ones for the code
    and run folders, and the jail's views of ``/proc``'s machine-wide files, are among them.
    Mount order matters: ``/dev`` is made read-only once its ``shm`` is mounted (a remount is
    not recursive), and ``/tmp`` comes before any bind, in case a runtime lives below ``/tmp``.
    """
    argv = [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/usr", "/usr", *_root_links()]
    for name in ETC_FILES:
        argv += ["--ro-bind-try", name, name]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(shm_bytes), "--tmpfs", SHM]
    argv += ["--remount-ro", "/dev", "--size", str(tmpfs_bytes), "--tmpfs", "/tmp"]
    for source, destination in binds:
        argv += ["--ro-bind", str(source), destination]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--chdir", INSIDE_CODE, "--"]
