"""Plain data of the sandbox: limits, layers, their status, the teardown report."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Final

MIB: Final = 1 << 20
MIN_CPUS: Final = 0.01
"""The smallest CPU cap: the kernel wants a quota of at least 1 ms per 100 ms period."""


def safe_name(text: str, limit: int) -> str:
    """``text`` as a file or cgroup name: letters, digits and ``_.-`` only, at most ``limit``
    characters (jails, their cgroups and match folders are named after their labels)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:limit]


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one bot (every process it starts included, where the layer allows).

    The defaults suit a Python or Node.js bot that speaks gRPC (about 10 threads, 40-60 MiB RSS).
    """

    memory_mb: int = 512
    """Memory cap of the bot's cgroup (tmpfs pages count too)."""
    pids: int = 64
    """Processes plus threads (cgroup ``pids.max``; ``RLIMIT_NPROC`` when it has its own uid)."""
    cpu_seconds: int = 600
    """CPU time of each bot process: SIGXCPU at this soft limit..."""
    cpu_grace_seconds: int = 5
    """...and SIGKILL this many CPU seconds later (the hard limit)."""
    file_size_mb: int = 16
    """Largest file the bot may write (``RLIMIT_FSIZE``)."""
    open_files: int = 256
    """File descriptors per process (``RLIMIT_NOFILE``)."""
    tmpfs_mb: int = 64
    """Size of the bot's private ``/tmp``."""
    shm_mb: int = 16
    """Size of the bot's private ``/dev/shm`` (POSIX shared memory and semaphores: Python's
    ``multiprocessing`` locks and queues need it); the rest of ``/dev`` is read-only."""
    cpus: float = 1.0
    """CPU cap of the bot's cgroup, in CPUs, all its processes together (``cpu.max``, or the
    CFS quota on cgroup v1): a bot that spins while its opponent thinks slows only itself."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            value = getattr(self, name)
            if name == "cpus":
                self._check_cpus(value)
            elif (
                not isinstance(value, int)
                or value < 0
                or (value == 0 and name != "cpu_grace_seconds")
            ):
                raise ValueError(f"SandboxLimits.{name} must be a positive integer, not {value!r}")

    @staticmethod
    def _check_cpus(value: object) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < MIN_CPUS
        ):
            raise ValueError(
                f"SandboxLimits.cpus must be a number of CPUs of at least {MIN_CPUS}, not {value!r}"
            )


class Layer(enum.Enum):
    """One independent defence of the sandbox."""

    USER = "user"
    """Its own uid and gid per running bot (system users ``ginbot0``...)."""
    BWRAP = "bwrap"
    """bubblewrap: no network, own pid namespace, read-only code, small tmpfs, nothing else."""
    SECCOMP = "seccomp"
    """A syscall deny-list: only Unix sockets, no ptrace, namespaces, bpf, io_uring..."""
    CGROUP = "cgroup"
    """A cgroup per bot (v2 or v1): memory and pids caps, a CPU cap where the ``cpu``
    controller is offered (``LayerStatus.detail`` says), and kill-them-all."""
    RLIMITS = "rlimits"
    """prlimit: CPU time, file size, open files, no core dumps."""
    PDEATHSIG = "pdeathsig"
    """The kernel kills the bot when the referee dies."""
    NON_DUMPABLE = "non-dumpable"
    """The referee is not dumpable (no ptrace, no /proc/<pid>/mem) and reaps orphans."""


REQUIRED_LAYERS: Final = (Layer.USER, Layer.BWRAP, Layer.SECCOMP, Layer.CGROUP, Layer.RLIMITS)
"""The layers that ``Sandbox(strict=True)`` insists on."""

CONSEQUENCES: Final = {
    Layer.USER: "bots share the referee's uid: they can read each other's files and signal each "
    "other, and isolation rests on bwrap, seccomp and the non-dumpable referee",
    Layer.BWRAP: "NO filesystem, pid or network isolation: bots can read the referee's files and "
    "reach the network. DO NOT RUN UNTRUSTED CODE",
    Layer.SECCOMP: "no syscall filter: bots may open any kind of socket and use ptrace, "
    "namespaces, bpf and io_uring",
    Layer.CGROUP: "no memory, pids or CPU cap and no cgroup kill: memory and fork bombs are held "
    "only by rlimits (RLIMIT_NPROC counts every process of the uid), and a bot's processes may "
    "take every CPU",
    Layer.RLIMITS: "no CPU-time, file-size, open-file or core-dump limits",
    Layer.PDEATHSIG: "bots may outlive a crashed referee",
    Layer.NON_DUMPABLE: "bots running as the referee's uid can read its memory (hidden cards) "
    "through /proc or ptrace, and escaped orphans are not reaped",
}


@dataclass(frozen=True, slots=True)
class LayerStatus:
    """Whether a layer works on this machine, and if not, why and how to fix it."""

    layer: Layer
    active: bool
    detail: str

    def warning(self) -> str:
        """The loud, print-ready warning for a missing layer ("" when active)."""
        if self.active:
            return ""
        name, consequence = self.layer.name, CONSEQUENCES[self.layer]
        return f"WARNING: sandbox DEGRADED, layer {name} is off ({self.detail}): {consequence}."


class SandboxUnavailable(RuntimeError):  # noqa: N818 - the name is the API
    """The sandbox cannot give the protection asked for (strict mode), or a jail failed to build."""


@dataclass(frozen=True, slots=True)
class TeardownReport:
    """What ``BotJail.teardown`` did."""

    killed: tuple[int, ...]
    """Every process of the jail found alive during the teardown (all were signalled)."""
    leftover: tuple[int, ...]
    """Processes of the jail still alive at the end: empty unless something went wrong."""
    folder_removed: bool
    cgroup_removed: bool
    notes: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """Nothing is left: no process, no folder, no cgroup."""
        return not self.leftover and self.folder_removed and self.cgroup_removed
