"""Where a league's matches are played: the :class:`Executor` protocol the runner drives. One
module per executor: :mod:`.local` (warm worker processes on this machine), :mod:`.cluster` (a
Dask cluster, whose workers keep warm match processes too: :mod:`.cluster_task`), :mod:`.fake`
(scripted, for tests of the runner). What a worker says is
:class:`tournaments.executors.worker.WorkerLine`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

from referee.sandbox import sweep_jails
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure

__all__ = ["Executor", "ExecutorError", "sweep_here"]


async def sweep_here() -> int:
    """Sweep this machine's leftovers of killed referees (in a thread: it walks folders and the
    process table); how many jails went."""
    report = await trio.to_thread.run_sync(sweep_jails)
    return len(report.jails)


class ExecutorError(RuntimeError):
    """The executor cannot go on (a cluster lost, say): the league stops, resumable."""


class Executor(Protocol):
    """Where matches are played: worker processes here, or a cluster's workers."""

    slots: int
    """Matches at once."""

    @property
    def tables(self) -> int:
        """Series that play at once (fewer than ``slots`` where a match's bots start early)."""
        ...

    @property
    def sittings(self) -> bool:
        """Whether a sitting's series (``MatchJob.sitting``) may play on the same bot
        processes."""
        ...

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        """Play a job (see ``tournaments.executors.worker``); its outcome (the log written at
        ``job.log``), or what went wrong when no result came back. ``sent`` is called once the
        job is with whatever plays it (jobs sent one after another reach it in that order).

        Raises:
            ExecutorError: the executor cannot play any more matches.
        """
        ...

    async def capacity(self) -> int:
        """Matches at once now (a cluster's workers come and go)."""
        ...

    async def sweep(self) -> int:
        """Before a run: remove what referees killed earlier left behind (their jails, cgroups
        and stray bot processes); how many jails went."""
        ...

    async def aclose(self) -> None:
        """Stop whatever still runs for this executor and let go of its resources."""
        ...
