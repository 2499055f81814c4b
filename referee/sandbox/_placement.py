"""CPU placement (opt-in): the referee's threads on some CPUs, the bots on the others.

Left to the scheduler on a machine with few CPUs, the referee's threads and the bots' processes
move between CPUs from one decision to the next, so every message wakes a thread on a CPU whose
caches hold something else. Pinned apart, each side keeps its CPU warm: decisions are quicker
and steadier (``benchmarks/referee_bench.py`` measures both placements side by side).

Every thread of the referee process is pinned with ``sched_setaffinity``; bots inherit their
CPUs from the one spawner thread they are all started from (see ``on_spawner_thread``), which is
given the bots' CPUs before each bot's start (and the referee's before anything else it starts).
Nothing in the launch command changes.

This is placement for speed and steadier timing, not a sandbox layer: a bot may change its own
affinity (nothing it gains but the referee's CPU, which only slows everyone down).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from referee.sandbox._base import SandboxUnavailable

REFEREE_SHARE: Final = 4
"""The referee gets one CPU in this many (at least one); the bots get the rest."""


@dataclass(frozen=True, slots=True)
class CpuPlacement:
    """Which CPUs the referee runs on, and which its bots run on."""

    referee: frozenset[int]
    bots: frozenset[int]

    def __post_init__(self) -> None:
        if not self.referee or not self.bots:
            raise ValueError("a placement needs at least one CPU for the referee and one for bots")
        if self.referee & self.bots:
            raise ValueError(f"CPUs {sorted(self.referee & self.bots)} are on both sides")

    @classmethod
    def split(cls, allowed: Iterable[int] | None = None) -> CpuPlacement:
        """The first quarter (at least one) of the CPUs this process may use for the referee,
        the rest for the bots.

        >>> CpuPlacement.split([0, 1]).describe()
        'referee on CPU 0, bots on CPU 1'
        >>> CpuPlacement.split(range(8)).describe()
        'referee on CPUs 0-1, bots on CPUs 2-7'

        Raises:
            SandboxUnavailable: fewer than two CPUs to split.
        """
        cpus = sorted(set(os.sched_getaffinity(0) if allowed is None else allowed))
        if len(cpus) < 2:
            raise SandboxUnavailable(
                f"CPU placement needs two CPUs or more; this process may use {_cpu_list(cpus)}"
            )
        keep = max(1, len(cpus) // REFEREE_SHARE)
        return cls(frozenset(cpus[:keep]), frozenset(cpus[keep:]))

    def describe(self) -> str:
        """In words, for people."""
        return f"referee on {_cpu_list(self.referee)}, bots on {_cpu_list(self.bots)}"

    def to_dict(self) -> dict[str, list[int]]:
        """JSON-ready form (as the match log header has it)."""
        return {"referee": sorted(self.referee), "bots": sorted(self.bots)}

    def as_pair(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The referee's CPUs and the bots', in order (``MatchConfig.cpus``)."""
        return tuple(sorted(self.referee)), tuple(sorted(self.bots))


def _cpu_list(cpus: Iterable[int]) -> str:
    ordered = sorted(cpus)
    if not ordered:
        return "no CPU"
    if len(ordered) == 1:
        return f"CPU {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"CPUs {ordered[0]}-{ordered[-1]}"
    return "CPUs " + ",".join(map(str, ordered))


_lock = threading.Lock()
_placement: CpuPlacement | None = None
_original: frozenset[int] | None = None
"""The CPUs this process could use before it was first pinned (what ``pin_cpus(None)`` restores)."""


def pin_cpus(placement: CpuPlacement | None) -> None:
    """Pin every thread of this process to ``placement.referee``, and every process started on
    the spawner thread from now on to ``placement.bots``; ``None`` undoes it.

    Threads started later inherit the CPUs of the thread that starts them, so call it before the
    referee starts its servers.

    Raises:
        OSError: the kernel refused the CPUs (for example, outside this process's cpuset).
    """
    global _placement, _original  # noqa: PLW0603 - one placement per process
    with _lock:
        if _original is None:
            if placement is None:
                return
            _original = frozenset(os.sched_getaffinity(0))
        mask = _original if placement is None else placement.referee
        for thread in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(thread), mask)
            except ProcessLookupError:
                continue  # the thread ended meanwhile
        _placement = placement
        if placement is None:
            _original = None  # nothing to restore any more: the spawner is left alone again


def current_placement() -> CpuPlacement | None:
    """The placement in force in this process, if any."""
    return _placement


def place_spawner_thread(*, bot: bool) -> None:
    """Under a placement, give the calling thread (the spawner) the bots' CPUs if it is about to
    start a bot, else the referee's, so that what it starts runs there. No-op otherwise."""
    with _lock:
        if _placement is not None:
            os.sched_setaffinity(0, _placement.bots if bot else _placement.referee)
