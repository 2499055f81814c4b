"""Normalized Elo per pairing and LOS over the next bot: what fishtest and fastchess users read,
defined as docs/standings.md says and consistent with the intervals beside them."""

from __future__ import annotations

import csv
import io
import itertools
import math
import random

import pytest

from tests.test_standings_pairwise import duplicate_league, row
from tournaments.stats.inference import (
    ELO_PER_NAT,
    MIN_UNITS,
    critical_t,
    normalized_elo,
    score_estimate,
)
from tournaments.stats.standings import compute
from tournaments.store import ResultRow


def fastchess_nelo(pentanomial: list[int]) -> float:
    """fastchess's pentanomial nElo, written out from its definition: the mean pair score's
    distance from ½ over the square root of twice the pair scores' variance, times 800/ln 10."""
    pairs = sum(pentanomial)
    values = [0.0, 0.25, 0.5, 0.75, 1.0]
    mean = sum(v * c for v, c in zip(values, pentanomial, strict=True)) / pairs
    variance = sum((v - mean) ** 2 * c for v, c in zip(values, pentanomial, strict=True)) / pairs
    return (mean - 0.5) / math.sqrt(2 * variance) * 2 * ELO_PER_NAT


def scores_of(pentanomial: list[int]) -> list[float]:
    return [
        v for v, c in zip([0.0, 0.25, 0.5, 0.75, 1.0], pentanomial, strict=True) for _ in range(c)
    ]


@pytest.mark.parametrize("pentanomial", [[10, 40, 300, 120, 30], [3, 30, 160, 60, 7]])
def test_nelo_is_fastchess_s_with_many_pairs(pentanomial: list[int]) -> None:
    """The ⅛ of prior variance is all that parts ours from fastchess's: under 1% at 260 pairs."""
    found = normalized_elo(scores_of(pentanomial), 2)
    assert found is not None
    assert found[1] == pytest.approx(fastchess_nelo(pentanomial), rel=1e-2)


def test_nelo_excludes_0_exactly_when_the_elo_interval_does() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        n = rng.randrange(MIN_UNITS, 30)
        bias = rng.uniform(-0.3, 0.3)
        scores = [min(1.0, max(0.0, round(4 * (rng.random() + bias)) / 4)) for _ in range(n)]
        nelo, estimate = normalized_elo(scores, 2), score_estimate(scores, series=2 * n)
        if estimate.bound is not None:
            assert nelo is None
            continue
        assert nelo is not None
        assert estimate.los is not None
        low, _, high = nelo
        assert (low > 0) == (estimate.los > 0.975)
        assert (high < 0) == (estimate.los < 0.025)


def test_the_same_nelo_needs_the_same_pairs_whatever_the_draws() -> None:
    """nElo sets the t statistic from the number of pairs alone: two pairings of one nElo, one
    drawish and one wild, are as sure of their difference after the same number of pairs."""
    drawish = [0.5] * 30 + [0.75] * 8 + [0.25] * 2
    wild = [1.0] * 15 + [0.0] * 10 + [0.5] * 15
    n = len(drawish)
    assert len(wild) == n
    for scores in (drawish, wild):
        found = normalized_elo(scores, 2)
        assert found is not None
        _, nelo, high = found
        half = (high - nelo) / (2 * ELO_PER_NAT) * math.sqrt(2)  # t · se / s, on the score scale
        assert half == pytest.approx(critical_t(n - 1) / math.sqrt(n))
        estimate = score_estimate(scores)
        assert estimate.los is not None
        t_statistic = nelo / (2 * ELO_PER_NAT) * math.sqrt(2 * n)
        assert t_statistic == pytest.approx(
            (estimate.mean - 0.5)
            / math.sqrt((sum((s - estimate.mean) ** 2 for s in scores) + 0.125) / n / n)
        )


def test_nelo_is_none_below_four_pairs_and_for_a_sweep() -> None:
    assert normalized_elo([1.0, 0.5, 0.75], 2) is None
    assert normalized_elo([1.0] * 8, 2) is None
    assert normalized_elo([0.0] * 8, 2) is None
    assert normalized_elo([1.0, 0.5, 0.75, 0.25], 2) is not None


def test_lone_series_count_one_series_a_unit() -> None:
    """A lone series' score is its own spread: a pair's sd is that of the mean of two legs, so
    the same spread read as pairs gives nElo 1/√2 of it read as series."""
    scores = [1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0]
    as_series, as_pairs = normalized_elo(scores, 1), normalized_elo(scores, 2)
    assert as_series is not None
    assert as_pairs is not None
    assert as_pairs[1] == pytest.approx(as_series[1] / math.sqrt(2))


def test_the_standings_give_nelo_per_pairing_and_los_over_the_next_bot() -> None:
    standings = compute("t", duplicate_league(random.Random(3), 12))
    by_side = {(p.bot, p.opponent): p for p in standings.pairwise}
    for pair in standings.pairwise:
        other = by_side[pair.opponent, pair.bot]
        assert pair.nelo is not None
        assert other.nelo is not None
        assert pair.nelo == pytest.approx(-other.nelo)
        assert pair.nelo_low is not None
        assert pair.nelo_high is not None
        assert pair.nelo_low <= pair.nelo <= pair.nelo_high
    ranked = standings.bots
    assert ranked[-1].los_next is None
    for line, below in itertools.pairwise(ranked):
        assert line.los_next is not None
        pairing = by_side[line.bot, below.bot]
        assert pairing.rating_diff_low is not None
        assert (line.los_next > 0.975) == (pairing.rating_diff_low > 0)
        assert 0.5 <= line.los_next <= 1  # ranked by rating: the one above is the likelier
    document = standings.to_dict()
    bots = document["bots"]
    assert isinstance(bots, list)
    assert isinstance(bots[0], dict)
    assert bots[0]["los_next"] == ranked[0].los_next
    header = next(csv.reader(io.StringIO(standings.to_csv())))
    assert "los_next" in header
    header = next(csv.reader(io.StringIO(standings.pairwise_csv())))
    assert {"nelo", "nelo_low", "nelo_high"} <= set(header)


def test_a_bound_has_no_los_over_the_next_bot() -> None:
    """A bot that won every series is ranked by the fit's prior: no LOS is read from it."""
    rows = [row for row in duplicate_league(random.Random(4), 6) if "c" not in row.seats]
    standings = compute("t", [*rows, *sweep_rows()])
    top = standings.bots[0]
    assert top.bot == "s"
    assert top.rating_bound == "lower"
    assert top.los_next is None


def sweep_rows() -> list[ResultRow]:
    """Bot s wins all 8 series of 4 pairs against a."""
    found = []
    for index in range(4):
        mid = f"sa{index}"
        found.append(row(mid, ("s", "a"), 0, (100, 0)))
        found.append(row(mid + "r", ("a", "s"), 1, (0, 100), mid))
    return found
