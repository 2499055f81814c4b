"""The ladder's leaderboard: the standings of its results with each bot's state, owner and last
game, computed in a thread after each pair and shown from the latest snapshot (a page never waits
for a fit)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Final

from protocol.bounded import JsonObject
from tournaments.arena.child import Child, serve
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore, EntrantState, RatingPoint
from tournaments.registry import parse_spec
from tournaments.stats.standings import BotStanding, Standings, read_standings

__all__ = [
    "Board",
    "BoardProcess",
    "BoardRow",
    "board_json",
    "compute_board",
    "new_points",
    "standings_documents",
]


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
    documents: tuple[bytes, bytes] | None = None
    """``standings.json`` and ``standings.csv`` of :attr:`standings`, made with the board (in
    the fit's process on a big ladder: a thousand bots' crosstable is seconds of the web's
    interpreter otherwise)."""

    @classmethod
    def empty(cls) -> Board:
        """The board before its first computation."""
        return cls(0.0, (), None, 0)

    def row(self, ident: str) -> BoardRow | None:
        """A bot's line."""
        return next((row for row in self.rows if row.ident == ident), None)


_ROW_FIELDS: Final = tuple(field.name for field in fields(BoardRow))


def compute_board(store: ArenaStore) -> Board:
    """The leaderboard as the store has it now (the standings' fit included: seconds on a
    hundred thousand results; run it in a thread, or in a :class:`BoardProcess`)."""
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
    series = 0 if standings is None else standings.series
    documents = None if standings is None else standings_documents(standings)
    return Board(at, tuple(rows), standings, series, approximate, documents)


def board_json(board: Board) -> bytes:
    """The board as ``/api/leaderboard`` answers it (docs/arena.md), compact JSON."""
    document: JsonObject = {
        "at": board.at,
        "series": board.series,
        "approximate": board.approximate,
        "bots": [_row_json(row) for row in board.rows],
    }
    return _compact(document)


def _row_json(row: BoardRow) -> JsonObject:
    data: JsonObject = {name: getattr(row, name) for name in _ROW_FIELDS}
    data["state"] = row.state.value
    return data


def _compact(document: JsonObject) -> bytes:
    """JSON as the app's answers write it (Starlette's ``JSONResponse``)."""
    text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode()


def standings_documents(standings: Standings) -> tuple[bytes, bytes]:
    """``standings.json`` (compact, as the app's JSON answers are) and ``standings.csv``."""
    return _compact(standings.to_dict()), standings.to_csv().encode()


def new_points(before: Board, after: Board) -> list[RatingPoint]:
    """The rating points to keep: each bot whose series count changed between two boards."""
    old = {row.ident: row.series for row in before.rows}
    return [
        RatingPoint(row.ident, after.at, row.rating, row.low, row.high, row.series)
        for row in after.rows
        if row.rating is not None and row.series != old.get(row.ident, 0)
    ]


class BoardProcess(Child):
    """:func:`compute_board` in a process of its own (``python -m tournaments.arena.board
    STORE``, a :class:`Child`): a big ladder's fit is seconds of pure Python, which in a thread
    of the server would hold the interpreter's lock from the web's requests all that time. The
    process reads the store on its own connection."""

    def __init__(self, store_path: Path) -> None:
        super().__init__("the board's process", "tournaments.arena.board", str(store_path))
        self.store_path = store_path

    def compute(self) -> Board:
        """The board as the store has it now.

        Raises:
            RuntimeError: the process failed to compute it (its one-line reason) or ended.
        """
        value = self.ask("board")
        if not isinstance(value, Board):
            raise RuntimeError("the board's process answered no board")
        return value


def _serve(store_path: str) -> None:
    """The board's process: a board for each request, until its input ends."""
    stores: list[ArenaStore] = []

    def board(_: object) -> Board:
        if not stores:
            stores.append(ArenaStore(Path(store_path)))
        return compute_board(stores[0])

    serve(board)


if __name__ == "__main__":  # its classes pickled by their module's name, not as __main__'s
    from tournaments.arena.board import _serve as serve_boards

    serve_boards(sys.argv[1])
