"""The live view of ``gin play``: fed by a match's log records as they are written, it shows what
the log says (the same records as the log's own reader gives)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import trio
import trio.testing
from rich.console import Console

from referee.control import FaultPolicy
from referee.local import WatchedLog
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.replay import ActionRecord, FaultRecord, HandEndRecord, Request, read_log
from referee.rules import DRAW_STOCK, greedy_policy, patient_policy
from referee.seats import InProcessSeat
from tests.replay_logs import Blunders
from tournaments.cli.live import LeagueView, MatchView
from tournaments.runner import Progress
from tournaments.stats.standings import Standings, compute
from tournaments.store import ResultRow


def watched_match(path: Path, view: MatchView) -> None:
    """Seed 12, seat 0 blundering twice (two strikes): the view watches the log as it goes."""
    seats = (
        InProcessSeat(Blunders(greedy_policy, (3, 40)), "north", "1.0"),
        InProcessSeat(patient_policy, "south", "2.0"),
    )
    config = MatchConfig("live-12", 12, fault_policy=FaultPolicy(strikes=3))

    async def main() -> None:
        with MatchLog(path) as log:
            await play_match(seats, config, WatchedLog(log, view.on_record))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_view_shows_what_the_log_holds(tmp_path: Path) -> None:
    view = MatchView(("seat 0", "seat 1"))
    watched_match(tmp_path / "live.jsonl", view)
    log = read_log(tmp_path / "live.jsonl")
    # The same records as the log's reader gives, but for the line (a watcher has no lines).
    hands = [replace(r, line=0) for r in log.records if isinstance(r, HandEndRecord)]
    faults = [replace(r, line=0) for r in log.records if isinstance(r, FaultRecord)]
    assert log.result is not None
    assert view.names == ("north@1.0", "south@2.0")
    assert view.decisions == sum(isinstance(record, Request) for record in log.records) > 50
    assert view.hands == hands
    assert view.totals == log.result.totals
    assert [(fault.seat, fault.kind, fault.strikes) for fault in view.faults] == [
        (0, "illegal_action", 1),
        (0, "illegal_action", 2),
    ]
    assert view.faults == faults
    assert view.ended
    console = Console(width=100, record=True)
    console.print(view)
    screen = console.export_text()
    assert "north@1.0  vs  south@2.0" in screen
    assert "(strike 2)" in screen
    assert f"{len(hands)} hands, {view.decisions} decisions" in screen


def test_requests_are_counted_and_actions_passed_over() -> None:
    view = MatchView(("a", "b"))
    view.on_record(Request(0, 1, 0, "draw", 3, 5.0))
    view.on_record(ActionRecord(0, 0, 1, DRAW_STOCK, "bot", 1.0))
    assert view.hands == []
    assert view.faults == []
    assert view.decisions == 1


def test_the_league_view_shows_running_standings_and_fits_80_columns() -> None:
    """Standings with intervals as results come in, the throughput, the last results and the
    faults, at 80 columns, with the standings counted at most every ``every_s`` seconds."""
    names = [f"a-bot-with-a-long-name-{i}@1.0.{i}" for i in range(3)]
    results = []
    for index in range(12):
        first, second = names[index % 3], names[(index + 1) % 3]
        summary = {
            "seats": [first, second],
            "winner": index % 2,
            "end": "complete",
            "forfeited": [],
            "totals": [[0, 0, 0], [0, 0, 0]],
            "game_winners": [index % 2] * 3,
            "hands": 3,
            "faults": [],
            "duplicate_of": None,
            "stats": [{"decisions": 1, "mean_ms": 1.0, "max_ms": 1.0}] * 2,
            "hand_stats": [{"points": 10}, {"points": 20}],
        }
        results.append(
            ResultRow.from_stored(f"m{index}", "l", index % 2, "complete", "", summary, "")
        )
    counted: list[int] = []

    def count() -> Standings:
        counted.append(1)
        return compute("l", results)

    view = LeagueView(count, every_s=3600)
    progress = Progress("l", 30, 12, slots=2)
    progress.finished_now = 12
    progress.running["l~" + "x" * 90 + "~001"] = progress.started_at
    progress.recent.append("l~a~b~000: a@1 beat b@1, games 3-0")
    progress.faults.append("b@1: timeout: took 1200 ms, the limit is 1100 ms")
    view.update(progress)
    progress.done = 13
    view.update(progress)  # within every_s: not counted again
    assert counted == [1]
    console = Console(width=80, record=True)
    console.print(view)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "standings after 12 series" in text
    assert "matches/min" in text
    assert "a@1 beat b@1" in text
    assert "timeout" in text
    assert "…" not in text  # folded where too long, never cut
    for name in names:
        assert name[:20] in text
