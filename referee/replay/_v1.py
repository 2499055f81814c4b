"""The reader of log formats 1, 2 and 3 (``referee.matchlog``, ``LOG_FORMAT``).

Format 2 is format 1 with salted commitments: each ``hand_end`` and the ``result`` carry a
``salt`` (hex); the walker checks the commitments by the header's format.

Every field is checked for presence and type (a time in milliseconds: finite, never negative); a
record that fails names its line and field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.bookkeeping import SeatStats
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.matchlog import SALT_BYTES, action_from_dict, record_line
from referee.replay._read import RawRecord, parse_line
from referee.replay._records import (
    ActionRecord,
    BadRecord,
    BodyRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    Header,
    LogReadError,
    MatchLogData,
    Request,
    ResultRecord,
    SeatIdentity,
    Totals,
)
from referee.rules import Card, RuleParams


class FieldError(ValueError):
    """A record field is missing or of the wrong type."""


class Fields:
    """Typed access to one record's fields; each getter raises :class:`FieldError`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def _get(self, name: str) -> Any:
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

    def obj(self, name: str) -> dict[str, Any]:
        value = self._get(name)
        if not isinstance(value, dict):
            raise FieldError(f"field {name!r} must be an object")
        return value

    def items(self, name: str) -> list[Any]:
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


def header_record(raw: RawRecord, path: Path | None) -> Header:
    assert raw.data is not None
    fields = Fields(raw.data)
    try:
        seats = fields.items("seats")
        if len(seats) != 2:
            raise FieldError("field 'seats' must list two seats")
        return Header(
            line=raw.line,
            format=fields.whole("format"),
            match_id=fields.text("match_id"),
            started_at=fields.text("started_at"),
            params=RuleParams.from_dict(fields.obj("rules")),
            seed_commitment=fields.text("seed_commitment"),
            first_dealer=fields.seat("first_dealer"),
            time_control=TimeControl(**fields.obj("time_control")),
            fault_policy=FaultPolicy(**fields.obj("fault_policy")),
            sandbox=tuple(str(layer) for layer in fields.items("sandbox")),
            seats=(_seat(seats[0]), _seat(seats[1])),
            bot_seeds=_bot_seeds(fields) if "bot_seeds" in fields.data else None,
        )
    except (ValueError, TypeError) as error:
        raise LogReadError(BadRecord(raw.line, "header", str(error)), path) from None


def _bot_seeds(fields: Fields) -> tuple[int, int]:
    """The header's optional ``bot_seeds``: two whole numbers that fit a ``uint64``."""
    seeds = fields.ints("bot_seeds")
    if len(seeds) != 2 or not all(0 <= seed < 1 << 64 for seed in seeds):
        raise FieldError("field 'bot_seeds' must be two seeds from 0 to 2**64 - 1")
    return seeds[0], seeds[1]


def _seat(value: Any) -> SeatIdentity | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FieldError("each seat must be an object or null")
    fields = Fields(value)
    return SeatIdentity(fields.text("name"), fields.text("version"), fields.text("code_hash"))


def _hand_start(line: int, fields: Fields) -> HandStart:
    return HandStart(line, fields.whole("hand"), fields.seat("dealer"), fields.text("commitment"))


def _request(line: int, fields: Fields) -> Request:
    return Request(
        line,
        fields.whole("id"),
        fields.seat("seat"),
        fields.text("phase"),
        fields.whole("legal"),
        fields.duration("limit_ms"),
    )


def _action(line: int, fields: Fields) -> ActionRecord:
    try:
        action = action_from_dict(fields.obj("action"))
    except ValueError as error:
        raise FieldError(f"field 'action' is not an action: {error}") from None
    return ActionRecord(
        line,
        fields.seat("seat"),
        fields.whole("request"),
        action,
        fields.text("by"),
        fields.duration("ms"),
    )


def _fault(line: int, fields: Fields) -> FaultRecord:
    return FaultRecord(
        line,
        fields.seat("seat"),
        fields.text("kind"),
        fields.text("detail"),
        fields.whole("request_id"),
        fields.duration("elapsed_ms"),
        fields.obj("evidence"),
        fields.whole("strikes"),
        fields.flag("forfeited"),
        "stray" in fields.data and fields.flag("stray"),
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


def _salt(fields: Fields) -> bytes | None:
    """A commitment salt (hex; format 2), or ``None`` where the record has none (format 1)."""
    if fields.data.get("salt") is None:
        return None
    text = fields.text("salt")
    try:
        salt = bytes.fromhex(text)
    except ValueError:
        raise FieldError("field 'salt' must be hexadecimal") from None
    if len(salt) != SALT_BYTES:
        raise FieldError(f"field 'salt' must hold {SALT_BYTES} bytes, not {len(salt)}")
    return salt


def _hand_end(line: int, fields: Fields) -> HandEndRecord:
    return HandEndRecord(
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
        _salt(fields),
    )


def _result(line: int, fields: Fields) -> ResultRecord:
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
    return ResultRecord(
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
        _salt(fields),
        unreadable,
    )


_FAULT_FIELDS = frozenset(
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


_BODY: dict[str, Callable[[int, Fields], BodyRecord]] = {
    "hand_start": _hand_start,
    "request": _request,
    "action": _action,
    "fault": _fault,
    "hand_end": _hand_end,
    "result": _result,
}


def body_record(raw: RawRecord) -> BodyRecord | BadRecord:
    """One record after the header, or why it cannot be read."""
    if raw.data is None:
        return raw.problem
    kind = raw.data["type"]
    build = _BODY.get(kind)
    if build is None:
        return BadRecord(raw.line, kind, f"unknown record type {kind!r}")
    try:
        return build(raw.line, Fields(raw.data))
    except FieldError as error:
        return BadRecord(raw.line, kind, str(error))


def read_record(
    record_type: str, fields: dict[str, Any], line: int = 0
) -> Header | BodyRecord | BadRecord:
    """A record as the match hands it to a watcher (its type and fields), read as the log's line
    would be: written by the log's one writer, then read by this reader. What a live view of a
    match takes in, typed.

    >>> read_record("request", {"id": 1, "seat": 0, "phase": "draw", "legal": 3, "limit_ms": 5.0})
    Request(line=0, id=1, seat=0, phase='draw', legal=3, limit_ms=5.0)
    >>> read_record("request", {"id": "one"}).reason
    "field 'id' must be a whole number, not 'one'"
    """
    raw = parse_line(line, record_line(record_type, fields), cut=False)
    if raw.data is None:
        return raw.problem
    if record_type != "header":
        return body_record(raw)
    try:
        return header_record(raw, None)
    except LogReadError as error:
        return error.bad


def read(path: Path | None, raws: Sequence[RawRecord]) -> MatchLogData:
    """Read records of formats 1 to 3; stop at the first that cannot be read.

    Raises:
        LogReadError: the header is not a readable header.
    """
    header = header_record(raws[0], path)
    records: list[BodyRecord] = []
    for raw in raws[1:]:
        record = body_record(raw)
        if isinstance(record, BadRecord):
            return MatchLogData(path, header, tuple(records), record, raw.cut)
        records.append(record)
    return MatchLogData(path, header, tuple(records))
