"""A ready-to-run bot folder for ``gin bot new NAME``: manifest, code and a test."""

from __future__ import annotations

from pathlib import Path
from string import Template
from typing import Final

from protocol.manifest import NAME_PATTERN, load_manifest

MANIFEST: Final = Template("""\
name = "$name"
version = "0.1.0"
command = ["python", "bot.py"]
author = ""
description = "A Hollywood Gin bot."
""")

BOT: Final = Template('''\
"""$name: a Hollywood Gin bot.

The referee starts this file with GIN_REFEREE and GIN_TOKEN set; Bot.run() does the talking.
decide() gets what this seat sees (an Observation) and the legal actions, and returns one.

Draw any random choice from self.rng (e.g. self.rng.choice(legal)): the SDK seeds it with the
referee's seed for each series, so a league run again with the same secret replays every hand.
The random module's own functions, or a generator seeded from the clock or the OS, would not.

The referee may have one process play several series in a row (a sitting): each series after
the first is played by a fresh $cls() (Bot.next_series). Override next_series to carry what
the bot learnt of its opponent from one series to the next; set plays_on = False for a fresh
process every series.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from protocol.sdk import Bot
from referee.rules import (
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Discard,
    Knock,
    Observation,
    Phase,
    best_discards,
    min_deadwood,
)


class $cls(Bot):
    """Keeps deadwood low, takes a face-up card only when it helps, knocks when it can.

    Its name and version are bot.toml's: run() reads them from there."""

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        now = min_deadwood(view.hand).deadwood
        if view.phase is Phase.UPCARD or view.phase is Phase.DRAW:
            top = view.discard_pile[-1]
            after, throws = best_discards(list(view.hand) + [top])
            helps = after < now and any(card != top for card in throws)
            if view.phase is Phase.UPCARD:
                return TAKE_UPCARD if helps else PASS_UPCARD
            return DRAW_DISCARD if helps and DRAW_DISCARD in legal else DRAW_STOCK
        knocks = [action for action in legal if isinstance(action, Knock)]
        if knocks:
            return min(knocks, key=lambda knock: self.after(view, knock.card))
        discards = [action for action in legal if isinstance(action, Discard)]
        return min(discards, key=lambda discard: (self.after(view, discard.card),
                                                   -discard.card.value))

    @staticmethod
    def after(view: Observation, card: int) -> int:
        """Deadwood left after throwing ``card``."""
        return min_deadwood([held for held in view.hand if held != card]).deadwood


if __name__ == "__main__":
    sys.exit($cls().run())
''')

TEST: Final = Template('''\
"""Play the bot in-process, as the referee would, before submitting it (run: pytest)."""

from referee.rules import RandomPolicy, greedy_policy, play_series

from bot import $cls


def test_plays_only_legal_actions_and_beats_random() -> None:
    wins = 0
    for seed in range(6):
        result = play_series($cls().as_policy(), RandomPolicy(seed), seed=seed)
        wins += result.winner == 0
    assert wins >= 5


def test_holds_its_own_against_greedy() -> None:
    result = play_series($cls().as_policy(), greedy_policy, seed=1)
    assert result.end.value == "complete"
''')


def class_name(name: str) -> str:
    """``my-first_bot`` -> ``MyFirstBot``.

    >>> class_name("my-first_bot")
    'MyFirstBot'
    """
    parts = name.replace("_", "-").split("-")
    joined = "".join(part[:1].upper() + part[1:] for part in parts if part)
    return joined if joined[:1].isalpha() else f"Bot{joined}"


def create_bot_folder(name: str, parent: Path) -> Path:
    """Write ``parent/name`` with ``bot.toml``, ``bot.py`` and ``test_bot.py``; returns it.

    Raises:
        ValueError: a bad name, or the folder already exists.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"bad bot name {name!r}: lowercase letters, digits, '-' and '_', "
            "at most 40, e.g. 'my-bot'"
        )
    folder = parent / name
    if folder.exists():
        raise ValueError(f"{folder} already exists; choose another name or folder")
    folder.mkdir(parents=True)
    fields = {"name": name, "cls": class_name(name)}
    (folder / "bot.toml").write_text(MANIFEST.substitute(fields))
    (folder / "bot.py").write_text(BOT.substitute(fields))
    (folder / "test_bot.py").write_text(TEST.substitute(fields))
    load_manifest(folder)
    return folder
