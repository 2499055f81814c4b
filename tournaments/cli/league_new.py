"""``gin league new NAME BOT...``: a round robin made from the command line, its league file
written into the arena home; and the bot arguments of ``gin league new`` and ``gin match``: a
submitted bot (``NAME``, ``NAME@VERSION``) or a bot folder, checked and submitted on the way.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from contextlib import nullcontext, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final

import trio
import typer
from rich.console import Console

from protocol.manifest import ManifestError, load_manifest
from referee.conformance import CheckReport, check_bot
from referee.sandbox import Sandbox
from tournaments.arena.ladder import LADDER
from tournaments.cli import render
from tournaments.cli.common import (
    MoveTimeOrDefault,
    Strict,
    console,
    fail,
    move_time_control,
    open_arena,
    open_sandbox,
    said,
)
from tournaments.cli.demo import SAMPLES
from tournaments.league import LeagueConfig, LeagueError, create_league, load_league
from tournaments.registry import Arena, RegistryError, resolve, submit
from tournaments.store import Store

__all__ = ["BotArguments", "league_new"]


LEAGUES_DIR: Final = "leagues"
"""The folder of the arena home that holds the league files ``gin league new`` writes."""


def league_file(arena: Arena, name: str) -> Path:
    """Where ``gin league new`` writes the league file of ``name``."""
    return arena.home / LEAGUES_DIR / f"{name}.toml"


def sample_folder(name: str) -> Path | None:
    """The folder of the sample bot ``name`` (``house``, ``strong``...), if there is one: a bot
    argument that names no submitted bot and no folder here is that sample bot, submitted."""
    folder = SAMPLES / name
    return folder if name.isidentifier() and (folder / "bot.toml").is_file() else None


def sample_names() -> list[str]:
    """The sample bots a bot argument may name (``greedy``, ``house``, ``strong``...)."""
    return sorted(path.parent.name for path in SAMPLES.glob("*/bot.toml"))


def _is_path(given: str) -> bool:
    """Whether a bot argument can only be a folder: a name never holds a ``/``."""
    return "/" in given or os.sep in given or given in (".", "..") or given.startswith("~")


@dataclass
class BotArguments:
    """Turns bot arguments into submitted bots: a name stays a name; a folder (an argument with a
    ``/``, or a word that names no submitted bot but a folder, or else a sample bot of
    ``sample_bots/``, such as ``house``) is submitted as ``gin bot submit`` submits it,
    conformance check included, and said in one line. The sandbox is
    opened once, when first needed; with ``to_stderr`` its warnings go to standard error."""

    arena: Arena
    store: Store
    strict: bool
    out: Console = field(default_factory=lambda: console)
    to_stderr: bool = False
    submitted: dict[str, str] = field(default_factory=dict)
    """The folders given, each with the ``name@version`` it was submitted as."""
    _sandbox: Sandbox | None = None

    def sandbox(self) -> Sandbox:
        """The sandbox (opened on first use; its warnings printed then)."""
        if self._sandbox is None:
            with redirect_stdout(sys.stderr) if self.to_stderr else nullcontext():
                self._sandbox = open_sandbox(self.strict)
        return self._sandbox

    def ident(self, given: str) -> str:
        """The ``name@version`` of one bot argument (a folder is submitted first).

        Raises:
            typer.Exit: neither a submitted bot nor a folder, or the folder cannot be submitted
                (a one-line error; a failed check prints its checklist first).
        """
        folder = Path(given).expanduser()
        if not _is_path(given):
            try:
                return resolve(self.store, given).ident
            except RegistryError:
                if not folder.is_dir():
                    folder = sample_folder(given) or folder  # a sample bot by its name
                if not folder.is_dir():
                    raise fail(self._neither(given)) from None
        if not folder.is_dir():
            raise fail(self._neither(given))
        return self._submit(given, folder)

    def _neither(self, given: str) -> str:
        known = ", ".join(sorted({bot.ident for bot in self.store.bots()})) or "none yet"
        if _is_path(given):
            return (
                f"no bot folder at {given} (a bot's name holds no '/'; submitted: {known}): give "
                "a bot's folder (one with a bot.toml), or a submitted NAME or NAME@VERSION"
            )
        samples = ", ".join(sample_names()) or "none"
        return (
            f"no submitted bot {given!r} and no folder of that name (submitted: {known}): give "
            f"NAME, NAME@VERSION, a bot's folder (one with a bot.toml) or a sample bot: {samples}"
        )

    def _submit(self, given: str, folder: Path) -> str:
        """Submit a folder as ``gin bot submit`` does; an unchanged one is already there."""
        try:
            manifest = load_manifest(folder)
        except ManifestError:
            before = None  # submit says what is wrong with it
        else:
            before = self.store.bot(manifest.name, manifest.version)
        sandbox = self.sandbox()

        async def checker(path: Path) -> CheckReport:
            return await check_bot(path, sandbox.prepare)

        try:
            row = trio.run(submit, self.arena, self.store, folder, checker)
        except RegistryError as error:
            if error.report is not None:
                render.print_checklist(self.out, error.report)
            lines = str(error).splitlines()  # a bad manifest lists its problems a line each
            why = " ".join([lines[0], "; ".join(line.strip(" -") for line in lines[1:])])
            raise fail(why.strip(), 1) from None
        if before is not None and before.hash == row.hash:
            line = f"{said(given)} is {said(row.ident)}, already submitted with this code"
        else:
            line = f"submitted {said(given)} as {said(row.ident)}"
        self.out.print(line, soft_wrap=True, highlight=False)
        self.submitted[given] = row.ident
        return row.ident

    def written(self, given: str) -> str:
        """A bot argument as a command to run again names it: a folder by what it became."""
        return self.submitted.get(given, given)


def _one_line(error: LeagueError) -> str:
    """A league error's problems (a line each) on one line."""
    lines = [line.strip(" -") for line in str(error).splitlines()]
    return "; ".join(lines[1:]) if len(lines) > 1 else lines[0]


def _is_folder(given: str) -> bool:
    """Whether a bot argument is (or may be) a folder, to be submitted: names are read first."""
    return _is_path(given) or Path(given).is_dir()


def _idents(arguments: BotArguments, bots: list[str]) -> list[str]:
    """The bots' ``name@version``, in their order: every name resolved before any folder is
    submitted, so that an unknown name leaves nothing submitted."""
    resolved: dict[int, str] = {}
    for index in sorted(range(len(bots)), key=lambda index: _is_folder(bots[index])):
        ident = arguments.ident(bots[index])
        if ident in resolved.values():
            first = bots[next(i for i, known in resolved.items() if known == ident)]
            raise fail(f"{first} and {bots[index]} are the same bot ({ident}): name it once")
        resolved[index] = ident
    return [resolved[index] for index in range(len(bots))]


def _toml(name: str, idents: list[str], series: int, move_ms: int | None, words: str) -> str:
    """The league file of ``gin league new``: what ``gin league create`` reads."""
    bots = ", ".join(json.dumps(ident) for ident in idents)
    lines = [
        f"# written by: gin league new {words}",
        "# a round robin; gin league create reads this file (docs/league.toml shows every field)",
        f"name = {json.dumps(name)}",
        f"bots = [{bots}]",
        f"series_per_pairing = {series}",
    ]
    if move_ms is not None:
        lines += ["", "[time_control]", f'move_time = "{move_ms}ms"']
    return "\n".join(lines) + "\n"


def league_new(
    name: Annotated[
        str, typer.Argument(help="The new league's name: lowercase letters, digits, - and _.")
    ],
    bots: Annotated[
        list[str],
        typer.Argument(
            help="Two bots or more: NAME, NAME@VERSION, or a bot folder (checked and submitted "
            "on the way).",
            show_default=False,
        ),
    ],
    series: Annotated[
        int | None,
        typer.Option("--series", help="Series per pairing, even (duplicate pairs) [2]."),
    ] = None,
    move_time: MoveTimeOrDefault = None,
    strict: Strict = False,
) -> None:
    """Create a round robin of the bots named, without writing a league file.

    The league file is written for you, to GIN_HOME/leagues/NAME.toml, and read as gin league
    create reads one; every other setting is a league file's default. Play it with gin league
    run NAME."""
    if len(bots) < 2:
        raise fail(
            f"a league needs two bots or more, not {len(bots)}: gin league new NAME BOT BOT..."
        )
    twice = sorted({bot for bot in bots if bots.count(bot) > 1})
    if twice:
        raise fail(f"{', '.join(twice)} named twice: name each bot once")
    if series is not None and (series < 1 or series % 2):
        raise fail(
            f"--series must be positive and even (each deal is played twice, seats swapped), "
            f"not {series}"
        )
    move_ms = None if move_time is None else move_time_control(move_time).move_time_ms
    given: dict[str, object] = {"name": name, "bots": list(bots)}
    if series is not None:
        given["series_per_pairing"] = series
    if move_ms is not None:
        given["time_control"] = {"move_time_ms": move_ms}
    try:
        config = LeagueConfig.from_dict(given)  # every problem of the arguments, before any submit
    except LeagueError as error:
        raise fail(f"league {name!r}: {_one_line(error)}") from None
    if name == LADDER:
        raise fail(f"{LADDER} is the hosted arena's league (gin arena serve): give another name")
    arena, store = open_arena()
    if name in store.leagues():
        raise fail(
            f"a league named {name} exists already (gin league list shows them): give a new "
            f"name, or add bots to it with gin league create FILE"
        )
    path = league_file(arena, name)
    if path.exists():
        raise fail(
            f"{path} exists already (a league file not created yet?): create it with gin league "
            f"create {path}, or remove it first"
        )
    idents = _idents(BotArguments(arena, store, strict), bots)
    words = " ".join(
        [
            name,
            *idents,
            *([] if series is None else [f"--series {series}"]),
            *([] if move_ms is None else [f"--move-time {move_ms}ms"]),
        ]
    )
    staged = path.with_name(f".{path.name}.new")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(
            _toml(name, idents, config.series_per_pairing, move_ms, words), encoding="utf-8"
        )
    except OSError as error:
        raise fail(f"cannot write the league file {path}: {error.strerror}") from None
    try:
        made = load_league(staged, store)  # the path of gin league create: every check applies
        idents, added = create_league(store, made)
        staged.replace(path)
    except LeagueError as error:
        raise fail(f"league {name!r}: {_one_line(error)}") from None
    finally:
        with contextlib.suppress(OSError):
            staged.unlink()
    console.print(
        f"league {said(name)}: a round robin of {len(idents)} bots, {added} matches; its file: "
        f"{said(path)}; play it with: gin league run {said(name)}",
        soft_wrap=True,
        highlight=False,
    )
