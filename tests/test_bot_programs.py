"""Any executable in a bot folder starts: a relative path, a bare name found in the folder, a
script with a shebang (what a compiled bot's ``bot.toml`` does: ``command = ["./my-bot"]``).

Each bot here wraps the hostile bot in its plain mode (it plays greedy) behind a program of the
folder's own, and plays a real sandboxed series against the sample greedy bot.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from protocol.manifest import SYSTEM_PATHS, ManifestError, load_manifest
from referee.bot_text import shown
from referee.local import code_hash, play_folders, remote_seat
from referee.match import MatchConfig
from referee.replay import verify_log
from referee.sandbox import Sandbox
from referee.sandbox._jail import copy_code
from referee.sandbox._mounts import ROOT_LINKS
from tests.test_hostile import FAST, GREEDY, HERE
from tournaments.cli.app import app
from tournaments.registry import Arena


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def folder_with(tmp_path: Path, command: str, files: dict[str, str]) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copy(HERE / "hostile" / "hostile.py", folder / "hostile.py")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        executable(folder / name, text)
    (folder / "bot.toml").write_text(f'name = "hostile"\nversion = "none"\ncommand = [{command}]\n')
    return folder


PYTHON = shlex.quote(sys.executable)
SCRIPT = f"#!/bin/sh\nexec {PYTHON} hostile.py none\n"
SHEBANG = f"#!{sys.executable}\n" + (HERE / "hostile" / "hostile.py").read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "files"),
    [
        ('"./run.sh"', {"run.sh": SCRIPT}),
        ('"run.sh"', {"run.sh": SCRIPT}),
        ('"bin/start"', {"bin/start": SCRIPT.replace("hostile.py", "/bot/hostile.py")}),
        ('"./bot", "none"', {"bot": SHEBANG}),
    ],
    ids=["relative", "bare-name", "subfolder", "shebang"],
)
def test_a_program_of_the_bot_folder_starts_and_plays(
    sandbox: Sandbox, tmp_path: Path, command: str, files: dict[str, str]
) -> None:
    folder = folder_with(tmp_path, command, files)
    seats = (
        remote_seat(load_manifest(folder), sandbox.prepare, "program-0"),
        remote_seat(load_manifest(GREEDY), sandbox.prepare, "program-1"),
    )
    result = trio.run(
        play_folders, seats, MatchConfig("program", 3, time_control=FAST), tmp_path / "log.jsonl"
    )
    assert result.faults == (), result.faults
    assert result.end != "forfeit"


SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.slow
@pytest.mark.skipif(not SYSTEM_PYTHON.is_file(), reason="no /usr/bin/python3 to make a venv with")
def test_a_venv_made_the_ordinary_way_runs_as_itself(sandbox: Sandbox, tmp_path: Path) -> None:
    # `python3 -m venv venv` in the bot folder: its interpreter is a chain of symlinks
    # (python -> python3 -> /usr/bin/python3). The folder passes the check, and the bot runs as
    # the venv's python (its prefix is the venv), so the venv's own packages are the ones used.
    folder = tmp_path / "bot"
    folder.mkdir()
    subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(folder / "venv")], check=True
    )
    (folder / "bot.py").write_text(
        "import sys\nprint('prefix', sys.prefix, file=sys.stderr)\nsys.exit(3)\n"
    )
    (folder / "bot.toml").write_text(
        'name = "venv-bot"\nversion = "1"\ncommand = ["venv/bin/python", "bot.py"]\n'
    )
    seats = (
        remote_seat(load_manifest(folder), sandbox.prepare, "venv-0"),
        remote_seat(load_manifest(GREEDY), sandbox.prepare, "venv-1"),
    )
    result = trio.run(
        play_folders, seats, MatchConfig("venv", 3, time_control=FAST), tmp_path / "log.jsonl"
    )
    assert seats[0].stderr is not None
    assert "prefix /bot/venv" in seats[0].stderr.text()
    assert result.faults[0].detail.endswith("(exit status 3)")


def test_links_are_judged_one_step_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python3").symlink_to("/usr/bin/python3")  # the system: shown to bots
    (folder / "bin" / "python").symlink_to("python3")  # stays inside
    (folder / "bin" / "secret").symlink_to("/etc/shadow")  # not shown to bots
    (folder / "bin" / "up").symlink_to("../../elsewhere")  # out of the folder
    (folder / "bot.toml").write_text('name = "links"\nversion = "1"\ncommand = ["bin/python"]\n')
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    problems = str(caught.value)
    assert "bin/secret points to /etc/shadow, which a bot does not see" in problems
    assert "bin/up points outside the bot folder" in problems
    assert "symlink bin/python " not in problems
    assert "symlink bin/python3 " not in problems


def test_the_system_paths_links_may_use_are_mounted_for_every_bot() -> None:
    shown = {"/usr", *ROOT_LINKS}
    assert set(SYSTEM_PATHS) <= shown


# --- what belongs to a bot ----------------------------------------------------------------------


def test_ginignore_leaves_files_out_of_the_bot(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, '"./run.sh"', {"run.sh": SCRIPT})
    (folder / ".ginignore").write_text("# not the bot's\nnotes/\n*.log\n")
    (folder / "notes").mkdir()
    (folder / "notes" / "ideas.txt").write_text("one")
    before = code_hash(folder)
    (folder / "notes" / "ideas.txt").write_text("two")
    (folder / "debug.log").write_text("noise")
    (folder / ".gin").mkdir()  # an arena home made inside the folder is never the bot's
    (folder / ".gin" / "arena.sqlite").write_text("")
    assert code_hash(folder) == before
    (folder / "hostile.py").write_text("changed")
    assert code_hash(folder) != before
    copy = tmp_path / "copy"
    copy_code(folder, copy, None)
    assert not (copy / "notes").exists()
    assert not (copy / "debug.log").exists()
    assert (copy / "run.sh").is_file()


@pytest.mark.slow
def test_gin_play_inside_a_bot_folder_leaves_it_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The guide's `gin play .` from inside the bot's folder: the log goes beside the folder.
    folder = folder_with(tmp_path, '"./run.sh"', {"run.sh": SCRIPT})
    before = code_hash(folder)
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(app, ["play", ".", str(GREEDY), "--move-time", "0.4"])
    assert result.exit_code == 0, result.output
    assert code_hash(folder) == before
    assert not (folder / "runs").exists()
    logs = list((tmp_path / "runs").glob("play-*.jsonl"))
    assert len(logs) == 1
    assert verify_log(logs[0]).ok


def test_every_invisible_or_control_character_is_shown_escaped() -> None:
    # Unicode's controls (Cc), format characters (Cf: bidi marks and overrides, zero-width
    # joiners, tags...) and line or paragraph separators (Zl, Zp), whatever their version.
    kept = [
        hex(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp")
        and shown(chr(code)) == chr(code)
    ]
    assert kept == []
    assert shown("e\u0301") == "e\u0301"  # a combining accent is text, not a control


@pytest.mark.slow
def test_gin_play_from_below_a_bot_folder_or_through_a_link_logs_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_with(tmp_path, '"./run.sh"', {"run.sh": SCRIPT})
    (folder / "src").mkdir()
    (tmp_path / "link").symlink_to(folder)
    before = code_hash(folder)
    monkeypatch.chdir(folder / "src")
    played = CliRunner().invoke(app, ["play", "..", str(GREEDY), "--move-time", "0.4"])
    assert played.exit_code == 0, played.output
    monkeypatch.chdir(tmp_path / "link")
    played = CliRunner().invoke(
        app, ["play", str(tmp_path / "link"), str(GREEDY), "--move-time", "0.4"]
    )
    assert played.exit_code == 0, played.output
    assert code_hash(folder) == before
    assert len(list((tmp_path / "runs").glob("play-*.jsonl"))) == 2


def test_the_default_arena_home_from_inside_a_bot_folder_is_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_with(tmp_path, '"./run.sh"', {"run.sh": SCRIPT})
    (folder / "src").mkdir()
    monkeypatch.delenv("GIN_HOME", raising=False)
    monkeypatch.chdir(folder / "src")
    assert Arena.default().home == tmp_path / ".gin"
    monkeypatch.chdir(tmp_path)
    assert Arena.default().home == Path(".gin")


def test_ginignore_takes_plain_globs_and_never_the_bots_own_start(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, '"./run.sh"', {"run.sh": SCRIPT})
    (folder / ".pytest_cache").mkdir()  # what the template's own tests leave
    before = code_hash(folder)
    (folder / ".pytest_cache" / "v").write_text("x")
    assert code_hash(folder) == before
    (folder / ".ginignore").write_text("*.log\n!keep.log\nsrc/**/x\nrun.sh\n")
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    problems = str(caught.value)
    assert ".ginignore line 2: plain globs only" in problems
    assert ".ginignore line 3: plain globs only" in problems
    assert ".ginignore leaves out ./run.sh, which the bot needs to start" in problems
