"""``gin replay``: the transcript, --verify's exit codes, the key-driven player."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from referee.replay import StepKind, load_replay
from tournaments.cli.app import app
from tournaments.cli.replay_view import (
    SPEEDS,
    Player,
    ScriptedKeys,
    decode_keys,
    play,
    print_transcript,
    step_view,
)

GOLDEN = Path(__file__).parent / "golden"
STRIKES = GOLDEN / "format1-strikes.jsonl"
TRANSCRIPT = GOLDEN / "format1-strikes.seat0.txt"
runner = CliRunner()


def plain_transcript(viewer: int | None) -> str:
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, force_terminal=False)
    print_transcript(load_replay(STRIKES), viewer, console)
    return out.getvalue()


# --- the command ---------------------------------------------------------------------------------


def said(result: Result) -> str:
    """The command's output with line breaks undone (rich wraps long temporary paths)."""
    return " ".join(result.output.split())


def test_verify_a_good_log_exits_0() -> None:
    result = runner.invoke(app, ["replay", str(STRIKES), "--verify"])
    assert result.exit_code == 0, result.output
    assert "verified:" in said(result)


def test_verify_a_bad_log_names_the_record_and_exits_1(tmp_path: Path) -> None:
    lines = STRIKES.read_text().splitlines()
    record = json.loads(lines[-1])
    record["winner"] = 1 - record["winner"]
    lines[-1] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["replay", str(bad), "--verify"])
    assert result.exit_code == 1
    assert f"FAILED at line {len(lines)} (result): winner is" in said(result)
    assert "Traceback" not in result.output


def test_verify_an_incomplete_log_exits_3(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text(STRIKES.read_text()[:20_000])
    result = runner.invoke(app, ["replay", str(cut), "--verify"])
    assert result.exit_code == 3
    assert "incomplete:" in said(result)
    assert "truncated" in said(result)


def test_an_unknown_version_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    lines = STRIKES.read_text().splitlines()
    header = json.loads(lines[0])
    header["format"] = 7
    path = tmp_path / "v7.jsonl"
    path.write_text(json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n")
    for extra in ([], ["--verify"]):
        result = runner.invoke(app, ["replay", str(path), *extra])
        assert result.exit_code == 1
        assert "log format 7 is not known" in said(result)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_match_id_is_found_under_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "test-12.jsonl").write_text(STRIKES.read_text())
    result = runner.invoke(app, ["replay", "test-12", "--runs", str(runs), "--verify"])
    assert result.exit_code == 0, result.output
    missing = runner.invoke(app, ["replay", "nope", "--runs", str(runs)])
    assert missing.exit_code == 2
    assert "no match 'nope'" in missing.output


def test_print_gives_the_whole_series() -> None:
    result = runner.invoke(app, ["replay", str(STRIKES), "--print", "--seat", "1"])
    assert result.exit_code == 0, result.output
    assert "view: seat 1" in said(result)
    assert "south@2.0 (you)" in said(result)
    assert result.output.count("deals; the upcard is") == 14
    assert "wins the series" in result.output.splitlines()[-1]


def test_a_bad_seat_is_refused() -> None:
    result = runner.invoke(app, ["replay", str(STRIKES), "--seat", "2"])
    assert result.exit_code == 2


def test_html_is_written(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    result = runner.invoke(app, ["replay", str(STRIKES), "--html", str(page), "--seat", "0"])
    assert result.exit_code == 0, result.output
    assert "seat 0's view" in said(result)
    assert page.read_text().startswith("<!doctype html>")


# --- the transcript ------------------------------------------------------------------------------


def test_seat_transcript_matches_the_golden_one() -> None:
    text = plain_transcript(0)
    if os.environ.get("UPDATE_GOLDEN"):
        TRANSCRIPT.write_text(text)
    assert text == TRANSCRIPT.read_text(), "seat 0's transcript changed (UPDATE_GOLDEN=1 to accept)"


def test_transcripts_hide_the_other_seats_stock_draws() -> None:
    referee, seat0 = plain_transcript(None), plain_transcript(0)
    assert "south@2.0 draws 4s from the stock" in referee
    assert "south@2.0 draws 4s from the stock" not in seat0
    assert "south@2.0 draws from the stock" in seat0
    assert "evidence:" in referee
    assert "evidence:" not in seat0


# --- the player ----------------------------------------------------------------------------------


def player(viewer: int | None = None) -> Player:
    return Player(load_replay(STRIKES), viewer, switch_views=viewer is None)


def test_keys_step_jump_and_quit() -> None:
    p = player()
    for key in ["right", "right", "n", "enter"]:
        p.handle(key)
    assert p.position == 4
    p.handle("left")
    assert p.position == 3
    p.handle("down")
    assert p.position == p.starts[1]
    p.handle("up")
    assert p.position == p.starts[0]
    for key in "12g":
        p.handle(key)
    assert p.position == p.starts[11]
    assert p.hand_index() == 11
    p.handle("G")
    assert p.position == p.last
    assert p.replay.steps[p.position].kind is StepKind.RESULT
    p.handle("home")
    assert p.position == 0
    p.handle("left")
    assert p.position == 0
    for key in "99":
        p.handle(key)
    p.handle("enter")
    assert p.position == 0
    assert "hands 1 to 14" in p.message
    p.handle("x")
    assert "unknown key 'x'" in p.message
    p.handle("q")
    assert p.done


def test_play_advances_on_ticks_and_stops_at_the_end() -> None:
    p = player()
    p.handle(" ")
    assert p.playing
    assert p.delay == pytest.approx(1 / SPEEDS[2])
    p.handle("+")
    assert p.delay == pytest.approx(1 / SPEEDS[3])
    for _ in range(3):
        p.tick()
    assert p.position == 3
    p.go(p.last)
    p.tick()
    assert not p.playing
    assert p.delay is None
    p.handle(" ")  # play again from the end: starts over
    assert p.playing
    assert p.position == 0


def test_views_switch_only_from_the_referees() -> None:
    p = player()
    p.handle("v")
    assert p.viewer == 0
    p.handle("v")
    assert p.viewer == 1
    p.handle("v")
    assert p.viewer is None
    seat = player(1)
    seat.handle("v")
    assert seat.viewer == 1
    assert "other views stay hidden" in seat.message


def test_the_player_loop_with_scripted_keys() -> None:
    out = io.StringIO()
    console = Console(file=out, width=110, color_system=None, force_terminal=False)
    p = player(0)
    play(p, ScriptedKeys(["right", "right", " ", None, None, " ", "x", "q"]), console)
    assert p.done
    assert p.position == 4
    assert not p.playing


def test_decode_keys() -> None:
    assert decode_keys("\x1b[A\x1b[B\x1bOC\x1b[4~\x7f\x03") == [
        "up",
        "down",
        "right",
        "end",
        "backspace",
        "ctrl-c",
    ]


def test_the_table_view_of_a_seat_hides_the_other_hand() -> None:
    replay = load_replay(STRIKES)
    deal = replay.hand_starts()[0]
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(step_view(replay, deal + 3, 1))
    screen = out.getvalue()
    assert "view: seat 1 (south@2.0)" in screen
    assert "▒▒" in screen
    assert "stock: " in screen
    assert "(top first)" not in screen
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(step_view(replay, deal + 3, None))
    assert "(top first)" in out.getvalue()


def test_the_last_step_keeps_the_final_showdown_and_sums_up_the_series() -> None:
    """At the result the viewer still shows the last hand's showdown, and says how the series
    ended, game by game (it showed one line)."""
    replay = load_replay(STRIKES)
    last = len(replay.steps) - 1
    assert replay.steps[last].kind is StepKind.RESULT
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(step_view(replay, last, None))
    text = out.getvalue()
    assert "showdown" in text
    assert "the series" in text
    assert "wins the series" in text
    assert "game 1: north@1.0 " in text
    assert "game 3: " in text
