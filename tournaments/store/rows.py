"""The store's rows: what its tables hold, as frozen records (bots, scheduled matches, results).

These are what the statistics read (``tournaments.stats`` imports this module, never the
database). A result's summary (a :class:`~tournaments.formats.records.MatchSummary`, with the seats
and the duplicate pair) is JSON in the ``summary`` column, written by
:meth:`ResultRow.stored_summary` and read by :meth:`ResultRow.from_stored`.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path

from protocol.bounded import JsonObject
from referee.match import MatchEnd
from tournaments.formats.records import MatchSummary

__all__ = ["BotRow", "LoggedResult", "MatchRow", "MatchState", "ResultRow", "StoreDamaged"]


class StoreDamaged(ValueError):  # noqa: N818 - named for what is so, as LeagueBusy
    """A row of the store cannot be read (edited by hand, or written by other code)."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"the store's {what} cannot be read ({why})")
        self.what = what
        self.why = why


@dataclass(frozen=True, slots=True)
class LoggedResult:
    """A result's match and log, read without its summary (what verifying and recounting
    start from, whatever the summary holds)."""

    match_id: str
    log_path: str
    """Where its log is now (see :attr:`ResultRow.log_path`)."""
    summary: str
    """The ``summary`` column as stored (JSON text)."""


class MatchState(enum.StrEnum):
    """Where a scheduled match is (the ``state`` column holds its value)."""

    PENDING = "pending"
    RUNNING = "running"
    """A worker has it (or had it, when a runner died: the next run puts it back)."""
    DONE = "done"
    """Its result is recorded."""
    FAILED = "failed"
    """Its worker failed every attempt (the next run tries again)."""


@dataclass(frozen=True, slots=True)
class BotRow:
    """A submitted bot."""

    name: str
    version: str
    hash: str
    path: Path
    author: str
    description: str
    submitted_at: float

    @property
    def ident(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A scheduled match."""

    match_id: str
    league: str
    pairing: str
    series_index: int
    seat0: str
    seat1: str
    seed: int
    duplicate_of: str | None
    state: MatchState
    attempts: int
    note: str


@dataclass(frozen=True, slots=True)
class ResultRow:
    """A recorded result: what the standings are computed from."""

    match_id: str
    league: str
    winner: int | None
    end: MatchEnd
    reason: str
    summary: MatchSummary
    log_path: str
    """Its log: as read from the store, where the log is now (the column keeps a log in the arena
    home relative to the home, which may have moved since); as written, any path."""
    seats: tuple[str, str]
    """Who played each seat (``name@version``)."""
    duplicate_of: str | None = None
    """The first leg of the duplicate pair this match is the second leg of."""

    def stored_summary(self) -> str:
        """The ``summary`` column: the summary's JSON, with the seats and the duplicate pair."""
        document = {
            **self.summary.to_dict(),
            "seats": list(self.seats),
            "duplicate_of": self.duplicate_of,
        }
        return json.dumps(document, sort_keys=True)

    @classmethod
    def from_stored(  # noqa: PLR0917 - the table's columns, in its order
        cls,
        match_id: str,
        league: str,
        winner: int | None,
        end: str,
        reason: str,
        summary: JsonObject,
        log_path: str,
    ) -> ResultRow:
        """A result from its columns (``summary`` parsed), whenever it was stored.

        Raises:
            KeyError, TypeError, ValueError: a summary that is not one.
        """
        first, second = (str(seat) for seat in summary["seats"])
        mirror = summary.get("duplicate_of")
        return cls(
            match_id,
            league,
            winner,
            MatchEnd(end),
            reason,
            MatchSummary.from_dict(summary),
            log_path,
            (first, second),
            None if mirror is None else str(mirror),
        )
