"""What the arena's published tree costs, in one run: its bytes per match, and a board's bot
pages at 1,000 bots (issue 30's hostile review).

``python -m benchmarks.publish_bench --home DIR [--bots 1000 --results 100000 --matches 40]``
builds once (reused after) the ladder-shaped store of :mod:`benchmarks.arena_load` at ``DIR``,
and on the arena's web app over it (no server, no ladder, the tree emptied first):

1. **bytes per match**: the pages of ``--matches`` finished matches published as the ladder does
   when it records them (each match page and its three replay views, with their ``.gz``): the
   bytes under ``public/matches`` per match, and the most the tree keeps of them
   (``MATCH_PAGES`` matches, where the branch has that limit);
2. **a board's bot pages**: the seconds to render every bot's page on a board (what each board
   did before only a changed page was rendered), against ``Published.board_shown`` on the board
   after it when nothing changed, and after one more duplicate pair is recorded (a new board),
   with the pages it rendered. The fit of each board is timed apart; it is not the pages' time.

The logs of the store's results are a handful of real greedy-patient series (13 to 18 hands).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
from pathlib import Path

import trio

from benchmarks.arena_load import PRISTINE, _restore, build_home
from tournaments.arena import web
from tournaments.arena.board import Board, compute_board
from tournaments.arena.ladder import LADDER
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore
from tournaments.arena.web import PUBLIC, Published, create_app
from tournaments.league import match_id
from tournaments.registry import Arena
from tournaments.store import MatchRow, MatchState


def _home(home: Path, bots: int, results: int) -> None:
    """The store built once at ``home`` (put back as built when reused), its tree emptied."""
    made = home / "arena-load.json"
    if made.is_file():
        built = json.loads(made.read_text(encoding="utf-8"))
        if (built["bots"], built["results"]) != (bots, results):
            raise SystemExit(f"{home} holds {built['bots']} bots, {built['results']} results")
        _restore(home)
    else:
        print(f"building {home}: {bots} bots, {results:,} results...", flush=True)
        build_home(home, bots, results)
    assert (home / PRISTINE).is_file()
    shutil.rmtree(home / PUBLIC, ignore_errors=True)


def _timed(what: str, call: object, *args: object) -> tuple[object, float]:
    assert callable(call)
    start = time.perf_counter()
    value = call(*args)
    seconds = time.perf_counter() - start
    print(f"  {what}: {seconds:.2f} s", flush=True)
    return value, seconds


def bytes_per_match(published: Published, store: ArenaStore, count: int) -> None:
    """Publish ``count`` finished matches' pages; their bytes on disk, per match."""
    ids = [row.match_id for row in store.results(LADDER)][:count]
    finished = [i for i in ids if not store.mirror_pending(i)][:count]
    start = time.perf_counter()
    published._publish_finished(store, finished)
    seconds = time.perf_counter() - start
    folder = published.tree.root / "matches"
    files = [file for file in folder.rglob("*") if file.is_file()]
    total = sum(file.stat().st_size for file in files)
    plain = sum(file.stat().st_size for file in files if file.suffix != ".gz")
    replay = sum(f.stat().st_size for f in files if f.name == "replay.html")
    print(
        f"{len(finished)} matches published in {seconds:.1f} s: {total / len(finished) / 1024:.0f}"
        f" KiB a match on disk ({plain / len(finished) / 1024:.0f} KiB plain, the rest .gz);"
        f" the referee's replay {replay / len(finished) / 1024:.0f} KiB"
    )
    limit = getattr(web, "MATCH_PAGES", None)  # none before the tree was bounded
    if limit is None:
        print("  the tree keeps every match: it grows by that much a match, for ever")
    else:
        most = limit * total / len(finished) / 2**20
        print(f"  the tree keeps {limit} matches' pages: at most {most:.0f} MiB of them")


def _every_bot(published: Published, store: ArenaStore, board: Board) -> None:
    """Every bot's page rendered, as each board did before."""
    for row in board.rows:
        published._publish_bot(store, row.ident, board)


def _one_more_pair(store: ArenaStore, board: Board) -> None:
    """A pair between the board's first two bots, recorded (copies of a pair's results)."""
    first, second = sorted(row.ident for row in board.rows[:2])
    key = f"{first}|{second}"
    index = 10_000
    lead = match_id(LADDER, first, second, 2 * index)
    legs = [
        MatchRow(lead, LADDER, key, 2 * index, first, second, 1, None, MatchState.PENDING, 0, ""),
        MatchRow(
            match_id(LADDER, first, second, 2 * index + 1), LADDER, key, 2 * index + 1, second,
            first, 1, lead, MatchState.PENDING, 0, "",
        ),
    ]  # fmt: skip
    store.add_matches(LADDER, legs)
    like = next(r for r in store.results(LADDER) if r.duplicate_of is None)
    for leg in legs:
        moved = dataclasses.replace(
            like, match_id=leg.match_id, duplicate_of=leg.duplicate_of, seats=(leg.seat0, leg.seat1)
        )
        store.record_result(moved)


def bot_pages(store: ArenaStore, published: Published) -> None:
    """A board's bot pages: every one rendered, against only the changed ones."""
    board, _ = _timed("the board's fit", compute_board, store)
    assert isinstance(board, Board)
    _timed(f"the leaderboard's pages ({len(board.rows)} bots)", published.board_computed, board)
    _timed("every bot's page rendered (each board, before)", _every_bot, published, store, board)
    if not hasattr(published, "board_shown"):
        return  # before only a changed page was rendered
    _timed("board_shown, the first board (every page)", published.board_shown, board)
    for what in ("nothing changed", "one more pair recorded"):
        if what != "nothing changed":
            _one_more_pair(store, board)
        board, _ = _timed("the board's fit", compute_board, store)
        assert isinstance(board, Board)
        published.board_computed(board)
        before = published.bot_pages_rendered
        _timed(f"board_shown, {what}", published.board_shown, board)
        print(f"    bot pages rendered: {published.bot_pages_rendered - before}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--matches", type=int, default=40)
    args = parser.parse_args()
    _home(args.home, args.bots, args.results)

    async def run() -> None:
        arena = Arena(args.home)
        store = ArenaStore(arena.store_path)
        service = ArenaService(arena, store, ladder=False)
        create_app(service)
        published = service.publisher
        assert isinstance(published, Published)

        def both() -> None:
            bytes_per_match(published, service.reader(), args.matches)
            bot_pages(service.reader(), published)

        await trio.to_thread.run_sync(both)
        published.close()
        store.close()

    trio.run(run)


if __name__ == "__main__":
    main()
