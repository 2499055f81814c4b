"""The board's fit apart from the server: a big ladder's fit runs in a process of its own
(:class:`tournaments.arena.board.BoardProcess`), so that its seconds of pure Python never hold
the web's interpreter; a small one stays in a thread."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import trio

import tournaments.arena.service as service_module
from benchmarks.arena_load import build_home
from tournaments.arena.board import BoardProcess, compute_board, standings_documents
from tournaments.arena.replays import ReplayProcess, replay_views
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore
from tournaments.registry import Arena

BOTS = 24
RESULTS = 300


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("board-home")
    build_home(path, BOTS, RESULTS)
    return path


def test_the_board_from_its_process_is_the_board_of_a_thread(home: Path) -> None:
    store = ArenaStore(Arena(home).store_path)
    apart = BoardProcess(Arena(home).store_path)
    try:
        board = apart.compute()
        assert apart.process is not None
        assert apart.process.pid != os.getpid()
        here = compute_board(store)
        assert board.rows == here.rows
        assert board.series == here.series == RESULTS
        assert apart.compute().rows == here.rows  # the same process, asked again
        # the downloads are made there too (a thousand bots' crosstable was seconds of the
        # web's interpreter), the same as here
        assert board.documents is not None
        assert board.standings is not None
        assert board.documents == here.documents == standings_documents(board.standings)
        assert json.loads(board.documents[0])["series"] == RESULTS
        assert apart.started == 1
    finally:
        apart.stop()
        store.close()
    assert apart.process is None


async def _first_board(service: ArenaService) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(service.run)
        while not service.board.at:
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


def _service(home: Path) -> ArenaService:
    arena = Arena(home)
    return ArenaService(arena, ArenaStore(arena.store_path), ladder=False)


def test_a_big_ladder_is_fitted_apart_and_its_process_ends_with_the_server(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "BOARD_PROCESS_RESULTS", RESULTS)
    service = _service(home)
    trio.run(_first_board, service)
    assert service.board_process.started == 1
    assert len(service.board.rows) == BOTS
    assert service.board.series == RESULTS
    assert service.board_process.process is None  # stopped with the service


def test_a_small_ladder_is_fitted_in_a_thread(home: Path) -> None:
    service = _service(home)
    trio.run(_first_board, service)
    assert service.board_process.started == 0
    assert service.board.series == RESULTS


def test_a_slow_fit_in_a_thread_moves_apart(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "BOARD_PROCESS_AFTER_S", 0.0)
    service = _service(home)

    async def twice() -> None:
        await service._compute()
        assert service.board_process.started == 0
        await service._compute()
        assert service.board_process.started == 1
        service.board_process.stop()

    trio.run(twice)


def test_a_failed_or_killed_process_is_one_line_and_the_next_board_starts_afresh(
    home: Path, tmp_path: Path
) -> None:
    damaged = tmp_path / "not-a-store.sqlite"
    damaged.write_bytes(b"this is not a database" * 100)
    broken = BoardProcess(damaged)
    with pytest.raises(RuntimeError) as failed:
        broken.compute()
    assert "\n" not in str(failed.value)
    assert "ended" not in str(failed.value)  # it said why, and lives on
    assert broken.process is not None
    assert broken.process.poll() is None
    broken.stop()

    apart = BoardProcess(Arena(home).store_path)
    try:
        apart.compute()
        assert apart.process is not None
        os.kill(apart.process.pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match="the board's process ended"):
            apart.compute()
        assert apart.compute().series == RESULTS
        assert apart.started == 2
    finally:
        apart.stop()


def test_a_server_stopped_mid_fit_ends_the_fit(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "BOARD_PROCESS_RESULTS", 0)
    service = _service(home)
    service.board_process.compute()  # started and warm
    child = service.board_process.process
    assert child is not None
    os.kill(child.pid, signal.SIGSTOP)  # a fit that takes for ever

    async def cancelled() -> None:
        with trio.move_on_after(0.3):
            await service._compute()
            raise AssertionError("a stopped process answered")

    try:
        trio.run(cancelled)
        child.wait(10)
        assert child.returncode == -signal.SIGKILL
        assert service.board_process.process is None
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)


def test_a_recorded_matchs_replays_are_rendered_apart_as_here(home: Path, tmp_path: Path) -> None:
    """Rendering a recorded match's replays in the publishing thread held the web's interpreter
    for most of a busy ladder's time: they are rendered in a process of their own, to the same
    bytes; a log that cannot be read is one line, and the process lives on."""
    log = sorted((home / "logs").rglob("*.jsonl"))[0]  # a real log, played in-process
    apart = ReplayProcess()
    try:
        views = apart.views(log)
        assert apart.process is not None
        assert apart.process.pid != os.getpid()
        assert views == replay_views(log)
        with pytest.raises(RuntimeError) as failed:
            apart.views(tmp_path / "missing.jsonl")
        assert "\n" not in str(failed.value)
        assert apart.views(log) == views  # the same process, on
        assert apart.started == 1
    finally:
        apart.stop()
