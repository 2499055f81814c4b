"""house: searches over the hidden cards. The decision logic is the pure policy in
``sample_bots.house.strategy``.

For each decision it imagines deals consistent with what it sees (the opponent's hidden cards
and the stock's order drawn from the unseen cards), plays the few actions worth trying out on
each of them to the end of the hand, and picks the one that scored best. It searches for a tenth
of a second a decision, less when the referee's clock is tighter (a quarter of the time a
move), and seeds its search from the bot seed the referee gives, so a league replays.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

from protocol.sdk import Bot, SeriesInfo
from referee.rules import Action, Observation
from sample_bots.house.strategy import Budget, HousePolicy

SHARE = 0.25
"""The most of the time a move that one decision's search may use."""


def budget_for(move_time_ms: int, budget: Budget | None = None) -> Budget:
    """``budget`` (by default :class:`Budget`'s) cut to fit a clock of ``move_time_ms`` a move
    (0: no clock given)."""
    budget = budget or Budget()
    if move_time_ms <= 0:
        return budget
    return replace(budget, seconds=min(budget.seconds, SHARE * move_time_ms / 1000))


class HouseBot(Bot):
    """The in-process :class:`HousePolicy` as a bot."""

    name = "house"
    version = "1.0.0"

    def __init__(self, budget: Budget | None = None) -> None:
        self.policy = HousePolicy(budget)

    def seed_random(self, seed: int) -> None:
        super().seed_random(seed)
        self.policy.seed = seed

    def on_series_start(self, info: SeriesInfo) -> None:
        self.policy.budget = budget_for(info.move_time_ms, self.policy.budget)

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(HouseBot().run())
