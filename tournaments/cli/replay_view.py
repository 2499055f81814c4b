"""``gin replay`` in the terminal: the table at each step, a transcript, and a key-driven player.

The player's logic (:class:`Player`) is pure: keys in, position out. The terminal part is a small
key reader in cbreak mode (:class:`TerminalKeys`); tests drive the player with scripted keys.
Names, match ids and step texts come from the log, which a bot may have shaped: they go in as
``Text``, through :func:`referee.bot_text.shown`.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from referee.bot_text import shown
from referee.replay import (
    Replay,
    ResultRecord,
    SeatHand,
    Step,
    StepKind,
    Table,
    Viewer,
    viewer_name,
)
from referee.rules import Card, min_deadwood
from tournaments.cli.render import cards_text, showdown_text
from tournaments.views.words import series_lines, step_text

__all__ = [
    "SPEEDS",
    "Player",
    "ScriptedKeys",
    "TerminalKeys",
    "decode_keys",
    "play",
    "print_transcript",
    "step_view",
]


HIDDEN = "▒▒"
PILE_SHOWN = 14
"""How many of the discard pile's top cards the table shows."""


# --- pieces of the table -------------------------------------------------------------------------


def _name(replay: Replay, seat: int) -> str:
    return shown(replay.names[seat])


def seat_label(replay: Replay, table: Table, seat: int) -> Text:
    """A seat's name with its markers: who deals, who is to move, whose view it is."""
    label = Text(_name(replay, seat), style="bold")
    if table.viewer == seat:
        label.append(" (you)", style="cyan")
    if table.dealer == seat:
        label.append(" · dealer", style="dim")
    if table.to_move == seat and table.showdown is None:
        label.append(" · to move", style="yellow")
    return label


def hand_text(hand: SeatHand) -> Text:
    """A hand as this viewer sees it: every card, or the backs with any cards known."""
    if hand.cards is not None:
        text = cards_text(sorted(hand.cards, key=_display_order))
        if len(hand.cards) == 10:
            text.append(f"   deadwood {min_deadwood(hand.cards).deadwood}", style="dim")
        return text
    text = Text(" ".join([HIDDEN] * hand.count), style="dim")
    text.append(f"  {hand.count} cards")
    if hand.known:
        text.append("; known: ")
        text.append_text(cards_text(hand.known))
    return text


def _display_order(card: Card) -> tuple[int, int]:
    return (card.suit, card.rank)


def pile_text(table: Table) -> Text:
    """The discard pile (its top cards, the top last) and the stock."""
    pile = table.discard_pile
    text = Text("discard pile: ")
    if len(pile) > PILE_SHOWN:
        text.append(f"({len(pile) - PILE_SHOWN} more) ", style="dim")
    text.append_text(cards_text(pile[-PILE_SHOWN:], top=pile[-1] if pile else None))
    text.append(f"\nstock: {table.stock_count} cards")
    if table.stock is not None:
        text.append(" (top first) ", style="dim")
        text.append_text(cards_text(table.stock))
    return text


def score_table(replay: Replay, table: Table) -> RichTable:
    """The score sheet: each seat's total in each game, a won game in bold green."""
    sheet = RichTable(title="score sheet", title_justify="left", expand=False, pad_edge=False)
    sheet.add_column("player")
    games = len(table.game_winners)
    for game in range(games):
        sheet.add_column(f"game {game + 1}", justify="right")
    for seat in (0, 1):
        cells: list[str | Text] = [Text(_name(replay, seat))]
        for game in range(games):
            won = table.game_winners[game] == seat
            cells.append(Text(str(table.totals[seat][game]), style="bold green" if won else ""))
        sheet.add_row(*cells)
    return sheet


def step_line(replay: Replay, step: Step, viewer: Viewer) -> Text:
    """One line for one step: what happened, as ``viewer`` saw it, with its time if known."""
    style = {StepKind.FAULT: "red", StepKind.NOTE: "bold red", StepKind.SHOWDOWN: "bold"}
    text = Text(shown(step_text(step, viewer, replay.names)), style=style.get(step.kind, ""))
    if step.ms is not None and (viewer is None or viewer == step.seat):
        text.append(f"  ({step.ms:.1f} ms)", style="dim")
    return text


def title_text(replay: Replay, step: Step, viewer: Viewer) -> Text:
    """The header line: match, hand, step and view."""
    header = replay.header
    hand = f"hand {step.hand_number + 1}" if step.hand_number >= 0 else "before the first hand"
    view = viewer_name(viewer)
    if viewer is not None:
        view += f" ({replay.names[viewer]})"
    where = f"{hand} · step {step.index + 1}/{len(replay.steps)} · view: {view}"
    return Text(shown(f"{header.match_id} · {where}"), style="bold")


def step_view(replay: Replay, index: int, viewer: Viewer, history: int = 8) -> RenderableType:
    """The whole table at one step, as ``viewer`` saw it, with the last few steps of the hand."""
    step = replay.steps[index]
    parts: list[RenderableType] = [title_text(replay, step, viewer)]
    table = step.table(viewer)
    if table is not None:
        grid = RichTable.grid(padding=(0, 2))
        grid.add_column()
        grid.add_column()
        for seat in (0, 1):
            grid.add_row(seat_label(replay, table, seat), hand_text(table.hands[seat]))
        parts += [grid, pile_text(table), score_table(replay, table)]
        if table.showdown is not None and step.kind in (StepKind.SHOWDOWN, StepKind.RESULT):
            parts.append(Panel(showdown_text(table.showdown, replay.names), title="showdown"))
    if step.kind is StepKind.RESULT and isinstance(step.record, ResultRecord):
        parts.append(Panel(series_summary(replay, step.record), title="the series"))
    recent = [
        step_line(replay, earlier, viewer)
        for earlier in replay.steps[max(0, index - history + 1) : index + 1]
        if earlier.hand_number == step.hand_number or earlier.index == index
    ]
    parts.append(Panel(Group(*recent), title="play", title_align="left"))
    return Group(*parts)


def series_summary(replay: Replay, record: ResultRecord) -> Text:
    """How the series ended: the verdict, then each game's totals and winner, a line each (each
    line escaped alone, so that a bot's name cannot break one)."""
    return Text("\n".join(shown(line) for line in series_lines(record, replay.names)))


# --- the transcript (non-interactive) ------------------------------------------------------------


def transcript(replay: Replay, viewer: Viewer, start: int = 0) -> Iterator[RenderableType]:
    """The series as ``viewer`` saw it, from step ``start`` (a hand's deal) on: each deal, every
    step, each showdown and score."""
    names = replay.names
    yield Text(
        shown(
            f"match {replay.header.match_id}: {names[0]} (seat 0) vs {names[1]} (seat 1); "
            f"view: {viewer_name(viewer)}"
        ),
        style="bold",
    )
    for step in replay.steps[start:]:
        table = step.table(viewer)
        if step.kind is StepKind.DEAL and table is not None:
            yield Text("")
            yield step_line(replay, step, viewer)
            for seat in (0, 1):
                line = Text("  ")
                line.append_text(seat_label(replay, table, seat))
                line.append(": ")
                line.append_text(hand_text(table.hands[seat]))
                yield line
            continue
        line = Text(f"{step.index + 1:>5}. ", style="dim")
        line.append_text(step_line(replay, step, viewer))
        yield line
        if step.kind is StepKind.SHOWDOWN and table is not None and table.showdown is not None:
            for line in showdown_text(table.showdown, replay.names).split("\n"):
                yield Text("       ").append_text(line)
            yield Text("       ").append_text(_totals_text(replay, table))


def _totals_text(replay: Replay, table: Table) -> Text:
    parts = []
    for seat in (0, 1):
        totals = " ".join(str(total) for total in table.totals[seat])
        parts.append(f"{_name(replay, seat)} {totals}")
    return Text("score: " + " · ".join(parts), style="dim")


def print_transcript(replay: Replay, viewer: Viewer, console: Console, start: int = 0) -> None:
    """Print :func:`transcript` (for pipes, files and tests)."""
    for part in transcript(replay, viewer, start):
        console.print(part, soft_wrap=True)


# --- the player ----------------------------------------------------------------------------------

HELP = (
    "→/n/enter next · ←/b back · ↓/]/j next hand · ↑/[/k previous hand · 12g or 12⏎ hand 12 · "
    "g first · G last · space play/pause · +/- speed · v view · q quit"
)
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
"""Steps per second when playing."""


@dataclass
class Player:
    """Where a replay is and what a key does; no I/O (the terminal loop feeds it keys)."""

    replay: Replay
    viewer: Viewer = None
    position: int = 0
    playing: bool = False
    speed: int = 2
    """Index into :data:`SPEEDS`."""
    switch_views: bool = True
    """Whether ``v`` may change the view (not when started in a seat's view)."""
    digits: str = ""
    done: bool = False
    message: str = ""
    starts: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        self.starts = self.replay.hand_starts()

    @property
    def last(self) -> int:
        """The index of the last step."""
        return len(self.replay.steps) - 1

    @property
    def delay(self) -> float | None:
        """Seconds until the next step while playing; ``None`` when paused."""
        return 1.0 / SPEEDS[self.speed] if self.playing else None

    def hand_index(self) -> int:
        """Which hand (0-based, among those dealt) the current step belongs to."""
        before = [hand for hand, start in enumerate(self.starts) if start <= self.position]
        return before[-1] if before else -1

    def go(self, position: int) -> None:
        """Move to a step (clamped to the replay)."""
        self.position = max(0, min(self.last, position))

    def go_hand(self, hand: int) -> None:
        """Move to the deal of ``hand`` (0-based among the hands dealt)."""
        if not self.starts:
            self.message = "no hand was dealt"
            return
        if not 0 <= hand < len(self.starts):
            self.message = f"there are hands 1 to {len(self.starts)}"
            return
        self.go(self.starts[hand])

    def tick(self) -> None:
        """Time for the next step while playing; stops at the end."""
        if self.position >= self.last:
            self.playing = False
        else:
            self.go(self.position + 1)

    def handle(self, key: str) -> None:
        """Act on one key (names as :func:`decode_keys` gives them)."""
        self.message = ""
        if key.isdigit():
            self.digits += key
            return
        digits, self.digits = self.digits, ""
        if digits and key in ("g", "enter"):
            self.go_hand(int(digits) - 1)
            return
        action = _KEYS.get(key)
        if action is None:
            self.message = f"unknown key {key!r}; press ? for help"
            return
        action(self)

    def cycle_view(self) -> None:
        """Referee → seat 0 → seat 1 → referee (only when started in the referee's view)."""
        if not self.switch_views:
            self.message = "started in a seat's view: the other views stay hidden"
            return
        order: tuple[Viewer, ...] = (None, 0, 1)
        self.viewer = order[(order.index(self.viewer) + 1) % 3]

    def status(self) -> Text:
        """The status line under the table."""
        state = f"▶ playing at {SPEEDS[self.speed]:g}/s" if self.playing else "⏸ paused"
        text = Text(f"{state} · ? help · q quit", style="dim")
        if self.digits:
            text.append(f" · hand {self.digits}…", style="yellow")
        if self.message:
            text.append(f"\n{self.message}", style="yellow")
        return text

    def render(self) -> RenderableType:
        """The screen for the current position."""
        return Group(step_view(self.replay, self.position, self.viewer), self.status())


def _toggle_play(player: Player) -> None:
    if not player.playing and player.position >= player.last:
        player.go(0)
    player.playing = not player.playing


def _speed(change: int) -> _Action:
    def act(player: Player) -> None:
        player.speed = max(0, min(len(SPEEDS) - 1, player.speed + change))

    return act


def _quit(player: Player) -> None:
    player.done = True


def _ignore(player: Player) -> None:
    """Backspace: the digits typed so far are already dropped."""


def _help(player: Player) -> None:
    player.message = HELP


class _Action(Protocol):
    def __call__(self, player: Player, /) -> None: ...


_KEYS: dict[str, _Action] = {
    "right": lambda p: p.go(p.position + 1),
    "n": lambda p: p.go(p.position + 1),
    "enter": lambda p: p.go(p.position + 1),
    "l": lambda p: p.go(p.position + 1),
    "left": lambda p: p.go(p.position - 1),
    "b": lambda p: p.go(p.position - 1),
    "h": lambda p: p.go(p.position - 1),
    "down": lambda p: p.go_hand(p.hand_index() + 1),
    "j": lambda p: p.go_hand(p.hand_index() + 1),
    "]": lambda p: p.go_hand(p.hand_index() + 1),
    "up": lambda p: p.go_hand(p.hand_index() - 1),
    "k": lambda p: p.go_hand(p.hand_index() - 1),
    "[": lambda p: p.go_hand(p.hand_index() - 1),
    "g": lambda p: p.go(0),
    "home": lambda p: p.go(0),
    "G": lambda p: p.go(p.last),
    "end": lambda p: p.go(p.last),
    " ": _toggle_play,
    "+": _speed(1),
    "=": _speed(1),
    "-": _speed(-1),
    "v": Player.cycle_view,
    "?": _help,
    "q": _quit,
    "escape": _quit,
    "ctrl-c": _quit,
    "backspace": _ignore,
}


# --- keys ----------------------------------------------------------------------------------------

_ESCAPES = {
    "[A": "up",
    "[B": "down",
    "[C": "right",
    "[D": "left",
    "[H": "home",
    "[F": "end",
    "[1~": "home",
    "[4~": "end",
    "OA": "up",
    "OB": "down",
    "OC": "right",
    "OD": "left",
    "OH": "home",
    "OF": "end",
}
_CONTROLS = {"\r": "enter", "\n": "enter", "\x03": "ctrl-c", "\x7f": "backspace", "\x1b": "escape"}


def decode_keys(data: str) -> list[str]:
    """Key names from what a terminal sent (arrow keys arrive as escape sequences).

    >>> decode_keys("12g\\x1b[C\\x1b[Dq \\r\\x1b")
    ['1', '2', 'g', 'right', 'left', 'q', ' ', 'enter', 'escape']
    """
    keys = []
    index = 0
    while index < len(data):
        if data[index] == "\x1b":
            for sequence, name in _ESCAPES.items():
                if data.startswith(sequence, index + 1):
                    keys.append(name)
                    index += 1 + len(sequence)
                    break
            else:
                keys.append("escape")
                index += 1
            continue
        char = data[index]
        keys.append(_CONTROLS.get(char, char))
        index += 1
    return keys


class KeySource(Protocol):
    """Where keys come from: the terminal, or a script in tests."""

    def read(self, timeout: float | None) -> str | None:
        """The next key, or ``None`` when ``timeout`` seconds pass first."""
        ...


class ScriptedKeys:
    """Keys from a list; ``None`` in the list stands for a timeout (a tick while playing)."""

    def __init__(self, keys: Iterable[str | None]) -> None:
        self.keys = list(keys)

    def read(self, timeout: float | None) -> str | None:  # noqa: ARG002 - same shape
        return self.keys.pop(0) if self.keys else "q"


class TerminalKeys:
    """Keys from a terminal in cbreak mode (no echo, no line buffering); restores it on exit."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.saved: list[int | list[bytes | int]] | None = None
        self.pending: list[str] = []

    def __enter__(self) -> TerminalKeys:
        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float | None) -> str | None:
        if not self.pending:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return None
            data = os.read(self.fd, 64).decode("utf-8", errors="replace")
            self.pending = decode_keys(data) or ["q"]
        return self.pending.pop(0)


def play(player: Player, keys: KeySource, console: Console) -> None:
    """Show the replay and follow the keys until ``q`` (or Ctrl-C)."""
    with Live(console=console, screen=console.is_terminal, auto_refresh=False) as live:
        while not player.done:
            live.update(player.render(), refresh=True)
            try:
                key = keys.read(player.delay)
            except KeyboardInterrupt:
                break
            if key is None:
                player.tick()
            else:
                player.handle(key)
