"""A live view of one match, fed by its log records (``gin play``).

The log's watcher hands over each record as it is written, typed (:mod:`referee.records`); the
view keeps the few it shows.
Names and fault details come from the bots: they go in as ``Text`` with their controls shown.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Final

from rich.console import Console, Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from referee.bot_text import shown
from referee.records import FaultRecord, HandEndRecord, Header, LogRecord, Request, ResultRecord
from referee.rules import HandEnd
from tournaments.cli.render import END_WORDS, bot_text, rating_cells
from tournaments.runner import Progress
from tournaments.stats.standings import Standings
from tournaments.store import StoreDamaged

__all__ = ["LeagueView", "MatchView", "PlainProgress"]


RATE_AFTER_S: Final = 5.0
"""The live view shows the matches per minute once the run has gone on this long."""
LIVE_HANDS: Final = 12
"""The last hands the live view of ``gin play`` shows (the rest are in its table at the end)."""
STANDINGS_EVERY_S: Final = 2.0
"""How often at most the live league view counts the standings again (they are a fit)."""


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

    def __init__(
        self,
        names: tuple[str, str],
        on_hand: Callable[[Text], None] | None = None,
        *,
        rows: int = LIVE_HANDS,
    ) -> None:
        """``on_hand``: given each hand's line (:meth:`hand_line`) as the hand ends (``gin play``
        off a terminal prints it); ``rows``: the last hands the live table shows."""
        self.names = names
        self.on_hand = on_hand
        self.rows = rows
        self.hands: list[HandEndRecord] = []
        self.faults: list[FaultRecord] = []
        self.totals: tuple[tuple[int, ...], tuple[int, ...]] = ((0, 0, 0), (0, 0, 0))
        self.decisions = 0
        self.ended = False
        self.sandbox: list[str] = []

    def on_record(self, record: LogRecord) -> None:
        """Take one log record (the log's watcher). Requests, the busy records written while a
        bot's clock runs, are counted; actions are passed over."""
        if isinstance(record, Request):
            self.decisions += 1
        elif isinstance(record, Header):
            self.sandbox = list(record.sandbox)
            self.names = seat_names(record, self.names)
        elif isinstance(record, HandEndRecord):
            self.hands.append(record)
            self.totals = record.totals
            if self.on_hand is not None:
                self.on_hand(self.hand_line(record))
        elif isinstance(record, FaultRecord):
            self.faults.append(record)
        elif isinstance(record, ResultRecord):
            self.ended = True

    def _winner(self, hand: HandEndRecord) -> str:
        return "-" if hand.winner is None else self.names[hand.winner]

    def hand_line(self, hand: HandEndRecord) -> Text:
        """One hand in a line: its number, how it ended, who won how many points and the games
        they count in (a bot's name with its controls shown)."""
        games = ", ".join(str(game + 1) for game in hand.games) or "none"
        end = END_WORDS[HandEnd(hand.end)]
        if hand.winner is None:
            line = f"hand {hand.hand + 1}: {end}, no points"
        else:
            won = f"{self._winner(hand)} wins {hand.points} points"
            line = f"hand {hand.hand + 1}: {end}, {won} (games {games})"
        return bot_text(line)

    def hands_table(self, rows: int | None = None) -> Table:
        """The hands, the last ``rows`` of them (``None``: every one); its title says which are
        shown and how many are not."""
        shown_hands = self.hands if rows is None else self.hands[-rows:]
        title = bot_text(f"{self.names[0]}  vs  {self.names[1]}")
        hidden = len(self.hands) - len(shown_hands)
        caption = None
        if hidden:
            caption = (
                f"hands {hidden + 1}-{len(self.hands)} of {len(self.hands)}: hands 1-{hidden} "
                "scrolled out (every hand is in the table at the end)"
            )
        table = Table(title=title, caption=caption, caption_justify="left", expand=False)
        for column in ("#", "end", "winner", "points", "games"):
            table.add_column(column, justify="right" if column in ("#", "points") else "left")
        for hand in shown_hands:
            games = ", ".join(str(game + 1) for game in hand.games) or "-"
            table.add_row(
                str(hand.hand + 1),
                END_WORDS[HandEnd(hand.end)],
                bot_text(self._winner(hand)),
                str(hand.points) if hand.winner is not None else "-",
                games,
            )
        return table

    def score_sheet(self) -> Table:
        """Each seat's total in each game so far."""
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

    def status(self) -> Text:
        """The hands and decisions so far."""
        return Text(f"{len(self.hands)} hands, {self.decisions} decisions", style="dim")

    def __rich__(self) -> RenderableType:
        return Group(self.hands_table(self.rows), self.score_sheet(), self._faults(), self.status())


class LeagueView:
    """The live display of ``gin league run``: progress, throughput and ETA, the running
    standings with their intervals, the running matches, the last results and the faults; in a
    layout that fits 80 columns (long match ids are folded, never cut)."""

    def __init__(
        self,
        standings: Callable[[], Standings] | None = None,
        *,
        every_s: float = STANDINGS_EVERY_S,
    ) -> None:
        """``standings``: how to count the standings now, asked in the runner's thread (the
        store is not for the display's thread), at most every ``every_s`` seconds."""
        self.progress: Progress | None = None
        self.count = standings
        self.every_s = every_s
        self.standings: Standings | None = None
        self._counted_at: float | None = None
        self._counted_done = -1

    def update(self, progress: Progress) -> None:
        """The runner's listener."""
        self.progress = progress
        now = time.monotonic()
        fresh = self._counted_at is None or now - self._counted_at >= self.every_s
        if self.count is not None and progress.done != self._counted_done and fresh:
            self._counted_at, self._counted_done = now, progress.done
            with contextlib.suppress(StoreDamaged):  # the run says so itself; keep the last
                self.standings = self.count()

    def __rich__(self) -> RenderableType:
        progress = self.progress
        if progress is None:
            return Text("starting...")
        finished = progress.done + progress.failed
        bar = ProgressBar(total=max(progress.total, 1), completed=finished, width=40)
        eta = progress.eta_s()
        eta_text = "?" if eta is None else f"{int(eta // 60)}m{int(eta % 60):02d}s"
        elapsed = time.monotonic() - progress.started_at
        rate = f"{progress.finished_now / elapsed * 60:.1f}" if elapsed >= RATE_AFTER_S else "?"
        head = Text(
            f"{progress.league}: {progress.done}/{progress.total} done, "
            f"{progress.failed} failed, {len(progress.running)} running, "
            f"{rate} matches/min, ETA {eta_text}"
        )
        now = time.monotonic()
        running = Text(
            "\n".join(
                f"  {match_id} ({now - started:.0f}s)"
                for match_id, started in list(progress.running.items())[:8]
            ),
            overflow="fold",
        )
        recent = Text(
            "\n".join(f"  {shown(line)}" for line in list(progress.recent)[-4:]), overflow="fold"
        )
        faults = Text(
            "\n".join(f"  {shown(line)}" for line in progress.faults), style="red", overflow="fold"
        )
        parts: list[RenderableType] = [head, bar, Text()]  # the bar ends no line of its own
        if self.standings is not None and self.standings.bots:
            parts.append(_running_standings(self.standings))
        return Group(*parts, running, recent, faults)


def _running_standings(standings: Standings) -> Table:
    """The standings so far, narrow: rank, bot, rating with its 95% interval, series W-L-D."""
    table = Table(title=f"standings after {standings.series} series", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("bot", overflow="fold")
    table.add_column("Elo", justify="right")
    table.add_column("95% CI", justify="right", overflow="fold")
    table.add_column("W-L-D", justify="right")
    for rank, bot in enumerate(standings.bots, start=1):
        elo, interval = rating_cells(bot)
        record = f"{bot.series_won:g}-{bot.series_lost:g}-{bot.series_drawn}"
        table.add_row(str(rank), bot_text(bot.bot), elo, interval, record)
    return table


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
