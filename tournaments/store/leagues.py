"""The store's leagues and their scheduled matches: each match's state from pending to done, its
claim by one runner at a time, a match's kept decision (its sequential test's), and an event's
rounds (each round's pairing, kept with its matches before it plays)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import ClassVar, Final

from protocol.bounded import JsonObject
from tournaments.formats.bulk import collector_paused
from tournaments.store.database import Database
from tournaments.store.rows import MatchRow, MatchState, StoreDamaged

__all__ = ["LEAGUE_TABLES", "LeagueTables"]

LEAGUE_TABLES: Final = """
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
CREATE TABLE IF NOT EXISTS event_rounds (
    league TEXT NOT NULL REFERENCES leagues(name),
    round INTEGER NOT NULL,
    pairing TEXT NOT NULL,
    PRIMARY KEY (league, round)
);
"""


class LeagueTables(Database):
    """The ``leagues``, ``matches`` and ``event_rounds`` tables (a store from before events gets
    the last, empty, when it is opened: ``CREATE TABLE IF NOT EXISTS``)."""

    TABLES: ClassVar[str] = Database.TABLES + LEAGUE_TABLES

    def migrate(self) -> None:
        """A store from before league secrets gets the column (its leagues keep public seeds)."""
        super().migrate()
        columns = {row["name"] for row in self.db.execute("PRAGMA table_info(leagues)")}
        if "secret" not in columns:
            self.db.execute("ALTER TABLE leagues ADD COLUMN secret TEXT")

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

    def leagues(self) -> list[str]:
        """Every league's name."""
        return [row["name"] for row in self.db.execute("SELECT name FROM leagues ORDER BY name")]

    def save_league(
        self,
        name: str,
        config: str,
        matches: list[MatchRow],
        secret: bytes | None,
        also: Callable[[sqlite3.Connection], None] | None = None,
    ) -> int:
        """Create or extend a league (``config``: its definition's JSON, as
        :meth:`league_config` gives it back); returns how many matches were new. ``secret`` is
        kept from the league's creation on (extending a league never changes it; a league from
        before secrets gets it at its first extension). ``also``: more writes of the caller's in
        the same transaction (an arena event's freeze); what it raises rolls all back."""
        with self.transaction() as db:
            if also is not None:
                also(db)
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
            _insert_matches(db, matches, None, ignore=True)
            return db.total_changes - before

    def save_round(self, league: str, number: int, pairing: str, matches: list[MatchRow]) -> bool:
        """Keep an event's round: its pairing (the JSON ``tournaments.rounds`` writes) and its
        matches, in one transaction, so a round is stored whole or not at all. Returns whether
        it was new: a round already stored is kept as it was, and nothing is added."""
        with self.transaction() as db:
            added = db.execute(
                "INSERT OR IGNORE INTO event_rounds (league, round, pairing) VALUES (?, ?, ?)",
                (league, number, pairing),
            )
            if added.rowcount != 1:
                return False
            _insert_matches(db, matches, league, ignore=False)
            return True

    def add_matches(self, league: str, matches: list[MatchRow]) -> int:
        """Schedule matches of an existing league (those scheduled already are left as they
        are: a sequential tie's next pair, asked for again after a kill, is added once);
        returns how many were new."""
        with self.transaction() as db:
            before = db.total_changes
            _insert_matches(db, matches, league, ignore=True)
            return db.total_changes - before

    def event_rounds(self, league: str) -> list[str]:
        """An event's stored rounds' pairings, first round first.

        Raises:
            StoreDamaged: the rounds are not numbered 0, 1, 2, ... (one is missing).
        """
        rows = self.db.execute(
            "SELECT round, pairing FROM event_rounds WHERE league = ? ORDER BY round", (league,)
        ).fetchall()
        if [row["round"] for row in rows] != list(range(len(rows))):
            raise StoreDamaged(f"rounds of league {league}", "a round is missing")
        return [str(row["pairing"]) for row in rows]

    def matches(self, league: str, state: MatchState | None = None) -> list[MatchRow]:
        """A league's matches (in schedule order), optionally in one state."""
        query = "SELECT * FROM matches WHERE league = ?"
        args: tuple[str, ...] = (league,)
        if state is not None:
            query += " AND state = ?"
            args += (state.value,)
        with collector_paused():
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

    def mirror_pending(self, match_id: str) -> bool:
        """Whether the match is the first leg of a duplicate pair whose other leg (on the same
        deals) has no result yet: what the arena holds its log and replay back for."""
        row = self.db.execute(
            "SELECT 1 FROM matches WHERE duplicate_of = ?"
            " AND match_id NOT IN (SELECT match_id FROM results) LIMIT 1",
            (match_id,),
        ).fetchone()
        return row is not None


def _state(row: sqlite3.Row | JsonObject) -> MatchState:
    try:
        return MatchState(row["state"])
    except ValueError:
        raise StoreDamaged(f"match {row['match_id']}", f"unknown state {row['state']!r}") from None


def _match(row: sqlite3.Row | JsonObject) -> MatchRow:
    return MatchRow(**{**dict(row), "state": _state(row)})


def _without(row: sqlite3.Row, key: str) -> JsonObject:
    fields = dict(row)
    del fields[key]
    return fields


def _insert_matches(
    db: sqlite3.Connection, matches: list[MatchRow], league: str | None, *, ignore: bool
) -> None:
    """Insert match rows (into ``league``, or each into its own when ``None``); ``ignore``:
    leave those already there as they are, else one already there is an error."""
    verb = "INSERT OR IGNORE" if ignore else "INSERT"
    db.executemany(
        f"{verb} INTO matches (match_id, league, pairing, series_index, seat0, seat1, seed,"
        " duplicate_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                m.match_id,
                m.league if league is None else league,
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
