"""``gin arena event create|list|cancel``: the arena's event at a deadline, scheduled from the
organiser's shell (a running server picks it up within seconds)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table

from tournaments.arena.event import (
    EventOptions,
    EventRefused,
    cancel_event,
    create_event,
    parse_deadline,
    snapshot_of,
)
from tournaments.arena.store import EventRow
from tournaments.cli.common import console, event_app, fail, open_arena, print_table, said

__all__: list[str] = []


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


@event_app.command("create")
def event_create(
    name: Annotated[str, typer.Argument(help="The event's name (its league's too).")],
    at: Annotated[str, typer.Option("--at", help="The deadline, ISO 8601 (no zone: UTC).")],
    kind: Annotated[
        str, typer.Option("--format", help="round-robin, swiss or knockout.")
    ] = "knockout",
    rounds: Annotated[int, typer.Option(help="A swiss's rounds.")] = 0,
    pairs: Annotated[int, typer.Option(help="Duplicate pairs per tie (per pairing).")] = 1,
    seeding: Annotated[
        str, typer.Option(help="A swiss's or knockout's seeding: ratings (the ladder's) or draw.")
    ] = "ratings",
    max_pairs: Annotated[
        int, typer.Option(help="A knockout's sequential ties: the most pairs a tie plays.")
    ] = 0,
) -> None:
    """Schedule the arena's event: at the deadline the ladder's bots are frozen into it."""
    _, store = open_arena()
    try:
        deadline = parse_deadline(at)
        options = EventOptions(rounds, pairs, seeding, max_pairs)
        row = create_event(store, name, deadline, kind, options, now=time.time())
    except EventRefused as refusal:
        raise fail(f"{refusal}; no event scheduled") from None
    console.print(
        f"event {said(row.name)} ({said(row.format)}) scheduled: uploads close at {_when(row.at)}"
    )


@event_app.command("list")
def event_list() -> None:
    """The arena's events, the latest deadline first."""
    _, store = open_arena()
    rows = store.arena_events()
    if not rows:
        console.print("no events")
        return
    table = Table("event", "format", "deadline (UTC)", "phase", "bots", "outcome")
    for row in rows:
        table.add_row(*(said(cell) for cell in _line(row)))
    print_table(table)


def _line(row: EventRow) -> list[str]:
    field = snapshot_of(row)
    return [
        row.name,
        row.format,
        _when(row.at),
        row.phase.value,
        str(len(field)) if field else "",
        row.outcome,
    ]


@event_app.command("cancel")
def event_cancel(name: Annotated[str, typer.Argument(help="A scheduled event.")]) -> None:
    """Cancel an event whose deadline has not come."""
    _, store = open_arena()
    try:
        cancel_event(store, name)
    except EventRefused as refusal:
        raise fail(str(refusal)) from None
    console.print(f"event {said(name)} cancelled")
