"""``gin arena serve|enter|retire`` and ``gin arena author add|token|revoke|list``: the hosted
arena, run from the organiser's shell."""

from __future__ import annotations

import contextlib
import errno
import socket
import sqlite3
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import trio
import typer
from rich.console import Console

from referee.bot_text import shown
from referee.conformance import CheckReport, check_bot
from tournaments.arena.accounts import AccountError, add_author, issue_token, revoke, token_digest
from tournaments.arena.store import ArenaStore, EntrantState
from tournaments.cli.common import (
    Strict,
    arena_app,
    author_app,
    choice,
    console,
    errors,
    fail,
    move_time_control,
    open_arena,
    open_sandbox,
    said,
    seconds,
)
from tournaments.cli.league import ExecutorKind, _executor, check_scheduler
from tournaments.executors import ExecutorError
from tournaments.registry import RegistryError, resolve
from tournaments.runner import LeagueBusy
from tournaments.store import MatchRow, ResultRow, StoreDamaged

if TYPE_CHECKING:
    from tournaments.arena.ladder import Ladder

__all__ = ["announce_pairs", "pair_line"]


@arena_app.command("serve")
def arena_serve(
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port (0: any free one, printed).")] = 8080,
    jobs: Annotated[int, typer.Option("-j", "--jobs", help="Ladder matches at once.")] = 2,
    executor_kind: Annotated[
        ExecutorKind,
        typer.Option(
            "--executor", parser=choice(ExecutorKind), help="Where the ladder's matches run."
        ),
    ] = ExecutorKind.LOCAL,
    scheduler: Annotated[
        str | None,
        typer.Option(help="The Dask scheduler's address, tcp://HOST:PORT (with --executor dask)."),
    ] = None,
    no_ladder: Annotated[
        bool, typer.Option("--no-ladder", help="Serve pages and take uploads; play nothing.")
    ] = False,
    move_time: Annotated[
        str, typer.Option(help="Each decision's time in the ladder (e.g. 1s, 500ms).")
    ] = "1s",
    access_log: Annotated[
        bool, typer.Option("--access-log", help="Log every request to standard error.")
    ] = False,
    behind_proxy: Annotated[
        bool,
        typer.Option(
            "--behind-proxy",
            help="Trust one reverse proxy's X-Forwarded-For/-Proto/-Host (only behind one).",
        ),
    ] = False,
    strict: Strict = False,
) -> None:
    """Serve the arena: its pages, its API for uploads, and the ladder, until Ctrl-C."""
    from tournaments.arena.server import serve  # noqa: PLC0415 - the web stack, only here
    from tournaments.arena.service import ArenaService  # noqa: PLC0415

    if not 0 <= port <= 65535:
        raise fail(f"--port must be 0-65535, not {port}")
    if jobs < 1:
        raise fail(f"--jobs must be at least 1, not {jobs}")
    if scheduler is not None:
        check_scheduler(scheduler)
    arena, store = open_arena()
    sandbox = open_sandbox(strict)
    control = move_time_control(seconds(move_time))
    executor = _executor(executor_kind, scheduler, jobs, strict)

    async def checker(path: Path) -> CheckReport:
        return await check_bot(path, sandbox.prepare)

    service = ArenaService(
        arena,
        store,
        jobs=jobs,
        executor=executor,
        checker=checker,
        strict=strict,
        time_control=control,
        ladder=not no_ladder,
    )

    if service.ladder is not None:
        announce_pairs(service.ladder, store, console)

    def ready(binds: list[str]) -> None:
        console.print(f"serving the arena {said(arena.home)} on {' '.join(binds)}", highlight=False)

    try:
        trio.run(
            lambda: serve(
                service,
                host,
                port,
                on_ready=ready,
                access_log=access_log,
                behind_proxy=behind_proxy,
            )
        )
    except BaseException as error:  # every way out is said in one line
        raise _stopped(error, arena.home, f"{host}:{port}") from None
    console.print("the arena stopped; running matches were put back for the next start")


def pair_line(number: int, legs: Sequence[MatchRow], results: Sequence[ResultRow | None]) -> str:
    """One finished ladder pair in a line: its number in this run, the two bots with their
    points (a series won 1, drawn ½ each), and any leg without a result.

    >>> pair_line(3, [], [])
    'ladder pair 3: no legs'
    """
    if not legs:
        return f"ladder pair {number}: no legs"
    first, second = legs[0].seat0, legs[0].seat1
    points = {first: 0.0, second: 0.0}
    recorded = [result for result in results if result is not None]
    for result in recorded:
        if result.winner is None:
            points[first] += 0.5
            points[second] += 0.5
        else:
            winner = result.seats[result.winner]
            points[winner] = points.get(winner, 0.0) + 1
    line = f"ladder pair {number}: {first} {points[first]:g}-{points[second]:g} {second}"
    missing = len(legs) - len(recorded)
    if missing:
        line += f" ({missing} of {len(legs)} series without a result)"
    return line


def announce_pairs(ladder: Ladder, store: ArenaStore, out: Console) -> None:
    """Print a line (:func:`pair_line`) to ``out`` for each pair the ladder finishes, after what
    the ladder already does then. A result the store cannot read counts as missing; a line that
    cannot be written (a closed terminal) is dropped: the ladder plays on either way."""
    told = ladder.on_pair

    def on_pair(legs: list[MatchRow]) -> None:
        told(legs)
        results: list[ResultRow | None] = []
        for leg in legs:
            try:
                results.append(store.result(leg.match_id))
            except (StoreDamaged, sqlite3.Error):
                results.append(None)
        line = shown(pair_line(ladder.pairs_done, legs, results))
        with contextlib.suppress(OSError):
            out.print(line, markup=False, highlight=False, soft_wrap=True)

    ladder.on_pair = on_pair


def _stopped(error: BaseException, home: Path, address: str) -> BaseException:
    """What to say (and the exit) when the server stopped on an error: one line; an error of
    the arena's own is logged in full to ``<home>/arena-errors.log``."""
    if isinstance(error, SystemExit | typer.Exit):
        return error
    leaves = _leaves(error)
    if any(isinstance(leaf, KeyboardInterrupt) for leaf in leaves):
        return typer.Exit(130)
    for leaf in leaves:
        if isinstance(leaf, LeagueBusy):
            return fail(
                f"another arena server plays the ladder of {home}: stop it first, or serve with "
                "--no-ladder"
            )
        if isinstance(leaf, ExecutorError):
            return fail(str(leaf), 1)
        if isinstance(leaf, socket.gaierror):
            return fail(f"cannot listen on {address}: {leaf.strerror or leaf}")
        if isinstance(leaf, OSError) and leaf.errno in (
            errno.EADDRINUSE,
            errno.EACCES,
            errno.EADDRNOTAVAIL,
        ):
            return fail(f"cannot listen on {address}: {leaf.strerror}")
    log = home / "arena-errors.log"
    with contextlib.suppress(OSError), log.open("a", encoding="utf-8") as out:
        out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        out.write("".join(traceback.format_exception(error)))
    first = leaves[0] if leaves else error
    return fail(
        f"the arena server stopped on an error ({type(first).__name__}: {first}); the "
        f"details are in {log}",
        1,
    )


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


@arena_app.command("enter")
def arena_enter(
    specs: Annotated[list[str], typer.Argument(help="Submitted bots: NAME or NAME@VERSION.")],
) -> None:
    """Enter submitted bots into the ladder (the organiser's own, e.g. the sample bots)."""
    _, store = open_arena()
    rows = []
    for spec in specs:  # every one found before any is entered: a refusal enters none
        if spec.endswith("@"):
            raise fail(f"{spec!r}: give NAME or NAME@VERSION; no bot entered")
        try:
            rows.append(resolve(store, spec))
        except RegistryError as error:
            raise fail(f"{error}; no bot entered") from None
    for row in rows:
        fresh = store.enter(row.ident, row.name)
        console.print(f"{said(row.ident)} {'entered' if fresh else 'is back in'} the ladder")


@arena_app.command("retire")
def arena_retire(
    spec: Annotated[str, typer.Argument(help="A ladder bot: NAME@VERSION.")],
) -> None:
    """Take a bot out of the ladder (its results stay)."""
    _, store = open_arena()
    if store.entrant(spec) is None:
        raise fail(f"no bot {spec!r} in the ladder")
    store.set_entrant(spec, EntrantState.RETIRED, "retired by the organiser")
    console.print(f"{said(spec)} retired from the ladder")


@arena_app.command("ban")
def arena_ban(
    name: Annotated[str, typer.Argument(help="A bot name (every version).")],
    reason: Annotated[str, typer.Option(help="Why (shown to its author).")] = "by the organiser",
) -> None:
    """Keep a bot name out of the ladder: its versions retire, and no upload of it is taken."""
    _, store = open_arena()
    if not store.name_known(name) and store.owner(name) is None:
        raise fail(f"no bot named {name!r} in this arena")
    store.ban(name, reason)
    retired = [
        entrant.ident
        for entrant in store.entrants()
        if entrant.name == name and entrant.state is not EntrantState.RETIRED
    ]
    for ident in retired:
        store.set_entrant(ident, EntrantState.RETIRED, f"banned: {reason}")
    console.print(
        f"{said(name)} banned; retired from the ladder: {said(', '.join(retired) or 'none')}"
    )


@arena_app.command("unban")
def arena_unban(name: Annotated[str, typer.Argument(help="A banned bot name.")]) -> None:
    """Let a banned name's author submit it again (its retired versions stay retired)."""
    _, store = open_arena()
    if not store.unban(name):
        raise fail(f"{name!r} is not banned")
    console.print(f"{said(name)} may be submitted again")


@author_app.command("add")
def author_add(name: Annotated[str, typer.Argument(help="The author's name.")]) -> None:
    """Create an author and print their first API token (shown this once)."""
    _print_token(add_author, name, f"author {said(name)} added; their token")


@author_app.command("token")
def author_token(name: Annotated[str, typer.Argument(help="The author's name.")]) -> None:
    """Print a new API token for an author (their other tokens stay valid)."""
    _print_token(issue_token, name, f"a new token for {said(name)}")


def _print_token(make: Callable[[ArenaStore, str], str], name: str, what: str) -> None:
    """Make a token and print it on standard output alone (what it is goes to standard error,
    so that ``gin arena author add NAME > token`` keeps just the token; in a terminal both go
    to standard output, the caption first)."""
    _, store = open_arena()
    try:
        token = make(store, name)
    except AccountError as error:
        raise fail(str(error)) from None
    caption = f"{what} (shown once, keep it secret):"
    if sys.stdout.isatty():  # one stream, so the caption is above the token in any terminal
        console.print(caption)
    else:
        errors.print(caption)
        sys.stderr.flush()
    print(token, flush=True)


@author_app.command("revoke")
def author_revoke(
    name: Annotated[str, typer.Argument(help="The author's name.")],
    token: Annotated[
        str | None, typer.Option(help="Revoke only this token (default: all of theirs).")
    ] = None,
) -> None:
    """Revoke an author's tokens: at once, every request after this is refused."""
    _, store = open_arena()
    try:
        count = revoke(store, name, "" if token is None else token_digest(token))
    except AccountError as error:
        raise fail(str(error)) from None
    if token is not None and count == 0:
        raise fail(f"that token is not a live token of {name}")
    console.print(f"revoked {count} token(s) of {said(name)}")


@author_app.command("list")
def author_list() -> None:
    """Every author, with their live tokens and bot names."""
    _, store = open_arena()
    owned: dict[str, list[str]] = {}
    for bot, author in sorted(store.owners().items()):
        owned.setdefault(author, []).append(bot)
    authors = store.authors()
    if not authors:
        console.print("no authors yet: add one with gin arena author add NAME")
    for name, created, live in authors:
        when = time.strftime("%Y-%m-%d", time.localtime(created))
        bots = ", ".join(owned.get(name, [])) or "no bots"
        console.print(f"{said(name)}: since {when}, {live} live token(s), {said(bots)}")
