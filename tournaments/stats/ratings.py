"""The Bradley-Terry model of a league's series, and its dense fit.

The model: each series is a Bradley-Terry trial (a draw half a win) between its two bots, with a
weak prior (each bot also played one win and one loss against a bot rated 0, weighed by the
dispersion: :func:`prior_weight`); the ratings' covariance is quasi-likelihood's, the inverse
information scaled by the dispersion of the units (a duplicate pair counts once). This module
holds the model's pieces both fits share (the pairings' totals, the information, the
dispersion, :class:`Ratings`) and the dense fit, exact up to ``DENSE_FIT_MAX_BOTS`` bots;
:mod:`tournaments.stats.sparse` fits larger fields, and
:func:`tournaments.stats.standings.fit_ratings` chooses between them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from tournaments.stats.inference import ELO_PER_NAT, LEVEL, critical_t, critical_z

__all__ = [
    "DENSE_FIT_MAX_BOTS",
    "DISPERSION_MIN_WEIGHT",
    "ELO",
    "PRIOR_DISPERSION_DF",
    "PRIOR_GAMES",
    "PRIOR_ROUNDS",
    "Covariance",
    "CovarianceRow",
    "Matrix",
    "Ratings",
    "Unit",
    "centred",
    "dense_fit",
    "information",
    "invert",
    "one_way_pairings",
    "pairing_totals",
    "prior_weight",
    "scoring_components",
    "settle_prior",
    "solve",
    "unit_dispersion",
]

ELO: Final = ELO_PER_NAT
PRIOR_GAMES: Final = 1.0
"""The prior's weight at dispersion 1: each bot played this many wins and as many losses against
a bot rated 0. The fit gives it ``PRIOR_GAMES * dispersion`` (:func:`prior_weight`)."""
PRIOR_ROUNDS: Final = 6
"""Refits at most, each with the prior weighed by the last fit's dispersion, before the weight
settles (within ``1e-4`` of a game; it takes 2-4)."""
DISPERSION_MIN_WEIGHT: Final = 0.05
"""Units whose expected series score ``p`` has ``p (1 - p)`` below this (p outside about
0.05-0.95) say too little of the dispersion to count in it."""
PRIOR_DISPERSION_DF: Final = 2
DENSE_FIT_MAX_BOTS: Final = 160
"""Fields of up to this many bots are fitted with dense matrices and get exact intervals (the
fit takes about 2 s at 160 bots, and grows as the cube); larger ones get the sparse fit, with
estimated intervals (``docs/standings.md``, "Large fields")."""


class CovarianceRow(Protocol):
    """One row of a covariance: its entries by column."""

    def __getitem__(self, column: int, /) -> float: ...


class Covariance(Protocol):
    """A covariance read entry by entry, ``covariance[i][j]``: a tuple of tuples (the exact one
    of a small field), or :class:`ProbedCovariance` (the estimate of a large one)."""

    def __getitem__(self, row: int, /) -> CovarianceRow: ...


@dataclass(frozen=True)
class Ratings:
    """A Bradley-Terry fit: ratings centred on the field average, and their covariance.

    ``covariance`` is that of the centred ratings (``C Σ Cᵀ``, Elo²), so an interval holds the
    uncertainty of a bot against the field, not of the field's level, which no result measures.
    It is the model's inverse information scaled by the dispersion of the units (a duplicate
    pair counts once: its legs are not independent). Up to ``DENSE_FIT_MAX_BOTS`` bots it is the
    exact inverse, a tuple of tuples; above, an estimate read entry by entry (``approximate``)."""

    bots: tuple[str, ...]
    elo: tuple[float, ...]
    covariance: Covariance
    dispersion: float
    """Pearson's chi-square of the units over its degrees of freedom (with two more at 1): about
    1 if each series were an independent Bradley-Terry trial, below 1 when luck cancels within
    pairs, above 1 when it doubles."""
    df: int
    """Residual degrees of freedom: the units counted in ``dispersion`` minus the bots plus one
    (0: too few to estimate)."""
    approximate: bool = False
    """Whether ``covariance`` is an estimate (a field above ``DENSE_FIT_MAX_BOTS`` bots), not
    the exact inverse information; the ratings are exact either way."""
    _where: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_where", {bot: i for i, bot in enumerate(self.bots)})

    def _index(self, bot: str) -> int:
        """The bot's place in ``bots`` (``ValueError`` if it has none, as ``bots.index``)."""
        try:
            return self._where[bot]
        except KeyError:
            raise ValueError(f"{bot!r} is not rated") from None

    def critical(self, level: float = LEVEL) -> float:
        """The two-sided quantile of the intervals: t on ``df``, or the normal's without."""
        return critical_t(self.df, level) if self.df > 0 else critical_z(level)

    def rating(self, bot: str) -> tuple[float, float, float]:
        """The bot's rating and its 95% interval."""
        i = self._index(bot)
        half = self.critical() * math.sqrt(max(self.covariance[i][i], 0.0))
        return self.elo[i], self.elo[i] - half, self.elo[i] + half

    def difference(self, bot: str, other: str) -> tuple[float, float, float]:
        """``bot``'s rating minus ``other``'s, and its 95% interval."""
        i, j = self._index(bot), self._index(other)
        cov = self.covariance
        variance = cov[i][i] + cov[j][j] - 2 * cov[i][j]
        half = self.critical() * math.sqrt(max(variance, 0.0))
        diff = self.elo[i] - self.elo[j]
        return diff, diff - half, diff + half


Matrix = list[list[float]]


def invert(matrix: Matrix) -> Matrix:
    """Gauss-Jordan inverse of a small positive-definite matrix."""
    size = len(matrix)
    work = [row[:] + [float(i == j) for j in range(size)] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda row: abs(work[row][col]))
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [value / scale for value in work[col]]
        for row in range(size):
            if row != col and work[row][col]:
                factor = work[row][col]
                work[row] = [a - factor * b for a, b in zip(work[row], work[col], strict=True)]
    return [row[size:] for row in work]


def solve(matrix: Matrix, vector: Sequence[float]) -> list[float]:
    """``x`` with ``matrix x = vector``, by Gaussian elimination with partial pivoting (a third
    of the work of :func:`invert`, which a Newton step does not need)."""
    size = len(matrix)
    work = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda row: abs(work[row][col]))
        work[col], work[pivot] = work[pivot], work[col]
        top = work[col]
        scale = top[col]
        for row in range(col + 1, size):
            lower = work[row]
            if lower[col]:
                factor = lower[col] / scale
                work[row] = lower[:col] + [
                    a - factor * b for a, b in zip(lower[col:], top[col:], strict=True)
                ]
    solution = [0.0] * size
    for col in reversed(range(size)):
        line = work[col]
        done = math.fsum(line[k] * solution[k] for k in range(col + 1, size))
        solution[col] = (line[size] - done) / line[col]
    return solution


def centred(matrix: Matrix) -> Matrix:
    """``C M Cᵀ`` with ``C = I - J/n``: the covariance of the ratings minus their mean."""
    size = len(matrix)
    if not size:
        return []
    rows = [statistics.fmean(row) for row in matrix]
    cols = [statistics.fmean(col) for col in zip(*matrix, strict=True)]
    total = statistics.fmean(rows)
    return [[matrix[i][j] - rows[i] - cols[j] + total for j in range(size)] for i in range(size)]


Unit = tuple[int, int, tuple[float, ...]]


def pairing_totals(units: Sequence[Unit]) -> dict[tuple[int, int], tuple[float, int]]:
    """Per pairing (lower index first): the first bot's score and the series, summed."""
    totals: dict[tuple[int, int], tuple[float, int]] = {}
    for i, j, scores in units:
        key, won = ((i, j), sum(scores)) if i < j else ((j, i), len(scores) - sum(scores))
        score, count = totals.get(key, (0.0, 0))
        totals[key] = (score + won, count + len(scores))
    return totals


def information(
    totals: dict[tuple[int, int], tuple[float, int]],
    theta: Sequence[float],
    prior: float = PRIOR_GAMES,
) -> tuple[list[float], Matrix]:
    """Gradient and information of the log-likelihood with the prior (``prior`` games won and
    as many lost by each bot against a bot rated 0), at ``theta`` (natural)."""
    size = len(theta)
    grad = [0.0] * size
    info = [[0.0] * size for _ in range(size)]
    for bot, value in enumerate(theta):
        p = 1 / (1 + math.exp(-value))
        grad[bot] += prior * (1 - 2 * p)
        info[bot][bot] += 2 * prior * p * (1 - p)
    for (i, j), (score, count) in totals.items():
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        residual, weight = score - count * p, count * p * (1 - p)
        grad[i] += residual
        grad[j] -= residual
        info[i][i] += weight
        info[j][j] += weight
        info[i][j] -= weight
        info[j][i] -= weight
    return grad, info


def unit_dispersion(units: Sequence[Unit], theta: Sequence[float]) -> tuple[float, int]:
    """Pearson's chi-square of the units' series totals over its degrees of freedom, with
    ``PRIOR_DISPERSION_DF`` more at dispersion 1 (so that a handful of units that happen to
    sit on their expectation do not give intervals of width 0), and those degrees of freedom:
    the units kept less the bots plus one. (Less the bots less one per component of
    :func:`scoring_components`, the differences the kept units measure, would be the finer
    count; on a ladder it moves nothing, and on a tiny league whose every bot but two is
    connected one way only it gave the t quantile of 1 degree of freedom, 12.7, to intervals the
    prior sets, where this gives none and the normal's.)

    Units the fit cannot judge are left out of both: those of a pairing the results connect one
    way only (:func:`one_way_pairings`: the prior, not the data, sets its expectation) and those
    it expects to be all but certain (``p (1 - p)`` under ``DISPERSION_MIN_WEIGHT``). Kept in,
    they add nothing to the chi-square and a degree of freedom each, and one lopsided bot shrank
    every other interval (three close bots beside one 1,200 Elo weaker: their differences
    covered 88%). A pairing one side merely won outright is judged as any other when the loser
    scored against someone who scored against the winner. Such pairings used to be left out,
    and on the ladder (nearly every pairing played once, between close bots, a pair won 2-0
    about as often as split) that dropped about half the units, those of largest residual,
    keeping the near-zero ones: its dispersion came out below the truth (median 0.80 where it
    was 1) and its intervals covered 83-90% (``docs/standings.md``, "Which units count in the
    dispersion")."""
    component = scoring_components(units, len(theta))
    judged = []
    for i, j, scores in units:
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        if component[i] != component[j] or p * (1 - p) < DISPERSION_MIN_WEIGHT:
            continue
        judged.append((sum(scores) - len(scores) * p) ** 2 / (len(scores) * p * (1 - p)))
    df = len(judged) - (len(theta) - 1)
    if not theta or df <= 0:
        return 1.0, max(df, 0)
    return (math.fsum(judged) + PRIOR_DISPERSION_DF) / (df + PRIOR_DISPERSION_DF), df


def one_way_pairings(units: Sequence[Unit], size: int) -> set[tuple[int, int]]:
    """The pairings (lower index first) whose two bots the results connect one way only: with
    an edge from each bot to each opponent it scored against (a draw is half a win each way),
    the pairings between two strongly connected components. Without the prior, the likelihood
    of such a pairing grows without end as the two ratings move apart (its expectation is the
    prior's); within a component every difference has a finite estimate. A pairing won outright
    is one way when nothing leads back (a bot that lost every series, say), but not when the
    loser beat a bot that beat the winner."""
    component = scoring_components(units, size)
    return {(min(i, j), max(i, j)) for i, j, _ in units if component[i] != component[j]}


def scoring_components(units: Sequence[Unit], size: int) -> list[int]:
    """Each of the ``size`` bots' strongly connected component (numbered from 0) in the graph
    with an edge from each bot to each opponent it scored against in some unit."""
    edges: list[set[int]] = [set() for _ in range(size)]
    for i, j, scores in units:
        if sum(scores) > 0:
            edges[i].add(j)
        if sum(scores) < len(scores):
            edges[j].add(i)
    return _components([sorted(out) for out in edges])


def _components(edges: Sequence[Sequence[int]]) -> list[int]:
    """Each vertex's strongly connected component (Tarjan's algorithm, without recursion)."""
    size = len(edges)
    order = [-1] * size  # the vertex's place in the depth-first search, -1 before it
    low = [0] * size
    component = [-1] * size
    stack: list[int] = []
    found = counted = 0
    for root in range(size):
        if order[root] >= 0:
            continue
        path = [(root, 0)]
        order[root] = low[root] = found
        found += 1
        stack.append(root)
        while path:
            vertex, next_edge = path[-1]
            if next_edge < len(edges[vertex]):
                path[-1] = (vertex, next_edge + 1)
                target = edges[vertex][next_edge]
                if order[target] < 0:
                    order[target] = low[target] = found
                    found += 1
                    stack.append(target)
                    path.append((target, 0))
                elif component[target] < 0:
                    low[vertex] = min(low[vertex], order[target])
                continue
            path.pop()
            if path:
                parent = path[-1][0]
                low[parent] = min(low[parent], low[vertex])
            if low[vertex] == order[vertex]:
                while True:
                    member = stack.pop()
                    component[member] = counted
                    if member == vertex:
                        break
                counted += 1
    return component


def prior_weight(dispersion: float) -> float:
    """The prior's weight in games at a dispersion: ``PRIOR_GAMES * dispersion``.

    Quasi-likelihood divides the log-likelihood of the series by the dispersion; the prior is
    not data and is not divided. Maximising ``loglik / dispersion + log prior`` is maximising
    ``loglik + dispersion * log prior``, and its information is ``(I_data + dispersion *
    I_prior) / dispersion``: the fit weighs the prior by the dispersion, and the covariance is
    the dispersion times the inverse of that information. Weighed at 1 instead, as before issue
    31, a dispersion of 0.4-0.7 (pairs whose luck cancels) made the prior count 1.5-2.5 times
    what it says, and shrank a ladder's ratings towards 0 by more than their intervals allowed.
    """
    return PRIOR_GAMES * dispersion


def settle_prior(
    coded: Sequence[Unit],
    newton: Callable[[list[float], float], list[float]],
    start: list[float],
) -> tuple[list[float], float, float, int]:
    """Fit, then refit with the prior weighed by the dispersion of the last fit
    (:func:`prior_weight`), until the weight settles: the ratings, the prior's weight, the
    dispersion and its degrees of freedom. ``newton(theta, prior)``: the ratings of the fit at
    a prior weight, from ``theta``."""
    prior = PRIOR_GAMES
    theta = newton(start, prior)
    dispersion, df = unit_dispersion(coded, theta)
    for _ in range(PRIOR_ROUNDS):
        weight = prior_weight(dispersion)
        if abs(weight - prior) < 1e-4:
            break
        prior = weight
        theta = newton(theta, prior)
        dispersion, df = unit_dispersion(coded, theta)
    return theta, prior, dispersion, df


def dense_fit(
    coded: Sequence[Unit],
    totals: dict[tuple[int, int], tuple[float, int]],
    bots: Sequence[str],
    rounds: int = 100,
) -> Ratings:
    """The fit by Newton's method on dense matrices, the covariance the exact centred inverse
    information times the dispersion (``coded``: the units by bot index; ``totals``: their
    :func:`pairing_totals`)."""

    def newton(theta: list[float], prior: float) -> list[float]:
        for _ in range(rounds):
            grad, info = information(totals, theta, prior)
            step = solve(info, grad)
            theta = [value + change for value, change in zip(theta, step, strict=True)]
            if max(map(abs, step), default=0.0) < 1e-10:
                break
        return theta

    theta, prior, dispersion, df = settle_prior(coded, newton, [0.0] * len(bots))
    inverse = invert(information(totals, theta, prior)[1])
    level = statistics.fmean(theta) if theta else 0.0
    covariance = centred([[dispersion * ELO * ELO * value for value in row] for row in inverse])
    return Ratings(
        tuple(bots),
        tuple(ELO * (value - level) for value in theta),
        tuple(map(tuple, covariance)),
        dispersion,
        df,
    )
