"""The referee keeps its secrets: a bot that surveys everything it can reach finds no value
derived from the seed of a deal, and cannot rebuild a deal from a seed it knows.

The survey bot (``tests/hostile/hostile.py``, mode ``survey``) plays a real sandboxed series and
reports its environment, argv, mounts, visible processes, folders and every Welcome and
HandStarted message; it also tries every public formula on a seed it is told (as a bot author
would know the README's example seed or a league file's) against the cards it is dealt and the
commitments it is shown. A control run with public deals shows that the probe does find a deal
when one can be found.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.manifest import load_manifest
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.matchlog import hand_salt, read_records
from referee.rules import shuffled_deck
from referee.sandbox import Sandbox, SandboxLimits
from tests.hostile_bots import hostile_folder
from tests.test_hostile import FAST, GREEDY, warm_up
from tournaments.league import play_match_id, play_seed
from tournaments.store import Store

USER_SEED = 918273645546372819
"""The seed a user gives (``gin play --seed``): long, so that a substring search means something."""


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    box = Sandbox(SandboxLimits(memory_mb=256, pids=48), root_dir=tmp_path_factory.mktemp("jails"))
    warm_up(box)
    yield box
    box.close()


def survey(sandbox: Sandbox, tmp_path: Path, seed: int) -> tuple[dict[str, Any], str, Path]:
    """Play the survey bot against greedy as ``gin play`` sets a match up; its survey, its
    stderr and the log."""
    match_id = play_match_id()
    folder = hostile_folder(tmp_path, "survey", str(USER_SEED))
    seats = (
        remote_seat(load_manifest(folder), sandbox.prepare, f"{match_id}-0"),
        remote_seat(load_manifest(GREEDY), sandbox.prepare, f"{match_id}-1"),
    )
    config = MatchConfig(match_id, seed, time_control=FAST)
    log = tmp_path / f"{match_id}.jsonl"
    result = trio.run(play_folders, seats, config, log)
    assert result.faults == ()
    assert seats[0].stderr is not None
    stderr = seats[0].stderr.text()
    packed = re.findall(r"^SURVEY (\S+)$", stderr, re.MULTILINE)
    assert packed, stderr
    found: dict[str, Any] = json.loads(zlib.decompress(base64.b64decode(packed[-1])))
    assert found["messages"], "the survey saw no Welcome or HandStarted"
    return found, stderr, log


def secrets_of(log: Path) -> set[str]:
    """Every seed-derived value of a match, in the forms a leak would take."""
    records = read_records(log)
    result = records[-1]
    seed, salt = result["seed"], bytes.fromhex(result["salt"])
    values = {str(seed), f"{seed:x}", seed.to_bytes(8, "big").hex(), salt.hex(), str(USER_SEED)}
    for record in records:
        if record["type"] == "hand_start":
            deck = shuffled_deck(seed, record["hand"])
            values.add(hashlib.sha256(bytes(deck)).hexdigest())  # the unsalted commitment
            values.add(hand_salt(salt, record["hand"]).hex())
    return values


def test_a_bot_sees_nothing_derived_from_the_seed(sandbox: Sandbox, tmp_path: Path) -> None:
    store = Store(tmp_path / "home" / "arena.sqlite")
    found, stderr, log = survey(sandbox, tmp_path, play_seed(store.secret("home"), USER_SEED))
    text = json.dumps(found)
    leaked = sorted(value for value in secrets_of(log) - {str(USER_SEED)} if value in text)
    assert leaked == [], f"seed-derived values a bot could see: {leaked}"
    assert "PROBE rebuild_deck BLOCKED" in stderr
    # The match id and the jail paths carry no seed; the store and its secret are out of reach.
    assert str(USER_SEED) not in found["messages"][0].replace(f"hostile@{USER_SEED}", "")
    assert str(tmp_path / "home") not in found["mountinfo"]


def test_the_probe_rebuilds_public_deals(sandbox: Sandbox, tmp_path: Path) -> None:
    # The control: with deals from the user's seed alone (--public-deals), the same survey does
    # rebuild the deck. So the test above would fail if the seed reached the deals unkeyed.
    _, stderr, _ = survey(sandbox, tmp_path, USER_SEED)
    assert "PROBE rebuild_deck ALLOWED seed" in stderr
