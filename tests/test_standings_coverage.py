"""The standings' 95% rating intervals cover the truth 93-97% of the time, on synthetic leagues.

Each league has known strengths (Elo, uniform in ±150) and is played either as independent
series or as duplicate pairs whose legs are correlated: negatively when luck cancels (with
probability ``cancel`` the second leg's luck is the mirror of the first's), positively when it
doubles (``cancel`` < 0: with probability ``-cancel`` the second leg has the same luck, as when
the deals did not mirror). The per-series win probability is exactly the Bradley-Terry one in
every case, so the truth is the model's rating: the centred strengths, and their differences.

The intervals of the standings before the pair was the unit (the uncentred inverse information,
each series an independent trial) covered 100% of ratings here, and 98.4-98.5% of differences
where luck cancels, 87.8% where it doubles.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from tournaments.stats.inference import score_from_elo
from tournaments.stats.pairs import PairOutcome
from tournaments.stats.standings import fit_ratings


def league(
    rng: random.Random, bots: int, units: int, cancel: float | None
) -> tuple[list[float], list[PairOutcome]]:
    """True strengths, and ``units`` pairs per pairing (lone series if ``cancel`` is None)."""
    truth = [rng.uniform(-150, 150) for _ in range(bots)]
    played = []
    for i in range(bots):
        for j in range(i + 1, bots):
            p = score_from_elo(truth[i] - truth[j])
            for _ in range(units):
                luck = rng.random()
                if cancel is None:
                    played.append(PairOutcome(str(i), str(j), (float(luck < p),), 0))
                    continue
                other = rng.random()
                if rng.random() < abs(cancel):
                    other = 1 - luck if cancel > 0 else luck
                played.append(PairOutcome(str(i), str(j), (float(luck < p), float(other < p)), 0))
    return truth, played


def coverage(bots: int, units: int, cancel: float | None, leagues: int) -> tuple[float, float]:
    """Shares of ratings and of rating differences whose 95% interval holds the truth."""
    rng = random.Random(f"{bots}/{units}/{cancel}")
    names = [str(i) for i in range(bots)]
    ratings_in = differences_in = 0
    for _ in range(leagues):
        truth, played = league(rng, bots, units, cancel)
        fitted = fit_ratings(played, names)
        level = statistics.fmean(truth)
        for i, name in enumerate(names):
            _, low, high = fitted.rating(name)
            ratings_in += low <= truth[i] - level <= high
            for j in range(i + 1, bots):
                _, low, high = fitted.difference(name, names[j])
                differences_in += low <= truth[i] - truth[j] <= high
    return ratings_in / (leagues * bots), differences_in / (leagues * math.comb(bots, 2))


@pytest.mark.parametrize(
    ("bots", "units", "cancel", "leagues"),
    [
        (4, 20, 0.6, 800),  # duplicate pairs, luck cancels
        (6, 10, 0.6, 400),
        (4, 20, -0.6, 800),  # duplicate pairs, luck doubles
        (4, 40, None, 800),  # independent series
        (6, 20, None, 400),
    ],
)
def test_rating_intervals_cover_95_percent(
    bots: int, units: int, cancel: float | None, leagues: int
) -> None:
    ratings, differences = coverage(bots, units, cancel, leagues)
    assert 0.93 <= ratings <= 0.97, f"ratings covered {ratings:.1%}"
    assert 0.93 <= differences <= 0.97, f"differences covered {differences:.1%}"


def test_one_lopsided_bot_does_not_shrink_the_other_intervals() -> None:
    """Three close bots (within ±100) and one 1,200 Elo below them, 10 pairs per pairing with
    independent legs (true dispersion 1): the close bots' differences still cover 93-97%. With
    the weak bot's near-certain units counted in the dispersion they covered 88%."""
    rng = random.Random("lopsided")
    names = [str(i) for i in range(4)]
    inside = total = 0
    for _ in range(400):
        truth = [rng.uniform(-100, 100) for _ in range(3)] + [-1200.0]
        played = []
        for i in range(4):
            for j in range(i + 1, 4):
                p = score_from_elo(truth[i] - truth[j])
                for _ in range(10):
                    legs = (float(rng.random() < p), float(rng.random() < p))
                    played.append(PairOutcome(names[i], names[j], legs, 0))
        fitted = fit_ratings(played, names)
        for i in range(3):
            for j in range(i + 1, 3):
                _, low, high = fitted.difference(names[i], names[j])
                inside += low <= truth[i] - truth[j] <= high
                total += 1
    assert 0.93 <= inside / total <= 0.97, (
        f"the close bots' differences covered {inside / total:.1%}"
    )
