"""A league worker: plays one match in its own process and prints its summary as JSON.

``python -m tournaments.worker`` reads a job (JSON) on stdin and writes one JSON line on
stdout. It stops when its runner goes away (even after a ``kill -9``), and on SIGTERM it stops the
match and tears its bots down before exiting, so an interrupted league leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from referee.sandbox import Sandbox, SandboxLimits, harden_referee_process

harden_referee_process()  # before grpc is imported

import trio  # noqa: E402

from protocol.manifest import load_manifest  # noqa: E402
from referee.control import FaultPolicy, TimeControl  # noqa: E402
from referee.local import play_folders, remote_seat  # noqa: E402
from referee.match import MatchConfig, MatchResult  # noqa: E402
from referee.rules import HandEnd, RuleParams  # noqa: E402

PARENT_POLL_S = 0.5
ORPHAN_EXIT_S = 30.0


class BotCodeChangedError(RuntimeError):
    """A bot folder no longer holds the code registered under its hash."""


def hand_stats(result: MatchResult) -> list[dict[str, int]]:
    """Per seat: hands won, points scored, gins, knocks, undercuts given and suffered."""
    stats = [Counter[str](), Counter[str]()]
    for record in result.hand_records:
        outcome = record.outcome
        if outcome.winner is not None:
            stats[outcome.winner]["hands_won"] += 1
            stats[outcome.winner]["points"] += outcome.points
        if outcome.knocker is None:
            stats[0]["drawn"] += 1
            stats[1]["drawn"] += 1
            continue
        knocker = outcome.knocker
        stats[knocker]["knocks"] += 1
        if outcome.end is HandEnd.GIN:
            stats[knocker]["gins"] += 1
        if outcome.end is HandEnd.UNDERCUT:
            stats[1 - knocker]["undercuts_given"] += 1
            stats[knocker]["undercuts_suffered"] += 1
    return [dict(counter) for counter in stats]


def summary(result: MatchResult, log_path: Path) -> dict[str, Any]:
    """What the store keeps of a match."""
    identities = [None if i is None else f"{i.name}@{i.version}" for i in result.identities]
    return {
        **result.to_dict(),
        "seed": result.seed,
        "hand_stats": hand_stats(result),
        "hello": identities,
        "log": str(log_path),
    }


def reason(result: MatchResult) -> str:
    """One phrase: why the match ended."""
    if result.forfeited:
        faults = [f for f in result.faults if f.seat in result.forfeited]
        last = faults[-1] if faults else None
        why = f"{last.kind.value}: {last.detail}" if last else "forfeit"
        return f"seat {','.join(map(str, result.forfeited))} forfeited ({why})"
    return {
        "complete": "all three games ended",
        "decided": "decided (stop when decided)",
        "hand_cap": "hand cap reached",
    }.get(result.end, result.end)


async def play_job(job: dict[str, Any]) -> dict[str, Any]:
    """Play the job's match; SIGTERM cancels it (the seats are still closed)."""
    limits = SandboxLimits(**job.get("limits", {}))
    sandbox = Sandbox(limits, strict=bool(job.get("strict", False)))
    seats = tuple(
        remote_seat(load_manifest(Path(path)), sandbox.prepare, f"{job['match_id']}-{index}")
        for index, path in enumerate(job["bots"])
    )
    for seat, expected in zip(seats, job.get("hashes") or (), strict=False):
        if seat.code_hash != expected:
            raise BotCodeChangedError(
                f"the code in {seat.manifest.folder} hashes to {seat.code_hash[:12]}, not to "
                f"its registered {expected[:12]}: refusing to play it"
            )
    config = MatchConfig(
        job["match_id"],
        int(job["seed"]),
        params=RuleParams.from_dict(job["rules"]),
        time_control=TimeControl(**job["time_control"]),
        fault_policy=FaultPolicy(**job["fault_policy"]),
        sandbox=tuple(s.layer.value for s in sandbox.layers if s.active),
    )
    log_path = Path(job["log"])
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
        return {"interrupted": True}
    return {"summary": summary(result, log_path), "reason": reason(result)}


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
    job = json.loads(sys.stdin.read())
    watch_parent(int(job["parent"]))
    try:
        outcome = trio.run(play_job, job)
    except BotCodeChangedError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
