"""Duplicate legs cannot talk: the two legs of a pair never run at once, and nothing a bot
leaves in one series is there in its next.

The scheduling tests drive the real runner with a fake executor on trio's mock clock (instant);
the last test plays real sandboxed series back to back.
"""

from __future__ import annotations

import itertools
import secrets
import zlib
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol.manifest import load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.sandbox import Layer, Sandbox
from tests.hostile_bots import hostile_folder
from tournaments.executors import ExecutorError
from tournaments.executors.fake import FakeExecutor
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner, duplicate_pair
from tournaments.store import MatchState, Store

GREEDY = Path(__file__).resolve().parent.parent / "sample_bots" / "greedy"
FAST = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=8000)


def duplicate_league(tmp_path: Path) -> tuple[Arena, Store, LeagueConfig]:
    """Five registered bots (never run), ten pairings of four series: twenty duplicate pairs."""
    arena = Arena(tmp_path / "home")
    store = arena.open_store()
    modes = ("none", "crash", "hang", "slow", "spin")
    folders = [hostile_folder(tmp_path, mode) for mode in modes]
    idents = [trio.run(submit, arena, store, folder, None).ident for folder in folders]
    config = LeagueConfig.from_dict(
        {"name": "dup", "seed": 1, "bots": idents, "series_per_pairing": 4, "duplicate": True}
    )
    create_league(store, config)
    return arena, store, config


def fake_for(**options: Any) -> FakeExecutor:
    """Plays each job for a few (mock) seconds, four at once."""
    return FakeExecutor(4, seconds=lambda job: 1 + zlib.crc32(job.match_id.encode()) % 7, **options)


def overlaps(store: Store, executor: FakeExecutor) -> list[tuple[str, str]]:
    """The legs of one duplicate pair that ran at the same time."""
    pairs = {m.match_id: duplicate_pair(m) for m in store.matches("dup")}
    return [
        (one.match_id, other.match_id)
        for one, other in itertools.combinations(executor.spans, 2)
        if pairs[one.match_id] == pairs[other.match_id] and one.overlaps(other)
    ]


def run(arena: Arena, store: Store, config: LeagueConfig, executor: FakeExecutor) -> None:
    runner = LeagueRunner(arena, store, config, executor.slots, executor=executor)
    trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize("sittings", [False, True])
def test_the_legs_of_a_pair_never_run_at_once_and_the_slots_stay_busy(
    tmp_path: Path, sittings: bool
) -> None:
    arena, store, config = duplicate_league(tmp_path)
    executor = fake_for(sittings=sittings)
    run(arena, store, config, executor)
    assert overlaps(store, executor) == []
    assert executor.peak == 4
    pairs = {m.match_id: duplicate_pair(m) for m in store.matches("dup")}
    by_sitting: dict[str, list[str]] = {}
    for job in executor.jobs:
        if job.sitting:
            by_sitting.setdefault(job.sitting, []).append(pairs[job.match_id])
    assert all(len(legs) == len(set(legs)) for legs in by_sitting.values())
    assert bool(by_sitting) == sittings
    assert store.counts("dup") == {"done": 40}
    assert len({duplicate_pair(m) for m in store.matches("dup")}) == 20


@pytest.mark.parametrize("sittings", [False, True])
def test_a_resumed_league_keeps_the_legs_apart(tmp_path: Path, sittings: bool) -> None:
    arena, store, config = duplicate_league(tmp_path)
    first = fake_for(lost_after=9, sittings=sittings)
    with pytest.raises(ExecutorError):
        run(arena, store, config, first)
    done = store.counts("dup").get(MatchState.DONE, 0)
    assert 0 < done < 40
    for match in store.matches("dup", MatchState.PENDING)[:3]:
        assert store.claim(match.match_id)  # as a runner killed outright leaves them
    second = fake_for(sittings=sittings)
    run(arena, store, config, second)
    assert overlaps(store, first) == overlaps(store, second) == []
    assert len(second.jobs) == 40 - done
    assert store.counts("dup") == {"done": 40}


# --- nothing survives a series -------------------------------------------------------------------


def probes(text: str) -> dict[str, str]:
    """``PROBE name VERDICT ...`` lines of a bot's stderr: name -> verdict."""
    lines = [line.split() for line in text.splitlines() if line.startswith("PROBE ")]
    return {words[1]: words[2] for words in lines if len(words) > 2}


def series_of(sandbox: Sandbox, folder: Path, tmp_path: Path, index: int) -> dict[str, str]:
    """Play one series of the bot in ``folder`` (seat 0) against greedy; its probes."""
    bot = remote_seat(load_manifest(folder), sandbox.prepare, f"leftover-{index}-0")
    greedy = remote_seat(load_manifest(GREEDY), sandbox.prepare, f"leftover-{index}-1")
    config = MatchConfig(
        f"leftover-{index}", 11 + index, time_control=FAST, fault_policy=FaultPolicy(strikes=3)
    )
    result = trio.run(play_folders, (bot, greedy), config, tmp_path / f"{index}.jsonl")
    assert result.faults == ()
    assert bot.stderr is not None
    return probes(bot.stderr.text())


@pytest.mark.slow
def test_nothing_a_bot_leaves_is_there_in_its_next_series(sandbox: Sandbox, tmp_path: Path) -> None:
    missing = [s.detail for s in sandbox.layers if s.layer is Layer.BWRAP and not s.active]
    if missing:
        pytest.skip(f"sandbox layer BWRAP unavailable: {missing[0]}")
    folder = hostile_folder(tmp_path, "leftover", f"gin-leftover-{secrets.token_hex(4)}")
    places = ("tmp", "shm", "code", "run", "home")
    first = series_of(sandbox, folder, tmp_path, 0)
    assert [first[f"leftover_{place}"] for place in places] == ["BLOCKED"] * 5
    # Where a bot may write, it did (so the next series could have found it); not in its code
    # or run folder, which are read-only.
    assert {place: first[f"leave_{place}"] for place in places} == {
        "tmp": "ALLOWED",
        "shm": "ALLOWED",
        "code": "BLOCKED",
        "run": "BLOCKED",
        "home": "ALLOWED",
    }
    second = series_of(sandbox, folder, tmp_path, 1)
    assert {place: second[f"leftover_{place}"] for place in places} == dict.fromkeys(
        places, "BLOCKED"
    )
