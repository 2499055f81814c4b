"""Estimates after a sequential test has stopped, corrected for the stopping rule.

A test that stops as soon as its LLR crosses a bound stops early on pairs that happened to look
good (or bad): the mean of the pairs it saw is biased away from the middle of its hypotheses,
more the sooner it stopped. fishtest's SPRT summary corrects for it, and so does this module, by
the same method (written anew): the LLR is taken for a Brownian motion with drift ``mu`` and
variance ``var`` per pair, both functions of the true difference, run until it leaves ``(lower,
upper)``. The outcomes of the test are ordered from the worst for the bot to the best: a fail
sooner is worse than a fail later, any fail is worse than any pass, a pass later is worse than a
pass sooner. The *median-unbiased* estimate is the difference at which the observed outcome is
the median one (half of the outcomes worse), and the 95% interval's ends are those at which it
is the 97.5th and the 2.5th percentile. As fishtest does, an LLR past its bound is taken back to
the bound, at the time ``pairs * bound / llr`` at which its average slope would have reached it.

What the test did not stop on is corrected by its regression on what it stopped on: after a stop
on the margin, the pair score's bias is ``beta`` times the margin's (``beta`` the slope of the
pair score on the margin, from the pairs), and the other way round.

A normal test of a mean of 0 against 1 (sd 1 a pair) that passed at 10 pairs with an LLR of
2.95 saw a mean of 0.795; corrected, 0.642:

>>> stopped = SprtStatus(2.95, -2.944, 2.944, Verdict.H1, 10)
>>> found = [stopped_quantile(_line(0.0, 1.0, 1.0), (-30.0, 30.0), stopped, q)
...          for q in (0.975, 0.5, 0.025)]
>>> [round(x, 3) for x in found if x is not None]
[-0.111, 0.642, 1.325]
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from tournaments.stats.margin_sprt import EFFECT_LIMIT, MarginSettings, _profile
from tournaments.stats.pairs import PairOutcome
from tournaments.stats.sprt import (
    ELO_LIMIT,
    EMPTY_CELL,
    PAIR_SCORES,
    SprtSettings,
    SprtStatus,
    Verdict,
    elo_score,
)

__all__ = [
    "StoppedEstimate",
    "corrected_estimates",
    "pass_by",
    "stopped_quantile",
]

Drift = Callable[[float], tuple[float, float]]
"""A test's LLR per pair at a true difference: its drift and its variance."""

_NODES: Final = 160
"""Simpson intervals across the bounds (even); the outcome probabilities come out within 1e-6."""
_STEPS: Final = 48
"""Bisection steps of a quantile (the bracket shrinks 2^48 times)."""
_SPAN: Final = 30.0
"""The search bracket: the hypotheses' midpoint plus or minus this many of their distances."""


def _log_phi(z: float) -> float:
    """``log Phi(z)`` without underflow (asymptotic below -30)."""
    if z > -30.0:
        return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))
    return -z * z / 2.0 - math.log(-z) - 0.5 * math.log(2.0 * math.pi)


def _first_passage(mu: float, var: float, level: float, time: float) -> float:
    """The chance that ``mu t + sqrt(var) W_t`` reaches ``level`` (> 0) by ``time``, with no
    other barrier (the inverse Gaussian law)."""
    root = math.sqrt(var * time)
    near = 0.5 * math.erfc(-((mu * time - level) / root) / math.sqrt(2.0))
    far = math.exp(min(700.0, 2.0 * mu * level / var + _log_phi((-mu * time - level) / root)))
    return min(1.0, near + far)


def _exit_upper(mu: float, var: float, lower: float, upper: float, y: float) -> float:
    """The chance that the motion started at ``y`` leaves ``(lower, upper)`` at ``upper``."""
    width = upper - lower
    gamma = 2.0 * mu / var
    if abs(gamma * width) < 1e-9:
        return (y - lower) / width
    if gamma > 0.0:
        return math.expm1(-gamma * (y - lower)) / math.expm1(-gamma * width)
    return math.exp(-gamma * (y - upper)) * (
        math.expm1(gamma * (y - lower)) / math.expm1(gamma * width)
    )


def _unabsorbed(mu: float, var: float, lower: float, upper: float, time: float) -> list[float]:
    """The density at ``time`` of the motion started at 0 and not yet absorbed, on the Simpson
    nodes across ``(lower, upper)``: the eigenfunction series of the killed motion without
    drift, times the drift's likelihood ratio ``exp(mu y / var - mu^2 t / (2 var))``."""
    width = upper - lower
    decay = math.pi * math.pi * var * time / (2.0 * width * width)
    terms = max(1, min(400, math.ceil(math.sqrt(28.0 / decay))))
    start = -lower * math.pi / width
    coefficients = [
        2.0 / width * math.sin(n * start) * math.exp(-n * n * decay) for n in range(1, terms + 1)
    ]
    shift = mu * mu * time / (2.0 * var)
    density = []
    for i in range(_NODES + 1):
        y = lower + width * i / _NODES
        angle = (y - lower) * math.pi / width
        total, before, now, twice = 0.0, 0.0, math.sin(angle), 2.0 * math.cos(angle)
        for c in coefficients:  # sin(n angle) by the three-term recurrence
            total += c * now
            before, now = now, twice * now - before
        density.append(max(0.0, total) * math.exp(mu * y / var - shift))
    return density


def pass_by(mu: float, var: float, lower: float, upper: float, time: float) -> tuple[float, float]:
    """The chances that the LLR, a Brownian motion of drift ``mu`` and variance ``var`` per pair
    started at 0, has left ``(lower, upper)`` at ``upper`` and at ``lower`` by ``time`` pairs.

    Where the far bound cannot matter (the motion's spread by ``time`` under a fifth of the
    nearer bound's distance, or a drift that makes it at most e^-16 likely), each is the first
    passage past one barrier; elsewhere, the chance of leaving ever less that of being still
    inside then and leaving later (the killed motion's density, integrated by Simpson's rule).

    >>> up, down = pass_by(0.0, 1.0, -3.0, 3.0, 1e6)
    >>> round(up, 6), round(down, 6)
    (0.5, 0.5)
    >>> [round(p, 4) for p in pass_by(0.1, 0.04, -2.944, 2.944, 30)]
    [0.5915, 0.0]
    """
    near = min(-lower, upper)
    if var * time < (near / 5.0) ** 2 or abs(mu / var) * near > 8.0:
        return (
            _first_passage(mu, var, upper, time),
            _first_passage(-mu, var, -lower, time),
        )
    density = _unabsorbed(mu, var, lower, upper, time)
    width = upper - lower
    later_up = later_down = 0.0
    for i, p in enumerate(density):
        weight = 1 if i in (0, _NODES) else 4 if i % 2 else 2
        up = _exit_upper(mu, var, lower, upper, lower + width * i / _NODES)
        later_up += weight * p * up
        later_down += weight * p * (1.0 - up)
    scale = width / _NODES / 3.0
    ever = _exit_upper(mu, var, lower, upper, 0.0)
    return max(0.0, ever - scale * later_up), max(0.0, 1.0 - ever - scale * later_down)


def _worse(drift: Drift, theta: float, stopped: SprtStatus) -> float:
    """The chance at difference ``theta`` of an outcome worse for the bot than ``stopped``."""
    slope = stopped.llr / stopped.pairs
    bound = stopped.upper if stopped.verdict is Verdict.H1 else stopped.lower
    time = stopped.pairs if abs(stopped.llr) <= abs(bound) else bound / slope
    mu, var = drift(theta)
    up, down = pass_by(mu, var, stopped.lower, stopped.upper, time)
    return 1.0 - up if stopped.verdict is Verdict.H1 else down


def stopped_quantile(
    drift: Drift, bracket: tuple[float, float], stopped: SprtStatus, share: float
) -> float | None:
    """The difference at which a share ``share`` of the outcomes is worse than ``stopped`` (a
    decided test's status): 0.5, the median-unbiased estimate; 0.975 and 0.025, a 95%
    interval's ends. Searched by bisection within ``bracket``; ``None`` if it lies beyond.

    Raises:
        ValueError: ``stopped`` is not a decided test of one pair or more.
    """
    if stopped.verdict is None or stopped.pairs < 1:
        raise ValueError("only a decided test's estimate is corrected for its stop")
    low, high = bracket
    if _worse(drift, low, stopped) <= share or _worse(drift, high, stopped) >= share:
        return None
    for _ in range(_STEPS):
        mid = (low + high) / 2.0
        if _worse(drift, mid, stopped) > share:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def _bracket(hypotheses: tuple[float, float], naive: float, limit: float) -> tuple[float, float]:
    """Where to search: the hypotheses' midpoint plus or minus 30 of their distances, or three
    times the naive estimate's distance from it if more, within ``+-limit``."""
    middle, gap = (hypotheses[0] + hypotheses[1]) / 2.0, hypotheses[1] - hypotheses[0]
    reach = max(_SPAN * gap, 3.0 * abs(naive - middle))
    return max(-limit, middle - reach), min(limit, middle + reach)


def _line(theta0: float, theta1: float, sd: float) -> Drift:
    """The drift of a normal test of a mean ``theta`` (sd ``sd`` per pair), H0 ``theta0`` and
    H1 ``theta1``: ``(theta1 - theta0)(theta - midpoint) / sd^2``, variance
    ``(theta1 - theta0)^2 / sd^2``."""
    gap, middle, v = theta1 - theta0, (theta0 + theta1) / 2.0, sd * sd
    return lambda theta: (gap * (theta - middle) / v, gap * gap / v)


@dataclass(frozen=True, slots=True)
class StoppedEstimate:
    """What the pairs of a stopped test show, corrected for the stop (median-unbiased; a 95%
    interval by the same ordering), from the first bot's side."""

    elo: float | None
    """``None`` when every pair went one way (the fixed-length estimate is a bound then too)."""
    elo_low: float | None
    """An end is ``None`` where it is open (beyond the search, or no Elo)."""
    elo_high: float | None
    margin: float
    """Points a pair."""
    margin_low: float | None
    margin_high: float | None
    effect: float
    """The margin over its sd, a pair."""


def _score_drift(scores: Sequence[float], settings: SprtSettings) -> Drift:
    """The pentanomial test's LLR per pair at an Elo difference (its normal approximation, the
    pair scores' variance from the pairs, regularised as the test's cells are)."""
    counts = [sum(1 for s in scores if abs(s - x) < 1e-9) for x in PAIR_SCORES]
    cells = [c if c > 0 else EMPTY_CELL for c in counts]
    total = sum(cells)
    mean = sum(c * x for c, x in zip(cells, PAIR_SCORES, strict=True)) / total
    var = sum(c * (x - mean) ** 2 for c, x in zip(cells, PAIR_SCORES, strict=True)) / total
    s0, s1 = elo_score(settings.elo0), elo_score(settings.elo1)
    line = _line(s0, s1, math.sqrt(var))
    return lambda elo: line(elo_score(elo))


def _margin_drift(margins: Sequence[float], settings: MarginSettings) -> Drift:
    """The margin test's LLR per pair at an effect ``d``: its exact mean at the ratio ``r`` of
    an effect ``d`` (``d / sqrt(1 + d^2)``); its variance from the delta method, the spread of
    ``r`` measured on the pairs (so heavy tails and skew count)."""
    n = len(margins)
    m1 = math.fsum(margins) / n
    m2 = math.fsum(x * x for x in margins) / n
    root = math.sqrt(m2)
    influence = [(x - m1) / root - m1 * (x * x - m2) / (2.0 * m2 * root) for x in margins]
    spread = math.fsum(i * i for i in influence) / n

    def gap(r: float) -> float:
        return _profile(settings.effect1, r) - _profile(settings.effect0, r)

    def drift(effect: float) -> tuple[float, float]:
        r = effect / math.sqrt(1.0 + effect * effect)
        slope = (gap(min(1.0, r + 1e-5)) - gap(max(-1.0, r - 1e-5))) / 2e-5
        return gap(r), max(slope * slope * spread, 1e-12)

    return drift


def _elo(score: float) -> float:
    score = min(max(score, 1e-9), 1.0 - 1e-9)
    return max(-ELO_LIMIT, min(ELO_LIMIT, -400.0 * math.log10(1.0 / score - 1.0)))


def _slope(ys: Sequence[float], xs: Sequence[float]) -> float:
    """The least-squares slope of ``ys`` on ``xs`` (0 without spread in ``xs``)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / sxx if sxx > 0.0 else 0.0


def corrected_estimates(
    units: Sequence[PairOutcome],
    settings: SprtSettings | MarginSettings,
    stopped: SprtStatus,
) -> StoppedEstimate | None:
    """The Elo difference and the margin after ``stopped`` (the test's status at its decision),
    corrected for the stop, from the pairs the test counted (the first ``stopped.pairs`` of
    ``units``); ``None`` while undecided, without two pairs of different margins, when every
    pair went one way (pentanomial test), or when the margins' effect is beyond
    ``EFFECT_LIMIT`` (margin test: there a mean over its sd barely moves the LLR's drift, and
    the median outcome does not pin the effect down)."""
    if stopped.verdict is None or stopped.pairs < 2 or len(units) < stopped.pairs:
        return None
    seen = units[: stopped.pairs]
    scores = tuple(unit.score for unit in seen)
    margins = tuple(float(unit.margin) for unit in seen)
    if len(set(margins)) < 2:
        return None
    return _corrected(scores, margins, settings, stopped)


@lru_cache(maxsize=64)
def _corrected(
    scores: tuple[float, ...],
    margins: tuple[float, ...],
    settings: SprtSettings | MarginSettings,
    stopped: SprtStatus,
) -> StoppedEstimate | None:
    """:func:`corrected_estimates`, kept for a match's display (it asks again and again)."""
    if isinstance(settings, MarginSettings):
        return _after_margin(scores, margins, settings, stopped)
    return _after_score(scores, margins, settings, stopped)


def _after_margin(
    scores: Sequence[float],
    margins: Sequence[float],
    settings: MarginSettings,
    stopped: SprtStatus,
) -> StoppedEstimate | None:
    """A stop of the margin test: the effect corrected, the pair score moved with it."""
    sd = statistics.pstdev(margins)
    naive = statistics.fmean(margins) / sd
    if abs(naive) > EFFECT_LIMIT:
        return None  # far past any hypothesis: the LLR's drift no longer tells effects apart
    bracket = _bracket((settings.effect0, settings.effect1), naive, 1e3)
    drift = _margin_drift(margins, settings)
    low, effect, high = (stopped_quantile(drift, bracket, stopped, q) for q in _SHARES)
    if effect is None:
        return None
    shift = _slope(scores, margins) * (effect - naive) * sd
    elos = _shifted_elo(scores, shift)
    return StoppedEstimate(
        elos[1],
        elos[0],
        elos[2],
        effect * sd,
        None if low is None else low * sd,
        None if high is None else high * sd,
        effect,
    )


def _after_score(
    scores: Sequence[float],
    margins: Sequence[float],
    settings: SprtSettings,
    stopped: SprtStatus,
) -> StoppedEstimate | None:
    """A stop of the pentanomial test: the Elo corrected, the margin moved with it."""
    mean = statistics.fmean(scores)
    if mean in (0.0, 1.0):
        return None  # every pair one way: no Elo to correct, only a bound
    bracket = _bracket((settings.elo0, settings.elo1), _elo(mean), ELO_LIMIT)
    drift = _score_drift(scores, settings)
    low, elo, high = (stopped_quantile(drift, bracket, stopped, q) for q in _SHARES)
    if elo is None:
        return None
    margin = statistics.fmean(margins) + _slope(margins, scores) * (elo_score(elo) - mean)
    half = 1.959964 * statistics.stdev(margins) / math.sqrt(len(margins))
    sd = statistics.pstdev(margins)
    return StoppedEstimate(elo, low, high, margin, margin - half, margin + half, margin / sd)


_SHARES: Final = (0.975, 0.5, 0.025)
"""The outcome shares of the interval's lower end, the estimate and the upper end."""


def _shifted_elo(scores: Sequence[float], shift: float) -> tuple[float | None, ...]:
    """The Elo of the mean pair score moved by ``shift``, with its normal 95% interval's ends
    (``None`` each where the score leaves (0, 1), or every pair went one way)."""
    mean = statistics.fmean(scores)
    if mean in (0.0, 1.0):
        return None, None, None
    half = 1.959964 * statistics.stdev(scores) / math.sqrt(len(scores))
    centre = mean + shift
    return tuple(_elo(x) if 0.0 < x < 1.0 else None for x in (centre - half, centre, centre + half))
