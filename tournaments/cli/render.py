"""Rich renderings shared by the command line: hands, showdowns and score sheets.

Text a bot may have shaped (names, details, stderr, manifest fields) goes in as ``Text`` made by
:func:`bot_text`, never into a markup string.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from referee.bot_text import shown
from referee.conformance import CheckReport, Verdict
from referee.faults import Fault
from referee.replay import Showdown
from referee.rules import Card, CardSet, HandRecord, SeriesResult
from tournaments.standings import BotStanding, Pairwise, Standings
from tournaments.store import BotRow
from tournaments.words import END_WORDS as END_WORDS  # noqa: PLC0414 - re-exported
from tournaments.words import drawn_text, scores_text, series_verdict

SUIT_STYLES = ("green", "blue", "red", "white")
"""Clubs, diamonds, hearts, spades."""


def bot_text(text: object, style: str = "") -> Text:
    """Text that a bot may have shaped, as rich ``Text``: controls shown, no markup read."""
    return Text(shown(str(text)), style=style)


def cards_text(cards: Iterable[Card], top: Card | None = None) -> Text:
    """Cards in notation, each coloured by suit; ``top`` in reverse video."""
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        style = SUIT_STYLES[card.suit] + (" reverse bold" if card == top else "")
        text.append(str(card), style=style)
    return text


def layouts_text(record: HandRecord) -> Text:
    """One line for a knocked hand's showdown: both layouts and the layoffs."""
    outcome = record.outcome
    if outcome.knocker_layout is None or outcome.defender_layout is None:
        return Text("-")
    return Text(f"K: {outcome.knocker_layout}   D: {outcome.defender_layout}")


def showdown_text(showdown: Showdown, names: Sequence[str]) -> Text:
    """Both layouts of a knocked hand, with the layoffs and deadwood, or why it was drawn."""
    if showdown.knocker is None:
        return Text(drawn_text(showdown.end.value))
    knocker, defender = showdown.knocker, 1 - showdown.knocker
    text = Text(f"{shown(names[knocker])} ({showdown.end.value}): ", style="bold")
    text.append_text(_melds_text(showdown.knocker_melds, showdown.knocker_deadwood_cards))
    text.append(f" = {showdown.knocker_deadwood}\n")
    text.append(f"{shown(names[defender])}: ", style="bold")
    text.append_text(_melds_text(showdown.defender_melds, showdown.defender_deadwood_cards))
    text.append(f" = {showdown.defender_deadwood}")
    for cards, onto in showdown.layoffs:
        text.append("\n  lays off ")
        text.append_text(cards_text(cards))
        text.append(" onto ")
        text.append_text(cards_text(onto))
    winner = "-" if showdown.winner is None else shown(names[showdown.winner])
    scores = scores_text(winner, showdown.points, showdown.games, none="-")
    text.append(f"\n{scores}", style="bold green")
    return text


def _melds_text(melds: Sequence[CardSet], deadwood: CardSet) -> Text:
    text = Text()
    for meld in melds:
        text.append("[")
        text.append_text(cards_text(meld))
        text.append("] ")
    if deadwood:
        text.append_text(cards_text(deadwood))
    return text


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
        layouts_text(record),
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
    verdict = series_verdict(None if result.winner is None else names[result.winner])
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
        table.add_column(column, overflow="fold")
    for bot in bots:
        cells = (bot.ident, bot.hash[:12], bot.author, bot.description)
        table.add_row(*(bot_text(cell) for cell in cells))
    return table


@dataclass(frozen=True, slots=True)
class Grid:
    """A table's content, plain text only: shown by rich in a terminal (:func:`rich_table`),
    as Markdown (:func:`markdown`) or in a self-contained HTML page (:func:`html_page`)."""

    title: str
    columns: tuple[tuple[str, str], ...]
    """Each column's heading and justification (``left`` or ``right``)."""
    rows: tuple[tuple[str, ...], ...]


def rich_table(grid: Grid) -> Table:
    """The grid as a rich table (each cell plain text: a bot's name is never markup)."""
    table = Table(title=grid.title)
    for index, (heading, justify) in enumerate(grid.columns):
        if justify == "left":  # names and words: folded where the table is too narrow
            table.add_column(heading, justify="left", overflow="fold")
            continue
        widest = max((len(row[index]) for row in grid.rows), default=0)
        table.add_column(  # a figure is never split across lines ("0/98" then "4")
            heading, justify="right", no_wrap=True, min_width=widest
        )
    for row in grid.rows:
        table.add_row(*(bot_text(cell) for cell in row))
    return table


def plain_table(grid: Grid) -> str | None:
    """The grid as :func:`rich_table` prints without colour at its full width (``print_table``
    off a terminal), made without rich, which takes seconds over a league's 2,016 pairings; or
    ``None`` for a grid rich might show otherwise (text that is not plain printable characters
    one column wide with no space at either end, markup in the title): print that with rich.

    >>> print(plain_table(Grid("T", (("a", "left"), ("b", "right")), (("x", "10"),))), end="")
    T
    ┏━━━┳━━━━┓
    ┃ a ┃  b ┃
    ┡━━━╇━━━━┩
    │ x │ 10 │
    └───┴────┘
    """
    headings = [heading for heading, _ in grid.columns]
    if not headings or not _PLAIN_TITLE.fullmatch(grid.title):
        return None
    plain = _PLAIN_CELL.fullmatch
    if not all(map(_PLAIN_TITLE.fullmatch, headings)):  # rich reads headings as markup
        return None
    if not all(plain(cell) for row in grid.rows for cell in row):
        return None
    widths = [len(heading) for heading in headings]
    for index in range(len(widths)):
        widths[index] = max([widths[index], *(len(row[index]) for row in grid.rows)])
    right = [justify != "left" for _, justify in grid.columns]

    def line(cells: Sequence[str], bar: str) -> str:
        padded = (
            cell.rjust(width) if flush else cell.ljust(width)
            for cell, width, flush in zip(cells, widths, right, strict=True)
        )
        return f"{bar} " + f" {bar} ".join(padded) + f" {bar}"

    def rule(left: str, cross: str, end: str, dash: str) -> str:
        return left + cross.join(dash * (width + 2) for width in widths) + end

    lines = [
        *([grid.title] if grid.title else []),
        rule("┏", "┳", "┓", "━"),
        line(headings, "┃"),
        rule("┡", "╇", "┩", "━"),
        *(line(row, "│") for row in grid.rows),
        rule("└", "┴", "┘", "─"),
    ]
    return "\n".join(lines) + "\n"


_PLAIN_CELL: Final = re.compile(r"(?:[!-~½·](?:[ -~½·]*[!-~½·])?)?")
"""Cell text that rich shows as it is, one column a character: printable ASCII and the two other
characters the standings use, with no space at either end (an empty cell too)."""
_PLAIN_TITLE: Final = re.compile(r"(?:[!-Z\\^-~½·](?:[ -Z\\^-~½·]*[!-Z\\^-~½·])?)?")
"""A title as a cell, less ``[`` and ``]`` (rich reads a title's markup)."""


def markdown(grid: Grid) -> str:
    """The grid as a Markdown table under a heading, ready to paste into a README or an issue.

    >>> print(markdown(Grid("T", (("a", "left"), ("b", "right")), (("x|y", "1"),))), end="")
    ### T
    <BLANKLINE>
    | a | b |
    |:--|--:|
    | x\\|y | 1 |
    """

    def cell(text: str) -> str:
        return shown(text).replace("\\", "\\\\").replace("|", "\\|")

    lines = [
        f"### {cell(grid.title)}",
        "",
        "| " + " | ".join(cell(h) for h, _ in grid.columns) + " |",
    ]
    lines.append("|" + "|".join(":--" if j == "left" else "--:" for _, j in grid.columns) + "|")
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in grid.rows]
    return "\n".join(lines) + "\n"


def html_page(title: str, grids: Sequence[Grid]) -> str:
    """A self-contained HTML page of the grids (no script, no outside file), to publish."""
    sections = []
    for grid in grids:
        head = "".join(f'<th class="{j}">{html.escape(h)}</th>' for h, j in grid.columns)
        body = "".join(
            "<tr>"
            + "".join(
                f'<td class="{j}">{html.escape(shown(value))}</td>'
                for value, (_, j) in zip(row, grid.columns, strict=True)
            )
            + "</tr>"
            for row in grid.rows
        )
        sections.append(
            f'<h2>{html.escape(grid.title)}</h2>\n<div class="wrap"><table><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_PAGE_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


_PAGE_STYLE: Final = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}"
    ".wrap{overflow-x:auto}table{border-collapse:collapse;margin-bottom:1.5rem}"
    "th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;white-space:nowrap}"
    "th{background:#f4f4f4}.right{text-align:right}.left{text-align:left}"
    "tbody tr:nth-child(even){background:#fafafa}"
)


def standings_grid(standings: Standings) -> Grid:
    """One line per bot, best rating first (full detail: ``--format json``).

    A bot that won every series shows its rating as ``>= low``, one that lost every series as
    ``<= high``: the data bound it on one side only."""
    columns = (
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
    )
    rows = []
    for rank, bot in enumerate(standings.bots, start=1):
        faults = " ".join(f"{kind}:{count}" for kind, count in sorted(bot.faults.items()))
        rows.append(
            (
                str(rank),
                bot.bot,
                *rating_cells(bot),
                f"{bot.series_won:g}-{bot.series_lost:g}-{bot.series_drawn}",
                f"{bot.games_won}-{bot.games_lost}",
                str(bot.hands_won),
                f"{bot.points_for}/{bot.points_against}",
                f"{bot.gins}/{bot.knocks}/{bot.undercuts_given}",
                faults or "-",
                f"{bot.mean_ms:.1f}",
            )
        )
    title = f"Standings: {standings.league} ({standings.series} series)"
    return Grid(title, columns, tuple(rows))


def rating_cells(bot: BotStanding) -> tuple[str, str]:
    """The Elo and 95% CI cells: a bound as ``>= x`` or ``<= x`` with no interval."""
    if bot.rating_bound == "lower" and bot.rating_low is not None:
        return f">= {_signed(bot.rating_low, 0)}", "-"
    if bot.rating_bound == "upper" and bot.rating_high is not None:
        return f"<= {_signed(bot.rating_high, 0)}", "-"
    return _signed(bot.rating, 0), f"{_signed(bot.rating_low, 0)}..{_signed(bot.rating_high, 0)}"


def _signed(value: float | None, digits: int) -> str:
    """A signed figure, or a dash where there is none."""
    if value is None:
        return "-"
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if text.lstrip("-+").strip("0.") == "" else text  # never "-0"


def _elo_cell(pair: Pairwise) -> str:
    """The pairing's Elo difference and its 95% interval: a bound as ``>= x``, a dash below 4
    units, an open end as ``inf``."""
    if pair.elo_bound == "lower":
        return "-" if pair.elo_low is None else f">= {_signed(pair.elo_low, 0)}"
    if pair.elo_bound == "upper":
        return "-" if pair.elo_high is None else f"<= {_signed(pair.elo_high, 0)}"
    if pair.elo is None:
        return "-"
    if pair.los is None:
        return _signed(pair.elo, 0)
    low = "-inf" if pair.elo_low is None else _signed(pair.elo_low, 0)
    high = "+inf" if pair.elo_high is None else _signed(pair.elo_high, 0)
    return f"{_signed(pair.elo, 0)} ({low}, {high})"


def _margin_cell(pair: Pairwise) -> str:
    if pair.margin is None:
        return "-"
    if pair.margin_low is None or pair.margin_high is None:
        return f"{pair.margin:+.1f}"
    return f"{pair.margin:+.1f} ({pair.margin_low:+.1f}, {pair.margin_high:+.1f})"


def pairwise_grid(standings: Standings) -> Grid:
    """Each pairing once, from its first bot's side: counted in duplicate pairs (or series
    where there are none), the score, the Elo difference with its interval, LOS and the paired
    point margin; a dash below 4 units."""
    headings = (
        "bot",
        "opponent",
        "pairs",
        "series W-D-L",
        "pairs 0/½/1/1½/2",
        "score",
        "Elo diff (95% CI)",
        "LOS",
        "margin (95% CI)",
    )
    columns = tuple((h, "left" if h in ("bot", "opponent") else "right") for h in headings)
    rows = []
    for pair in standings.pairwise:
        if pair.bot > pair.opponent:
            continue
        penta = "-" if pair.pentanomial is None else "/".join(map(str, pair.pentanomial))
        rows.append(
            (
                pair.bot,
                pair.opponent,
                "-" if pair.pentanomial is None else str(pair.units),
                f"{pair.wins:g}-{pair.draws}-{pair.losses:g}",
                penta,
                f"{pair.score:.0%}",
                _elo_cell(pair),
                "-" if pair.los is None else f"{pair.los:.1%}",
                _margin_cell(pair),
            )
        )
    title = "Pairwise (the first bot against the second; per pair where paired)"
    return Grid(title, columns, tuple(rows))


def crosstable_grid(standings: Standings) -> Grid:
    """Rows and columns of bots, best first: each cell the row bot's score against the column
    bot and, in brackets, the units (pairs, or series where unpaired) it is over."""
    grid = standings.crosstable()
    numbers = tuple((str(number), "right") for number in range(1, len(grid.bots) + 1))
    columns = (("#", "right"), ("bot", "left"), *numbers)
    rows = []
    for number, row in enumerate(grid.bots, start=1):
        cells = []
        for column in grid.bots:
            pair = grid.cell(row, column)
            if row == column:
                cells.append("·")
            else:
                cells.append("-" if pair is None else f"{pair.score:.0%} ({pair.units})")
        rows.append((str(number), row, *cells))
    title = "Crosstable (row's score against column, units in brackets)"
    return Grid(title, columns, tuple(rows))
