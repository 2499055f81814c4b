"""Rich renderings shared by the command line: hands, showdowns and score sheets.

Text a bot may have shaped (names, details, stderr, manifest fields) goes in as ``Text`` made by
:func:`bot_text`, never into a markup string.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from referee.bot_text import shown
from referee.conformance import CheckReport, Verdict
from referee.faults import Fault
from referee.rules import HandEnd, HandRecord, SeriesResult
from referee.rules.cards import Card, CardSet
from tournaments.standings import Standings
from tournaments.store import BotRow

SUIT_STYLES = {0: "green", 1: "blue", 2: "red", 3: "white"}
END_WORDS = {
    HandEnd.GIN: "gin",
    HandEnd.KNOCK: "knock",
    HandEnd.UNDERCUT: "undercut",
    HandEnd.STOCK_EXHAUSTED: "drawn (stock)",
    HandEnd.TURN_CAP: "drawn (turn cap)",
}


def bot_text(text: object, style: str = "") -> Text:
    """Text that a bot may have shaped, as rich ``Text``: controls shown, no markup read."""
    return Text(shown(str(text)), style=style)


def cards_text(cards: CardSet | Sequence[Card]) -> Text:
    """Cards in notation, each coloured by suit."""
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        text.append(str(card), style=SUIT_STYLES[card.suit])
    return text


def showdown_text(record: HandRecord) -> Text:
    """One line for a knocked hand's showdown: both layouts and the layoffs."""
    outcome = record.outcome
    if outcome.knocker_layout is None or outcome.defender_layout is None:
        return Text("-")
    return Text(f"K: {outcome.knocker_layout}   D: {outcome.defender_layout}")


def hand_row(record: HandRecord, names: Sequence[str]) -> list[str | Text]:
    """A table row for one finished hand."""
    outcome = record.outcome
    winner = "-" if outcome.winner is None else names[outcome.winner]
    games = ", ".join(str(game + 1) for game in record.games) or "-"
    return [
        str(record.number + 1),
        names[record.dealer],
        END_WORDS[outcome.end],
        winner,
        str(outcome.points) if outcome.winner is not None else "-",
        games,
        showdown_text(record),
    ]


def hands_table() -> Table:
    """An empty table of hands, to fill with :func:`hand_row`."""
    table = Table(title="Hands", expand=False)
    for column in ("#", "dealer", "end", "winner", "points", "games"):
        table.add_column(column, justify="right" if column in ("#", "points") else "left")
    table.add_column("showdown (knocker, defender)", overflow="fold")
    return table


def score_sheet(result: SeriesResult, names: Sequence[str]) -> Table:
    """The three-game score sheet with each game's winner, and the series result."""
    games = len(result.game_winners)
    table = Table(title="Score sheet")
    table.add_column("player")
    for game in range(games):
        table.add_column(f"game {game + 1}", justify="right")
    table.add_column("games won", justify="right")
    for seat in (0, 1):
        cells: list[str | Text] = [names[seat]]
        for game in range(games):
            total = str(result.totals[seat][game])
            won = result.game_winners[game] == seat
            cells.append(Text(total, style="bold green") if won else Text(total))
        cells.append(str(result.game_winners.count(seat)))
        table.add_row(*cells)
    return table


def result_line(result: SeriesResult, names: Sequence[str]) -> str:
    """One sentence: who won the series and how it ended."""
    if result.winner is None:
        verdict = "no winner"
    else:
        verdict = f"{names[result.winner]} wins the series"
    return f"{verdict} ({result.end.value}, {len(result.hands)} hands, seed {result.seed})"


MARKS = {
    Verdict.PASSED: Text("✓", style="green"),
    Verdict.FAILED: Text("✗", style="red"),
    Verdict.UNPROVEN: Text("?", style="yellow"),
}
"""A checklist item's mark: passed, failed, or not shown either way."""


def print_checklist(console: Console, report: CheckReport) -> None:
    """The conformance checklist, one line per item; after a failure, the bot's stderr tail.

    A bot that never said hello gets one line saying so instead of a checklist."""
    if report.never_started:
        console.print(bot_text(f"{report.ident} {report.never_started}"), soft_wrap=True)
    else:
        console.print(_checklist_header(report))
        for item in report.items:
            line = MARKS[item.verdict].copy()
            detail = f": {item.detail}" if item.detail else ""
            line.append_text(bot_text(f" {item.name}{detail}"))
            console.print(line)
    if not report.passed and report.stderr:
        print_stderr(console, report.stderr, f"the bot's stderr, last {len(report.stderr)} lines:")


def _checklist_header(report: CheckReport) -> Text:
    if not report.ident:
        return bot_text(f"{report.folder}: not a valid bot folder", "bold")
    startup = "" if report.startup_ms is None else f", hello after {report.startup_ms:.0f} ms"
    line = bot_text(report.ident, "bold")
    line.append(f": {report.decisions} decisions in {report.series} series{startup}")
    return line


def print_stderr(console: Console, lines: Sequence[str], heading: str) -> None:
    """A heading, then lines of a bot's stderr one per line as it wrote them (controls shown)."""
    console.print(bot_text(heading, "dim"), soft_wrap=True)
    for line in lines:
        console.print(Text(shown(line, lines=True)), soft_wrap=True)


def fault_text(fault: Fault) -> Text:
    """A fault for the terminal: seat, kind and detail (its stderr: :func:`print_stderr`)."""
    text = Text("fault", style="red")
    text.append_text(bot_text(f" seat {fault.seat} {fault.kind.value}: {fault.detail}"))
    return text


def bots_table(bots: Sequence[BotRow]) -> Table:
    """The registry."""
    table = Table(title="Submitted bots")
    for column in ("bot", "hash", "author", "description"):
        table.add_column(column)
    for bot in bots:
        cells = (bot.ident, bot.hash[:12], bot.author, bot.description)
        table.add_row(*(bot_text(cell) for cell in cells))
    return table


def standings_table(standings: Standings) -> Table:
    """One line per bot, best rating first (full detail: ``--format json``)."""
    table = Table(title=f"Standings: {standings.league} ({standings.series} series)")
    for column, justify in (
        ("#", "right"),
        ("bot", "left"),
        ("Elo", "right"),
        ("95% CI", "right"),
        ("series W-L-D", "right"),
        ("games", "right"),
        ("hands", "right"),
        ("points +/-", "right"),
        ("gin/knock/uc", "right"),
        ("faults", "left"),
        ("ms", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for rank, bot in enumerate(standings.bots, start=1):
        faults = " ".join(f"{kind}:{count}" for kind, count in sorted(bot.faults.items()))
        table.add_row(
            str(rank),
            bot_text(bot.bot),
            f"{bot.rating:+.0f}",
            f"{bot.rating_low:+.0f}..{bot.rating_high:+.0f}",
            f"{bot.series_won:g}-{bot.series_lost:g}-{bot.series_drawn}",
            f"{bot.games_won}-{bot.games_lost}",
            str(bot.hands_won),
            f"{bot.points_for}/{bot.points_against}",
            f"{bot.gins}/{bot.knocks}/{bot.undercuts_given}",
            bot_text(faults or "-"),
            f"{bot.mean_ms:.1f}",
        )
    return table


def pairwise_table(standings: Standings) -> Table:
    """Each pairing: score, likelihood of superiority, paired point margin."""
    table = Table(title="Pairwise (row against column)")
    for column in ("bot", "opponent", "series", "score", "LOS", "paired margin (95% CI)"):
        table.add_column(column, justify="left" if column in ("bot", "opponent") else "right")
    for pair in standings.pairwise:
        if pair.bot > pair.opponent:
            continue
        margin = "-"
        if pair.margin is not None:
            interval = (
                ""
                if pair.margin_low is None
                else f" ({pair.margin_low:+.1f}, {pair.margin_high:+.1f})"
            )
            margin = f"{pair.margin:+.1f}{interval}"
        table.add_row(
            bot_text(pair.bot),
            bot_text(pair.opponent),
            str(pair.series),
            f"{pair.score:.0%}",
            f"{pair.los:.0%}",
            margin,
        )
    return table
