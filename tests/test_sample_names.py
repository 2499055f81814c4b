"""A bot argument that names neither a submitted bot nor a folder here names a sample bot of
``sample_bots/`` (``gin match my-bot house``); a word that is none of the three is a one-line
error naming the choices."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tournaments.cli.app import app
from tournaments.cli.league_new import BotArguments
from tournaments.registry import Arena
from tournaments.store import BotRow, Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
cli = CliRunner()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """An arena home with bot ``mine@1`` submitted; the working folder an empty one."""
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    found = Arena(tmp_path / "home").open_store()
    found.add_bot(BotRow("mine", "1", "m" * 64, tmp_path / "mine", "", "", time.time()))
    return found


def sample_names() -> list[str]:
    """The sample bots with a manifest, as the error should name them."""
    return sorted(path.parent.name for path in SAMPLES.glob("*/bot.toml"))


def test_the_sample_bots_are_there() -> None:
    assert {"greedy", "house", "random", "strong"} <= set(sample_names())


def test_a_sample_bots_name_submits_its_folder(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted: list[tuple[str, Path]] = []

    def fake_submit(self: BotArguments, given: str, folder: Path) -> str:
        submitted.append((given, folder))
        return "house@1.0.0"

    monkeypatch.setattr(BotArguments, "_submit", fake_submit)
    arguments = BotArguments(Arena(tmp_path / "home"), store, strict=False)
    assert arguments.ident("house") == "house@1.0.0"
    assert arguments.ident("mine") == "mine@1"  # a submitted bot comes first
    with pytest.raises(typer.Exit):
        arguments.ident("zed")
    assert submitted == [("house", SAMPLES / "house")]


def test_a_folder_here_comes_before_the_sample_bot(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "house").mkdir()
    submitted: list[Path] = []

    def fake_submit(self: BotArguments, given: str, folder: Path) -> str:
        submitted.append(folder)
        return "house@9"

    monkeypatch.setattr(BotArguments, "_submit", fake_submit)
    BotArguments(Arena(tmp_path / "home"), store, strict=False).ident("house")
    assert submitted == [Path("house")]


def test_a_word_that_is_no_bot_is_a_one_line_error_naming_the_samples(store: Store) -> None:
    result = cli.invoke(app, ["match", "mine", "zed", "--pairs", "2"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "no submitted bot 'zed'" in lines[0]
    assert f"a sample bot: {', '.join(sample_names())}" in lines[0]
    assert "Traceback" not in result.output
