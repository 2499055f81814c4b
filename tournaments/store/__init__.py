"""The store: one SQLite file (WAL) with bots, leagues, scheduled matches and results.

:class:`Store` is the league store: its database (:mod:`~tournaments.store.database`: the
connection, transactions, schema and migrations) with the tables of
:mod:`~tournaments.store.bots`, :mod:`~tournaments.store.leagues` and
:mod:`~tournaments.store.results`, whose rows are :mod:`~tournaments.store.rows`' records. The
hosted arena adds its own tables on the same file (``tournaments.arena.store``).
"""

from __future__ import annotations

from typing import ClassVar

from tournaments.store.bots import BOT_TABLES, BotTables
from tournaments.store.database import (
    BOTS_DIR,
    LOGS_DIR,
    META_TABLES,
    SCHEMA_VERSION,
    StoreUnusable,
)
from tournaments.store.leagues import LEAGUE_TABLES, LeagueTables
from tournaments.store.results import RESULT_TABLES, ResultTables
from tournaments.store.rows import (
    BotRow,
    LoggedResult,
    MatchRow,
    MatchState,
    ResultRow,
    StoreDamaged,
)

__all__ = [
    "BOTS_DIR",
    "LOGS_DIR",
    "SCHEMA_VERSION",
    "BotRow",
    "LoggedResult",
    "MatchRow",
    "MatchState",
    "ResultRow",
    "Store",
    "StoreDamaged",
    "StoreUnusable",
]


class Store(BotTables, LeagueTables, ResultTables):
    """A league store: bots, leagues and their matches, results; each method one short
    transaction."""

    TABLES: ClassVar[str] = META_TABLES + BOT_TABLES + LEAGUE_TABLES + RESULT_TABLES
