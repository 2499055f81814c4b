"""The referee keeps its secrets: a bot that surveys everything it can reach finds no value
derived from the seed of a deal, and cannot rebuild a deal from a seed it knows.

The survey bot (``tests/hostile/hostile.py``, mode ``survey``) plays real sandboxed series, set up
the way users set them up: through ``gin play --seed`` and through a league run. It collects its
environment, argv, mounts, visible processes (command line, name, environment, status), the
files of its folders and every message it gets, and reports each token of them (kept in its
stderr beside the log). It also tries every public formula on the seed it is told (as a bot
author knows the README's example seed or a league file's) against the cards it is dealt and the
commitments it is shown. Control runs with public deals show that the probe does find a deal when
one can be found, so the other tests would fail if the seed reached the deals unkeyed.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zlib
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from referee.matchlog import hand_salt, stderr_path
from referee.replay import read_records
from referee.rules import dealt_deck
from tests.hostile_bots import hostile_folder
from tests.test_hostile import GREEDY
from tournaments.cli.app import app
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner

USER_SEED = 918273645546372819
"""The seed a user gives: long, so that a substring search means something."""


def survey_of(log: Path, seat: int) -> tuple[set[str], str]:
    """The tokens the survey bot saw, and its stderr (kept beside the log)."""
    stderr = stderr_path(log, seat).read_text()
    packed = re.findall(r"SURVEY (\S+)", stderr)
    assert packed, stderr[-2000:]
    tokens = set(zlib.decompress(base64.b64decode(packed[-1])).decode().split("\n"))
    assert any(len(token) == 64 for token in tokens)  # the (salted) deck commitments seen
    return tokens, stderr


def secrets_of(log: Path, home: Path) -> set[str]:
    """Every secret of a match and its home, in the forms a leak would take."""
    records = read_records(log)
    result = records[-1]
    seed, salt = result["seed"], bytes.fromhex(result["salt"])
    values = {str(seed), f"{seed:x}", seed.to_bytes(8, "big").hex(), salt.hex()}
    for record in records:
        if record["type"] == "hand_start":
            deck = dealt_deck(seed, record["hand"], record["dealer"])
            values.add(hashlib.sha256(bytes(deck)).hexdigest())  # the unsalted commitment
            values.add(hand_salt(salt, record["hand"]).hex())
    values.add(Arena(home).open_store().secret("home").hex())
    return values


def leaks(tokens: set[str], secrets: set[str]) -> list[str]:
    return sorted(secret for secret in secrets if any(secret in token for token in tokens))


def gin_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> Path:
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    folder = hostile_folder(tmp_path, "survey", str(USER_SEED))
    log = tmp_path / "play.jsonl"
    argv = ["play", str(folder), str(GREEDY), "--seed", str(USER_SEED), "--log", str(log), *flags]
    result = CliRunner().invoke(app, [*argv, "--move-time", "0.4"])
    assert result.exit_code == 0, result.output
    return log


@pytest.mark.slow
def test_gin_play_shows_a_bot_nothing_of_its_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = gin_play(tmp_path, monkeypatch)
    tokens, stderr = survey_of(log, 0)
    assert leaks(tokens, secrets_of(log, tmp_path / "home")) == []
    assert "PROBE rebuild_deck BLOCKED" in stderr
    assert str(USER_SEED) not in read_records(log)[0]["match_id"]


@pytest.mark.slow
def test_gin_play_with_public_deals_can_be_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, stderr = survey_of(gin_play(tmp_path, monkeypatch, "--public-deals"), 0)
    assert f"PROBE rebuild_deck ALLOWED seed {USER_SEED}" in stderr


def league_survey(tmp_path: Path, public: bool) -> tuple[Path, int, Path]:
    """One duplicate pair of the survey bot against greedy; the first leg's log and its seat."""
    home = tmp_path / "home"
    arena = Arena(home)
    store = arena.open_store()
    folder = hostile_folder(tmp_path, "survey", str(USER_SEED))
    idents = [trio.run(submit, arena, store, path, None).ident for path in (folder, GREEDY)]
    config = LeagueConfig.from_dict(
        {
            "name": "spring",
            "seed": USER_SEED,
            "bots": idents,
            "series_per_pairing": 2,
            "public_deals": public,
            "time_control": {"move_time_ms": 400, "grace_ms": 100, "time_bank_ms": 0},
        }
    )
    create_league(store, config)
    progress = trio.run(LeagueRunner(arena, store, config, 2).run)
    assert progress.failed == 0
    log = Path(store.results("spring")[0].log_path)
    seats = read_records(log)[0]["seats"]
    return log, [seat["name"] for seat in seats].index("hostile"), home


@pytest.mark.slow
@pytest.mark.parametrize("public", [False, True], ids=["keyed", "public-deals"])
def test_a_league_shows_a_bot_nothing_of_its_seed(tmp_path: Path, public: bool) -> None:
    log, seat, home = league_survey(tmp_path, public)
    tokens, stderr = survey_of(log, seat)
    if public:  # the control: the same probe rebuilds public deals
        assert "PROBE rebuild_deck ALLOWED seed" in stderr
        return
    assert leaks(tokens, secrets_of(log, home)) == []
    assert "PROBE rebuild_deck BLOCKED" in stderr
