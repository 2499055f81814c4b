"""``gin bot new|check|submit|list|show|remove``: write, check and register bots."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext, redirect_stdout
from pathlib import Path
from typing import Annotated

import trio
import typer

from protocol.template import create_bot_folder
from referee.conformance import CheckReport, NoBotFolder, check_bot, require_folder
from tournaments.arena.client import ArenaClientError, ArenaVerdict, find_token, submit_to_arena
from tournaments.arena.store import EntrantState
from tournaments.cli import render
from tournaments.cli.common import (
    AsJson,
    MoveTime,
    Strict,
    bot_app,
    console,
    fail,
    move_time_control,
    open_arena,
    open_sandbox,
    print_table,
    said,
)
from tournaments.league import stored_league
from tournaments.registry import RegistryError, parse_spec, resolve, submit
from tournaments.rounds import event_state
from tournaments.store import MatchState, Store
from tournaments.workbench.policy import PolicyError, policy_bot_folder

__all__: list[str] = []


@bot_app.command("new")
def bot_new(
    name: Annotated[str, typer.Argument(help="The bot's name: lowercase, digits, '-' and '_'.")],
    directory: Annotated[Path, typer.Option("--dir", help="Where to create the folder.")] = Path(),
    from_policy: Annotated[
        str | None,
        typer.Option(
            "--from-policy",
            metavar="MODULE:NAME",
            help="Play this policy (view, legal) -> action, found from the current folder; "
            "its code is copied in (docs/workbench.md).",
        ),
    ] = None,
) -> None:
    """Write a ready-to-run bot folder (manifest, code, a test) from the template, or around a
    policy of yours (--from-policy)."""
    if from_policy is not None:
        _bot_from_policy(name, directory, from_policy)
        return
    made = not directory.exists()
    try:
        folder = create_bot_folder(name, directory)
    except ValueError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"cannot make {directory / name}: {error.strerror}") from None
    if made:
        console.print(f"made {said(directory)}/ for it", soft_wrap=True)
    console.print(f"created {said(folder)}/ with bot.toml, bot.py and test_bot.py", soft_wrap=True)
    console.print(
        f"next: edit {said(folder / 'bot.py')}, then run: pytest {said(folder)}", soft_wrap=True
    )


def _bot_from_policy(name: str, directory: Path, spec: str) -> None:
    """``gin bot new NAME --from-policy MODULE:NAME``."""
    try:
        made = policy_bot_folder(name, spec, directory)
    except PolicyError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"cannot make {directory / name}: {error.strerror}") from None
    files = ", ".join(made.files)
    console.print(f"created {said(made.folder)}/ with {said(files)}", soft_wrap=True)
    for note in made.source.notes:
        console.print(f"note: {said(note)}", soft_wrap=True)
    console.print(f"next: gin bot check {said(made.folder)}", soft_wrap=True)


@bot_app.command("check")
def bot_check(
    folder: Annotated[Path, typer.Argument(help="The bot folder to check.")],
    decisions: Annotated[int, typer.Option(help="Decisions the bot must make.")] = 300,
    move_time: MoveTime = 1.0,
    strict: Strict = False,
    as_json: AsJson = False,
) -> None:
    """The conformance kit: play the bot against a sample bot and list every problem."""
    try:
        require_folder(folder)
    except NoBotFolder as error:
        raise fail(str(error)) from None
    with redirect_stdout(sys.stderr) if as_json else nullcontext():  # its warnings: not JSON
        sandbox = open_sandbox(strict)
    control = move_time_control(move_time)
    report = trio.run(
        lambda: check_bot(folder, sandbox.prepare, decisions=decisions, time_control=control)
    )
    if as_json:
        print(json.dumps(_check_document(report), indent=2))
    else:
        render.print_checklist(console, report)
    if not report.passed:
        raise typer.Exit(1)


def _check_document(report: CheckReport) -> dict[str, object]:
    """``gin bot check --json`` (docs/cli.md has the schema)."""
    return report.to_dict()


@bot_app.command("submit")
def bot_submit(
    folder: Annotated[Path, typer.Argument(help="The bot folder to check and submit.")],
    strict: Strict = False,
    arena_url: Annotated[
        str | None,
        typer.Option(
            "--arena", metavar="URL", help="Upload to the hosted arena at URL instead (see docs)."
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(help="With --arena: the file holding your arena token."),
    ] = None,
) -> None:
    """Check a bot, then store an immutable, content-hashed copy in the registry."""
    if arena_url is not None:
        _submit_to_arena(folder, arena_url, token_file)
        return
    arena, store = open_arena()
    sandbox = open_sandbox(strict)

    async def checker(path: Path) -> CheckReport:
        return await check_bot(path, sandbox.prepare)

    try:
        row = trio.run(submit, arena, store, folder, checker)
    except RegistryError as error:
        if error.report is not None:
            render.print_checklist(console, error.report)
        raise fail(str(error), 1) from None
    console.print(f"submitted {said(row.ident)} (hash {row.hash[:12]}) -> {said(row.path)}")


def _submit_to_arena(folder: Path, url: str, token_file: Path | None) -> None:
    """``gin bot submit DIR --arena URL``: upload, follow, print the verdict (exit 1 if
    rejected)."""

    def progress(verdict: ArenaVerdict) -> None:
        if verdict.state == "queued":
            console.print(f"uploaded: {said(verdict.id)}, queued for its check", soft_wrap=True)
        elif verdict.state == "checking":
            console.print("checking (the conformance kit plays it)...")

    try:
        token = find_token(url, token_file)
        verdict = submit_to_arena(folder, url, token, on_state=progress)
    except ArenaClientError as error:
        raise fail(str(error)) from None
    if verdict.accepted:
        console.print(said(verdict.message or f"accepted: {verdict.bot}"), soft_wrap=True)
        return
    if verdict.checklist is not None:
        try:
            report = CheckReport.from_dict(verdict.checklist)
        except ValueError:  # not a checklist this client can read: the message says enough
            report = None
        if report is not None:
            render.print_checklist(console, report)
    raise fail(f"rejected: {verdict.message}", 1)


@bot_app.command("list")
def bot_list() -> None:
    """Every submitted bot and version."""
    _, store = open_arena()
    print_table(render.bots_table(store.bots()))


@bot_app.command("show")
def bot_show(spec: Annotated[str, typer.Argument(help="NAME or NAME@VERSION.")]) -> None:
    """One submitted bot."""
    _, store = open_arena()
    try:
        row = resolve(store, spec)
    except RegistryError as error:
        raise fail(str(error)) from None
    for key, value in (
        ("bot", row.ident),
        ("hash", row.hash),
        ("path", row.path),
        ("author", row.author),
        ("description", row.description),
    ):
        console.print(f"{key:12} {said(value)}")


def _leagues_needing(store: Store, ident: str) -> list[str]:
    """The leagues with a match of ``ident`` not yet played (pending, running or failed), and
    the events not over whose field has it (their next rounds are not scheduled yet)."""
    return [
        league
        for league in store.leagues()
        if any(
            ident in (match.seat0, match.seat1)
            for match in store.matches(league)
            if match.state is not MatchState.DONE
        )
        or _event_needs(store, league, ident)
    ]


def _event_needs(store: Store, league: str, ident: str) -> bool:
    stored = stored_league(store, league)
    if stored is None or not stored.config.event or ident not in stored.resolved:
        return False
    state = event_state(store, league)
    return not state.finished if state.complete else True


@bot_app.command("remove")
def bot_remove(spec: Annotated[str, typer.Argument(help="NAME@VERSION to remove.")]) -> None:
    """Take a bot version out of the registry (its results and logs stay)."""
    _, store = open_arena()
    name, version = parse_spec(spec)
    if version is None:
        raise fail("name the version to remove: NAME@VERSION")
    entrant = store.entrant(f"{name}@{version}")
    if entrant is not None and entrant.state is not EntrantState.RETIRED:
        raise fail(
            f"{spec} is {entrant.state.value} in the arena's ladder: retire it first "
            f"(gin arena retire {spec}), then remove it"
        )
    waiting = [
        league for league in _leagues_needing(store, f"{name}@{version}") if league != "ladder"
    ]
    if waiting:
        raise fail(
            f"{spec} still has matches to play in league(s) {', '.join(waiting)}: finish them "
            "(gin league run NAME) before removing it"
        )
    if not store.remove_bot(name, version):
        raise fail(f"no submitted bot {spec}")
    console.print(f"removed {said(spec)}")
