"""Rich renderings shared by the command line: hands, showdowns and score sheets."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from referee.rules import HandEnd, HandRecord, SeriesResult
from referee.rules.cards import Card, CardSet

SUIT_STYLES = {0: "green", 1: "blue", 2: "red", 3: "white"}
END_WORDS = {
    HandEnd.GIN: "gin",
    HandEnd.KNOCK: "knock",
    HandEnd.UNDERCUT: "undercut",
    HandEnd.STOCK_EXHAUSTED: "drawn (stock)",
    HandEnd.TURN_CAP: "drawn (turn cap)",
}


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
