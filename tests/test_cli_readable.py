"""What the commands print, piped and in a terminal: every hand of ``gin play``, the replay's
series panel, ``gin demo`` at full width off a terminal, ``gin match``'s live line once the test
has decided, and the arena server's line per ladder pair."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from rich.console import Console
from typer.testing import CliRunner

from referee.local import WatchedLog
from referee.match import MatchConfig, MatchResult, play_match
from referee.matchlog import MatchLog
from referee.replay import StepKind, load_replay, read_log
from referee.rules import greedy_policy, patient_policy
from referee.seats import InProcessSeat
from tests.test_arena_ladder import home as ladder_home
from tests.test_arena_ladder import run_ladder
from tests.test_match_cli import FirstBotWins
from tests.test_match_cli import home as match_home
from tournaments.cli import common, play
from tournaments.cli.app import app
from tournaments.cli.arena import announce_pairs, pair_line
from tournaments.cli.match import MatchTestView
from tournaments.cli.replay_view import step_view
from tournaments.executors.fake import FakeExecutor
from tournaments.headtohead import batch_pairs, match_config, start_match
from tournaments.headtohead import play_match as play_head_to_head
from tournaments.runner import PairTally, Progress
from tournaments.stats.sprt import SprtSettings, status
from tournaments.store import MatchRow, MatchState

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"
STRIKES = Path(__file__).parent / "golden" / "format1-strikes.jsonl"
LONG_SEED = 6
"""A public seed whose series of greedy against patient lasts 22 hands."""
cli = CliRunner()


# --- gin play: every hand ------------------------------------------------------------------------


async def in_process(
    seats: Any, config: MatchConfig, log_path: Path, watcher: Any, **_: Any
) -> MatchResult:
    """``play_folders`` with the built-in greedy and patient policies in the seats: the series
    of the command's seed, without processes."""
    del seats
    players = (
        InProcessSeat(greedy_policy, "greedy", "1.0"),
        InProcessSeat(patient_policy, "patient", "1.0"),
    )
    with MatchLog(log_path) as log:
        return await play_match(players, config, WatchedLog(log, watcher))


def gin_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: bool) -> tuple[str, int]:
    """``gin play`` of the long seed, in process; its output and the hands its log holds."""
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(play, "play_folders", in_process)
    log = tmp_path / "play.jsonl"
    args = ["play", str(SAMPLES / "greedy"), str(SAMPLES / "random"), "--seed", str(LONG_SEED)]
    args += ["--public-deals", "--log", str(log)]
    if terminal:
        screen = Console(file=io.StringIO(), width=100, force_terminal=True, soft_wrap=True)
        monkeypatch.setattr(play, "console", screen)
        monkeypatch.setattr(common, "console", screen)
    result = cli.invoke(app, args)
    assert result.exit_code == 0, result.output
    output = screen.file.getvalue() if terminal else result.output  # type: ignore[attr-defined]
    hands = sum(1 for record in read_log(log).records if type(record).__name__ == "HandEndRecord")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output), hands


def test_gin_play_piped_prints_a_line_for_every_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output, hands = gin_play(tmp_path, monkeypatch, terminal=False)
    assert hands >= 16
    lines = output.splitlines()
    for number in range(1, hands + 1):
        assert sum(line.startswith(f"hand {number}: ") for line in lines) == 1, number
    assert f"{hands} hands, " in output
    assert "Score sheet" in output


def test_gin_play_in_a_terminal_says_what_scrolled_out_and_shows_every_hand_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output, hands = gin_play(tmp_path, monkeypatch, terminal=True)
    assert hands > 12
    assert f"hands 1-{hands - 12} scrolled out" in output  # the live view, while it plays
    final = output.rsplit("greedy@1.0  vs  patient@1.0", 1)[1]  # the table printed at the end
    rows = [line for line in final.splitlines() if line.startswith("│")]
    numbers = [int(row.split("│")[1]) for row in rows if row.split("│")[1].strip().isdigit()]
    assert numbers[:hands] == list(range(1, hands + 1))
    assert "scrolled out" not in final


# --- gin replay: the series panel ----------------------------------------------------------------


def test_the_replays_series_panel_has_a_line_per_game_and_no_escaped_newline() -> None:
    replay = load_replay(STRIKES)
    last = next(step for step in replay.steps if step.kind is StepKind.RESULT)
    screen = Console(file=io.StringIO(), width=120, color_system=None)
    screen.print(step_view(replay, last.index, None))
    text = screen.file.getvalue()  # type: ignore[attr-defined]
    panel = text.split("the series", 1)[1].split("╰", 1)[0]
    assert "\\n" not in panel
    games = [line for line in panel.splitlines() if re.search(r"│ game \d: ", line)]
    assert [re.search(r"game (\d)", line).group(1) for line in games] == ["1", "2", "3"]  # type: ignore[union-attr]


# --- gin demo: full width off a terminal ---------------------------------------------------------


def test_gin_demo_piped_is_not_wrapped_at_80_columns() -> None:
    result = cli.invoke(app, ["demo", "--seed", "7"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) > 80
    hands = [line for line in lines if line.startswith("│")]
    first = hands.index(next(line for line in hands if re.match(r"│ +1 │", line)))
    # Each hand is one row: no continuation line (an empty number cell) under any of them.
    assert not any(re.match(r"│ +│", line) for line in hands[first:])


# --- gin match: the live line after the decision -------------------------------------------------


def test_the_match_view_shows_the_deciding_llr_after_the_test_decides(tmp_path: Path) -> None:
    arena, store = match_home(tmp_path)
    settings = SprtSettings(0.0, 100.0)  # twelve pairs won 2-0 decide
    config = match_config("m", ("a@1", "b@1"), batch_pairs(5, 0, 1000), settings, 5, None)
    start_match(store, config)
    tally = PairTally("a@1", store.results("m"))
    piped = Console(file=io.StringIO(), width=200)
    view = MatchTestView(config, tally, 1000, piped)

    def grown(progress: Progress) -> None:
        view.config = dataclasses.replace(view.config, series_per_pairing=progress.total)
        view.update(progress)

    async def run() -> Any:
        return await play_head_to_head(
            arena, store, config, tally, 1000, listener=grown, executor=lambda: FirstBotWins(5)
        )

    _, decision = trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert decision is not None
    assert decision.pairs == 12
    assert len(tally.units) > decision.pairs  # pairs in flight finished after the decision
    later = status(tally.counts, settings)
    assert f"{later.llr:+.2f}" != f"{decision.llr:+.2f}"
    screen = Console(file=io.StringIO(), width=100, force_terminal=True)
    screen.print(view)
    live = screen.file.getvalue()  # type: ignore[attr-defined]
    assert f"LLR {decision.llr:+.2f} " in live
    assert f"LLR {later.llr:+.2f}" not in live
    extra = len(tally.units) - 12
    assert f"decided at 12 pairs (LLR {decision.llr:+.2f}), {extra} pair" in live
    lines = piped.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert f"LLR {decision.llr:+.2f} " in lines[-1]
    assert f"LLR {later.llr:+.2f}" not in lines[-1]
    assert "decided at 12 pairs" in lines[-1]
    assert "decided at" not in lines[11]  # the deciding pair's own line
    # Resumed: the kept decision, not the LLR of every pair now.
    again = MatchTestView(config, tally, 1000, screen, decision)
    assert again.report().test == decision


# --- gin arena serve: a line per ladder pair -----------------------------------------------------


def test_the_arena_server_prints_a_line_per_finished_ladder_pair(tmp_path: Path) -> None:
    arena, store = ladder_home(tmp_path, "ab")
    screen = Console(file=io.StringIO(), width=100)
    ladder = run_ladder(
        arena, store, FakeExecutor(1), 10.5, ready=lambda made: announce_pairs(made, store, screen)
    )
    lines = screen.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert ladder.pairs_done >= 4
    assert len(lines) == ladder.pairs_done
    for number, line in enumerate(lines, start=1):
        assert re.fullmatch(rf"ladder pair {number}: [ab]@1 [\d.]+-[\d.]+ [ab]@1", line), line
    assert len(store.matches("ladder", MatchState.DONE)) >= 2 * len(lines)


def test_a_pair_line_counts_points_from_each_bots_side_and_says_what_is_missing() -> None:
    legs = [
        MatchRow("m1", "ladder", "a|b", 0, "a@1", "b@1", 5, None, MatchState.DONE, 1, ""),
        MatchRow("m2", "ladder", "a|b", 1, "b@1", "a@1", 5, "m1", MatchState.DONE, 1, ""),
    ]
    assert pair_line(7, legs, [None, None]) == (
        "ladder pair 7: a@1 0-0 b@1 (2 of 2 series without a result)"
    )
