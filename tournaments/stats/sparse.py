"""The Bradley-Terry fit of a large field: the same ratings as the dense fit (to about 1e-6 Elo),
in time and memory that grow with the pairings played rather than the cube of the bots, and an
estimated covariance read entry by entry (``docs/standings.md``, "Large fields").
"""

from __future__ import annotations

import math
import operator
import random
import statistics
from collections.abc import Sequence
from typing import Final, NamedTuple

from tournaments.stats.ratings import (
    ELO,
    PRIOR_GAMES,
    Matrix,
    Ratings,
    Unit,
    invert,
    settle_prior,
)

__all__ = ["ProbedCovariance", "dot", "sparse_fit"]

_PROBES: Final = 32
"""Random vectors of the Hutchinson estimate of a large field's covariance."""
_MODES: Final = 24
"""Vectors spanning its broad shape (:class:`ProbedCovariance`)."""
_PROBE_SEED: Final = "standings"
"""Its random vectors' seed: the same results give the same intervals."""
_SOLVE_TOLERANCE: Final = 1e-12
_PROBE_TOLERANCE: Final = 1e-6


class _Graph(NamedTuple):
    """A field's pairings as a sparse graph. Per edge (a pairing, lower index first): its two
    bots, the first one's score and the series; per bot: its neighbours, and the edge to each."""

    first: tuple[int, ...]
    second: tuple[int, ...]
    score: tuple[float, ...]
    series: tuple[int, ...]
    neighbours: tuple[tuple[int, ...], ...]
    edges: tuple[tuple[int, ...], ...]


def _graph(totals: dict[tuple[int, int], tuple[float, int]], size: int) -> _Graph:
    """The graph of :func:`pairing_totals`' pairings among ``size`` bots."""
    neighbours: list[list[int]] = [[] for _ in range(size)]
    edges: list[list[int]] = [[] for _ in range(size)]
    for edge, (i, j) in enumerate(totals):
        neighbours[i].append(j)
        neighbours[j].append(i)
        edges[i].append(edge)
        edges[j].append(edge)
    pairs = list(totals)
    sums = list(totals.values())
    return _Graph(
        tuple(i for i, _ in pairs),
        tuple(j for _, j in pairs),
        tuple(score for score, _ in sums),
        tuple(count for _, count in sums),
        tuple(map(tuple, neighbours)),
        tuple(map(tuple, edges)),
    )


class _Sparse(NamedTuple):
    """The log-likelihood's gradient and information at a point, the information kept sparse:
    ``I = diag(diagonal) - A``, ``A`` holding each pairing's ``weight`` off the diagonal
    (``rows``: per bot, the weights of its edges in the order of its neighbours)."""

    grad: list[float]
    diagonal: list[float]
    weights: list[float]
    rows: list[list[float]]


def _sparse_information(
    graph: _Graph, theta: Sequence[float], prior: float = PRIOR_GAMES
) -> _Sparse:
    """:func:`information`, sparse: the same gradient and matrix, in ``O(pairings)``."""
    grad = [0.0] * len(theta)
    diagonal = [0.0] * len(theta)
    for bot, value in enumerate(theta):
        p = 1 / (1 + math.exp(-value))
        grad[bot] += prior * (1 - 2 * p)
        diagonal[bot] += 2 * prior * p * (1 - p)
    weights = []
    for i, j, score, count in zip(
        graph.first, graph.second, graph.score, graph.series, strict=True
    ):
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        residual, weight = score - count * p, count * p * (1 - p)
        grad[i] += residual
        grad[j] -= residual
        diagonal[i] += weight
        diagonal[j] += weight
        weights.append(weight)
    rows = [[weights[edge] for edge in edges] for edges in graph.edges]
    return _Sparse(grad, diagonal, weights, rows)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def _times(info: _Sparse, graph: _Graph, x: Sequence[float]) -> list[float]:
    """``I x``, in ``O(pairings)``."""
    get = x.__getitem__
    return [
        d * v - sum(map(operator.mul, row, map(get, neighbours)))
        for d, v, row, neighbours in zip(info.diagonal, x, info.rows, graph.neighbours, strict=True)
    ]


def _conjugate_gradient(
    info: _Sparse, graph: _Graph, b: Sequence[float], tolerance: float
) -> list[float]:
    """``x`` with ``I x = b``, by conjugate gradients preconditioned by the diagonal, until
    the residual is ``tolerance`` times ``b`` (in norm); each round one product ``I p``."""
    diagonal = info.diagonal
    x = [0.0] * len(b)
    r = list(b)
    z = [value / d for value, d in zip(r, diagonal, strict=True)]
    p = z[:]
    rz = dot(r, z)
    limit = tolerance * tolerance * dot(b, b)
    for _ in range(4 * len(b) + 20):
        if dot(r, r) <= limit:
            break
        q = _times(info, graph, p)
        alpha = rz / dot(p, q)
        x = [value + alpha * change for value, change in zip(x, p, strict=True)]
        r = [value - alpha * change for value, change in zip(r, q, strict=True)]
        z = [value / d for value, d in zip(r, diagonal, strict=True)]
        rz, before = dot(r, z), rz
        p = [value + rz / before * change for value, change in zip(z, p, strict=True)]
    return x


def sparse_fit(
    coded: Sequence[Unit],
    totals: dict[tuple[int, int], tuple[float, int]],
    bots: Sequence[str],
    rounds: int,
) -> Ratings:
    """:func:`fit_ratings` of a large field: the same model, prior, Newton's method and centring,
    each Newton step solved by :func:`_conjugate_gradient` on the sparse information (a weighted
    graph Laplacian plus the prior's diagonal); the covariance is :class:`ProbedCovariance`'s
    estimate, times the same dispersion."""
    graph = _graph(totals, len(bots))

    def newton(theta: list[float], prior: float) -> list[float]:
        for _ in range(rounds):
            info = _sparse_information(graph, theta, prior)
            step = _conjugate_gradient(info, graph, info.grad, _SOLVE_TOLERANCE)
            theta = [value + change for value, change in zip(theta, step, strict=True)]
            if max(map(abs, step), default=0.0) < 1e-10:
                break
        return theta

    theta, prior, dispersion, df = settle_prior(coded, newton, [0.0] * len(bots))
    level = statistics.fmean(theta) if theta else 0.0
    covariance = ProbedCovariance.of(graph, _sparse_information(graph, theta, prior), dispersion)
    return Ratings(
        tuple(bots),
        tuple(ELO * (value - level) for value in theta),
        covariance,
        dispersion,
        df,
        approximate=True,
    )


class _ProbedRow:
    """A row of :class:`ProbedCovariance`, its entries computed when read."""

    __slots__ = ("_matrix", "_row")

    def __init__(self, matrix: ProbedCovariance, row: int) -> None:
        self._matrix = matrix
        self._row = row

    def __getitem__(self, column: int, /) -> float:
        return self._matrix.entry(self._row, column)


class ProbedCovariance:
    """The centred covariance ``s C I⁻¹ C`` (``s`` the dispersion times Elo², ``C = I - J/n``)
    of a field too large to invert, estimated entry by entry without forming it.

    ``I⁻¹`` is split as ``K + (I⁻¹ - K)``. ``K``, exact to read, has two parts. The field's
    broad shape: ``G = U (Uᵀ I U)⁻¹ Uᵀ``, ``I⁻¹`` exactly on the span of a few vectors ``U``
    that hold its largest directions (``I⁻¹`` applied to random vectors, by conjugate
    gradients: a randomized range finder), which carry a ladder's long chains of ratings. And
    what is left, near each bot: ``N = D⁻¹ + D⁻¹ A D⁻¹``, the first two terms of the Neumann
    series of ``I⁻¹ = (D - A)⁻¹`` (``D`` the information's diagonal, ``A`` the pairings'
    weights), outside that span: ``K = G + (1 - Π) N (1 - Π)ᵀ``, ``Π = G I``. The rest
    ``I⁻¹ - K = (1 - Π)(I⁻¹ - N)(1 - Π)ᵀ`` is estimated by Hutchinson's method: for ``k``
    fixed random ±1 vectors ``z``, ``(I⁻¹ - K) C z`` is one conjugate-gradient solve each, and
    ``C (I⁻¹ - K) C ≈ mean (C (I⁻¹ - K) C z) zᵀ`` (symmetrised), unbiased whatever ``K``; as
    ``K`` holds most of ``I⁻¹``, its noise is that of the small rest (docs/standings.md,
    "Large fields")."""

    def __init__(self, scale: float, near: _Near, probes: _Probes) -> None:
        count = len(probes.probes[0]) if probes.probes else 0
        share = 1.0 / (2 * count) if count else 0.0
        lefts, rights = near.halves()
        self._scale = scale
        self._near = near
        # entry (i, j) = local + left_i · right_j: K's terms through U and B, then the probes'
        self._left = [
            (*left, *(share * value for value in answer), *(share * value for value in probe))
            for left, answer, probe in zip(lefts, probes.answers, probes.probes, strict=True)
        ]
        self._right = [
            (*right, *probe, *answer)
            for right, answer, probe in zip(rights, probes.answers, probes.probes, strict=True)
        ]
        self._diagonal = [self._entry(i, i) for i in range(len(self._left))]

    @classmethod
    def of(cls, graph: _Graph, info: _Sparse, dispersion: float) -> ProbedCovariance:
        """The estimate for the information ``info`` of the graph, scaled by ``dispersion``."""
        size = len(info.diagonal)
        rng = random.Random(_PROBE_SEED)

        def solve(u: Sequence[float], tolerance: float = _PROBE_TOLERANCE) -> list[float]:
            return _conjugate_gradient(info, graph, u, tolerance)

        starts = [solve(_centre(_signs(rng, size)), 1e-3) for _ in range(_MODES)]
        basis = _orthonormal([solve(_centre(start), 1e-3) for start in starts])
        near = _Near.of(graph, info, basis)
        probes, answers = [], []
        for _ in range(_PROBES):
            z = _signs(rng, size)
            u = _centre(z)
            probes.append(z)
            answers.append(_centre([a - b for a, b in zip(solve(u), near.times(u), strict=True)]))
        rows = _Probes(list(zip(*probes, strict=True)), list(zip(*answers, strict=True)))
        return cls(dispersion * ELO * ELO, near, rows)

    def __getitem__(self, row: int, /) -> _ProbedRow:
        return _ProbedRow(self, row)

    def entry(self, i: int, j: int) -> float:
        """The estimated covariance of the centred ratings of bots ``i`` and ``j`` (Elo²)."""
        return self._diagonal[i] if i == j else self._entry(i, j)

    def _entry(self, i: int, j: int) -> float:
        return self._scale * (self._near.local(i, j) + dot(self._left[i], self._right[j]))


class _Probes(NamedTuple):
    """Per bot: its entry in each random vector ``z``, and in each answer ``C (I⁻¹ - K) C z``."""

    probes: list[tuple[float, ...]]
    answers: list[tuple[float, ...]]


def _signs(rng: random.Random, size: int) -> list[float]:
    """A random vector of ±1."""
    return [float(rng.getrandbits(1) * 2 - 1) for _ in range(size)]


def _centre(vector: Sequence[float]) -> list[float]:
    """``C v``: the vector less its mean."""
    mean = statistics.fmean(vector) if vector else 0.0
    return [value - mean for value in vector]


def _orthonormal(vectors: Sequence[Sequence[float]]) -> list[list[float]]:
    """An orthonormal basis of the vectors' span (Gram-Schmidt, twice), dropping any that add
    next to nothing to it."""
    basis: list[list[float]] = []
    for vector in vectors:
        v = list(vector)
        length = math.sqrt(dot(v, v))
        for _ in range(2):
            for done in basis:
                along = dot(done, v)
                v = [a - along * b for a, b in zip(v, done, strict=True)]
        rest = math.sqrt(dot(v, v))
        if rest > 1e-6 * length:
            basis.append([value / rest for value in v])
    return basis


def _matrix_times(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    return [dot(row, vector) for row in matrix]


class _Near:
    """``K = G + (1 - Π) N (1 - Π)ᵀ`` of :class:`ProbedCovariance`, read entry by entry and
    applied to vectors. With ``W = I U``, ``H = Uᵀ W``, ``B = N W`` and
    ``F = H⁻¹ Wᵀ B H⁻¹ + H⁻¹``: ``K = N - U H⁻¹ Bᵀ - B H⁻¹ Uᵀ + U F Uᵀ``."""

    def __init__(  # noqa: PLR0917 - the parts of K
        self,
        graph: _Graph,
        info: _Sparse,
        inverse: list[float],
        weights: dict[tuple[int, int], float],
        modes: tuple[list[tuple[float, ...]], list[tuple[float, ...]]],
        small: tuple[Matrix, Matrix],
    ) -> None:
        self._graph = graph
        self._info = info
        self._inverse = inverse
        self._weights = weights
        self._u, self._b = modes
        self._h, self._f = small
        self._a = [tuple(_matrix_times(self._h, row)) for row in self._u]
        self._c = [tuple(_matrix_times(self._f, row)) for row in self._u]
        size = len(inverse)
        self._means = [value / size for value in self.times([1.0] * size)]
        self._total = math.fsum(self._means) / size if size else 0.0

    @classmethod
    def of(cls, graph: _Graph, info: _Sparse, basis: list[list[float]]) -> _Near:
        """``K`` for the information ``info`` and the span of ``basis`` (orthonormal)."""
        size = len(info.diagonal)
        inverse = [1.0 / d for d in info.diagonal]
        weights = {
            (i, j): weight
            for i, j, weight in zip(graph.first, graph.second, info.weights, strict=True)
        }
        empty: list[tuple[float, ...]] = [()] * size
        plain = cls(graph, info, inverse, weights, (empty, empty), ([], []))
        w = [_times(info, graph, u) for u in basis]
        b = [plain.neumann(column) for column in w]
        h = invert([[dot(u, column) for column in w] for u in basis]) if basis else []
        middle = [[dot(column, other) for other in b] for column in w]
        left = [[dot(row, column) for column in zip(*middle, strict=True)] for row in h]
        f = [
            [dot(row, column) + h[i][k] for k, column in enumerate(zip(*h, strict=True))]
            for i, row in enumerate(left)
        ]
        modes = (
            list(zip(*basis, strict=True)) if basis else empty,
            list(zip(*b, strict=True)) if b else empty,
        )
        return cls(graph, info, inverse, weights, modes, (h, f))

    def neumann(self, u: Sequence[float]) -> list[float]:
        """``N u``."""
        inverse = self._inverse
        v = [a * b for a, b in zip(inverse, u, strict=True)]
        get = v.__getitem__
        return [
            a + d * sum(map(operator.mul, row, map(get, neighbours)))
            for a, d, row, neighbours in zip(
                v, inverse, self._info.rows, self._graph.neighbours, strict=True
            )
        ]

    def times(self, u: Sequence[float]) -> list[float]:
        """``K u``."""
        out = self.neumann(u)
        if not self._h:
            return out
        columns_u = list(zip(*self._u, strict=True))
        columns_b = list(zip(*self._b, strict=True))
        on_u = _matrix_times(columns_u, u)
        on_b = _matrix_times(columns_b, u)
        by_b = _matrix_times(self._h, on_b)  # H⁻¹ Bᵀ u, taken back through U
        by_u = _matrix_times(self._h, on_u)  # H⁻¹ Uᵀ u, taken back through B
        by_f = _matrix_times(self._f, on_u)
        return [
            value - dot(row_u, by_b) - dot(row_b, by_u) + dot(row_u, by_f)
            for value, row_u, row_b in zip(out, self._u, self._b, strict=True)
        ]

    def halves(self) -> tuple[list[tuple[float, ...]], list[tuple[float, ...]]]:
        """Per bot ``i`` a left and a right half, so that ``K_ij`` is :meth:`local` plus
        ``left_i · right_j``: ``(u_i, -H⁻¹u_i, -b_i)`` and ``(F u_i, b_i, H⁻¹u_i)``
        (``u_i``, ``b_i``: bot ``i``'s row of ``U`` and of ``B``)."""
        lefts = [
            (*u, *(-value for value in a), *(-value for value in b))
            for u, a, b in zip(self._u, self._a, self._b, strict=True)
        ]
        rights = [(*c, *b, *a) for c, a, b in zip(self._c, self._a, self._b, strict=True)]
        return lefts, rights

    def local(self, i: int, j: int) -> float:
        """``(C N C)_ij``, where ``N_ij`` is ``1/D_i`` on the diagonal, ``A_ij / (D_i D_j)`` off
        it; with the centring of the rest of ``K`` (which :meth:`halves` gives)."""
        if i == j:
            value = self._inverse[i]
        else:
            pair = (i, j) if i < j else (j, i)
            value = self._weights.get(pair, 0.0) * self._inverse[i] * self._inverse[j]
        return value - self._means[i] - self._means[j] + self._total
