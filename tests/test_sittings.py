"""Sittings played by real, sandboxed bots: a bot that plays on keeps its process for the series
of its sitting, never for both legs of a pair, and a hostile bot that remembers every deal it
can (tests/hostile/sitter.py) never meets one again. (How the runner cuts a league into
sittings, on the scripted executor: tests/test_sittings_runner.py.)"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
import trio

from referee.replay import verify_log
from referee.rules import GreedyPolicy, play_series
from referee.sandbox import Layer, Sandbox
from tournaments.executors.local import LocalExecutor
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner
from tournaments.store import ResultRow, Store

ROOT = Path(__file__).resolve().parent.parent
SITTER = ROOT / "tests" / "hostile" / "sitter.py"
SAMPLES = ROOT / "sample_bots"
LINE = re.compile(r"SITTER process=(\w+) series=(\d+) signature=(\S+) seen=(\w+) remembered=(\d+)")


def sitter_module(memory: Path) -> ModuleType:
    """The hostile bot's module, loaded in this process, its memory file at ``memory``."""
    spec = importlib.util.spec_from_file_location("sitter_under_test", SITTER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setattr(module, "MEMORY", memory)  # noqa: B010 - a loaded module, not typed
    return module


def test_the_sitter_recognises_a_mirror_leg_when_one_process_plays_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The detector works: played in one process (which a sitting never does), the second leg
    of a pair is recognised, and an unrelated series is not."""
    sitter = sitter_module(tmp_path / "memory")
    bot = sitter.Sitter().as_policy()
    greedy = GreedyPolicy(knock_at=10)
    play_series(bot, greedy, seed=5)  # the first leg
    play_series(greedy, bot, seed=5)  # its mirror: the same decks, seats swapped
    play_series(bot, greedy, seed=6)  # another deal
    said = [LINE.search(line) for line in capsys.readouterr().err.splitlines()]
    seen = [match.group(4) for match in said if match]
    assert seen == ["no", "yes", "no"]


def arena_with(tmp_path: Path, folders: list[Path], series: int) -> tuple[Arena, Store, str]:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    idents = [trio.run(submit, arena, store, folder, None).ident for folder in folders]
    config = LeagueConfig.from_dict(
        {"name": "sit", "seed": 4, "bots": idents, "series_per_pairing": series}
    )
    create_league(store, config)
    progress = trio.run(LeagueRunner(arena, store, config, 1, executor=LocalExecutor(1)).run)
    assert progress.done == series
    return arena, store, "sit"


def sitter_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sitter"
    folder.mkdir()
    shutil.copy(SITTER, folder / "sitter.py")
    (folder / "bot.toml").write_text(
        'name = "sitter"\nversion = "1"\ncommand = ["python", "sitter.py"]\n'
    )
    return folder


def stderr_of(result: ResultRow, name: str) -> str:
    seat = [ident.split("@")[0] for ident in result.seats].index(name)
    return Path(f"{result.log_path}.seat{seat}.stderr").read_text()


def needs_bwrap() -> None:
    missing = [s.detail for s in Sandbox().layers if s.layer is Layer.BWRAP and not s.active]
    if missing:
        pytest.skip(f"sandbox layer BWRAP unavailable: {missing[0]}")


@pytest.mark.slow
def test_a_sitting_never_holds_a_deal_its_bot_has_seen(tmp_path: Path) -> None:
    """Eight series (four pairs) of the sitter against greedy on one worker: two sittings of
    four series, each on one process; the sitter never meets a signature it has seen, in its
    process or in a file left behind, and every log verifies."""
    needs_bwrap()
    _arena, store, league = arena_with(tmp_path, [sitter_folder(tmp_path), SAMPLES / "greedy"], 8)
    results = store.results(league)
    lines = []
    for result in results:
        said = [LINE.search(line) for line in stderr_of(result, "sitter").splitlines()]
        found = [match for match in said if match]
        assert len(found) == 1, "each series' stderr is its own"
        lines.append(found[0])
        assert verify_log(Path(result.log_path)).ok
    processes = Counter(match.group(1) for match in lines)
    assert sorted(processes.values()) == [4, 4]  # a sitting of first legs, one of second legs
    assert {match.group(4) for match in lines} == {"no"}  # no deal came back
    assert {match.group(5) for match in lines} == {"0"}  # no memory file survived a sitting
    # Each process played series 1, 2, 3, 4 of its sitting: a leg and its mirror were each
    # the same number of series into their sittings.
    by_process: dict[str, list[int]] = {}
    for match in lines:
        by_process.setdefault(match.group(1), []).append(int(match.group(2)))
    assert all(sorted(numbers) == [1, 2, 3, 4] for numbers in by_process.values())
    signatures = Counter(match.group(3) for match in lines)
    assert sorted(signatures.values()) == [2, 2, 2, 2]  # each deal twice: the two legs


@pytest.mark.slow
def test_the_node_and_go_bots_play_sittings_in_a_real_league(tmp_path: Path) -> None:
    """The compiled and the Node sample bots play on against each other: four series on a
    process each, every log verifies, no fault."""
    needs_bwrap()
    if not os.access(SAMPLES / "go" / "gin-go-bot", os.X_OK):
        pytest.fail("sample_bots/go/gin-go-bot is missing: run make go-bot")
    if not (SAMPLES / "node" / "node_modules").is_dir():
        pytest.fail("sample_bots/node/node_modules is missing: run make node-bot")
    _, store, league = arena_with(tmp_path, [SAMPLES / "node", SAMPLES / "go"], 4)
    results = store.results(league)
    assert all(not result.summary.faults for result in results)
    assert all(verify_log(Path(result.log_path)).ok for result in results)
