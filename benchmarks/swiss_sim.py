"""How often the true best bot wins a Swiss (``tournaments.events.swiss``) of 5-7 rounds, beside
a round robin of the same number of series, and a full round robin.

    python -m benchmarks.swiss_sim [--trials T] [--sd ELO] [--seed S] [--method M]
        [--fields N ...] [--rounds R ...] [--json FILE]

The model. Each trial draws a field of N bots whose true ratings are normal with standard
deviation ``--sd`` Elo (100 by default: about the spread of a club's bots), in a random seeding
order (no prior knowledge: a draw). A tie is one duplicate pair, two series, each won by the
first bot with the Elo model's chance ``1 / (1 + 10^(-d/400))`` (``d`` the difference of true
ratings), independently (no draws; duplicate deals, which make a pair's legs less noisy, are not
modelled). Three events, each scored by series points, a tie as the Swiss scores it (1 for more
series points, ½ level):

- **Swiss**: R rounds paired by ``swiss_round`` (the Monrad system, byes; ``--method`` the
  pairing's version, the current one by default); the winner is the top of ``swiss_table``
  (score, Buchholz, then seed). The same seed draws the same fields and, as far as the two
  versions pair alike, the same results, so the versions compare trial by trial.
- **Same series, random pairs**: R rounds of ties paired at random (a round robin cut to the
  Swiss's series: the same N·R series); the winner has the most tie points, ties of that
  broken at random.
- **Full round robin**: every pairing plays a pair, N(N-1) series (3 to 9 times as many); the
  winner has the most series points, ties broken at random.

The figure is the share of trials the truly best bot won, with its 95% interval (Wilson); and
how often it finished in the top three.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tournaments.events import (
    PAIRING_METHOD,
    PAIRING_METHODS,
    Tie,
    TieResult,
    swiss_round,
    swiss_table,
)

FIELDS = (16, 32, 64)
ROUNDS = (5, 6, 7)


@dataclass(frozen=True)
class Row:
    """One field and number of rounds: each event's share of trials won by the best bot."""

    bots: int
    rounds: int
    series: int
    swiss: float
    swiss_top3: float
    random_pairs: float
    round_robin: float
    round_robin_series: int


def _won(difference: float, rng: random.Random) -> float:
    """Series points of the first bot in one series."""
    return 1.0 if rng.random() < 1 / (1 + 10 ** (-difference / 400)) else 0.0


def _tie(tie: Tie, ratings: dict[str, float], rng: random.Random) -> TieResult:
    if tie.second is None:
        return TieResult(tie)
    difference = ratings[tie.first] - ratings[tie.second]
    points = _won(difference, rng) + _won(difference, rng)
    return TieResult(tie, 2, points, 0)


def _field(bots: int, sd: float, rng: random.Random) -> tuple[list[str], dict[str, float]]:
    seeds = [f"b{index}" for index in range(bots)]
    rng.shuffle(seeds)
    return seeds, {bot: rng.gauss(0.0, sd) for bot in seeds}


def swiss_trial(
    bots: int, rounds: int, sd: float, rng: random.Random, method: int = PAIRING_METHOD
) -> tuple[bool, bool]:
    """Whether the best bot won the Swiss, and whether it was in its top three."""
    seeds, ratings = _field(bots, sd, rng)
    best = max(seeds, key=ratings.__getitem__)
    played: list[list[TieResult]] = []
    for _ in range(rounds):
        ties = swiss_round(seeds, played, rounds, method)
        played.append([_tie(tie, ratings, rng) for tie in ties])
    table = [line.bot for line in swiss_table(seeds, played)]
    return table[0] == best, best in table[:3]


def _top(scores: dict[str, float], rng: random.Random) -> str:
    most = max(scores.values())
    return rng.choice(sorted(bot for bot, score in scores.items() if score == most))


def random_trial(bots: int, rounds: int, sd: float, rng: random.Random) -> bool:
    """Whether the best bot won R rounds of ties paired at random."""
    seeds, ratings = _field(bots, sd, rng)
    scores = dict.fromkeys(seeds, 0.0)
    for _ in range(rounds):
        order = list(seeds)
        rng.shuffle(order)
        for first, second in zip(order[::2], order[1::2], strict=True):
            mine, theirs = _tie(Tie(first, second), ratings, rng).match_points()
            scores[first] += mine
            scores[second] += theirs
    return _top(scores, rng) == max(seeds, key=ratings.__getitem__)


def round_robin_trial(bots: int, sd: float, rng: random.Random) -> bool:
    """Whether the best bot won a round robin of one pair per pairing."""
    seeds, ratings = _field(bots, sd, rng)
    scores = dict.fromkeys(seeds, 0.0)
    for index, first in enumerate(seeds):
        for second in seeds[index + 1 :]:
            points = _tie(Tie(first, second), ratings, rng).points
            scores[first] += points
            scores[second] += 2 - points
    return _top(scores, rng) == max(seeds, key=ratings.__getitem__)


def measure(
    bots: int, rounds: int, trials: int, sd: float, seed: int, *, method: int = PAIRING_METHOD
) -> Row:
    """Each event ``trials`` times on fresh fields (the round robin once per field size)."""
    rng = random.Random(f"{seed}/{bots}/{rounds}")
    swiss = [swiss_trial(bots, rounds, sd, rng, method) for _ in range(trials)]
    pairs = sum(random_trial(bots, rounds, sd, rng) for _ in range(trials))
    robin_rng = random.Random(f"{seed}/{bots}/robin")
    robin = sum(round_robin_trial(bots, sd, robin_rng) for _ in range(trials))
    return Row(
        bots,
        rounds,
        bots * rounds,
        sum(won for won, _ in swiss) / trials,
        sum(top for _, top in swiss) / trials,
        pairs / trials,
        robin / trials,
        bots * (bots - 1),
    )


def wilson(share: float, trials: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share."""
    z = 1.96
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials**2))
    return centre - half / (1 + z * z / trials), centre + half / (1 + z * z / trials)


def table(rows: list[Row], trials: int) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| bots | rounds | series | Swiss: best wins | Swiss: best in top 3 "
        "| same series, random pairs | full round robin (series) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        low, high = wilson(row.swiss, trials)
        lines.append(
            f"| {row.bots} | {row.rounds} | {row.series} | {row.swiss:.1%} "
            f"({low:.0%}-{high:.0%}) | {row.swiss_top3:.1%} | {row.random_pairs:.1%} | "
            f"{row.round_robin:.1%} ({row.round_robin_series}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--sd", type=float, default=100.0, help="spread of true ratings (Elo)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--method", type=int, choices=PAIRING_METHODS, default=PAIRING_METHOD)
    parser.add_argument("--fields", type=int, nargs="+", default=FIELDS, help="bots")
    parser.add_argument("--rounds", type=int, nargs="+", default=ROUNDS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    started = time.process_time()
    rows = [
        measure(bots, rounds, args.trials, args.sd, args.seed, method=args.method)
        for bots in args.fields
        for rounds in args.rounds
        if rounds < bots
    ]
    print(table(rows, args.trials))
    spent = time.process_time() - started
    print(
        f"\n{args.trials} trials each, true ratings sd {args.sd:g} Elo, pairing method "
        f"{args.method}; {spent:.0f} CPU-s"
    )
    if args.json is not None:
        rows_json = [asdict(r) for r in rows]
        document = {"trials": args.trials, "sd": args.sd, "method": args.method, "rows": rows_json}
        args.json.write_text(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
