"""One cgroup per bot: memory, pids and CPU caps, and killing every process in it.

cgroup v2 is used when the referee's own cgroup can hand the ``memory`` and ``pids``
controllers to children; otherwise the v1 hierarchies (``memory``, ``pids``, ``freezer``).
The ``cpu`` controller (v2) or hierarchy (v1) is used where there is one; without it the
groups work as before, with no CPU cap, and ``CgroupPlan.no_cpu`` / ``BotCgroup.no_cpu`` say
why. Bot groups are created below the referee's own group, and the bot is moved in by the first
link of its exec chain, before anything of the bot runs.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from referee.sandbox._base import MIB, SandboxLimits, safe_name

KILL_TIMEOUT_S: Final = 3.0
REMOVE_TIMEOUT_S: Final = 3.0
V1_CONTROLLERS: Final = ("memory", "pids", "freezer", "cpu")
V2_REQUIRED: Final = ("memory", "pids")
CPU_PERIOD_US: Final = 100_000
"""The CFS bandwidth period of the CPU cap: a bot may use ``cpus`` times this per period."""


@dataclass(frozen=True, slots=True)
class CgroupPlan:
    """Where bot cgroups go: one parent (v2) or one parent per v1 controller."""

    version: int
    parents: tuple[tuple[str, Path], ...]
    no_cpu: str = ""
    """Why bot groups get no CPU cap here; "" when the ``cpu`` controller is in force."""


def cgroup_mounts() -> tuple[Path | None, dict[str, Path]]:
    """The cgroup2 mount point and the v1 mount point of each controller."""
    unified: Path | None = None
    legacy: dict[str, Path] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2" and unified is None:
            unified = Path(fields[1])
        elif fields[2] == "cgroup":
            for option in fields[3].split(","):
                legacy.setdefault(option, Path(fields[1]))
    return unified, legacy


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" for v2."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _write(path: Path, value: str | int) -> None:
    """Write a control file (never through a symlink)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


def _hand_down(base: Path, controllers: tuple[str, ...]) -> None:
    """Let children of ``base`` use ``controllers`` (moving this process down if it must)."""
    if set(controllers) <= set((base / "cgroup.subtree_control").read_text().split()):
        return
    line = " ".join(f"+{controller}" for controller in controllers)
    try:
        _write(base / "cgroup.subtree_control", line)
    except OSError as error:
        if error.errno != errno.EBUSY:
            raise
        # "No internal processes": a group with processes cannot hand controllers down. Move
        # this process (ours) into a leaf of its own, then try again.
        leaf = base / f"gin-referee-{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        _write(leaf / "cgroup.procs", os.getpid())
        _write(base / "cgroup.subtree_control", line)


def _enable_v2_controllers(base: Path, available: set[str]) -> str:
    """Let children of ``base`` use memory and pids, and cpu where it is offered.

    Returns why there is no cpu ("" when there is). A cpu that cannot be enabled costs the CPU
    cap only: it is enabled on its own, after the others.

    Raises:
        OSError: memory or pids cannot be enabled.
    """
    _hand_down(base, V2_REQUIRED)
    if "cpu" not in available:
        return f"cgroup v2 at {base} does not offer the cpu controller"
    try:
        _hand_down(base, ("cpu",))
    except OSError as error:
        return f"cannot enable cpu in {base}/cgroup.subtree_control: {error}"
    return ""


def _v2_plan(unified: Path, own: str) -> CgroupPlan | str:
    base = unified / own.lstrip("/")
    available = set((base / "cgroup.controllers").read_text().split())
    if not set(V2_REQUIRED) <= available:
        return f"cgroup v2 at {base} lacks the memory/pids controllers (has {sorted(available)})"
    try:
        no_cpu = _enable_v2_controllers(base, available)
    except OSError as error:
        return f"cannot enable memory+pids in {base}/cgroup.subtree_control: {error}"
    return CgroupPlan(2, (("unified", base),), no_cpu)


@functools.cache
def find_plan() -> CgroupPlan | str:
    """Where to make bot cgroups here, or why it is not possible (cached per process)."""
    if os.geteuid() != 0:
        return "not root: no cgroups (run the referee as root, or delegate a cgroup v2 subtree)"
    unified, legacy = cgroup_mounts()
    own = _own_paths()
    reasons: list[str] = []
    if unified is not None and "" in own:
        plan = _v2_plan(unified, own[""])
        if isinstance(plan, CgroupPlan):
            return plan
        reasons.append(plan)
    if "memory" in legacy and "pids" in legacy:
        parents = tuple(
            (name, legacy[name] / own.get(name, "/").lstrip("/"))
            for name in V1_CONTROLLERS
            if name in legacy
        )
        no_cpu = "" if "cpu" in dict(parents) else "no cgroup v1 cpu hierarchy is mounted"
        return CgroupPlan(1, parents, no_cpu)
    reasons.append("no cgroup v1 memory+pids hierarchies are mounted")
    return "; ".join(reasons)


def group_name(label: str) -> str:
    """A unique, filesystem-safe cgroup name for a jail."""
    return f"gin-{safe_name(label, 60)}-{secrets.token_hex(4)}"


class BotCgroup:
    """The cgroup(s) of one jail. Created with its limits set; ``remove`` takes it away."""

    def __init__(self, plan: CgroupPlan, name: str, limits: SandboxLimits) -> None:
        self.plan = plan
        self.dirs: dict[str, Path] = {}
        self.no_cpu = plan.no_cpu
        """Why this group has no CPU cap; "" when it has ``limits.cpus``."""
        try:
            for controller, parent in plan.parents:
                self._make_dir(controller, parent / name)
            self._set_limits(limits)
        except OSError:
            self.remove()
            raise
        self.paths: tuple[Path, ...] = tuple(self.dirs.values())
        """The group directories as created (they are gone after ``remove``)."""

    @classmethod
    def adopt(cls, version: int, dirs: dict[str, Path]) -> BotCgroup:
        """The existing groups ``dirs`` (controller to directory), to kill and remove them."""
        group = cls.__new__(cls)
        group.plan = CgroupPlan(version, tuple((name, path.parent) for name, path in dirs.items()))
        group.dirs = dict(dirs)
        group.paths = tuple(dirs.values())
        group.no_cpu = "adopted: its CPU cap is not known"
        return group

    def _make_dir(self, controller: str, directory: Path) -> None:
        """mkdir one controller's group; a v1 cpu group that cannot be made costs the cap only."""
        try:
            directory.mkdir(mode=0o755)
        except OSError as error:
            if controller != "cpu":
                raise
            self.no_cpu = f"cannot make {directory}: {error.strerror}"
            return
        self.dirs[controller] = directory

    def _set_limits(self, limits: SandboxLimits) -> None:
        self._set_memory_and_pids(limits)
        self._set_cpu_cap(limits.cpus)

    def _set_memory_and_pids(self, limits: SandboxLimits) -> None:
        memory = limits.memory_mb * MIB
        if self.plan.version == 2:
            group = self.dirs["unified"]
            _write(group / "memory.max", memory)
            for optional, value in (("memory.swap.max", 0), ("memory.oom.group", 1)):
                if (group / optional).exists():
                    _write(group / optional, value)
            _write(group / "pids.max", limits.pids)
            return
        _write(self.dirs["memory"] / "memory.limit_in_bytes", memory)
        # Only after limit_in_bytes (the kernel wants memsw >= mem), and only with swap accounting.
        memsw = self.dirs["memory"] / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            _write(memsw, memory)
        _write(self.dirs["pids"] / "pids.max", limits.pids)

    def _set_cpu_cap(self, cpus: float) -> None:
        """``cpu.max`` (v2) or the CFS quota (v1). A cap the kernel refuses (a v1 parent with a
        smaller quota, say) leaves the group uncapped, with the reason in ``no_cpu``."""
        if self.no_cpu:
            return
        quota = round(cpus * CPU_PERIOD_US)
        try:
            if self.plan.version == 2:
                _write(self.dirs["unified"] / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                _write(self.dirs["cpu"] / "cpu.cfs_period_us", CPU_PERIOD_US)
                _write(self.dirs["cpu"] / "cpu.cfs_quota_us", quota)
        except OSError as error:
            self.no_cpu = f"the kernel refused a cap of {cpus:g} CPUs: {error.strerror}"

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its pid to, to join this group."""
        return [directory / "cgroup.procs" for directory in self.dirs.values()]

    def pids(self) -> list[int]:
        """Every process in the group (any controller's view)."""
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in procs.read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes of the group the OOM killer took."""
        name = "memory.events" if self.plan.version == 2 else "memory.oom_control"
        directory = self.dirs.get("unified" if self.plan.version == 2 else "memory")
        if directory is None:
            return 0
        try:
            text = (directory / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def kill(self) -> None:
        """SIGKILL every process of the group: ``cgroup.kill`` (v2) or freeze + kill (v1)."""
        unified = self.dirs.get("unified")
        if unified is not None and (unified / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(unified / "cgroup.kill", 1)
            return
        self._freeze_and_kill()

    def freeze(self, frozen: bool) -> None:
        """Stop every process of the group where it is (``frozen``), or let them run again."""
        self._set_frozen(frozen)

    def _set_frozen(self, frozen: bool) -> None:
        unified, freezer = self.dirs.get("unified"), self.dirs.get("freezer")
        with contextlib.suppress(OSError):
            if unified is not None:
                _write(unified / "cgroup.freeze", int(frozen))
            elif freezer is not None:
                _write(freezer / "freezer.state", "FROZEN" if frozen else "THAWED")

    def _freeze_and_kill(self) -> None:
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while (members := self.pids()) and time.monotonic() < deadline:
            self._set_frozen(True)  # nobody forks while we go through the list
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self._set_frozen(False)  # a frozen task dies only once thawed
            time.sleep(0.01)

    def remove(self) -> bool:
        """rmdir the group(s), retrying while the last processes finish dying."""
        deadline = time.monotonic() + REMOVE_TIMEOUT_S
        for controller, directory in list(self.dirs.items()):
            while True:
                try:
                    directory.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > deadline:
                        return False
                    time.sleep(0.02)
                    continue
                del self.dirs[controller]
                break
        return True
