"""The hosted arena under load (``python -m benchmarks.arena_load``).

1. A ladder-shaped store (built once, reused with ``--home``): ``--bots`` synthetic bots
   registered and entered, an author owning every tenth bot's name, ``--results`` results of the
   league ``ladder`` in duplicate pairs on random pairings (match ids, seeds and ``duplicate_of``
   as :mod:`tournaments.arena.ladder` makes them; summaries counted from
   :func:`benchmarks.scale_bench.synthetic_log`), their log paths pointing at a handful of real
   logs played in-process once, so that match and replay pages render; rating points for a few
   bots (their plots).
2. ``gin arena serve --no-ladder --port 0`` on it, a separate process; the time until
   ``/api/leaderboard`` lists the bots (its first board: the standings' fit of every result);
   the pages of the ``--recent`` latest matches fetched once each, so that the tree holds them
   as a running ladder would (it publishes a match's pages when it records it, and keeps the
   latest 1,000); each kind of page fetched alone, and an old match's (rendered on request).
3. Load from this process, one trio loop on plain sockets with a small HTTP/1.1 client (h11,
   keep-alive): ``--readers`` concurrent readers fetching the leaderboard page, match pages,
   replay pages (random matches of the ``--recent``) and the JSON leaderboard, and
   ``--uploaders`` concurrent uploaders, each with its own author's token, POSTing a real
   bot's tar to ``/api/bots`` every ``--upload-every`` seconds (the per-token rate limit
   answers 429 past it; they do not wait for ``Retry-After``). Requests per second, p50/p99
   latency and statuses per page kind, the client's own CPU use (it must not be the
   bottleneck) and the server's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import h11
import trio
import trio.testing
from rich.console import Console
from rich.table import Table

from benchmarks.scale_bench import bot_hash, result_row, synthetic_log
from referee.control import FaultPolicy
from referee.match import MatchConfig, play_match
from referee.matchlog import MatchLog
from referee.rules import greedy_policy, patient_policy
from referee.seats import BotIdentity, InProcessSeat
from tournaments.arena.accounts import add_author, issue_token
from tournaments.arena.ladder import LADDER, ladder_config, pairing_key
from tournaments.arena.store import ArenaStore, RatingPoint
from tournaments.arena.web import MATCH_PAGES
from tournaments.league import StoredLeague, derive_seed, match_id
from tournaments.registry import Arena
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow

ROOT: Final = Path(__file__).resolve().parent.parent
GIN: Final = [sys.executable, "-c", "from tournaments.cli.entry import main; main()"]
SERVING: Final = re.compile(r"on (http://127\.0\.0\.1:(\d+))")
REAL_LOGS: Final = 6
"""Real logs played once; every result's log path points at one of them."""
OWNED_EVERY: Final = 10
"""Every this many bots has an author (the others are the organiser's)."""
PRISTINE: Final = "arena-load.sqlite"
"""The store as built, put back before each run (a run's uploads enter bots)."""
RATED_BOTS: Final = 20
RATING_POINTS: Final = 30
console = Console(width=150)


# --- the store -----------------------------------------------------------------------------------


def _bot_name(index: int) -> str:
    return f"b{index:04d}"


def _play_real_logs(arena: Arena, count: int) -> list[Path]:
    """``count`` real matches of greedy against patient, played in-process (trio's mock clock)
    into ``<home>/logs/real``; their paths."""
    folder = arena.home / "logs" / "real"
    folder.mkdir(parents=True, exist_ok=True)
    policies = {"north": greedy_policy, "south": patient_policy}

    def seat(name: str) -> InProcessSeat:
        playing = InProcessSeat(policies[name], name, "1")
        playing.identity = BotIdentity(name, "1", bot_hash(name))
        return playing

    paths = []
    for index in range(count):
        path = folder / f"real-{index}.jsonl"
        config = MatchConfig(f"real-{index}", 1000 + index, fault_policy=FaultPolicy(strikes=3))

        async def main(path: Path = path, config: MatchConfig = config) -> None:
            with MatchLog(path) as log:
                await play_match((seat("north"), seat("south")), config, log)

        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        paths.append(path)
    return paths


def _result_row(match: MatchRow, secret: bytes, home_secret: bytes, path: Path) -> ResultRow:
    """The result the runner would record for ``match`` (counted from its synthetic log), its
    log path ``path``."""
    return result_row(match, synthetic_log(match, secret, home_secret), path, LADDER)


def build_home(home: Path, bots: int, results: int, seed: int = 23) -> dict[str, float]:
    """Build the ladder-shaped store at ``home``; the seconds of each step."""
    spent: dict[str, float] = {}
    start = time.perf_counter()
    arena = Arena(home)
    store = ArenaStore(arena.store_path)
    logs = _play_real_logs(arena, REAL_LOGS)
    spent["real logs"] = time.perf_counter() - start

    start = time.perf_counter()
    idents = []
    for index in range(bots):
        name = _bot_name(index)
        row = BotRow(name, "1", bot_hash(name), home / "src" / name, "", "", 1e9 + index)
        store.add_bot(row)
        store.enter(row.ident, name)
        idents.append(row.ident)
        if index % OWNED_EVERY == 0:
            author = f"author{index // OWNED_EVERY:03d}"
            add_author(store, author)
            store.claim_name(name, author)
    spent["bots"] = time.perf_counter() - start

    start = time.perf_counter()
    rng = random.Random(seed)
    secret = store.secret(f"league:{LADDER}")
    home_secret = store.secret("home")
    between: Counter[str] = Counter()
    legs: list[MatchRow] = []
    while len(legs) < results:
        first, second = sorted(rng.sample(idents, 2))
        key = pairing_key(first, second)
        index = between[key]
        between[key] += 1
        pair_seed = derive_seed(secret, key, index)
        leg = match_id(LADDER, first, second, 2 * index)
        legs.append(
            MatchRow(
                leg, LADDER, key, 2 * index, first, second, pair_seed, None, MatchState.PENDING,
                0, "",
            )
        )  # fmt: skip
        legs.append(
            MatchRow(
                match_id(LADDER, first, second, 2 * index + 1), LADDER, key, 2 * index + 1,
                second, first, pair_seed, leg, MatchState.PENDING, 0, "",
            )
        )  # fmt: skip
    legs = legs[:results]
    stored = StoredLeague(ladder_config(idents, 2), tuple(sorted(idents)))
    store.save_league(LADDER, stored.to_json(), legs, secret)
    spent["schedule"] = time.perf_counter() - start

    start = time.perf_counter()
    for number, match in enumerate(legs):
        store.record_result(_result_row(match, secret, home_secret, logs[number % len(logs)]))
    spent["results"] = time.perf_counter() - start

    start = time.perf_counter()
    points = []
    now = time.time()
    for ident in idents[:RATED_BOTS]:
        rating = rng.gauss(0, 150)
        for step in range(RATING_POINTS):
            width = 400 / (1 + step) ** 0.5
            at = now - (RATING_POINTS - step) * 600
            rating += rng.gauss(0, 10)
            points.append(RatingPoint(ident, at, rating, rating - width, rating + width, step * 4))
    store.add_ratings(points)
    spent["ratings"] = time.perf_counter() - start
    store.close()
    shutil.copyfile(arena.store_path, home / PRISTINE)
    (home / "arena-load.json").write_text(
        json.dumps({"bots": bots, "results": results, "build_s": spent}), encoding="utf-8"
    )
    return spent


# --- the server ----------------------------------------------------------------------------------


@dataclass
class _Server:
    """``gin arena serve --no-ladder --port 0`` in its own process group."""

    process: subprocess.Popen[str]
    url: str
    port: int

    @classmethod
    def start(cls, home: Path, options: tuple[str, ...] = ("--no-ladder",)) -> _Server:
        """``gin arena serve --port 0`` with ``options`` on ``home``, once it says its address."""
        env = {**os.environ, "GIN_HOME": str(home), "COLUMNS": "200"}
        process = subprocess.Popen(
            [*GIN, "arena", "serve", *options, "--port", "0"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                line = process.stdout.readline()
                found = SERVING.search(line)
                if found:
                    return cls(process, found.group(1), int(found.group(2)))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        raise SystemExit("the arena server did not start")

    def cpu_seconds(self) -> float:
        """The server's CPU time so far (user and system, from /proc)."""
        return cpu_of(self.process.pid)

    def stop(self) -> None:
        stop_group(self.process)


def cpu_of(pid: int) -> float:
    """A process's CPU seconds so far (user and system), from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_group(process: subprocess.Popen[str]) -> None:
    """End a server started in a process group of its own: SIGTERM (it stops cleanly), then
    SIGKILL after 30 s; its output pipe closed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    if process.stdout is not None:
        process.stdout.close()


# --- the client ----------------------------------------------------------------------------------


class _Connection:
    """One keep-alive HTTP/1.1 connection (h11 over a trio socket), reopened when closed."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stream: trio.SocketStream | None = None
        self.http = h11.Connection(h11.CLIENT)

    async def request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b""
    ) -> tuple[int, bytes]:
        """Send one request; its status and body."""
        if self.stream is None or self.http.our_state is not h11.IDLE:
            await self.close()
            self.stream = await trio.open_tcp_stream("127.0.0.1", self.port)
            self.http = h11.Connection(h11.CLIENT)
        sent = [("host", f"127.0.0.1:{self.port}"), *headers]
        if body:
            sent.append(("content-length", str(len(body))))
        data = self.http.send(h11.Request(method=method, target=target, headers=sent))
        if body:
            data += self.http.send(h11.Data(data=body))
        data += self.http.send(h11.EndOfMessage())
        await self.stream.send_all(data)
        status = 0
        chunks: list[bytes] = []
        while True:
            event = self.http.next_event()
            if event is h11.NEED_DATA:
                received = await self.stream.receive_some(1 << 16)
                self.http.receive_data(received)
                continue
            if isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("closed mid-response")
        if self.http.our_state is h11.DONE and self.http.their_state is h11.DONE:
            self.http.start_next_cycle()
        else:
            await self.close()
        return status, b"".join(chunks)

    async def close(self) -> None:
        if self.stream is not None:
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await self.stream.aclose()
        self.stream = None


@dataclass
class _Kind:
    """What one page kind saw."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


def _status(status: int, body: bytes) -> str:
    """A status as the table shows it: a 429 says which limit answered (the token's rate, or
    the author's uploads waiting for their check)."""
    if status != 429:
        return str(status)
    try:
        message = str(json.loads(body).get("error", ""))
    except (ValueError, AttributeError):
        message = ""
    return (
        "429 waiting" if "waiting" in message else "429 rate" if "slow down" in message else "429"
    )


READ_MIX: Final = (("board", 0.4), ("match", 0.4), ("replay", 0.15), ("api board", 0.05))


def _bot_tar(name: str) -> bytes:
    """sample_bots/greedy renamed ``name``, as a gzip'd tar of the folder's files at its top."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / name
        shutil.copytree(
            ROOT / "sample_bots" / "greedy", folder, ignore=shutil.ignore_patterns("__pycache__")
        )
        manifest = folder / "bot.toml"
        text = manifest.read_text(encoding="utf-8")
        manifest.write_text(text.replace('name = "greedy"', f'name = "{name}"'), encoding="utf-8")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path in sorted(folder.iterdir()):
                tar.add(path, arcname=path.name)
        return buffer.getvalue()


async def _load(
    port: int,
    match_ids: list[str],
    tokens: list[str],
    tars: list[bytes],
    args: argparse.Namespace,
) -> tuple[dict[str, _Kind], float]:
    """Run the readers and the uploaders for ``args.seconds``; what each kind saw, and the
    seconds it ran."""
    kinds = {name: _Kind() for name, _ in READ_MIX}
    kinds["upload"] = _Kind()
    rng = random.Random(5)
    start = time.monotonic()
    deadline = start + args.seconds

    async def one(connection: _Connection, kind: str, call: Any) -> None:
        began = time.perf_counter()
        try:
            status, body = await call
        except (OSError, ConnectionError, trio.BrokenResourceError, h11.ProtocolError) as error:
            kinds[kind].errors[type(error).__name__] += 1
            await connection.close()
            return
        kinds[kind].latencies.append(time.perf_counter() - began)
        kinds[kind].statuses[_status(status, body)] += 1

    async def reader() -> None:
        connection = _Connection(port)
        names = [name for name, _ in READ_MIX]
        weights = [weight for _, weight in READ_MIX]
        while time.monotonic() < deadline:
            kind = rng.choices(names, weights)[0]
            target = _target(kind, rng, match_ids)
            await one(connection, kind, connection.request("GET", target, []))
        await connection.close()

    async def uploader(token: str, tar: bytes) -> None:
        connection = _Connection(port)
        headers = [("authorization", f"Bearer {token}"), ("content-type", "application/gzip")]
        while time.monotonic() < deadline:
            began = time.monotonic()
            await one(connection, "upload", connection.request("POST", "/api/bots", headers, tar))
            await trio.sleep(max(0.0, args.upload_every - (time.monotonic() - began)))
        await connection.close()

    async with trio.open_nursery() as nursery:
        for _ in range(args.readers):
            nursery.start_soon(reader)
        for token, tar in zip(tokens, tars, strict=True):
            nursery.start_soon(uploader, token, tar)
    return kinds, time.monotonic() - start


def _target(kind: str, rng: random.Random, match_ids: list[str]) -> str:
    """A page of that kind to fetch (a random match's, for match and replay pages)."""
    if kind in ("match", "replay"):
        page = f"/matches/{rng.choice(match_ids)}"
        return page if kind == "match" else f"{page}/replay"
    return {"board": "/", "api board": "/api/leaderboard"}[kind]


async def _probe(
    port: int, recent: list[str], match_ids: list[str], count: int
) -> dict[str, float]:
    """Each page kind's median latency (ms) fetched alone, one request at a time: what a
    request costs the server before any load (``old``: a match of all the ladder's, most of
    them no longer in the tree, so rendered on request)."""
    rng = random.Random(9)
    connection = _Connection(port)
    found = {}
    for kind in ("board", "match", "replay", "api board", "old match", "old replay"):
        seconds = []
        for _ in range(count):
            old = kind.startswith("old ")
            target = _target(kind.removeprefix("old "), rng, match_ids if old else recent)
            began = time.perf_counter()
            status, _ = await connection.request("GET", target, [])
            seconds.append(time.perf_counter() - began)
            assert status == 200, (target, status)
        found[kind] = _quantile(seconds, 0.5) * 1000
    await connection.close()
    return found


async def _warm(port: int, recent: list[str]) -> float:
    """Fetch the pages of each of the ``recent`` matches once (publishing those the tree does
    not hold: a ladder that ran would have published each when it was recorded); seconds."""
    began = time.perf_counter()
    connection = _Connection(port)
    for match in recent:
        for target in (f"/matches/{match}", f"/matches/{match}/replay"):
            status, _ = await connection.request("GET", target, [])
            assert status == 200, (target, status)
    await connection.close()
    return time.perf_counter() - began


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _wait_for_board(url: str, bots: int, timeout: float = 600.0) -> float:
    """Seconds until ``/api/leaderboard`` lists ``bots`` bots (its first board)."""
    import urllib.error  # noqa: PLC0415 - only here
    import urllib.request  # noqa: PLC0415

    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            with urllib.request.urlopen(url + "/api/leaderboard", timeout=30) as answer:
                board = json.load(answer)
            if len(board["bots"]) >= bots and board["series"]:
                return time.perf_counter() - start
        except urllib.error.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"no board of {bots} bots after {timeout:.0f} s")


def _restore(home: Path) -> None:
    """Put the store back as built: no uploads, no bots from an earlier run's uploaders."""
    store_path = Arena(home).store_path
    for suffix in ("-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(home / PRISTINE, store_path)
    shutil.rmtree(home / "uploads", ignore_errors=True)
    for folder in (home / "bots").glob("load-*"):
        shutil.rmtree(folder)


def main() -> None:
    """Build (or reuse) the store, serve it, load it, print the table (and ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--uploaders", type=int, default=20)
    parser.add_argument("--upload-every", type=float, default=1.0, help="seconds per uploader")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--home", type=Path, help="the store to build once and reuse")
    parser.add_argument("--probe", type=int, default=5, help="requests of each kind alone")
    parser.add_argument(
        "--recent",
        type=int,
        default=MATCH_PAGES,
        help="the readers' matches: this many of the latest (those the tree keeps)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    scratch = None
    if args.home is None:
        scratch = tempfile.TemporaryDirectory(prefix="arena-load-")
        args.home = Path(scratch.name) / "home"
    figures: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    made = args.home / "arena-load.json"
    if made.is_file():
        built = json.loads(made.read_text(encoding="utf-8"))
        if (built["bots"], built["results"]) != (args.bots, args.results):
            raise SystemExit(f"{args.home} holds {built['bots']} bots, {built['results']} results")
        console.print(f"reusing {args.home} (built in {sum(built['build_s'].values()):.0f} s)")
        _restore(args.home)
        figures["build_s"] = built["build_s"]
    else:
        console.print(f"building {args.home}: {args.bots} bots, {args.results:,} results...")
        figures["build_s"] = build_home(args.home, args.bots, args.results)
    for step, seconds in figures["build_s"].items():
        console.print(f"  build, {step}: {seconds:.1f} s")

    store = ArenaStore(Arena(args.home).store_path)
    match_ids = [result.match_id for result in store.results(LADDER)]
    recent = match_ids[-args.recent :]
    uploaders = [f"loader{index:02d}" for index in range(args.uploaders)]
    known = {name for name, _, _ in store.authors()}
    for name in uploaders:
        if name not in known:
            add_author(store, name)
    tokens = [issue_token(store, name) for name in uploaders]
    store.close()
    tars = [_bot_tar(f"load-{name}") for name in uploaders]

    start = time.perf_counter()
    server = _Server.start(args.home)
    try:
        started = time.perf_counter() - start
        board_s = _wait_for_board(server.url, args.bots)
        figures["server_start_s"] = started
        figures["first_board_s"] = board_s
        console.print(
            f"server up in {started:.1f} s; its first board ({args.bots} bots) "
            f"{board_s:.1f} s after"
        )
        warm_s = trio.run(_warm, server.port, recent)
        figures["warm_s"] = warm_s
        console.print(
            f"the pages of the {len(recent):,} latest matches, fetched once "
            f"(published if not in the tree): {warm_s:.0f} s"
        )
        probe = trio.run(_probe, server.port, recent, match_ids, args.probe)
        figures["alone_ms"] = probe
        console.print(
            f"alone (median of {args.probe}, one at a time): "
            + ", ".join(f"{kind} {ms:.0f} ms" for kind, ms in probe.items())
        )
        figures["load_average_before"] = os.getloadavg()
        server_cpu = server.cpu_seconds()
        client_cpu = os.times()
        kinds, ran = trio.run(_load, server.port, recent, tokens, tars, args)
        after = os.times()
        figures["load_average_after"] = os.getloadavg()
        server_used = server.cpu_seconds() - server_cpu
        client_used = (after.user - client_cpu.user) + (after.system - client_cpu.system)
    finally:
        server.stop()
        if scratch is not None:
            scratch.cleanup()

    table = Table(
        title=f"{args.readers} readers, {args.uploaders} uploaders, {ran:.0f} s "
        f"({args.bots} bots, {args.results:,} results)"
    )
    for column in ("kind", "requests", "req/s", "p50 ms", "p99 ms", "statuses", "errors"):
        table.add_column(column)
    figures["kinds"] = {}
    for name, kind in kinds.items():
        count = len(kind.latencies)
        statuses = " ".join(f"{code}:{n}" for code, n in sorted(kind.statuses.items()))
        errors = " ".join(f"{what}:{n}" for what, n in kind.errors.items()) or "0"
        table.add_row(
            name, str(count), f"{count / ran:.1f}", f"{_quantile(kind.latencies, 0.5) * 1000:.0f}",
            f"{_quantile(kind.latencies, 0.99) * 1000:.0f}", statuses, errors,
        )  # fmt: skip
        figures["kinds"][name] = {
            "requests": count,
            "per_s": count / ran,
            "p50_ms": _quantile(kind.latencies, 0.5) * 1000,
            "p99_ms": _quantile(kind.latencies, 0.99) * 1000,
            "statuses": dict(kind.statuses),
            "errors": dict(kind.errors),
        }
    total = sum(len(kind.latencies) for kind in kinds.values())
    console.print(table)
    console.print(
        f"all: {total / ran:.1f} req/s; CPU over the run: server {server_used / ran:.2f} cores, "
        f"this client {client_used / ran:.2f} cores; the machine's load average "
        f"{figures['load_average_before'][0]:.1f} before, "
        f"{figures['load_average_after'][0]:.1f} after (2 cores)"
    )
    figures.update(
        {"seconds": ran, "per_s": total / ran, "server_cores": server_used / ran,
         "client_cores": client_used / ran}
    )  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
