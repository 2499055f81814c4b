"""The ``gin`` command: thin commands that call a library function and render with rich."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from protocol.template import create_bot_folder
from referee.rules import (
    HandRecord,
    RuleParams,
    Scoring,
    best_discards,
    greedy_policy,
    min_deadwood,
    parse_cards,
    patient_policy,
    play_series,
)
from tournaments import render

app = typer.Typer(
    name="gin",
    help="Hollywood Gin bot arena: play, referee and rank bots.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
bot_app = typer.Typer(help="Write, check and submit bots.", no_args_is_help=True)
app.add_typer(bot_app, name="bot")


@app.command()
def demo(
    seed: Annotated[int, typer.Option(help="Series seed (the same seed, the same series).")] = 2026,
    plain: Annotated[bool, typer.Option(help="Plain Gin Rummy: one game to 100.")] = False,
) -> None:
    """Play one seeded Hollywood series between two built-in policies and show it."""
    params = RuleParams(scoring=Scoring.PLAIN if plain else Scoring.HOLLYWOOD)
    names = ("greedy", "patient")
    table = render.hands_table()

    def on_hand_end(record: HandRecord) -> None:
        table.add_row(*render.hand_row(record, names))

    result = play_series(greedy_policy, patient_policy, seed, params, on_hand_end=on_hand_end)
    console.print(table)
    console.print(render.score_sheet(result, names))
    console.print(render.result_line(result, names))


@app.command()
def deadwood(
    cards: Annotated[str, typer.Argument(help="Cards in notation, e.g. 'As 2s 3s 7d 7h 7c Kd'.")],
) -> None:
    """Show the minimum deadwood of a hand (and the best discards of an 11-card hand)."""
    try:
        hand = parse_cards(cards)
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(2) from None
    console.print(f"{min_deadwood(hand)}")
    if len(hand) == 11:
        least, discards = best_discards(hand)
        names = " ".join(str(card) for card in discards)
        console.print(f"best discards: {names} (deadwood {least} after)")


@bot_app.command("new")
def bot_new(
    name: Annotated[str, typer.Argument(help="The bot's name: lowercase, digits, '-' and '_'.")],
    directory: Annotated[Path, typer.Option("--dir", help="Where to create the folder.")] = Path(),
) -> None:
    """Write a ready-to-run bot folder (manifest, code, a test) from the template."""
    try:
        folder = create_bot_folder(name, directory)
    except ValueError as error:
        console.print(f"[red]error:[/red] {error}")
        raise typer.Exit(2) from None
    console.print(f"created {folder}/ with bot.toml, bot.py and test_bot.py")
    console.print(f"next: edit {folder / 'bot.py'}, then run: pytest {folder}")
