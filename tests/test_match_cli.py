"""``gin match A B``: the match as a league (tournaments.headtohead), its batches and its stop on
the scripted executor, the command's errors, and one real match of the sample bots."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing
from rich.console import Console
from typer.testing import CliRunner

from tournaments.cli.app import app
from tournaments.cli.match import MatchTestView
from tournaments.executors.fake import FakeExecutor, played
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.headtohead import (
    batch_pairs,
    match_config,
    match_name,
    match_report,
    play_match,
    start_match,
)
from tournaments.league import NAME_PATTERN, LeagueConfig, LeagueError, stored_league
from tournaments.registry import Arena, submit
from tournaments.runner import PairTally, Progress
from tournaments.stats.sprt import SprtSettings, SprtStatus
from tournaments.store import BotRow, MatchState, Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"
cli = CliRunner()
A_HASH = "a" * 64


class FirstBotWins(FakeExecutor):
    """Bot ``a`` (its hash ``A_HASH``) wins every series, whichever seat it has."""

    async def play(
        self, job: MatchJob, *, sent: Callable[[], None] | None = None
    ) -> MatchOutcome | WorkerFailure:
        outcome = await super().play(job, sent=sent)
        if isinstance(outcome, WorkerFailure):
            return outcome
        return played(job, winner=0 if job.hashes[0] == A_HASH else 1)


def home(tmp_path: Path) -> tuple[Arena, Store]:
    """Bots a@1 and b@1, registered, never started."""
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    for index, name in enumerate("ab"):
        row = BotRow(name, "1", name * 64, tmp_path / name, "", "", time.time() + index)
        store.add_bot(row)
    return arena, store


def run_match(
    arena: Arena, store: Store, config: LeagueConfig, cap: int | None, executor: FakeExecutor
) -> tuple[LeagueConfig, SprtStatus | None, PairTally]:
    tally = PairTally(config.bots[0], store.results(config.name))

    async def play() -> tuple[LeagueConfig, SprtStatus | None]:
        return await play_match(arena, store, config, tally, cap, executor=lambda: executor)

    grown, decision = trio.run(play, clock=trio.testing.MockClock(autojump_threshold=0))
    return grown, decision, tally


def test_a_match_name_is_a_valid_league_name() -> None:
    for first, second in [("random", "greedy"), ("My.Bot@1.2", "x@2"), ("a" * 30, "b" * 30)]:
        assert NAME_PATTERN.fullmatch(match_name(first, second))
    assert match_name("new@2", "new@1") == "new-2-vs-new-1"


def test_a_test_schedules_batches_and_stops_once_it_decides(tmp_path: Path) -> None:
    arena, store = home(tmp_path)
    settings = SprtSettings(0.0, 100.0)  # twelve pairs won 2-0 decide (see test_runner)
    config = match_config("m", ("a@1", "b@1"), batch_pairs(2, 0, 100000), settings, 2, None)
    start_match(store, config)
    executor = FirstBotWins(2)
    grown, decision, tally = run_match(arena, store, config, 100000, executor)
    assert decision is not None
    assert (decision.verdict, decision.pairs) == ("H1", 12)
    # Two batches of eight pairs were scheduled, not the cap's 100000.
    assert grown.series_per_pairing == 32
    assert len(store.matches("m")) == tally.series  # those it will not play are dropped
    stored = stored_league(store, "m")
    assert stored is not None
    assert stored.config.series_per_pairing == 32
    played_now = len(executor.jobs)
    assert played_now == tally.series <= 12 * 2 + 2  # the decisive pair, and what ran with it
    report = match_report(grown, tally, decision, 100000)
    assert (report.state, report.pairs, report.counts) == (
        "decided",
        len(tally.units),
        tally.counts,
    )
    # Run again: decided already, nothing more is played or scheduled.
    again = FirstBotWins(2)
    regrown, decided, _ = run_match(arena, store, start_match(store, config), 100000, again)
    assert again.jobs == []
    assert decided is not None
    assert regrown.series_per_pairing == 32


def test_an_undecided_test_stops_at_its_cap(tmp_path: Path) -> None:
    arena, store = home(tmp_path)
    settings = SprtSettings(0.0, 5.0)  # far too fine for ten pairs
    config = match_config("m", ("a@1", "b@1"), batch_pairs(2, 0, 10), settings, 2, None)
    start_match(store, config)
    grown, decision, tally = run_match(arena, store, config, 10, FirstBotWins(2))
    assert decision is None
    assert grown.series_per_pairing == 20
    assert store.counts("m") == {MatchState.DONE: 20}
    report = match_report(grown, tally, decision, 10)
    assert (report.state, report.pairs, report.counts) == ("cap reached", 10, (0, 0, 0, 0, 10))
    assert report.test is not None
    assert report.test.verdict is None
    # A higher cap goes on from there.
    grown, _, _ = run_match(arena, store, start_match(store, config), 12, FirstBotWins(2))
    assert grown.series_per_pairing == 24


def test_a_fixed_match_plays_its_pairs_and_reports_them(tmp_path: Path) -> None:
    arena, store = home(tmp_path)
    config = match_config("m", ("b@1", "a@1"), 5, None, 2, None)
    start_match(store, config)
    grown, decision, tally = run_match(arena, store, config, None, FirstBotWins(2))
    report = match_report(grown, tally, decision, None)
    data = report.to_dict()
    assert data["state"] == "played"
    assert (data["bots"], data["pairs"], data["series"]) == (["b@1", "a@1"], 5, 10)
    assert data["pentanomial"] == [5, 0, 0, 0, 0]  # from b's side: it lost every pair
    assert data["score"] == 0.0
    assert data["elo"]["bound"] == "upper"
    assert (data["llr"], data["bounds"], data["verdict"], data["settings"]) == (None,) * 4
    assert set(data) == {
        "match", "bots", "pairs", "series", "pentanomial", "score", "elo", "los", "margin",
        "settings", "max_pairs", "llr", "bounds", "verdict", "state", "series_won",
        "series_lost", "series_drawn", "llr_percent", "reading", "statistic", "corrected",
    }  # fmt: skip
    assert (data["series_won"], data["series_lost"], data["series_drawn"]) == (0, 10, 0)
    assert data["reading"] == "worse"  # 0-10 in 5 pairs: at most -140 Elo


def test_other_settings_for_an_existing_match_are_refused(tmp_path: Path) -> None:
    _, store = home(tmp_path)
    settings = SprtSettings(0.0, 5.0)
    start_match(store, match_config("m", ("a@1", "b@1"), 8, settings, 2, None))
    same = start_match(store, match_config("m", ("a@1", "b@1"), 8, settings, 4, None))
    assert same.jobs == 4  # jobs are no setting of the match
    for other in (
        match_config("m", ("a@1", "b@1"), 8, SprtSettings(0.0, 10.0), 2, None),
        match_config("m", ("a@1", "b@1"), 8, settings, 2, 500),
        match_config("m", ("b@1", "a@1"), 8, settings, 2, None),
        match_config("m", ("a@1", "b@1"), 8, None, 2, None),
    ):
        with pytest.raises(LeagueError, match="exists with other settings") as caught:
            start_match(store, other)
        assert "gin match a@1 b@1 --elo0 0 --elo1 5 --alpha 0.05 --beta 0.05" in str(caught.value)


def test_the_live_view_shows_the_test_the_counts_and_the_estimate(tmp_path: Path) -> None:
    arena, store = home(tmp_path)
    config = match_config("m", ("a@1", "b@1"), 6, SprtSettings(0.0, 100.0), 2, None)
    start_match(store, config)
    run_match(arena, store, config, 6, FirstBotWins(2))
    tally = PairTally("a@1", store.results("m"))
    screen = Console(file=io.StringIO(), width=100, force_terminal=True)
    view = MatchTestView(config, tally, 6, screen)
    screen.print(view)
    text = screen.file.getvalue()  # type: ignore[attr-defined]
    assert "m: a@1 vs b@1: 6 pairs (cap 6)" in text
    assert "LLR +" in text
    assert "LLR +1.48 (50.3%) [-2.94, +2.94]" in text  # as the lines and the summary write it
    assert "H0 ····" in text
    assert "pairs 0:0 ½:0 1:0 1½:0 2:6" in text
    assert "Elo >= +" in text
    # Off a terminal: one plain line per pair finished since the last update.
    lines = Console(file=io.StringIO(), width=100)
    plain = MatchTestView(config, PairTally("a@1"), 6, lines)
    for result in store.results("m")[:4]:
        plain.tally.add(result)
    plain.update(Progress("m", 16, 4))
    printed = lines.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line.split(";")[0] for line in printed] == ["pair 1: 2/2", "pair 2: 2/2"]


# --- the command ------------------------------------------------------------------------------


@pytest.fixture
def gin_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    return home(tmp_path)[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a", "b"], "give --pairs N, or the sequential test's --elo0 and --elo1"),
        (["a", "b", "--pairs", "2", "--elo0", "0"], "--pairs is a fixed match"),
        (["a", "b", "--pairs", "0"], "--pairs must be positive"),
        (["a", "b", "--elo0", "5", "--elo1", "0"], "elo1 must be greater than elo0"),
        (["a", "b", "--elo0", "0", "--elo1", "5", "--max-pairs", "0"], "--max-pairs must be"),
        (["a", "zed", "--pairs", "2"], "no submitted bot 'zed'"),
        (["a", "a@1", "--pairs", "2"], "are the same bot (a@1)"),
        (["a", "b", "--pairs", "2", "--name", "Bad Name"], "bad or missing name"),
        (["a", "b", "--elo0", "0", "--elo1", "5", "--max-pairs", "125001"], "at most 125000"),
        (["a", "b", "--pairs", "2", "--move-time", "700s"], "--move-time 700: must be between"),
    ],
)
def test_the_commands_errors_are_one_line(gin_home: Store, args: list[str], message: str) -> None:
    result = cli.invoke(app, ["match", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_name_taken_by_other_settings_is_a_one_line_error(gin_home: Store) -> None:
    start_match(gin_home, match_config("a-vs-b", ("a@1", "b@1"), 3, None, 2, None))
    result = cli.invoke(app, ["match", "a", "b", "--pairs", "4"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "error: a-vs-b exists with other settings (gin match a@1 b@1 --pairs 3 --name a-vs-b): "
        "run it with those to resume it, or give another --name"
    ]


@pytest.mark.slow
def test_a_real_match_of_two_pairs_then_resumed(tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    for name in ("random", "greedy"):
        trio.run(submit, arena, store, SAMPLES / name, None)
    env = {**os.environ, "GIN_HOME": str(arena.home), "COLUMNS": "200"}
    command = [sys.executable, "-m", "tournaments.cli.entry", "match", "random", "greedy"]
    done = subprocess.run(
        [*command, "--pairs", "2", "--json"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["match"], data["pairs"], data["series"], data["state"]) == (
        "random-vs-greedy",
        2,
        4,
        "played",
    )
    assert sum(data["pentanomial"]) == 2
    assert data["bots"][0].startswith("random@")
    assert "pair 2:" in done.stderr  # one plain line per pair, off a terminal
    assert store.counts("random-vs-greedy") == {MatchState.DONE: 4}
    # The same command again plays nothing more and says the same.
    again = subprocess.run(
        [*command, "--pairs", "2", "--json"], env=env, capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == data
    assert "pair 1:" not in again.stderr


@pytest.mark.slow
def test_ctrl_c_stops_a_match_and_the_same_command_resumes_it(tmp_path: Path) -> None:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    for name in ("random", "greedy"):
        trio.run(submit, arena, store, SAMPLES / name, None)
    env = {**os.environ, "GIN_HOME": str(arena.home), "COLUMNS": "200"}
    command = [sys.executable, "-m", "tournaments.cli.entry", "match", "greedy", "random"]
    options = ["--elo0", "0", "--elo1", "400", "--max-pairs", "4", "-j", "1"]
    runner = subprocess.Popen(
        [*command, *options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not store.results("greedy-vs-random"):
            assert time.monotonic() < deadline, "no series finished in 120 s"
            time.sleep(0.2)
        runner.send_signal(signal.SIGINT)
        output, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert runner.returncode == 130, output
    assert "Traceback" not in output
    (resume,) = [line for line in output.splitlines() if "Resume with:" in line]
    assert resume.startswith("stopped (")
    assert resume.endswith(
        "complete). Resume with: gin match greedy random --elo0 0 --elo1 400 --alpha 0.05 "
        "--beta 0.05 --max-pairs 4 --name greedy-vs-random"
    )
    assert store.counts("greedy-vs-random").get(MatchState.RUNNING, 0) == 0
    before = {result.match_id for result in store.results("greedy-vs-random")}
    done = subprocess.run(
        [*command, *options], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    after = {result.match_id for result in store.results("greedy-vs-random")}
    assert before < after
    assert "cap reached" in done.stdout or "accepted" in done.stdout


@pytest.mark.parametrize("given", ["nan", "inf", "-1", "fast"])
def test_a_move_time_that_is_no_duration_is_a_usage_error(gin_home: Store, given: str) -> None:
    result = cli.invoke(app, ["match", "a", "b", "--pairs", "2", "--move-time", given])
    assert result.exit_code == 2
    said = " ".join(result.output.replace("│", " ").split())  # out of typer's error box
    assert "is not a duration (write it as 1s, 500ms or 2min)" in said
    assert "Traceback" not in result.output
