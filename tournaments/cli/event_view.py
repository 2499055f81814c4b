"""What ``gin league status`` and ``standings`` show of an event: its rounds (or bracket), a
line each, its standings table, and for a report (Markdown, HTML) its rounds or its bracket as
a table."""

from __future__ import annotations

from collections.abc import Mapping

from tournaments.cli.render import Grid
from tournaments.events import Tie, TieResult, knockout_rounds
from tournaments.rounds import STAGES, EventLine, EventState

__all__ = ["bracket_grid", "event_grid", "round_lines", "rounds_grid"]


def round_lines(state: EventState) -> list[str]:
    """A line per stored round: its state and each tie's (its series score, or that it plays),
    then what comes next."""
    config = state.league.config
    planned = f" of {config.rounds}" if config.format == "swiss" else ""
    lines = []
    for number, stored in enumerate(state.rounds):
        played = number < len(state.results)
        ties = []
        for index, tie in enumerate(stored.ties):
            result = state.results[number][index] if played else None
            tie_state = state.tie_states[number][index]
            ties.append(_tie_text(tie, tie_state, result, knockout=config.format == "knockout"))
        lines.append(
            f"round {number + 1}{planned} ({'played' if played else 'playing'}): " + "; ".join(ties)
        )
    if not state.rounds:
        lines.append(f"{config.format}: no round paired yet (gin league run {config.name})")
    elif state.finished:
        lines.append(f"{config.format} over after {len(state.rounds)} rounds")
    return lines


def _tie_text(tie: Tie, tie_state: str, result: TieResult | None, *, knockout: bool) -> str:
    """A tie as a round's line says it: a Swiss's winner (or a draw), a knockout's bot through."""
    if tie.second is None:
        return f"{tie.first} bye"
    text = f"{tie.first} v {tie.second}"
    if result is None or tie_state != "played":
        return f"{text} ({tie_state})"
    score = f"{result.points:g}-{result.series - result.points:g}"
    if knockout:
        return f"{text} {score}, {result.winner()} through"
    first, _ = result.match_points()
    return f"{text} {score}, " + ("drawn" if first == 0.5 else f"{result.winner()} won")


def event_grid(
    state: EventState, lines: list[EventLine], elo: Mapping[str, str] | None = None
) -> Grid:
    """The event's standings: a Swiss's score and Buchholz, a knockout's stage reached, each
    with the bot's rating over the event's series (``elo``: its cell as the standings write
    it, a bound as ``>= x`` for a bot that won every series)."""
    config = state.league.config
    middle = (
        (("score", "right"), ("Buchholz", "right"))
        if config.format == "swiss"
        else (("reached", "left"), ("ties won", "right"))
    )
    columns = (("#", "right"), ("bot", "left"), *middle, ("Elo", "right"))
    rows = []
    for rank, line in enumerate(lines, start=1):
        if config.format == "swiss":
            cells = (f"{line.score:g}", f"{line.buchholz:g}")
        else:
            cells = (line.reached or "-", f"{line.score:g}")
        shown = "-" if line.rating is None else f"{line.rating:+.0f}"
        rows.append((str(rank), line.bot, *cells, (elo or {}).get(line.bot, shown)))
    title = f"Swiss: {config.name} (by score, then Buchholz, then seed)"
    if config.format == "knockout":
        title = f"Knockout: {config.name} (by stage reached, then seed)"
    return Grid(title, columns, tuple(rows), (), ("bot",))


def _result(state: EventState, number: int, index: int) -> TieResult | None:
    return state.results[number][index] if number < len(state.results) else None


def rounds_grid(state: EventState) -> Grid:
    """A Swiss's rounds, a row per tie: its bots, its series score and who won it."""
    rows = []
    for number, stored in enumerate(state.rounds):
        for index, tie in enumerate(stored.ties):
            rows.append((str(number + 1), *_tie_cells(state, number, index, tie)))
    columns = (
        ("round", "right"),
        ("first", "left"),
        ("second", "left"),
        ("series", "right"),
        ("result", "left"),
    )
    planned = state.league.config.rounds
    title = f"Rounds: {state.league.config.name} ({len(state.rounds)} of {planned} paired)"
    return Grid(title, columns, tuple(rows), (), ("first", "second"))


def _tie_cells(state: EventState, number: int, index: int, tie: Tie) -> tuple[str, str, str, str]:
    if tie.second is None:
        return tie.first, "(bye)", "", "bye: 1 point"
    result = _result(state, number, index)
    if result is None or state.tie_states[number][index] != "played":
        return tie.first, tie.second, "", state.tie_states[number][index]
    score = f"{result.points:g}-{result.series - result.points:g}"
    first, _ = result.match_points()
    said = "drawn" if first == 0.5 else f"{tie.first if first else tie.second} won"
    if result.decided_for is not None:
        said += " (the test decided)"
    return tie.first, tie.second, score, said


def bracket_grid(state: EventState) -> Grid:
    """A knockout's bracket: a column per round, each tie in the row of the first of the
    first-round ties it follows from (who plays, the series score, who goes through)."""
    total = knockout_rounds(len(state.seeds)) if state.seeds else 0
    names = []
    for number in range(total):
        left = total - 1 - number
        names.append(STAGES[left] if left < len(STAGES) else f"round {number + 1}")
    height = len(state.rounds[0].ties) if state.rounds else 0
    rows = []
    for row in range(height):
        cells = []
        for number in range(total):
            width = 1 << number
            stored = state.rounds[number] if number < len(state.rounds) else None
            if row % width or stored is None:
                cells.append("")
                continue
            index = row // width
            tie, result = stored.ties[index], _result(state, number, index)
            tie_state = state.tie_states[number][index]
            cells.append(_tie_text(tie, tie_state, result, knockout=True))
        rows.append(tuple(cells))
    columns = tuple((name, "left") for name in names)
    return Grid(f"Bracket: {state.league.config.name}", columns, tuple(rows))
