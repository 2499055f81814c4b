"""How often a Swiss repeats a pairing, by pairing method (``tournaments.events.swiss``).

    python -m benchmarks.swiss_repeats [--events E] [--seed S]

Each event seeds N bots in order and plays R rounds paired by ``swiss_round``; each tie's result
is drawn at random (the first bot wins, draws or loses, each a third of the time; the same seed
for both methods). An event counts as *repeating* if any of its rounds pairs two bots that met
before (the table counts those pairings too). The shapes are the reviewer's (6 bots x 4 rounds,
9 bots), the docs' (5 x 5, 7 x 7, 8 x 7), and round robins played as a Swiss (N - 1 rounds).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from tournaments.events import Tie, TieResult, swiss_round

SHAPES = ((6, 4), (5, 5), (7, 7), (8, 7), (9, 5), (9, 9), (10, 9), (12, 11), (16, 15))


def _result(tie: Tie, rng: random.Random) -> TieResult:
    if tie.second is None:
        return TieResult(tie)
    return TieResult(tie, 2, rng.choice((0.0, 1.0, 2.0)), 0)


def event_repeats(bots: int, rounds: int, method: int, rng: random.Random) -> int:
    """The repeated pairings of one random event."""
    seeds = [f"b{index}" for index in range(bots)]
    met: Counter[frozenset[str]] = Counter()
    played: list[list[TieResult]] = []
    repeats = 0
    for _ in range(rounds):
        ties = swiss_round(seeds, played, rounds, method)
        for tie in ties:
            if tie.second is not None:
                repeats += met[frozenset(tie.bots())] > 0
                met[frozenset(tie.bots())] += 1
        played.append([_result(tie, rng) for tie in ties])
    return repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args()
    print("| bots | rounds | method 1: events repeating (pairings) | method 2 | CPU-s (1, 2) |")
    print("|---:|---:|---:|---:|---:|")
    for bots, rounds in SHAPES:
        cells = []
        for method in (1, 2):
            rng = random.Random(f"{args.seed}/{bots}/{rounds}")
            started = time.process_time()
            counts = [event_repeats(bots, rounds, method, rng) for _ in range(args.events)]
            cells.append((sum(c > 0 for c in counts), sum(counts), time.process_time() - started))
        (e1, p1, t1), (e2, p2, t2) = cells
        print(f"| {bots} | {rounds} | {e1} ({p1}) | {e2} ({p2}) | {t1:.1f}, {t2:.1f} |")
    print(f"\n{args.events} random events a shape")


if __name__ == "__main__":
    main()
