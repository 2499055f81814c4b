"""Whole hands of uniform-random play, driven from Python, for our engine and for OpenSpiel.

Both seats pick uniformly among the legal actions with Python's ``random``. OpenSpiel also deals
through chance nodes (the 21 dealt cards and every stock draw); those are sampled uniformly in the
same loop, as a Python driver of ``pyspiel`` must. Our hand draws its deck from
:func:`referee.rules.shuffled_deck`, which is timed too.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee.rules import HandState, RuleParams, shuffled_deck


@dataclass
class PlayStats:
    """Totals over the hands played."""

    hands: int = 0
    decisions: int = 0
    """Player decisions (chance nodes excluded)."""
    choices: int = 0
    """Decisions with at least two legal actions."""
    chance: int = 0
    """Chance nodes sampled (OpenSpiel only)."""
    endings: Counter[str] = field(default_factory=Counter)

    def record(self, decisions: int, choices: int, ending: str, chance: int = 0) -> None:
        """Add one finished hand."""
        self.hands += 1
        self.decisions += decisions
        self.choices += choices
        self.chance += chance
        self.endings[ending] += 1

    def per_hand(self, total: int) -> float:
        """A total divided by the number of hands."""
        return total / self.hands if self.hands else 0.0


def play_ours(seed: int, first_hand: int, hands: int, stats: PlayStats) -> int:
    """Play hands ``first_hand ..`` of a series seeded ``seed``, dealer seat 0, default rules."""
    rng = random.Random(f"ours/{seed}/{first_hand}")
    params = RuleParams()
    for hand_index in range(first_hand, first_hand + hands):
        state = HandState.deal(shuffled_deck(seed, hand_index), dealer=0, params=params)
        decisions = choices = 0
        while not state.is_over:
            actions = state.legal_actions()
            decisions += 1
            if len(actions) > 1:
                choices += 1
            state.apply(rng.choice(actions))
        ending = state.outcome.end.name if state.outcome is not None else "UNKNOWN"
        stats.record(decisions, choices, ending)
    return hands


def openspiel_ending(state: Any) -> str:
    """How a finished OpenSpiel hand ended, in words close to ours.

    A knock ends in ``GIN`` (knocker's deadwood 0), ``KNOCK`` (knocker scores), ``UNDERCUT``
    (defender scores) or ``KNOCK_TIE`` (equal deadwood: OpenSpiel scores 0 to both). Without a
    knock the hand is drawn: ``WALL`` when the stock is down to two cards, else
    ``REPEATED_MOVE``: OpenSpiel lets a player take the upcard and throw it straight back, and
    ends the hand when that happens on two turns in a row.
    """
    knocked = list(state.knocked())
    if True not in knocked:
        return "WALL" if int(state.stock_size()) <= 2 else "REPEATED_MOVE"
    knocker = knocked.index(True)
    if int(state.deadwood()[knocker]) == 0:
        return "GIN"
    points = float(state.returns()[knocker])
    if points > 0:
        return "KNOCK"
    return "UNDERCUT" if points < 0 else "KNOCK_TIE"


def play_openspiel(game: Any, seed: int, first_hand: int, hands: int, stats: PlayStats) -> int:
    """Play ``hands`` hands of ``game`` (``pyspiel.load_game("gin_rummy")``) from Python."""
    rng = random.Random(f"openspiel/{seed}/{first_hand}")
    for _ in range(hands):
        state = game.new_initial_state()
        decisions = choices = chance = 0
        while not state.is_terminal():
            if state.is_chance_node():
                action = rng.choice(state.chance_outcomes())[0]
                chance += 1
            else:
                actions = state.legal_actions()
                decisions += 1
                if len(actions) > 1:
                    choices += 1
                action = rng.choice(actions)
            state.apply_action(action)
        stats.record(decisions, choices, openspiel_ending(state), chance)
    return hands


__all__ = ["PlayStats", "openspiel_ending", "play_openspiel", "play_ours"]
