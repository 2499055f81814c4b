"""Match logs for the replay tests, played in-process (no bot processes, mock clock)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import trio
import trio.testing

from referee.control import FaultPolicy
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.rules import Action, Discard, Observation, Phase, Policy, greedy_policy
from referee.seats import InProcessSeat


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
"""The match salt of the format-2 golden log (a real match draws its salt at random)."""


def play_golden_strikes(path: Path) -> Path:
    """The recipe of ``golden/format2-strikes.jsonl``: seed 12, seat 0 plays greedy but answers
    its 3rd and 40th discards with a card it does not hold (two strikes, the referee's safe
    action instead), seat 1 plays patiently; knocks, undercuts and a hand drawn at the stock's
    end. Regenerate with ``python -c 'from tests.replay_logs import *;
    play_golden_strikes(Path("tests/golden/format2-strikes.jsonl"))'`` after removing it."""
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
