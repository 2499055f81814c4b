"""greedy: keeps its deadwood as low as it can and knocks at the first chance.

It takes the upcard or the discard only when that lowers its deadwood (otherwise it draws from
the stock), throws the card that leaves the least deadwood (the highest card on a tie), and
knocks as soon as it legally can. The rules helpers do all the work.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from protocol.sdk import Bot
from referee.rules import Action, GreedyPolicy, Observation


class GreedyBot(Bot):
    """The in-process :class:`~referee.rules.GreedyPolicy` as a bot."""

    name = "greedy"
    version = "1.0.0"

    def __init__(self) -> None:
        self.policy = GreedyPolicy(knock_at=10)

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(GreedyBot().run())
