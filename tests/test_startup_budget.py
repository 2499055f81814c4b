"""The start-up budget is the bot's own: making its jail (the copy of its folder, through its
``.ginignore``) does not count against it (``Seat.prepare`` runs before ``Match._connect``'s
``trio.fail_after``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import trio

from protocol.manifest import load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.remote import JailFactory
from referee.sandbox import BotJail, Sandbox

GREEDY = Path(__file__).resolve().parent.parent / "sample_bots" / "greedy"
BUDGET = TimeControl(move_time_ms=400, grace_ms=100, time_bank_ms=0, startup_ms=3000)
SLOW_JAIL_S = 3.5
"""A jail that takes longer to make than the whole start-up budget (a big folder, say)."""


def slow_jails(sandbox: Sandbox) -> JailFactory:
    def prepare(label: str, code_dir: Path) -> BotJail:
        time.sleep(SLOW_JAIL_S)
        return sandbox.prepare(label, code_dir)

    return prepare


@pytest.mark.slow
def test_a_slow_jail_does_not_eat_the_bots_start_up_budget(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    slow = remote_seat(load_manifest(GREEDY), slow_jails(sandbox), "slow-jail-0")
    other = remote_seat(load_manifest(GREEDY), sandbox.prepare, "slow-jail-1")
    config = MatchConfig("slow-jail", 3, time_control=BUDGET, fault_policy=FaultPolicy())
    result = trio.run(play_folders, (slow, other), config, tmp_path / "slow-jail.jsonl")
    assert result.faults == (), result.faults
