"""Reproducible bots: each seat gets a seed of its own in the Welcome (``bot_seed``), derived from
the league's secret apart from the deal, so a league run again with the same secret replays every
hand; the match job carries the seeds, the log's header keeps them, the SDK seeds ``Bot.rng``.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import params_to_pb
from protocol.manifest import load_manifest
from protocol.sdk import Bot, Session
from referee.control import FaultPolicy, TimeControl
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.replay import LogReadError, VerifyStatus, read_log, verify_log
from referee.rules import Action, Observation, RuleParams, greedy_policy
from referee.sandbox import Sandbox, SandboxLimits
from referee.seats import InProcessSeat
from sample_bots.random.bot import RandomBot
from tournaments.cli.app import app
from tournaments.executors.fake import FakeExecutor
from tournaments.formats.records import MatchJob
from tournaments.formats.seeds import bot_seeds, play_bot_seeds
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner
from tournaments.store import BotRow, Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"
SEEDS = (2**63 - 5, 12345)
FAST = TimeControl(move_time_ms=400, grace_ms=200, time_bank_ms=2000)
SHORT = RuleParams(hand_cap=2, turn_cap=30)
"""Two short hands: enough for a Welcome and a few random choices."""
SEED_BOT = '''\
import sys

from protocol.sdk import Bot


class SeedBot(Bot):
    """Says on stderr the seed its Welcome gave, and plays at random from the SDK's rng."""

    def on_series_start(self, info):
        print(f"bot_seed={info.bot_seed} seed={self.seed}", file=sys.stderr, flush=True)

    def decide(self, view, legal):
        return legal[self.rng.randrange(len(legal))]


if __name__ == "__main__":
    sys.exit(SeedBot().run())
'''


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- the protocol: the Welcome carries each seat's seed ----------------------------------------


@pytest.mark.slow
def test_each_seat_gets_its_own_seed_in_the_welcome(sandbox: Sandbox, tmp_path: Path) -> None:
    folder = tmp_path / "seedy"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "seedy"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
    )
    (folder / "bot.py").write_text(SEED_BOT)
    for seeds, label in ((SEEDS, "given"), (None, "none")):
        log = tmp_path / f"{label}.jsonl"
        seats = (
            remote_seat(load_manifest(folder), sandbox.prepare, f"seedy-{label}-0"),
            remote_seat(load_manifest(folder), sandbox.prepare, f"seedy-{label}-1"),
        )
        config = MatchConfig(label, 7, SHORT, FAST, bot_seeds=seeds)
        result = trio.run(play_folders, seats, config, log)
        assert result.faults == (), result.faults
        said = [log.with_name(f"{log.name}.seat{seat}.stderr").read_text() for seat in (0, 1)]
        for seat, seed in enumerate(seeds or (0, 0)):  # 0: none given
            assert f"bot_seed={seed} seed={seed}" in said[seat], said[seat]
        header = read_log(log).header
        assert header.bot_seeds == seeds
        assert ("bot_seeds" in lines(log)[0]) is (seeds is not None)
        assert verify_log(log).status is VerifyStatus.VERIFIED


def fake_league(home: Path, **changes: Any) -> tuple[Store, dict[str, MatchJob]]:
    """A league of three registered bots (never started) run on the scripted executor: its jobs,
    by match id."""
    arena = Arena(home)
    store = arena.open_store()
    for index, name in enumerate("abc"):
        store.add_bot(BotRow(name, "1", f"{index}" * 64, home / name, "", "", time.time()))
    data: dict[str, Any] = {"name": "s", "seed": 3, "public_deals": True, "bots": ["a", "b", "c"]}
    config = LeagueConfig.from_dict({**data, "series_per_pairing": 4, **changes})
    create_league(store, config)
    executor = FakeExecutor(2)
    runner = LeagueRunner(arena, store, config, 2, executor=executor)
    trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))
    return store, {job.match_id: job for job in executor.jobs}


def test_the_seeds_follow_the_secret_match_and_seat_and_never_the_deal(tmp_path: Path) -> None:
    store, jobs = fake_league(tmp_path / "one")
    _, again = fake_league(tmp_path / "two")  # public deals: the same secret in another home
    _, other = fake_league(tmp_path / "three", seed=4)  # another secret, the same match ids
    _, unpaired = fake_league(tmp_path / "four", duplicate=False)  # the same secret, other deals
    secret = store.league_secret("s")
    assert secret is not None
    assert len(jobs) == 12
    assert jobs.keys() == again.keys() == other.keys() == unpaired.keys()
    for match_id, job in jobs.items():
        assert job.bot_seeds == bot_seeds(secret, match_id) == again[match_id].bot_seeds
        assert job.bot_seeds[0] != job.bot_seeds[1]
        assert min(job.bot_seeds) > 0
        assert max(job.bot_seeds) < 2**63
        assert other[match_id].bot_seeds != job.bot_seeds
        assert unpaired[match_id].bot_seeds == job.bot_seeds  # whatever the deal
    every = [seed for job in jobs.values() for seed in job.bot_seeds]
    assert len(set(every)) == len(every), "a seed repeats between seats or matches"
    deals = {job.seed for job in jobs.values()}
    assert len(deals) == 6
    assert not deals & set(every)
    # The deal changes and the bots' seeds do not: the second series of a pairing deals anew
    # without duplicate, and plays the first one's deal again with it.
    changed = [match_id for match_id in jobs if jobs[match_id].seed != unpaired[match_id].seed]
    assert len(changed) == 3 * 3
    # Each leg of a duplicate pair deals the same and seeds its bots anew.
    pairs = [
        (jobs[match.match_id], jobs[match.duplicate_of])
        for match in store.matches("s")
        if match.duplicate_of is not None
    ]
    assert len(pairs) == 6
    assert all(a.seed == b.seed and a.bot_seeds != b.bot_seeds for a, b in pairs)
    # A deal seed is no key to them: the seeds made with it in place of the secret are others.
    for match_id, job in jobs.items():
        assert bot_seeds(job.seed.to_bytes(8, "big"), match_id) != job.bot_seeds


def in_process(config: MatchConfig, log: Path) -> tuple[InProcessSeat, InProcessSeat]:
    seats = (InProcessSeat(greedy_policy, "g0"), InProcessSeat(greedy_policy, "g1"))

    async def main() -> None:
        with MatchLog(log) as writer:
            await play_match(seats, config, writer)

    trio.run(main)
    return seats


def decks(log: Path) -> list[Any]:
    return [record["deck"] for record in lines(log) if record["type"] == "hand_end"]


def test_the_referee_keeps_the_deal_and_the_bots_seeds_apart(tmp_path: Path) -> None:
    base = in_process(MatchConfig("m", 5, bot_seeds=SEEDS), tmp_path / "base.jsonl")
    reseeded = in_process(MatchConfig("m", 5, bot_seeds=(1, 2)), tmp_path / "reseeded.jsonl")
    redealt = in_process(MatchConfig("m", 6, bot_seeds=SEEDS), tmp_path / "redealt.jsonl")
    assert [seat.seat_welcome.bot_seed for seat in base] == list(SEEDS)
    assert [seat.seat_welcome.bot_seed for seat in redealt] == list(SEEDS)  # a new deal
    assert [seat.seat_welcome.bot_seed for seat in reseeded] == [1, 2]
    assert decks(tmp_path / "base.jsonl") == decks(tmp_path / "reseeded.jsonl")  # the same deal
    assert decks(tmp_path / "base.jsonl") != decks(tmp_path / "redealt.jsonl")
    assert lines(tmp_path / "base.jsonl")[0]["bot_seeds"] == list(SEEDS)


# --- the job, the log and the SDK ---------------------------------------------------------------


def job(**changes: Any) -> MatchJob:
    fields: dict[str, Any] = {
        "match_id": "j",
        "seed": 9,
        "bots": ("/a", "/b"),
        "hashes": ("1" * 64, "2" * 64),
        "rules": RuleParams(),
        "time_control": TimeControl(),
        "fault_policy": FaultPolicy(),
        "log": "/l.jsonl",
        "limits": SandboxLimits(),
    }
    return MatchJob(**{**fields, **changes})


def test_a_job_carries_the_seeds_and_one_written_before_them_reads_as_none_given() -> None:
    seeded = job(bot_seeds=SEEDS)
    assert MatchJob.from_json(seeded.to_json()) == seeded
    old = json.loads(seeded.to_json())
    del old["bot_seeds"]
    assert MatchJob.from_json(json.dumps(old)).bot_seeds == (0, 0)
    for bad in ([1], [1, 2, 3], [-1, 2], [2**64, 1], "12"):
        with pytest.raises(ValueError, match="bot seeds"):
            MatchJob.from_json(json.dumps({**old, "bot_seeds": bad}))


def test_the_header_keeps_the_seeds_and_a_log_without_them_reads(tmp_path: Path) -> None:
    in_process(MatchConfig("h", 5, bot_seeds=SEEDS), tmp_path / "seeded.jsonl")
    in_process(MatchConfig("h", 5), tmp_path / "plain.jsonl")
    assert read_log(tmp_path / "seeded.jsonl").header.bot_seeds == SEEDS
    assert "bot_seeds" not in lines(tmp_path / "plain.jsonl")[0]
    assert read_log(tmp_path / "plain.jsonl").header.bot_seeds is None
    for path in (tmp_path / "seeded.jsonl", tmp_path / "plain.jsonl"):
        assert verify_log(path).status is VerifyStatus.VERIFIED
    records = lines(tmp_path / "seeded.jsonl")
    for bad in ([1], ["1", 2], [-1, 2], [2**64, 0], None):
        records[0]["bot_seeds"] = bad
        broken = tmp_path / "broken.jsonl"
        broken.write_text("".join(json.dumps(record) + "\n" for record in records))
        with pytest.raises(LogReadError, match="bot_seeds"):
            read_log(broken)


class Recorder(Bot):
    name, version = "recorder", "1"

    def decide(self, view: Observation, legal: Any) -> Action:
        return legal[0]  # type: ignore[no-any-return]


def welcome(seed: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        welcome=pb.Welcome(
            seat=1, protocol_version=1, rules=params_to_pb(RuleParams()), bot_seed=seed
        )
    )


def test_the_sdk_seeds_the_bots_generator_from_the_welcome() -> None:
    bot = Recorder()
    session = Session(bot, "token")
    session.handle(welcome(SEEDS[0]))
    assert session.info is not None
    assert session.info.bot_seed == SEEDS[0] == bot.seed
    assert bot.rng.random() == random.Random(SEEDS[0]).random()
    # No seed given (an older referee): the generator is left as it was.
    mine = Recorder()
    mine.seed_random(99)
    Session(mine, "token").handle(welcome(0))
    assert (mine.seed, mine.rng.random()) == (99, random.Random(99).random())
    # In process, the random sample bot's own seed decides.
    first, second = RandomBot(4), RandomBot(4)
    assert [first.rng.random() for _ in range(3)] == [second.rng.random() for _ in range(3)]


# --- a league, twice ------------------------------------------------------------------------------

TIMING = ("started_at", "match_id")
"""Fields of the wall clock (``gin play``'s match ids hold the time); and every ``ms`` or ``*_ms``
field: the decisions' times and limits."""
RANDOM_BY_DESIGN = ("salt", "commitment", "seed_commitment")
"""The commitments' salts, random for each match so that no guess of a deck can be tested against
them before it is revealed; the decks and seeds they commit to are compared."""


def comparable(value: Any) -> Any:
    """A record without its timing fields and salts."""
    if isinstance(value, dict):
        return {
            key: comparable(item)
            for key, item in value.items()
            if key not in TIMING + RANDOM_BY_DESIGN and key != "ms" and not key.endswith("_ms")
        }
    if isinstance(value, list):
        return [comparable(item) for item in value]
    return value


def run_league(home: Path) -> dict[str, list[dict[str, Any]]]:
    """random against greedy, two series in duplicate, public deals from seed 11: each log's
    records, by the log's file name."""
    arena = Arena(home)
    store = arena.open_store()
    idents = [
        trio.run(submit, arena, store, SAMPLES / name, None).ident for name in ("random", "greedy")
    ]
    config = LeagueConfig.from_dict(
        {"name": "twice", "seed": 11, "public_deals": True, "bots": idents, "series_per_pairing": 2}
    )
    create_league(store, config)
    progress = trio.run(LeagueRunner(arena, store, config, 2).run)
    assert (progress.done, progress.failed) == (2, 0)
    logs = [Path(result.log_path) for result in store.results("twice")]
    assert all(verify_log(log).status is VerifyStatus.VERIFIED for log in logs)
    return {log.name: lines(log) for log in logs}


@pytest.mark.slow
def test_a_league_run_again_with_the_same_secret_plays_every_hand_the_same(tmp_path: Path) -> None:
    first, second = run_league(tmp_path / "first"), run_league(tmp_path / "second")
    assert sorted(first) == sorted(second)
    assert len(first) == 2
    for name, records in first.items():
        again = second[name]
        assert records[0]["bot_seeds"] == again[0]["bot_seeds"]
        assert len(records) == len(again), f"{name}: {len(records)} records, then {len(again)}"
        for line, (one, other) in enumerate(zip(records, again, strict=True), start=1):
            assert comparable(one) == comparable(other), f"{name} line {line} differs"
    random_moves = [
        record
        for records in first.values()
        for record in records
        if record["type"] == "action" and record["by"] == "bot"
    ]
    assert len(random_moves) > 50  # the random bot chose, and chose the same each time


@pytest.mark.slow
def test_gin_play_with_a_seed_seeds_the_bots_alike_in_its_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def play(home: str, log: str, *options: str) -> list[int]:
        monkeypatch.setenv("GIN_HOME", str(tmp_path / home))
        argv = ["play", str(SAMPLES / "random"), str(SAMPLES / "greedy"), "--move-time", "0.4"]
        result = CliRunner().invoke(app, [*argv, "--log", str(tmp_path / log), *options])
        assert result.exit_code == 0, result.output
        seeds: list[int] = lines(tmp_path / log)[0]["bot_seeds"]
        return seeds

    seeded = play("home", "a.jsonl", "--seed", "5")
    chosen = [r for r in lines(tmp_path / "a.jsonl") if r["type"] == "action" and r["by"] == "bot"]
    assert len(chosen) > 50  # the bots really played (a series of forfeits would prove nothing)
    assert play("home", "b.jsonl", "--seed", "5") == seeded
    assert comparable(lines(tmp_path / "a.jsonl")[1:]) == comparable(
        lines(tmp_path / "b.jsonl")[1:]
    )
    assert play("elsewhere", "c.jsonl", "--seed", "5") != seeded  # keyed with the home's secret
    assert play("home", "d.jsonl") != seeded
    public = play_bot_seeds(5, None)
    assert play("elsewhere", "e.jsonl", "--seed", "5", "--public-deals") == list(public)
