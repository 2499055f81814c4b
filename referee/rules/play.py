"""Playing series in-process between Python policies (demo, tests, simulations, offline training).

A policy is any callable ``(observation, legal_actions) -> action``. It sees the state only
through :func:`observation`, exactly as a remote bot does.

>>> result = play_series(greedy_policy, RandomPolicy(seed=1), seed=11)
>>> result.winner, result.end.name
(0, 'COMPLETE')
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from referee.rules.cards import CARD_VALUES
from referee.rules.hand import (
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCKS,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    HandState,
    Phase,
)
from referee.rules.melds import deadwood_of_mask
from referee.rules.observe import Observation, observation
from referee.rules.params import RuleParams
from referee.rules.scoring import DEFAULT_PARAMS
from referee.rules.series import HandRecord, SeriesResult, SeriesState


class Policy(Protocol):
    """Chooses an action from what one seat sees."""

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action: ...


class RandomPolicy:
    """A uniformly random legal action, from its own seeded generator.

    >>> RandomPolicy(seed=3).rng.random() == RandomPolicy(seed=3).rng.random()
    True
    """

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:  # noqa: ARG002
        return legal[self.rng.randrange(len(legal))]


def best_throw(hand: int, forbidden: int = 0) -> tuple[int, int]:
    """``(deadwood after, card)`` of the best discard from a hand mask, ties going to the highest
    card value (then the lowest card number); never a card of ``forbidden``.

    >>> from referee.rules import CARDS, parse_cards
    >>> hand = parse_cards("As 2s 3s 9c Kd").mask
    >>> after, card = best_throw(hand)
    >>> after, CARDS[card]
    (9, Card('Kd'))
    >>> best_throw(hand, forbidden=1 << card)[0]
    10
    """
    best: tuple[int, int, int] | None = None
    rest = hand & ~forbidden
    while rest:
        low = rest & -rest
        rest ^= low
        card = low.bit_length() - 1
        key = (deadwood_of_mask(hand ^ low), -CARD_VALUES[card], card)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[0], best[2]


def _improves(hand: int, card: int) -> bool:
    """Whether taking ``card`` and then the best other discard lowers the deadwood."""
    after, _ = best_throw(hand | 1 << card, 1 << card)
    return after < deadwood_of_mask(hand)


class GreedyPolicy:
    """Keeps deadwood as low as it can; knocks once its deadwood is ``knock_at`` or less.

    Takes the upcard or the discard only when that lowers its deadwood; otherwise draws from the
    stock. ``knock_at=10`` knocks as soon as it legally may.
    """

    def __init__(self, knock_at: int = 10) -> None:
        self.knock_at = knock_at

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        hand = view.hand.mask
        if view.phase is Phase.UPCARD:
            return TAKE_UPCARD if _improves(hand, view.discard_pile[-1]) else PASS_UPCARD
        if view.phase is Phase.DRAW:
            if DRAW_DISCARD in legal and _improves(hand, view.discard_pile[-1]):
                return DRAW_DISCARD
            return DRAW_STOCK
        forbidden = 0 if view.taken_this_turn is None else 1 << view.taken_this_turn
        after, card = best_throw(hand, forbidden)
        if after <= min(self.knock_at, view.params.knock_limit) and KNOCKS[card] in legal:
            return KNOCKS[card]
        return DISCARDS[card]


greedy_policy = GreedyPolicy()
"""Knocks at the first chance."""

patient_policy = GreedyPolicy(knock_at=4)
"""Plays on for a low knock or gin."""

HandEndHook = Callable[[HandRecord], None]


def play_series(
    first: Policy,
    second: Policy,
    seed: int,
    params: RuleParams = DEFAULT_PARAMS,
    on_hand_end: HandEndHook | None = None,
) -> SeriesResult:
    """Play a whole series, ``first`` in seat 0 and ``second`` in seat 1.

    Raises:
        IllegalActionError: a policy returned an illegal action.
    """
    policies = (first, second)
    series = SeriesState(seed, params)
    while series.result is None:
        seat = series.to_move
        action = policies[seat](observation(series, seat), series.legal_actions())
        hands_before = len(series.finished)
        series.apply(action)
        if on_hand_end is not None and len(series.finished) > hands_before:
            on_hand_end(series.finished[-1])
    return series.result


def play_hand(first: Policy, second: Policy, hand: HandState) -> HandState:
    """Play one hand to its end between two policies; returns the same, finished state.

    Raises:
        IllegalActionError: a policy returned an illegal action.
    """
    policies = (first, second)
    while not hand.is_over:
        seat = hand.to_move
        hand.apply(policies[seat](observation(hand, seat), hand.legal_actions()))
    return hand
