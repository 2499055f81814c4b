"""A match log as typed records: what every format reader produces, whatever its version.

Each record keeps the line it came from, so a check can name the record that disagrees.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from referee.bookkeeping import SeatStats
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault
from referee.rules import Action, Card, RuleParams


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
class SeatIdentity:
    """Who played a seat, as its hello said, with the code hash when known."""

    name: str
    version: str
    code_hash: str


@dataclass(frozen=True, slots=True)
class Header:
    """The first record: the match, its rules, the seed commitment and the seats."""

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


@dataclass(frozen=True, slots=True)
class HandStart:
    """A hand is dealt: its number, dealer and deck commitment."""

    line: int
    hand: int
    dealer: int
    commitment: str


@dataclass(frozen=True, slots=True)
class Request:
    """The referee asked a seat for a decision."""

    line: int
    id: int
    seat: int
    phase: str
    legal: int
    limit_ms: float


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action played for a seat, who chose it (bot, referee, forced) and its time."""

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


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """A fault recorded against a seat, with its evidence and what followed."""

    line: int
    seat: int
    kind: str
    detail: str
    request_id: int
    elapsed_ms: float
    evidence: dict[str, Any]
    strikes: int
    forfeited: bool
    stray: bool = False
    """A fault beside the decision (a duplicate of an earlier answer): the decision went on."""


Totals = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class HandEndRecord:
    """How a hand ended: the showdown, the score and the deck revealed."""

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


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """The last record: how the match ended, its statistics and the seed revealed."""

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


BodyRecord = HandStart | Request | ActionRecord | FaultRecord | HandEndRecord | ResultRecord

RECORD_TYPES: dict[type, str] = {
    HandStart: "hand_start",
    Request: "request",
    ActionRecord: "action",
    FaultRecord: "fault",
    HandEndRecord: "hand_end",
    ResultRecord: "result",
}


def record_type(record: Header | BodyRecord) -> str:
    """The log name of a record's type.

    >>> record_type(HandStart(2, 0, 1, "ab"))
    'hand_start'
    """
    return "header" if isinstance(record, Header) else RECORD_TYPES[type(record)]


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
