"""DecisionRequests in protobuf's wire encoding, written from cached pieces.

The referee writes each request straight into the encoding rather than building the message
field by field and serializing it: the message path is the slower one, and it is the path a bot's
answer waits for. The bytes equal ``RefereeMessage.SerializeToString()`` of the plain conversion
in :mod:`protocol.convert` (a property test checks): proto3 leaves out fields at their default,
and fields go out in field-number order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import DECISION_KINDS, action_to_pb, public_event_to_pb, score_to_pb
from referee.rules import (
    CARD_NAMES,
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCKS,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    Observation,
    PublicEvent,
)

# --- legal actions --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _legal_action_bytes(action: Action) -> bytes:
    return pb.DecisionRequest(legal_actions=[action_to_pb(action)]).SerializeToString()


_SHARED: Final[tuple[Action, ...]] = (
    TAKE_UPCARD,
    PASS_UPCARD,
    DRAW_STOCK,
    DRAW_DISCARD,
    *DISCARDS,
    *KNOCKS,
)
_SHARED_ACTIONS: Final[dict[int, tuple[Action, bytes]]] = {
    id(action): (action, _legal_action_bytes(action)) for action in _SHARED
}
"""The bytes of the shared action objects the rules list as legal, found by identity: hashing an
action for the cache costs more than the lookup (the entry keeps the object, so its id stays its
own)."""


def legal_actions_bytes(actions: Iterable[Action]) -> bytes:
    """The ``legal_actions`` field of a DecisionRequest as wire bytes (part of what
    :class:`RequestEncoder` writes). Each action's bytes are made once and cached.
    """
    parts = []
    for action in actions:
        shared = _SHARED_ACTIONS.get(id(action))
        parts.append(
            shared[1] if shared is not None and shared[0] is action else _legal_action_bytes(action)
        )
    return b"".join(parts)


# --- varints and fields ---------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_ONE_BYTE: Final = tuple(bytes((value,)) for value in range(128))


def _uint(value: int) -> bytes:
    if value < 128:
        return _ONE_BYTE[value]
    if value < 16384:
        return bytes((value & 0x7F | 0x80, value >> 7))
    return _varint(value)


def _tag(field: int, wire_type: int) -> bytes:
    return _uint(field << 3 | wire_type)


def _length_delimited(tag: bytes, payload: bytes) -> bytes:
    return tag + _uint(len(payload)) + payload


def _card_entries(field: int) -> tuple[bytes, ...]:
    """Each card as one entry of a repeated string field."""
    return tuple(_length_delimited(_tag(field, 2), name.encode()) for name in CARD_NAMES)


_LANES_KEPT: Final = 1024
"""Suit lanes kept per suit and field (of 8,192), so a long-lived referee's caches stay small."""


class _CardSetField:
    """A card set as entries of a repeated string field, in card order, cached by suit lane."""

    def __init__(self, field: int) -> None:
        self.entries = _card_entries(field)
        self.lanes: tuple[dict[int, bytes], ...] = ({}, {}, {}, {})

    def __call__(self, mask: int) -> bytes:
        parts = []
        for suit, cache in enumerate(self.lanes):
            lane = mask >> suit * 13 & 0x1FFF
            if lane:
                piece = cache.get(lane)
                if piece is None:
                    if len(cache) >= _LANES_KEPT:
                        cache.clear()
                    first = suit * 13
                    piece = b"".join(
                        self.entries[first + rank] for rank in range(13) if lane >> rank & 1
                    )
                    cache[lane] = piece
                parts.append(piece)
        return b"".join(parts)


# --- observations ---------------------------------------------------------------------------------

_OBSERVATION_HAND: Final = _CardSetField(4)
_OBSERVATION_PILE: Final = _card_entries(5)
_OBSERVATION_TOOK: Final = _card_entries(7)
_OBSERVATION_KNOWN: Final = _CardSetField(8)
_OBSERVATION_TAKEN: Final = _card_entries(10)
_EventKey = tuple[int, type, Card | None]
_HISTORY_ENTRIES: dict[_EventKey, bytes] = {}
_CARRIED_EVENTS: dict[_EventKey, bytes] = {}


def _history_entry(event: PublicEvent) -> bytes:
    """An event as one entry of ``Observation.history`` (made once per seat, kind and card)."""
    key = (event.seat, type(event.action), event.card)
    data = _HISTORY_ENTRIES.get(key)
    if data is None:
        data = _length_delimited(b"\x62", public_event_to_pb(event).SerializeToString())
        _HISTORY_ENTRIES[key] = data
    return data


def _carried_event(event: PublicEvent) -> bytes:
    """An opponent action as one entry of ``DecisionRequest.events`` (an ``Event`` holding it)."""
    key = (event.seat, type(event.action), event.card)
    data = _CARRIED_EVENTS.get(key)
    if data is None:
        body = public_event_to_pb(event).SerializeToString()
        data = _length_delimited(b"\x3a", _length_delimited(b"\x0a", body))
        _CARRIED_EVENTS[key] = data
    return data


@functools.lru_cache(maxsize=64)
def _score_entry(
    totals: tuple[tuple[int, ...], tuple[int, ...]], game_winners: tuple[int | None, ...]
) -> bytes:
    """The observation's score sheet field (it changes once a hand)."""
    return _length_delimited(b"\x6a", score_to_pb(totals, game_winners).SerializeToString())


# --- requests -------------------------------------------------------------------------------------


class RequestEncoder:
    """A seat's DecisionRequests as serialized ``RefereeMessage`` bytes, across a series.

    A hand's history only grows, so the encoder keeps the bytes of the history it has already
    written and appends the new events: a request costs the same early and late in a hand.
    """

    def __init__(self) -> None:
        self._hand = -1
        self._seat = -1
        self._count = 0
        self._last: PublicEvent | None = None
        self._history = bytearray()
        self._opening = b""

    def encode(
        self,
        request_id: int,
        view: Observation,
        legal: Iterable[Action],
        *,
        time_left_ms: int,
        bank_left_ms: int,
        events: Sequence[PublicEvent] = (),
    ) -> bytes:
        """A ``RefereeMessage`` holding the request, serialized; ``events`` are opponent
        actions carried in it (``DecisionRequest.events``)."""
        observation = self._observation(view)
        parts = [
            b"\x08" + _uint(request_id) if request_id else b"",
            b"\x10" + _uint(DECISION_KINDS[view.phase]),
            b"\x1a" + _uint(len(observation)),
            observation,
            legal_actions_bytes(legal),
        ]
        if time_left_ms:
            parts.append(b"\x28" + _uint(time_left_ms))
        if bank_left_ms:
            parts.append(b"\x30" + _uint(bank_left_ms))
        parts.extend(map(_carried_event, events))
        return _length_delimited(b"\x12", b"".join(parts))

    def _observation(self, view: Observation) -> bytes:
        history = view.history
        fresh = (
            view.hand_number != self._hand or view.seat != self._seat or len(history) < self._count
        )
        if not fresh and self._count and history[self._count - 1] is not self._last:
            fresh = True
        if fresh:
            self._hand, self._seat, self._count, self._last = view.hand_number, view.seat, 0, None
            self._history.clear()
            # Seat, hand number and dealer stay the same for the whole hand.
            self._opening = b"".join(
                [
                    b"\x08" + _uint(view.seat) if view.seat else b"",
                    b"\x10" + _uint(view.hand_number) if view.hand_number else b"",
                    b"\x18" + _uint(view.dealer) if view.dealer else b"",
                ]
            )
        if len(history) > self._count:
            self._history += b"".join(map(_history_entry, history[self._count :]))
            self._count = len(history)
            self._last = history[-1]
        known = view.opponent_known.mask
        parts: list[bytes | bytearray] = [
            self._opening,
            _OBSERVATION_HAND(view.hand.mask),
            b"".join(map(_OBSERVATION_PILE.__getitem__, view.discard_pile)),
            b"\x30" + _uint(view.stock_count) if view.stock_count else b"",
            b"".join(map(_OBSERVATION_TOOK.__getitem__, view.opponent_took)),
            _OBSERVATION_KNOWN(known) if known else b"",
            b"\x48" + _uint(view.opponent_hand_size) if view.opponent_hand_size else b"",
            b"" if view.taken_this_turn is None else _OBSERVATION_TAKEN[view.taken_this_turn],
            b"\x58" + _uint(view.turns) if view.turns else b"",
            self._history,
            _score_entry(view.totals, view.game_winners),
        ]
        return b"".join(parts)
