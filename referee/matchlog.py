"""Match logs: one JSON object per line, written and flushed as the series goes.

A log never holds a secret a bot could use while the series is on: the header commits to the
seed and each hand record to its deck, both salted with secrets of the match (so a guess of the
seed cannot be tested against them), the deck order and its hand's salt are revealed when its
hand has ended, and the seed and the match salt in the final record. A stock draw is logged
without its card (the deck reveal gives it). So a log read mid-series tells nothing a seat
could not see, and a finished log lets anyone re-deal and check every hand.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, NamedTuple, Protocol

from referee.rules import (
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    Dealing,
    Discard,
    DrawDiscard,
    DrawStock,
    Knock,
    PassUpcard,
    TakeUpcard,
    format_cards,
    parse_cards,
)

_encode: Final = json.JSONEncoder(separators=(",", ":")).encode
"""``json.dumps`` with these separators, without making a new encoder for every record."""


def record_line(record_type: str, fields: dict[str, Any]) -> str:
    """One record as its JSON line (without the newline): ``{"type": record_type, **fields}``.

    The two records of every decision (``request`` and ``action``) are written from templates,
    about four times faster than the JSON encoder on the referee's busiest path; the text is the
    same as the encoder's (a test checks), and anything a template does not expect goes through
    the encoder.
    """
    template = _TEMPLATES.get(record_type)
    line = None if template is None else template(fields)
    return _encode({"type": record_type, **fields}) if line is None else line


def _plain_int(value: object) -> bool:
    return type(value) is int


def _plain_float(value: object) -> bool:
    return type(value) is float and math.isfinite(value)


_REQUEST_KEYS: Final = ("id", "seat", "phase", "legal", "limit_ms")
_PHASE_NAMES: Final = frozenset({"upcard", "draw", "discard", "over"})


def _request_line(fields: dict[str, Any]) -> str | None:
    if tuple(fields) != _REQUEST_KEYS:
        return None
    ident, seat, phase, legal, limit = fields.values()
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


_ACTION_KEYS: Final = ("seat", "request", "action", "by", "ms")
_CHOOSERS: Final = frozenset({"bot", "referee", "forced"})
_ACTION_TEXTS: dict[tuple[tuple[str, str], ...], str] = {}


def _action_text(action: object) -> str | None:
    """An action's JSON (cached when it is a small object of strings, as all but declared
    knocks are)."""
    if type(action) is not dict:
        return None
    items = tuple(action.items())
    if not all(type(value) is str for _, value in items):
        return _encode(action)
    text = _ACTION_TEXTS.get(items)
    if text is None:
        text = _ACTION_TEXTS[items] = _encode(action)
    return text


def _action_line(fields: dict[str, Any]) -> str | None:
    if tuple(fields) != _ACTION_KEYS:
        return None
    seat, request, action, chooser, elapsed = fields.values()
    text = _action_text(action)
    if not (
        text is not None
        and _plain_int(seat)
        and _plain_int(request)
        and type(chooser) is str
        and chooser in _CHOOSERS
        and _plain_float(elapsed)
    ):
        return None
    return (
        f'{{"type":"action","seat":{seat},"request":{request},"action":{text},'
        f'"by":"{chooser}","ms":{elapsed!r}}}'
    )


_TEMPLATES: Final = {"request": _request_line, "action": _action_line}

LOG_FORMAT: Final = 3
"""Version of the record layout; a reader refuses versions it does not know. Format 3 deals by
seat (:attr:`Dealing.BY_SEAT`: a seat receives the same positions of the shuffle whoever deals);
formats 1 and 2 dealt by dealer. Format 2 salts the seed and deck commitments (the salts are
revealed with the decks and in the result); format 1 committed to them unsalted, so a seat could
test guesses of the seed against them."""


def log_dealing(version: int) -> Dealing:
    """The dealing rule a log of format ``version`` was dealt under (its decks are rebuilt and
    checked by it).

    >>> log_dealing(LOG_FORMAT).value, log_dealing(2).value, log_dealing(1).value
    ('by_seat', 'by_dealer', 'by_dealer')
    """
    return Dealing.BY_DEALER if version < 3 else Dealing.BY_SEAT


SALT_BYTES: Final = 16
_SEED_DOMAIN: Final = b"hollywood-gin/seed-commitment/v2/"
_HAND_SALT_DOMAIN: Final = b"hollywood-gin/hand-salt/v2/"


def seed_commitment(seed: int, salt: bytes | None = None) -> str:
    """SHA-256 hex of the match salt and the seed's decimal text (the header's commitment).

    The salt, secret until the result record reveals it, stops anyone testing seed guesses
    against the commitment. ``None``: the unsalted commitment of format-1 logs.

    >>> seed_commitment(7) == hashlib.sha256(b"7").hexdigest()
    True
    >>> seed_commitment(7, bytes(16)) == seed_commitment(7, b"x" * 16)
    False
    """
    if salt is None:
        return hashlib.sha256(str(seed).encode()).hexdigest()
    return hashlib.sha256(_SEED_DOMAIN + salt + str(seed).encode()).hexdigest()


def hand_salt(match_salt: bytes, hand: int) -> bytes:
    """The salt of one hand's deck commitment, from the match salt.

    Revealed with the deck once the hand has ended; it tells nothing of another hand's salt.

    >>> hand_salt(bytes(16), 1) != hand_salt(bytes(16), 2) and len(hand_salt(bytes(16), 1))
    16
    """
    message = _HAND_SALT_DOMAIN + hand.to_bytes(8, "big")
    return hmac.new(match_salt, message, hashlib.sha256).digest()[:SALT_BYTES]


def action_to_dict(action: Action, *, hide_card: bool = False) -> dict[str, Any]:
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
    record: dict[str, Any] = {"kind": "knock", "card": str(action.card)}
    if action.melds is not None:
        record["melds"] = [format_cards(meld) for meld in action.melds]
    return record


def action_from_dict(record: dict[str, Any]) -> Action:
    """Read an action written by :func:`action_to_dict`.

    Raises:
        ValueError: an unknown kind or a bad card.
    """
    kind = record.get("kind")
    simple: dict[str, Action] = {
        "take_upcard": TAKE_UPCARD,
        "pass_upcard": PASS_UPCARD,
        "draw_stock": DRAW_STOCK,
        "draw_discard": DRAW_DISCARD,
    }
    if kind in simple:
        return simple[kind]
    card = Card.parse(str(record.get("card", "")))
    if kind == "discard":
        return Discard(card)
    if kind == "knock":
        melds = record.get("melds")
        if melds is None:
            return Knock(card)
        return Knock(card, tuple(parse_cards(text) for text in melds))
    raise ValueError(f"unknown action kind {kind!r}")


class LogRecord(NamedTuple):
    """One record on its way to the log: its type and its fields, ready for JSON (what
    :meth:`LogWriter.write` takes)."""

    type: str
    fields: dict[str, Any]


class LogWriter(Protocol):
    """Where a match writes its records."""

    def write(self, record_type: str, /, **fields: Any) -> None:
        """Append one record."""
        ...

    def flush(self) -> None:
        """Put what was written on disk (the match flushes whenever it waits for a bot)."""
        ...

    def close(self) -> None:
        """Finish writing."""
        ...


def stderr_path(log_path: Path, seat: int) -> Path:
    """Where a seat's stderr is kept beside its match log (escaped, head and tail).

    >>> stderr_path(Path("runs/m-1.jsonl"), 0).as_posix()
    'runs/m-1.jsonl.seat0.stderr'
    """
    return log_path.with_name(f"{log_path.name}.seat{seat}.stderr")


class MatchLog:
    """Appends records to a JSON Lines file; :meth:`flush` puts them on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = path.open("x", encoding="utf-8")

    def write(self, record_type: str, /, **fields: Any) -> None:
        """Append one record of type ``record_type``."""
        if self._file is None:
            raise ValueError(f"match log {self.path} is closed")
        self._file.write(record_line(record_type, fields) + "\n")

    def flush(self) -> None:
        """Write out what is buffered."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush to disk and close (idempotent)."""
        if self._file is not None:
            self._file.flush()
            self._file.close()
            self._file = None

    def __enter__(self) -> MatchLog:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class NullLog:
    """A log that keeps nothing (simulations, benchmarks)."""

    path = None

    def write(self, record_type: str, /, **fields: Any) -> None:
        """Drop the record."""

    def flush(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to close."""
