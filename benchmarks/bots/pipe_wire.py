"""The JSON-lines wire of the pipe peer (``benchmarks.pipe_referee``): rules types to plain JSON
values and back, cards as their numbers and card sets as their masks.

Only what a seat sees at a decision crosses it: an :class:`Observation` without its outcome (a
decision is never asked of a finished hand) and without its history, which goes as the events
new since that seat's last request (as the real protocol sends them), and the legal actions.
The bot side rebuilds an observation equal to the referee's (``tests/test_series_bench.py``).
"""

from __future__ import annotations

from typing import Any

from referee.rules import (
    CARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    CardSet,
    Discard,
    Knock,
    Observation,
    Phase,
    PublicEvent,
    RuleParams,
)

_SIMPLE: dict[str, Action] = {
    "take": TAKE_UPCARD,
    "pass": PASS_UPCARD,
    "stock": DRAW_STOCK,
    "pile": DRAW_DISCARD,
}
_KINDS: dict[type, str] = {type(action): kind for kind, action in _SIMPLE.items()}


def action_out(action: Action) -> Any:
    """An action as JSON: a word, or ``[word, card]``, or ``[word, card, melds]``."""
    kind = _KINDS.get(type(action))
    if kind is not None:
        return kind
    if isinstance(action, Discard):
        return ["discard", int(action.card)]
    assert isinstance(action, Knock)
    if action.melds is None:
        return ["knock", int(action.card)]
    return ["knock", int(action.card), [meld.mask for meld in action.melds]]


def action_in(data: Any) -> Action:
    """Read :func:`action_out`'s form back.

    Raises:
        ValueError: not an action of that form.
    """
    if isinstance(data, str) and data in _SIMPLE:
        return _SIMPLE[data]
    if not isinstance(data, list) or len(data) not in (2, 3) or not isinstance(data[1], int):
        raise ValueError(f"not an action: {data!r}")
    card = CARDS[data[1]]
    if data[0] == "discard" and len(data) == 2:
        return Discard(card)
    if data[0] == "knock":
        return Knock(card, None if len(data) == 2 else tuple(CardSet(m) for m in data[2]))
    raise ValueError(f"not an action: {data!r}")


def event_out(event: PublicEvent) -> list[Any]:
    """A public event as ``[seat, action, card or null]``."""
    return [event.seat, action_out(event.action), None if event.card is None else int(event.card)]


def event_in(data: list[Any]) -> PublicEvent:
    """Read :func:`event_out`'s form back."""
    seat, action, card = data
    return PublicEvent(seat, action_in(action), None if card is None else CARDS[card])


def view_out(view: Observation) -> dict[str, Any]:
    """The observation's fields but its history, outcome and rules (sent apart)."""
    taken = view.taken_this_turn
    return {
        "seat": view.seat,
        "phase": view.phase.value,
        "to_move": view.to_move,
        "dealer": view.dealer,
        "hand": view.hand.mask,
        "pile": [int(card) for card in view.discard_pile],
        "stock": view.stock_count,
        "took": [int(card) for card in view.opponent_took],
        "known": view.opponent_known.mask,
        "opponent_size": view.opponent_hand_size,
        "taken": None if taken is None else int(taken),
        "turns": view.turns,
        "hand_number": view.hand_number,
        "totals": view.totals,
        "game_winners": view.game_winners,
    }


def view_in(
    data: dict[str, Any], history: tuple[PublicEvent, ...], params: RuleParams
) -> Observation:
    """The observation :func:`view_out` was made from, given its history and rules."""
    taken = data["taken"]
    totals = data["totals"]
    return Observation(
        data["seat"],
        Phase(data["phase"]),
        data["to_move"],
        data["dealer"],
        CardSet.of_mask(data["hand"]),
        tuple(CARDS[card] for card in data["pile"]),
        data["stock"],
        tuple(CARDS[card] for card in data["took"]),
        CardSet.of_mask(data["known"]),
        data["opponent_size"],
        None if taken is None else CARDS[taken],
        data["turns"],
        history,
        None,
        params,
        data["hand_number"],
        (tuple(totals[0]), tuple(totals[1])),
        tuple(data["game_winners"]),
    )
