"""``gin arena serve`` as a real process: the ladder plays real sandboxed pairs, survives a
SIGKILL mid-ladder with nothing lost or counted twice, and stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from tournaments.arena.ladder import LADDER
from tournaments.arena.store import ArenaStore
from tournaments.registry import Arena, submit
from tournaments.store import MatchState

ROOT = Path(__file__).resolve().parent.parent
GIN = [sys.executable, "-c", "from tournaments.cli.entry import main; main()"]
SERVING = re.compile(r"on (http://127\.0\.0\.1:\d+)")


def arena_home(tmp_path: Path, bots: tuple[str, ...] = ("greedy", "random")) -> Arena:
    """A home with sample bots registered and entered into the ladder."""
    arena = Arena(tmp_path / "home")
    store = ArenaStore(arena.store_path)

    async def register() -> None:
        for name in bots:
            row = await submit(arena, store, ROOT / "sample_bots" / name, None)
            store.enter(row.ident, row.name)

    trio.run(register)
    store.close()
    return arena


class Server:
    """A ``gin arena serve`` process in its own process group."""

    def __init__(self, arena: Arena, *args: str) -> None:
        env = {**os.environ, "GIN_HOME": str(arena.home), "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [*GIN, "arena", "serve", "--port", "0", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 60.0) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                line = self.process.stdout.readline()
                if not line:
                    break
                seen.append(line)
                found = SERVING.search(line)
                if found:
                    return found.group(1)
            if self.process.poll() is not None:
                break
        self.kill()
        raise AssertionError(f"the server did not start: {seen!r} {self.stderr()[-3000:]!r}")

    def stderr(self) -> str:
        assert self.process.stderr is not None
        if self.process.poll() is None:
            return ""
        return self.process.stderr.read()

    def kill(self) -> None:
        """SIGKILL, the whole group (its worker processes go with it)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def close(self) -> None:
        """Close the pipes."""
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def stop(self) -> int:
        """SIGTERM, and its exit status."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()
        server.close()


def wait_until(check: object, timeout: float, what: str) -> None:
    assert callable(check)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_a_server_killed_mid_ladder_resumes_with_nothing_lost_or_doubled(
    tmp_path: Path, servers: list[Server]
) -> None:
    arena = arena_home(tmp_path)
    store = ArenaStore(arena.store_path)
    first = Server(arena, "-j", "2")
    servers.append(first)

    def results() -> int:
        return len(store.results(LADDER)) if LADDER in store.leagues() else 0

    def mid_match() -> bool:
        return results() >= 4 and store.counts(LADDER).get(MatchState.RUNNING, 0) > 0

    wait_until(mid_match, 120, "four results and a match running")
    first.kill()
    running = [m.match_id for m in store.matches(LADDER, MatchState.RUNNING)]
    recorded = {r.match_id for r in store.results(LADDER)}
    assert running  # killed mid-match: the store still says so

    second = Server(arena, "-j", "2")
    servers.append(second)
    wait_until(lambda: results() >= len(recorded) + 6, 180, "six more results")
    assert second.stop() == 0
    after = store.results(LADDER)
    ids = [r.match_id for r in after]
    assert len(ids) == len(set(ids))
    assert recorded <= set(ids)
    assert set(running) <= set(ids)  # played again after the restart, first
    states = store.counts(LADDER)
    assert states.get(MatchState.RUNNING, 0) == 0  # a clean stop puts them back
    # every recorded result is its log's: the verifier re-plays each one
    env = {**os.environ, "GIN_HOME": str(arena.home)}
    verify = subprocess.run(
        [*GIN, "league", "verify", LADDER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
