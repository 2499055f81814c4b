"""Which layers work on this machine: each one is tried for real against /bin/true."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Final

from referee.sandbox import _seccomp
from referee.sandbox._base import Layer, LayerStatus, SandboxLimits
from referee.sandbox._cgroup import BotCgroup, find_plan, group_name
from referee.sandbox._libc import (
    PR_GET_DUMPABLE,
    harden_referee_process,
    is_subreaper,
    prctl,
)
from referee.sandbox._mounts import NAMESPACE_FLAGS
from referee.sandbox._procs import reap_orphans
from referee.sandbox._tools import run_probe, tool

TRUE: Final = "/bin/true"
NOBODY: Final = 65534
SECCOMP_EXEC: Final = str(Path(__file__).with_name("seccomp_exec.py"))
USERNS_HINT: Final = (
    "user namespaces are unavailable: check sysctl user.max_user_namespaces (> 0), "
    "kernel.unprivileged_userns_clone=1 and AppArmor's restrict_unprivileged_userns"
)


def _status(layer: Layer, problem: str | None, ok: str) -> LayerStatus:
    return LayerStatus(layer, problem is None, ok if problem is None else problem)


def _drop_to_nobody() -> list[str]:
    setpriv = tool("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return []
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def _bwrap_probe(extra: list[str]) -> list[str]:
    bwrap = tool("bwrap") or "bwrap"
    view = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib"]
    view += ["/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev"]
    return [*_drop_to_nobody(), bwrap, *NAMESPACE_FLAGS, *view, *extra, "--", TRUE]


def probe_user() -> LayerStatus:
    """Root, useradd and setpriv: one uid per bot."""
    if os.geteuid() != 0:
        return LayerStatus(
            Layer.USER, False, "not root: no per-bot users (run the referee as root)"
        )
    if tool("useradd") is None:
        return LayerStatus(Layer.USER, False, "useradd is missing: apt-get install passwd")
    if tool("setpriv") is None:
        return LayerStatus(Layer.USER, False, "setpriv is missing: apt-get install util-linux")
    problem = run_probe([*_drop_to_nobody(), TRUE])
    return _status(Layer.USER, problem and f"setpriv cannot drop to uid {NOBODY}: {problem}", "")


def probe_bwrap() -> LayerStatus:
    """bubblewrap with every namespace flag the jail uses (as an unprivileged uid when root)."""
    if tool("bwrap") is None:
        return LayerStatus(Layer.BWRAP, False, "install bubblewrap: apt-get install bubblewrap")
    problem = run_probe(_bwrap_probe([]))
    return _status(Layer.BWRAP, problem and f"bwrap failed ({problem}); {USERNS_HINT}", "")


def probe_seccomp() -> LayerStatus:
    """Build the filter and load it in front of /bin/true (via bwrap, else the launcher)."""
    reason = _seccomp.unavailable_reason()
    if reason is not None:
        return LayerStatus(Layer.SECCOMP, False, reason)
    fd = _seccomp.filter_fd()
    try:
        if tool("bwrap") is not None:
            problem = run_probe(_bwrap_probe(["--seccomp", str(fd)]), pass_fds=[fd])
        else:
            problem = run_probe([sys.executable, "-I", SECCOMP_EXEC, str(fd), TRUE], pass_fds=[fd])
    finally:
        os.close(fd)
    how = "bwrap --seccomp" if tool("bwrap") else "the seccomp_exec launcher"
    return _status(Layer.SECCOMP, problem and f"loading the filter failed: {problem}", how)


def _caps(version: int, no_cpu: str) -> str:
    """The detail of a working CGROUP layer: its version and the caps in force."""
    if not no_cpu:
        return f"v{version}; caps: memory, pids, cpu"
    return (
        f"v{version}; caps: memory, pids; NO cpu cap ({no_cpu}): "
        "a bot's processes may take every CPU while its opponent thinks"
    )


def probe_cgroup() -> LayerStatus:
    """Make a cgroup with limits, run /bin/true inside it, remove it.

    The layer is on with memory and pids alone; its detail says whether the CPU cap is too.
    """
    plan = find_plan()
    if isinstance(plan, str):
        return LayerStatus(Layer.CGROUP, False, plan)
    try:
        group = BotCgroup(plan, group_name(f"probe-{os.getpid()}"), SandboxLimits())
    except OSError as error:
        return LayerStatus(Layer.CGROUP, False, f"cannot create a cgroup: {error}")
    try:
        attach = "".join(f"echo $$ > '{procs}' && " for procs in group.procs_files)
        problem = run_probe([tool("sh") or "/bin/sh", "-c", f'{attach}exec "$@"', "probe", TRUE])
    finally:
        group.remove()
    ok = _caps(plan.version, group.no_cpu)
    return _status(Layer.CGROUP, problem and f"cannot join a cgroup: {problem}", ok)


def probe_rlimits() -> LayerStatus:
    """prlimit with the kinds of limits the jail sets."""
    prlimit = tool("prlimit")
    if prlimit is None:
        return LayerStatus(Layer.RLIMITS, False, "prlimit is missing: apt-get install util-linux")
    problem = run_probe([prlimit, "--cpu=5:6", "--nofile=64:64", "--core=0:0", "--", TRUE])
    return _status(Layer.RLIMITS, problem and f"prlimit failed: {problem}", "")


def probe_pdeathsig() -> LayerStatus:
    """setpriv --pdeathsig (util-linux 2.33 or later)."""
    setpriv = tool("setpriv")
    if setpriv is None:
        return LayerStatus(Layer.PDEATHSIG, False, "setpriv is missing: apt-get install util-linux")
    problem = run_probe([setpriv, "--pdeathsig", "KILL", "--", TRUE])
    hint = "setpriv --pdeathsig failed (util-linux >= 2.33 needed)"
    return _status(Layer.PDEATHSIG, problem and f"{hint}: {problem}", "")


def probe_non_dumpable() -> LayerStatus:
    """Apply the referee hardening and check that the kernel took it."""
    problems = harden_referee_process()
    try:
        dumpable, subreaper = prctl(PR_GET_DUMPABLE), is_subreaper()
    except OSError as error:
        return LayerStatus(Layer.NON_DUMPABLE, False, f"prctl is unavailable: {error}")
    if dumpable != 0 or not subreaper:
        detail = "; ".join(problems) or f"dumpable={dumpable}, subreaper={subreaper}"
        return LayerStatus(Layer.NON_DUMPABLE, False, detail)
    return LayerStatus(Layer.NON_DUMPABLE, True, "; ".join(problems))


@functools.cache
def detect_layers() -> tuple[LayerStatus, ...]:
    """Probe every layer for real (cached for the life of the process).

    Side effect: the referee hardening (``harden_referee_process``) is applied, since checking
    it means applying it.
    """
    layers = (
        probe_non_dumpable(),
        probe_user(),
        probe_bwrap(),
        probe_seccomp(),
        probe_cgroup(),
        probe_rlimits(),
        probe_pdeathsig(),
    )
    reap_orphans()  # the probes' sandbox init processes (see reap_orphans)
    return tuple(sorted(layers, key=lambda status: list(Layer).index(status.layer)))


def describe_layers(layers: tuple[LayerStatus, ...]) -> str:
    """A table for ``gin sandbox doctor``: one line per layer."""
    lines = []
    for status in layers:
        mark = "on " if status.active else "OFF"
        detail = f"  ({status.detail})" if status.detail else ""
        lines.append(f"{mark} {status.layer.name:<13}{detail}")
    return "\n".join(lines)
