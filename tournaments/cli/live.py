"""A live view of one match, fed by its log records (``gin play``).

The log's watcher hands over each record as it is written (its type and fields); the view reads
each with the log's own reader (:func:`referee.replay.read_record`) and keeps the few it shows.
Names and fault details come from the bots: they go in as ``Text`` with their controls shown.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from referee.bot_text import shown
from referee.replay import FaultRecord, HandEndRecord, Header, ResultRecord, read_record
from referee.rules import HandEnd
from tournaments.cli.render import END_WORDS, bot_text
from tournaments.runner import Progress


def seat_names(header: Header, names: tuple[str, str]) -> tuple[str, str]:
    """Each seat's ``name@version`` from the log's header (``names`` for a seat it does not
    know)."""
    first, second = (
        f"{seat.name}@{seat.version}" if seat else name
        for seat, name in zip(header.seats, names, strict=True)
    )
    return first, second


class MatchView:
    """Keeps what the screen shows; :meth:`on_record` is the match log's watcher."""

    def __init__(self, names: tuple[str, str]) -> None:
        self.names = names
        self.hands: list[HandEndRecord] = []
        self.faults: list[FaultRecord] = []
        self.totals: tuple[tuple[int, ...], tuple[int, ...]] = ((0, 0, 0), (0, 0, 0))
        self.decisions = 0
        self.ended = False
        self.sandbox: list[str] = []

    def on_record(self, record_type: str, fields: dict[str, Any]) -> None:
        """Take one log record (the log's watcher: its type and fields), read by the log's
        reader; a record it cannot read is not shown. Requests and actions, the busy records
        written while a bot's clock runs, are counted, not read."""
        if record_type == "request":
            self.decisions += 1
            return
        if record_type == "action":
            return
        record = read_record(record_type, fields)
        if isinstance(record, Header):
            self.sandbox = list(record.sandbox)
            self.names = seat_names(record, self.names)
        elif isinstance(record, HandEndRecord):
            self.hands.append(record)
            self.totals = record.totals
        elif isinstance(record, FaultRecord):
            self.faults.append(record)
        elif isinstance(record, ResultRecord):
            self.ended = True

    def _hands_table(self) -> Table:
        table = Table(title=bot_text(f"{self.names[0]}  vs  {self.names[1]}"), expand=False)
        for column in ("#", "end", "winner", "points", "games"):
            table.add_column(column, justify="right" if column in ("#", "points") else "left")
        for hand in self.hands[-12:]:
            winner = bot_text("-" if hand.winner is None else self.names[hand.winner])
            games = ", ".join(str(game + 1) for game in hand.games) or "-"
            table.add_row(
                str(hand.hand + 1),
                END_WORDS[HandEnd(hand.end)],
                winner,
                str(hand.points) if hand.winner is not None else "-",
                games,
            )
        return table

    def _score(self) -> Table:
        table = Table(title="Score sheet")
        table.add_column("player")
        games = len(self.totals[0])
        for game in range(games):
            table.add_column(f"game {game + 1}", justify="right")
        for seat in (0, 1):
            table.add_row(bot_text(self.names[seat]), *(str(total) for total in self.totals[seat]))
        return table

    def _faults(self) -> Text:
        text = Text()
        for fault in self.faults[-5:]:
            verdict = "forfeit" if fault.forfeited else f"strike {fault.strikes}"
            line = f"fault: {self.names[fault.seat]}: {fault.kind}: {fault.detail}"
            text.append_text(bot_text(f"{line} ({verdict})", style="red"))
            text.append("\n")
        return text

    def __rich__(self) -> RenderableType:
        status = Text(f"{len(self.hands)} hands, {self.decisions} decisions\n", style="dim")
        return Group(self._hands_table(), self._score(), self._faults(), status)


class LeagueView:
    """The live display of ``gin league run``: progress, ETA, running matches, faults."""

    def __init__(self) -> None:
        self.progress: Progress | None = None

    def update(self, progress: Progress) -> None:
        """The runner's listener."""
        self.progress = progress

    def __rich__(self) -> RenderableType:
        progress = self.progress
        if progress is None:
            return Text("starting...")
        finished = progress.done + progress.failed
        bar = ProgressBar(total=max(progress.total, 1), completed=finished, width=40)
        eta = progress.eta_s()
        eta_text = "?" if eta is None else f"{int(eta // 60)}m{int(eta % 60):02d}s"
        head = Text(
            f"{progress.league}: {progress.done}/{progress.total} done, "
            f"{progress.failed} failed, {len(progress.running)} running, ETA {eta_text}"
        )
        now = time.monotonic()
        running = Text(
            "\n".join(
                f"  {match_id} ({now - started:.0f}s)"
                for match_id, started in list(progress.running.items())[:8]
            )
        )
        recent = Text("\n".join(f"  {shown(line)}" for line in list(progress.recent)[-4:]))
        faults = Text("\n".join(f"  {shown(line)}" for line in progress.faults), style="red")
        return Group(head, bar, running, recent, faults)


class PlainProgress:
    """``gin league run`` off a terminal (CI, cron, a file): a line per match recorded and per
    fault, as they come, instead of a live display that only a terminal can redraw."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.printed = 0
        self.faults_seen: list[str] = []

    def update(self, progress: Progress) -> None:
        """The runner's listener."""
        new = progress.finished_now - self.printed
        if new > 0:
            for line in list(progress.recent)[-new:]:
                self.console.print(
                    f"[{progress.done}/{progress.total}] {shown(line)}",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
            self.printed = progress.finished_now
        for fault in progress.faults:
            if fault not in self.faults_seen:
                self.faults_seen.append(fault)
                self.console.print(f"fault: {shown(fault)}", markup=False, soft_wrap=True)
