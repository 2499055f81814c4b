"""The store's database: one SQLite file (WAL), its connection, transactions, schema version and
migrations, and the errors that say what is wrong with it.

The tables are the store's other modules' (bots, leagues and matches, results: composed into
:class:`tournaments.store.Store`), and the hosted arena's (``tournaments.arena.store``), all on
this one connection.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar, Final

from tournaments.store.rows import StoreDamaged

__all__ = [
    "BOTS_DIR",
    "LOGS_DIR",
    "META_TABLES",
    "SCHEMA_VERSION",
    "Database",
    "StoreUnusable",
    "decode_text",
]

SCHEMA_VERSION: Final = 1
"""The newest store layout this code reads and writes (the ``schema`` row of ``meta``)."""
SECRET_BYTES: Final = 32
LOGS_DIR: Final = "logs"
BOTS_DIR: Final = "bots"
"""Where the arena home keeps match logs: ``<home>/logs/<league>/<match>.jsonl``."""
DAMAGED: Final = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a file that is not (or no longer) a sound database."""

META_TABLES: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StoreUnusable(ValueError):  # noqa: N818 - named for what is so, as StoreDamaged
    """The store cannot be opened: its file is damaged, a folder, unreadable or unwritable, or
    from a newer arena; or its folder (the arena home) is a file or cannot be made. The message
    names the path and says what to do."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


class Database:
    """The SQLite file: its connection, transactions, schema and migrations, and where paths in
    it are relative to. The tables' own classes (:class:`~tournaments.store.bots.BotTables`, ...)
    add the methods; each method is one short transaction."""

    TABLES: ClassVar[str] = META_TABLES
    """The schema this class creates (``CREATE ... IF NOT EXISTS``); each table's class adds
    its own."""

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
        self.db.text_factory = decode_text
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        problems = [row[0] for row in self.db.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _damaged(self.path, problems[0])
        self._check_version()
        self.db.executescript(self.TABLES)
        self.migrate()
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

    def migrate(self) -> None:
        """Bring tables of an older store up to this schema (each tables' class adds its steps,
        after its base's)."""

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

    def in_home(self, log: str) -> str:
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


def decode_text(data: bytes) -> str:
    """A text column's value; text that is not UTF-8 (written by other code) is a damaged row.

    Raises:
        StoreDamaged: the text is not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreDamaged("text", f"{data[:40]!r} is not UTF-8") from None
