"""``gin play``, ``gin demo`` and ``gin deadwood``: a series between two bot folders, shown live."""

from __future__ import annotations

import secrets
import sqlite3
from functools import partial
from pathlib import Path
from typing import Annotated

import trio
import typer
from rich.live import Live

from protocol.manifest import Manifest, ManifestError, load_manifest
from referee.conformance import tail_lines
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult
from referee.matchlog import stderr_path
from referee.remote import RemoteSeat
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
from referee.sandbox import Sandbox
from tournaments.cli import render
from tournaments.cli.common import (
    MoveTime,
    PinCpus,
    Strict,
    app,
    console,
    fail,
    move_time_control,
    open_arena,
    open_sandbox,
    place_cpus,
    print_table,
    said,
)
from tournaments.cli.live import MatchView
from tournaments.formats.seeds import play_bot_seeds
from tournaments.league import play_match_id, play_seed

__all__: list[str] = []


def _active_layers(sandbox: Sandbox) -> tuple[str, ...]:
    return tuple(status.layer.value for status in sandbox.layers if status.active)


def _default_log(match_id: str, manifests: tuple[Manifest, Manifest]) -> Path:
    """``runs/<match id>.jsonl``, unless that is inside a bot folder (``gin play .`` from the
    folder, as the guide shows): then beside that folder, so the bot's code (and its hash)
    stays as it was."""
    runs = Path("runs").resolve()
    for manifest in manifests:
        folder = manifest.folder.resolve()
        if runs.is_relative_to(folder):
            runs = folder.parent / "runs"
            console.print(f"the log goes to {said(runs)}/, outside the bot folder {said(folder)}")
    return runs / f"{match_id}.jsonl"


def _seeds(seed: int | None, public: bool) -> tuple[int, tuple[int, int]]:
    """The series' deal seed and the bots' own seeds. The deal seed: random; ``seed`` as given
    (public deals); or ``seed`` keyed with the secret of the store in ``GIN_HOME``, so that no bot
    can rebuild the deals from it. The bots' seeds: random without ``seed``, else from ``seed`` as
    the deal is (keyed alike, under a label of their own), so the same seed replays the series."""
    if seed is None:
        return secrets.randbits(63), play_bot_seeds(None, None)
    if public:
        return seed, play_bot_seeds(seed, None)
    _, store = open_arena()
    try:
        home = store.secret("home")
        return play_seed(home, seed), play_bot_seeds(seed, home)
    except sqlite3.Error as error:  # opened, but its key cannot be written or read
        raise fail(f"cannot keep the seed's key in the store {store.path}: {error}") from None
    finally:
        store.close()


def _manifest(folder: Path) -> Manifest:
    try:
        return load_manifest(folder)
    except ManifestError as error:
        raise fail(str(error)) from None


@app.command()
def demo(
    seed: Annotated[int, typer.Option(help="Series seed (the same seed, the same series).")] = 2026,
    plain: Annotated[
        bool, typer.Option(metavar="", help="Plain Gin Rummy: one game to 100.")
    ] = False,
) -> None:
    """The series demo: one seeded series between two built-in policies, in-process.

    No bot processes and no arena home: the rules at work, hand by hand. (gin league demo, as
    make demo runs it, is the other demo: a league of the sample bots, with standings.)"""
    if seed < 0:
        raise fail(f"--seed must be a non-negative integer, not {seed}")
    params = RuleParams(scoring=Scoring.PLAIN if plain else Scoring.HOLLYWOOD)
    names = ("greedy", "patient")
    table = render.hands_table()

    def on_hand_end(record: HandRecord) -> None:
        table.add_row(*render.hand_row(record, names))

    result = play_series(greedy_policy, patient_policy, seed, params, on_hand_end=on_hand_end)
    print_table(table)
    print_table(render.score_sheet(result, names))
    console.print(render.result_line(result, names))
    console.print(
        "the series demo, in-process (gin league demo is the other: a league of the sample "
        "bots as processes, with standings)",
        highlight=False,
    )


@app.command()
def deadwood(
    cards: Annotated[str, typer.Argument(help="Cards in notation, e.g. 'As 2s 3s 7d 7h 7c Kd'.")],
) -> None:
    """Show the minimum deadwood of a hand (and the best discards of an 11-card hand)."""
    try:
        hand = parse_cards(cards)
    except ValueError as error:
        raise fail(str(error)) from None
    console.print(f"{min_deadwood(hand)}")
    if len(hand) == 11:
        least, discards = best_discards(hand)
        names = " ".join(str(card) for card in discards)
        console.print(f"best discards: {names} (deadwood {least} after)")


@app.command()
def play(
    bot_a: Annotated[Path, typer.Argument(help="The first bot's folder (seat 0).")],
    bot_b: Annotated[Path, typer.Argument(help="The second bot's folder (seat 1).")],
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Series seed: the same seed deals the same series again with this GIN_HOME's "
            "secret (random deals if not given).",
        ),
    ] = None,
    public_deals: Annotated[
        bool,
        typer.Option(
            "--public-deals",
            metavar="",
            help="Deal from --seed alone, the same anywhere: anyone, the bots too, can rebuild "
            "the deals.",
        ),
    ] = False,
    move_time: MoveTime = 1.0,
    log: Annotated[Path | None, typer.Option(help="Match log file (JSON Lines).")] = None,
    strict: Strict = False,
    pin: PinCpus = False,
) -> None:
    """Play one Hollywood series between two bot folders, shown live."""
    manifests = (_manifest(bot_a), _manifest(bot_b))
    if public_deals and seed is None:
        raise fail("--public-deals needs --seed: the deals follow from it alone")
    sandbox = open_sandbox(strict)
    deal_seed, bot_seeds = _seeds(seed, public_deals)
    match_id = play_match_id()
    log = log or _default_log(match_id, manifests)
    if log.exists():
        raise fail(f"{log} exists; choose another --log")
    if not log.parent.is_dir():
        try:
            log.parent.mkdir(parents=True)
        except OSError as error:
            raise fail(f"cannot make {log.parent} for the log: {error.strerror}") from None
        console.print(f"made {said(log.parent)}/ for the log", soft_wrap=True)
    placement = place_cpus(pin)
    config = MatchConfig(
        match_id,
        deal_seed,
        time_control=move_time_control(move_time),
        sandbox=_active_layers(sandbox),
        cpus=None if placement is None else placement.as_pair(),
        bot_seeds=bot_seeds,
    )
    seats = (
        remote_seat(manifests[0], sandbox.prepare, f"{match_id}-0"),
        remote_seat(manifests[1], sandbox.prepare, f"{match_id}-1"),
    )
    result, view = _watched(seats, config, log, (manifests[0].ident, manifests[1].ident))
    names = view.names
    verdict = "no winner" if result.winner is None else f"{names[result.winner]} wins"
    dealt = "" if seed is None else f", seed {seed}{' (public deals)' if public_deals else ''}"
    summary = f"{verdict} ({result.end}, {result.hands} hands{dealt}); log: {log}"
    console.print(render.bot_text(summary))
    for fault in result.faults:
        console.print(render.fault_text(fault))
    for faulted in sorted({fault.seat for fault in result.faults}):
        _show_stderr(log, faulted)


def _watched(
    seats: tuple[RemoteSeat, RemoteSeat], config: MatchConfig, log: Path, names: tuple[str, str]
) -> tuple[MatchResult, MatchView]:
    """Play the series and show it: in a terminal, live (the last hands), then a table of every
    hand; off a terminal, a line per hand as it ends. The score sheet after either."""
    if console.is_terminal:
        view = MatchView(names)
        with Live(view, console=console, refresh_per_second=8, transient=True):
            result = trio.run(play_folders, seats, config, log, view.on_record)
        console.print(view.hands_table())
    else:
        view = MatchView(names, partial(console.print, soft_wrap=True, highlight=False))
        result = trio.run(play_folders, seats, config, log, view.on_record)
    print_table(view.score_sheet())
    console.print(view.status())
    return result, view


def _show_stderr(log: Path, seat: int) -> None:
    """The last lines a seat wrote to stderr (as kept beside the log), and how to see them all."""
    path = stderr_path(log, seat)
    lines = tail_lines(path.read_text(encoding="utf-8")) if path.is_file() else ()
    if lines:
        heading = (
            f"seat {seat} stderr: last {len(lines)} lines "
            f"(all of it: gin replay {log} --stderr {seat})"
        )
        render.print_stderr(console, lines, heading)
