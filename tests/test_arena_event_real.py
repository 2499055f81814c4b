"""The arena's event on a real ``gin arena serve``: sample bots in the sandbox, an event created
from the shell, the server killed mid-event (SIGKILL) and started again, the event finished and
its download verified by ``gin league verify`` in a process of its own.

Sandboxed bots start only from the main checkout (the editable install points there): run
this test there. (In a worktree every bot fails to start, the ladder suspends them all before
the deadline, and the event is "not played: 0 bots": the test times out waiting for it.)
"""

from __future__ import annotations

import http.client
import io
import os
import subprocess
import tarfile
import time
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.test_arena_server import GIN, ROOT, Server, arena_home, wait_until
from tournaments.arena.store import ArenaStore, EventPhase
from tournaments.store import MatchState

pytestmark = pytest.mark.slow


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    """The servers a test starts, killed after it whatever happened."""
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()
        server.close()


def fetch(url: str, path: str) -> tuple[int, bytes]:
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(
        address.hostname or "127.0.0.1", address.port, timeout=60
    )
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_an_event_on_a_real_server_survives_a_kill_and_verifies(
    tmp_path: Path, servers: list[Server]
) -> None:
    arena = arena_home(tmp_path, ("greedy", "random", "strong"))
    env = {**os.environ, "GIN_HOME": str(arena.home), "COLUMNS": "200"}
    at = datetime.fromtimestamp(time.time() + 8, UTC).isoformat(timespec="seconds")
    created = subprocess.run(
        [*GIN, "arena", "event", "create", "finals", "--at", at, "--format", "knockout"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert created.returncode == 0, created.stderr
    store = ArenaStore(arena.store_path)
    first = Server(arena, "-j", "2")
    servers.append(first)

    def phase() -> EventPhase:
        row = store.arena_event("finals")
        assert row is not None
        return row.phase

    def mid_event() -> bool:
        if phase() is not EventPhase.PLAYING:
            return False
        counts = store.counts("finals")
        return counts.get(MatchState.DONE, 0) >= 1 and counts.get(MatchState.RUNNING, 0) > 0

    wait_until(mid_event, 300, "the event's first result and a match running")
    first.kill()
    second = Server(arena, "-j", "2")
    servers.append(second)
    wait_until(lambda: phase() is EventPhase.FINISHED, 600, "the event's end")
    status, page = fetch(second.url, "/events/finals")
    assert status == 200
    assert b"Final result" in page
    assert b"winner" in page
    download = b""
    for _ in range(100):
        status, download = fetch(second.url, "/events/finals/event.tar.gz")
        if status == 200:
            break
        time.sleep(0.2)
    assert status == 200
    assert second.stop() == 0
    results = store.results("finals")
    assert len(results) == len({r.match_id for r in results}) == len(store.matches("finals"))
    folder = tmp_path / "download"
    with tarfile.open(fileobj=io.BytesIO(download), mode="r:gz") as archive:
        archive.extractall(folder, filter="data")
    verify = subprocess.run(
        [*GIN, "league", "verify", "finals"],
        cwd=ROOT,
        env={**env, "GIN_HOME": str(folder / "finals")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{len(results)} of {len(results)} match logs verified" in verify.stdout
