"""The hosted arena on this machine, in one run: its ladder against ``gin league run``, and its
pages before and after the published tree, beside nginx serving the same files.

``python -m benchmarks.arena_bench --ladder [--runs 3 --series 24 --jobs 2 --bots greedy,strong]``
plays, interleaved, a league of ``--series`` series between the bots (the runner of ``gin league
run``), and the arena's ladder between the same bots (its service: the ladder, the board's refresh
after each pair and the intake, as ``gin arena serve`` runs them, without the web server) until it
has recorded as many series. Each run starts from a fresh home; the time is from the start of the
run to its last result. Prints series per minute of each and their ratio (median of per-run
ratios). The issue's goal: the ladder within 10% of the league.

``python -m benchmarks.arena_bench --pages [--bots 100 --results 2000 --seconds 5 --connections
10 --home DIR --before CHECKOUT]`` builds (once, with ``--home``) the ladder-shaped store of
:mod:`benchmarks.arena_load`, then measures with wrk (``apt-get install wrk``), ``--connections``
keep-alive connections for ``--seconds`` each, the leaderboard, match pages and replay pages
(random ones of :data:`PAGE_MATCHES` finished matches) served four ways: the app rendering
each page per request (the old path: ``create_app(publish=False)``), the app serving its
published tree through Starlette (``front=False``: before the front), the app serving it from
its front, and Debian's nginx (one worker) serving that tree with the configuration of
docs/arena.md; with ``--before``, also the app of another checkout of the project (its own
``--serve``: main, say) serving its tree. Prints requests per second of each and their ratio to
nginx, and the size of the replay pages, plain and gzipped, with each one's number of hands
(issue 30's goal: well under 200 KB gzipped for a 16-hand series).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from referee.sandbox import harden_referee_process

harden_referee_process()

import trio  # noqa: E402

from benchmarks.arena_load import stop_group  # noqa: E402
from benchmarks.league_driver import league  # noqa: E402
from tournaments.arena.ladder import LADDER  # noqa: E402
from tournaments.arena.service import ArenaService  # noqa: E402
from tournaments.arena.store import ArenaStore  # noqa: E402
from tournaments.registry import Arena, submit  # noqa: E402
from tournaments.runner import LeagueRunner  # noqa: E402
from tournaments.store import MatchState  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGE_MATCHES = 200
"""The finished matches whose pages and replays the page benchmark asks for, at random."""


SKIP = 4
"""Results left out of the steady rate at each end (the start-up, and a league's last matches,
which have the machine to themselves)."""


def steady_rate(store: ArenaStore, name: str, series: int) -> float:
    """Series per minute between the results number ``SKIP`` and ``series - SKIP``, by the times
    the store recorded them."""
    times = [
        float(row[0])
        for row in store.db.execute(
            "SELECT recorded_at FROM results WHERE league = ? ORDER BY recorded_at", (name,)
        )
    ]
    window = times[SKIP : series - SKIP]
    return 60 * (len(window) - 1) / (window[-1] - window[0])


def league_rate(home: Path, bots: list[str], series: int, jobs: int) -> tuple[float, float]:
    """Series per minute of ``gin league run``'s runner: from its start, and steady."""
    arena, config = league(home, bots, series, seed=7)
    store = ArenaStore(arena.store_path)
    started = time.monotonic()
    progress = trio.run(LeagueRunner(arena, store, config, jobs).run)
    elapsed = time.monotonic() - started
    assert progress.done == series, progress
    return 60 * series / elapsed, steady_rate(store, config.name, series)


def ladder_rate(home: Path, bots: list[str], series: int, jobs: int) -> tuple[float, float]:
    """Series per minute of the arena's ladder until it has recorded ``series``: from its start,
    and steady."""
    arena = Arena(home)
    store = ArenaStore(arena.store_path)

    async def main() -> tuple[float, float]:
        for bot in bots:
            row = await submit(arena, store, ROOT / "sample_bots" / bot, None)
            store.enter(row.ident, row.name)
        service = ArenaService(arena, store, jobs=jobs, seed=7)
        started = time.monotonic()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(service.run)
            while store.counts(LADDER).get(MatchState.DONE, 0) < series:
                await trio.sleep(0.05)
            elapsed = time.monotonic() - started
            nursery.cancel_scope.cancel()
        return 60 * series / elapsed, steady_rate(store, LADDER, series)

    return trio.run(main)


def ladder_main(args: argparse.Namespace) -> None:
    """The ladder against a league (``--ladder``)."""
    bots = args.bots.split(",")
    rates: dict[str, list[tuple[float, float]]] = {"league": [], "ladder": []}
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
            rates["league"].append(league_rate(Path(one), bots, args.series, args.jobs))
            rates["ladder"].append(ladder_rate(Path(two), bots, args.series, args.jobs))
        (league_all, league_steady), (ladder_all, ladder_steady) = (
            rates["league"][-1],
            rates["ladder"][-1],
        )
        print(
            f"run {run + 1}: from the start league {league_all:.1f}, ladder {ladder_all:.1f} "
            f"series/min ({ladder_all / league_all:.3f}); steady league {league_steady:.1f}, "
            f"ladder {ladder_steady:.1f} ({ladder_steady / league_steady:.3f})",
            flush=True,
        )
    print(f"median of {args.runs} runs ({args.series} series, -j {args.jobs}, {args.bots}):")
    kinds = ("from the start", f"steady (results {SKIP}-{args.series - SKIP})")
    for index, kind in enumerate(kinds):
        leagues = [rate[index] for rate in rates["league"]]
        ladders = [rate[index] for rate in rates["ladder"]]
        ratios = [ladder / league for ladder, league in zip(ladders, leagues, strict=True)]
        print(
            f"  {kind}: league {statistics.median(leagues):.1f}, ladder "
            f"{statistics.median(ladders):.1f} series/min; ladder/league "
            f"{statistics.median(ratios):.3f} (runs {', '.join(f'{r:.3f}' for r in ratios)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", action="store_true", help="the ladder against a league")
    parser.add_argument("--pages", action="store_true", help="the pages: before, after, nginx")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--bots", default="greedy,strong")
    parser.add_argument("--field", type=int, default=100, help="--pages: bots in the store")
    parser.add_argument("--results", type=int, default=2000, help="--pages: results")
    parser.add_argument("--seconds", type=int, default=5, help="--pages: each measurement")
    parser.add_argument("--connections", type=int, default=10, help="--pages: wrk's")
    parser.add_argument("--home", type=Path, help="--pages: the store to build once and reuse")
    parser.add_argument("--before", type=Path, help="--pages: another checkout's app too")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--per-request", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-front", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-door", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        front, door = not args.no_front, not args.no_door
        serve_app(args.serve, publish=not args.per_request, front=front, door=door)
    elif args.pages:
        pages_main(args)
    else:
        ladder_main(args)


# --- the pages -----------------------------------------------------------------------------------


def serve_app(home: Path, *, publish: bool, front: bool = True, door: bool = True) -> None:
    """The arena's web app on ``home`` (no ladder) on a free port of loopback, until killed;
    says its address once its first board is computed (``front``: its pages answered before
    Starlette; ``door``: before Hypercorn too, as ``gin arena serve`` does)."""
    from tournaments.arena.server import server_config  # noqa: PLC0415
    from tournaments.arena.web import Front, create_app, serve_door  # noqa: PLC0415

    async def run() -> None:
        arena = Arena(home)
        service = ArenaService(arena, ArenaStore(arena.store_path), ladder=False)
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            app = create_app(service, publish=publish, front=front)
            config = server_config("127.0.0.1", 0)
            at_door = app if door and isinstance(app, Front) else None
            serving = partial(serve_door, app, at_door, config, shutdown_trigger=trio.sleep_forever)
            binds = await nursery.start(serving)
            while not service.board.at:
                await trio.sleep(0.05)
            print(f"serving on {binds[0]}", flush=True)

    trio.run(run)


class _Process:
    """A server in its own process group, its port read from its first line."""

    def __init__(self, command: list[str], port: int | None = None, root: Path = ROOT) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.port = port or self._read_port()
        _wait_for_port(self.port)

    def _read_port(self) -> int:
        assert self.process.stdout is not None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.process.poll() is None:
            if select.select([self.process.stdout], [], [], 0.5)[0]:
                found = re.search(r"on http://127\.0\.0\.1:(\d+)", self.process.stdout.readline())
                if found:
                    return int(found.group(1))
        self.stop()
        raise SystemExit(f"did not start: {self.process.args!r}")

    def stop(self) -> None:
        stop_group(self.process)


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.05)
    raise SystemExit(f"nothing answers on port {port}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _nginx(tree: Path, app_port: int, scratch: Path) -> _Process:
    """Debian's nginx, one worker, docs/arena.md's server block serving ``tree``."""
    from tests.test_arena_published import nginx_config  # noqa: PLC0415

    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port = _free_port()
    config = nginx_config(tree, port, app_port, scratch)
    (scratch / "nginx.conf").write_text(config)
    command = [nginx, "-c", str(scratch / "nginx.conf"), "-p", str(scratch)]
    return _Process([*command, "-e", str(scratch / "error.log")], port)


_WRK_SCRIPT = """
paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
request = function()
  return wrk.format(nil, paths[math.random(#paths)])
end
"""


def _wrk(port: int, paths: list[str], seconds: int, connections: int, scratch: Path) -> float:
    """Requests per second of wrk on ``paths`` (one at random each request); it exits if any
    answer is not 2xx."""
    listing = scratch / f"paths-{abs(hash(tuple(paths)))}.txt"
    listing.write_text("\n".join(paths) + "\n")
    script = scratch / f"{listing.stem}.lua"
    script.write_text(_WRK_SCRIPT % listing)
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", str(script)]
    out = subprocess.run(
        [*command, f"http://127.0.0.1:{port}/"], capture_output=True, text=True, check=True
    ).stdout
    if "Non-2xx" in out:
        raise SystemExit(f"wrk saw errors on {paths[0]}…:\n{out}")
    found = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    assert found, out
    return float(found.group(1))


def _page_paths(store: ArenaStore) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The paths asked for, by page kind, and each match's number of hands."""
    import random  # noqa: PLC0415
    from urllib.parse import quote  # noqa: PLC0415

    done = [row for row in store.results(LADDER) if not store.mirror_pending(row.match_id)]
    chosen = random.Random(5).sample(done, min(PAGE_MATCHES, len(done)))
    counted: dict[str, int] = {}  # the logs' own (the summaries of this store are synthetic)
    for row in chosen:
        if row.log_path not in counted:
            text = Path(row.log_path).read_text(encoding="utf-8")
            counted[row.log_path] = text.count('"type":"hand_start"')
    hands = {row.match_id: counted[row.log_path] for row in chosen}
    ids = [quote(row.match_id, safe="@~") for row in chosen]
    paths = {
        "board": ["/"],
        "match page": [f"/matches/{mid}" for mid in ids],
        "replay": [f"/matches/{mid}/replay" for mid in ids],
    }
    return paths, hands


def _warm(port: int, paths: dict[str, list[str]]) -> float:
    """Ask once for every path (what is not published yet is published); the seconds taken."""
    import urllib.request  # noqa: PLC0415

    started = time.perf_counter()
    for path in [path for kind in paths.values() for path in kind]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as answer:
            answer.read()
    return time.perf_counter() - started


def _replay_sizes(tree: Path, hands: dict[str, int]) -> list[tuple[int, int, int]]:
    """(hands, bytes, gzipped bytes) of each published referee's-view replay."""
    sizes = set()
    for match_id, count in hands.items():
        page = tree / "matches" / match_id / "replay.html"
        if page.is_file():
            sizes.add((count, page.stat().st_size, Path(f"{page}.gz").stat().st_size))
    return sorted(sizes)


def pages_main(args: argparse.Namespace) -> None:
    """Board, match and replay pages: per request, published, nginx (``--pages``)."""
    from benchmarks.arena_load import build_home  # noqa: PLC0415

    if shutil.which("wrk") is None:
        raise SystemExit("the page benchmark needs wrk: apt-get install wrk")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        home = args.home or scratch / "home"
        if not (home / "arena-load.json").is_file():
            spent = build_home(home, args.field, args.results)
            print(
                f"built {home}: {args.field} bots, {args.results} results, "
                f"{sum(spent.values()):.0f} s"
            )
        store = ArenaStore(Arena(home).store_path)
        paths, hands = _page_paths(store)
        store.close()
        shutil.rmtree(home / "public", ignore_errors=True)
        serve = [sys.executable, "-m", "benchmarks.arena_bench", "--serve", str(home)]
        rates: dict[str, dict[str, float]] = {}  # (the door: Hypercorn alone under the rest)

        def measure(name: str, port: int) -> None:
            rates[name] = {
                kind: _wrk(port, listed, args.seconds, args.connections, scratch)
                for kind, listed in paths.items()
            }
            print(
                f"  {name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in rates[name].items()),
                flush=True,
            )

        before = _Process([*serve, "--per-request"])
        try:
            measure("app, rendered per request", before.port)
        finally:
            before.stop()
        if args.before is not None:
            _measure_tree(f"{args.before.name}, published tree", serve, paths, measure, args.before)
        _measure_tree("app, tree via Starlette", [*serve, "--no-front"], paths, measure)
        _measure_tree("app, ASGI front", [*serve, "--no-door"], paths, measure)
        after = _Process(serve)
        try:
            warmed = _warm(after.port, paths)
            print(
                f"  (published {sum(map(len, paths.values()))} pages on first request: "
                f"{warmed:.1f} s)"
            )
            measure("app, published tree", after.port)
            (scratch / "nginx").mkdir()
            nginx = _nginx(home / "public", after.port, scratch / "nginx")
            try:
                measure("nginx, published tree", nginx.port)
            finally:
                nginx.stop()
        finally:
            after.stop()
        _report(args, rates, _replay_sizes(home / "public", hands))


def _measure_tree(
    name: str,
    serve: list[str],
    paths: dict[str, list[str]],
    measure: Callable[[str, int], None],
    root: Path = ROOT,
) -> None:
    """Measure an app serving its published tree (``root``: the checkout it runs from)."""
    server = _Process(serve, root=root)
    try:
        _warm(server.port, paths)
        measure(name, server.port)
    finally:
        server.stop()


def _report(
    args: argparse.Namespace, rates: dict[str, dict[str, float]], sizes: list[tuple[int, int, int]]
) -> None:
    nginx = rates["nginx, published tree"]
    print(
        f"\nrequests/s, wrk -c{args.connections} -d{args.seconds}s, {args.field} bots, "
        f"{args.results} results, {PAGE_MATCHES} random matches (ratio to nginx):"
    )
    print(f"  {'':28}" + "".join(f"{kind:>22}" for kind in nginx))
    for name, found in rates.items():
        cells = [f"{found[k]:>10,.0f} ({found[k] / nginx[k]:.3f})" for k in nginx]
        print(f"  {name:28}" + "".join(f"{cell:>22}" for cell in cells))
    print("replay pages (referee's view): hands, bytes, gzipped bytes")
    for count, plain, packed in sizes:
        print(f"  {count:3} hands: {plain / 1024:8.1f} KiB, gzipped {packed / 1024:6.1f} KiB")


if __name__ == "__main__":
    main()
