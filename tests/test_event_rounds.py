"""Swiss and knockout leagues on the scripted executor and trio's mock clock: rounds paired only
when the last is recorded, stored before they play, resumed after a stop at any point without
ever being paired again differently; the league files' bad input. (Real bots:
tests/test_event_league.py.)"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.test_runner import run
from tournaments.cli.event_view import bracket_grid, event_grid, round_lines, rounds_grid
from tournaments.events import Tie
from tournaments.executors import ExecutorError
from tournaments.executors.fake import FakeExecutor, played
from tournaments.formats.records import MatchJob, MatchOutcome, WorkerFailure
from tournaments.league import LeagueConfig, LeagueError, create_league, extend_league
from tournaments.registry import Arena
from tournaments.rounds import StoredRound, advance, check_rounds, event_standings, event_state
from tournaments.store import BotRow, MatchState, Store, StoreDamaged


class Stronger(FakeExecutor):
    """The bot registered first wins every series (its hash is the smaller)."""

    async def play(self, job: MatchJob, *, sent: Any = None) -> MatchOutcome | WorkerFailure:
        outcome = await super().play(job, sent=sent)
        if isinstance(outcome, WorkerFailure):
            return outcome
        return played(job, 0 if job.hashes[0] < job.hashes[1] else 1)


def event(tmp_path: Path, bots: int, **changes: Any) -> tuple[Arena, Store, LeagueConfig]:
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    names = [f"b{index}" for index in range(bots)]
    for index, name in enumerate(names):
        store.add_bot(BotRow(name, "1", f"{index:064d}", tmp_path / name, "", "", time.time()))
    data: dict[str, Any] = {"name": "e", "seed": 1, "bots": names, "series_per_pairing": 2}
    config = LeagueConfig.from_dict({**data, **changes})
    create_league(store, config)
    return arena, store, config


def stored(store: Store, name: str = "e") -> list[StoredRound]:
    return [StoredRound.from_json(text, n) for n, text in enumerate(store.event_rounds(name))]


def test_a_swiss_plays_its_rounds_one_after_another(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 5, format="swiss", rounds=3)
    assert store.matches("e") == []  # nothing is scheduled before the first round is paired
    executor = Stronger(2)
    progress = run(arena, store, config, executor)
    rounds = stored(store)
    assert len(rounds) == 3
    assert [len(r.ties) for r in rounds] == [3, 3, 3]  # two ties and a bye each round
    assert all(r.ties[-1].bye for r in rounds)
    assert rounds[0].ties == (Tie("b0@1", "b1@1"), Tie("b2@1", "b3@1"), Tie("b4@1"))
    # each round's matches all started after the last one's all ended
    spans = {span.match_id: span for span in executor.spans}
    for before, after in itertools.pairwise(rounds):
        ends = [spans[m].ended for m in _ids(store, before)]
        starts = [spans[m].started for m in _ids(store, after)]
        assert max(ends) <= min(starts)
    assert progress.done == progress.total == 3 * 2 * 2
    state = event_state(store, "e")
    assert state.finished
    assert check_rounds(store, "e") == []
    byes = [r.ties[-1].first for r in rounds]
    assert len(set(byes)) == 3


def _ids(store: Store, round_: StoredRound) -> list[str]:
    wanted = {frozenset(t.bots()) for t in round_.ties if not t.bye}
    seen = {m.match_id for m in store.matches("e") if frozenset(m.pairing.split("|")) in wanted}
    return sorted(seen)


def test_a_stop_in_a_round_resumes_it_as_stored(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 6, format="swiss", rounds=4)
    with pytest.raises(ExecutorError):
        run(arena, store, config, Stronger(2, lost_after=8))  # in round 2 (6 matches a round)
    first = stored(store)
    assert len(first) == 2
    assert store.counts("e")[MatchState.PENDING] > 0
    run(arena, store, config, Stronger(2))
    after = stored(store)
    assert after[:2] == first  # the stored rounds were played as stored, not paired again
    assert len(after) == 4
    assert check_rounds(store, "e") == []


def test_a_stop_between_rounds_pairs_the_next_from_the_same_results(tmp_path: Path) -> None:
    """A run that stops once round 1 is recorded and before round 2 is stored (as a kill
    there would): the next run pairs round 2 from the results, as the pure pairing does."""
    arena, store, config = event(tmp_path, 6, format="swiss", rounds=3)
    assert advance(store, "e") == 6  # round 1 paired and stored
    assert advance(store, "e") == 0  # once: it is not played yet
    first = stored(store)
    run(arena, store, config, Stronger(2), advance=lambda: 0)
    assert stored(store) == first
    assert store.counts("e") == {MatchState.DONE: 6}
    expected = event_state(store, "e").next_ties()
    run(arena, store, config, Stronger(2))
    rounds = stored(store)
    assert rounds[:1] == first
    assert rounds[1].ties == expected
    assert event_state(store, "e").finished


def test_a_failed_match_holds_the_next_round_back(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)

    class Failing(Stronger):
        async def play(self, job: MatchJob, *, sent: Any = None) -> MatchOutcome | WorkerFailure:
            if job.match_id.endswith("~000") and "b0@1~b1@1" in job.match_id:
                return WorkerFailure("exit 1: boom")
            return await super().play(job, sent=sent)

    progress = run(arena, store, config, Failing(2))
    assert progress.failed == 1
    assert len(stored(store)) == 1
    run(arena, store, config, Stronger(2))  # the retry plays it, then round 2
    assert len(stored(store)) == 2


def test_a_knockout_of_six_gives_byes_to_the_top_seeds(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 6, format="knockout", series_per_pairing=4)
    run(arena, store, config, Stronger(2))
    rounds = stored(store)
    assert list(rounds[0].ties) == [
        Tie("b0@1"),
        Tie("b3@1", "b4@1"),
        Tie("b1@1"),
        Tie("b2@1", "b5@1"),
    ]
    assert rounds[1].ties == (Tie("b0@1", "b3@1"), Tie("b1@1", "b2@1"))
    assert rounds[2].ties == (Tie("b0@1", "b1@1"),)
    state = event_state(store, "e")
    assert state.finished
    assert state.results[-1][0].winner() == "b0@1"
    assert len(store.matches("e")) == 4 * (2 + 2 + 1)


def test_a_drawn_knockout_tie_goes_to_the_better_seed(tmp_path: Path) -> None:
    """Seat 0 wins every series: each duplicate pair is a draw, and so is each tie's margin."""
    arena, store, config = event(tmp_path, 4, format="knockout")
    run(arena, store, config, FakeExecutor(2))
    final = stored(store)[1].ties
    assert final == (Tie("b0@1", "b1@1"),)


def test_a_draw_seeding_is_kept_with_the_rounds(tmp_path: Path) -> None:
    _arena, store, _config = event(tmp_path, 8, format="knockout", seeding="draw")
    assert advance(store, "e") == 4 * 2
    seeds = stored(store)[0].seeds
    assert sorted(seeds) == [f"b{n}@1" for n in range(8)]
    assert seeds != tuple(f"b{n}@1" for n in range(8))  # a draw (of 8!, this one is not it)
    assert check_rounds(store, "e") == []


def test_seeding_from_another_league_uses_its_ratings(tmp_path: Path) -> None:
    arena, store, _config = event(tmp_path, 4, format="swiss", rounds=1)
    ranked = LeagueConfig.from_dict({"name": "ranked", "bots": ["b3", "b2", "b1", "b0"]})
    create_league(store, ranked)
    run(arena, store, ranked, Stronger(2))
    seeded = LeagueConfig.from_dict(
        {
            "name": "s",
            "bots": ["b3", "b2", "b1", "b0"],
            "format": "swiss",
            "rounds": 1,
            "seeding": "league:ranked",
        }
    )
    create_league(store, seeded)
    advance(store, "s")
    (first,) = [StoredRound.from_json(t, 0) for t in store.event_rounds("s")]
    assert first.seeds == ("b0@1", "b1@1", "b2@1", "b3@1")


def test_a_tampered_round_is_reported(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)
    run(arena, store, config, Stronger(2))
    swapped = StoredRound(stored(store)[1].seeds, (Tie("b0@1", "b3@1"), Tie("b1@1", "b2@1")))
    store.db.execute("UPDATE event_rounds SET pairing = ? WHERE round = 1", (swapped.to_json(),))
    problems = check_rounds(store, "e")
    assert problems[-1].startswith("round 2 is paired b0@1 v b3@1, b1@1 v b2@1 in the store")
    # and the matches played in round 2 are not the series of the ties it now says
    assert "match e~b0@1~b2@1~000 is of no round's tie" in problems
    assert "match e~b0@1~b3@1~000 of a round's tie is not scheduled" in problems
    store.db.execute("UPDATE event_rounds SET pairing = '[1]' WHERE round = 1")
    with pytest.raises(StoreDamaged, match="pairing of round 2"):
        event_state(store, "e")


def test_a_tampered_round_is_played_no_further(tmp_path: Path) -> None:
    """A round edited by hand is refused as damage before the run schedules anything more
    (it played the edited round's tie and then crashed in the bracket with a traceback)."""
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=3)
    run(arena, store, config, Stronger(2), advance=lambda: 0)
    assert advance(store, "e") == 4  # round 1 paired and stored
    run(arena, store, config, Stronger(2), advance=lambda: 0)  # and played
    advance(store, "e")  # round 2 paired and stored, not played
    swapped = StoredRound(stored(store)[1].seeds, (Tie("b0@1", "b3@1"), Tie("b1@1", "b2@1")))
    store.db.execute("UPDATE event_rounds SET pairing = ? WHERE round = 1", (swapped.to_json(),))
    before = len(store.matches("e"))
    with pytest.raises(StoreDamaged, match=r"rounds of event 'e'.*round 2 is paired"):
        advance(store, "e")
    assert len(store.matches("e")) == before


def test_a_knockout_round_no_bracket_pairs_is_damage_not_a_crash(tmp_path: Path) -> None:
    """Every round's seeds permuted alike: the rounds played are not what the bracket of those
    seeds pairs (``knockout_round`` refuses them), said as damage in one line."""
    arena, store, config = event(tmp_path, 4, format="knockout")
    run(arena, store, config, Stronger(2))
    for number, kept in enumerate(stored(store)):
        permuted = StoredRound(tuple(reversed(kept.seeds)), kept.ties)
        store.db.execute(
            "UPDATE event_rounds SET pairing = ? WHERE round = ?", (permuted.to_json(), number)
        )
    with pytest.raises(StoreDamaged, match="rounds of event 'e'"):
        event_state(store, "e").finished  # noqa: B018 - what status and standings ask
    assert any(problem.startswith("round 2") for problem in check_rounds(store, "e"))


def test_a_round_with_other_seeds_or_an_unseeded_bot_is_damage(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)
    run(arena, store, config, Stronger(2))
    second = stored(store)[1]
    reseeded = StoredRound(tuple(reversed(second.seeds)), second.ties)
    store.db.execute("UPDATE event_rounds SET pairing = ? WHERE round = 1", (reseeded.to_json(),))
    with pytest.raises(StoreDamaged, match="its seeds are not round 1's"):
        event_state(store, "e")
    stranger = StoredRound(second.seeds, (Tie("b0@1", "x@1"), Tie("b1@1", "b2@1")))
    store.db.execute("UPDATE event_rounds SET pairing = ? WHERE round = 1", (stranger.to_json(),))
    with pytest.raises(StoreDamaged, match="a tie names a bot not seeded"):
        event_state(store, "e")


def test_a_drawn_swiss_tie_has_no_winner_and_standings_list_the_field_at_once(
    tmp_path: Path,
) -> None:
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=1)
    lines = event_standings(event_state(store, "e"), {})
    assert [line.bot for line in lines] == ["b0@1", "b1@1", "b2@1", "b3@1"]  # before round 1
    run(arena, store, config, FakeExecutor(2))  # the fake splits every pair: each tie level
    ties = event_state(store, "e").to_dict()["rounds"][0]["ties"]
    assert [tie["winner"] for tie in ties] == [None, None]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": "swiss"}, "a swiss needs rounds = N, at least 1"),
        ({"format": "swiss", "rounds": 0}, "at least 1"),
        ({"format": "swiss", "rounds": 4}, "a swiss of 4 bots has at most 3 rounds"),
        ({"format": "swiss", "rounds": 1, "bots": ["a", "b", "c"]}, "at least 4 bots, not 3"),
        ({"format": "knockout", "bots": ["a", "b"]}, "a knockout needs at least 3 bots"),
        ({"format": "knockout", "rounds": 2}, "a knockout has no rounds"),
        ({"format": "league"}, "format must be one of round-robin, swiss, knockout"),
        ({"rounds": 2}, "rounds, seeding and max_pairs are for an event"),
        ({"format": "knockout", "max_pairs": 4}, "max_pairs is for an event whose ties"),
        ({"format": "swiss", "rounds": 1, "max_pairs": 4}, "max_pairs is for an event whose"),
        (
            {"format": "knockout", "sprt": {"elo0": -10.0, "elo1": 10.0}},
            "a knockout with \\[sprt\\] needs max_pairs = N, at least 1",
        ),
        (
            {"format": "swiss", "rounds": 1, "sprt": {"elo0": -10.0, "elo1": 10.0}},
            "a swiss with \\[sprt\\] needs max_pairs = N, at least 1",
        ),
        (
            {
                "format": "knockout",
                "sprt": {"elo0": -10.0, "elo1": 10.0},
                "max_pairs": 4,
                "duplicate": False,
            },
            "an event's \\[sprt\\] needs duplicate on",
        ),
        ({"format": "swiss", "rounds": 1, "seeding": "best"}, "seeding must be"),
        ({"format": "swiss", "rounds": 1, "candidates": ["a"]}, "has no candidates"),
        ({"format": "swiss", "rounds": 1, "round": 1}, "unknown field 'round'"),
    ],
)
def test_bad_event_files_are_refused(changes: dict[str, Any], message: str) -> None:
    data = {"name": "e", "bots": ["a", "b", "c", "d"], **changes}
    with pytest.raises(LeagueError, match=message):
        LeagueConfig.from_dict(data)


def test_an_odd_swiss_may_play_as_many_rounds_as_bots() -> None:
    config = LeagueConfig.from_dict(
        {"name": "e", "bots": ["a", "b", "c", "d", "e"], "format": "swiss", "rounds": 5}
    )
    assert (config.rounds, config.event) == (5, True)


def test_an_event_is_fixed_once_created(tmp_path: Path) -> None:
    _arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)
    assert create_league(store, config)[1] == 0  # the same file again: no change
    grown = LeagueConfig.from_dict({**config.to_dict(), "rounds": 3})
    with pytest.raises(LeagueError, match="fixed once it is created"):
        create_league(store, grown)
    with pytest.raises(LeagueError, match="is a swiss"):
        extend_league(store, "e", 2)
    assert LeagueConfig.from_dict(config.to_dict()) == config


SEQUENTIAL = {
    "sprt": {"elo0": -100.0, "elo1": 100.0, "alpha": 0.1, "beta": 0.1},
    "max_pairs": 6,
}


def test_a_sequential_tie_plays_a_pair_at_a_time_until_the_test_decides(tmp_path: Path) -> None:
    """The better bot wins every series: each tie's test decides for it after a few pairs,
    each pair scheduled only once the one before is recorded."""
    arena, store, config = event(tmp_path, 4, format="knockout", **SEQUENTIAL)
    executor = Stronger(4)
    run(arena, store, config, executor)
    state = event_state(store, "e")
    assert state.finished
    semis = state.results[0]
    assert [result.decided_for for result in semis] == ["b0@1", "b1@1"]
    pairs = [result.series // 2 for result in semis]
    assert pairs[0] == 4  # LLR 2.30 after four pairs won 2-0, over its bound 2.20
    assert pairs[0] == pairs[1]
    assert len(store.matches("e")) == sum(r.series for rs in state.results for r in rs)
    spans = {span.match_id: span for span in executor.spans}
    legs = sorted(m.match_id for m in store.matches("e") if m.pairing == "b0@1|b3@1")
    for pair in range(1, pairs[0]):
        before = max(spans[m].ended for m in legs[2 * pair - 2 : 2 * pair])
        assert min(spans[m].started for m in legs[2 * pair : 2 * pair + 2]) >= before
    assert check_rounds(store, "e") == []


def test_an_undecided_sequential_tie_stops_at_its_cap(tmp_path: Path) -> None:
    """Seat 0 wins every series: every pair is level, the test never decides, each tie plays
    its six pairs and goes to the better seed (level margins)."""
    arena, store, config = event(tmp_path, 4, format="knockout", **SEQUENTIAL)
    run(arena, store, config, FakeExecutor(2))
    state = event_state(store, "e")
    assert [r.series for r in state.results[0]] == [12, 12]
    assert [r.decided_for for r in state.results[0]] == [None, None]
    assert state.rounds[1].ties == (Tie("b0@1", "b1@1"),)
    assert check_rounds(store, "e") == []


def test_a_swiss_s_sequential_ties_score_the_test_s_verdict_or_the_series(
    tmp_path: Path,
) -> None:
    """A Swiss with [sprt]: a tie the test decides is a win for the bot it chose, after four
    pairs; one left level at its cap (seat 0 wins every series: every pair level) is a draw,
    after its six pairs. Both verify."""
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2, **SEQUENTIAL)
    run(arena, store, config, Stronger(2))
    state = event_state(store, "e")
    assert state.finished
    first = state.results[0]
    assert [(r.decided_for, r.series, r.match_points()) for r in first] == [
        ("b0@1", 8, (1.0, 0.0)),
        ("b2@1", 8, (1.0, 0.0)),
    ]
    assert check_rounds(store, "e") == []
    arena, store, config = event(tmp_path / "level", 4, format="swiss", rounds=2, **SEQUENTIAL)
    run(arena, store, config, FakeExecutor(2))
    state = event_state(store, "e")
    level = state.results[0]
    assert [(r.decided_for, r.series, r.match_points()) for r in level] == [
        (None, 12, (0.5, 0.5)),
        (None, 12, (0.5, 0.5)),
    ]
    assert [tie["winner"] for tie in state.to_dict()["rounds"][0]["ties"]] == [None, None]
    assert check_rounds(store, "e") == []


def test_a_sequential_tie_resumes_where_it_stopped(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 4, format="knockout", **SEQUENTIAL)
    with pytest.raises(ExecutorError):
        run(arena, store, config, Stronger(2, lost_after=5))
    first = stored(store)
    assert len(first) == 1
    run(arena, store, config, Stronger(2))
    assert stored(store)[:1] == first
    assert event_state(store, "e").finished
    assert check_rounds(store, "e") == []
    assert store.counts("e") == {MatchState.DONE: len(store.matches("e"))}


def test_the_status_lines_say_each_tie(tmp_path: Path) -> None:
    """A Swiss's ties say who won; a knockout's who goes through; a round playing, what is
    pending. (The round after the first is paired by the run's last advance, not played.)"""
    arena, store, config = event(tmp_path, 5, format="swiss", rounds=2)
    assert round_lines(event_state(store, "e")) == ["swiss: no round paired yet (gin league run e)"]
    run(arena, store, config, Stronger(2), advance=lambda: advance(store, "e") and 0)
    lines = round_lines(event_state(store, "e"))
    assert lines[0] == (
        "round 1 of 2 (played): b0@1 v b1@1 2-0, b0@1 won; b2@1 v b3@1 2-0, b2@1 won; b4@1 bye"
    )
    assert lines[1].startswith("round 2 of 2 (playing): b0@1 v b2@1 (pending)")
    arena, store, config = event(tmp_path / "k", 3, format="knockout")
    run(arena, store, config, FakeExecutor(2))
    assert round_lines(event_state(store, "e"))[0] == (
        "round 1 (played): b0@1 bye; b1@1 v b2@1 1-1, b1@1 through"
    )


def test_a_bot_of_an_event_not_over_cannot_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its next rounds are not scheduled yet, so no pending match held it back: removed, the
    event stalled for good at its next round."""
    from typer.testing import CliRunner  # noqa: PLC0415 - only this test drives the CLI

    from tournaments.cli.app import app  # noqa: PLC0415

    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    refused = CliRunner().invoke(app, ["bot", "remove", "b3@1"])
    assert refused.exit_code == 2, refused.output
    assert "still has matches to play in league(s) e" in " ".join(refused.output.split())
    run(arena, store, config, Stronger(2))
    removed = CliRunner().invoke(app, ["bot", "remove", "b3@1"])  # the event is over
    assert removed.exit_code == 0, removed.output


@pytest.mark.parametrize("other", ["nope", "e"])
def test_seeding_from_a_league_there_is_not_is_refused(tmp_path: Path, other: str) -> None:
    with pytest.raises(LeagueError, match=f'seeding = "league:{other}" names no other league'):
        event(tmp_path, 4, format="swiss", rounds=1, seeding=f"league:{other}")


def test_the_event_table_writes_a_bound_as_the_standings_do(tmp_path: Path) -> None:
    """A bot that won every series has a bound, not an estimate: the event's table showed the
    fit's number where the standings below it said ``>= x (won all)``."""
    arena, store, config = event(tmp_path, 4, format="knockout")
    run(arena, store, config, Stronger(2))
    state = event_state(store, "e")
    lines = event_standings(state, {"b0@1": 265.0})
    grid = event_grid(state, lines, {"b0@1": ">= -23"})
    (winner,) = [row for row in grid.rows if row[1] == "b0@1"]
    assert winner[-1] == ">= -23"
    assert event_grid(state, lines).rows[0][-1] == "+265"


@pytest.mark.parametrize(
    "changes",
    [
        {"format": "swiss", "rounds": 3, "series_per_pairing": 20_000_000},
        {"format": "knockout", "sprt": {"elo0": -10.0, "elo1": 10.0}, "max_pairs": 100_000_000},
    ],
)
def test_an_event_past_the_leagues_size_limit_is_refused(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    """A league is refused past 250,000 matches; an event, scheduled a round at a time, was
    not (its first run would have built 40 million match rows in one transaction)."""
    with pytest.raises(LeagueError, match=r"could have .* matches; the limit is 250,000"):
        event(tmp_path, 4, **changes)


def _upset_swiss(tmp_path: Path) -> tuple[Arena, Store, LeagueConfig]:
    """Six bots seeded weakest first (the lower seed wins every tie), four rounds: pairing
    method 1 has to repeat a pairing in round 4, method 2 does not."""
    arena, store, _ = event(tmp_path, 6, format="swiss", rounds=4)
    weakest_first = [f"b{index}" for index in reversed(range(6))]
    data = {"name": "u", "seed": 1, "bots": weakest_first, "series_per_pairing": 2}
    config = LeagueConfig.from_dict({**data, "format": "swiss", "rounds": 4})
    create_league(store, config)
    return arena, store, config


def _pairings(rounds: list[StoredRound]) -> list[frozenset[str]]:
    return [frozenset(tie.bots()) for kept in rounds for tie in kept.ties]


def test_an_event_stored_by_method_1_verifies_and_resumes_as_method_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three rounds paired and played as the code before pairing versions stored them (method
    1, no ``method`` in the round's JSON): they verify, and the run goes on with method 1, its
    forced repeat included (method 2 would pair round 3 otherwise: a mismatch)."""
    arena, store, config = _upset_swiss(tmp_path)
    with monkeypatch.context() as patched:
        patched.setattr("tournaments.rounds.PAIRING_METHOD", 1)
        for _ in range(3):
            advance(store, "u")
            run(arena, store, config, Stronger(2), advance=lambda: 0)
    for number, kept in enumerate(stored(store, "u")):
        old = {"seeds": list(kept.seeds), "ties": [[t.first, t.second] for t in kept.ties]}
        store.db.execute(
            "UPDATE event_rounds SET pairing = ? WHERE league = 'u' AND round = ?",
            (json.dumps(old), number),
        )
    assert all("method" not in text for text in store.event_rounds("u"))
    assert [kept.method for kept in stored(store, "u")] == [1, 1, 1]
    assert check_rounds(store, "u") == []
    run(arena, store, config, Stronger(2))
    rounds = stored(store, "u")
    assert [kept.method for kept in rounds] == [1, 1, 1, 1]
    assert len(_pairings(rounds)) - len(set(_pairings(rounds))) == 1  # method 1's repeat
    assert event_state(store, "u").finished
    assert check_rounds(store, "u") == []


def test_a_new_event_is_paired_by_method_2_without_the_repeat(tmp_path: Path) -> None:
    arena, store, config = _upset_swiss(tmp_path)
    run(arena, store, config, Stronger(2))
    rounds = stored(store, "u")
    assert [kept.method for kept in rounds] == [2, 2, 2, 2]
    assert len(_pairings(rounds)) == len(set(_pairings(rounds))) == 12
    assert check_rounds(store, "u") == []


def test_a_round_of_another_method_or_an_unknown_one_is_damage(tmp_path: Path) -> None:
    arena, store, config = event(tmp_path, 4, format="swiss", rounds=2)
    run(arena, store, config, Stronger(2))
    second = stored(store)[1]
    for method, said in ((1, "its method is not round 1's"), (7, "no pairing method 7")):
        other = dataclasses.replace(second, method=method)
        store.db.execute("UPDATE event_rounds SET pairing = ? WHERE round = 1", (other.to_json(),))
        with pytest.raises(StoreDamaged, match=said):
            event_state(store, "e")


def test_the_rounds_and_the_bracket_as_report_tables(tmp_path: Path) -> None:
    """A Swiss's rounds, a row per tie; a knockout's bracket, a column per round, each tie
    level with the first-round ties it follows from."""
    arena, store, config = event(tmp_path, 5, format="swiss", rounds=2)
    run(arena, store, config, Stronger(2))
    grid = rounds_grid(event_state(store, "e"))
    assert grid.title == "Rounds: e (2 of 2 paired)"
    assert grid.rows[:3] == (
        ("1", "b0@1", "b1@1", "2-0", "b0@1 won"),
        ("1", "b2@1", "b3@1", "2-0", "b2@1 won"),
        ("1", "b4@1", "(bye)", "", "bye: 1 point"),
    )
    assert len(grid.rows) == 6
    arena, store, config = event(tmp_path / "k", 5, format="knockout")
    run(arena, store, config, Stronger(2))
    bracket = bracket_grid(event_state(store, "e"))
    assert [heading for heading, _ in bracket.columns] == ["quarter-final", "semi-final", "final"]
    assert bracket.rows == (
        ("b0@1 bye", "b0@1 v b3@1 2-0, b0@1 through", "b0@1 v b1@1 2-0, b0@1 through"),
        ("b3@1 v b4@1 2-0, b3@1 through", "", ""),
        ("b1@1 bye", "b1@1 v b2@1 2-0, b1@1 through", ""),
        ("b2@1 bye", "", ""),
    )


@pytest.mark.parametrize(
    ("shape", "title", "said"),
    [
        ("swiss", "Rounds: e", "b0@1 won"),
        ("knockout", "Bracket: e", "b0@1 v b1@1 2-0, b0@1 through"),
    ],
)
def test_the_standings_reports_show_the_rounds_or_the_bracket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, title: str, said: str
) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415 - only these tests drive the CLI

    from tournaments.cli.app import app  # noqa: PLC0415

    changes: dict[str, Any] = {"format": shape} | ({"rounds": 2} if shape == "swiss" else {})
    arena, store, config = event(tmp_path, 4, **changes)
    run(arena, store, config, Stronger(2))
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    for output in ("markdown", "html"):
        shown = CliRunner().invoke(app, ["league", "standings", "e", "--format", output])
        assert shown.exit_code == 0, shown.output
        assert title in shown.output
        assert said in shown.output
    table = CliRunner().invoke(app, ["league", "standings", "e"])
    assert title not in table.output  # the terminal's table: gin league status has the rounds
