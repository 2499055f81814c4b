"""``gin replay``: step through a logged match, verify it, write it as a web page, or print
what a seat's bot wrote to stderr (kept beside the log).

Thin: it finds the log, calls :mod:`referee.replay`, and hands the result to a renderer.
Exit codes: 0 fine; 1 the log disagrees with the rules or cannot be read; 2 no such log or a bad
option; 3 (``--verify``) the log is incomplete, so its result cannot be proven.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from referee.bot_text import shown
from referee.matchlog import stderr_path
from referee.replay import (
    RUNS_DIR,
    LogNotFound,
    LogReadError,
    Replay,
    VerifyStatus,
    Viewer,
    find_log,
    load_replay,
    verify_log,
)
from tournaments.cli.common import fail, open_arena, said
from tournaments.cli.replay_view import SPEEDS, Player, TerminalKeys, play, print_transcript
from tournaments.registry import Arena
from tournaments.store import StoreDamaged
from tournaments.views.replay_html import replay_html

__all__ = ["replay"]


console = Console(emoji=False)  # ":name:" in bot text stays as written

VERIFY_EXIT = {VerifyStatus.VERIFIED: 0, VerifyStatus.FAILED: 1, VerifyStatus.INCOMPLETE: 3}


def _viewer(seat: int | None) -> Viewer:
    if seat is not None and seat not in (0, 1):
        console.print(f"[red]error:[/red] --seat must be 0 or 1, not {seat}")
        raise typer.Exit(2)
    return seat


def _find(reference: str, runs: Path) -> Path:
    stored = _stored_log(reference)
    if stored is not None:
        return stored
    try:
        return find_log(reference, runs)
    except LogNotFound as error:
        console.print(f"[red]error:[/red] {said(error)}")
        raise typer.Exit(2) from None


def _stored_log(match_id: str) -> Path | None:
    """A league match's log, found by its id through the store (``$GIN_HOME``)."""
    arena = Arena.default()
    if Path(match_id).is_file() or not arena.store_path.is_file():
        return None
    _, store = open_arena()  # a store it cannot use is a one-line error
    try:
        result = store.result(match_id)
    except StoreDamaged as error:
        raise fail(f"{error}; give the log's path instead") from None
    return None if result is None else Path(result.log_path)


def _print_stderr(path: Path, seat: int) -> None:
    """Print the stderr kept for ``seat`` beside the log at ``path``, lines as the bot wrote
    them (controls shown); exit 2 when there is none."""
    if seat not in (0, 1):
        console.print(f"[red]error:[/red] --stderr must be 0 or 1, not {seat}")
        raise typer.Exit(2)
    kept = stderr_path(path, seat)
    if not kept.is_file():
        message = f"no stderr kept for seat {seat} of {path} (no file {kept})"
        console.print(f"[red]error:[/red] {said(message)}", soft_wrap=True)
        raise typer.Exit(2)
    text = kept.read_text(encoding="utf-8", errors="replace")
    if not text:
        console.print(f"seat {seat}'s bot wrote nothing to stderr")
        return
    console.print(Text(shown(text, lines=True)), soft_wrap=True, end="")


def _load(path: Path) -> Replay:
    try:
        replay = load_replay(path)
    except LogReadError as error:
        console.print(f"[red]cannot read the log:[/red] {said(error)}", soft_wrap=True)
        raise typer.Exit(1) from None
    if not replay.report.ok:
        summary = said(replay.report.summary(), lines=True)
        console.print(f"[yellow]warning:[/yellow] {summary}", soft_wrap=True)
    return replay


def replay(
    log: Annotated[str, typer.Argument(help="A match log file, or a match id (runs/ID.jsonl).")],
    seat: Annotated[
        int | None, typer.Option(help="Show seat 0's or seat 1's view (default: the referee's).")
    ] = None,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify", metavar="", help="Re-play the log through the rules and check it."
        ),
    ] = False,
    html: Annotated[
        Path | None, typer.Option(help="Write a self-contained web page of the replay here.")
    ] = None,
    print_all: Annotated[
        bool,
        typer.Option(
            "--print", metavar="", help="Print the whole series (the default when not a terminal)."
        ),
    ] = False,
    hand: Annotated[
        int, typer.Option(help="Start at this hand (1-based; the player and --print).", min=1)
    ] = 1,
    speed: Annotated[
        float, typer.Option(help=f"Steps per second when playing ({', '.join(map(str, SPEEDS))}).")
    ] = 2.0,
    runs: Annotated[Path, typer.Option(help="Where match ids are looked up.")] = RUNS_DIR,
    stderr: Annotated[
        int | None,
        typer.Option(
            "--stderr",
            help="Print what seat 0's or seat 1's bot wrote to stderr (head and tail, as kept).",
        ),
    ] = None,
) -> None:
    """Step through a logged match, verify it, or write it as a web page.

    Hand by hand and decision by decision. Keys: → next, ← back, ↓ ↑ hands, 12g hand 12, space
    play, v view, q quit."""
    viewer = _viewer(seat)
    path = _find(log, runs)
    if stderr is not None:
        _print_stderr(path, stderr)
        return
    if verify:
        report = verify_log(path)
        console.print(
            f"{said(path)}: {said(report.summary(), lines=True)}", soft_wrap=True, highlight=False
        )
        raise typer.Exit(VERIFY_EXIT[report.status])
    loaded = _load(path)
    start = _hand_start(loaded, hand)
    if html is not None:
        if not html.parent.is_dir():
            raise fail(f"--html {html}: no folder {html.parent} (make it first)")
        try:
            html.write_text(replay_html(loaded, viewer), encoding="utf-8")
        except OSError as error:
            raise fail(f"--html {html}: cannot write it ({error.strerror})") from None
        console.print(f"wrote {said(html)} ({viewer_label(viewer)}, {len(loaded.steps)} steps)")
        return
    if print_all or not (sys.stdin.isatty() and console.is_terminal):
        print_transcript(loaded, viewer, console, start)
        return
    player = Player(loaded, viewer, switch_views=viewer is None)
    player.speed = min(range(len(SPEEDS)), key=lambda index: abs(SPEEDS[index] - speed))
    player.go_hand(hand - 1)
    with TerminalKeys() as keys:
        play(player, keys, console)


def _hand_start(loaded: Replay, hand: int) -> int:
    """The first step of ``--hand`` (1-based); exit 2 when the log has no such hand."""
    starts = loaded.hand_starts()
    if hand == 1 and not starts:
        return 0  # a log that ends before its first deal: shown as it is
    if hand > len(starts):
        raise fail(f"--hand {hand}: the log has hands 1 to {len(starts)}")
    return starts[hand - 1]


def viewer_label(viewer: Viewer) -> str:
    """``the referee's view`` or ``seat N's view``."""
    return "the referee's view" if viewer is None else f"seat {viewer}'s view"
