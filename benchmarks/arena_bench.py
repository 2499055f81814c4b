"""The hosted arena's ladder against ``gin league run``, on this machine, in one run.

``python -m benchmarks.arena_bench --ladder [--runs 3 --series 24 --jobs 2 --bots greedy,strong]``
plays, interleaved, a league of ``--series`` series between the bots (the runner of ``gin league
run``), and the arena's ladder between the same bots (its service: the ladder, the board's refresh
after each pair and the intake, as ``gin arena serve`` runs them, without the web server) until it
has recorded as many series. Each run starts from a fresh home; the time is from the start of the
run to its last result. Prints series per minute of each and their ratio (median of per-run
ratios). The issue's goal: the ladder within 10% of the league.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from referee.sandbox import harden_referee_process

harden_referee_process()

import trio  # noqa: E402

from benchmarks.league_driver import league  # noqa: E402
from tournaments.arena.ladder import LADDER  # noqa: E402
from tournaments.arena.service import ArenaService  # noqa: E402
from tournaments.arena.store import ArenaStore  # noqa: E402
from tournaments.registry import Arena, submit  # noqa: E402
from tournaments.runner import LeagueRunner  # noqa: E402
from tournaments.store import MatchState  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", action="store_true", help="the ladder against a league")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--bots", default="greedy,strong")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
