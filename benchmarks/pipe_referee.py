"""A plain stdin/stdout referee, a peer for ``benchmarks.series_bench`` (not a product path).

``python -m benchmarks.pipe_referee PLAN.json OUT.json [--jobs J]`` plays the series of the plan
(each: its index, the two sample bots by seat, the deal seed), ``J`` at once, each series in a
worker process with two fresh bot processes (``benchmarks.bots.pipe_bot``) that speak JSON lines
over their stdin and stdout (``benchmarks.bots.pipe_wire``). No sandbox, no gRPC, no log, no
clock: the same rules engine (``SeriesState``), the same observations and the same bot classes
as the sandboxed league, and as little else as a referee can do. It writes the wall time of
the plan, its own CPU before playing (imports) and every series' result.

A bot that breaks the wire (dies, says something unreadable, answers an illegal action) stops
the run with a one-line error: a benchmark's peer has no fault policy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from benchmarks.bots.pipe_wire import action_in, action_out, event_out, view_out
from benchmarks.harness import pool_map
from referee.rules import IllegalActionError, RuleParams, SeriesState, observation

ROOT = Path(__file__).resolve().parent.parent
BOT = (sys.executable, "-m", "benchmarks.bots.pipe_bot")


@dataclass(frozen=True)
class Planned:
    """One series to play: its index in the league, the sample bot in each seat, its deal."""

    index: int
    seats: tuple[str, str]
    seed: int


@dataclass(frozen=True)
class Played:
    """One series' result, as every variant of the benchmark reports it (to compare them)."""

    index: int
    seats: tuple[str, str]
    seed: int
    winner: int | None
    totals: tuple[tuple[int, ...], tuple[int, ...]]
    hands: int
    decisions: int


class BotPipeError(Exception):
    """A bot process broke the wire."""


class PipeBot:
    """One bot process and its two pipes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.process = subprocess.Popen(
            [*BOT, kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )

    def send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise BotPipeError(f"the {self.kind} bot closed its stdin") from None

    def receive(self) -> dict[str, Any]:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise BotPipeError(f"the {self.kind} bot ended (exit {self.process.poll()})")
        try:
            message: dict[str, Any] = json.loads(line)
        except ValueError:
            raise BotPipeError(f"the {self.kind} bot said {line[:80]!r}") from None
        return message

    def close(self) -> None:
        """Say ``end`` and reap the process (killed if it lingers)."""
        try:
            self.send({"type": "end"})
            self.process.wait(timeout=5)
        except (BotPipeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):  # a pipe the bot left: nothing to flush
                        stream.close()


def play(series: Planned, params: RuleParams) -> Played:
    """One series between two fresh bot processes.

    Raises:
        BotPipeError: a bot broke the wire or played an illegal action.
    """
    bots: list[PipeBot] = []
    try:
        for kind in series.seats:
            bots.append(PipeBot(kind))
        for bot in bots:
            bot.receive()  # the hello
            bot.send({"type": "welcome", "params": params.to_dict()})
        state = SeriesState(series.seed, params)
        decisions = _play_out(state, bots)
    finally:
        for bot in bots:
            bot.close()
    result = state.result
    assert result is not None
    return Played(
        series.index, series.seats, series.seed, result.winner, result.totals, len(result.hands),
        decisions,
    )  # fmt: skip


def _play_out(state: SeriesState, bots: list[PipeBot]) -> int:
    """Ask the player to move until the series ends; how many decisions it took."""
    sent, hand_of = [0, 0], [-1, -1]
    decisions = 0
    while state.result is None:
        seat = state.to_move
        view = observation(state, seat)
        if view.hand_number != hand_of[seat]:
            hand_of[seat], sent[seat] = view.hand_number, 0
        events = [event_out(event) for event in view.history[sent[seat] :]]
        sent[seat] = len(view.history)
        legal = [action_out(action) for action in state.legal_actions()]
        bots[seat].send(
            {"type": "request", "view": view_out(view), "events": events, "legal": legal}
        )
        try:
            state.apply(action_in(bots[seat].receive()["action"]))
        except (KeyError, ValueError, IllegalActionError) as error:
            raise BotPipeError(f"the {bots[seat].kind} bot's answer: {error}") from None
        decisions += 1
    return decisions


def _play_task(task: tuple[int, Planned]) -> tuple[int, Played]:
    return task[0], play(task[1], RuleParams())


def play_plan(plan: list[Planned], jobs: int) -> list[Played]:
    """Every series of ``plan``, ``jobs`` at once (each in a worker process when more than
    one), in plan order."""
    found = dict(pool_map(_play_task, list(enumerate(plan)), jobs))
    return [found[position] for position in range(len(plan))]


def read_plan(path: Path) -> list[Planned]:
    """The plan file's series (written by ``benchmarks.series_bench``).

    Raises:
        ValueError: not a plan.
    """
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["series"]
        return [
            Planned(row["index"], (row["seats"][0], row["seats"][1]), row["seed"]) for row in rows
        ]
    except (OSError, KeyError, TypeError, IndexError, ValueError) as error:
        raise ValueError(f"{path} is not a plan: {error}") from None


def own_cpu_s() -> float:
    """This process's CPU so far (user and system), seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    try:
        plan = read_plan(args.plan)
        setup = own_cpu_s()
        started = time.perf_counter()
        played = play_plan(plan, max(1, args.jobs))
        wall = time.perf_counter() - started
    except (ValueError, BotPipeError) as error:
        print(f"pipe referee: {error}", file=sys.stderr)
        return 1
    document = {"wall_s": wall, "setup_cpu_s": setup, "results": [asdict(p) for p in played]}
    args.out.write_text(json.dumps(document), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
