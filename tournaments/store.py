"""The store: one SQLite file (WAL) with bots, leagues, scheduled matches and results.

A result is keyed by its match id and written once (``INSERT OR IGNORE``), so a retried,
resumed or duplicated match can never count twice. Every result points at its match log; its
summary (a :class:`~tournaments.records.MatchSummary`, with the seats and the duplicate pair) is
JSON in the ``summary`` column, written by :meth:`ResultRow.stored_summary` and read by
:meth:`ResultRow.from_stored`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import gc
import json
import os
import posixpath
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from protocol.bounded import DECODER, check_json_depth, loads_json
from referee.match import MatchEnd
from tournaments.records import MatchSummary
from tournaments.stats import HandStats

__all__ = [
    "BOTS_DIR",
    "LOGS_DIR",
    "SCHEMA_VERSION",
    "BotRow",
    "Entrant",
    "EntrantState",
    "LoggedResult",
    "MatchRow",
    "MatchState",
    "RatingPoint",
    "ResultRow",
    "Store",
    "StoreDamaged",
    "StoreUnusable",
    "Submission",
    "SubmissionState",
]


_T = TypeVar("_T")

SCHEMA_VERSION: Final = 1
"""The newest store layout this code reads and writes (the ``schema`` row of ``meta``)."""
SECRET_BYTES: Final = 32
LOGS_DIR: Final = "logs"
BOTS_DIR: Final = "bots"
"""Where the arena home keeps match logs: ``<home>/logs/<league>/<match>.jsonl``."""
DAMAGED: Final = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a file that is not (or no longer) a sound database."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    hash TEXT NOT NULL,
    path TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    submitted_at REAL NOT NULL,
    removed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS leagues (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    created_at REAL NOT NULL,
    secret TEXT
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    league TEXT NOT NULL REFERENCES leagues(name),
    pairing TEXT NOT NULL,
    series_index INTEGER NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    seed INTEGER NOT NULL,
    duplicate_of TEXT,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS matches_by_league ON matches (league, state);
CREATE TABLE IF NOT EXISTS results (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    league TEXT NOT NULL,
    winner INTEGER,
    end TEXT NOT NULL,
    reason TEXT NOT NULL,
    summary TEXT NOT NULL,
    log_path TEXT NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_seat0 ON matches (seat0);
CREATE INDEX IF NOT EXISTS matches_by_seat1 ON matches (seat1);
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
"""


class StoreDamaged(ValueError):  # noqa: N818 - named for what is so, as LeagueBusy
    """A row of the store cannot be read (edited by hand, or written by other code)."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"the store's {what} cannot be read ({why})")
        self.what = what
        self.why = why


class StoreUnusable(ValueError):  # noqa: N818 - named for what is so, as StoreDamaged
    """The store cannot be opened: its file is damaged, a folder, unreadable or unwritable, or
    from a newer arena; or its folder (the arena home) is a file or cannot be made. The message
    names the path and says what to do."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True, slots=True)
class LoggedResult:
    """A result's match and log, read without its summary (what verifying and recounting
    start from, whatever the summary holds)."""

    match_id: str
    log_path: str
    """Where its log is now (see :attr:`ResultRow.log_path`)."""
    summary: str
    """The ``summary`` column as stored (JSON text)."""


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
        summary: dict[str, Any],
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


class Store:
    """Access to the SQLite file; each method is one short transaction."""

    def __init__(self, path: Path) -> None:
        """Open the store at ``path`` (created on first use, with its folder); the folder is the
        arena home, against which stored log paths are relative.

        Raises:
            StoreUnusable: the file or its folder cannot be used (the message says what to do).
        """
        self.path = path
        self.home = path.parent
        home = str(self.home)
        self._home_prefix = "" if home == "." else home if home.endswith("/") else f"{home}/"
        """``str(self.home / relative)`` is this plus a normalised ``relative``."""
        _make_room(path)
        try:
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        except sqlite3.Error as error:
            raise _unusable(path, error) from None
        try:
            self._open()
        except (sqlite3.Error, OSError) as error:
            self.db.close()
            raise _unusable(path, error) from None
        except StoreUnusable:
            self.db.close()
            raise

    def _open(self) -> None:
        """Check the file (``quick_check``: a few ms for thousands of results) and its schema
        version, then create or migrate the tables."""
        self.db.row_factory = sqlite3.Row
        self.db.text_factory = _text
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _damaged(self.path, problems[0])
        self._check_version()
        self.db.executescript(SCHEMA)
        columns = {row["name"] for row in self.db.execute("PRAGMA table_info(leagues)")}
        if "secret" not in columns:  # a store from before league secrets: its leagues keep
            self.db.execute("ALTER TABLE leagues ADD COLUMN secret TEXT")  # public seeds
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        self.db.execute(  # an older store, migrated above, is now of this version
            "UPDATE meta SET value = ?1 WHERE key = 'schema' AND CAST(value AS INTEGER) < ?1",
            (SCHEMA_VERSION,),
        )

    def _check_version(self) -> None:
        """Refuse a store of a newer schema than :data:`SCHEMA_VERSION` (before writing to it).

        Raises:
            StoreUnusable: a newer schema, or a version that is not a number.
        """
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            return  # a new store
        found = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if found is None:
            return
        try:
            version = int(found["value"])
        except ValueError:
            raise _damaged(
                self.path, f"its schema version {found['value']!r} is not a number"
            ) from None
        if version > SCHEMA_VERSION:
            raise StoreUnusable(
                self.path,
                f"the store {self.path} was written by a newer version of the arena (schema "
                f"{version}, this one reads up to {SCHEMA_VERSION}): upgrade",
            )

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see the store as of one moment (one read transaction: a match recorded
        meanwhile is seen by none of them or by all)."""
        self.db.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    # --- bots ----------------------------------------------------------------------------------

    def add_bot(self, row: BotRow) -> None:
        """Store a bot row (the caller checked for clashes)."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO bots (name, version, hash, path, author, description, submitted_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    row.name,
                    row.version,
                    row.hash,
                    self._in_home(str(row.path)),
                    row.author,
                    row.description,
                    row.submitted_at,
                ),
            )

    def bot(self, name: str, version: str | None = None, *, removed: bool = False) -> BotRow | None:
        """A bot by name and version, or the latest submitted version of a name (``removed``:
        a version taken out of the registry too, whose hash is kept)."""
        if removed and version is not None:
            found = self.db.execute(
                "SELECT * FROM bots WHERE name = ? AND version = ? ORDER BY removed, rowid DESC",
                (name, version),
            ).fetchone()
            return None if found is None else self._found_bot(found)
        if version is None:
            found = self.db.execute(
                "SELECT * FROM bots WHERE name = ? AND removed = 0"
                " ORDER BY submitted_at DESC, rowid DESC LIMIT 1",
                (name,),
            ).fetchone()
        else:
            found = self.db.execute(
                "SELECT * FROM bots WHERE name = ? AND version = ? AND removed = 0",
                (name, version),
            ).fetchone()
        return None if found is None else self._found_bot(found)

    def bots(self) -> list[BotRow]:
        """Every bot not removed, by name then submission time."""
        rows = self.db.execute(
            "SELECT * FROM bots WHERE removed = 0 ORDER BY name, submitted_at"
        ).fetchall()
        return [self._found_bot(row) for row in rows]

    def remove_bot(self, name: str, version: str) -> bool:
        """Mark a bot removed (its files and results stay); False if there was none."""
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE bots SET removed = 1 WHERE name = ? AND version = ? AND removed = 0",
                (name, version),
            )
        return cursor.rowcount > 0

    # --- leagues and matches -------------------------------------------------------------------

    def league_config(self, name: str) -> str | None:
        """A league's stored definition: the JSON that ``tournaments.league.StoredLeague``
        writes and reads.

        Raises:
            StoreDamaged: it is not text.
        """
        try:
            found = self.db.execute("SELECT config FROM leagues WHERE name = ?", (name,)).fetchone()
        except StoreDamaged as error:  # not UTF-8
            raise StoreDamaged(f"definition of league {name!r}", error.why) from None
        return None if found is None else str(found["config"])

    def league_secret(self, name: str) -> bytes | None:
        """The secret a league's deal seeds derive from (``None``: a league from before secrets,
        whose matches scheduled then came from its public seed alone)."""
        found = self.db.execute("SELECT secret FROM leagues WHERE name = ?", (name,)).fetchone()
        return None if found is None or found["secret"] is None else bytes.fromhex(found["secret"])

    def secret(self, key: str) -> bytes:
        """A secret of this store's own (32 random bytes made on first use), e.g. ``home``: the key
        that user-given seeds are combined with, so the same seed deals the same here and nowhere
        else."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                (f"secret:{key}", secrets.token_bytes(SECRET_BYTES).hex()),
            )
            found = db.execute("SELECT value FROM meta WHERE key = ?", (f"secret:{key}",))
            return bytes.fromhex(found.fetchone()["value"])

    def leagues(self) -> list[str]:
        """Every league's name."""
        return [row["name"] for row in self.db.execute("SELECT name FROM leagues ORDER BY name")]

    def save_league(
        self, name: str, config: str, matches: list[MatchRow], secret: bytes | None
    ) -> int:
        """Create or extend a league (``config``: its definition's JSON, as
        :meth:`league_config` gives it back); returns how many matches were new. ``secret`` is
        kept from the league's creation on (extending a league never changes it; a league from
        before secrets gets it at its first extension)."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO leagues (name, config, created_at, secret) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET config = excluded.config,"
                " secret = COALESCE(leagues.secret, excluded.secret)",
                (
                    name,
                    config,
                    time.time(),
                    None if secret is None else secret.hex(),
                ),
            )
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO matches (match_id, league, pairing, series_index, seat0,"
                " seat1, seed, duplicate_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        m.match_id,
                        m.league,
                        m.pairing,
                        m.series_index,
                        m.seat0,
                        m.seat1,
                        m.seed,
                        m.duplicate_of,
                    )
                    for m in matches
                ],
            )
            return db.total_changes - before

    def matches(self, league: str, state: MatchState | None = None) -> list[MatchRow]:
        """A league's matches (in schedule order), optionally in one state."""
        query = "SELECT * FROM matches WHERE league = ?"
        args: tuple[str, ...] = (league,)
        if state is not None:
            query += " AND state = ?"
            args += (state.value,)
        with _collector_paused():
            rows = self.db.execute(query + " ORDER BY rowid", args).fetchall()
            return [_match(row) for row in rows]

    def pending(self, league: str, page: int = 1000) -> Iterator[MatchRow]:
        """A league's pending matches in schedule order, read ``page`` rows at a time (so the
        runner holds a page, not the league: a league may have hundreds of thousands). A match
        claimed or played meanwhile, once read, is still given: the claim decides."""
        after = 0
        while True:
            rows = self.db.execute(
                "SELECT rowid AS page_key, * FROM matches WHERE league = ? AND state = ?"
                " AND rowid > ? ORDER BY rowid LIMIT ?",
                (league, MatchState.PENDING.value, after, page),
            ).fetchall()
            if not rows:
                return
            after = rows[-1]["page_key"]
            for row in rows:
                fields = dict(row)
                del fields["page_key"]
                yield MatchRow(**{**fields, "state": _state(row)})

    def decide(self, league: str, decision: str) -> str:
        """Keep a match's decision (its sequential test's status, as text) and drop the
        matches it will never play: its pending ones (those running finish and are recorded).
        The first decision is the one kept, whatever finishes after it; returns the kept one."""
        key = f"decision/{league}"
        with self.transaction() as db:
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, decision))
            db.execute(
                "DELETE FROM matches WHERE league = ? AND state = ?",
                (league, MatchState.PENDING.value),
            )
            kept = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(kept["value"])

    def decision(self, league: str) -> str | None:
        """A match's kept decision (``None``: it has none)."""
        found = self.db.execute(
            "SELECT value FROM meta WHERE key = ?", (f"decision/{league}",)
        ).fetchone()
        return None if found is None else str(found["value"])

    def counts(self, league: str) -> dict[MatchState, int]:
        """How many matches are in each state.

        Raises:
            StoreDamaged: a match's state is none of them.
        """
        rows = self.db.execute(
            "SELECT state, COUNT(*) AS n FROM matches WHERE league = ? GROUP BY state", (league,)
        ).fetchall()
        try:
            return {MatchState(row["state"]): row["n"] for row in rows}
        except ValueError as error:
            raise StoreDamaged(f"matches of league {league}", str(error)) from None

    def reset_running(self, league: str, *, retry_failed: bool = False) -> int:
        """Matches left 'running' by a runner that died (and, with ``retry_failed``, those whose
        worker failed) go back to 'pending'; returns how many."""
        states = (MatchState.RUNNING, MatchState.FAILED) if retry_failed else (MatchState.RUNNING,)
        with self.transaction() as db:
            cursor = db.execute(
                f"UPDATE matches SET state = ? WHERE league = ? AND state IN "
                f"({', '.join('?' for _ in states)})"
                " AND match_id NOT IN (SELECT match_id FROM results)",
                (MatchState.PENDING.value, league, *(state.value for state in states)),
            )
            db.execute(
                "UPDATE matches SET state = ?1 WHERE league = ?2 AND state != ?1"
                " AND match_id IN (SELECT match_id FROM results)",
                (MatchState.DONE.value, league),
            )
        return cursor.rowcount

    def claim(self, match_id: str, *, retry: bool = False) -> bool:
        """Take a pending match for a run (or, with ``retry``, one this run already holds, for
        another attempt): whether it was taken. A match another runner took meanwhile (or
        played) is not taken, so no match is played twice, whatever runs at once on this store.
        """
        held = MatchState.RUNNING if retry else MatchState.PENDING
        with self.transaction() as db:
            taken = db.execute(
                "UPDATE matches SET state = ?, attempts = attempts + 1"
                " WHERE match_id = ? AND state = ?",
                (MatchState.RUNNING.value, match_id, held.value),
            )
            return taken.rowcount == 1

    def mark(self, match_id: str, state: MatchState, note: str = "") -> None:
        """Set a match's state (pending after an interrupted run, failed after retries)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE matches SET state = ?, note = ? WHERE match_id = ? AND state != ?",
                (state.value, note, match_id, MatchState.DONE.value),
            )

    def pairing_counts(self, league: str) -> dict[str, int]:
        """How many matches each pairing (``a|b``) of a league has scheduled (the next series
        index of a ladder's pairing)."""
        rows = self.db.execute(
            "SELECT pairing, MAX(series_index) + 1 AS n FROM matches WHERE league = ?"
            " GROUP BY pairing",
            (league,),
        ).fetchall()
        return {str(row["pairing"]): int(row["n"]) for row in rows}

    def matches_of(self, league: str, ident: str, limit: int = 20) -> list[MatchRow]:
        """A bot's latest matches in a league (either seat), newest first."""
        rows = self.db.execute(
            "SELECT * FROM (SELECT rowid AS k, * FROM matches WHERE seat0 = ?1 AND league = ?2"
            " UNION ALL SELECT rowid AS k, * FROM matches WHERE seat1 = ?1 AND league = ?2)"
            " ORDER BY k DESC LIMIT ?3",
            (ident, league, limit),
        ).fetchall()
        return [_match(_without(row, "k")) for row in rows]

    def match(self, match_id: str) -> MatchRow | None:
        """One scheduled match."""
        row = self.db.execute("SELECT * FROM matches WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else _match(row)

    # --- results -------------------------------------------------------------------------------

    def record_result(self, row: ResultRow) -> bool:
        """Write a result once; returns False if the match already had one (nothing changed)."""
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO results (match_id, league, winner, end, reason, summary,"
                " log_path, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.match_id,
                    row.league,
                    row.winner,
                    row.end.value,
                    row.reason,
                    row.stored_summary(),
                    self._in_home(row.log_path),
                    time.time(),
                ),
            )
            db.execute(
                "UPDATE matches SET state = ? WHERE match_id = ?",
                (MatchState.DONE.value, row.match_id),
            )
        return cursor.rowcount > 0

    def rewrite_hand_stats(self, rows: list[tuple[str, tuple[HandStats, HandStats]]]) -> None:
        """Store these matches' hand statistics (recounted from their logs) in place of those
        recorded; nothing else of a stored summary changes, not even fields this code does not
        know."""
        with self.transaction() as db:
            db.executemany(
                "UPDATE results SET summary = json_set(summary, '$.hand_stats', json(?))"
                " WHERE match_id = ?",
                [
                    (json.dumps([seat.to_dict() for seat in stats]), match_id)
                    for match_id, stats in rows
                ],
            )

    def logged_results(self, league: str) -> list[LoggedResult]:
        """Every result of a league, its summary unread, in schedule order."""
        with _collector_paused():
            rows = self.db.execute(
                "SELECT r.match_id, r.log_path, r.summary FROM results r JOIN matches m"
                " USING (match_id) WHERE r.league = ? ORDER BY m.rowid",
                (league,),
            ).fetchall()
            return [
                LoggedResult(
                    row["match_id"], self._found_log(row["log_path"], league), row["summary"]
                )
                for row in rows
            ]

    def checked_results(
        self, league: str
    ) -> Iterator[tuple[LoggedResult, ResultRow | StoreDamaged]]:
        """Every result of a league in schedule order, read in one query (the store as of one
        moment) and each parsed as it is given: what :meth:`logged_results` gives of it, and
        what :meth:`result` gives (or the damage it raises), without a query per result (what
        verifying reads). A result given is let go of here.

        Raises:
            StoreDamaged: a row's text is not UTF-8 (then :meth:`logged_results` and
                :meth:`result` say which).
        """
        with _collector_paused():
            rows = self.db.execute(_LEAGUE_RESULTS, (league,)).fetchall()
        return self._checked(rows, league)

    def _checked(
        self, rows: list[sqlite3.Row], league: str
    ) -> Iterator[tuple[LoggedResult, ResultRow | StoreDamaged]]:
        rows.reverse()
        while rows:
            row = rows.pop()
            logged = LoggedResult(
                row["match_id"], self._found_log(row["log_path"], league), row["summary"]
            )
            try:
                stored: ResultRow | StoreDamaged = _result(row, logged.log_path)
            except StoreDamaged as error:
                stored = error
            yield logged, stored

    def results(self, league: str) -> list[ResultRow]:
        """Every result of a league, in schedule order.

        Raises:
            StoreDamaged: a result cannot be read.
        """
        with _collector_paused():
            rows = self.db.execute(_LEAGUE_RESULTS, (league,)).fetchall()
            return [_result(row, self._found_log(row["log_path"], league)) for row in rows]

    def read_results(
        self,
        league: str,
        read: Callable[[str, str, Any], _T | None],
        convert: Callable[[ResultRow], _T],
    ) -> list[_T]:
        """Every result of a league in schedule order, each as ``read`` makes it from its match
        id, its ``end`` column and its parsed summary (JSON not yet checked), in one query and
        without a :class:`ResultRow` (what the standings read of 100,000 results). A result
        ``read`` gives ``None`` for is read as :meth:`results` reads it and given to ``convert``,
        so that one :meth:`results` refuses is refused here with the same error.

        Raises:
            StoreDamaged: a result cannot be read (as :meth:`results` says).
        """
        with _collector_paused():
            cursor = self.db.cursor()
            cursor.row_factory = None  # plain tuples: a fraction of the time of rows by name
            self.db.text_factory = str  # sqlite3's own UTF-8 decoding (it raises on any other)
            try:
                rows = cursor.execute(_LEAGUE_RESULTS, (league,)).fetchall()
            except sqlite3.OperationalError:  # text that is not UTF-8: results() says where
                rows = None
            finally:
                self.db.text_factory = _text
            if rows is None:
                return [convert(result) for result in self.results(league)]
            names = [column[0] for column in cursor.description]
            match, end, summary, log = (
                names.index(name) for name in ("match_id", "end", "summary", "log_path")
            )
            # json.loads less its work around each call (typeshed does not know the attribute)
            scan: Callable[[str, int], tuple[Any, int]] = DECODER.scan_once  # type: ignore[attr-defined]
            found = []
            for row in rows:
                text = row[summary]
                try:
                    if type(text) is not str:  # a BLOB of a hand edit, say: _result reads it
                        raise ValueError("not text")
                    check_json_depth(text)  # bounded as every reader of stored text is
                    parsed, stop = scan(text, 0)
                except (StopIteration, ValueError, RecursionError):  # _result reads it
                    made = None
                else:
                    made = read(row[match], row[end], parsed) if stop == len(text) else None
                if made is None:
                    made = convert(
                        _result(
                            dict(zip(names, row, strict=True)), self._found_log(row[log], league)
                        )
                    )
                found.append(made)
            return found

    def result(self, match_id: str) -> ResultRow | None:
        """One match's result.

        Raises:
            StoreDamaged: it cannot be read.
        """
        row = self.db.execute("SELECT * FROM results WHERE match_id = ?", (match_id,)).fetchone()
        return (
            None if row is None else _result(row, self._found_log(row["log_path"], row["league"]))
        )

    def last_active(self, league: str) -> dict[str, float]:
        """When each bot of a league last had a result recorded."""
        rows = self.db.execute(
            "SELECT m.seat0 AS a, m.seat1 AS b, MAX(r.recorded_at) AS at FROM results r"
            " JOIN matches m USING (match_id) WHERE r.league = ? GROUP BY m.seat0, m.seat1",
            (league,),
        ).fetchall()
        latest: dict[str, float] = {}
        for row in rows:
            for ident in (str(row["a"]), str(row["b"])):
                latest[ident] = max(latest.get(ident, 0.0), float(row["at"]))
        return latest

    # --- the hosted arena: authors, tokens, uploads, the ladder's entrants and ratings --------

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

    def _in_home(self, log: str) -> str:
        """A path (a log's, a bot copy's) as the store keeps it: relative to the arena home when
        it is in the home, so that the home can be moved with its logs and bots."""
        if not log:
            return log
        path = Path(log)
        for home, where in (
            (Path(os.path.abspath(self.home)), Path(os.path.abspath(path))),
            (self.home.resolve(), path.resolve()),
        ):
            if where.is_relative_to(home):
                return where.relative_to(home).as_posix()
        return log

    def _found_bot(self, row: sqlite3.Row) -> BotRow:
        """A bot row, its copy's folder found as :meth:`_found_log` finds a log: kept relative to
        the home (so a moved home keeps its bots); a path an older arena wrote absolute, of a
        home moved since, is looked for in this home's registry by its folder's name."""
        bot = _bot(row)
        path = bot.path
        if not path.is_absolute():
            return dataclasses.replace(bot, path=Path(os.path.abspath(self.home / path)))
        own = Path(os.path.abspath(self.home / BOTS_DIR / bot.name / path.name))
        if not path.is_dir() and own.is_dir():
            return dataclasses.replace(bot, path=own)
        return bot

    def _found_log(self, stored: str, league: str) -> str:
        """Where a stored log path is now: in the home (a relative path); else at the league's
        logs of this home (a path an older arena wrote, absolute or relative to the folder it
        ran in, of a home moved or copied since); else where that older path points. Not found:
        where the row says (in the home, for a relative path).

        The usual row (a plain relative path whose log is in the home) takes one ``stat`` and no
        ``Path``: a league's listing finds 100,000 logs in a fraction of a second."""
        if not stored:
            return stored
        if stored[0] != "/" and posixpath.normpath(stored) == stored:
            joined = self._home_prefix + stored  # what str(self.home / stored) is
            if os.path.isfile(joined):
                return joined
        path = Path(stored)
        own = self.home / LOGS_DIR / league / path.name
        places = [own, path] if path.is_absolute() else [self.home / path, own, path]
        found = next((place for place in places if place.is_file()), None)
        return str(found or (path if path.is_absolute() else self.home / path))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a league's rows are read: each of the hundreds of
    thousands of objects made would count towards a collection that walks all that were made
    before (a third of a league's read time), and rows hold no cycles to collect."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _make_room(path: Path) -> None:
    """The store's folder made, and its file (this user's alone: its secrets are the referee's).

    Raises:
        StoreUnusable: the folder is a file or cannot be made; the file is a folder or cannot be
            made.
    """
    home = path.parent
    if home.exists() and not home.is_dir():
        raise StoreUnusable(
            home,
            f"the arena home {home} is a file, not a folder: set GIN_HOME to a folder, or move "
            "the file aside",
        )
    if path.is_dir():
        raise StoreUnusable(
            path,
            f"the store {path} is a folder, not a file: move it aside (a new, empty store is "
            "made in its place), or set GIN_HOME to another arena home",
        )
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise StoreUnusable(
            home,
            f"the arena home {home} cannot be created ({error.strerror or error}): set GIN_HOME "
            "to a folder you can write",
        ) from None
    try:
        if not path.exists():
            path.touch(mode=0o600)
    except OSError as error:
        raise _unusable(path, error) from None
    with contextlib.suppress(OSError):  # a read-only store is still read
        os.chmod(path, 0o600)


def _unusable(path: Path, error: sqlite3.Error | OSError) -> StoreUnusable:
    """What an error opening the store says about it, and what to do."""
    code = getattr(error, "sqlite_errorcode", -1) & 0xFF  # the primary result code
    if code in DAMAGED:
        return _damaged(path, str(error))
    if code == sqlite3.SQLITE_BUSY:
        return StoreUnusable(
            path, f"the store {path} is locked ({error}): try again when the other gin is done"
        )
    why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return StoreUnusable(
        path,
        f"the store {path} cannot be opened or written ({why}): make it and {path.parent} "
        "readable and writable, or set GIN_HOME to a folder you can write",
    )


def _damaged(path: Path, why: str) -> StoreUnusable:
    return StoreUnusable(
        path,
        f"the store {path} is damaged ({why}): restore it from a backup, or move it aside to "
        "start an empty store",
    )


def _text(data: bytes) -> str:
    """A text column's value; text that is not UTF-8 (written by other code) is a damaged row.

    Raises:
        StoreDamaged: the text is not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreDamaged("text", f"{data[:40]!r} is not UTF-8") from None


def _state(row: sqlite3.Row | dict[str, Any]) -> MatchState:
    try:
        return MatchState(row["state"])
    except ValueError:
        raise StoreDamaged(f"match {row['match_id']}", f"unknown state {row['state']!r}") from None


def _match(row: sqlite3.Row | dict[str, Any]) -> MatchRow:
    return MatchRow(**{**dict(row), "state": _state(row)})


_LEAGUE_RESULTS: Final = (
    "SELECT r.* FROM results r JOIN matches m USING (match_id) WHERE r.league = ? ORDER BY m.rowid"
)
"""Every result row of a league, in schedule order."""


def _result(row: sqlite3.Row | dict[str, Any], log_path: str) -> ResultRow:
    try:
        summary = loads_json(row["summary"])
        if not isinstance(summary, dict):
            raise TypeError("the summary is not a JSON object")
        return ResultRow.from_stored(
            row["match_id"],
            row["league"],
            row["winner"],
            row["end"],
            row["reason"],
            summary,
            log_path,
        )
    except (KeyError, TypeError, ValueError, IndexError, ArithmeticError, RecursionError) as error:
        # (a hand-edited row: a key or a seat missing, a count of 1e400, JSON nested too deep)
        plain = isinstance(error, ValueError | TypeError)
        why = str(error) if plain else f"{type(error).__name__}: {error}"
        raise StoreDamaged(f"result of match {row['match_id']}", why) from None


def _without(row: sqlite3.Row, key: str) -> dict[str, Any]:
    fields = dict(row)
    del fields[key]
    return fields


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


def _bot(row: sqlite3.Row) -> BotRow:
    return BotRow(
        row["name"],
        row["version"],
        row["hash"],
        Path(row["path"]),
        row["author"],
        row["description"],
        row["submitted_at"],
    )
