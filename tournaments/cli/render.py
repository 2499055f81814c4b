"""Rich renderings shared by the command line: hands, showdowns and score sheets.

Text a bot may have shaped (names, details, stderr, manifest fields) goes in as ``Text`` made by
:func:`bot_text`, never into a markup string.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, NamedTuple

from rich.cells import cell_len
from rich.console import Console, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from referee.bot_text import shown
from referee.conformance import CheckReport, Verdict
from referee.faults import Fault
from referee.replay import Showdown
from referee.rules import Card, CardSet, HandRecord, SeriesResult
from tournaments.stats.standings import BotStanding, Pairwise, Standings
from tournaments.store import BotRow
from tournaments.views.words import END_WORDS as END_WORDS  # noqa: PLC0414 - re-exported
from tournaments.views.words import drawn_text, scores_text, series_verdict

__all__ = [
    "END_WORDS",
    "GLOSSARY",
    "Grid",
    "bot_text",
    "bots_table",
    "cards_text",
    "crosstable_grid",
    "fault_text",
    "fit",
    "hand_row",
    "hands_table",
    "html_page",
    "markdown",
    "pairwise_grid",
    "plain_table",
    "print_checklist",
    "print_stderr",
    "rating_cells",
    "result_line",
    "rich_table",
    "score_sheet",
    "showdown_text",
    "standings_grid",
]


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
    """A table's content, plain text only: shown by rich in a terminal (:func:`rich_table`,
    fitted to its width by :func:`fit`), as Markdown (:func:`markdown`) or in a self-contained
    HTML page (:func:`html_page`)."""

    title: str
    columns: tuple[tuple[str, str], ...]
    """Each column's heading and justification (``left`` or ``right``)."""
    rows: tuple[tuple[str, ...], ...]
    drop: tuple[str, ...] = ()
    """The headings of the columns a narrow terminal hides, the first hidden first."""
    names: tuple[str, ...] = ()
    """The headings of the columns of bots' names: never folded (aliased where they cannot fit)."""
    aliases: tuple[tuple[str, str], ...] = ()
    """Each bot's name and the alias that stands for it where names cannot fit, best first."""
    stack_after: int = 0
    """Where not 0: a narrow terminal shows the columns from this one on in blocks, one under
    another, each with the columns before it again (instead of hiding any)."""
    essential: tuple[str, ...] = ()
    """The headings of the columns whole names may not push out: where they would, the names
    give way to their aliases (if that keeps these columns)."""


def rich_table(grid: Grid, widths: Sequence[int] | None = None) -> Table:
    """The grid as a rich table (each cell plain text: a bot's name is never markup); each
    column as wide as ``widths`` says (a heading wider wraps at its spaces), if given."""
    table = Table(title=grid.title)
    if widths is not None:
        for (heading, justify), width in zip(grid.columns, widths, strict=True):
            flush: JustifyMethod = "left" if justify == "left" else "right"
            table.add_column(heading, justify=flush, width=width, overflow="fold")
        for row in grid.rows:
            table.add_row(*(bot_text(cell) for cell in row))
        return table
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


@dataclass(frozen=True, slots=True)
class Fit:
    """A grid laid out for a terminal of a given width (:func:`fit`)."""

    blocks: tuple[tuple[Grid, tuple[int, ...]], ...]
    """The tables to print one under another: each a grid and its columns' widths."""
    notes: tuple[str, ...]
    """The lines under them: the aliases' legend, then what is hidden or stacked."""

    def renderables(self) -> list[RenderableType]:
        """The tables, then the notes (as :func:`bot_text`: the legend holds bots' names)."""
        tables: list[RenderableType] = [rich_table(grid, widths) for grid, widths in self.blocks]
        return [*tables, *(bot_text(note) for note in self.notes)]


def fit(grid: Grid, width: int) -> Fit:
    """The grid laid out in ``width`` columns: every name whole on its line, or, where even
    with every ``drop`` column hidden the widest cannot fit, each as its alias, with a legend
    under the table; the ``drop`` columns hidden, first first, until the rest fit (or, with
    ``stack_after``, the columns put in blocks), and a line under the table saying so.

    >>> grid = Grid("T", (("bot", "left"), ("Elo", "right"), ("ms", "right")),
    ...             (("greedy@1.0.0", "+12", "2.5"),), drop=("ms",), names=("bot",))
    >>> laid_out = fit(grid, 24)
    >>> [heading for heading, _ in laid_out.blocks[0][0].columns], laid_out.blocks[0][1]
    (['bot', 'Elo'], (12, 3))
    >>> laid_out.notes
    ('1 column hidden at 24 columns: --wide shows all',)
    """
    spans = _spans(grid)
    blocks = _blocks(grid, spans, width)
    legend: list[str] = []
    if grid.aliases and (not _fits(blocks, spans, width) or _hides_essential(grid, blocks)):
        aliased = _aliased(grid)
        aliased_spans = _spans(aliased)
        aliased_blocks = _blocks(aliased, aliased_spans, width)
        if not _fits(blocks, spans, width) or not _hides_essential(aliased, aliased_blocks):
            legend = _legend(grid, width)
            grid, spans, blocks = aliased, aliased_spans, aliased_blocks
    laid_out = []
    for number, block in enumerate(blocks):
        shown_grid = _columns(grid, block, title=grid.title if number == 0 else "")
        laid_out.append((shown_grid, _widths([spans[index] for index in block], width)))
    return Fit(tuple(laid_out), (*legend, *_said(grid, blocks, width)))


class _Span(NamedTuple):
    """A column's least and natural widths, and how many lines its heading and its cells take
    at each width between (``[0]`` at the least): a heading, and the cells of a column of
    words (a bot's faults), wrap at their spaces."""

    least: int
    natural: int
    heading: tuple[int, ...]
    cells: tuple[int, ...]


def _spans(grid: Grid) -> list[_Span]:
    """Each column's span: a name or a figure whole on its line, a heading wrapped at its
    spaces, and the words of any other left column (a bot's faults) too."""
    spans = []
    for index, (heading, justify) in enumerate(grid.columns):
        cells = [shown(row[index]) for row in grid.rows]
        natural = max([1, cell_len(heading), *map(cell_len, cells)])
        words = cells if justify == "left" and heading not in grid.names else []
        least = max([1, *(cell_len(word) for text in [heading, *words] for word in text.split())])
        if not words:
            least = max([least, *map(cell_len, cells)])
        widths = range(least, natural + 1)
        spans.append(
            _Span(
                least,
                natural,
                tuple(_lines(heading, width) for width in widths),
                tuple(sum(_lines(cell, width) for cell in words) for width in widths),
            )
        )
    return spans


def _lines(text: str, width: int) -> int:
    """How many lines the text takes, wrapped at its spaces in ``width`` columns (no word in it
    wider).

    >>> _lines("Elo diff (95% CI)", 8), _lines("Elo diff (95% CI)", 17)
    (2, 1)
    """
    lines, used = 1, -1
    for word in text.split():
        if used >= 0 and used + 1 + cell_len(word) > width:
            lines, used = lines + 1, -1
        used += 1 + cell_len(word)
    return lines


def _table_width(widths: Iterable[int]) -> int:
    """How wide a table of columns this wide is: each padded by a space either side, with a
    rule between two and at either end."""
    widths = list(widths)
    return sum(widths) + 3 * len(widths) + 1


def _blocks(grid: Grid, spans: Sequence[_Span], width: int) -> list[list[int]]:
    """The columns (their indices) of each table to print: the fewest ``drop`` columns hidden
    that lets the rest fit, or, with ``stack_after``, as many columns a block as fit; the
    narrowest there is where nothing fits."""
    if grid.stack_after:
        fixed = list(range(min(grid.stack_after, len(spans))))
        blocks = [fixed.copy()]
        for index in range(len(fixed), len(spans)):
            wider = [spans[column].least for column in (*blocks[-1], index)]
            if len(blocks[-1]) > len(fixed) and _table_width(wider) > width:
                blocks.append(fixed.copy())
            blocks[-1].append(index)
        return blocks
    headings = [heading for heading, _ in grid.columns]
    kept = list(range(len(spans)))
    hidden: list[int] = []
    for heading in grid.drop:
        if _fits([kept], spans, width):
            break
        if heading in headings:
            kept.remove(headings.index(heading))
            hidden.append(headings.index(heading))
    for index in reversed(hidden[:-1]):  # one hidden later, or narrower, may fit again now
        wider = sorted([*kept, index])
        if _fits([wider], spans, width):
            kept = wider
    return [kept]


def _hides_essential(grid: Grid, blocks: Sequence[Sequence[int]]) -> bool:
    """Whether the blocks leave out a column the names may not push out (``essential``)."""
    shown_headings = {grid.columns[index][0] for block in blocks for index in block}
    return any(heading not in shown_headings for heading in grid.essential)


def _fits(blocks: Sequence[Sequence[int]], spans: Sequence[_Span], width: int) -> bool:
    return all(_table_width(spans[index].least for index in block) <= width for block in blocks)


def _widths(spans: Sequence[_Span], width: int) -> tuple[int, ...]:
    """The columns' widths: each its least, then, as ``width`` leaves room, wider, to make the
    heading row as low as it can be, then to fold the cells of a column of words over the
    fewest lines (where everything fits, each column its natural width)."""
    widths = [span.least for span in spans]
    room = width - _table_width(widths)
    for height in range(1, max((span.heading[0] for span in spans), default=1) + 1):
        wider = [span.least + _first(span.heading, height) for span in spans]
        if sum(wider) - sum(widths) <= room:
            room -= sum(wider) - sum(widths)
            widths = wider
            break
    for index, span in enumerate(spans):
        within = span.cells[widths[index] - span.least :][: room + 1]
        more = _first(within, min(within)) if within else 0
        widths[index] += more
        room -= more
    return tuple(widths)


def _first(lines: Sequence[int], most: int) -> int:
    """How many columns more a text needs to take at most ``most`` lines (``lines``: how many
    it takes at each width from its least)."""
    return next(more for more, count in enumerate(lines) if count <= most)


def _columns(grid: Grid, indices: Sequence[int], title: str) -> Grid:
    """The grid with only these columns, and this title."""
    columns = tuple(grid.columns[index] for index in indices)
    rows = tuple(tuple(row[index] for index in indices) for row in grid.rows)
    return replace(grid, title=title, columns=columns, rows=rows)


def _named(grid: Grid) -> list[int]:
    return [index for index, (heading, _) in enumerate(grid.columns) if heading in grid.names]


def _aliased(grid: Grid) -> Grid:
    """The grid with each name in its name columns replaced by its alias."""
    alias, named = dict(grid.aliases), set(_named(grid))
    rows = tuple(
        tuple(alias.get(cell, cell) if index in named else cell for index, cell in enumerate(row))
        for row in grid.rows
    )
    return replace(grid, rows=rows)


def _legend(grid: Grid, width: int) -> list[str]:
    """The aliases of the names the grid shows, as ``#1 = name``, as many to a line as fit."""
    shown_names = {row[index] for row in grid.rows for index in _named(grid)}
    lines: list[str] = []
    for name, alias in grid.aliases:
        if name not in shown_names:
            continue
        entry = f"{alias} = {name}"
        if lines and cell_len(shown(f"{lines[-1]}  {entry}")) <= width:
            lines[-1] = f"{lines[-1]}  {entry}"
        else:
            lines.append(entry)
    return lines


def _said(grid: Grid, blocks: Sequence[Sequence[int]], width: int) -> list[str]:
    """The line under the table saying which columns are hidden, or that it is in blocks."""
    if len(blocks) > 1:
        return [f"stacked in {len(blocks)} blocks at {width} columns: --wide shows one table"]
    hidden = [heading for index, (heading, _) in enumerate(grid.columns) if index not in blocks[0]]
    if not hidden:
        return []
    count = f"{len(hidden)} column{'s' if len(hidden) > 1 else ''} hidden at {width} columns"
    line = f"{count} ({', '.join(hidden)}): --wide shows all"
    return [line if cell_len(line) <= width else f"{count}: --wide shows all"]


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


GLOSSARY: Final = {
    "#": "the rank, best rating first",
    "bot": "the bot, as name@version",
    "opponent": "the bot it played, as name@version",
    "Elo": (
        "the rating from a Bradley-Terry fit of every result, centred on the field's mean; "
        ">= or <= marks a bound (a bot that won, or lost, every series): its place is the fit's, "
        "and its 95% CI reads won all or lost all"
    ),
    "95% CI": "the rating's 95% interval",
    "series W-L-D": "series won, lost and drawn (a series the hand cap ended even is a draw)",
    "games": "games won and lost, of the three a series scores",
    "hands": "hands won",
    "points +/-": "points scored for and against",
    "gin/knock/uc": "hands ended by the bot's gin, by its knock, and undercuts it made",
    "faults": "faults by kind (timeouts, illegal moves, crashes...)",
    "ms": "mean milliseconds per decision",
    "pairs": "complete duplicate pairs (both legs, seats swapped, on the same deals)",
    "score": "the bot's share of its series, draws half (pairwise: the mean unit score)",
    "draws": "the share of series drawn",
    "pairs ratio": "pairs won (1½ or 2 of 2) over pairs lost (0 or ½), as fastchess counts them",
    "at 95%": (
        "what the pairing shows at 95%: better, worse or undecided by its series (Elo interval, "
        "or a sweep's exact bound), qualified by the point margin (series only, split); "
        "too few pairs below 4 (docs/standings.md)"
    ),
    "Elo diff (95% CI)": (
        "the Elo difference at the score, with its 95% interval (from 4 pairs); a sweep as "
        ">= bound (all won), exact from one pair"
    ),
    "LOS": "likelihood of superiority: the chance the first bot is the stronger (from 4 pairs)",
    "LOS next": (
        "likelihood of superiority over the bot ranked next below, from the fit of every result"
    ),
    "nElo (95% CI)": (
        "normalized Elo: the score's distance from even over its spread per series, on the Elo "
        "scale (as fishtest and fastchess), with its 95% interval (from 4 pairs)"
    ),
    "margin (95% CI)": "the mean point margin per pair, with its 95% interval",
    "pairs 0/½/1/1½/2": "the pentanomial: pairs in which the bot scored 0, ½, 1, 1½ or 2 series",
}
"""What each heading of the standings' tables means (the HTML page's legend)."""


def html_page(title: str, grids: Sequence[Grid], glossary: dict[str, str] | None = None) -> str:
    """A self-contained HTML page of the grids (no script, no outside file), to publish: headed
    by ``title``, or by the first grid's title where that one only adds to it (shown once), and,
    with ``glossary``, a legend of the headings the page shows."""
    sections = []
    heading = title
    for index, grid in enumerate(grids):
        caption = f"<h2>{html.escape(grid.title)}</h2>\n"
        if index == 0 and grid.title.startswith(title):
            heading, caption = grid.title, ""
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
            f'{caption}<div class="wrap"><table><thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div>"
        )
    if glossary:
        shown_headings = dict.fromkeys(h for grid in grids for h, _ in grid.columns)
        terms = "".join(
            f"<dt>{html.escape(term)}</dt><dd>{html.escape(glossary[term])}</dd>"
            for term in shown_headings
            if term in glossary
        )
        sections.append(f"<h2>Legend</h2>\n<dl>{terms}</dl>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_PAGE_STYLE}</style></head><body>"
        f"<h1>{html.escape(heading)}</h1>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


_PAGE_STYLE: Final = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}"
    ".wrap{overflow-x:auto}table{border-collapse:collapse;margin-bottom:1.5rem}"
    "th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;white-space:nowrap}"
    "th{background:#f4f4f4}.right{text-align:right}.left{text-align:left}"
    "tbody tr:nth-child(even){background:#fafafa}"
    "dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dd{margin:0}"
)


_STANDINGS_DROP: Final = (
    "ms",
    "LOS next",
    "hands",
    "gin/knock/uc",
    "points +/-",
    "games",
    "score",
    "series W-L-D",
    "95% CI",
    "faults",
)
"""The standings' columns a narrow terminal hides, the first first: the rank, the bot and its
rating stay."""
_PAIRWISE_DROP: Final = (
    "nElo (95% CI)",
    "pairs 0/½/1/1½/2",
    "draws",
    "pairs ratio",
    "margin (95% CI)",
    "LOS",
    "pairs",
    "series W-L-D",
    "at 95%",
    "Elo diff (95% CI)",
)
"""The pairwise table's columns a narrow terminal hides, the first first: the two bots and the
score stay."""
_PAIRWISE_ESSENTIAL: Final = ("Elo diff (95% CI)",)
"""The pairwise column whole names may not push out: without it, aliases stand for the names."""


def _aliases(standings: Standings) -> tuple[tuple[str, str], ...]:
    """Each bot's alias where names cannot fit: ``#`` and its rank."""
    return tuple((bot.bot, f"#{rank}") for rank, bot in enumerate(standings.bots, start=1))


def standings_grid(standings: Standings) -> Grid:
    """One line per bot, best rating first (full detail: ``--format json``).

    A bot that won every series shows its rating as ``>= low``, one that lost every series as
    ``<= high``: the data bound it on one side only."""
    columns = (
        ("#", "right"),
        ("bot", "left"),
        ("Elo", "right"),
        ("95% CI", "right"),
        ("LOS next", "right"),
        ("series W-L-D", "right"),
        ("score", "right"),
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
                "-" if bot.los_next is None else f"{bot.los_next:.1%}",
                f"{bot.series_won}-{bot.series_lost}-{bot.series_drawn}",
                f"{bot.score:.0%}",
                f"{bot.games_won}-{bot.games_lost}",
                str(bot.hands_won),
                f"{bot.points_for}/{bot.points_against}",
                f"{bot.gins}/{bot.knocks}/{bot.undercuts_given}",
                faults or "-",
                f"{bot.mean_ms:.1f}",
            )
        )
    title = f"Standings: {standings.league} ({standings.series} series)"
    return Grid(title, columns, tuple(rows), _STANDINGS_DROP, ("bot",), _aliases(standings))


def rating_cells(bot: BotStanding) -> tuple[str, str]:
    """The Elo and 95% CI cells: a bound as ``>= x`` or ``<= x``, its interval's cell saying
    why (``won all``, ``lost all``): it is ranked by the fit, not comparable to an estimate."""
    if bot.rating_bound == "lower" and bot.rating_low is not None:
        return f">= {_signed(bot.rating_low, 0)}", "won all"
    if bot.rating_bound == "upper" and bot.rating_high is not None:
        return f"<= {_signed(bot.rating_high, 0)}", "lost all"
    return _signed(bot.rating, 0), f"{_signed(bot.rating_low, 0)}..{_signed(bot.rating_high, 0)}"


def _signed(value: float | None, digits: int) -> str:
    """A signed figure, or a dash where there is none."""
    if value is None:
        return "-"
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if text.lstrip("-+").strip("0.") == "" else text  # never "-0"


def _elo_cell(pair: Pairwise) -> str:
    """The pairing's Elo difference and its 95% interval: a sweep's exact bound as ``>= x (all
    won)``, a dash below 4 units, an open end as ``inf``."""
    if pair.elo_bound == "lower":
        return "-" if pair.elo_low is None else f">= {_signed(pair.elo_low, 0)} (all won)"
    if pair.elo_bound == "upper":
        return "-" if pair.elo_high is None else f"<= {_signed(pair.elo_high, 0)} (all lost)"
    if pair.elo is None:
        return "-"
    if pair.los is None:
        return _signed(pair.elo, 0)
    low = "-inf" if pair.elo_low is None else _signed(pair.elo_low, 0)
    high = "+inf" if pair.elo_high is None else _signed(pair.elo_high, 0)
    return f"{_signed(pair.elo, 0)} ({low}, {high})"


def _ratio_cell(pair: Pairwise) -> str:
    """The pairs ratio: ``inf`` where no pair was lost, a dash without pairs."""
    counts = pair.pentanomial
    if counts is None or counts[0] + counts[1] + counts[3] + counts[4] == 0:
        return "-"
    return "inf" if pair.pairs_ratio is None else f"{pair.pairs_ratio:.2f}"


def _nelo_cell(pair: Pairwise) -> str:
    """Normalized Elo and its interval; a dash below 4 units and for a sweep."""
    if pair.nelo is None or pair.nelo_low is None or pair.nelo_high is None:
        return "-"
    return f"{_signed(pair.nelo, 0)} ({_signed(pair.nelo_low, 0)}, {_signed(pair.nelo_high, 0)})"


def _margin_cell(pair: Pairwise) -> str:
    if pair.margin is None:
        return "-"
    if pair.margin_low is None or pair.margin_high is None:
        return f"{pair.margin:+.1f}"
    return f"{pair.margin:+.1f} ({pair.margin_low:+.1f}, {pair.margin_high:+.1f})"


def pairwise_grid(standings: Standings, first: Sequence[str] = ()) -> Grid:
    """Each pairing once, from the side of the bot named earlier in ``first`` (the league's
    definition: ``gin match``'s A), alphabetically first where neither is: counted in duplicate
    pairs (or series where there are none), the score, the draw and pairs ratios, the Elo
    difference with its interval, what it shows at 95%, LOS, the paired point margin and
    normalized Elo; a dash below 4 units."""
    headings = (
        "bot",
        "opponent",
        "pairs",
        "series W-L-D",
        "pairs 0/½/1/1½/2",
        "score",
        "draws",
        "pairs ratio",
        "Elo diff (95% CI)",
        "at 95%",
        "LOS",
        "margin (95% CI)",
        "nElo (95% CI)",
    )
    named = {bot: index for index, bot in reversed(list(enumerate(first)))}
    columns = tuple((h, "left" if h in ("bot", "opponent") else "right") for h in headings)
    rows = []
    for pair in standings.pairwise:
        side = named.get(pair.bot, len(named)), pair.bot
        if side > (named.get(pair.opponent, len(named)), pair.opponent):
            continue
        penta = "-" if pair.pentanomial is None else "/".join(map(str, pair.pentanomial))
        rows.append(
            (
                pair.bot,
                pair.opponent,
                "-" if pair.pentanomial is None else str(pair.units),
                f"{pair.wins}-{pair.losses}-{pair.draws}",
                penta,
                f"{pair.score:.0%}",
                f"{pair.draw_ratio:.0%}",
                _ratio_cell(pair),
                _elo_cell(pair),
                pair.reading,
                "-" if pair.los is None else f"{pair.los:.1%}",
                _margin_cell(pair),
                _nelo_cell(pair),
            )
        )
    title = "Pairwise (the first bot against the second; per pair where paired)"
    return Grid(
        title,
        columns,
        tuple(rows),
        _PAIRWISE_DROP,
        ("bot", "opponent"),
        _aliases(standings),
        essential=_PAIRWISE_ESSENTIAL,
    )


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
    return Grid(
        title, columns, tuple(rows), names=("bot",), aliases=_aliases(standings), stack_after=2
    )
