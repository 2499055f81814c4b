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
from pathlib import Path
from types import TracebackType
from typing import IO, Final, Protocol

from protocol.bounded import JsonObject
from referee.records import SALT_BYTES as SALT_BYTES  # noqa: PLC0414 - re-exported
from referee.records import LogRecord, encode
from referee.records import action_from_dict as action_from_dict  # noqa: PLC0414 - re-exported
from referee.records import action_to_dict as action_to_dict  # noqa: PLC0414 - re-exported
from referee.rules import Dealing


def record_line(record_type: str, fields: JsonObject) -> str:
    """A record given as its type and fields, as its JSON line (without the newline): what
    :meth:`referee.records.Request.to_line` and the other records' ``to_line`` write for them.

    >>> record_line("hand_start", {"hand": 0, "dealer": 1, "commitment": "ab"})
    '{"type":"hand_start","hand":0,"dealer":1,"commitment":"ab"}'
    """
    return encode({"type": record_type, **fields})


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


class LogWriter(Protocol):
    """Where a match writes its records."""

    def write(self, record: LogRecord, /) -> None:
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

    def write(self, record: LogRecord, /) -> None:
        """Append one record."""
        if self._file is None:
            raise ValueError(f"match log {self.path} is closed")
        self._file.write(record.to_line() + "\n")

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

    def write(self, record: LogRecord, /) -> None:
        """Drop the record."""

    def flush(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to close."""
