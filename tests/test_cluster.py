"""Leagues on a real Dask cluster: a scheduler and two worker processes on 127.0.0.1.

As root, each cluster runs inside ``unshare -n`` (a network namespace holding only loopback), so
nothing of it can leave this machine; otherwise it binds 127.0.0.1 only. The cluster, the
coordinator (the real ``gin league run --executor dask``) and the worker kill are driven by
tests/cluster_scenario.py.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import trio

pytest.importorskip("distributed", reason="the dask extra is not installed: pip install '.[dask]'")

from referee.local import code_hash
from referee.matchlog import stderr_path
from referee.replay import verify_log
from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore
from tournaments.executors import cluster, cluster_task
from tournaments.executors.cluster_task import match_slug
from tournaments.executors.packing import BotCodeMismatchError, pack_bot, unpack_bot
from tournaments.executors.worker import WorkerLine
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, submit
from tournaments.runner import LeagueRunner
from tournaments.stats.standings import compute
from tournaments.store import MatchState

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"
TIMING = {"mean_ms", "worst_ms"}


# --- bots by value -------------------------------------------------------------------------------


def odd_bot(folder: Path) -> Path:
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "odd"\nversion = "1"\ncommand = ["./run.sh"]\n')
    (folder / "run.sh").write_text("#!/bin/sh\nexec python3 lib/bot.py\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "lib" / "bot.py").write_text("print('hi')\n")
    (folder / "link.py").symlink_to("lib/bot.py")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"not code")
    return folder


def test_a_bot_travels_by_value_and_arrives_identical(tmp_path: Path) -> None:
    bot = odd_bot(tmp_path / "bot")
    bundle = pack_bot(bot)
    assert pack_bot(bot) == bundle  # deterministic
    digest = code_hash(bot)
    placed = unpack_bot(bundle, digest, tmp_path / "cache")
    assert placed == tmp_path / "cache" / digest
    assert code_hash(placed) == digest
    assert os.access(placed / "run.sh", os.X_OK)
    assert (placed / "link.py").is_symlink()
    assert not (placed / "__pycache__").exists()
    assert unpack_bot(b"ignored: already in the cache", digest, tmp_path / "cache") == placed


def test_a_bot_that_does_not_hash_right_is_refused(tmp_path: Path) -> None:
    bot = odd_bot(tmp_path / "bot")
    digest = code_hash(bot)
    (bot / "lib" / "bot.py").write_text("print('tampered')\n")
    with pytest.raises(BotCodeMismatchError, match="registry says"):
        unpack_bot(pack_bot(bot), digest, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-made is left


def test_a_bundle_keeps_symlinks_but_places_nothing_through_them(tmp_path: Path) -> None:
    bot = odd_bot(tmp_path / "bot")
    (bot / "host").symlink_to("/etc/hostname")  # a bot may hold such a link, as locally
    placed = unpack_bot(pack_bot(bot), code_hash(bot), tmp_path / "cache")
    assert os.readlink(placed / "host") == "/etc/hostname"
    buffer = BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("lib")
        link.type, link.linkname = tarfile.SYMTYPE, str(tmp_path / "outside")
        tar.addfile(link)
        through = tarfile.TarInfo("lib/planted.txt")
        through.size = 2
        tar.addfile(through, BytesIO(b"hi"))
    (tmp_path / "outside").mkdir()
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack_bot(buffer.getvalue(), "1" * 64, tmp_path / "cache")
    assert not (tmp_path / "outside" / "planted.txt").exists()


def test_a_match_refuses_a_bot_whose_code_changed(tmp_path: Path) -> None:
    """The match process hashes each bot's folder again (a cached bot on a worker, or a registry
    copy), and refuses to play code that is not what was registered."""
    home = tmp_path / "home"
    config = league(home, "guard", [SAMPLES / "greedy", SAMPLES / "random"], series=2, seed=1)
    arena, store = Arena(home), ArenaStore(home / "arena.sqlite")
    runner = LeagueRunner(arena, store, config, 1)
    job = runner._job(store.matches("guard")[0], tmp_path / "log.jsonl")
    job = dataclasses.replace(job, hashes=(job.hashes[0], "0" * 64), parent=os.getpid())
    worker = subprocess.run(
        [sys.executable, "-m", "tournaments.executors.worker"],
        input=job.to_json(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert worker.returncode == 0  # a warm worker goes on to its next job
    line = WorkerLine.from_json(worker.stdout.strip().splitlines()[-1])
    assert line.match_id == job.match_id
    assert "not to its registered 000000000000: refusing to play it" in (line.failure or "")
    assert not (tmp_path / "log.jsonl").exists()


def test_a_bundle_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    buffer = BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        tar.addfile(info, BytesIO(b"hi"))
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack_bot(buffer.getvalue(), "0" * 64, tmp_path / "cache")
    assert not (tmp_path / "escaped.txt").exists()


# --- a real cluster -------------------------------------------------------------------------------


@functools.cache
def in_fresh_netns() -> bool:
    """Whether the cluster can run in a network namespace of its own (root, and a kernel and
    container that allow it); otherwise it binds 127.0.0.1 only."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--net", "--", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def league(
    home: Path, name: str, folders: list[Path], series: int, seed: int, *, public: bool = False
) -> LeagueConfig:
    """A league in ``home``; ``public``: its deals from ``seed`` alone, the same in any home."""
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    idents = [trio.run(submit, arena, store, folder, None).ident for folder in folders]
    config = LeagueConfig.from_dict(
        {
            "name": name,
            "seed": seed,
            "bots": idents,
            "series_per_pairing": series,
            "public_deals": public,
        }
    )
    create_league(store, config)
    return config


def run_scenario(tmp_path: Path, home: Path, name: str, *flags: str) -> dict[str, Any]:
    """Run tests/cluster_scenario.py (in a fresh network namespace when root); its report."""
    out = tmp_path / "scenario" / "report.json"
    out.parent.mkdir()
    argv = [sys.executable, "-m", "tests.cluster_scenario", str(out), "--home", str(home)]
    argv += ["--league", name, *flags]
    if in_fresh_netns():
        argv = ["unshare", "--net", "--", *argv, "--netns"]
    env = {**os.environ, "GIN_CLUSTER_DIR": str(tmp_path / "cluster-dir")}
    finished = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.read_text())
    if in_fresh_netns():
        assert report["interfaces"] == ["lo"]  # the cluster could reach nothing but loopback
    return report


def per_match(store: ArenaStore, name: str) -> dict[str, tuple[Any, ...]]:
    return {
        r.match_id: (r.summary.winner, r.summary.totals, r.summary.game_winners, r.summary.hands)
        for r in store.results(name)
    }


def table(store: ArenaStore, name: str) -> list[dict[str, Any]]:
    rows = compute(name, store.results(name)).to_dict()["bots"]
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


@pytest.mark.slow
def test_a_dask_league_gives_the_local_runners_results(tmp_path: Path) -> None:
    """Same league, same deals (public: two homes key a seed differently): every match and the
    standings come out the same."""
    bots = [SAMPLES / "greedy", SAMPLES / "strong"]  # both play deterministically
    local_home, dask_home = tmp_path / "local", tmp_path / "dask"
    config = league(local_home, "same", bots, series=4, seed=77, public=True)
    league(dask_home, "same", bots, series=4, seed=77, public=True)
    local_store = ArenaStore(Arena(local_home).store_path)
    trio.run(LeagueRunner(Arena(local_home), local_store, config, 2).run)
    report = run_scenario(tmp_path, dask_home, "same")
    assert report["code"] == 0, report["output"]
    dask_store = ArenaStore(dask_home / "arena.sqlite")
    assert dask_store.counts("same") == {"done": 4}
    assert per_match(dask_store, "same") == per_match(local_store, "same")
    assert table(dask_store, "same") == table(local_store, "same")
    for result in dask_store.results("same"):  # each bot's stderr came back beside its log
        assert all(stderr_path(Path(result.log_path), seat).is_file() for seat in (0, 1))
    workers = {r.summary.executed_on for r in dask_store.results("same")}
    assert workers <= {*report["left_playing"]}
    for result in dask_store.results("same"):
        assert Path(result.log_path).parent == Arena(dask_home).logs_dir("same")
        assert verify_log(Path(result.log_path)).ok
    assert report["left_playing"] == {address: [] for address in report["left_playing"]}
    assert sum(report["processes_started"].values()) <= 2  # warm: one per worker, not per match


@pytest.mark.slow
def test_the_arena_plays_its_ladder_on_a_dask_cluster(tmp_path: Path) -> None:
    """gin arena serve --executor dask: the ladder's pairs are played on the cluster's workers,
    recorded by the server, and a clean stop leaves nothing running there."""
    home = tmp_path / "home"
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    for name in ("greedy", "random"):
        row = trio.run(submit, arena, store, SAMPLES / name, None)
        store.enter(row.ident, row.name)
    report = run_scenario(tmp_path, home, LADDER, "--arena", "6")
    assert report["code"] == 0, report["output"]
    assert "the arena stopped" in report["output"]
    results = store.results(LADDER)
    assert len(results) >= 6
    assert {r.summary.executed_on for r in results} <= {*report["left_playing"]}
    assert None not in {r.summary.executed_on for r in results}  # played on the workers
    assert MatchState.RUNNING not in store.counts(LADDER)
    for result in results:
        assert verify_log(Path(result.log_path)).ok
    assert report["left_playing"] == {address: [] for address in report["left_playing"]}


@pytest.mark.slow
def test_a_killed_worker_and_ctrl_c_lose_nothing_and_count_nothing_twice(tmp_path: Path) -> None:
    """A worker SIGKILLed mid-match: the match is played again elsewhere, the dead worker's
    match folder is swept when its nanny restarts it. Then Ctrl-C: the cluster's matches stop
    and the league resumes. Then a coordinator killed outright: its matches stop too, and the
    league resumes again. In the end every match has exactly one result."""
    home = tmp_path / "home"
    league(home, "rough", [SAMPLES / "greedy", SAMPLES / "random"], series=10, seed=5)
    planted = tmp_path / "cluster-dir" / "matches" / "killed-long-ago"
    planted.mkdir(parents=True)
    (planted / "owner.lock").touch()  # nobody holds it: a leftover of a killed match
    flags = ["--kill-worker", "--interrupt", "--kill-coordinator", "--plant", str(planted)]
    report = run_scenario(tmp_path, home, "rough", *flags)
    killed = report["killed"]
    assert killed["folder_at_kill"]
    # The SIGKILLed worker could not remove its match folder; its restarted self swept it.
    restarted = [
        a for a, kinds in report["swept"].items() if killed["match_folder"] in kinds["matches"]
    ]
    assert len(restarted) == 1, report["swept"]
    assert restarted[0] != killed["address"]  # a new worker process, at a new address
    assert not report["plant_left"]
    interrupt = report["interrupt"]
    assert interrupt["code"] == 130, interrupt["output"]
    assert "Resume with: gin league run rough --executor dask --scheduler" in interrupt["output"]
    assert interrupt["left_playing"] == {a: [] for a in interrupt["left_playing"]}
    # A coordinator killed outright: its matches on the cluster stop (nobody wants them).
    assert report["orphan_matches_stopped_s"] < 20
    assert report["code"] == 0, report["output"]
    store = ArenaStore(home / "arena.sqlite")
    results = store.results("rough")
    assert store.counts("rough") == {"done": 10}
    assert sorted(r.match_id for r in results) == sorted(m.match_id for m in store.matches("rough"))
    killed_match = killed["match_folder"].rsplit("-", 1)[0]
    (replayed,) = [r for r in results if match_slug(r.match_id) == killed_match]
    assert replayed.summary.executed_on != killed["address"]  # played again, elsewhere
    assert report["jails_left"] == []  # every bot of every stopped match was torn down
    assert all(verify_log(Path(r.log_path)).ok for r in results)
    assert report["left_playing"] == {a: [] for a in report["left_playing"]}
    assert list((tmp_path / "cluster-dir" / "matches").iterdir()) == []


@pytest.mark.slow
def test_a_lost_scheduler_stops_the_league_resumably(tmp_path: Path) -> None:
    home = tmp_path / "home"
    league(home, "lost", [SAMPLES / "greedy", SAMPLES / "random"], series=6, seed=8)
    report = run_scenario(tmp_path, home, "lost", "--kill-scheduler")
    assert report["code"] == 1, report["output"]
    assert "error: the cluster dropped match lost~" in report["output"]
    assert "still up?" in report["output"]
    assert "Resume with: gin league run lost --executor dask --scheduler" in report["output"]
    assert "Traceback" not in report["output"]
    counts = ArenaStore(home / "arena.sqlite").counts("lost")
    assert set(counts) <= {"done", "pending"}, counts  # nothing failed, nothing left running
    assert counts[MatchState.DONE] >= 1
    assert sum(counts.values()) == 6


@pytest.mark.slow
def test_the_cli_says_plainly_what_a_dask_run_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415 - only this test drives the CLI

    from tournaments.cli.app import app  # noqa: PLC0415

    home = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2.0)
    league(home, "cli", [SAMPLES / "greedy", SAMPLES / "random"], series=2, seed=1)
    runner = CliRunner()
    no_scheduler = runner.invoke(app, ["league", "run", "cli", "--executor", "dask"])
    assert no_scheduler.exit_code == 2  # a usage error
    assert "--executor dask needs --scheduler tcp://HOST:PORT" in no_scheduler.output
    stray = runner.invoke(app, ["league", "run", "cli", "--scheduler", "tcp://127.0.0.1:9"])
    assert stray.exit_code == 2
    assert "--scheduler goes with --executor dask" in stray.output
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    unreachable = runner.invoke(
        app,
        ["league", "run", "cli", "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"],
    )
    assert unreachable.exit_code == 1
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in unreachable.output
    assert ArenaStore(home / "arena.sqlite").counts("cli") == {"pending": 2}  # nothing was touched


class FakeClient:
    """Just what the coordinator's worker checks call."""

    def __init__(self, probes: dict[str, dict[str, Any]]) -> None:
        self.probes = probes

    def wait_for_workers(self, count: int, timeout: float) -> None:
        assert count == 1
        assert timeout > 0

    def run(self, function: Any) -> dict[str, dict[str, Any]]:
        assert function is cluster_task.worker_probe
        return self.probes


def test_workers_running_other_code_or_missing_layers_are_named() -> None:
    good = cluster_task.worker_probe()
    other = {**good, "code": "f" * 64}
    with pytest.raises(cluster.ClusterError, match="tcp://b:1 run other arena code"):
        cluster._probe(FakeClient({"tcp://a:1": good, "tcp://b:1": other}), "x", False)  # type: ignore[arg-type]
    weak = {**good, "setpriv": False, "missing": ["layer BWRAP unavailable: no bwrap"]}
    report = cluster._probe(FakeClient({"tcp://a:1": weak}), "x", False)  # type: ignore[arg-type]
    assert report.warnings == [
        "tcp://a:1: no setpriv: matches may outlive a killed worker",
        "tcp://a:1: layer BWRAP unavailable: no bwrap",
    ]
    with pytest.raises(cluster.ClusterError, match="strict sandbox"):
        cluster._probe(FakeClient({"tcp://a:1": weak}), "x", True)  # type: ignore[arg-type]
