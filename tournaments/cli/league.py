"""``gin league create|extend|run|demo|status|verify|restat|standings``."""

from __future__ import annotations

import enum
import json
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import trio
import typer
from rich.live import Live
from rich.table import Table

from tournaments.arena.ladder import LADDER
from tournaments.audit import AuditReport, audit, unrecorded
from tournaments.cli import render
from tournaments.cli.common import (
    AsJson,
    Strict,
    choice,
    console,
    errors,
    fail,
    league_app,
    open_arena,
    open_sandbox,
    print_table,
    said,
)
from tournaments.cli.demo import DemoHomeError, demo_note, prepare_demo
from tournaments.cli.event_view import bracket_grid, event_grid, round_lines, rounds_grid
from tournaments.cli.live import LeagueView, PlainProgress
from tournaments.executors import Executor, ExecutorError
from tournaments.league import (
    LeagueConfig,
    LeagueError,
    create_league,
    extend_league,
    load_league,
    stored_league,
)
from tournaments.registry import Arena
from tournaments.restat import restat
from tournaments.rounds import EventLine, EventState, event_standings, event_state
from tournaments.runner import LeagueBusy, LeagueRunner, Listener, runner_of
from tournaments.stats.standings import Standings, read_standings
from tournaments.store import MatchState, Store, StoreDamaged

__all__ = ["ExecutorKind", "check_scheduler"]


class Format(enum.StrEnum):
    """Output formats of the standings."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"
    HTML = "html"


Wide = Annotated[
    bool,
    typer.Option(
        "--wide",
        metavar="",
        help="Every column of the standings, however narrow the terminal (docs/cli.md, widths).",
    ),
]


def _league(store: Store, name: str) -> LeagueConfig:
    try:
        stored = stored_league(store, name)
    except StoreDamaged as error:
        raise fail(f"{error} in {store.path}; restore the store from a backup") from None
    except (ValueError, TypeError, KeyError, AttributeError) as error:  # LeagueError, bad JSON
        why = " ".join(str(error).split())  # a LeagueError lists its problems a line each
        raise fail(
            f"league {name!r}: its definition in the store {store.path} cannot be read "
            f"({type(error).__name__}: {why}); restore the store from a backup"
        ) from None
    if stored is None:
        known = ", ".join(store.leagues()) or "none yet"
        raise fail(f"no league {name!r} (leagues: {known}); create one with gin league create")
    return stored.config


@league_app.command("create")
def league_create(file: Annotated[Path, typer.Argument(help="The league's TOML file.")]) -> None:
    """Create a league from a TOML file (again, with more bots, to add them)."""
    _, store = open_arena()
    try:
        config = load_league(file, store)
        idents, added = create_league(store, config)
    except LeagueError as error:
        raise fail(str(error)) from None
    total = len(store.matches(config.name))
    console.print(f"league {config.name}: {len(idents)} bots, {total} matches ({added} new)")


@league_app.command("extend")
def league_extend(
    name: Annotated[str, typer.Argument(help="The league.")],
    series: Annotated[
        int, typer.Option("--series", help="Series to add to every pairing (even: pairs).")
    ],
) -> None:
    """Add series to every pairing, with new deals; no existing match changes.

    Play them with gin league run."""
    _, store = open_arena()
    _league(store, name)
    try:
        grown, added = extend_league(store, name, series)
    except LeagueError as error:
        raise fail(str(error)) from None
    console.print(
        f"league {name}: {grown.series_per_pairing} series per pairing, {added} new matches; "
        f"play them with: gin league run {name}"
    )


class ExecutorKind(enum.StrEnum):
    """Where a league's matches are played."""

    LOCAL = "local"
    DASK = "dask"


def _executor(
    kind: ExecutorKind, scheduler: str | None, jobs: int | None, strict: bool
) -> Executor | None:
    """The executor asked for (None: local worker processes), its problems reported plainly."""
    if kind is ExecutorKind.LOCAL:
        if scheduler is not None:
            raise fail("--scheduler goes with --executor dask")
        return None
    if scheduler is None:
        raise fail("--executor dask needs --scheduler tcp://HOST:PORT (the Dask scheduler)")
    check_scheduler(scheduler)
    try:
        from tournaments.executors.cluster import ClusterError, DaskExecutor  # noqa: PLC0415 - optional
    except ImportError as error:
        raise fail(
            f"the Dask executor needs the dask extra ({error}): pip install '.[dask]' on the "
            "coordinator and on every worker machine"
        ) from None
    try:
        executor, report = DaskExecutor.connect(scheduler, cap=jobs, strict=strict)
    except ClusterError as error:
        raise fail(str(error), 1) from None
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(
        f"cluster {scheduler}: {len(report.workers)} worker(s), {executor.slots} match(es) at once"
    )
    return executor


SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")
"""The Dask schemes ``--scheduler`` takes (none: ``tcp``)."""


def check_scheduler(address: str) -> None:
    """Refuse a ``--scheduler`` that is not ``[SCHEME://]HOST:PORT`` before Dask sees it: Dask's
    client raises a ``ValueError`` on one, and its destructor then waits 40 s to close."""
    scheme, has_scheme, rest = address.partition("://")
    if not has_scheme:
        scheme, rest = "tcp", address
    try:
        parts = urlsplit(f"//{rest}")
        fine = bool(parts.hostname) and (parts.port or 0) > 0 and not parts.path
    except ValueError:  # a port out of range, a broken [IPv6] address
        fine = False
    if not fine or scheme not in SCHEDULER_SCHEMES or any(char.isspace() for char in address):
        raise fail(
            f"--scheduler {address!r}: give the Dask scheduler's address as tcp://HOST:PORT "
            f"(schemes: {', '.join(SCHEDULER_SCHEMES)})"
        )


@league_app.command("run")
def league_run(
    name: Annotated[str, typer.Argument(help="The league to run.")],
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", help="Matches at once (with dask: at most this many)."),
    ] = None,
    strict: Strict = False,
    executor_kind: Annotated[
        ExecutorKind,
        typer.Option(
            "--executor",
            parser=choice(ExecutorKind),
            help="Where matches run: local processes or a Dask cluster.",
        ),
    ] = ExecutorKind.LOCAL,
    scheduler: Annotated[
        str | None,
        typer.Option(help="The Dask scheduler's address, tcp://HOST:PORT (with --executor dask)."),
    ] = None,
    wide: Wide = False,
) -> None:
    """Play every pending match, N at once, with a live display. Safe to stop and resume."""
    if jobs is not None and jobs < 1:  # 0 too: as gin match and gin arena serve, never "default"
        raise fail(f"--jobs must be at least 1, not {jobs}")
    if scheduler is not None:
        check_scheduler(scheduler)  # before the store is opened
    arena, store = open_arena()
    config = _league(store, name)
    if executor_kind is ExecutorKind.LOCAL:
        open_sandbox(strict)  # prints the warnings once, refuses when strict and incomplete
    executor = _executor(executor_kind, scheduler, jobs, strict)
    listener, watching = _watcher(store, name)
    again = f" --executor dask --scheduler {scheduler}" if executor else ""
    try:
        runner = LeagueRunner(
            arena,
            store,
            config,
            jobs or config.jobs,
            strict=strict,
            listener=listener,
            executor=executor,
        )
        with watching:
            progress = trio.run(runner.run)
    except LeagueBusy as busy:
        raise fail(str(busy)) from None
    except StoreDamaged as error:
        raise fail(f"{error}; restore the store from a backup") from None
    except (KeyboardInterrupt, ExecutorError) as stop:
        if isinstance(stop, ExecutorError):
            console.print(f"[red]error:[/red] {said(stop)}")
        counts = store.counts(name)
        console.print(
            f"stopped: {counts.get(MatchState.DONE, 0)} matches done, "
            f"{counts.get(MatchState.PENDING, 0)} left. Resume with: gin league run {name}{again}"
        )
        raise typer.Exit(130 if isinstance(stop, KeyboardInterrupt) else 1) from None
    console.print(
        f"league {name}: {progress.finished_now} matches played now, "
        f"{progress.done}/{progress.total} done, {progress.failed} failed"
    )
    _print_standings(store, name, Format.TABLE, wide=wide)
    if progress.failed:
        console.print(
            f"{progress.failed} match(es) failed (gin league status {name} says why); "
            f"gin league run {name} tries them again",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _watcher(store: Store, name: str) -> tuple[Listener, AbstractContextManager[object]]:
    """The runner's listener and what shows it: a live display with the running standings in
    a terminal, a line per match recorded elsewhere (a live display off a terminal shows
    nothing until the end)."""
    if console.is_terminal:
        view = LeagueView(lambda: read_standings(store, name))
        return view.update, Live(view, console=console, refresh_per_second=4)
    return PlainProgress(console).update, nullcontext()


@league_app.command("demo")
def league_demo(
    home: Annotated[Path, typer.Option(help="Demo home (emptied first).")] = Path(".gin-demo"),
    series: Annotated[int, typer.Option(help="Series per pairing (even).")] = 8,
    jobs: Annotated[int, typer.Option("-j", "--jobs", help="Matches at once.")] = 2,
    seed: Annotated[
        int, typer.Option(help="League seed; the deals follow from it alone (public).")
    ] = 2026,
    wide: Wide = False,
) -> None:
    """The league demo: a short league of the sample bots, live, then the standings.

    Real bot processes in the sandbox, in a home of its own; its deals are public, so every
    fresh run gives the same standings. (gin demo is the other demo: one series, in-process.)"""
    if jobs < 1:
        raise fail(f"--jobs must be at least 1, not {jobs}")
    sandbox = open_sandbox(strict=False)
    try:
        arena, store, config = prepare_demo(home, series, seed)
    except DemoHomeError as error:
        raise fail(str(error)) from None
    layers = ", ".join(s.layer.name for s in sandbox.layers if s.active) or "none"
    console.print(
        f"demo league: {', '.join(config.bots)}; {len(store.matches('demo'))} series, "
        f"{jobs} at once; sandbox layers: {layers}"
    )
    console.print(demo_note(seed), highlight=False)
    listener, watching = _watcher(store, "demo")
    runner = LeagueRunner(arena, store, config, jobs, listener=listener)
    with watching:
        trio.run(runner.run)
    _print_standings(store, "demo", Format.TABLE, wide=wide)
    console.print(f"logs: {arena.logs_dir('demo')}  (gin replay LOG to watch one)")


@league_app.command("status")
def league_status(
    name: Annotated[str, typer.Argument(help="The league.")], as_json: AsJson = False
) -> None:
    """How many matches are done, pending, running or failed, and whether a runner is at it."""
    arena, store = open_arena()
    config = _league(store, name)
    try:
        counts = store.counts(name)
        failed = store.matches(name, MatchState.FAILED)
        missing = unrecorded(store, name)
        state = event_state(store, name) if config.event else None
    except StoreDamaged as error:
        raise fail(f"{error}; restore the store from a backup") from None
    if missing:
        _warn_unrecorded(name, counts.get(MatchState.DONE, 0), missing)
    if as_json:
        holder = runner_of(arena, name)
        document = {
            "league": name,
            "counts": {state.value: counts.get(state, 0) for state in MatchState},
            "runner": holder,
            "left_running": 0 if holder is not None else counts.get(MatchState.RUNNING, 0),
            "failed": [{"match_id": m.match_id, "note": m.note} for m in failed],
            "unrecorded": missing,
        }
        if state is not None:
            document["event"] = state.to_dict()
        print(json.dumps(document, indent=2))
        return
    console.print(", ".join(f"{state}: {count}" for state, count in sorted(counts.items())))
    for line in round_lines(state) if state is not None else []:
        console.print(said(line), soft_wrap=True)
    console.print(_runner_line(arena, name, counts))
    for match in failed:
        console.print(f"[red]failed[/red] {said(match.match_id)}: {said(match.note)}")


def _warn_unrecorded(name: str, done: int, missing: list[str]) -> None:
    """Say, on stderr, that matches marked done have no result (the standings leave them out)."""
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    one = len(missing) == 1
    errors.print(
        f"[yellow]warning:[/yellow] {len(missing)} {'match has' if one else 'matches have'} "
        f"no result in the store though {'it is' if one else 'they are'} marked done or had one "
        f"recorded ({said(shown)}): the standings leave {'it' if one else 'them'} out "
        f"({done} marked done); gin league verify {said(name)} checks the store against the logs",
        soft_wrap=True,
    )


def _runner_line(arena: Arena, name: str, counts: dict[MatchState, int]) -> str:
    """Who is playing the league: a live runner, or none (rows left running by a runner that
    died are said to be so)."""
    holder = runner_of(arena, name)
    if holder is not None:
        return f"runner: process {holder or '?'} is playing it"
    running = counts.get(MatchState.RUNNING, 0)
    again = "gin arena serve" if name == LADDER else f"gin league run {name}"
    if running:
        return (
            f"runner: none; the {running} running match(es) were left by a runner that stopped: "
            f"{again} plays them again"
        )
    left = counts.get(MatchState.PENDING, 0) + counts.get(MatchState.FAILED, 0)
    if name == LADDER:  # the arena's: it never completes
        return f"runner: none; {again} plays the {left} left, then new pairs"
    return f"runner: none; {again} plays the {left} left" if left else "complete"


@league_app.command("list")
def league_list(as_json: AsJson = False) -> None:
    """Every league of this home: its bots, how far it is, and whether a runner is at it."""
    arena, store = open_arena()
    lines = [_league_line(arena, store, name) for name in store.leagues()]
    if as_json:
        print(json.dumps(lines, indent=2))
        return
    if not lines:
        console.print(f"no leagues in {arena.home} yet: gin league create FILE")
        return
    table = Table(title=f"Leagues in {arena.home}")
    for column in ("league", "kind", "bots", "done", "pending", "failed", "runner"):
        table.add_column(column, overflow="fold")
    for line in lines:
        if "error" in line:
            table.add_row(said(line["league"]), "?", said(line["error"]), "", "", "", "")
            continue
        bots = line["bots"]
        assert isinstance(bots, list)
        holder = line["runner"]
        table.add_row(
            said(line["league"]),
            str(line["kind"]),
            str(len(bots)),
            f"{line['done']}/{line['total']}",
            str(line["pending"]),
            str(line["failed"]),
            "-" if holder is None else f"process {holder or '?'}",
        )
    print_table(table)


def _league_line(arena: Arena, store: Store, name: str) -> dict[str, object]:
    """One league in ``gin league list --json`` (docs/cli.md has the schema)."""
    try:
        stored = stored_league(store, name)
        counts = store.counts(name)
    except (LeagueError, StoreDamaged) as error:
        return {"league": name, "error": str(error)}
    if stored is None:
        return {"league": name, "error": "no stored definition"}
    return {
        "league": name,
        "kind": _kind(stored.config),
        "bots": list(stored.resolved or stored.config.bots),
        "done": counts.get(MatchState.DONE, 0),
        "total": sum(counts.values()),
        "pending": counts.get(MatchState.PENDING, 0) + counts.get(MatchState.RUNNING, 0),
        "failed": counts.get(MatchState.FAILED, 0),
        "runner": runner_of(arena, name),
    }


def _kind(config: LeagueConfig) -> str:
    if config.event:
        return config.format
    if config.sprt is not None:
        return "match (sequential)"
    return "gauntlet" if config.candidates else "round robin"


@league_app.command("verify")
def league_verify(
    name: Annotated[str, typer.Argument(help="The league.")], as_json: AsJson = False
) -> None:
    """Re-play every finished match's log and check the store against the logs; exit 1 on any.

    Checked: each result against its log (winner, scores, faults, code hashes), one result and
    one log per done match, no result lost since it was recorded, no result of a match not
    scheduled, no stray logs. Says how many matches are scheduled, by state."""
    arena, store = open_arena()
    _league(store, name)
    try:
        report = audit(store, name, arena.logs_dir(name))
    except StoreDamaged as error:
        raise fail(f"{error}; restore the store from a backup") from None
    if as_json:
        print(json.dumps(_verify_document(name, report), indent=2))
        raise typer.Exit(0 if report.ok else 1)
    for note in report.unchecked:
        console.print(
            f"[yellow]not checked[/yellow] {said(note.match_id)}: {said(note.what)}", soft_wrap=True
        )
    for found in report.discrepancies:
        console.print(
            f"[red]mismatch[/red] {said(found.match_id)}: {said(found.what, lines=True)}",
            soft_wrap=True,
        )
    schedule = ", ".join(f"{count} {state.value}" for state, count in report.scheduled)
    verified = (
        f"{report.verified} of {report.results} match logs verified; "
        f"{report.matches} scheduled: {schedule or 'none'}"
    )
    if report.ok:
        console.print(verified)
        return
    count = len(report.discrepancies)
    console.print(f"{verified}; {count} {'mismatch' if count == 1 else 'mismatches'} in the store")
    raise typer.Exit(1)


def _verify_document(name: str, report: AuditReport) -> dict[str, object]:
    """``gin league verify --json`` (docs/cli.md has the schema)."""
    return {
        "league": name,
        "ok": report.ok,
        "results": report.results,
        "verified": report.verified,
        "scheduled": {state.value: count for state, count in report.scheduled},
        "mismatches": [{"match_id": d.match_id, "what": d.what} for d in report.discrepancies],
        "unchecked": [{"match_id": d.match_id, "what": d.what} for d in report.unchecked],
    }


@league_app.command("restat")
def league_restat(name: Annotated[str, typer.Argument(help="The league.")]) -> None:
    """Recount the results' hand statistics from their verified logs; exit 1 if one is not.

    A result whose log is unreadable, does not verify or is another match's is left as it is."""
    _, store = open_arena()
    _league(store, name)
    report = restat(store, name)
    for match_id, why in report.refused:
        console.print(f"[red]not recounted[/red] {said(match_id)}: {said(why, lines=True)}")
    console.print(
        f"{report.checked} results recounted from their logs, {len(report.changed)} changed"
    )
    if report.refused:
        raise typer.Exit(1)


@league_app.command("standings")
def league_standings(
    name: Annotated[str, typer.Argument(help="The league.")],
    output: Annotated[
        Format,
        typer.Option(
            "--format",
            parser=choice(Format),
            help="table, json, csv, markdown (to paste) or html (a page to publish).",
        ),
    ] = Format.TABLE,
    crosstable: Annotated[
        bool,
        typer.Option(
            "--crosstable",
            metavar="",
            help="Also the crosstable (table); with --format csv, one row per pairing instead.",
        ),
    ] = False,
    wide: Wide = False,
) -> None:
    """The standings: results per bot, ratings with 95% intervals, the pairwise table."""
    _, store = open_arena()
    _league(store, name)
    _print_standings(store, name, output, crosstable=crosstable, wide=wide)


def _print_standings(
    store: Store, name: str, output: Format, *, crosstable: bool = False, wide: bool = False
) -> None:
    """The standings in a format: ``crosstable`` adds the grid to the table and turns the CSV
    into one row per ordered pairing (JSON holds both always); ``wide``: a table's every
    column, whatever the terminal's width."""
    try:
        standings = read_standings(store, name)
        event = _event_standings(store, name, standings)
    except StoreDamaged as error:
        raise fail(
            f"{error}; if only its hand statistics are damaged, gin league restat {name} "
            "recounts them from the logs, otherwise restore the store from a backup"
        ) from None
    if output is Format.JSON:
        document = standings.to_dict()
        if event is not None:
            state, lines, _ = event
            document["event"] = {
                **state.to_dict(),
                "standings": [line.to_dict() for line in lines],
            }
        print(json.dumps(document, indent=2))
    elif output is Format.CSV:
        print(standings.pairwise_csv() if crosstable else standings.to_csv(), end="")
    else:
        stored = stored_league(store, name)  # pairings from the side its definition names first
        first = () if stored is None else stored.resolved or stored.config.bots
        grids = [render.standings_grid(standings), render.pairwise_grid(standings, first)]
        if event is not None:
            grids.insert(0, event_grid(*event))
            if output in (Format.MARKDOWN, Format.HTML) and event[0].rounds:
                state = event[0]
                shape = rounds_grid if state.league.config.format == "swiss" else bracket_grid
                grids.insert(1, shape(state))
        if crosstable or output is Format.HTML:  # a page has room for the grid
            grids.append(render.crosstable_grid(standings))
        if output is Format.MARKDOWN:
            print("\n".join(render.markdown(grid) for grid in grids), end="")
        elif output is Format.HTML:
            print(render.html_page(f"Standings: {name}", grids, render.GLOSSARY), end="")
        else:
            for grid in grids:
                _print_grid(grid, wide=wide)


def _event_standings(
    store: Store, name: str, standings: Standings
) -> tuple[EventState, list[EventLine], dict[str, str]] | None:
    """An event's state and standings, its bots' ratings beside them, and their Elo cells as
    the standings write them (a bound as a bound; ``None``: not an event)."""
    config = _league(store, name)
    if not config.event:
        return None
    state = event_state(store, name)
    ratings = {line.bot: line.rating for line in standings.bots}
    cells = {line.bot: render.rating_cells(line)[0] for line in standings.bots}
    return state, event_standings(state, ratings), cells


def _print_grid(grid: render.Grid, *, wide: bool = False) -> None:
    """A grid fitted to the terminal (:func:`render.fit`); off a terminal, or ``wide``, as
    ``print_table`` prints its rich table off one, at its full width (without colour, the same
    text made without rich: seconds less for a league of 64 bots)."""
    if console.is_terminal and not wide:
        for part in render.fit(grid, console.width).renderables():
            console.print(part, soft_wrap=False)  # a title wider than its table wraps
        return
    plain = render.plain_table(grid) if console.color_system is None else None
    if plain is None:
        print_table(render.rich_table(grid), full=True)
    else:
        console.file.write(plain)
