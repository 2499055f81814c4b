"""The CPU cap: a bot that spins on every CPU while its opponent thinks slows only itself.

A hostile bot (seat 0) forks children that spin for ever at its first decision, then plays on;
the sample greedy bot (seat 1) must never time out, and the spinners together must get no more
CPU than the cap of the bot's cgroup (``SandboxLimits.cpus``). Their CPU time is read from /proc
just before the hostile jail's teardown (the bot stays until then, spinners and all). Where the
cgroup cpu controller is missing, the tests say so and skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.control import TimeControl
from referee.sandbox import BotJail, Layer, Sandbox, SandboxLimits, TeardownReport
from referee.sandbox._cgroup import CgroupPlan, _v2_plan
from tests.test_hostile import GREEDY, needs, play, warm_up

SPINNERS = 6
CONTROL = TimeControl(move_time_ms=200, grace_ms=50, time_bank_ms=0, startup_ms=8000)
LIMITS = SandboxLimits(memory_mb=256, pids=48, cpus=0.5)
"""Half a CPU: far below what six spinners take of two CPUs when nothing holds them."""
SLACK_S = 0.15
"""CPU time over the cap that still counts as capped: the window and the 100 ms CFS periods do
not line up, and /proc counts in clock ticks."""


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    box = Sandbox(LIMITS, root_dir=tmp_path_factory.mktemp("jails"))
    warm_up(box)
    yield box
    box.close()


@dataclass(frozen=True)
class CpuUse:
    """CPU time of the spinning children, and the wall time since the first of them started."""

    cpu_s: float
    wall_s: float
    processes: int
    """Processes of the jail alive before its teardown (the spinners and the bot's chain)."""
    throttled: int
    """Periods in which the cgroup's CPU cap stopped the bot (``nr_throttled`` of cpu.stat)."""


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat from the state on (the name may hold spaces and parentheses)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _throttled(jail: BotJail) -> int:
    assert jail.cgroup is not None
    directory = jail.cgroup.dirs.get("unified") or jail.cgroup.dirs["cpu"]
    for line in (directory / "cpu.stat").read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "nr_throttled":
            return int(value)
    return 0


def cpu_use(jail: BotJail) -> CpuUse:
    """What the spinners (the jail's last ``SPINNERS`` processes to start) used: utime + stime.

    Only they are counted, over their own lifetime: the bot's main process used CPU before
    they started too, and only as much as they leave it afterwards.
    """
    tick = os.sysconf("SC_CLK_TCK")
    uptime_s = float(Path("/proc/uptime").read_text().split()[0])
    started: list[tuple[int, int]] = []  # (starttime, utime + stime), in clock ticks
    for pid in jail.processes():
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue
        started.append((int(fields[19]), int(fields[11]) + int(fields[12])))
    spinners = sorted(started)[-SPINNERS:]
    assert len(spinners) == SPINNERS, started
    cpu_s = sum(ticks for _, ticks in spinners) / tick
    return CpuUse(cpu_s, uptime_s - spinners[0][0] / tick, len(started), _throttled(jail))


@pytest.fixture
def measured(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> list[CpuUse]:
    """Measurements of each hostile jail, taken just before its teardown."""
    found: list[CpuUse] = []
    prepare = sandbox.prepare

    def measuring_prepare(label: str, code_dir: Path) -> BotJail:
        jail = prepare(label, code_dir)
        if label.endswith("-0"):
            teardown = jail.teardown

            def measuring_teardown(grace: float = 0.3) -> TeardownReport:
                if not found:
                    found.append(cpu_use(jail))
                return teardown(grace)

            monkeypatch.setattr(jail, "teardown", measuring_teardown)
        return jail

    monkeypatch.setattr(sandbox, "prepare", measuring_prepare)
    return found


def require_cpu_cap(sandbox: Sandbox) -> None:
    """Skip, saying why, unless this sandbox's jails get a CPU cap."""
    needs(sandbox, Layer.CGROUP)
    jail = sandbox.prepare("cpu-cap", GREEDY)
    try:
        no_cpu = jail.cgroup.no_cpu if jail.cgroup else "no cgroup"
    finally:
        assert jail.teardown().clean
    if no_cpu:
        pytest.skip(f"no CPU cap here (the cgroup cpu controller is unavailable): {no_cpu}")


@pytest.mark.slow
def test_spinning_children_are_held_to_the_cpu_cap(
    sandbox: Sandbox, tmp_path: Path, measured: list[CpuUse]
) -> None:
    require_cpu_cap(sandbox)
    played = play(sandbox, tmp_path, "spin_children", str(SPINNERS), control=CONTROL)
    assert f"PROBE spinners {SPINNERS}" in played.stderr()
    # The honest seat never timed out (play checked too: every fault is seat 0's) and played on.
    honest = played.result.stats[1]
    assert honest.faults == ()
    assert honest.decisions > 10
    [use] = measured
    assert use.processes > SPINNERS
    assert use.cpu_s <= LIMITS.cpus * use.wall_s + SLACK_S, use
    # Held by the cap, not by chance: the kernel had to stop the bot in some periods.
    assert use.throttled > 0, use


@pytest.mark.slow
def test_the_cap_is_the_limit_in_cpus(sandbox: Sandbox) -> None:
    require_cpu_cap(sandbox)
    jail = sandbox.prepare("cap-check", GREEDY)  # cpus=0.5
    try:
        assert jail.cgroup is not None
        dirs = jail.cgroup.dirs
        if "unified" in dirs:
            written = (dirs["unified"] / "cpu.max").read_text().split()
        else:
            quota = (dirs["cpu"] / "cpu.cfs_quota_us").read_text().strip()
            written = [quota, (dirs["cpu"] / "cpu.cfs_period_us").read_text().strip()]
        assert written == ["50000", "100000"]
    finally:
        assert jail.teardown().clean


@pytest.mark.parametrize("cpus", [0, -1.0, 0.001, float("nan"), float("inf"), "1", True])
def test_a_bad_cpu_cap_is_refused(cpus: object) -> None:
    with pytest.raises(ValueError, match=r"SandboxLimits\.cpus must be a number of CPUs"):
        SandboxLimits(cpus=cpus)  # type: ignore[arg-type]


def fake_v2_group(folder: Path, offered: str, enabled: str) -> Path:
    """A folder with the two control files ``_v2_plan`` reads (a write to them overwrites the
    start of the file: it is not the kernel's)."""
    (folder / "cgroup.controllers").write_text(offered)
    (folder / "cgroup.subtree_control").write_text(enabled)
    return folder


def test_cgroup_v2_hands_cpu_down_where_it_is_offered(tmp_path: Path) -> None:
    base = fake_v2_group(tmp_path, "cpuset cpu io memory pids", "memory pids")
    plan = _v2_plan(base, "/")
    assert plan == CgroupPlan(2, (("unified", base),), no_cpu="")
    assert (base / "cgroup.subtree_control").read_text() == "+cpury pids"  # "+cpu", over "memo"


def test_cgroup_v2_without_cpu_keeps_memory_and_pids_and_says_why(tmp_path: Path) -> None:
    base = fake_v2_group(tmp_path, "io memory pids", "memory pids")
    plan = _v2_plan(base, "/")
    assert isinstance(plan, CgroupPlan)
    assert plan.parents == (("unified", base),)
    assert plan.no_cpu == f"cgroup v2 at {base} does not offer the cpu controller"
    assert (base / "cgroup.subtree_control").read_text() == "memory pids"  # nothing written
