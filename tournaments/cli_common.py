"""What the ``gin`` command's modules share: the console, option types, the sandbox opener."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from referee.sandbox import Sandbox, SandboxUnavailable

console = Console()
bot_app = typer.Typer(help="Write, check and submit bots.", no_args_is_help=True)

Strict = Annotated[
    bool, typer.Option("--strict", help="Refuse to run bots unless every sandbox layer works.")
]
MoveTime = Annotated[float, typer.Option(help="Seconds per decision (plus the time bank).")]


def open_sandbox(strict: bool) -> Sandbox:
    """The sandbox, with its warnings printed; exit 3 when strict and incomplete."""
    try:
        sandbox = Sandbox(strict=strict)
    except SandboxUnavailable as error:
        console.print(f"[red]sandbox refused:[/red] {error}")
        raise typer.Exit(3) from None
    for warning in sandbox.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    return sandbox


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error and return the exit to raise."""
    console.print(f"[red]error:[/red] {message}")
    return typer.Exit(code)
