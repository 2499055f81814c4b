"""The local executor: each match in a ``python -m tournaments.worker`` process on this machine."""

from __future__ import annotations

import signal
import sys
from typing import Final

import trio

from tournaments.executors import outcome_of, sweep_here
from tournaments.records import MatchJob, MatchOutcome, WorkerFailure

STOP_GRACE_S: Final = 10.0
"""How long a cancelled worker may take to tear its bots down before SIGKILL."""


class LocalExecutor:
    """Each match in a ``python -m tournaments.worker`` process on this machine."""

    def __init__(self, slots: int) -> None:
        self.slots = slots

    async def play(self, job: MatchJob) -> MatchOutcome | WorkerFailure:
        """Run the worker; SIGTERM then SIGKILL if cancelled."""
        process = await trio.run_process(
            [sys.executable, "-m", "tournaments.worker"],
            stdin=job.to_json().encode(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            deliver_cancel=_stop_worker,
        )
        return outcome_of(process.returncode, process.stdout, process.stderr)

    async def capacity(self) -> int:
        """As many as asked for."""
        return self.slots

    async def sweep(self) -> int:
        """This machine's leftovers: the workers' jails are here."""
        return await sweep_here()

    async def aclose(self) -> None:
        """Nothing to let go of: each worker ended with its match."""


async def _stop_worker(process: trio.Process) -> None:
    """On cancel: SIGTERM (the worker closes its bots), then SIGKILL after a grace."""
    process.send_signal(signal.SIGTERM)
    with trio.move_on_after(STOP_GRACE_S):
        await process.wait()
        return
    process.kill()
