"""The hosted arena's tables, on the league store's connection: authors and their tokens and web
sessions, names owned and banned, uploads and their verdicts, the ladder's entrants and their
rating history.

:class:`ArenaStore` is a :class:`~tournaments.store.Store` with these tables besides: the arena
opens its home with it; ``gin league`` opens the same file as a plain store and never sees them.
"""

from __future__ import annotations

import enum
import sqlite3
import time
from dataclasses import dataclass
from typing import ClassVar, Final

from tournaments.store import MatchRow, MatchState, Store, StoreDamaged

__all__ = [
    "ARENA_TABLES",
    "ArenaStore",
    "Entrant",
    "EntrantState",
    "EventPhase",
    "EventRow",
    "RatingPoint",
    "Submission",
    "SubmissionState",
]

ARENA_TABLES: Final = """
CREATE TABLE IF NOT EXISTS authors (name TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    created_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS owners (
    name TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name)
);
CREATE TABLE IF NOT EXISTS submissions (
    id TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    state TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL,
    bot TEXT,
    message TEXT NOT NULL DEFAULT '',
    report TEXT
);
CREATE TABLE IF NOT EXISTS entrants (
    ident TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    joined_at REAL NOT NULL,
    changed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (
    ident TEXT NOT NULL,
    at REAL NOT NULL,
    rating REAL NOT NULL,
    low REAL,
    high REAL,
    series INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ratings_by_bot ON ratings (ident, at);
CREATE TABLE IF NOT EXISTS sessions (
    digest TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    token TEXT NOT NULL,
    created_at REAL NOT NULL,
    ended_at REAL
);
CREATE TABLE IF NOT EXISTS banned (name TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS arena_events (
    name TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    at REAL NOT NULL,
    options TEXT NOT NULL,
    phase TEXT NOT NULL,
    created_at REAL NOT NULL,
    changed_at REAL NOT NULL,
    snapshot TEXT NOT NULL DEFAULT '[]',
    outcome TEXT NOT NULL DEFAULT ''
);
"""


class SubmissionState(enum.StrEnum):
    """Where an upload to the hosted arena is (the ``state`` column of ``submissions``)."""

    QUEUED = "queued"
    """Received and kept, waiting for its check (a restarted server checks it then)."""
    CHECKING = "checking"
    ACCEPTED = "accepted"
    """Registered (``bot`` names it)."""
    REJECTED = "rejected"
    """Refused (``message`` says why; ``report`` holds the checklist, if the kit ran)."""


class EntrantState(enum.StrEnum):
    """A bot's place in the hosted arena's ladder (the ``state`` column of ``entrants``)."""

    ACTIVE = "active"
    SUSPENDED = "suspended"
    """It faulted in every recent series (``reason`` says how); a new version enters afresh."""
    RETIRED = "retired"
    """Its author retired it, or a newer version of it entered: it plays no more."""


class EventPhase(enum.StrEnum):
    """Where an arena event is (the ``phase`` column of ``arena_events``)."""

    SCHEDULED = "scheduled"
    """Its deadline is to come: uploads still count for it."""
    PLAYING = "playing"
    """Frozen at its deadline (its snapshot and its league stored together), being played."""
    FINISHED = "finished"
    NOT_PLAYED = "not played"
    """Too small a field at the deadline (``outcome`` says how many bots)."""
    CANCELLED = "cancelled"

    @property
    def open(self) -> bool:
        """Whether it holds the arena's one event place (scheduled or playing)."""
        return self in (EventPhase.SCHEDULED, EventPhase.PLAYING)


@dataclass(frozen=True, slots=True)
class EventRow:
    """An arena event as the store keeps it (``tournaments.arena.event`` reads its fields)."""

    name: str
    format: str
    at: float
    """Its deadline (seconds since the epoch)."""
    options: str
    """Its format's options, JSON."""
    phase: EventPhase
    created_at: float
    changed_at: float
    snapshot: str = "[]"
    """The bots frozen into it, JSON (empty before its deadline)."""
    outcome: str = ""


@dataclass(frozen=True, slots=True)
class Submission:
    """An upload to the hosted arena and its verdict."""

    id: str
    author: str
    state: SubmissionState
    created_at: float
    finished_at: float | None
    bot: str | None
    """``name@version``, once known."""
    message: str
    report: str | None
    """The conformance checklist as JSON (``None``: the kit did not run)."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot of the ladder."""

    ident: str
    name: str
    state: EntrantState
    reason: str
    joined_at: float
    changed_at: float


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's ladder rating at one moment (after one of its pairs)."""

    ident: str
    at: float
    rating: float
    low: float | None
    high: float | None
    series: int


class _NotScheduledError(Exception):
    """Rolls a freeze back: the event was not scheduled any more."""


class ArenaStore(Store):
    """The store of an arena home: the league store's tables and the arena's."""

    TABLES: ClassVar[str] = Store.TABLES + ARENA_TABLES

    def add_author(self, name: str) -> bool:
        """Create an author; False if the name is taken."""
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO authors (name, created_at) VALUES (?, ?)",
                (name, time.time()),
            )
        return cursor.rowcount > 0

    def authors(self) -> list[tuple[str, float, int]]:
        """Every author: name, creation time, tokens not revoked."""
        rows = self.db.execute(
            "SELECT a.name, a.created_at, COUNT(t.digest) AS live FROM authors a LEFT JOIN"
            " tokens t ON t.author = a.name AND t.revoked_at IS NULL GROUP BY a.name"
            " ORDER BY a.name"
        ).fetchall()
        return [(str(row["name"]), float(row["created_at"]), int(row["live"])) for row in rows]

    def add_token(self, author: str, digest: str) -> None:
        """Keep a token of an author, by its digest only (the token itself is never stored)."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO tokens (digest, author, created_at) VALUES (?, ?, ?)",
                (digest, author, time.time()),
            )

    def token_author(self, digest: str) -> str | None:
        """The author of a live (not revoked) token, by its digest."""
        row = self.db.execute(
            "SELECT author FROM tokens WHERE digest = ? AND revoked_at IS NULL", (digest,)
        ).fetchone()
        return None if row is None else str(row["author"])

    def revoke_tokens(self, author: str, digest_prefix: str = "") -> int:
        """Revoke an author's live tokens (those whose digest starts so; all with ``""``);
        returns how many."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE tokens SET revoked_at = ? WHERE author = ? AND revoked_at IS NULL"
                " AND substr(digest, 1, length(?)) = ?",
                (time.time(), author, digest_prefix, digest_prefix),
            )
        return cursor.rowcount

    def claim_name(self, name: str, author: str) -> str:
        """Give a bot name to an author unless another has it; returns the name's owner."""
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO owners (name, author) VALUES (?, ?)", (name, author))
            row = db.execute("SELECT author FROM owners WHERE name = ?", (name,)).fetchone()
        return str(row["author"])

    def release_name(self, name: str, author: str) -> bool:
        """Give back a name an author claimed for an upload that was refused (only while no
        version of it is registered); whether it was released."""
        with self.transaction() as db:
            cursor = db.execute(
                "DELETE FROM owners WHERE name = ? AND author = ?"
                " AND NOT EXISTS (SELECT 1 FROM bots WHERE bots.name = owners.name)",
                (name, author),
            )
        return cursor.rowcount > 0

    def name_known(self, name: str) -> bool:
        """Whether any version of a bot name was ever registered (removed ones too)."""
        return self.db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is not None

    def ban(self, name: str, reason: str) -> None:
        """Keep a bot name out of the arena's ladder: no upload of it is accepted."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO banned (name, reason, at) VALUES (?, ?, ?)",
                (name, reason, time.time()),
            )

    def unban(self, name: str) -> bool:
        """Let a banned name in again; False if it was not banned."""
        with self.transaction() as db:
            cursor = db.execute("DELETE FROM banned WHERE name = ?", (name,))
        return cursor.rowcount > 0

    def banned(self, name: str) -> str | None:
        """Why a bot name is banned (``None``: it is not)."""
        row = self.db.execute("SELECT reason FROM banned WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row["reason"])

    def add_session(self, digest: str, author: str, token: str, keep_s: float = 30 * 86400) -> None:
        """Keep a web session (by its id's digest) opened with a token (by its digest); sessions
        opened more than ``keep_s`` ago, and those ended, are let go of meanwhile (so the table
        holds the live ones, not one row per login ever)."""
        now = time.time()
        with self.transaction() as db:
            db.execute(
                "DELETE FROM sessions WHERE created_at < ? OR ended_at IS NOT NULL",
                (now - keep_s,),
            )
            db.execute(
                "INSERT INTO sessions (digest, author, token, created_at) VALUES (?, ?, ?, ?)",
                (digest, author, token, time.time()),
            )

    def session_author(self, digest: str, max_age_s: float) -> str | None:
        """The author of a live session: not ended, younger than ``max_age_s``, and its token
        not revoked."""
        row = self.db.execute(
            "SELECT s.author FROM sessions s JOIN tokens t ON t.digest = s.token"
            " WHERE s.digest = ? AND s.ended_at IS NULL AND t.revoked_at IS NULL"
            " AND s.created_at > ?",
            (digest, time.time() - max_age_s),
        ).fetchone()
        return None if row is None else str(row["author"])

    def end_session(self, digest: str) -> bool:
        """End a web session (logging out); False if it was not live."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE sessions SET ended_at = ? WHERE digest = ? AND ended_at IS NULL",
                (time.time(), digest),
            )
        return cursor.rowcount > 0

    def owner(self, name: str) -> str | None:
        """The author who owns a bot name in the hosted arena."""
        row = self.db.execute("SELECT author FROM owners WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row["author"])

    def owners(self) -> dict[str, str]:
        """Every owned bot name and its author."""
        rows = self.db.execute("SELECT name, author FROM owners").fetchall()
        return {str(row["name"]): str(row["author"]) for row in rows}

    def add_submission(self, submission_id: str, author: str) -> None:
        """Record an upload, queued for its check."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO submissions (id, author, state, created_at) VALUES (?, ?, ?, ?)",
                (submission_id, author, SubmissionState.QUEUED.value, time.time()),
            )

    def set_submission(
        self,
        submission_id: str,
        state: SubmissionState,
        *,
        bot: str | None = None,
        message: str = "",
        report: str | None = None,
    ) -> None:
        """Move an upload on (its verdict's time is set once it is accepted or rejected)."""
        done = state in (SubmissionState.ACCEPTED, SubmissionState.REJECTED)
        with self.transaction() as db:
            db.execute(
                "UPDATE submissions SET state = ?, bot = COALESCE(?, bot), message = ?,"
                " report = COALESCE(?, report), finished_at = ? WHERE id = ?",
                (state.value, bot, message, report, time.time() if done else None, submission_id),
            )

    def submission(self, submission_id: str) -> Submission | None:
        """One upload."""
        row = self.db.execute("SELECT * FROM submissions WHERE id = ?", (submission_id,)).fetchone()
        return None if row is None else _submission(row)

    def submissions(
        self, state: SubmissionState | None = None, author: str | None = None, limit: int = 100
    ) -> list[Submission]:
        """Uploads, oldest first, optionally in one state or of one author."""
        query, args = "SELECT * FROM submissions WHERE 1", list[object]()
        if state is not None:
            query, args = query + " AND state = ?", [*args, state.value]
        if author is not None:
            query, args = query + " AND author = ?", [*args, author]
        rows = self.db.execute(query + " ORDER BY rowid LIMIT ?", (*args, limit)).fetchall()
        return [_submission(row) for row in rows]

    def waiting_submissions(self, author: str) -> int:
        """How many of an author's uploads are queued or being checked."""
        row = self.db.execute(
            "SELECT COUNT(*) AS n FROM submissions WHERE author = ? AND state IN (?, ?)",
            (author, SubmissionState.QUEUED.value, SubmissionState.CHECKING.value),
        ).fetchone()
        return int(row["n"])

    def requeue_submissions(self) -> int:
        """Uploads a killed server was checking go back to the queue; returns how many."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE submissions SET state = ? WHERE state = ?",
                (SubmissionState.QUEUED.value, SubmissionState.CHECKING.value),
            )
        return cursor.rowcount

    def enter(self, ident: str, name: str) -> bool:
        """Enter a bot into the ladder, active (one entered before is made active again);
        whether it is new there."""
        now = time.time()
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO entrants (ident, name, state, joined_at, changed_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (ident, name, EntrantState.ACTIVE.value, now, now),
            )
            if cursor.rowcount == 0:
                db.execute(
                    "UPDATE entrants SET state = ?1, reason = '', changed_at = ?2"
                    " WHERE ident = ?3 AND state != ?1",
                    (EntrantState.ACTIVE.value, now, ident),
                )
        return cursor.rowcount > 0

    def set_entrant(self, ident: str, state: EntrantState, reason: str = "") -> bool:
        """Change a ladder bot's state; False if it has none or already had that state."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE entrants SET state = ?, reason = ?, changed_at = ? WHERE ident = ?"
                " AND state != ?",
                (state.value, reason, time.time(), ident, state.value),
            )
        return cursor.rowcount > 0

    def open_or_newer(self, league: str, after: int) -> list[tuple[int, str, str, str, str]]:
        """A league's matches scheduled after row number ``after`` and those not finished
        (pending or running): row number, id, seats and state of each. What tells, once a
        board, whose recent matches changed since the last (one query, not one a bot)."""
        columns = "SELECT rowid, match_id, seat0, seat1, state FROM matches"
        rows = self.db.execute(
            f"{columns} WHERE rowid > ?2 AND league = ?1"
            f" UNION {columns} WHERE league = ?1 AND state IN (?3, ?4)",
            (league, after, MatchState.PENDING.value, MatchState.RUNNING.value),
        ).fetchall()
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def entrants(self, state: EntrantState | None = None) -> list[Entrant]:
        """The ladder's bots, in the order they entered."""
        query, args = "SELECT * FROM entrants", tuple[str, ...]()
        if state is not None:
            query, args = query + " WHERE state = ?", (state.value,)
        rows = self.db.execute(query + " ORDER BY joined_at, rowid", args).fetchall()
        return [_entrant(row) for row in rows]

    def entrant(self, ident: str) -> Entrant | None:
        """One ladder bot."""
        row = self.db.execute("SELECT * FROM entrants WHERE ident = ?", (ident,)).fetchone()
        return None if row is None else _entrant(row)

    def add_ratings(self, points: list[RatingPoint]) -> None:
        """Append ladder ratings (the plot of each bot's rating over time)."""
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO ratings (ident, at, rating, low, high, series) VALUES (?, ?, ?, ?, ?,"
                " ?)",
                [(p.ident, p.at, p.rating, p.low, p.high, p.series) for p in points],
            )

    def add_event(self, row: EventRow) -> str | None:
        """Schedule an event, unless one is scheduled or playing, or the name is taken (checked in
        the same transaction); returns the name of the event in the way (``None``: added)."""
        with self.transaction() as db:
            phases = (EventPhase.SCHEDULED.value, EventPhase.PLAYING.value)
            found = db.execute(
                "SELECT name FROM arena_events WHERE phase IN (?, ?) OR name = ?",
                (*phases, row.name),
            ).fetchone()
            if found is not None:
                return str(found["name"])
            db.execute(
                "INSERT INTO arena_events (name, format, at, options, phase, created_at,"
                " changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    row.name,
                    row.format,
                    row.at,
                    row.options,
                    row.phase.value,
                    row.created_at,
                    row.changed_at,
                ),
            )
        return None

    def arena_events(self) -> list[EventRow]:
        """Every event, the latest deadline first."""
        rows = self.db.execute("SELECT * FROM arena_events ORDER BY at DESC, name").fetchall()
        return [_event_row(row) for row in rows]

    def arena_event(self, name: str) -> EventRow | None:
        """One event."""
        row = self.db.execute("SELECT * FROM arena_events WHERE name = ?", (name,)).fetchone()
        return None if row is None else _event_row(row)

    def set_event_phase(
        self, name: str, before: EventPhase, after: EventPhase, outcome: str = ""
    ) -> bool:
        """Move an event from phase ``before`` to ``after``; False if it was not in ``before``."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE arena_events SET phase = ?, outcome = ?, changed_at = ? WHERE name = ?"
                " AND phase = ?",
                (after.value, outcome, time.time(), name, before.value),
            )
        return cursor.rowcount > 0

    def freeze_event(
        self, name: str, snapshot: str, league: str, matches: list[MatchRow], secret: bytes
    ) -> bool:
        """Freeze a scheduled event: its snapshot, its phase (playing) and its league (``league``:
        the definition's JSON; ``matches``: a round robin's, none for a Swiss or a knockout) in
        one transaction. False (nothing written) if it was not scheduled."""
        frozen = False

        def mark(db: sqlite3.Connection) -> None:
            nonlocal frozen
            cursor = db.execute(
                "UPDATE arena_events SET phase = ?, snapshot = ?, changed_at = ? WHERE name = ?"
                " AND phase = ?",
                (EventPhase.PLAYING.value, snapshot, time.time(), name, EventPhase.SCHEDULED.value),
            )
            frozen = cursor.rowcount == 1
            if not frozen:
                raise _NotScheduledError

        try:
            self.save_league(name, league, matches, secret, also=mark)
        except _NotScheduledError:
            return False
        return frozen

    def rating_history(self, ident: str, limit: int = 500) -> list[RatingPoint]:
        """A bot's ladder ratings, oldest first (the latest ``limit``)."""
        rows = self.db.execute(
            "SELECT * FROM (SELECT rowid AS k, * FROM ratings WHERE ident = ? ORDER BY at DESC,"
            " k DESC LIMIT ?) ORDER BY at, k",
            (ident, limit),
        ).fetchall()
        return [
            RatingPoint(
                str(row["ident"]),
                float(row["at"]),
                float(row["rating"]),
                row["low"],
                row["high"],
                int(row["series"]),
            )
            for row in rows
        ]


def _event_row(row: sqlite3.Row) -> EventRow:
    try:
        phase = EventPhase(row["phase"])
    except ValueError:
        raise StoreDamaged(f"event {row['name']}", f"unknown phase {row['phase']!r}") from None
    return EventRow(
        str(row["name"]),
        str(row["format"]),
        float(row["at"]),
        str(row["options"]),
        phase,
        float(row["created_at"]),
        float(row["changed_at"]),
        str(row["snapshot"]),
        str(row["outcome"]),
    )


def _submission(row: sqlite3.Row) -> Submission:
    try:
        state = SubmissionState(row["state"])
    except ValueError:
        raise StoreDamaged(f"upload {row['id']}", f"unknown state {row['state']!r}") from None
    return Submission(
        str(row["id"]),
        str(row["author"]),
        state,
        float(row["created_at"]),
        row["finished_at"],
        row["bot"],
        str(row["message"]),
        row["report"],
    )


def _entrant(row: sqlite3.Row) -> Entrant:
    try:
        state = EntrantState(row["state"])
    except ValueError:
        why = f"unknown state {row['state']!r}"
        raise StoreDamaged(f"ladder bot {row['ident']}", why) from None
    return Entrant(
        str(row["ident"]),
        str(row["name"]),
        state,
        str(row["reason"]),
        float(row["joined_at"]),
        float(row["changed_at"]),
    )
