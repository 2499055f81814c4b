"""What the ``gin`` command's modules share: the typer apps, the console, option types, the
sandbox and store openers."""

from __future__ import annotations

import enum
from collections.abc import Callable
from importlib import metadata
from typing import Annotated, Any, Final, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from referee.bot_text import shown
from referee.control import SANE_MS, TimeControl, duration_ms
from referee.sandbox import CpuPlacement, Sandbox, SandboxUnavailable, pin_cpus
from tournaments.arena.store import ArenaStore
from tournaments.registry import Arena
from tournaments.store import StoreUnusable

__all__ = [
    "AsJson",
    "MoveTime",
    "MoveTimeOrDefault",
    "PinCpus",
    "Strict",
    "app",
    "arena_app",
    "author_app",
    "bot_app",
    "choice",
    "console",
    "errors",
    "event_app",
    "fail",
    "league_app",
    "move_time_control",
    "open_arena",
    "open_sandbox",
    "place_cpus",
    "print_table",
    "said",
    "sandbox_app",
    "seconds",
]


console = Console(emoji=False, soft_wrap=True)
"""Standard output. Bot text's ``:name:`` stays as written; a line is never wrapped by rich
(a command it suggests stays whole, to copy: the terminal wraps it, a file keeps it)."""
errors = Console(emoji=False, soft_wrap=True, stderr=True)
"""Standard error: the one-line errors, so that ``--json`` output stays one document."""
E = TypeVar("E", bound=enum.StrEnum)
HELP_OPTIONS: Final = {"help_option_names": ["-h", "--help"]}


def _group(help_text: str, **options: Any) -> typer.Typer:  # type: ignore[explicit-any]  # typer's options
    """A command group: ``-h`` as well as ``--help``, and, called alone, its help (exit 0)."""
    group = typer.Typer(
        help=help_text,
        context_settings=HELP_OPTIONS,
        invoke_without_command=True,
        rich_markup_mode="markdown",  # a docstring's paragraph is reflowed, not cut mid-sentence
        **options,
    )

    @group.callback()
    def _alone(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None:
            console.print(ctx.get_help(), highlight=False)
            raise typer.Exit(0)

    return group


app = typer.Typer(
    name="gin",
    help="Hollywood Gin bot arena: play, referee and rank bots.",
    context_settings=HELP_OPTIONS,
    invoke_without_command=True,
    rich_markup_mode="markdown",  # a docstring's paragraph is reflowed, not cut mid-sentence
)


def _version(shown: bool) -> None:
    if shown:
        console.print(f"gin {_installed_version()}", highlight=False)
        raise typer.Exit(0)


def _installed_version() -> str:
    try:
        return metadata.version("hollywood-gin-arena")
    except metadata.PackageNotFoundError:
        return "(not installed)"


@app.callback()
def _gin(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            metavar="",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Hollywood Gin bot arena: play, referee and rank bots."""
    del version  # handled by its callback, before anything else
    if ctx.invoked_subcommand is None:
        console.print(ctx.get_help(), highlight=False)
        raise typer.Exit(0)


bot_app = _group("Write, check and submit bots.")
sandbox_app = _group("The bot sandbox on this machine.")
league_app = _group(
    "Run leagues (round robins and gauntlets), extend them, and read their standings."
)
arena_app = _group("The hosted arena: serve it, and manage its authors and ladder.")
author_app = _group("The arena's authors and their API tokens.")
event_app = _group("The arena's event: a tournament of the ladder's bots at a deadline.")
arena_app.add_typer(author_app, name="author")
arena_app.add_typer(event_app, name="event")
app.add_typer(bot_app, name="bot")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(league_app, name="league")
app.add_typer(arena_app, name="arena")

Strict = Annotated[
    bool,
    typer.Option(
        "--strict", metavar="", help="Refuse to run bots unless every sandbox layer works."
    ),
]


def seconds(text: str | float) -> float:
    """A ``--move-time``-style option: ``1s``, ``500ms``, ``2min`` or a number of seconds."""
    if isinstance(text, float | int):
        return float(text)
    try:
        return duration_ms(text) / 1000
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None


MoveTime = Annotated[
    float,
    typer.Option(
        parser=seconds,
        metavar="DURATION",
        help="Time per decision, as 1s, 500ms or seconds (plus the time bank).",
        show_default="1s",
    ),
]
MoveTimeOrDefault = Annotated[
    float | None,
    typer.Option(
        "--move-time",
        parser=seconds,
        metavar="DURATION",
        help="Time per decision, as 1s, 500ms or seconds [1s].",
    ),
]
"""``--move-time`` where leaving it out means the league's (or the match's) own default."""
AsJson = Annotated[
    bool, typer.Option("--json", metavar="", help="One JSON document (docs/cli.md).")
]


def move_time_control(move_time: float) -> TimeControl:
    """The time control of ``--move-time`` (seconds), or a one-line error out of bounds."""
    low, high = (limit / 1000 for limit in SANE_MS["move_time_ms"])
    if not low <= move_time <= high:  # NaN too
        raise fail(f"--move-time {move_time:g}: must be between {low:g} and {high:g} seconds")
    return TimeControl(move_time_ms=round(move_time * 1000))


PinCpus = Annotated[
    bool,
    typer.Option(
        "--pin-cpus",
        metavar="",
        help="Run the referee and the bots on separate CPUs (faster, steadier decision times; "
        "needs two CPUs or more).",
    ),
]


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


def place_cpus(pin: bool) -> CpuPlacement | None:
    """With ``pin``, put the referee and the bots on separate CPUs and say so; exit 2 when this
    machine cannot."""
    if not pin:
        return None
    try:
        placement = CpuPlacement.split()
        pin_cpus(placement)
    except (SandboxUnavailable, OSError) as error:
        raise fail(f"cannot pin CPUs: {error}") from None
    console.print(f"CPU placement: {placement.describe()}")
    return placement


def choice(kind: type[E]) -> Callable[[str], E]:
    """A parser for an option taking one of an enum's values, whose error names them (not
    pydantic's ``Value error, 'x' is not one of ...``)."""

    def parse(text: str | E) -> E:
        try:
            return kind(text)
        except ValueError:
            allowed = ", ".join(member.value for member in kind)
            raise typer.BadParameter(f"{text!r} is not one of {allowed}") from None

    return parse


def print_table(table: Table, *, full: bool = False) -> None:
    """Print a table; where the output is not a terminal (a file, a pipe, a CI log), or with
    ``full`` (``--wide``: the terminal wraps the lines it cannot hold), at its full width, however
    wide, so that nothing in it is cut or wrapped to the terminal's columns."""
    if console.is_terminal and not full:
        console.print(table)
        return
    wide = console.options.update(width=100_000)
    needed = console.measure(table, options=wide).maximum
    width = console.width
    console.width = max(width, needed)
    try:
        console.print(table)
    finally:
        console.width = width


def said(text: object, *, lines: bool = False) -> str:
    """Text that a bot (or a log, a manifest, a user) may have shaped, ready for a markup string:
    its controls shown and its markup escaped."""
    return escape(shown(str(text), lines=lines))


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error (its text escaped: it may hold a bot's) and return the exit to raise; the
    terminal, not rich, wraps it, so a path in it is never broken."""
    errors.print(f"[red]error:[/red] {said(message, lines=True)}", soft_wrap=True)
    return typer.Exit(code)


def open_arena() -> tuple[Arena, ArenaStore]:
    """The arena of ``GIN_HOME`` and its store (with the hosted arena's tables: a home serves
    leagues and the arena alike); exit 2 when they cannot be used."""
    arena = Arena.default()
    try:
        return arena, ArenaStore(arena.store_path)
    except StoreUnusable as error:
        raise fail(str(error)) from None
