"""The store's results: one per match id, written once (``INSERT OR IGNORE``), so a retried,
resumed or duplicated match can never count twice; each points at its match log."""

from __future__ import annotations

import json
import os
import posixpath
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar, Final, TypeVar

from protocol.bounded import DECODER, JsonObject, JsonValue, check_json_depth, loads_json
from tournaments.formats.bulk import collector_paused
from tournaments.formats.hands import HandStats
from tournaments.store.database import (
    LOGS_DIR,
    Database,
    decode_text,
)
from tournaments.store.rows import LoggedResult, MatchState, ResultRow, StoreDamaged

__all__ = ["RESULT_TABLES", "ResultTables"]

_T = TypeVar("_T")

RESULT_TABLES: Final = """
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
-- Every result ever recorded, kept when the result is not: what ``gin league verify`` counts a
-- removed result by (nothing the engine does deletes a result or a row of this table).
CREATE TABLE IF NOT EXISTS recorded (
    match_id TEXT PRIMARY KEY,
    league TEXT NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_seat0 ON matches (seat0);
CREATE INDEX IF NOT EXISTS matches_by_duplicate ON matches (duplicate_of);
CREATE INDEX IF NOT EXISTS matches_by_seat1 ON matches (seat1);
"""


class ResultTables(Database):
    """The ``results`` table (its rows name scheduled matches: :class:`LeagueTables`' table)."""

    TABLES: ClassVar[str] = Database.TABLES + RESULT_TABLES

    def migrate(self) -> None:
        """A store from before the ledger of recorded results gets one entry per result it
        holds (once: the ``ledger`` row of ``meta`` says it was done)."""
        super().migrate()
        if self.db.execute("SELECT 1 FROM meta WHERE key = 'ledger'").fetchone() is None:
            with self.transaction() as db:
                db.execute(
                    "INSERT OR IGNORE INTO recorded SELECT match_id, league, recorded_at"
                    " FROM results"
                )
                db.execute("INSERT OR IGNORE INTO meta VALUES ('ledger', '1')")

    def record_result(self, row: ResultRow) -> bool:
        """Write a result once; returns False if the match already had one (nothing changed).
        The ledger of recorded results keeps its match id and time."""
        recorded_at = time.time()
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO recorded VALUES (?, ?, ?)",
                (row.match_id, row.league, recorded_at),
            )
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
                    self.in_home(row.log_path),
                    recorded_at,
                ),
            )
            db.execute(
                "UPDATE matches SET state = ? WHERE match_id = ?",
                (MatchState.DONE.value, row.match_id),
            )
        return cursor.rowcount > 0

    def lost_results(self, league: str) -> list[tuple[str, float]]:
        """The matches of a league whose result was recorded (the ledger has it) but that the
        store has no result for now, with when it was recorded, in schedule order: results
        removed by hand (their match set back to pending, say)."""
        rows = self.db.execute(
            "SELECT l.match_id, l.recorded_at FROM recorded l LEFT JOIN matches m"
            " USING (match_id) WHERE l.league = ?"
            " AND l.match_id NOT IN (SELECT match_id FROM results)"
            " ORDER BY m.rowid, l.match_id",
            (league,),
        ).fetchall()
        return [(str(row["match_id"]), float(row["recorded_at"])) for row in rows]

    def stray_results(self, league: str) -> list[str]:
        """The results of a league whose match the schedule does not have (its row deleted by
        hand): every other read of results leaves them out."""
        rows = self.db.execute(
            "SELECT match_id FROM results WHERE league = ?"
            " AND match_id NOT IN (SELECT match_id FROM matches) ORDER BY match_id",
            (league,),
        ).fetchall()
        return [str(row["match_id"]) for row in rows]

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
        with collector_paused():
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
        with collector_paused():
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

    def results(self, league: str, *, as_recorded: bool = False) -> list[ResultRow]:
        """Every result of a league, in schedule order (``as_recorded``: in the order they were
        recorded, as a sequential test counted them).

        Raises:
            StoreDamaged: a result cannot be read.
        """
        query = _RECORDED_RESULTS if as_recorded else _LEAGUE_RESULTS
        with collector_paused():
            rows = self.db.execute(query, (league,)).fetchall()
            return [_result(row, self._found_log(row["log_path"], league)) for row in rows]

    def read_results(
        self,
        league: str,
        read: Callable[[str, str, JsonValue], _T | None],
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
        with collector_paused():
            cursor = self.db.cursor()
            cursor.row_factory = None  # plain tuples: a fraction of the time of rows by name
            self.db.text_factory = str  # sqlite3's own UTF-8 decoding (it raises on any other)
            try:
                rows = cursor.execute(_LEAGUE_RESULTS, (league,)).fetchall()
            except sqlite3.OperationalError:  # text that is not UTF-8: results() says where
                rows = None
            finally:
                self.db.text_factory = decode_text
            if rows is None:
                return [convert(result) for result in self.results(league)]
            names = [column[0] for column in cursor.description]
            match, end, summary, log = (
                names.index(name) for name in ("match_id", "end", "summary", "log_path")
            )
            # json.loads less its work around each call (typeshed does not know the attribute)
            scan: Callable[[str, int], tuple[JsonValue, int]] = DECODER.scan_once  # type: ignore[attr-defined]
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


_LEAGUE_RESULTS: Final = (
    "SELECT r.* FROM results r JOIN matches m USING (match_id) WHERE r.league = ? ORDER BY m.rowid"
)
"""Every result row of a league, in schedule order."""
_RECORDED_RESULTS: Final = (
    "SELECT r.* FROM results r JOIN matches m USING (match_id) WHERE r.league = ? ORDER BY r.rowid"
)
"""The same, in the order they were recorded (a result is inserted once, never replaced)."""


def _result(row: sqlite3.Row | JsonObject, log_path: str) -> ResultRow:
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
