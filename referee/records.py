"""The records of a match log, each defined once: the referee writes them and the replay reads
them.

Each record is a frozen dataclass with :meth:`to_json` (the object of its log line, ``type``
first, in the log's key order), :meth:`to_line` (that object as its JSON line) and a
``from_json`` that reads it back, checking every field (:class:`FieldError` names the field).
A record read from a log keeps its 1-based ``line``; one the referee writes has line 0.

The log format (``referee.matchlog.LOG_FORMAT``) is the writer's; ``from_json`` also reads the
fields older formats wrote differently (no salts in format 1, no ``bot_seeds`` or ``cpus`` in
logs written before them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Final

from protocol.bounded import JsonObject, JsonValue
from referee.bookkeeping import SeatStats
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.rules import (
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    Discard,
    DrawDiscard,
    DrawStock,
    Knock,
    PassUpcard,
    RuleParams,
    TakeUpcard,
    format_cards,
    parse_cards,
)

__all__ = [
    "BODY_READERS",
    "SALT_BYTES",
    "ActionRecord",
    "BodyRecord",
    "Cpus",
    "FaultRecord",
    "FieldError",
    "Fields",
    "HandEndRecord",
    "HandStart",
    "Header",
    "LogRecord",
    "Request",
    "ResultRecord",
    "SeatIdentity",
    "Totals",
    "action_from_dict",
    "action_template",
    "action_to_dict",
    "encode",
    "record_type",
    "request_template",
]

SALT_BYTES: Final = 16
"""The length of the commitments' salts (the match's and each hand's)."""

encode: Final = json.JSONEncoder(separators=(",", ":")).encode
"""``json.dumps`` with the log's separators, without making a new encoder for every record."""

Totals = tuple[tuple[int, ...], tuple[int, ...]]
"""Each seat's points in each game so far."""


class FieldError(ValueError):
    """A record field is missing or of the wrong type."""


class Fields:
    """Typed access to one record's fields; each getter raises :class:`FieldError`."""

    def __init__(self, data: JsonObject) -> None:
        self.data = data

    def _get(self, name: str) -> JsonValue:
        if name not in self.data:
            raise FieldError(f"field {name!r} is missing")
        return self.data[name]

    def whole(self, name: str) -> int:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldError(f"field {name!r} must be a whole number, not {value!r}")
        return value

    def seat(self, name: str) -> int:
        value = self.whole(name)
        if value not in (0, 1):
            raise FieldError(f"field {name!r} must be seat 0 or 1, not {value!r}")
        return value

    def optional_seat(self, name: str) -> int | None:
        return None if self._get(name) is None else self.seat(name)

    def number(self, name: str) -> float:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldError(f"field {name!r} must be a number, not {value!r}")
        return float(value)

    def duration(self, name: str) -> float:
        """A time in milliseconds: a finite number, never negative (no decision takes less than
        no time; ``NaN`` or infinity, which JSON readers accept, would pass every comparison)."""
        value = self.number(name)
        if not math.isfinite(value) or value < 0:
            raise FieldError(f"field {name!r} must be a time of 0 ms or more, not {value!r}")
        return value

    def text(self, name: str) -> str:
        value = self._get(name)
        if not isinstance(value, str):
            raise FieldError(f"field {name!r} must be text, not {value!r}")
        return value

    def optional_str(self, name: str) -> str | None:
        return None if self._get(name) is None else self.text(name)

    def flag(self, name: str) -> bool:
        value = self._get(name)
        if not isinstance(value, bool):
            raise FieldError(f"field {name!r} must be true or false, not {value!r}")
        return value

    def obj(self, name: str) -> JsonObject:
        value = self._get(name)
        if not isinstance(value, dict):
            raise FieldError(f"field {name!r} must be an object")
        return value

    def items(self, name: str) -> list[JsonValue]:
        value = self._get(name)
        if not isinstance(value, list):
            raise FieldError(f"field {name!r} must be a list")
        return value

    def ints(self, name: str) -> tuple[int, ...]:
        values = self.items(name)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise FieldError(f"field {name!r} must be a list of whole numbers")
        return tuple(values)

    def totals(self, name: str) -> Totals:
        values = self.items(name)
        if len(values) != 2:
            raise FieldError(f"field {name!r} must hold both seats' totals")
        seats = tuple(Fields({name: value}).ints(name) for value in values)
        return (seats[0], seats[1])

    def salt(self) -> bytes | None:
        """A commitment salt (hex; from format 2), or ``None`` where the record has none (format
        1)."""
        if self.data.get("salt") is None:
            return None
        text = self.text("salt")
        try:
            salt = bytes.fromhex(text)
        except ValueError:
            raise FieldError("field 'salt' must be hexadecimal") from None
        if len(salt) != SALT_BYTES:
            raise FieldError(f"field 'salt' must hold {SALT_BYTES} bytes, not {len(salt)}")
        return salt


# --- actions -----------------------------------------------------------------------------------


def action_to_dict(action: Action, *, hide_card: bool = False) -> JsonObject:
    """An action as a log record field.

    >>> action_to_dict(Knock(parse_cards("Kd").__iter__().__next__()))
    {'kind': 'knock', 'card': 'Kd'}
    """
    if isinstance(action, TakeUpcard):
        return {"kind": "take_upcard"}
    if isinstance(action, PassUpcard):
        return {"kind": "pass_upcard"}
    if isinstance(action, DrawStock):
        return {"kind": "draw_stock"}
    if isinstance(action, DrawDiscard):
        return {"kind": "draw_discard"}
    if isinstance(action, Discard):
        return {"kind": "discard"} if hide_card else {"kind": "discard", "card": str(action.card)}
    record: JsonObject = {"kind": "knock", "card": str(action.card)}
    if action.melds is not None:
        record["melds"] = [format_cards(meld) for meld in action.melds]
    return record


_SIMPLE_ACTIONS: Final[dict[str, Action]] = {
    "take_upcard": TAKE_UPCARD,
    "pass_upcard": PASS_UPCARD,
    "draw_stock": DRAW_STOCK,
    "draw_discard": DRAW_DISCARD,
}


def action_from_dict(record: JsonObject) -> Action:
    """Read an action written by :func:`action_to_dict`.

    Raises:
        ValueError: an unknown kind or a bad card.
    """
    kind = record.get("kind")
    if isinstance(kind, str) and kind in _SIMPLE_ACTIONS:
        return _SIMPLE_ACTIONS[kind]
    card = Card.parse(str(record.get("card", "")))
    if kind == "discard":
        return Discard(card)
    if kind == "knock":
        melds = record.get("melds")
        if melds is None:
            return Knock(card)
        return Knock(card, tuple(parse_cards(text) for text in melds))
    raise ValueError(f"unknown action kind {kind!r}")


_ACTION_TEXTS: dict[Action, str] = {}


def _action_text(action: Action) -> str:
    """An action's JSON, cached for all but knocks (a few dozen distinct ones, written on the
    referee's busiest path)."""
    if isinstance(action, Knock):
        return encode(action_to_dict(action))
    text = _ACTION_TEXTS.get(action)
    if text is None:
        text = _ACTION_TEXTS[action] = encode(action_to_dict(action))
    return text


def _plain_int(value: object) -> bool:
    return type(value) is int


def _plain_float(value: object) -> bool:
    return type(value) is float and math.isfinite(value)


# --- the records --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatIdentity:
    """Who played a seat, as its hello said, with the code hash when known."""

    name: str
    version: str
    code_hash: str

    def to_json(self) -> JsonObject:
        """The header's form of a seat."""
        return {"name": self.name, "version": self.version, "code_hash": self.code_hash}

    @classmethod
    def from_json(cls, value: JsonValue) -> SeatIdentity | None:
        """Read a seat of the header (``null``: a seat that never said hello).

        Raises:
            FieldError: not a seat.
        """
        if value is None:
            return None
        if not isinstance(value, dict):
            raise FieldError("each seat must be an object or null")
        fields = Fields(value)
        return cls(fields.text("name"), fields.text("version"), fields.text("code_hash"))


Cpus = tuple[tuple[int, ...], tuple[int, ...]]
"""The CPU placement: the referee's CPUs and the bots'."""


@dataclass(frozen=True, slots=True)
class Header:
    """The first record: the match, its rules, the seed commitment and the seats."""

    TYPE: ClassVar[str] = "header"

    line: int
    format: int
    match_id: str
    started_at: str
    params: RuleParams
    seed_commitment: str
    first_dealer: int
    time_control: TimeControl
    fault_policy: FaultPolicy
    sandbox: tuple[str, ...]
    seats: tuple[SeatIdentity | None, SeatIdentity | None]
    bot_seeds: tuple[int, int] | None = None
    """Each seat's own seed, as its Welcome gave it; ``None``: the log has none (written before
    bots had seeds, or the match gave none)."""
    cpus: Cpus | None = None
    """The CPU placement in force (``None``: none, or a log that does not say)."""

    def to_json(self) -> JsonObject:
        """The record's object (``bot_seeds`` left out when there are none, as in logs written
        before bots had seeds)."""
        data: JsonObject = {
            "type": self.TYPE,
            "format": self.format,
            "match_id": self.match_id,
            "started_at": self.started_at,
            "rules": self.params.to_dict(),
            "seed_commitment": self.seed_commitment,
            "first_dealer": self.first_dealer,
            "time_control": self.time_control.to_dict(),
            "fault_policy": self.fault_policy.to_dict(),
            "sandbox": list(self.sandbox),
            "cpus": None
            if self.cpus is None
            else {"referee": list(self.cpus[0]), "bots": list(self.cpus[1])},
            "seats": [None if seat is None else seat.to_json() for seat in self.seats],
        }
        if self.bot_seeds is not None:
            data["bot_seeds"] = list(self.bot_seeds)
        return data

    def to_line(self) -> str:
        """The record's log line (without its newline)."""
        return encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> Header:
        """Read a header.

        Raises:
            ValueError, TypeError: a field is missing or not of its type (a :class:`FieldError`
                names it; the rules, time control and fault policy raise their own).
        """
        fields = Fields(data)
        seats = fields.items("seats")
        if len(seats) != 2:
            raise FieldError("field 'seats' must list two seats")
        return cls(
            line=line,
            format=fields.whole("format"),
            match_id=fields.text("match_id"),
            started_at=fields.text("started_at"),
            params=RuleParams.from_dict(fields.obj("rules")),
            seed_commitment=fields.text("seed_commitment"),
            first_dealer=fields.seat("first_dealer"),
            time_control=TimeControl(**fields.obj("time_control")),
            fault_policy=FaultPolicy(**fields.obj("fault_policy")),
            sandbox=tuple(str(layer) for layer in fields.items("sandbox")),
            seats=(SeatIdentity.from_json(seats[0]), SeatIdentity.from_json(seats[1])),
            bot_seeds=_bot_seeds(fields) if "bot_seeds" in data else None,
            cpus=_cpus(data.get("cpus")),
        )


def _bot_seeds(fields: Fields) -> tuple[int, int]:
    """The header's optional ``bot_seeds``: two whole numbers that fit a ``uint64``."""
    seeds = fields.ints("bot_seeds")
    if len(seeds) != 2 or not all(0 <= seed < 1 << 64 for seed in seeds):
        raise FieldError("field 'bot_seeds' must be two seeds from 0 to 2**64 - 1")
    return seeds[0], seeds[1]


def _cpus(value: JsonValue) -> Cpus | None:
    """The header's ``cpus``, when it is the placement the referee writes; anything else (it
    is for the reader of the log, not checked by the verifier) reads as none."""
    if not isinstance(value, dict) or set(value) != {"referee", "bots"}:
        return None
    try:
        fields = Fields(value)
        return fields.ints("referee"), fields.ints("bots")
    except FieldError:
        return None


@dataclass(frozen=True, slots=True)
class HandStart:
    """A hand is dealt: its number, dealer and deck commitment."""

    TYPE: ClassVar[str] = "hand_start"

    line: int
    hand: int
    dealer: int
    commitment: str

    def to_json(self) -> JsonObject:
        """The record's object."""
        return {
            "type": self.TYPE,
            "hand": self.hand,
            "dealer": self.dealer,
            "commitment": self.commitment,
        }

    def to_line(self) -> str:
        """The record's log line (without its newline)."""
        return encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> HandStart:
        """Read the record.

        Raises:
            FieldError: a field is missing or not of its type.
        """
        fields = Fields(data)
        return cls(line, fields.whole("hand"), fields.seat("dealer"), fields.text("commitment"))


_PHASE_NAMES: Final = frozenset({"upcard", "draw", "discard", "over"})


@dataclass(frozen=True, slots=True)
class Request:
    """The referee asked a seat for a decision."""

    TYPE: ClassVar[str] = "request"

    line: int
    id: int
    seat: int
    phase: str
    legal: int
    limit_ms: float

    def to_json(self) -> JsonObject:
        """The record's object."""
        return {
            "type": self.TYPE,
            "id": self.id,
            "seat": self.seat,
            "phase": self.phase,
            "legal": self.legal,
            "limit_ms": self.limit_ms,
        }

    def to_line(self) -> str:
        """The record's log line: one of the two records of every decision, written from a
        template (:func:`request_template`) on the referee's busiest path."""
        return request_template(self) or encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> Request:
        """Read the record.

        Raises:
            FieldError: a field is missing or not of its type.
        """
        fields = Fields(data)
        return cls(
            line,
            fields.whole("id"),
            fields.seat("seat"),
            fields.text("phase"),
            fields.whole("legal"),
            fields.duration("limit_ms"),
        )


_CHOOSERS: Final = frozenset({"bot", "referee", "forced"})


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action played for a seat, who chose it (bot, referee, forced) and its time."""

    TYPE: ClassVar[str] = "action"
    BOT: ClassVar[str] = "bot"
    """``by``: the bot chose it."""
    SUBSTITUTE: ClassVar[str] = "referee"
    """``by``: the referee's safe action, after the seat's fault."""
    FORCED: ClassVar[str] = "forced"
    """``by``: the only legal action (no request was sent)."""

    line: int
    seat: int
    request: int
    action: Action
    by: str
    ms: float

    def to_json(self) -> JsonObject:
        """The record's object."""
        return {
            "type": self.TYPE,
            "seat": self.seat,
            "request": self.request,
            "action": action_to_dict(self.action),
            "by": self.by,
            "ms": self.ms,
        }

    def to_line(self) -> str:
        """The record's log line, from a template (:func:`action_template`), as
        :meth:`Request.to_line`."""
        return action_template(self) or encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> ActionRecord:
        """Read the record.

        Raises:
            FieldError: a field is missing or not of its type, or not an action.
        """
        fields = Fields(data)
        try:
            action = action_from_dict(fields.obj("action"))
        except ValueError as error:
            raise FieldError(f"field 'action' is not an action: {error}") from None
        return cls(
            line,
            fields.seat("seat"),
            fields.whole("request"),
            action,
            fields.text("by"),
            fields.duration("ms"),
        )


def request_template(record: Request) -> str | None:
    """A request's line from a template, about four times faster than the JSON encoder and
    the same text (a test checks); ``None`` for a value the template does not expect (which
    then goes through the encoder)."""
    ident, seat, phase, legal, limit = (
        record.id,
        record.seat,
        record.phase,
        record.legal,
        record.limit_ms,
    )
    if not (
        _plain_int(ident)
        and _plain_int(seat)
        and _plain_int(legal)
        and _plain_float(limit)
        and type(phase) is str
        and phase in _PHASE_NAMES
    ):
        return None
    return (
        f'{{"type":"request","id":{ident},"seat":{seat},"phase":"{phase}",'
        f'"legal":{legal},"limit_ms":{limit!r}}}'
    )


def action_template(record: ActionRecord) -> str | None:
    """An action's line from a template, as :func:`request_template`."""
    seat, request, chooser, elapsed = record.seat, record.request, record.by, record.ms
    if not (
        _plain_int(seat)
        and _plain_int(request)
        and type(chooser) is str
        and chooser in _CHOOSERS
        and _plain_float(elapsed)
    ):
        return None
    return (
        f'{{"type":"action","seat":{seat},"request":{request},'
        f'"action":{_action_text(record.action)},"by":"{chooser}","ms":{elapsed!r}}}'
    )


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """A fault recorded against a seat, with its evidence and what followed."""

    TYPE: ClassVar[str] = "fault"

    line: int
    seat: int
    kind: str
    detail: str
    request_id: int
    elapsed_ms: float
    evidence: JsonObject
    """Free-form diagnostics (see :attr:`referee.faults.Fault.evidence`)."""
    strikes: int
    forfeited: bool
    stray: bool = False
    """A fault beside the decision (a duplicate of an earlier answer): the decision went on."""

    @classmethod
    def of(cls, fault: Fault, strikes: int, forfeited: bool) -> FaultRecord:
        """The record of a fault just counted: the seat's strikes now, and whether it
        forfeits."""
        return cls(
            0,
            fault.seat,
            fault.kind.value,
            fault.detail,
            fault.request_id,
            round(fault.elapsed_ms, 3),
            fault.evidence,
            strikes,
            forfeited,
            fault.stray,
        )

    def to_json(self) -> JsonObject:
        """The record's object (``stray`` only when set, so older logs read alike)."""
        data: JsonObject = {
            "type": self.TYPE,
            "seat": self.seat,
            "kind": self.kind,
            "detail": self.detail,
            "request_id": self.request_id,
            "elapsed_ms": self.elapsed_ms,
            "evidence": self.evidence,
        }
        if self.stray:
            data["stray"] = True
        data["strikes"] = self.strikes
        data["forfeited"] = self.forfeited
        return data

    def to_line(self) -> str:
        """The record's log line (without its newline)."""
        return encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> FaultRecord:
        """Read the record.

        Raises:
            FieldError: a field is missing or not of its type.
        """
        fields = Fields(data)
        return cls(
            line,
            fields.seat("seat"),
            fields.text("kind"),
            fields.text("detail"),
            fields.whole("request_id"),
            fields.duration("elapsed_ms"),
            fields.obj("evidence"),
            fields.whole("strikes"),
            fields.flag("forfeited"),
            "stray" in data and fields.flag("stray"),
        )


@dataclass(frozen=True, slots=True)
class HandEndRecord:
    """How a hand ended: the showdown, the score and the deck revealed."""

    TYPE: ClassVar[str] = "hand_end"

    line: int
    hand: int
    end: str
    winner: int | None
    points: int
    knocker: int | None
    games: tuple[int, ...]
    knocker_layout: str | None
    defender_layout: str | None
    totals: Totals
    turns: int
    deck: tuple[Card, ...]
    salt: bytes | None = None
    """The salt of this hand's deck commitment (from format 2; ``None`` in format 1, unsalted)."""

    def to_json(self) -> JsonObject:
        """The record's object."""
        return {
            "type": self.TYPE,
            "hand": self.hand,
            "end": self.end,
            "winner": self.winner,
            "points": self.points,
            "knocker": self.knocker,
            "games": list(self.games),
            "knocker_layout": self.knocker_layout,
            "defender_layout": self.defender_layout,
            "totals": [list(seat) for seat in self.totals],
            "turns": self.turns,
            "deck": [str(card) for card in self.deck],
            "salt": None if self.salt is None else self.salt.hex(),
        }

    def to_line(self) -> str:
        """The record's log line (without its newline)."""
        return encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> HandEndRecord:
        """Read the record.

        Raises:
            FieldError: a field is missing or not of its type, or the deck is not one.
        """
        fields = Fields(data)
        return cls(
            line,
            fields.whole("hand"),
            fields.text("end"),
            fields.optional_seat("winner"),
            fields.whole("points"),
            fields.optional_seat("knocker"),
            fields.ints("games"),
            fields.optional_str("knocker_layout"),
            fields.optional_str("defender_layout"),
            fields.totals("totals"),
            fields.whole("turns"),
            _deck(fields),
            fields.salt(),
        )


def _deck(fields: Fields) -> tuple[Card, ...]:
    cards = fields.items("deck")
    try:
        deck = tuple(Card.parse(str(card)) for card in cards)
    except ValueError as error:
        raise FieldError(f"field 'deck' holds a bad card: {error}") from None
    if sorted(deck) != list(range(52)):
        raise FieldError("field 'deck' must hold each of the 52 cards exactly once")
    return deck


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """The last record: how the match ended, its statistics and the seed revealed."""

    TYPE: ClassVar[str] = "result"

    line: int
    match_id: str
    winner: int | None
    end: str
    forfeited: tuple[int, ...]
    totals: Totals
    game_winners: tuple[int | None, ...]
    hands: int
    faults: tuple[Fault, ...]
    stats: tuple[SeatStats, ...]
    """Each seat's statistics (two, in a log that agrees)."""
    seed: int
    salt: bytes | None = None
    """The match salt of the commitments (from format 2; ``None`` in format 1, unsalted)."""
    unreadable: str | None = None
    """Why its ``faults`` or ``stats`` could not be read (then both are empty): the verifier
    says so when it reaches this record, after checking everything before it (the seed, which
    a forfeited match's last deck needs, is read apart)."""

    def to_json(self) -> JsonObject:
        """The record's object."""
        return {
            "type": self.TYPE,
            "match_id": self.match_id,
            "winner": self.winner,
            "end": self.end,
            "forfeited": list(self.forfeited),
            "totals": [list(seat) for seat in self.totals],
            "game_winners": list(self.game_winners),
            "hands": self.hands,
            "faults": [fault.to_dict() for fault in self.faults],
            "stats": [stats.to_dict() for stats in self.stats],
            "seed": self.seed,
            "salt": None if self.salt is None else self.salt.hex(),
        }

    def to_line(self) -> str:
        """The record's log line (without its newline)."""
        return encode(self.to_json())

    @classmethod
    def from_json(cls, data: JsonObject, line: int = 0) -> ResultRecord:
        """Read the record; faults or statistics it cannot read are said in
        :attr:`unreadable`, not raised.

        Raises:
            FieldError: any other field is missing or not of its type.
        """
        fields = Fields(data)
        game_winners = fields.items("game_winners")
        if not all(winner in (0, 1, None) for winner in game_winners):
            raise FieldError("field 'game_winners' must hold seats 0, 1 or null")
        faults = fields.items("faults")
        stats = fields.items("stats")
        if not all(isinstance(item, dict) for item in [*faults, *stats]):
            raise FieldError("fields 'faults' and 'stats' must hold objects")
        seed = fields.whole("seed")
        if seed < 0:
            raise FieldError(f"field 'seed' must be a non-negative number, not {seed}")
        unreadable = None
        try:
            read_faults = tuple(_result_fault(Fields(item)) for item in faults)
            read_stats = tuple(_stats(Fields(item)) for item in stats)
        except FieldError as error:
            read_faults, read_stats, unreadable = (), (), str(error)
        return cls(
            line,
            fields.text("match_id"),
            fields.optional_seat("winner"),
            fields.text("end"),
            fields.ints("forfeited"),
            fields.totals("totals"),
            tuple(game_winners),
            fields.whole("hands"),
            read_faults,
            read_stats,
            seed,
            fields.salt(),
            unreadable,
        )


_FAULT_FIELDS: Final = frozenset(
    {"seat", "kind", "detail", "request_id", "elapsed_ms", "evidence", "stray"}
)


def _result_fault(fields: Fields) -> Fault:
    """One of the result's faults (``Fault.to_dict``'s form)."""
    unknown = sorted(set(fields.data) - _FAULT_FIELDS)
    if unknown:
        raise FieldError(f"a fault in field 'faults' has unknown fields {unknown}")
    if "stray" in fields.data and fields.data["stray"] is not True:
        raise FieldError(
            "a fault in field 'faults' has 'stray' other than true (it is written only when true)"
        )
    name = fields.text("kind")
    try:
        kind = FaultKind(name)
    except ValueError:
        raise FieldError(f"unknown fault kind {name!r} in field 'faults'") from None
    return Fault(
        fields.seat("seat"),
        kind,
        fields.text("detail"),
        fields.whole("request_id"),
        fields.duration("elapsed_ms"),
        fields.obj("evidence"),
        "stray" in fields.data and fields.flag("stray"),
    )


def _stats(fields: Fields) -> SeatStats:
    """One seat's statistics (``SeatStats.to_dict``'s form)."""
    faults = fields.obj("faults")
    counts = Fields(faults)
    return SeatStats(
        fields.whole("decisions"),
        fields.duration("mean_ms"),
        fields.duration("max_ms"),
        fields.whole("strikes"),
        tuple((str(kind), counts.whole(kind)) for kind in faults),
    )


BodyRecord = HandStart | Request | ActionRecord | FaultRecord | HandEndRecord | ResultRecord
"""A record after the header."""
LogRecord = Header | BodyRecord
"""Any record of a match log: what ``referee.matchlog.LogWriter.write`` takes and a log's
watcher is shown."""

BODY_READERS: Final[dict[str, Callable[[JsonObject, int], BodyRecord]]] = {
    kind.TYPE: kind.from_json
    for kind in (HandStart, Request, ActionRecord, FaultRecord, HandEndRecord, ResultRecord)
}
"""Each body record's reader, by its ``type``."""


def record_type(record: LogRecord) -> str:
    """The log name of a record's type.

    >>> record_type(HandStart(2, 0, 1, "ab"))
    'hand_start'
    """
    return record.TYPE
