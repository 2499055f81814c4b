"""In-process series written as logs: the referee's own log of the same seeds and actions,
replayed, verified and shown as a page (``tournaments.workbench.logs``)."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from protocol.sdk import Bot
from referee.control import TimeControl
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.replay import Step, VerifyStatus, load_replay, read_text, verify_log
from referee.rules import (
    Action,
    Discard,
    Observation,
    RandomPolicy,
    greedy_policy,
    patient_policy,
)
from referee.seats import InProcessSeat
from tests.chromium import find_chromium, launch
from tournaments.cli.app import app
from tournaments.workbench.logs import (
    Decided,
    NotAsRecordedError,
    RecordedSeries,
    play_recorded,
    write_log,
)

SALT = bytes(range(16))
runner = CliRunner()


def _series(seed: int = 5) -> RecordedSeries:
    return play_recorded(greedy_policy, RandomPolicy(seed), seed=seed, names=("greedy", "random"))


def _referee_log(path: Path, seed: int, match_id: str) -> Path:
    """The referee's own log of greedy against RandomPolicy(seed): the match loop and its
    in-process seats, as tests and simulations run it."""
    seats = (
        InProcessSeat(greedy_policy, "greedy", "0"),
        InProcessSeat(RandomPolicy(seed), "random", "0"),
    )
    config = MatchConfig(match_id=match_id, seed=seed, salt=SALT)
    with MatchLog(path) as log:
        trio.run(play_match, seats, config, log)
    return path


TIMED = {"started_at", "ms", "mean_ms", "max_ms", "total_ms", "bank_left_ms"}


def _untimed(value: object) -> object:
    """A log record without what a clock wrote (when, and how long each decision took)."""
    if isinstance(value, dict):
        return {key: _untimed(item) for key, item in value.items() if key not in TIMED}
    if isinstance(value, list):
        return [_untimed(item) for item in value]
    return value


def _records(path: Path) -> list[object]:
    return [_untimed(json.loads(line)) for line in path.read_text().splitlines()]


def test_the_log_is_the_referees_log_of_the_same_seeds_and_actions(tmp_path: Path) -> None:
    ours = write_log(
        _series(), tmp_path / "ours.jsonl", match_id="m-5", salt=SALT, think_times=False
    )
    theirs = _referee_log(tmp_path / "referee.jsonl", 5, "m-5")
    assert _records(ours) == _records(theirs)
    assert len(_records(ours)) > 100


def test_it_verifies_and_replays_as_the_referees_log_does(tmp_path: Path) -> None:
    ours = _series().write_log(tmp_path / "ours.jsonl", match_id="m-5", salt=SALT)
    theirs = _referee_log(tmp_path / "referee.jsonl", 5, "m-5")
    verified = verify_log(ours)
    assert verified.status is VerifyStatus.VERIFIED
    assert dataclasses.replace(verified, path=None) == dataclasses.replace(
        verify_log(theirs), path=None
    )
    mine, referees = load_replay(ours), load_replay(theirs)
    assert mine.names == referees.names == ("greedy@0", "random@0")
    assert [_shown(step) for step in mine.steps] == [_shown(step) for step in referees.steps]
    assert len(mine.steps) > 100


def _shown(step: Step) -> tuple[object, ...]:
    """What a viewer sees of a step, but for times."""
    kind = None if step.record is None else type(step.record).__name__
    return (step.index, step.line, step.kind, step.hand_number, step.seat, kind, step.tables)


def test_gin_replay_reads_it(tmp_path: Path) -> None:
    log = _series().write_log(tmp_path / "series.jsonl")
    verified = runner.invoke(app, ["replay", str(log), "--verify"])
    assert verified.exit_code == 0, verified.output
    assert "verified:" in verified.output
    page = tmp_path / "series.html"
    shown = runner.invoke(app, ["replay", str(log), "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    assert "greedy@0" in page.read_text()
    printed = runner.invoke(app, ["replay", str(log), "--print"])
    assert printed.exit_code == 0
    assert "random@0" in printed.output


def test_the_result_is_play_series_own() -> None:
    from referee.rules import play_series  # noqa: PLC0415 - beside the call it checks

    series = _series(9)
    assert series.result == play_series(greedy_policy, RandomPolicy(9), seed=9)
    assert series.result.hands
    assert len(series.decisions) > len(series.result.hands)


def test_think_times_are_the_policies_own(tmp_path: Path) -> None:
    series = _series()
    asked = [decided for decided in series.decisions if decided.legal > 1]
    log = series.write_log(tmp_path / "timed.jsonl")
    actions = [
        record
        for record in map(json.loads, log.read_text().splitlines())
        if record["type"] == "action" and record["by"] == "bot"
    ]
    assert [record["ms"] for record in actions] == [
        round(decided.seconds * 1000, 3) for decided in asked
    ]


def _slowed(series: RecordedSeries, seconds: float) -> RecordedSeries:
    decisions = [
        dataclasses.replace(decided, seconds=seconds) if decided.legal > 1 else decided
        for decided in series.decisions
    ]
    return dataclasses.replace(series, decisions=tuple(decisions))


def test_a_policy_slower_than_the_clock_is_an_error_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    slow = _slowed(_series(), 2.5)  # over the 1 s move time: the bank runs out
    path = tmp_path / "slow.jsonl"
    with pytest.raises(NotAsRecordedError, match="timeout"):
        write_log(slow, path)
    assert not path.exists()
    long = TimeControl(move_time_ms=5000)
    assert verify_log(write_log(slow, path, time_control=long)).ok
    assert slow.log_text(think_times=False)


def test_a_changed_recording_is_refused() -> None:
    series = _series()
    decisions = list(series.decisions)
    index = next(
        number
        for number, decided in enumerate(decisions)
        if isinstance(decided.action, Discard) and decided.legal > 1
    )
    dropped = dataclasses.replace(series, decisions=tuple(decisions[:index]))
    with pytest.raises(NotAsRecordedError):
        dropped.log_text()
    other_seat = dataclasses.replace(decisions[index], seat=1 - decisions[index].seat)
    swapped = [*decisions[:index], other_seat, *decisions[index + 1 :]]
    with pytest.raises(NotAsRecordedError, match="asked seat"):
        dataclasses.replace(series, decisions=tuple(swapped)).log_text()


def test_an_extra_decision_is_refused() -> None:
    series = _series()
    extra = Decided(0, series.decisions[-1].action, 2, 0.0)
    with pytest.raises(NotAsRecordedError, match="ended after"):
        dataclasses.replace(series, decisions=(*series.decisions, extra)).log_text()


def test_an_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "taken.jsonl"
    path.write_text("mine\n")
    with pytest.raises(FileExistsError):
        write_log(_series(), path)
    assert path.read_text() == "mine\n"


class NamedBot(Bot):
    name = "named"
    version = "2.1"

    def decide(self, view: Observation, legal: list[Action]) -> Action:  # type: ignore[override]
        return patient_policy(view, legal)


def test_names_come_from_the_bot_or_the_policy() -> None:
    series = play_recorded(NamedBot().as_policy(), greedy_policy, seed=3)
    assert series.names == ("named", "GreedyPolicy")
    assert series.versions == ("2.1", "0")
    header = read_text(series.log_text()).header
    assert [seat.name for seat in header.seats if seat] == ["named", "GreedyPolicy"]


# --- in a notebook ------------------------------------------------------------------------------


def _srcdoc(markup: str) -> str:
    found = re.fullmatch(r'<iframe [^>]*srcdoc="([^"]*)"[^>]*></iframe>', markup)
    assert found is not None, markup[:200]
    return html.unescape(found.group(1))


def test_a_series_renders_inline_as_the_replay_page() -> None:
    series = _series()
    markup = series._repr_html_()
    page = _srcdoc(markup)
    assert page == series.html()
    assert page.startswith("<!doctype html>")
    assert "greedy@0" in page
    assert 'sandbox="allow-scripts"' in markup


def test_the_inline_page_fetches_nothing() -> None:
    page = _srcdoc(_series()._repr_html_())
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?(?:https?:)?//""", page)
    assert not re.search(r"\b(?:fetch|XMLHttpRequest|WebSocket|EventSource)\s*\(", page)
    assert "default-src 'none'" in page


def test_a_series_the_referee_would_not_have_played_so_says_why_inline() -> None:
    markup = _slowed(_series(), 2.5)._repr_html_()
    assert markup.startswith("<pre>cannot show this series")
    assert "timeout" in markup


CHROMIUM = find_chromium()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (make browser-deps)")
def test_the_inline_page_plays_in_its_iframe_in_chromium(tmp_path: Path) -> None:
    """In a notebook's cell the page has no address of its own (``about:srcdoc``, a null
    origin): it must start and step all the same."""
    assert CHROMIUM is not None
    cell = tmp_path / "notebook.html"
    cell.write_text(f"<!doctype html><html><body>{_series()._repr_html_()}</body></html>")
    with launch(CHROMIUM, tmp_path / "profile") as browser:
        browser.open(cell)
        targets = browser.call("Target.getTargets", None, False)["targetInfos"]
        frame = next(target for target in targets if target["url"] == "about:srcdoc")
        attached = browser.call(
            "Target.attachToTarget", {"targetId": frame["targetId"], "flatten": True}, False
        )
        browser.session = attached["sessionId"]  # the page inside the iframe, from here on
        browser.call("Runtime.enable")
        assert browser.evaluate("document.body.dataset.ready") == "true"
        browser.evaluate("document.getElementById('next').click()")
        where = browser.evaluate("document.getElementById('where').textContent")
        assert where.startswith("hand 1 of ")
        assert " · step 2/" in where
        assert browser.requests() == [cell.resolve().as_uri()]
