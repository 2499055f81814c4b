"""random: plays a uniformly random legal action. The floor every bot should beat."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from protocol.sdk import Bot
from referee.rules import Action, Observation


class RandomBot(Bot):
    """A uniformly random legal action, drawn from the SDK's generator (:attr:`Bot.rng`), which
    the referee's seed for the series seeds: the same league secret, the same choices."""

    name = "random"
    version = "1.0.0"

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None:  # in process; a series over the protocol brings its own
            self.seed_random(seed)

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:  # noqa: ARG002
        return legal[self.rng.randrange(len(legal))]


if __name__ == "__main__":
    sys.exit(RandomBot().run())
