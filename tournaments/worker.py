"""A league worker: plays one match in its own process and prints its outcome as JSON.

``python -m tournaments.worker`` reads a :class:`~tournaments.records.MatchJob` (JSON) on stdin
and writes one JSON line on stdout, its :class:`~tournaments.records.MatchOutcome`. It stops when
its runner goes away (even after a ``kill -9``), and on SIGTERM it stops the match and tears its
bots down before exiting, so an interrupted league leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from referee.sandbox import Sandbox, harden_referee_process

harden_referee_process()  # before grpc is imported

import trio  # noqa: E402

from protocol.manifest import load_manifest  # noqa: E402
from referee.local import play_folders, remote_seat  # noqa: E402
from referee.match import MatchConfig, MatchEnd, MatchResult  # noqa: E402
from tournaments.packing import BotCodeMismatchError  # noqa: E402
from tournaments.records import MatchJob, MatchOutcome, MatchSummary  # noqa: E402

PARENT_POLL_S = 0.5
ORPHAN_EXIT_S = 30.0
INTERRUPTED = json.dumps({"interrupted": True})
"""The line of a worker whose match was stopped: no outcome (its runner tries it again)."""

REASONS = {
    MatchEnd.COMPLETE: "all three games ended",
    MatchEnd.DECIDED: "decided (stop when decided)",
    MatchEnd.HAND_CAP: "hand cap reached",
}


def reason(result: MatchResult) -> str:
    """One phrase: why the match ended."""
    if result.forfeited:
        faults = [f for f in result.faults if f.seat in result.forfeited]
        last = faults[-1] if faults else None
        why = f"{last.kind.value}: {last.detail}" if last else "forfeit"
        return f"seat {','.join(map(str, result.forfeited))} forfeited ({why})"
    return REASONS.get(result.end, result.end.value)


async def play_job(job: MatchJob) -> MatchOutcome | None:
    """Play the job's match; SIGTERM cancels it (the seats are still closed): ``None``.

    Raises:
        BotCodeMismatchError: a bot's folder no longer hashes to its registry hash.
    """
    sandbox = Sandbox(job.limits, strict=job.strict)
    seats = tuple(
        remote_seat(load_manifest(Path(path)), sandbox.prepare, f"{job.match_id}-{index}")
        for index, path in enumerate(job.bots)
    )
    for seat, expected in zip(seats, job.hashes, strict=True):
        if seat.code_hash != expected:
            raise BotCodeMismatchError(
                f"the code in {seat.manifest.folder} hashes to {seat.code_hash[:12]}, not to "
                f"its registered {expected[:12]}: refusing to play it"
            )
    config = MatchConfig(
        job.match_id,
        job.seed,
        params=job.rules,
        time_control=job.time_control,
        fault_policy=job.fault_policy,
        sandbox=tuple(s.layer.value for s in sandbox.layers if s.active),
        bot_seeds=None if job.bot_seeds == (0, 0) else job.bot_seeds,
    )
    log_path = Path(job.log)
    result: MatchResult | None = None
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()

            nursery.start_soon(stop_on_signal)
            result = await play_folders((seats[0], seats[1]), config, log_path)
            nursery.cancel_scope.cancel()
    if result is None:
        return None
    return MatchOutcome(MatchSummary.of(result, log_path), reason(result))


def watch_parent(parent: int) -> None:
    """Stop the match (SIGTERM to ourselves: the seats are closed, the bots torn down) once the
    runner is gone. A thread polls, since the kernel's parent-death signal follows the thread
    that started us, and trio starts processes from short-lived threads."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_EXIT_S)  # the teardown hangs: go; the bots die by PDEATHSIG, and a
        os._exit(1)  # sweep takes their jails (they stay locked until we are gone)

    threading.Thread(target=watch, name="watch-runner", daemon=True).start()


def main() -> int:
    """Read the job, play it, print the outcome."""
    job = MatchJob.from_json(sys.stdin.read())
    watch_parent(job.parent)
    try:
        outcome = trio.run(play_job, job)
    except BotCodeMismatchError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    print(INTERRUPTED if outcome is None else outcome.to_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
