"""The arena's event at a deadline: the command line's refusals, the field the freeze picks, an
event played through the real server (Hypercorn under trio, in-process) from creation to its
final page and its download verified offline, a server stopped mid-event, a bot withdrawn
mid-event, and the bracket in headless Chromium.

The matches are played by the referee in this process (``InProcessTables``: in-process seats,
real logs), not by sandboxed bots: those start only from the main checkout (the editable install
points there), where ``tests/test_arena_server.py`` plays real ones.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest
import trio
from typer.testing import CliRunner

from referee.faults import FaultKind
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.rules import greedy_policy, patient_policy
from referee.seats import BotIdentity, InProcessSeat
from tests.chromium import find_chromium, launch
from tournaments.arena.bundle import bundle_path
from tournaments.arena.event import (
    EventOptions,
    EventRefused,
    create_event,
    event_field,
    freeze,
    snapshot_of,
    upload_note,
    withdrawn,
)
from tournaments.arena.server import server_config
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore, EntrantState, EventPhase
from tournaments.arena.web import Published, create_app
from tournaments.cli.app import app
from tournaments.executors.worker import reason
from tournaments.formats.records import MatchJob, MatchOutcome, MatchSummary
from tournaments.league import stored_league
from tournaments.registry import Arena
from tournaments.rounds import event_state
from tournaments.store import BotRow, MatchState, Store

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).parent / "artifacts" / "arena"
runner = CliRunner()


def gin(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def register(store: ArenaStore, ident: str, *, enter: bool = True) -> BotRow:
    """A registry row (no code: the in-process tables play by name), entered into the ladder."""
    name, _, version = ident.partition("@")
    digest = hashlib.sha256(ident.encode()).hexdigest()
    row = BotRow(name, version, digest, store.home / "bots" / ident, "", "", time.time())
    store.add_bot(row)
    if enter:
        store.enter(ident, name)
    return row


class InProcessTables:
    """An executor that plays each job with the referee in this process: in-process seats
    (greedy, or patient for a name starting with ``p``), the job's deal, seeds and hashes, a
    real log. What ``gin league verify`` checks of a log holds of these."""

    sittings = False

    def __init__(self, store: ArenaStore, slots: int = 2) -> None:
        self.store = store
        self.slots = slots
        self.played: list[str] = []
        self.closed = False
        self.on_play: Callable[[MatchJob], None] = lambda _job: None

    @property
    def tables(self) -> int:
        return self.slots

    async def capacity(self) -> int:
        return self.slots

    async def sweep(self) -> int:
        return 0

    async def aclose(self) -> None:
        self.closed = True

    async def play(self, job: MatchJob, *, sent: Callable[[], None] | None = None) -> MatchOutcome:
        match = self.store.match(job.match_id)
        assert match is not None
        seats = []
        for index, ident in enumerate((match.seat0, match.seat1)):
            name, _, version = ident.partition("@")
            policy = patient_policy if name.startswith("p") else greedy_policy
            seat = InProcessSeat(policy, name, version)
            seat.identity = BotIdentity(name, version, job.hashes[index])
            seats.append(seat)
        if sent is not None:
            sent()
        self.on_play(job)
        config = MatchConfig(
            job.match_id,
            job.seed,
            job.rules,
            job.time_control,
            job.fault_policy,
            bot_seeds=job.bot_seeds,
        )
        with MatchLog(Path(job.log)) as log:
            result = await play_match((seats[0], seats[1]), config, log)
        await trio.sleep(0.01)  # let the web app answer between matches
        self.played.append(job.match_id)
        return MatchOutcome(MatchSummary.of(result, Path(job.log)), reason(result))


# --- creating, listing, cancelling ---------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    monkeypatch.setenv("GIN_HOME", str(place))
    monkeypatch.setenv("COLUMNS", "200")
    return place


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--at", "2001-01-01T00:00:00Z", "--format", "knockout"], "is in the past"),
        (["--at", "tomorrow", "--format", "knockout"], "not an ISO 8601 time"),
        (["--at", "2999-01-01T00:00", "--format", "ladder"], "--format must be one of"),
        (["--at", "2999-01-01T00:00", "--format", "swiss"], "a swiss needs --rounds N"),
        (["--at", "2999-01-01T00:00", "--format", "knockout", "--rounds", "3"], "is for a swiss"),
        (
            ["--at", "2999-01-01T00:00", "--format", "swiss", "--rounds", "3", "--max-pairs", "4"],
            "for a knockout only",
        ),
        (["--at", "2999-01-01T00:00", "--format", "round-robin", "--pairs", "0"], "at least 1"),
        (["--at", "2999-01-01T00:00", "--seeding", "alphabet"], "--seeding must be"),
    ],
)
def test_a_bad_event_is_refused_in_one_line_and_nothing_is_scheduled(
    home: Path, args: list[str], said: str
) -> None:
    code, _, err = gin("arena", "event", "create", "finals", *args)
    assert code == 2
    assert said in one_line(err)
    assert "no event scheduled" in err
    code, out, _ = gin("arena", "event", "list")
    assert (code, out.strip()) == (0, "no events")


def test_one_event_at_a_time_and_only_a_scheduled_one_is_cancelled(home: Path) -> None:
    assert gin("arena", "event", "create", "finals", "--at", "2999-01-01T12:00")[0] == 0
    code, _, err = gin("arena", "event", "create", "other", "--at", "2999-02-01T12:00:00+01:00")
    assert code == 2
    assert "event finals is scheduled or playing" in one_line(err)
    code, out, _ = gin("arena", "event", "list")
    assert code == 0
    assert "finals" in out
    assert "2999-01-01T12:00:00+00:00" in out
    assert "other" not in out
    assert gin("arena", "event", "cancel", "finals")[0] == 0
    code, _, err = gin("arena", "event", "cancel", "finals")
    assert code == 2
    assert "only a scheduled one is cancelled" in one_line(err)
    code, _, err = gin("arena", "event", "cancel", "nothing")
    assert code == 2
    assert "no event 'nothing'" in one_line(err)
    code, _, err = gin("arena", "event", "create", "finals", "--at", "2999-01-01T12:00")
    assert code == 2
    assert "was held already" in one_line(err)
    assert gin("arena", "event", "create", "other", "--at", "2999-02-01T12:00:00+01:00")[0] == 0


def test_an_event_may_not_take_a_leagues_name(home: Path) -> None:
    code, _, err = gin("arena", "event", "create", "ladder", "--at", "2999-01-01T12:00")
    assert code == 2
    assert "not an event name" in one_line(err)
    store = ArenaStore(Arena(home).store_path)
    store.save_league("club", "{}", [], None)
    code, _, err = gin("arena", "event", "create", "club", "--at", "2999-01-01T12:00")
    assert code == 2
    assert "a league named club exists" in one_line(err)


# --- the freeze ----------------------------------------------------------------------------------


def test_the_freeze_takes_each_names_version_active_at_the_deadline(tmp_path: Path) -> None:
    store = ArenaStore(Arena(tmp_path / "home").store_path)
    register(store, "alpha@1")
    alpha2 = register(store, "alpha@2")  # before the deadline: it replaces alpha@1
    store.set_entrant("alpha@1", EntrantState.RETIRED, "replaced by alpha@2")
    register(store, "beta@1")
    register(store, "gamma@1")
    store.set_entrant("gamma@1", EntrantState.SUSPENDED, "suspended: faults")
    register(store, "delta@1")
    register(store, "ghost@1")
    store.db.execute("DELETE FROM bots WHERE name = 'ghost'")  # gone from the registry
    at = time.time() + 0.05
    row = create_event(store, "finals", at, "knockout", EventOptions(), now=time.time())
    time.sleep(0.1)
    register(store, "beta@2")  # after the deadline: the ladder only
    store.set_entrant("beta@1", EntrantState.RETIRED, "replaced by beta@2")
    store.set_entrant("delta@1", EntrantState.RETIRED, "retired by its author")  # after it
    field = event_field(store, at)
    assert [bot.ident for bot in field] == ["alpha@2", "beta@1", "delta@1"]
    assert field[0].hash == alpha2.hash
    frozen = freeze(store, row)
    assert frozen.phase is EventPhase.PLAYING
    assert snapshot_of(frozen) == field
    league = stored_league(store, "finals")
    assert league is not None
    assert league.resolved == ("alpha@2", "beta@1", "delta@1")
    assert (league.config.format, league.config.series_per_pairing) == ("knockout", 2)
    assert withdrawn(store, frozen) == {"delta@1": "retired: retired by its author"}


def test_the_format_options_make_the_league(tmp_path: Path) -> None:
    """A knockout with --max-pairs has sequential ties; a Swiss asked for more rounds than its
    field allows plays as many as it allows; a round robin's matches are scheduled at once."""
    cases = [
        ("knockout", EventOptions(max_pairs=4, seeding="draw"), ("knockout", 0, "draw", 4, 2)),
        ("swiss", EventOptions(rounds=9, pairs=2), ("swiss", 3, "draw", 0, 4)),
        ("round-robin", EventOptions(pairs=3), ("round-robin", 0, "order", 0, 6)),
    ]
    for number, (kind, options, want) in enumerate(cases):
        store = ArenaStore(Arena(tmp_path / f"home{number}").store_path)
        for ident in ("alpha@1", "beta@1", "gamma@1", "delta@1"):
            register(store, ident)
        row = create_event(store, "finals", time.time() + 0.01, kind, options, now=time.time())
        time.sleep(0.02)
        assert freeze(store, row).phase is EventPhase.PLAYING
        league = stored_league(store, "finals")
        assert league is not None
        config = league.config
        got = (config.format, config.rounds, config.seeding, config.max_pairs)
        assert (*got, config.series_per_pairing) == want
        assert (config.sprt is not None) == (kind == "knockout")
        scheduled = len(store.matches("finals"))
        assert scheduled == (6 * 6 if kind == "round-robin" else 0)


def test_too_small_a_field_is_not_played_and_nothing_else_is_written(tmp_path: Path) -> None:
    store = ArenaStore(Arena(tmp_path / "home").store_path)
    register(store, "alpha@1")
    register(store, "beta@1")
    row = create_event(
        store, "finals", time.time() + 0.01, "swiss", EventOptions(rounds=2), now=time.time()
    )
    time.sleep(0.02)
    after = freeze(store, row)
    assert after.phase is EventPhase.NOT_PLAYED
    assert after.outcome == "not played: 2 bots (a swiss needs at least 4)"
    assert snapshot_of(after) == []
    assert "finals" not in store.leagues()


def test_a_freeze_of_an_event_no_longer_scheduled_writes_nothing(tmp_path: Path) -> None:
    """The snapshot and the league are one transaction: an event cancelled meanwhile (another
    process) leaves no league behind."""
    store = ArenaStore(Arena(tmp_path / "home").store_path)
    for ident in ("alpha@1", "beta@1", "gamma@1"):
        register(store, ident)
    row = create_event(
        store, "finals", time.time() + 0.01, "round-robin", EventOptions(), now=time.time()
    )
    store.set_event_phase("finals", EventPhase.SCHEDULED, EventPhase.CANCELLED, "cancelled")
    time.sleep(0.02)
    after = freeze(store, row)
    assert after.phase is EventPhase.CANCELLED
    assert "finals" not in store.leagues()
    assert store.matches("finals") == []


def test_an_upload_is_told_whether_it_can_still_count(tmp_path: Path) -> None:
    store = ArenaStore(Arena(tmp_path / "home").store_path)
    assert upload_note(store, time.time()) == ""
    at = time.time() + 60
    create_event(store, "finals", at, "knockout", EventOptions(), now=time.time())
    assert "plays in it" in upload_note(store, at - 1)
    assert upload_note(store, at + 1).endswith("this upload plays in the ladder only")


def test_the_deadline_without_a_zone_is_utc() -> None:
    from tournaments.arena.event import parse_deadline  # noqa: PLC0415

    assert parse_deadline("2030-01-01T00:00") == parse_deadline("2030-01-01T01:00+01:00")
    with pytest.raises(EventRefused):
        parse_deadline("noon")


# --- played through the server -------------------------------------------------------------------


class Site:
    def __init__(self, host: str, port: int, service: ArenaService) -> None:
        self.host, self.port, self.service = host, port, service

    def fetch(
        self,
        path: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    async def get(self, path: str) -> tuple[int, bytes]:
        return await trio.to_thread.run_sync(self.fetch, path)


def serve(
    home: Path,
    check: Callable[[Site, InProcessTables], Awaitable[None]],
    *,
    ladder: bool = True,
    events: bool = True,
) -> None:
    """Serve ``home`` with the in-process tables (playing its events, unless ``events`` is
    false) and run ``check``."""

    async def main() -> None:
        arena = Arena(home)
        store = ArenaStore(arena.store_path)
        tables = InProcessTables(store)
        service = ArenaService(
            arena, store, jobs=2, executor=cast(Any, tables), seed=3, ladder=ladder, events=events
        )
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            web_app = cast(Any, create_app(service))
            binds = await nursery.start(partial(trio_serve, web_app, server_config("127.0.0.1", 0)))
            host, _, port = binds[0].removeprefix("http://").rpartition(":")
            await check(Site(host, int(port), service), tables)
            nursery.cancel_scope.cancel()
        if isinstance(service.publisher, Published):
            service.publisher.close()
        store.close()

    trio.run(main)


def trio_serve(*args: Any, **kwargs: Any) -> Any:
    from hypercorn.trio import serve as hypercorn_serve  # noqa: PLC0415

    return hypercorn_serve(*args, **kwargs)


async def phase_of(site: Site, name: str, want: EventPhase, timeout: float = 20) -> None:
    row = None
    with trio.move_on_after(timeout):
        while True:
            row = site.service.store.arena_event(name)
            assert row is not None
            if row.phase is want:
                return
            await trio.sleep(0.05)
    raise AssertionError(f"{name} is {row}, not {want}; {site.service.event_error}")


FIELD = ("alpha@1.0", "bravo@1.0", "charlie@1.0", "papa@1.0", "quebec@1.0")


def event_home(tmp_path: Path, kind: str, options: EventOptions, lead: float = 1.0) -> Path:
    home = tmp_path / "home"
    store = ArenaStore(Arena(home).store_path)
    for ident in FIELD:
        register(store, ident)
    create_event(store, "finals", time.time() + lead, kind, options, now=time.time())
    store.close()
    return home


def verify_offline(
    site_bytes: bytes, tmp_path: Path, name: str
) -> subprocess.CompletedProcess[str]:
    """Unpack a downloaded event and run ``gin league verify`` on it, in a process of its own."""
    folder = tmp_path / "download"
    with tarfile.open(fileobj=io.BytesIO(site_bytes), mode="r:gz") as archive:
        archive.extractall(folder, filter="data")
    env = {**os.environ, "GIN_HOME": str(folder / name), "COLUMNS": "200"}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from tournaments.cli.entry import main; main()",
            "league",
            "verify",
            name,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )


def test_a_knockout_plays_at_its_deadline_and_its_download_verifies(tmp_path: Path) -> None:
    """Creation to the final page: the ladder plays until the deadline, pauses while the event
    plays on the same executor, and goes on after; the page shows the field with its hashes,
    the bracket and every match linked to its replay; the download verifies offline."""
    home = event_home(tmp_path, "knockout", EventOptions(pairs=1), lead=1.5)
    seen: dict[str, Any] = {}

    async def check(site: Site, tables: InProcessTables) -> None:
        status, page = await site.get("/events/finals")
        assert status == 200
        assert b"scheduled" in page
        assert b'http-equiv="refresh"' in page  # followed live until it is over
        await phase_of(site, "finals", EventPhase.FINISHED)
        ladder = site.service.ladder
        assert ladder is not None
        during = [m for m in tables.played if m.startswith("finals")]
        assert during
        first, last = tables.played.index(during[0]), tables.played.index(during[-1])
        assert not [m for m in tables.played[first:last] if not m.startswith("finals")]
        with trio.fail_after(60):  # the ladder goes on after the event, on its executor
            while not [m for m in tables.played[last:] if not m.startswith("finals")]:
                await trio.sleep(0.05)
        assert not tables.closed  # lent to the event, not closed by it
        for _ in range(100):
            status, page = await site.get("/events/finals")
            if b"event.tar.gz" in page:
                break
            await trio.sleep(0.05)
        seen["page"] = page.decode()
        seen["board"] = (await site.get("/"))[1].decode()
        status, seen["download"] = await site.get("/events/finals/event.tar.gz")
        assert status == 200
        seen["matches"] = during
        # the page kept rendered follows its download (made after the phase changes)
        bundle = bundle_path(site.service.arena, "finals")
        moved = bundle.with_name("moved")
        bundle.rename(moved)
        assert b"event.tar.gz" not in (await site.get("/events/finals"))[1]
        moved.rename(bundle)
        assert b"event.tar.gz" in (await site.get("/events/finals"))[1]

    serve(home, check)
    page = seen["page"]
    for ident in FIELD:
        name, _, _version = ident.partition("@")
        assert name in page
        assert hashlib.sha256(ident.encode()).hexdigest() in page
    assert "Final result" in page
    assert "winner" in page
    assert "final" in page
    assert "Bracket" in page
    assert "bye" in page
    for match_id in seen["matches"]:
        assert f"/matches/{match_id.replace('@', '%40')}/replay" in page or (
            f"/matches/{match_id}/replay" in page
        )
    assert 'href="/events/finals"' in seen["board"]
    assert 'http-equiv="refresh"' not in page
    ran = verify_offline(seen["download"], tmp_path, "finals")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    played = len(seen["matches"])
    assert f"{played} of {played} match logs verified" in ran.stdout
    with tarfile.open(fileobj=io.BytesIO(seen["download"]), mode="r:gz") as archive:
        archive.extractall(tmp_path / "fresh", filter="data")  # as downloaded, not verified yet
    kept = Store(tmp_path / "fresh" / "finals" / "arena.sqlite")  # the event's alone
    assert kept.leagues() == ["finals"]
    tables_kept = {row[0] for row in kept.db.execute("SELECT name FROM sqlite_master")}
    assert not tables_kept & {"authors", "tokens", "sessions", "entrants", "arena_events"}
    secrets_kept = [row[0] for row in kept.db.execute("SELECT key FROM meta")]
    assert not [key for key in secrets_kept if "ladder" in key]
    with pytest.MonkeyPatch.context() as patch:  # the league machinery reads the event
        patch.setenv("GIN_HOME", str(home))
        patch.setenv("COLUMNS", "200")
        for command in ("status", "standings"):
            code, out, err = gin("league", command, "finals")
            assert code == 0, err
            assert "alpha@1.0" in out
    store = ArenaStore(Arena(home).store_path)
    state = event_state(store, "finals")
    assert state.finished
    assert bundle_path(Arena(home), "finals").is_file()


def bot_tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.iterdir()):
            if path.name != "__pycache__":
                archive.add(path, arcname=path.name)
    return buffer.getvalue()


def test_an_upload_after_the_deadline_is_told_it_plays_in_the_ladder_only(tmp_path: Path) -> None:
    home = event_home(tmp_path, "round-robin", EventOptions(), lead=0.2)
    store = ArenaStore(Arena(home).store_path)
    from tournaments.arena.accounts import add_author  # noqa: PLC0415

    token = add_author(store, "ada")
    store.close()
    time.sleep(0.3)

    async def check(site: Site, _tables: InProcessTables) -> None:
        status, body = await trio.to_thread.run_sync(
            partial(
                site.fetch,
                "/api/bots",
                "POST",
                bot_tar(ROOT / "sample_bots" / "greedy"),
                {"authorization": f"Bearer {token}", "content-type": "application/gzip"},
            )
        )
        seen.append((status, body))

    seen: list[tuple[int, bytes]] = []
    serve(home, check, ladder=False)
    status, body = seen[0]
    assert status == 202, body
    assert json.loads(body)["event"].endswith("this upload plays in the ladder only")


def test_a_server_that_plays_nothing_freezes_no_event(tmp_path: Path) -> None:
    """``--no-ladder`` plays nothing: the server beside it that plays the ladder freezes and
    plays the event (two playing it would meet at its league's lock)."""
    home = event_home(tmp_path, "round-robin", EventOptions(), lead=0.1)

    async def check(site: Site, _tables: InProcessTables) -> None:
        await trio.sleep(0.8)
        row = site.service.store.arena_event("finals")
        assert row is not None
        assert row.phase is EventPhase.SCHEDULED

    serve(home, check, ladder=False, events=False)


def test_a_server_stopped_mid_event_resumes_and_counts_nothing_twice(tmp_path: Path) -> None:
    """Stopped before the deadline, then between freeze and play, then mid-round: each start
    goes on from where the store is, and the download verifies."""
    home = event_home(tmp_path, "swiss", EventOptions(rounds=2), lead=30)

    async def before_deadline(site: Site, _tables: InProcessTables) -> None:
        await trio.sleep(0.3)
        row = site.service.store.arena_event("finals")
        assert row is not None
        assert row.phase is EventPhase.SCHEDULED

    serve(home, before_deadline, ladder=False)
    store = ArenaStore(Arena(home).store_path)
    store.db.execute("UPDATE arena_events SET at = created_at")  # the deadline passed
    store.close()  # while the server was down: the next start freezes at once

    async def mid_round(site: Site, tables: InProcessTables) -> None:
        await phase_of(site, "finals", EventPhase.PLAYING)
        with trio.fail_after(120):
            while len([m for m in tables.played if m.startswith("finals")]) < 3:
                await trio.sleep(0.01)

    serve(home, mid_round, ladder=False)
    store = ArenaStore(Arena(home).store_path)
    counts = store.counts("finals")
    assert 0 < counts.get(MatchState.DONE, 0) < sum(counts.values())
    assert counts.get(MatchState.RUNNING, 0) == 0  # put back to pending
    store.close()
    seen: dict[str, bytes] = {}

    async def to_the_end(site: Site, _tables: InProcessTables) -> None:
        await phase_of(site, "finals", EventPhase.FINISHED)
        for _ in range(100):
            status, body = await site.get("/events/finals/event.tar.gz")
            if status == 200:
                seen["download"] = body
                return
            await trio.sleep(0.05)

    serve(home, to_the_end, ladder=False)
    store = ArenaStore(Arena(home).store_path)
    state = event_state(store, "finals")
    assert state.finished
    assert len(state.rounds) == 2
    results = store.results("finals")
    assert len(results) == len({r.match_id for r in results}) == len(store.matches("finals"))
    ran = verify_offline(seen["download"], tmp_path, "finals")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_an_event_frozen_by_a_server_that_died_then_is_played_by_the_next(
    tmp_path: Path,
) -> None:
    """Killed between the freeze and the first match: the next start plays the frozen field
    (a bot uploaded since does not get in)."""
    home = event_home(tmp_path, "knockout", EventOptions(), lead=0.05)
    time.sleep(0.1)
    store = ArenaStore(Arena(home).store_path)
    row = store.arena_event("finals")
    assert row is not None
    frozen = freeze(store, row)  # what the server wrote before it died
    register(store, "zulu@1.0")  # entered after the deadline
    store.close()

    async def check(site: Site, _tables: InProcessTables) -> None:
        await phase_of(site, "finals", EventPhase.FINISHED)

    serve(home, check, ladder=False)
    store = ArenaStore(Arena(home).store_path)
    state = event_state(store, "finals")
    assert state.finished
    assert set(state.seeds) == {bot.ident for bot in snapshot_of(frozen)} == set(FIELD)
    download = bundle_path(Arena(home), "finals")
    download.unlink()  # as if killed after the event's end, before its download was made
    store.close()

    async def again(site: Site, _tables: InProcessTables) -> None:
        with trio.fail_after(60):
            while (await site.get("/events/finals/event.tar.gz"))[0] != 200:
                await trio.sleep(0.05)

    serve(home, again, ladder=False)
    assert download.is_file()


def test_a_bot_retired_mid_event_forfeits_its_remaining_ties(tmp_path: Path) -> None:
    home = event_home(tmp_path, "round-robin", EventOptions(), lead=0.5)
    seen: dict[str, Any] = {}

    async def check(site: Site, tables: InProcessTables) -> None:
        def retire_on_first(job: MatchJob) -> None:
            if not seen:
                seen["retired_at"] = len(tables.played)
                site.service.store.set_entrant("quebec@1.0", EntrantState.RETIRED, "retired by q")

        tables.on_play = retire_on_first
        await phase_of(site, "finals", EventPhase.FINISHED)
        for _ in range(100):
            status, body = await site.get("/events/finals/event.tar.gz")
            if status == 200:
                seen["download"] = body
                break
            await trio.sleep(0.05)
        seen["page"] = (await site.get("/events/finals"))[1].decode()
        seen["played"] = list(tables.played)

    serve(home, check, ladder=False)
    store = ArenaStore(Arena(home).store_path)
    forfeits = 0
    for result in store.results("finals"):
        if "quebec@1.0" not in result.seats or result.match_id in seen["played"]:
            continue  # played on the tables (the first, already started when it was retired)
        seat = result.seats.index("quebec@1.0")
        assert result.summary.result.forfeited == (seat,)
        assert result.summary.faults[0].kind is FaultKind.STARTUP_FAILURE
        assert result.winner == 1 - seat
        forfeits += 1
    assert forfeits >= 6  # quebec's 8 series, less any begun before it was retired
    assert "withdrawn" in seen["page"]
    assert "forfeits its ties" in seen["page"]
    ran = verify_offline(seen["download"], tmp_path, "finals")
    assert ran.returncode == 0, ran.stdout + ran.stderr


CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (make browser-deps)")
def test_the_bracket_in_chromium(tmp_path: Path) -> None:
    home = event_home(tmp_path, "knockout", EventOptions(pairs=1), lead=0.3)
    pages: dict[str, str] = {}

    async def check(site: Site, _tables: InProcessTables) -> None:
        await phase_of(site, "finals", EventPhase.FINISHED)
        pages["url"] = f"http://{site.host}:{site.port}/events/finals"
        await trio.to_thread.run_sync(partial(shoot, pages, tmp_path / "profile"))

    serve(home, check, ladder=False)
    assert pages["text"].count("bye") >= 3
    assert (ARTIFACTS / "event-bracket.png").stat().st_size > 10_000


def shoot(pages: dict[str, str], profile: Path) -> None:
    """Load the event page in a headless Chromium let through to loopback only; keep its text
    and a screenshot."""
    from tests import chromium as chromium_module  # noqa: PLC0415

    assert CHROMIUM is not None
    flags = tuple(
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
        if flag.startswith("--host-resolver-rules=")
        else flag
        for flag in chromium_module.FLAGS
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chromium_module, "FLAGS", flags)  # read when the browser starts
        browser = launch(CHROMIUM, profile)
    with browser:
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        browser.events.clear()
        browser.call("Page.navigate", {"url": pages["url"]})
        browser.wait_for_event("Page.loadEventFired")
        pages["text"] = str(browser.evaluate("document.body.innerText"))
        browser.evaluate("document.querySelector('.bracket').scrollIntoView()")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.screenshot(ARTIFACTS / "event-bracket.png")
