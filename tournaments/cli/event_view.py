"""What ``gin league status`` and ``standings`` show of an event: its rounds (or bracket), a
line each, and its standings table."""

from __future__ import annotations

from collections.abc import Mapping

from tournaments.cli.render import Grid
from tournaments.events import Tie, TieResult
from tournaments.rounds import EventLine, EventState

__all__ = ["event_grid", "round_lines"]


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
