"""The series benchmark's peers: the pipe wire, the pipe referee against the in-process floor."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks import pipe_referee
from benchmarks.bots.pipe_wire import action_in, action_out, event_in, event_out, view_in, view_out
from benchmarks.pipe_referee import BotPipeError, Planned, play, play_plan
from benchmarks.series_bench import BenchError, CpuGroup, floor_results, league_plan, measure, parse
from referee.rules import (
    CARDS,
    Discard,
    GreedyPolicy,
    Knock,
    Observation,
    RuleParams,
    SeriesState,
    card_set,
    observation,
)


def seen_views(seed: int, limit: int = 400) -> list[Observation]:
    """Every observation of the player to move in the first ``limit`` decisions of a series."""
    series, policy = SeriesState(seed), GreedyPolicy(knock_at=10)
    views: list[Observation] = []
    while series.result is None and len(views) < limit:
        view = observation(series, series.to_move)
        views.append(view)
        series.apply(policy(view, series.legal_actions()))
    return views


def test_an_observation_crosses_the_wire_unchanged() -> None:
    views = seen_views(7)
    assert len({view.hand_number for view in views}) > 1  # several hands, scores that move
    for view in views:
        wired = json.loads(json.dumps(view_out(view)))
        history = tuple(event_in(json.loads(json.dumps(event_out(e)))) for e in view.history)
        assert view_in(wired, history, view.params) == view


def test_every_kind_of_action_crosses_the_wire_unchanged() -> None:
    melds = (card_set("7c 7d 7h"), card_set("As 2s 3s"))
    actions = [*SeriesState(3).legal_actions(), Discard(CARDS[5]), Knock(CARDS[9])]
    actions.append(Knock(CARDS[9], melds))
    for action in actions:
        assert action_in(json.loads(json.dumps(action_out(action)))) == action


@pytest.mark.parametrize("bad", [["discard"], ["fold", 3], "draw", ["knock", "Kd"]])
def test_a_malformed_action_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="not an action"):
        action_in(bad)


def test_the_plan_swaps_seats_on_the_same_deal() -> None:
    plan = league_plan(("greedy", "strong"), 4, 2026)
    assert [series.index for series in plan] == [0, 1, 2, 3]
    assert plan[0].seed == plan[1].seed != plan[2].seed == plan[3].seed
    assert plan[0].seats == ("greedy", "strong") == plan[1].seats[::-1]
    assert (
        plan
        == league_plan(("greedy", "strong"), 4, 2026)
        != league_plan(("greedy", "strong"), 4, 7)
    )


@pytest.mark.slow
def test_the_pipe_peer_plays_the_floors_series() -> None:
    plan = league_plan(("greedy", "strong"), 2, 2026) + league_plan(("greedy", "greedy"), 2, 5)
    floor, policies = floor_results(plan)
    assert play_plan(plan, jobs=2) == floor
    assert all(played.decisions > 0 for played in floor)
    assert policies > 0


def fake_bot(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """The pipe referee's bots replaced by a Python one-liner."""
    monkeypatch.setattr(pipe_referee, "BOT", (sys.executable, "-c", script))


@pytest.mark.slow
def test_a_bot_playing_an_illegal_action_stops_the_series(monkeypatch: pytest.MonkeyPatch) -> None:
    # "take" is legal on the first offer only: the second answer is illegal.
    fake_bot(
        monkeypatch,
        'import sys\nprint("{}")\nfor _ in sys.stdin: print(\'{"action": "take"}\', flush=True)',
    )
    with pytest.raises(BotPipeError, match="answer"):
        play(Planned(0, ("any", "any"), 11), RuleParams())


@pytest.mark.slow
def test_a_bot_that_dies_stops_the_series(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_bot(monkeypatch, "pass")  # gone before its hello
    with pytest.raises(BotPipeError, match="ended"):
        play(Planned(0, ("any", "any"), 11), RuleParams())


def test_a_bad_plan_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plan.json").write_text('{"series": [{"index": 0}]}')
    argv = ["pipe_referee", str(tmp_path / "plan.json"), str(tmp_path / "out.json")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", argv)
        assert pipe_referee.main() == 1
    error = capsys.readouterr().err
    assert error.startswith("pipe referee: ")
    assert error.count("\n") == 1


@pytest.mark.parametrize(
    "argv", [["--series", "3"], ["--jobs", "two"], ["--matchups", "greedy:nobody"], ["--runs", "0"]]
)
def test_bad_options_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(argv)
    assert "error:" in capsys.readouterr().err


def test_a_failing_child_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match=r"failed \(exit 3\)"):
        measure([sys.executable, "-c", "raise SystemExit(3)"], tmp_path, tmp_path / "out.json")


BURN = """
import json, os, sys, time
if os.fork() == 0:  # a grandchild, as a bot is, that burns CPU
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    os._exit(0)
os.wait()
json.dump({"self": time.process_time()}, open(sys.argv[1], "w"))
"""


@pytest.mark.slow
def test_the_cgroup_counts_what_a_childs_children_burn(tmp_path: Path) -> None:
    probe = CpuGroup.make(f"series-bench-test-{os.getpid()}")
    if probe is None:
        pytest.skip("no cgroup v1 cpuacct hierarchy here, or not root")
    probe.remove()
    out = tmp_path / "out.json"
    child = measure([sys.executable, "-c", BURN, str(out)], tmp_path, out)
    assert child.group_s is not None
    assert child.group_s >= 0.3 + child.document["self"]
    assert child.rusage_s >= 0.3
