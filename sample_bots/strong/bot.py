"""strong: plays for meld potential and safety, and knocks with the layout that invites fewest
layoffs. The decision logic is the pure policy in ``sample_bots.strong.strategy``.

It uses everything public: the discard pile (dead cards), the cards the opponent took and what
it threw or declined (cards it is not collecting), the stock count. It values a hand by its
deadwood less the expected gain of the next draw, avoids discards likely to complete an
opponent's meld, and declares its knock melds to leave the fewest expected layoffs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from protocol.sdk import Bot
from referee.rules import Action, Observation
from sample_bots.strong.strategy import StrongPolicy


class StrongBot(Bot):
    """The in-process :class:`StrongPolicy` as a bot."""

    name = "strong"
    version = "1.0.0"

    def __init__(self) -> None:
        self.policy = StrongPolicy()

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(StrongBot().run())
