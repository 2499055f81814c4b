"""Conversions between protocol messages and rules types: the only place that knows both (with
:mod:`protocol.wire`, which writes the referee's decision requests straight as bytes).

Every ``*_from_pb`` raises ``ValueError`` with a sentence naming the field when a message is
malformed (a bad card, no choice set, an unknown enum value), so a bot's bad message becomes a
clear fault rather than a traceback.

>>> from referee.rules import Knock, parse_cards
>>> message = action_to_pb(Knock(parse_cards("Kd").__iter__().__next__()), request_id=7)
>>> message.request_id, message.knock.card, action_from_pb(message)
(7, 'Kd', Knock(card=Card('Kd'), melds=None))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from google.protobuf import descriptor_pool, message_factory

from protocol import hollywood_gin_pb2 as pb
from referee.rules import (
    CARD_NAMES,
    CARDS,
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCKS,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Arrangement,
    Card,
    CardSet,
    DefenderLayout,
    Discard,
    DrawDiscard,
    DrawStock,
    HandEnd,
    HandOutcome,
    Knock,
    Layoff,
    Meld,
    Observation,
    PassUpcard,
    Phase,
    PublicEvent,
    RuleParams,
    Scoring,
    TakeUpcard,
    card_set,
)

PROTOCOL_VERSION: Final = 1
"""The protocol version this code speaks (``Hello.protocol_version``)."""

# --- cards -------------------------------------------------------------------------------------


def card_to_pb(card: Card | None) -> str:
    """A card's notation, or ``""`` for no card."""
    return "" if card is None else CARD_NAMES[card]


def card_from_pb(text: str, field: str = "card") -> Card:
    """Read one card.

    Raises:
        ValueError: the text is not a card (the message names ``field``).
    """
    try:
        return Card.parse(text)
    except ValueError as error:
        raise ValueError(f"{field}: {error}") from None


def cards_to_pb(cards: Iterable[Card]) -> list[str]:
    """A card set as notation strings, in card order."""
    ordered = cards if isinstance(cards, CardSet) else card_set(list(cards))
    return [CARD_NAMES[card] for card in ordered]


def cards_from_pb(texts: Iterable[str], field: str = "cards") -> CardSet:
    """Read a card set.

    Raises:
        ValueError: a bad card or a card listed twice (the message names ``field``).
    """
    mask = 0
    for text in texts:
        card = card_from_pb(text, field)
        if mask >> card & 1:
            raise ValueError(f"{field}: card {card} listed twice")
        mask |= 1 << card
    return CardSet(mask)


def _optional_card(text: str, field: str) -> Card | None:
    return None if text == "" else card_from_pb(text, field)


# --- actions -----------------------------------------------------------------------------------


def action_to_pb(action: Action, request_id: int = 0) -> pb.Action:
    """An action as a message answering ``request_id``."""
    message = pb.Action(request_id=request_id)
    if isinstance(action, TakeUpcard | PassUpcard):
        message.upcard.take = isinstance(action, TakeUpcard)
    elif isinstance(action, DrawStock):
        message.draw.source = pb.DRAW_SOURCE_STOCK
    elif isinstance(action, DrawDiscard):
        message.draw.source = pb.DRAW_SOURCE_DISCARD_PILE
    elif isinstance(action, Discard):
        message.discard.card = str(action.card)
    else:
        message.knock.card = str(action.card)
        if action.melds is not None:
            message.knock.declare_melds = True
            for meld in action.melds:
                message.knock.melds.add(cards=cards_to_pb(meld))
    return message


def action_from_pb(message: pb.Action) -> Action:
    """Read an action (its request id is the caller's business).

    Raises:
        ValueError: no choice set, an unknown draw source, or a bad card.
    """
    choice = message.WhichOneof("choice")
    if choice == "upcard":
        return TAKE_UPCARD if message.upcard.take else PASS_UPCARD
    if choice == "draw":
        if message.draw.source == pb.DRAW_SOURCE_STOCK:
            return DRAW_STOCK
        if message.draw.source == pb.DRAW_SOURCE_DISCARD_PILE:
            return DRAW_DISCARD
        raise ValueError(f"action.draw.source: unknown draw source {message.draw.source}")
    if choice == "discard":
        return DISCARDS[card_from_pb(message.discard.card, "action.discard.card")]
    if choice == "knock":
        card = card_from_pb(message.knock.card, "action.knock.card")
        if not message.knock.declare_melds:
            return KNOCKS[card]
        melds = tuple(
            cards_from_pb(meld.cards, f"action.knock.melds[{index}]")
            for index, meld in enumerate(message.knock.melds)
        )
        return Knock(card, melds)
    raise ValueError("action: no choice set (upcard, draw, discard or knock)")


# --- rule parameters ---------------------------------------------------------------------------


def params_to_pb(params: RuleParams) -> pb.RuleParams:
    """The rule parameters as a message."""
    return pb.RuleParams(
        knock_limit=params.knock_limit,
        gin_bonus=params.gin_bonus,
        undercut_bonus=params.undercut_bonus,
        undercut_on_tie=params.undercut_on_tie,
        game_target=params.game_target,
        games=params.games,
        stock_end=params.stock_end,
        turn_cap=params.turn_cap,
        hand_cap=params.hand_cap,
        stop_when_decided=params.stop_when_decided,
        no_rediscard=params.no_rediscard,
    )


def params_from_pb(message: pb.RuleParams) -> RuleParams:
    """Read the rule parameters.

    Raises:
        ValueError: a games count other than 1 or 3, or a value out of range.
    """
    if message.games not in (1, 3):
        raise ValueError(f"rules.games must be 1 or 3, not {message.games}")
    return RuleParams(
        knock_limit=message.knock_limit,
        gin_bonus=message.gin_bonus,
        undercut_bonus=message.undercut_bonus,
        undercut_on_tie=message.undercut_on_tie,
        game_target=message.game_target,
        scoring=Scoring.HOLLYWOOD if message.games == 3 else Scoring.PLAIN,
        stock_end=message.stock_end,
        turn_cap=message.turn_cap,
        hand_cap=message.hand_cap,
        stop_when_decided=message.stop_when_decided,
        no_rediscard=message.no_rediscard,
    )


# --- observations ------------------------------------------------------------------------------

_EVENT_KINDS: Final = {
    TakeUpcard: pb.PublicEvent.KIND_TAKE_UPCARD,
    PassUpcard: pb.PublicEvent.KIND_PASS_UPCARD,
    DrawStock: pb.PublicEvent.KIND_DRAW_STOCK,
    DrawDiscard: pb.PublicEvent.KIND_DRAW_DISCARD,
    Discard: pb.PublicEvent.KIND_DISCARD,
    Knock: pb.PublicEvent.KIND_KNOCK,
}

DECISION_KINDS: Final = {
    Phase.UPCARD: pb.DECISION_KIND_UPCARD,
    Phase.DRAW: pb.DECISION_KIND_DRAW,
    Phase.DISCARD: pb.DECISION_KIND_DISCARD,
}
_PHASES: Final[dict[int, Phase]] = {int(kind): phase for phase, kind in DECISION_KINDS.items()}


def public_event_to_pb(event: PublicEvent) -> pb.PublicEvent:
    """One public action as a message."""
    return pb.PublicEvent(
        seat=event.seat, kind=_EVENT_KINDS[type(event.action)], card=card_to_pb(event.card)
    )


def public_event_from_pb(message: pb.PublicEvent) -> PublicEvent:
    """Read one public action.

    Raises:
        ValueError: an unknown kind, or a card missing where the kind needs one.
    """
    card = _optional_card(message.card, "event.card")
    kind = message.kind
    action: Action
    if kind == pb.PublicEvent.KIND_TAKE_UPCARD:
        action = TAKE_UPCARD
    elif kind == pb.PublicEvent.KIND_PASS_UPCARD:
        action = PASS_UPCARD
    elif kind == pb.PublicEvent.KIND_DRAW_STOCK:
        action = DRAW_STOCK
    elif kind == pb.PublicEvent.KIND_DRAW_DISCARD:
        action = DRAW_DISCARD
    elif kind in (pb.PublicEvent.KIND_DISCARD, pb.PublicEvent.KIND_KNOCK):
        if card is None:
            raise ValueError("event.card: a discard or knock names its card")
        action = Discard(card) if kind == pb.PublicEvent.KIND_DISCARD else Knock(card)
    else:
        raise ValueError(f"event.kind: unknown kind {kind}")
    return PublicEvent(message.seat, action, card)


def score_to_pb(
    totals: Sequence[Sequence[int]], game_winners: Sequence[int | None]
) -> pb.ScoreSheet:
    """The score sheet as a message (-1 for a game nobody has won)."""
    return pb.ScoreSheet(
        totals=[pb.GameTotals(games=list(seat_totals)) for seat_totals in totals],
        game_winners=[-1 if winner is None else winner for winner in game_winners],
    )


def score_from_pb(
    message: pb.ScoreSheet,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[int | None, ...]]:
    """Read ``(totals by seat, game winners)``.

    Raises:
        ValueError: not exactly two seats' totals.
    """
    if len(message.totals) != 2:
        raise ValueError(f"score.totals must list two seats, not {len(message.totals)}")
    first, second = (tuple(seat.games) for seat in message.totals)
    winners = tuple(None if winner < 0 else winner for winner in message.game_winners)
    return (first, second), winners


def observation_to_pb(view: Observation) -> pb.Observation:
    """A seat's view as a message (the hand outcome travels in HandEnded, not here)."""
    return pb.Observation(
        seat=view.seat,
        hand_number=view.hand_number,
        dealer=view.dealer,
        hand=cards_to_pb(view.hand),
        discard_pile=[CARD_NAMES[card] for card in view.discard_pile],
        stock_count=view.stock_count,
        opponent_took=[CARD_NAMES[card] for card in view.opponent_took],
        opponent_known=cards_to_pb(view.opponent_known),
        opponent_hand_size=view.opponent_hand_size,
        taken_this_turn=card_to_pb(view.taken_this_turn),
        turns=view.turns,
        history=[public_event_to_pb(event) for event in view.history],
        score=score_to_pb(view.totals, view.game_winners),
    )


def observation_from_pb(
    message: pb.Observation, kind: int, to_move: int, params: RuleParams
) -> Observation:
    """Read a seat's view of a decision (``kind`` from the request, ``to_move`` its seat).

    Raises:
        ValueError: a malformed field (the message names it).
    """
    if kind not in _PHASES:
        raise ValueError(f"request.kind: unknown decision kind {kind}")
    totals, winners = score_from_pb(message.score)
    return Observation(
        seat=message.seat,
        phase=_PHASES[kind],
        to_move=to_move,
        dealer=message.dealer,
        hand=cards_from_pb(message.hand, "observation.hand"),
        discard_pile=tuple(
            card_from_pb(text, "observation.discard_pile") for text in message.discard_pile
        ),
        stock_count=message.stock_count,
        opponent_took=tuple(
            card_from_pb(text, "observation.opponent_took") for text in message.opponent_took
        ),
        opponent_known=cards_from_pb(message.opponent_known, "observation.opponent_known"),
        opponent_hand_size=message.opponent_hand_size,
        taken_this_turn=_optional_card(message.taken_this_turn, "observation.taken_this_turn"),
        turns=message.turns,
        history=tuple(public_event_from_pb(event) for event in message.history),
        outcome=None,
        params=params,
        hand_number=message.hand_number,
        totals=totals,
        game_winners=winners,
    )


# --- hand outcomes -----------------------------------------------------------------------------

HAND_ENDS: Final = {
    HandEnd.GIN: pb.HAND_END_GIN,
    HandEnd.KNOCK: pb.HAND_END_KNOCK,
    HandEnd.UNDERCUT: pb.HAND_END_UNDERCUT,
    HandEnd.STOCK_EXHAUSTED: pb.HAND_END_STOCK_EXHAUSTED,
    HandEnd.TURN_CAP: pb.HAND_END_TURN_CAP,
}
_HAND_ENDS_BACK: Final = {value: key for key, value in HAND_ENDS.items()}


def _meld_to_pb(meld: Meld) -> pb.Meld:
    return pb.Meld(cards=[str(card) for card in meld])


def _meld_from_pb(message: pb.Meld, field: str) -> Meld:
    try:
        return Meld.of(cards_from_pb(message.cards, field))
    except ValueError as error:
        raise ValueError(f"{field}: {error}") from None


def hand_ended_to_pb(
    outcome: HandOutcome, hand_number: int, discard: Card | None, games: Sequence[int]
) -> pb.HandEnded:
    """A finished hand as the HandEnded event (``games`` 0-based, sent 1-based)."""
    message = pb.HandEnded(
        hand_number=hand_number,
        end=HAND_ENDS[outcome.end],
        winner=-1 if outcome.winner is None else outcome.winner,
        points=outcome.points,
        knocker=-1 if outcome.knocker is None else outcome.knocker,
        games=[game + 1 for game in games],
    )
    if outcome.knocker_layout is not None:
        layout = outcome.knocker_layout
        message.knocker_layout.CopyFrom(
            pb.KnockerLayout(
                melds=[_meld_to_pb(meld) for meld in layout.melds],
                deadwood_cards=cards_to_pb(layout.deadwood_cards),
                deadwood=layout.deadwood,
                discard=card_to_pb(discard),
            )
        )
    if outcome.defender_layout is not None:
        defence = outcome.defender_layout
        message.defender_layout.CopyFrom(
            pb.DefenderLayout(
                melds=[_meld_to_pb(meld) for meld in defence.melds],
                layoffs=[
                    pb.Layoff(cards=cards_to_pb(layoff.cards), onto=_meld_to_pb(layoff.onto))
                    for layoff in defence.laid_off
                ],
                deadwood_cards=cards_to_pb(defence.deadwood_cards),
                deadwood=defence.deadwood,
            )
        )
    return message


def hand_ended_from_pb(message: pb.HandEnded) -> HandOutcome:
    """Read a HandEnded event as a rules outcome (both hands rebuilt from the showdown).

    Raises:
        ValueError: an unknown end, a bad card or an illegal meld.
    """
    if message.end not in _HAND_ENDS_BACK:
        raise ValueError(f"hand_ended.end: unknown end {message.end}")
    end = _HAND_ENDS_BACK[message.end]
    knocker = None if message.knocker < 0 else message.knocker
    hands = [CardSet(), CardSet()]
    knocker_layout = defender_layout = None
    if knocker is not None:
        knocker_layout = _knocker_layout_from_pb(message.knocker_layout)
        defender_layout = _defender_layout_from_pb(message.defender_layout)
        hands[knocker] = knocker_layout.cards
        defender_cards = defender_layout.deadwood_cards
        for meld in defender_layout.melds:
            defender_cards |= meld.cards
        for layoff in defender_layout.laid_off:
            defender_cards |= layoff.cards
        hands[1 - knocker] = defender_cards
    return HandOutcome(
        end=end,
        winner=None if message.winner < 0 else message.winner,
        points=message.points,
        knocker=knocker,
        knocker_layout=knocker_layout,
        defender_layout=defender_layout,
        hands=(hands[0], hands[1]),
        turns=0,
    )


def _knocker_layout_from_pb(message: pb.KnockerLayout) -> Arrangement:
    melds = tuple(_meld_from_pb(meld, "knocker_layout.melds") for meld in message.melds)
    rest = cards_from_pb(message.deadwood_cards, "knocker_layout.deadwood_cards")
    return Arrangement(melds, message.deadwood, rest.mask)


def _defender_layout_from_pb(message: pb.DefenderLayout) -> DefenderLayout:
    melds = tuple(_meld_from_pb(meld, "defender_layout.melds") for meld in message.melds)
    layoffs = tuple(
        Layoff(
            cards_from_pb(item.cards, "defender_layout.layoffs"),
            _meld_from_pb(item.onto, "defender_layout.layoffs.onto"),
        )
        for item in message.layoffs
    )
    rest = cards_from_pb(message.deadwood_cards, "defender_layout.deadwood_cards")
    return DefenderLayout(melds, layoffs, message.deadwood, rest.mask)


# --- the SDK's request decoder -----------------------------------------------------------------


def _length_field(field: int, payload: bytes) -> bytes:
    assert len(payload) < 128, "a one-byte length"
    return bytes((field << 3 | 2, len(payload))) + payload


def _varint_field(field: int, value: int) -> bytes:
    return bytes((field << 3, value))


def _raw_field(name: str, number: int, message: str = "") -> bytes:
    """A FieldDescriptorProto: ``repeated bytes``, or an optional message field."""
    parts = [_length_field(1, name.encode()), _varint_field(3, number)]
    if message:
        parts += [_varint_field(4, 1), _varint_field(5, 11), _length_field(6, message.encode())]
    else:
        parts += [_varint_field(4, 3), _varint_field(5, 12)]
    return b"".join(parts)


_RAW_PACKAGE: Final = "hollywood_gin.v1.sdk_raw"
_RAW_FILE: Final = b"".join(
    [
        _length_field(1, b"protocol/sdk_raw.proto"),
        _length_field(2, _RAW_PACKAGE.encode()),
        _length_field(
            4,
            _length_field(1, b"RawObservation") + _length_field(2, _raw_field("history", 12)),
        ),
        _length_field(
            4,
            _length_field(1, b"RawRequest")
            + _length_field(2, _raw_field("observation", 3, f".{_RAW_PACKAGE}.RawObservation"))
            + _length_field(2, _raw_field("legal_actions", 4)),
        ),
        _length_field(12, b"proto3"),
    ]
)
"""A FileDescriptorProto, written out here (descriptor_pb2 is slow to import): a DecisionRequest
seen with its observation's ``history`` and its ``legal_actions`` as ``repeated bytes``, each
entry the encoding of one PublicEvent or Action. Protobuf parses it in C, so the entries come
out as bytes to look up, not as message objects to read field by field."""


def _raw_request_class() -> Any:  # type: ignore[explicit-any]  # a message class built at run time from a descriptor
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_RAW_FILE)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_RAW_PACKAGE}.RawRequest"))


_RawRequest: Final = _raw_request_class()
_CARD_OF: Final[dict[str, Card]] = dict(zip(CARD_NAMES, CARDS, strict=True))
_BIT_OF: Final[dict[str, int]] = {name: 1 << card for card, name in enumerate(CARD_NAMES)}
_CACHE_KEPT: Final = 4096
"""Entries kept per cache (the referee's own messages need about 700), so odd messages cannot
grow them without bound."""


def _fast_cards(texts: Sequence[str]) -> CardSet:
    """A card set of cards in exact notation, each once (else KeyError or ValueError)."""
    mask = sum(map(_BIT_OF.__getitem__, texts))
    # n powers of two sum to a number of n set bits only when no two are equal.
    if mask.bit_count() != len(texts):
        raise ValueError("a card listed twice")
    return CardSet.of_mask(mask)


class RequestDecoder:
    """A seat's decision requests read into rules types, equal to :func:`observation_from_pb`
    and :func:`action_from_pb` of the same request, in less time: what the SDK uses.

    The history and the legal actions are read as the bytes of each entry and looked up in
    caches of decoded entries (a hand has few distinct ones); cards are looked up by their exact
    notation; the score sheet is decoded again only when it differs from the last one (once a
    hand). Anything else (another spelling of a card, a malformed field) goes the plain way, so
    the results and the errors are the plain conversion's.
    """

    def __init__(self) -> None:
        self._events: dict[bytes, PublicEvent] = {}
        self._actions: dict[bytes, Action] = {}
        self._opponent_events: dict[tuple[int, int, str], PublicEvent] = {}
        self._score: pb.ScoreSheet | None = None
        """A copy of the last score sheet decoded (a copy: the caller may change its message)."""
        self._scores: tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[int | None, ...]]

    def decode(
        self, request: pb.DecisionRequest, to_move: int, params: RuleParams
    ) -> tuple[Observation, list[Action]]:
        """The request's observation (``to_move`` its seat) and its legal actions.

        Raises:
            ValueError: a malformed field, as :func:`observation_from_pb` or
                :func:`action_from_pb` would raise it.
        """
        raw = _RawRequest.FromString(request.SerializeToString())
        message = request.observation
        try:
            view = self._observation(
                message, raw.observation.history, request.kind, to_move, params
            )
        except (KeyError, ValueError):
            view = observation_from_pb(message, request.kind, to_move, params)
        try:
            legal = self._legal(raw.legal_actions)
        except (KeyError, ValueError):
            legal = [action_from_pb(action) for action in request.legal_actions]
        return view, legal

    def _observation(
        self,
        message: pb.Observation,
        history: Sequence[bytes],
        kind: int,
        to_move: int,
        params: RuleParams,
    ) -> Observation:
        """The fast path (KeyError or ValueError where it does not apply)."""
        if self._score is None or message.score != self._score:
            self._scores = score_from_pb(message.score)
            self._score = pb.ScoreSheet()
            self._score.CopyFrom(message.score)
        events = self._events
        try:
            seen = tuple(map(events.__getitem__, history))
        except KeyError:
            seen = tuple(map(self._new_event, history))
        taken = message.taken_this_turn
        totals, winners = self._scores
        # Positional, in field order, as rules.observe makes them; the tests compare each field.
        return Observation(
            message.seat,
            _PHASES[kind],
            to_move,
            message.dealer,
            _fast_cards(message.hand),
            tuple(map(_CARD_OF.__getitem__, message.discard_pile)),
            message.stock_count,
            tuple(map(_CARD_OF.__getitem__, message.opponent_took)),
            _fast_cards(message.opponent_known),
            message.opponent_hand_size,
            None if taken == "" else _CARD_OF[taken],
            message.turns,
            seen,
            None,
            params,
            message.hand_number,
            totals,
            winners,
        )

    def _new_event(self, data: bytes) -> PublicEvent:
        event = self._events.get(data)
        if event is None:
            event = public_event_from_pb(pb.PublicEvent.FromString(data))
            if len(self._events) >= _CACHE_KEPT:
                self._events.clear()
            self._events[data] = event
        return event

    def _legal(self, entries: Sequence[bytes]) -> list[Action]:
        actions = self._actions
        try:
            return list(map(actions.__getitem__, entries))
        except KeyError:
            pass
        legal = []
        for data in entries:
            action = actions.get(data)
            if action is None:
                action = action_from_pb(pb.Action.FromString(data))
                if len(actions) >= _CACHE_KEPT:
                    actions.clear()
                actions[data] = action
            legal.append(action)
        return legal

    def public_event(self, message: pb.PublicEvent) -> PublicEvent:
        """:func:`public_event_from_pb` of ``message``, from a cache.

        Raises:
            ValueError: an unknown kind, or a card missing where the kind needs one.
        """
        key = (message.seat, message.kind, message.card)
        event = self._opponent_events.get(key)
        if event is None:
            event = public_event_from_pb(message)
            if len(self._opponent_events) >= _CACHE_KEPT:
                self._opponent_events.clear()
            self._opponent_events[key] = event
        return event
