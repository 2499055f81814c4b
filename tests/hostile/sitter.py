"""A hostile bot that plays sittings and tries to recognise a deal it has seen before.

It plays on (``Hello.plays_on``) and remembers, across the series of its process and in a file
under ``/tmp``, each series' signature: the upcards of its first three hands, which the two legs
of a duplicate pair share (the same decks, seats swapped). At the third hand of every series it
says on stderr whether it has met that signature before, in this process or in the file:

``SITTER process=<token> series=<n> signature=<cards> seen=<yes|no> remembered=<entries>``

A bot that found ``seen=yes`` would know the stock's order in a mirror leg. The referee's
promise is that it never does: a sitting never holds both legs of one pair, and nothing of a
sitting (its process, its ``/tmp``) reaches the next. ``tests/test_sittings.py`` plays it.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from protocol.sdk import Bot
from referee.rules import Action, GreedyPolicy, Observation

MEMORY = Path("/tmp") / "sitter-memory"
PROCESS = secrets.token_hex(6)
"""Says which process played a series (its stderr is kept per series)."""
HANDS = 3


class Memory:
    """What the process carries from series to series (module-level: whatever instance the SDK
    plays a series with, it finds it)."""

    series = 0
    seen: set[str] = set()  # noqa: RUF012 - one process, one memory
    upcards: list[str] = []  # noqa: RUF012
    last_hand = -1


def remembered() -> set[str]:
    """The signatures an earlier process of this bot left in its file, if the file survived
    (entries are ``process:signature``)."""
    try:
        entries = MEMORY.read_text().split()
    except OSError:
        return set()
    return {entry.partition(":")[2] for entry in entries if not entry.startswith(f"{PROCESS}:")}


def upcard(view: Observation) -> str:
    """The hand's upcard, from the seat's first decision in it: still at the bottom of the
    discard pile, or taken by the opponent at the offer."""
    if view.opponent_took:
        return str(view.opponent_took[0])
    return str(view.discard_pile[0])


def note(view: Observation) -> None:
    """Keep the upcard of each of the first hands; at the last of them, say what is known."""
    if view.hand_number < Memory.last_hand or (view.hand_number == 0 and Memory.last_hand < 0):
        Memory.series += 1  # a new series of the sitting
        Memory.upcards = []
        Memory.last_hand = -1
    if view.hand_number == Memory.last_hand:
        return
    Memory.last_hand = view.hand_number
    if len(Memory.upcards) >= HANDS:
        return
    Memory.upcards.append(upcard(view))
    if len(Memory.upcards) < HANDS:
        return
    signature = "-".join(Memory.upcards)
    earlier = remembered()
    seen = signature in Memory.seen or signature in earlier
    print(
        f"SITTER process={PROCESS} series={Memory.series} signature={signature} "
        f"seen={'yes' if seen else 'no'} remembered={len(earlier)}",
        file=sys.stderr,
        flush=True,
    )
    Memory.seen.add(signature)
    try:
        with MEMORY.open("a") as memory:
            memory.write(f"{PROCESS}:{signature}\n")
    except OSError as error:
        print(f"SITTER cannot write {MEMORY}: {error}", file=sys.stderr, flush=True)


class Sitter(Bot):
    """Greedy play; remembers every deal it can."""

    plays_on = True

    def __init__(self) -> None:
        self.policy = GreedyPolicy(knock_at=10)

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        note(view)
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(Sitter().run())
