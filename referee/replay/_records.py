"""A match log as typed records: what every format reader produces, whatever its version.

The records themselves are the referee's (:mod:`referee.records`, defined once for the writer
and the reader); each keeps the line it came from, so a check can name the record that disagrees.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from referee.records import (
    ActionRecord,
    BodyRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    Header,
    Request,
    ResultRecord,
    SeatIdentity,
    Totals,
    record_type,
)

__all__ = [
    "ActionRecord",
    "BadRecord",
    "BodyRecord",
    "FaultRecord",
    "HandEndRecord",
    "HandStart",
    "Header",
    "LogReadError",
    "MatchLogData",
    "Request",
    "ResultRecord",
    "SeatIdentity",
    "Totals",
    "VerifyStatus",
    "record_type",
]


class VerifyStatus(enum.Enum):
    """The verdict on a log."""

    VERIFIED = "verified"
    """Every record agrees with the rules, from the header to the result."""
    INCOMPLETE = "incomplete"
    """Every record that is there agrees, but the log ends early: the result is unproven."""
    FAILED = "failed"
    """A record disagrees with the rules or with the records before it, or cannot be read."""


@dataclass(frozen=True, slots=True)
class BadRecord:
    """The first record of a log that disagrees (or cannot be read), and why."""

    line: int
    """1-based line number in the log file."""
    record_type: str | None
    reason: str

    def __str__(self) -> str:
        kind = f" ({self.record_type})" if self.record_type else ""
        return f"line {self.line}{kind}: {self.reason}"


class LogReadError(ValueError):
    """A log that cannot be read at all (no header, unknown version, not a log)."""

    def __init__(self, bad: BadRecord, path: Path | None = None) -> None:
        where = f"{path}: " if path is not None else ""
        super().__init__(f"{where}{bad}")
        self.bad = bad
        self.path = path


@dataclass(frozen=True, slots=True)
class MatchLogData:
    """A log read into typed records, up to its first unreadable line.

    ``stop`` says why reading stopped early (``None``: every line was read); ``truncated``
    says that it stopped at a last line cut off mid-record, as a writer killed mid-line leaves.
    """

    path: Path | None
    header: Header
    records: tuple[BodyRecord, ...]
    stop: BadRecord | None = None
    truncated: bool = False

    @property
    def result(self) -> ResultRecord | None:
        """The result record, when the log has one (it is always the last)."""
        for record in reversed(self.records):
            if isinstance(record, ResultRecord):
                return record
        return None

    @property
    def names(self) -> tuple[str, str]:
        """Each seat's display name (``name@version``, or ``seat N`` when unknown)."""
        seats = self.header.seats
        return (_name(seats[0], 0), _name(seats[1], 1))


def _name(seat: SeatIdentity | None, index: int) -> str:
    return f"seat {index}" if seat is None else f"{seat.name}@{seat.version}"
