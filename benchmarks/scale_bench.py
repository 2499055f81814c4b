"""Standings, status and verify at scale, and the runner's memory (``benchmarks.scale_bench``).

1. A synthetic league (:func:`synthetic_league`): ``--bots`` bots registered in a real store, a
   round robin scheduled by ``tournaments.league``, and ``--results`` results recorded one by one
   with :meth:`Store.record_result`, as the runner records them, without playing. Each result's
   summary is counted from a synthetic log (:func:`synthetic_log`: a header naming the match,
   its seats' registry hashes and the seeds the league's secret gives its bots; hand ends; a
   result record) as a worker counts it from a played match. The log folder holds an empty file
   per result, so that what verify does with the folder (stat, glob, resolve) is real.
2. Timed on it: the standings (read and computed, then printed as a table), ``gin league
   status`` and ``gin league verify`` by their functions, and ``gin league standings`` and
   ``gin league status`` once each as a subprocess (start-up included).
   Verify: the log files are not real logs (100,000 real ones would take hours to play), so
   verify is timed with its log reading and replay (``read_log`` and ``verify_records``) swapped
   for the synthetic log of each match and a verified report: that is everything verify does
   except reading and replaying the log files. What reading and replaying a real log costs is
   timed apart, on real logs of matches played in-process (``--real-logs``), and given per log.
3. The runner's memory: a league of ``max(--series)`` series played with the scripted executor
   (``tournaments.executors.fake``: no processes, trio's mock clock), the process's RSS and the
   traced Python memory taken after each of ``--series``; the fake executor's own lists of jobs
   and spans (a test's record of what it was asked) are emptied as it goes, so that what grows
   is the runner's. A second, traced run compares tracemalloc snapshots and names the lines that
   grew most.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import gc
import hashlib
import io
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from unittest import mock

import trio
import trio.testing
from rich.console import Console
from rich.table import Table

from benchmarks.harness import rss_kib
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.match import MatchConfig, MatchEnd, SeatStats, play_match
from referee.matchlog import MatchLog
from referee.replay import (
    HandEndRecord,
    Header,
    MatchLogData,
    ResultRecord,
    SeatIdentity,
    VerifyReport,
    VerifyStatus,
)
from referee.rules import HandEnd, RuleParams, greedy_policy, patient_policy
from referee.seats import BotIdentity, InProcessSeat
from tournaments.audit import AuditReport, audit
from tournaments.executors.fake import FakeExecutor
from tournaments.formats.hands import HandStats, hand_stats, logged_hands
from tournaments.formats.records import MatchSummary
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import LeagueConfig, create_league
from tournaments.registry import Arena, parse_spec
from tournaments.runner import LeagueRunner, Progress
from tournaments.stats.standings import Standings, compute, read_standings
from tournaments.store import BotRow, MatchRow, MatchState, ResultRow, Store

LEAGUE: Final = "scale"
LOG_FORMAT: Final = 3
console = Console()


# --- the synthetic league ----------------------------------------------------------------------


def bot_hash(name: str) -> str:
    """A synthetic bot's registry hash (what its seats' hellos name)."""
    return hashlib.sha256(name.encode()).hexdigest()


def synthetic_league(
    home: Path,
    results: int,
    bots: int,
    *,
    seed: int = 19,
    failed: int = 3,
    log_files: bool = True,
) -> Arena:
    """A league of ``bots`` bots with ``results`` results recorded (the rest of its schedule
    pending, ``failed`` of those failed), in a fresh arena at ``home``; see the module's notes.
    The same arguments give the same results (the league's secret and the store's own are
    random, so the seeds differ)."""
    arena = Arena(home)
    store = arena.open_store()
    names = [f"bot{index:02d}" for index in range(bots)]
    for index, name in enumerate(names):
        row = BotRow(name, "1", bot_hash(name), home / "src" / name, "", "", 1e9 + index)
        store.add_bot(row)
    pairings = bots * (bots - 1) // 2
    series = max(2, -(-results // pairings))
    series += series % 2  # duplicate pairs: even
    data = {"name": LEAGUE, "seed": seed, "bots": names, "series_per_pairing": series}
    create_league(store, LeagueConfig.from_dict(data))
    secret = store.league_secret(LEAGUE)
    home_secret = store.secret("home")
    logs = arena.logs_dir(LEAGUE)
    logs.mkdir(parents=True, exist_ok=True)
    left: list[str] = []
    for count, match in enumerate(store.pending(LEAGUE)):
        if count >= results:
            left.append(match.match_id)
            continue
        path = logs / f"{match.match_id}.jsonl"
        log = synthetic_log(match, secret, home_secret)
        if log_files:
            path.touch()
        store.claim(match.match_id)
        store.record_result(result_row(match, log, path))
    for match_id in left[:failed]:
        store.mark(match_id, MatchState.FAILED, "worker failed: exit 1: scripted")
    store.close()
    return arena


def synthetic_log(
    match: MatchRow,
    secret: bytes | None,
    home_secret: bytes,
) -> MatchLogData:
    """A log's records for a match, made up but consistent (hands add up to the games, the games
    to the winner, faults to the seats' statistics), decided by the seats' :func:`strength`; the
    same match id gives the same log, whatever the seeds."""
    rng = random.Random(match.match_id)
    edge = strength(match.seat0) - strength(match.seat1)
    p_hand = 1 / (1 + 10 ** (-edge / 4))
    records: list[HandEndRecord | ResultRecord] = []
    points = [0, 0]
    game_winners: list[int | None] = []
    hand = 0
    for _game in range(3):
        game = [0, 0]
        while max(game) < 100 and hand < 60:
            hand += 1
            if rng.random() < 0.05:
                records.append(_hand(hand, HandEnd.STOCK_EXHAUSTED, None, 0, None, points))
                continue
            winner = 0 if rng.random() < p_hand else 1
            how = rng.choice((HandEnd.KNOCK, HandEnd.KNOCK, HandEnd.GIN, HandEnd.UNDERCUT))
            knocker = 1 - winner if how is HandEnd.UNDERCUT else winner
            score = rng.randint(5, 45)
            game[winner] += score
            points[winner] += score
            records.append(_hand(hand, how, winner, score, knocker, points))
        game_winners.append(None if game[0] == game[1] else int(game[1] > game[0]))
    faults: tuple[Fault, ...] = ()
    forfeited: tuple[int, ...] = ()
    end = MatchEnd.COMPLETE
    if rng.random() < 0.01:
        seat = rng.randrange(2)
        faults = (Fault(seat, FaultKind.TIMEOUT, "no answer in time", 7, 1500.0),)
        if rng.random() < 0.2:
            forfeited, end = (seat,), MatchEnd.FORFEIT
    wins = [game_winners.count(0), game_winners.count(1)]
    match_winner = (
        1 - forfeited[0] if forfeited else None if wins[0] == wins[1] else int(wins[1] > wins[0])
    )
    stats = tuple(
        SeatStats(
            rng.randint(50, 200),
            round(rng.uniform(0.2, 5.0), 3),
            round(rng.uniform(5.0, 60.0), 3),
            sum(1 for fault in faults if fault.seat == seat),
            tuple(("timeout", 1) for fault in faults if fault.seat == seat),
        )
        for seat in (0, 1)
    )
    totals = (tuple(points[:1]), tuple(points[1:]))
    records.append(
        ResultRecord(
            hand + 2,
            match.match_id,
            match_winner,
            end.value,
            forfeited,
            totals,
            tuple(game_winners),
            hand,
            faults,
            stats,
            match.seed,
        )
    )
    seats = tuple(
        SeatIdentity(*parse_spec(ident), bot_hash(parse_spec(ident)[0]))  # type: ignore[arg-type]
        for ident in (match.seat0, match.seat1)
    )
    header = Header(
        1,
        LOG_FORMAT,
        match.match_id,
        "2026-01-01T00:00:00Z",
        RuleParams(),
        "0" * 64,
        0,
        TimeControl(),
        FaultPolicy(),
        (),
        (seats[0], seats[1]),
        league_bot_seeds(secret, home_secret, match.match_id),
    )
    return MatchLogData(None, header, tuple(records))


def _hand(  # noqa: PLR0917 - a hand end's fields
    number: int,
    end: HandEnd,
    winner: int | None,
    points: int,
    knocker: int | None,
    totals: list[int],
) -> HandEndRecord:
    return HandEndRecord(
        number + 1, number, end.value, winner, points, knocker, (), None, None,
        ((totals[0],), (totals[1],)), 10, (),
    )  # fmt: skip


def result_row(match: MatchRow, log: MatchLogData, path: Path, league: str = LEAGUE) -> ResultRow:
    """The result the runner would record for a match of ``league`` that played ``log``."""
    record = log.result
    assert record is not None
    summary = MatchSummary(
        dataclasses.replace(record, line=0, match_id=match.match_id, salt=None),
        hand_stats(logged_hands(log)),
        (match.seat0, match.seat1),
        str(path),
    )
    return ResultRow(
        match.match_id,
        league,
        summary.winner,
        summary.end,
        "synthetic",
        summary,
        str(path),
        (match.seat0, match.seat1),
        match.duplicate_of,
    )


@contextlib.contextmanager
def synthetic_logs(store: Store, making: list[float] | None = None) -> Iterator[None]:
    """Verify reads each result's synthetic log (rebuilt from its match) instead of its file,
    and finds it verified: everything but reading and replaying log files stays as it is.
    ``making`` gets the seconds spent making the synthetic logs (not verify's)."""
    matches = {match.match_id: match for match in store.matches(LEAGUE)}
    secret, home_secret = store.league_secret(LEAGUE), store.secret("home")
    spent = making if making is not None else []

    def read(path: Path) -> MatchLogData:
        start = time.perf_counter()
        log = synthetic_log(matches[path.stem], secret, home_secret)
        spent.append(time.perf_counter() - start)
        return log

    def verified(log: MatchLogData) -> VerifyReport:
        return VerifyReport(log.path, VerifyStatus.VERIFIED, None, log.header.match_id)

    with (
        mock.patch("tournaments.audit.read_log", read),
        mock.patch("tournaments.audit.verify_records", verified),
    ):
        yield


def strength(ident: str) -> float:
    """A synthetic bot's strength (a hand's odds: 10 to the difference over 4), from its name."""
    return random.Random(ident).gauss(0.0, 1.0)


# --- timing ------------------------------------------------------------------------------------


@dataclass
class Timed:
    """One measured step: seconds (median of runs) and the traced peak of Python memory."""

    what: str
    seconds: list[float]
    peak_mib: float
    note: str = ""

    @property
    def median(self) -> float:
        """The median of the runs."""
        return sorted(self.seconds)[len(self.seconds) // 2]


def timed(what: str, call: Callable[[], object], runs: int, note: str = "") -> Timed:
    """Time ``call`` ``runs`` times, then once more traced for its peak memory."""
    seconds = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    gc.collect()
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return Timed(what, seconds, peak / 2**20, note)


def profile(call: Callable[[], object], lines: int = 18) -> str:
    """cProfile's top lines of one call, by cumulative time."""
    profiler = cProfile.Profile()
    profiler.runcall(call)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(lines)
    return out.getvalue()


def standings_of(store: Store) -> Standings:
    """What ``gin league standings`` computes (and reads: :func:`read_standings`)."""
    return read_standings(store, LEAGUE)


def status_of(store: Store) -> tuple[dict[MatchState, int], list[MatchRow]]:
    """What ``gin league status`` reads."""
    return store.counts(LEAGUE), store.matches(LEAGUE, MatchState.FAILED)


def verify_of(store: Store, arena: Arena, making: list[float] | None = None) -> AuditReport:
    """``gin league verify``'s check, the log files swapped for the synthetic logs (``making``:
    see :func:`synthetic_logs`)."""
    with synthetic_logs(store, making):
        return audit(store, LEAGUE, arena.logs_dir(LEAGUE))


def verify_seconds(store: Store, arena: Arena, runs: int) -> Timed:
    """Verify's store side: its seconds less those spent making the synthetic logs."""
    seconds = []
    for _ in range(runs):
        making: list[float] = []
        gc.collect()
        start = time.perf_counter()
        verify_of(store, arena, making)
        seconds.append(time.perf_counter() - start - sum(making))
    note = "log reading and replay swapped for synthetic logs; their making not counted"
    return Timed("verify: store side", seconds, 0.0, note)


def cli_seconds(home: Path, *args: str) -> tuple[float, int]:
    """Wall seconds of one ``gin`` command as a subprocess, and its exit code."""
    gin = Path(sys.executable).with_name("gin")
    env = {**os.environ, "GIN_HOME": str(home), "COLUMNS": "200"}
    start = time.perf_counter()
    done = subprocess.run([str(gin), *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - start, done.returncode


def real_log_seconds(home: Path, count: int) -> tuple[float, int]:
    """Verify's seconds per real log (read, replayed, checked): ``count`` matches of greedy
    against patient played in-process into a league of two, then verified; and how many
    verified."""
    arena = Arena(home)
    store = arena.open_store()
    policies = {"north": greedy_policy, "south": patient_policy}
    for index, name in enumerate(policies):
        store.add_bot(BotRow(name, "1", bot_hash(name), home / name, "", "", 1e9 + index))
    data = {"name": LEAGUE, "seed": 3, "bots": list(policies), "series_per_pairing": count}
    create_league(store, LeagueConfig.from_dict(data))
    logs = arena.logs_dir(LEAGUE)
    logs.mkdir(parents=True, exist_ok=True)
    secret, home_secret = store.league_secret(LEAGUE), store.secret("home")

    def seat(ident: str) -> InProcessSeat:
        name, version = parse_spec(ident)
        assert version is not None
        playing = InProcessSeat(policies[name], name, version)
        playing.identity = BotIdentity(name, version, bot_hash(name))
        return playing

    for match in list(store.pending(LEAGUE)):
        path = logs / f"{match.match_id}.jsonl"
        config = MatchConfig(
            match.match_id,
            match.seed,
            fault_policy=FaultPolicy(strikes=3),
            bot_seeds=league_bot_seeds(secret, home_secret, match.match_id),
        )

        async def main(match: MatchRow = match, path: Path = path, config: Any = config) -> Any:
            with MatchLog(path) as log:
                return await play_match((seat(match.seat0), seat(match.seat1)), config, log)

        result = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        summary = MatchSummary.of(result, path)
        store.claim(match.match_id)
        store.record_result(
            ResultRow(
                match.match_id,
                LEAGUE,
                summary.winner,
                summary.end,
                "played in-process",
                summary,
                str(path),
                (match.seat0, match.seat1),
                match.duplicate_of,
            )
        )
    start = time.perf_counter()
    report = audit(store, LEAGUE, logs)
    seconds = time.perf_counter() - start
    if not report.ok:
        console.print(f"[red]real logs: {len(report.discrepancies)} mismatches[/red]")
    return seconds / count, report.verified


# --- the runner's memory -----------------------------------------------------------------------


def runner_memory(marks: list[int], *, traced: bool) -> dict[str, Any]:
    """Play ``max(marks)`` series of a two-bot league with the fake executor; the RSS (KiB) and,
    ``traced``, the traced Python memory (KiB) after each mark, the traced peak, and the lines
    whose memory grew most between the first mark and the last."""
    found: dict[str, Any] = {"rss_kib": {}, "traced_kib": {}}
    snapshots: dict[int, tracemalloc.Snapshot] = {}
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        arena = Arena(home)
        store = arena.open_store()
        for index, name in enumerate(("north", "south")):
            store.add_bot(BotRow(name, "1", bot_hash(name), home / name, "", "", 1e9 + index))
        series = max(marks)
        data = {"name": "memory", "seed": 5, "bots": ["north", "south"]}
        config = LeagueConfig.from_dict({**data, "series_per_pairing": series + series % 2})
        create_league(store, config)
        executor = FakeExecutor(4, seconds=lambda _job: 1.0)
        left = sorted(marks)

        def listen(progress: Progress) -> None:
            executor.jobs.clear()  # the fake's record of what it was asked, not the runner's
            executor.spans.clear()
            while left and progress.done >= left[0]:
                mark = left.pop(0)
                gc.collect()
                found["rss_kib"][mark] = rss_kib()
                if traced:
                    found["traced_kib"][mark] = tracemalloc.get_traced_memory()[0] // 1024
                    snapshots[mark] = tracemalloc.take_snapshot()

        if traced:
            tracemalloc.start(4)
        runner = LeagueRunner(arena, store, config, 4, executor=executor, listener=listen)
        start = time.perf_counter()
        progress = trio.run(runner.run, clock=trio.testing.MockClock(autojump_threshold=0))
        found["seconds"] = time.perf_counter() - start
        found["done"] = progress.done
        if traced:
            found["traced_peak_kib"] = tracemalloc.get_traced_memory()[1] // 1024
            tracemalloc.stop()
            first, last = min(snapshots), max(snapshots)
            grown = sorted(
                snapshots[last].compare_to(snapshots[first], "traceback"),
                key=lambda stat: -stat.size_diff,
            )
            found["grew"] = [
                {
                    "kib": round(stat.size_diff / 1024, 1),
                    "blocks": stat.count_diff,
                    "where": [f"{frame.filename}:{frame.lineno}" for frame in stat.traceback][-4:],
                }
                for stat in grown[:6]
            ]
        store.close()
    return found


# --- the ratings of large fields ---------------------------------------------------------------


def rated_results(
    bots: int, per_bot: int = 100, *, seed: int = 7, band: int | None = None
) -> list[ResultRow]:
    """About ``bots * per_bot`` results of a field with Bradley-Terry strengths (normal, sd 200
    Elo), in duplicate pairs of two legs with seats swapped, each leg won with the model's
    probability: the opponents of each pair drawn at random, or within ``band`` places of the
    bot in strength order (a ladder's pairing). Only what the standings read is filled in; the
    same arguments give the same results."""
    rng = random.Random(f"{bots}/{per_bot}/{seed}/{band}")
    elo = sorted(rng.gauss(0.0, 200.0) for _ in range(bots))
    names = [f"r{index:04d}@1" for index in range(bots)]
    results = []
    for pair in range(bots * per_bot // 2):
        i = rng.randrange(bots)
        if band is None:
            j = i
            while j == i:
                j = rng.randrange(bots)
        else:
            j = min(bots - 1, max(0, i + rng.choice([k for k in range(-band, band + 1) if k])))
            if j == i:
                j = i - 1 if i else 1
        p = 1 / (1 + 10 ** ((elo[j] - elo[i]) / 400))
        first = f"p{pair:06d}a"
        for leg, (seat0, seat1) in enumerate(((i, j), (j, i))):
            won_by_i = rng.random() < p
            winner = (0 if seat0 == i else 1) if won_by_i else (1 if seat0 == i else 0)
            match_id = first if leg == 0 else f"p{pair:06d}b"
            points = (rng.randint(0, 300), rng.randint(0, 300))
            result = ResultRecord(
                line=0,
                match_id=match_id,
                seed=pair,
                winner=winner,
                end=MatchEnd.COMPLETE.value,
                forfeited=(),
                totals=((points[0],), (points[1],)),
                game_winners=(winner, winner),
                hands=10,
                faults=(),
                stats=(SeatStats(50, 1.0, 5.0, 0), SeatStats(50, 1.0, 5.0, 0)),
            )
            summary = MatchSummary(
                result,
                (
                    HandStats(hands_won=5, points=points[0]),
                    HandStats(hands_won=5, points=points[1]),
                ),
                (names[seat0], names[seat1]),
            )
            results.append(
                ResultRow(
                    match_id,
                    LEAGUE,
                    winner,
                    MatchEnd.COMPLETE,
                    "synthetic",
                    summary,
                    "",
                    (names[seat0], names[seat1]),
                    None if leg == 0 else first,
                )
            )
    return results


def ratings_side(fields: list[int], runs: int, figures: dict[str, Any]) -> None:
    """Time :func:`compute` (the standings: counts, ratings and every pairing's line) on fields
    of each size in ``fields`` with 100 results per bot (:func:`rated_results`): wall seconds
    and the process's CPU seconds (less sensitive to a loaded machine), medians of ``runs``."""
    table = Table(title=f"standings of fields of 100 results per bot (median of {runs})")
    for column in ("bots", "results", "pairings", "wall s", "CPU s", "CPU runs", "intervals"):
        table.add_column(column)
    found = figures.setdefault("ratings", [])
    for bots in fields:
        results = rated_results(bots)
        wall, cpu = [], []
        for _ in range(runs):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            standings = compute(LEAGUE, results)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        median_wall, median_cpu = statistics.median(wall), statistics.median(cpu)
        intervals = "approximate" if standings.approximate else "exact"
        table.add_row(
            str(bots), f"{len(results):,}", f"{len(standings.pairwise) // 2:,}",
            f"{median_wall:.2f}", f"{median_cpu:.2f}", " ".join(f"{s:.2f}" for s in cpu),
            intervals,
        )  # fmt: skip
        found.append(
            {"bots": bots, "results": len(results), "wall_seconds": wall, "cpu_seconds": cpu,
             "approximate": standings.approximate}
        )  # fmt: skip
    console.print(table)


# --- the report --------------------------------------------------------------------------------


def main() -> None:
    """Build the league, time each step, print the tables (and ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each step")
    parser.add_argument("--real-logs", type=int, default=40, help="real logs to time verify on")
    parser.add_argument(
        "--series", type=int, nargs="+", default=[100, 1000, 10_000], help="runner memory marks"
    )
    parser.add_argument(
        "--runner-only", action="store_true", help="only the runner's memory (a fresh process)"
    )
    parser.add_argument(
        "--ratings-only",
        type=int,
        nargs="*",
        metavar="BOTS",
        help="only time the standings of fields of these sizes (default 50 150 200 400 1000)",
    )
    parser.add_argument("--home", type=Path, help="keep the synthetic league here (reused)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top lines")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    console.print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loadavg "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    figures: dict[str, Any] = {"results": args.results, "bots": args.bots}
    if args.ratings_only is not None:
        ratings_side(args.ratings_only or [50, 150, 200, 400, 1000], args.runs, figures)
        args.runner_only, args.series = True, []
    if not args.runner_only:
        store_side(args, figures)
    if args.series:
        runner_side(args.series, figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))


def store_side(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """Build (or reuse) the synthetic league; time standings, status and verify on it."""
    with contextlib.ExitStack() as stack:
        if args.home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "home"
        else:
            home = args.home
        if not (home / "arena.sqlite").exists():
            start = time.perf_counter()
            synthetic_league(home, args.results, args.bots)
            figures["build_seconds"] = round(time.perf_counter() - start, 1)
            console.log(f"built the synthetic league in {figures['build_seconds']} s")
        arena = Arena(home)
        store = arena.open_store()
        steps = [
            timed("standings: read results", lambda: store.results(LEAGUE), args.runs),
            timed("standings: read and compute", lambda: standings_of(store), args.runs),
            timed("status: counts and failed", lambda: status_of(store), args.runs),
            verify_seconds(store, arena, args.runs),
        ]
        report = verify_of(store, arena)
        figures["verify_ok"] = report.ok
        figures["verify_results"] = report.results
        if not report.ok:
            console.print(f"[red]verify found {len(report.discrepancies)} mismatches[/red]")
            for found in report.discrepancies[:5]:
                console.print(f"  {found}")
        if args.profile:
            for name, call in (
                ("standings", lambda: standings_of(store)),
                ("verify", lambda: verify_of(store, arena)),
            ):
                console.print(f"[bold]profile: {name}[/bold]")
                console.print(profile(call), markup=False, highlight=False)
        for command in (("league", "standings", LEAGUE), ("league", "status", LEAGUE)):
            seconds, code = cli_seconds(home, *command)
            steps.append(Timed(f"gin {' '.join(command)} (subprocess)", [seconds], 0.0))
            if code:
                console.print(f"[red]gin {' '.join(command)} exited {code}[/red]")
        store.close()
    table = Table(title=f"{args.results:,} results, {args.bots} bots (median of {args.runs})")
    for column in ("step", "seconds", "runs", "traced peak MiB", "note"):
        table.add_column(column)
    for step in steps:
        runs = " ".join(f"{s:.2f}" for s in step.seconds)
        peak = f"{step.peak_mib:.0f}" if step.peak_mib else "-"
        table.add_row(step.what, f"{step.median:.2f}", runs, peak, step.note)
    console.print(table)
    figures["steps"] = [
        {"what": s.what, "seconds": s.median, "runs": s.seconds, "peak_mib": round(s.peak_mib, 1)}
        for s in steps
    ]
    if args.real_logs:
        with tempfile.TemporaryDirectory() as folder:
            per_log, verified = real_log_seconds(Path(folder) / "home", args.real_logs)
        figures["verify_real_log_seconds"] = per_log
        console.print(
            f"verify of real logs: {per_log * 1000:.1f} ms per log ({verified} of "
            f"{args.real_logs} verified): {per_log * args.results:.0f} s of log replay for "
            f"{args.results:,} real logs, on one core"
        )


def runner_side(series: list[int], figures: dict[str, Any]) -> None:
    """The runner's memory over ``series``, plain then traced (run it in a fresh process:
    ``--runner-only``; after the store side, RSS holds what that freed)."""
    if series:
        plain = runner_memory(series, traced=False)
        traced = runner_memory(series, traced=True)
        figures["runner"] = {"plain": plain, "traced": traced}
        memory = Table(title="The runner's memory, fake executor")
        for column in ("series done", "RSS KiB", "traced KiB"):
            memory.add_column(column)
        for mark in sorted(plain["rss_kib"]):
            memory.add_row(
                f"{mark:,}", str(plain["rss_kib"][mark]), str(traced["traced_kib"].get(mark, "-"))
            )
        console.print(memory)
        console.print(
            f"{plain['done']:,} series in {plain['seconds']:.1f} s; traced peak "
            f"{traced['traced_peak_kib']:,} KiB; grew most from the first mark to the last:"
        )
        for grew in traced["grew"]:
            console.print(f"  {grew['kib']} KiB in {grew['blocks']} blocks: {grew['where']}")


if __name__ == "__main__":
    main()
