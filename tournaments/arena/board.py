"""The ladder's leaderboard: the standings of its results with each bot's state, owner and last
game, computed in a thread after each pair and shown from the latest snapshot (a page never waits
for a fit)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore, EntrantState, RatingPoint
from tournaments.registry import parse_spec
from tournaments.stats.standings import BotStanding, Standings, read_standings

__all__ = ["Board", "BoardRow", "compute_board", "new_points"]


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One bot's line on the leaderboard."""

    ident: str
    name: str
    version: str
    author: str | None
    """Who owns its name (``None``: entered by the organiser, not uploaded)."""
    state: EntrantState
    reason: str
    """Why it is suspended or retired (empty when active)."""
    rating: float | None
    """``None``: no series yet."""
    low: float | None
    high: float | None
    series: int
    score: float
    last_active: float | None
    faults: int


@dataclass(frozen=True, slots=True)
class Board:
    """The leaderboard at one moment, best rating first (bots without a series last)."""

    at: float
    rows: tuple[BoardRow, ...]
    standings: Standings | None
    """The ladder's full standings (``None``: no result yet)."""
    series: int
    approximate: bool = False
    """The intervals come from the large-field approximation (docs/standings.md)."""

    @classmethod
    def empty(cls) -> Board:
        """The board before its first computation."""
        return cls(0.0, (), None, 0)

    def row(self, ident: str) -> BoardRow | None:
        """A bot's line."""
        return next((row for row in self.rows if row.ident == ident), None)


def compute_board(store: ArenaStore) -> Board:
    """The leaderboard as the store has it now (the standings' fit included: seconds on a
    hundred thousand results; run it in a thread)."""
    at = time.time()
    entrants = store.entrants()
    owners = store.owners()
    standings = read_standings(store, LADDER) if LADDER in store.leagues() else None
    lines: dict[str, BotStanding] = {}
    if standings is not None and standings.series:
        lines = {line.bot: line for line in standings.bots}
    else:
        standings = None
    last = store.last_active(LADDER)
    rows = []
    for entrant in entrants:
        name, version = parse_spec(entrant.ident)
        line = lines.get(entrant.ident)
        rows.append(
            BoardRow(
                entrant.ident,
                name,
                version or "",
                owners.get(name),
                entrant.state,
                entrant.reason,
                None if line is None else line.rating,
                None if line is None else line.rating_low,
                None if line is None else line.rating_high,
                0 if line is None else line.series,
                0.0 if line is None else line.score,
                last.get(entrant.ident),
                0 if line is None else sum(line.faults.values()),
            )
        )
    rows.sort(key=lambda row: (row.rating is None, -(row.rating or 0.0), row.ident))
    approximate = standings is not None and standings.approximate
    return Board(
        at, tuple(rows), standings, 0 if standings is None else standings.series, approximate
    )


def new_points(before: Board, after: Board) -> list[RatingPoint]:
    """The rating points to keep: each bot whose series count changed between two boards."""
    old = {row.ident: row.series for row in before.rows}
    return [
        RatingPoint(row.ident, after.at, row.rating, row.low, row.high, row.series)
        for row in after.rows
        if row.rating is not None and row.series != old.get(row.ident, 0)
    ]
