"""Sittings played by real, sandboxed bots: a bot that plays on keeps its process for the series
of its sitting, never for both legs of a pair, and a hostile bot that remembers every deal it
can (tests/hostile/sitter.py) never meets one again. (How the runner cuts a league into
sittings, on the scripted executor: tests/test_sittings_runner.py.)"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
import trio

from referee.control import FaultPolicy, TimeControl
from referee.local import code_hash
from referee.replay import verify_log
from referee.rules import GreedyPolicy, RuleParams, play_series
from referee.sandbox import Layer, Sandbox, SandboxLimits
from tournaments.executors.local import LocalExecutor
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
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


# --- what a sitting must not carry into the next series ------------------------------------------

BURNER = """
import sys, time
from protocol.sdk import Bot
from referee.rules import GreedyPolicy


class Burner(Bot):
    name = "burner"
    version = "1"

    def __init__(self):
        self.policy = GreedyPolicy(knock_at=10)

    def on_series_start(self, info):
        began = time.process_time()
        while time.process_time() - began < 1.5:  # builds its tables: 1.5 CPU-s a series
            pass
        sys.stderr.write(f"BURNER cpu {time.process_time():.1f}\\n")

    def decide(self, view, legal):
        return self.policy(view, legal)


if __name__ == "__main__":
    sys.exit(Burner().run())
"""


def play_a_sitting(
    tmp_path: Path, bot: Path, series: int, limits: SandboxLimits | None = None
) -> list[MatchOutcome | WorkerFailure]:
    """``series`` series of ``bot`` against greedy sent to one worker as one sitting."""
    greedy = SAMPLES / "greedy"
    jobs = [
        MatchJob(
            f"s~{index}",
            100 + index,
            (str(bot), str(greedy)),
            (code_hash(bot), code_hash(greedy)),
            RuleParams(),
            TimeControl(),
            FaultPolicy(),
            str(tmp_path / f"s~{index}.jsonl"),
            parent=os.getpid(),
            limits=limits or SandboxLimits(),
            sitting="sit",
            sitting_ends=index == series - 1,
        )
        for index in range(series)
    ]

    async def main() -> list[MatchOutcome | WorkerFailure]:
        executor = LocalExecutor(1, prefetch=False)
        try:
            return [await executor.play(job) for job in jobs]
        finally:
            await executor.aclose()

    return trio.run(main)


def bot_of(tmp_path: Path, name: str, code: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(code)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
    )
    return folder


@pytest.mark.slow
def test_a_sitting_does_not_add_up_the_cpu_seconds_limit(tmp_path: Path) -> None:
    """A bot that uses 1.5 CPU-s a series under a 4 CPU-s limit plays four series of a sitting
    without a crash: its process is given the limit anew, or, where the kernel refuses that,
    replaced before a series it might not finish (over half the limit used)."""
    needs_bwrap()
    burner = bot_of(tmp_path, "burner", BURNER)
    outcomes = play_a_sitting(
        tmp_path, burner, 4, SandboxLimits(cpu_seconds=4, cpu_grace_seconds=1)
    )
    assert all(isinstance(outcome, MatchOutcome) for outcome in outcomes)
    assert [o.summary.faults for o in outcomes if isinstance(o, MatchOutcome)] == [()] * 4
    said = [(tmp_path / f"s~{index}.jsonl.seat0.stderr").read_text() for index in range(4)]
    cpu = [float(text.split("BURNER cpu ")[1].split()[0]) for text in said]
    assert max(cpu) > 2.5  # it did play on: a process of its sitting played two series


@pytest.mark.slow
def test_a_bot_that_closed_its_stream_after_a_series_is_not_taken_up(tmp_path: Path) -> None:
    """A bot that half-closes its stream right after a series' end gets a fresh process for the
    next series: the close is its own, not a crash charged to the next series."""
    needs_bwrap()
    folder = tmp_path / "raw"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "hostile" / "raw_http2.py", folder / "raw.py")
    (folder / "bot.toml").write_text(
        'name = "attack"\nversion = "endclose"\ncommand = ["python", "raw.py", "endclose"]\n'
    )
    outcomes = play_a_sitting(tmp_path, folder, 9)
    assert all(isinstance(outcome, MatchOutcome) for outcome in outcomes)
    crashed = [
        index
        for index, outcome in enumerate(outcomes)
        if isinstance(outcome, MatchOutcome) and outcome.summary.faults
    ]
    # The close is seen before the next series is given to the bot (it is thawed a moment
    # first), so no series pays for it; taken up regardless, the bot would lose every other
    # series (4 of 9). A machine so loaded that the bot cannot send its close within the
    # moment may cost a series now and then: never two in a row, since a crash ends a sitting.
    assert len(crashed) <= 2, crashed
    assert all(later - earlier > 1 for earlier, later in itertools.pairwise(crashed))
