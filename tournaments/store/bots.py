"""The store's registry of bots: one row per submitted name and version (its code's hash and
copy), never deleted (a removed bot keeps its hash for the results that name it)."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from pathlib import Path
from typing import ClassVar, Final

from tournaments.store.database import BOTS_DIR, Database
from tournaments.store.rows import BotRow

__all__ = ["BOT_TABLES", "BotTables"]

BOT_TABLES: Final = """
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
"""


class BotTables(Database):
    """The ``bots`` table."""

    TABLES: ClassVar[str] = Database.TABLES + BOT_TABLES

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
                    self.in_home(str(row.path)),
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

    def bots(self, name: str | None = None) -> list[BotRow]:
        """Every bot not removed (``name``: every version of that name), by name then
        submission time."""
        if name is None:
            rows = self.db.execute(
                "SELECT * FROM bots WHERE removed = 0 ORDER BY name, submitted_at"
            ).fetchall()
        else:
            rows = self.db.execute(
                "SELECT * FROM bots WHERE removed = 0 AND name = ? ORDER BY submitted_at",
                (name,),
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
