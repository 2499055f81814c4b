"""Where a league's matches are played: the :class:`Executor` protocol the runner drives, and
what a worker's output means. One module per executor: :mod:`.local` (worker processes on this
machine), :mod:`.cluster` (a Dask cluster), :mod:`.fake` (scripted, for tests of the runner).
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class ExecutorError(RuntimeError):
    """The executor cannot go on (a cluster lost, say): the league stops, resumable."""


class Executor(Protocol):
    """Where matches are played: worker processes here, or a cluster's workers."""

    slots: int
    """Matches at once."""

    async def play(self, job: dict[str, Any]) -> dict[str, Any] | str:
        """Play a job (see ``tournaments.worker``); its outcome (with ``summary``, and the log
        written at ``job["log"]``), or what went wrong when no result came back."""
        ...

    async def capacity(self) -> int:
        """Matches at once now (a cluster's workers come and go)."""
        ...

    async def aclose(self) -> None:
        """Stop whatever still runs for this executor and let go of its resources."""
        ...


def outcome_of(
    returncode: int | None, stdout: bytes | None, stderr: bytes | None
) -> dict[str, Any] | str:
    """A worker's outcome from its last stdout line, or what went wrong."""
    outcome = _parse(stdout)
    if outcome is None or "summary" not in outcome:
        tail = (stderr or b"").decode(errors="replace").strip().splitlines()[-3:]
        return f"exit {returncode}: {' | '.join(tail) or 'no output'}"
    return outcome


def _parse(stdout: bytes | None) -> dict[str, Any] | None:
    lines = (stdout or b"").decode(errors="replace").strip().splitlines()
    if not lines:
        return None
    try:
        parsed = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None
