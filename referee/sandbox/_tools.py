"""The command-line tools of the exec chain, found once per process."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from typing import Final

SYSTEM_DIRS: Final = ("/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin")
PROBE_TIMEOUT_S: Final = 10.0


@functools.cache
def tool(name: str) -> str | None:
    """Absolute path of a system tool, looked up in PATH and then in the system folders."""
    found = shutil.which(name)
    if found:
        return found
    for folder in SYSTEM_DIRS:
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def run_probe(argv: Sequence[str], pass_fds: Sequence[int] = ()) -> str | None:
    """Run a probe command; None if it exited 0, else a short description of the failure."""
    try:
        result = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            pass_fds=tuple(pass_fds),
            cwd="/",
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if result.returncode == 0:
        return None
    stderr = result.stderr.decode(errors="replace").strip().splitlines()
    return f"exit {result.returncode}: {stderr[-1] if stderr else 'no message'}"


def sweep_uid(uid: int, gid: int) -> None:
    """SIGKILL every process of ``uid`` at once, by running ``kill -KILL -1`` *as that uid*.

    ``kill(-1)`` reaches exactly the processes the caller may signal, so as the bot's uid it
    takes every process of that uid in one call (a fork bomb cannot outrun it) and nothing
    else. Run as root it would take the whole machine, hence the checks.
    """
    setpriv, kill = tool("setpriv"), tool("kill")
    if uid <= 0 or uid == os.getuid() or gid <= 0 or setpriv is None or kill is None:
        raise ValueError(f"refusing a kill sweep for uid {uid} gid {gid}")
    drop = [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
    subprocess.run(
        [*drop, kill, "-KILL", "-1"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=PROBE_TIMEOUT_S,
        cwd="/",
        check=False,
    )
