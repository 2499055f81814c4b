"""Match logs for the replay tests, played in-process (no bot processes, mock clock)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import trio
import trio.testing

from referee.control import FaultPolicy, TimeControl
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.rules import Action, Discard, Observation, Phase, Policy, greedy_policy
from referee.seats import Decision, InProcessSeat


class Blunders:
    """Plays like ``policy`` but answers with a card it does not hold at the given discards."""

    def __init__(self, policy: Policy, at: Sequence[int]) -> None:
        self.policy = policy
        self.at = set(at)
        self.discards = 0

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        if view.phase is Phase.DISCARD:
            self.discards += 1
            if self.discards in self.at:
                missing = next(card for card in range(52) if card not in view.hand)
                return Discard(missing)  # type: ignore[arg-type]
        return self.policy(view, legal)


def play_log(
    path: Path, seed: int, seats: tuple[InProcessSeat, InProcessSeat], strikes: int = 3
) -> Path:
    """Play one series between two in-process seats and write its log to ``path``."""
    config = MatchConfig(f"test-{seed}", seed, fault_policy=FaultPolicy(strikes=strikes))

    async def main() -> None:
        with MatchLog(path) as log:
            await play_match(seats, config, log)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return path


def write_log(
    path: Path,
    seed: int,
    policies: tuple[Policy, Policy] = (greedy_policy, greedy_policy),
    names: tuple[str, str] = ("north", "south"),
    strikes: int = 3,
) -> Path:
    """Play one series between two policies and write its log to ``path``."""
    seats = (
        InProcessSeat(policies[0], names[0], "1.0"),
        InProcessSeat(policies[1], names[1], "2.0"),
    )
    return play_log(path, seed, seats, strikes)


GOLDEN_SALT = bytes(range(16))
"""The match salt of the golden logs from format 2 on (a real match draws its salt at random)."""


def play_golden_strikes(path: Path) -> Path:
    """The recipe of ``golden/format3-strikes.jsonl`` (the format-2 golden, kept as it was, was
    made by it under the old dealing): seed 12, seat 0 plays greedy but answers its 3rd and 40th
    discards with a card it does not hold (two strikes, the referee's safe action instead), seat
    1 plays patiently; knocks and undercuts. Regenerate with ``python -c 'from tests.replay_logs
    import *; play_golden_strikes(Path("tests/golden/format3-strikes.jsonl"))'`` after removing
    it."""
    from referee.rules import patient_policy  # noqa: PLC0415 - only this recipe needs it

    seats = (
        InProcessSeat(Blunders(greedy_policy, (3, 40)), "north", "1.0"),
        InProcessSeat(patient_policy, "south", "2.0"),
    )
    config = MatchConfig("test-12", 12, fault_policy=FaultPolicy(strikes=3), salt=GOLDEN_SALT)

    async def main() -> None:
        with MatchLog(path) as log:
            await play_match(seats, config, log)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return path


class Thinks(InProcessSeat):
    """Plays ``policy``, thinking ``seconds`` (on the mock clock) over every decision."""

    def __init__(self, policy: Policy, seconds: float, name: str, version: str) -> None:
        super().__init__(policy, name, version)
        self.seconds = seconds

    async def decide(self, decision: Decision) -> Action:
        decision.sent()
        await trio.sleep(self.seconds)
        return self.policy(decision.view, decision.legal)


BANK_CONTROL = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=200, startup_ms=1000)
"""The time control of the ``golden/format2-bank.jsonl`` and ``format3-bank.jsonl`` logs."""


def play_golden_bank(path: Path) -> Path:
    """The recipe of ``golden/format2-bank.jsonl``: seed 9, seat 0 thinks 160 ms over every
    decision (60 over the move time of 100), seat 1 answers at once. Seat 0's bank of 200 ms
    pays 60 three times, so its limits go 310, 250, 190, then 130 ms: that decision times out
    (a strike, the referee's safe action) and its 30 ms over take the last 20 of the bank. From
    then on the limit is 110 ms, and each decision times out until the third strike forfeits.
    Regenerate with ``python -c 'from tests.replay_logs import *;
    play_golden_bank(Path("tests/golden/format3-bank.jsonl"))'`` after removing it (the
    format-2 golden is kept as it was)."""
    seats = (
        Thinks(greedy_policy, 0.16, "north", "1.0"),
        InProcessSeat(greedy_policy, "south", "2.0"),
    )
    config = MatchConfig(
        "test-bank-9",
        9,
        time_control=BANK_CONTROL,
        fault_policy=FaultPolicy(strikes=3),
        salt=GOLDEN_SALT,
    )

    async def main() -> None:
        with MatchLog(path) as log:
            await play_match(seats, config, log)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return path
