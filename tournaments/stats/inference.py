"""The small statistics of the standings and of ``gin match``: Student's t, logistic Elo, and
the estimate of one pairing from its units.

Standard library only, so that the standings import fast and need nothing compiled. The t
distribution's CDF is the regularized incomplete beta function, evaluated by its continued
fraction (Lentz's method); its quantile inverts the CDF by bisection to full double precision.
``tests/test_standings_inference.py`` checks both against ``scipy.stats.t`` over a grid.

A *unit* is a duplicate pair, or a lone series where there are no pairs
(``tournaments.stats.pairs``): its score is the bot's share of the unit's series (draws half), its
margin the bot's points minus the opponent's over them. The units of one pairing are independent;
the two legs of a pair are not, which is why the unit, never the series, is what is counted here.

>>> estimate = score_estimate([1.0, 0.75, 0.5, 1.0, 0.75, 0.25])
>>> round(estimate.mean, 3), round(estimate.los, 4), round(estimate.elo_low), estimate.elo_high
(0.708, 0.9233, -78, None)

"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final, Literal

__all__ = [
    "ELO_PER_NAT",
    "LEVEL",
    "MIN_UNITS",
    "PRIOR_VARIANCE",
    "Bound",
    "MeanEstimate",
    "ScoreEstimate",
    "critical_t",
    "critical_z",
    "elo_from_score",
    "mean_estimate",
    "normalized_elo",
    "reading",
    "score_estimate",
    "score_from_elo",
    "t_cdf",
    "t_quantile",
]


ELO_PER_NAT: Final = 400 / math.log(10)
"""Elo points per unit of log-odds (the logistic Elo scale, ``400 log10``)."""

LEVEL: Final = 0.95
"""The two-sided level of every interval shown."""

MIN_UNITS: Final = 4
"""Intervals and LOS of a pairing are given from this many units up (``None`` below)."""

PRIOR_VARIANCE: Final = 0.125
"""The variance of the score of a pair of two independent even series (1/8): the variance of
a pairing's unit scores is estimated as if one more unit had it."""

NORMAL: Final = NormalDist()

Bound = Literal["lower", "upper"]
"""An estimate that is only a bound: ``lower`` (the bot won every unit), ``upper`` (lost all)."""


# --- Student's t -------------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``, for ``a, b > 0``, ``0 <= x <= 1``.

    >>> round(incomplete_beta(2, 3, 0.4), 6)  # P(Binomial(4, 0.4) >= 2)
    0.5248
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``df > 0``).

    >>> round(t_cdf(2.0, 3), 6), t_cdf(0.0, 7)
    (0.930337, 0.5)
    """
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_pdf(t: float, df: float) -> float:
    """The density of Student's t with ``df`` degrees of freedom."""
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The t such that ``t_cdf(t, df) == p``, for ``0 < p < 1``: Newton's method from the
    normal quantile, kept inside a bracket that bisection narrows where Newton would leave it.

    Raises:
        ValueError: if ``p`` is not strictly between 0 and 1.

    >>> round(t_quantile(0.975, 3), 4), round(t_quantile(0.975, 1e9), 4)
    (3.1824, 1.96)
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, not {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, 2.0 * high
    t = min(max(NORMAL.inv_cdf(p), low), high)
    for _ in range(200):
        error = t_cdf(t, df) - p
        if error == 0:
            break
        if error < 0:
            low = t
        else:
            high = t
        step = error / t_pdf(t, df)
        guess = t - step
        t = guess if low < guess < high else 0.5 * (low + high)
        if abs(step) <= 1e-14 * t or high - low <= 1e-15 * high:
            break
    return t


@functools.cache
def critical_t(df: float, level: float = LEVEL) -> float:
    """The two-sided critical value: ``t_quantile((1 + level) / 2, df)``."""
    return t_quantile((1.0 + level) / 2.0, df)


def critical_z(level: float = LEVEL) -> float:
    """The two-sided normal critical value (1.96 at 95%)."""
    return NORMAL.inv_cdf((1.0 + level) / 2.0)


# --- Elo ---------------------------------------------------------------------------------------


def elo_from_score(score: float) -> float:
    """The Elo difference at which the expected score is ``score`` (infinite at 0 and 1).

    >>> round(elo_from_score(0.75), 1), elo_from_score(0.5), elo_from_score(1.0)
    (190.8, 0.0, inf)
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return ELO_PER_NAT * math.log(score / (1.0 - score))


def score_from_elo(elo: float) -> float:
    """The expected score of a bot ``elo`` points stronger: ``1 / (1 + 10^(-elo/400))``.

    >>> round(score_from_elo(190.85), 4), score_from_elo(0.0)
    (0.75, 0.5)
    """
    return 1.0 / (1.0 + math.exp(-elo / ELO_PER_NAT))


# --- one pairing from its units ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeanEstimate:
    """The mean of ``n`` independent unit values, with a t interval (``None`` below 4 units)."""

    n: int
    mean: float
    sd: float
    """The sample standard deviation (0 for one unit)."""
    low: float | None
    high: float | None

    @property
    def se(self) -> float:
        """The standard error of the mean, ``sd / sqrt(n)``."""
        return self.sd / math.sqrt(self.n)


def mean_estimate(values: Sequence[float], level: float = LEVEL) -> MeanEstimate:
    """The mean and its t interval, ``mean ± t(n-1) · sd / sqrt(n)``, from 4 values up.

    Raises:
        ValueError: if ``values`` is empty.

    >>> estimate = mean_estimate([10, -20, 30, 40])
    >>> estimate.mean, round(estimate.low, 2), round(estimate.high, 2)
    (15.0, -27.1, 57.1)
    """
    if not values:
        raise ValueError("no units to estimate from")
    n = len(values)
    mean = statistics.fmean(values)
    sd = _sd(values, mean)
    if n < MIN_UNITS:
        return MeanEstimate(n, mean, sd, None, None)
    half = critical_t(n - 1, level) * sd / math.sqrt(n)
    return MeanEstimate(n, mean, sd, mean - half, mean + half)


@dataclass(frozen=True, slots=True)
class ScoreEstimate:
    """A pairing's score from its units, with the Elo difference, its interval and the LOS.

    LOS and the interval come from the same unit, standard error and t quantile, so they agree:
    LOS > 97.5% exactly when the interval's lower end is above 0 Elo. When the bot won (or
    lost) every unit, the estimate is a bound (``bound``) and the interval one-sided."""

    n: int
    mean: float
    """The mean unit score (the bot's share of the pairing's series, draws half)."""
    los: float | None
    """Likelihood of superiority: one minus the one-sided p-value of "no difference"."""
    elo: float | None
    """The Elo difference at the mean score (``None`` when it is only a bound)."""
    elo_low: float | None
    elo_high: float | None
    bound: Bound | None = None

    @property
    def elo_interval(self) -> tuple[float, float]:
        """The interval's ends, infinite where one is open (needs 4 units)."""
        if self.los is None:
            raise ValueError(f"no interval from {self.n} units")
        low = -math.inf if self.elo_low is None else self.elo_low
        high = math.inf if self.elo_high is None else self.elo_high
        return low, high


def _sd(values: Sequence[float], mean: float) -> float:
    """The sample standard deviation (0 for one value)."""
    if len(values) < 2:
        return 0.0
    return math.sqrt(math.fsum((value - mean) ** 2 for value in values) / (len(values) - 1))


def score_estimate(
    scores: Sequence[float], level: float = LEVEL, series: int | None = None
) -> ScoreEstimate:
    """The estimate of a pairing from its unit scores (each in [0, 1], from the bot's side).

    The interval is ``mean ± t(n-1) · se`` on the score scale, mapped to Elo (the map is
    monotone, so LOS and the interval agree; an end past a score of 0 or 1 is open, ``None``);
    LOS is ``T(n-1)((mean - 0.5) / se)``. The variance in ``se`` counts one more unit with
    ``PRIOR_VARIANCE``: unit scores take few values, and four pairs that happen to be all split
    would otherwise give an interval of width 0 (it covered 79% at 4 pairs of greedy against
    patient without, 100% with; 94% and 95% at 8 and 16 pairs).

    When every unit is a full win (score 1, a sweep), the estimate is a one-sided bound, exact
    from one unit up: with ``s`` the series in the sweep (``series``, ``n`` by default), the
    mean's lower bound is ``(1 - level)/2`` to the power ``1/s``, and LOS is ``1 - 0.5^s``
    (the same one-sided test at a mean of 0.5), so LOS > 97.5% exactly when the bound is above
    0 Elo. For lone series (``s = n``) it holds for any unit scores: a score in [0, 1] with mean
    p is 1 with probability at most p, so n wins have probability at most ``p^n``. For
    duplicate pairs (``s = 2n``) it counts each pair as its two series: a pair's two legs are
    won together with probability at most ``p1 p2 <= p^2`` (``p1``, ``p2`` the legs' mean
    scores, ``p`` theirs) as long as winning one leg does not make winning the other more
    likely, which the mirrored deals make so (the luck of a deal goes to one bot in one leg and
    to the other in the other: ``docs/standings.md``, "Sweeps"). A unit-by-unit loss is the
    mirror image.

    Raises:
        ValueError: if ``scores`` is empty.

    >>> unbeaten = score_estimate([1.0] * 8)
    >>> unbeaten.bound, round(unbeaten.elo_low), unbeaten.elo_high, unbeaten.los
    ('lower', 93, None, 0.99609375)
    >>> round(score_estimate([1.0] * 4, series=8).elo_low)  # 4 pairs, 8 series, all won
    93
    >>> score_estimate([1.0, 0.5, 0.0]).los is None
    True
    """
    if not scores:
        raise ValueError("no units to estimate from")
    n = len(scores)
    mean = statistics.fmean(scores)
    if mean in (0.0, 1.0):
        return _bounded(n, n if series is None else series, mean, level)
    if n < MIN_UNITS:
        return ScoreEstimate(n, mean, None, elo_from_score(mean), None, None)
    squares = math.fsum((score - mean) ** 2 for score in scores)
    se = math.sqrt((squares + PRIOR_VARIANCE) / n / n)
    half = critical_t(n - 1, level) * se
    los = t_cdf((mean - 0.5) / se, n - 1)
    low, high = _finite(elo_from_score(mean - half)), _finite(elo_from_score(mean + half))
    return ScoreEstimate(n, mean, los, elo_from_score(mean), low, high)


def normalized_elo(
    scores: Sequence[float], series_per_unit: int = 1, level: float = LEVEL
) -> tuple[float, float, float] | None:
    """Normalized Elo (nElo, as fishtest and fastchess define it) of a pairing's unit scores,
    with its interval: the score's distance from even over its standard deviation per series,
    on the logistic Elo scale at its centre, ``(mean - 0.5) / sd * 800 / ln 10``, where ``sd`` is
    a unit's standard deviation times the square root of its series (``series_per_unit``: 2 for
    duplicate pairs, whose score is the mean of two legs). It measures how surely a difference
    shows rather than how large it is: the pairs a test needs to resolve it grow as ``1/nElo²``
    whatever the draws and the luck of the deals, so nElo compares across pairings and
    leagues where Elo does not. The variance is :func:`score_estimate`'s (with one more unit
    at ``PRIOR_VARIANCE``), and so is the interval's half width (t on ``n - 1``), so the
    interval excludes 0 exactly when the Elo interval does.

    ``None`` below ``MIN_UNITS`` units and for a sweep (every unit won, or every unit lost: no
    spread to normalize by).

    >>> low, mid, high = normalized_elo([1.0, 0.75, 0.5, 0.75, 0.5, 0.25, 0.75, 1.0], 2)
    >>> round(mid), round(low), round(high)
    (169, -36, 374)
    """
    n = len(scores)
    if n < MIN_UNITS:
        return None
    mean = statistics.fmean(scores)
    if mean in (0.0, 1.0):
        return None
    squares = math.fsum((score - mean) ** 2 for score in scores)
    variance = (squares + PRIOR_VARIANCE) / n
    scale = 2 * ELO_PER_NAT / math.sqrt(series_per_unit * variance)
    half = critical_t(n - 1, level) * math.sqrt(variance / n)
    return (mean - half - 0.5) * scale, (mean - 0.5) * scale, (mean + half - 0.5) * scale


def _finite(elo: float) -> float | None:
    """An interval's end, ``None`` where the score interval reaches 0 or 1 (an open end)."""
    return elo if math.isfinite(elo) else None


def _bounded(n: int, series: int, mean: float, level: float) -> ScoreEstimate:
    """A sweep (``mean`` 1) or a whitewash (0) of ``n`` units, ``series`` series: the exact
    one-sided bound."""
    tail = (1.0 - level) / 2.0
    edge = elo_from_score(tail ** (1.0 / series))
    los = 1.0 - 0.5**series
    if mean == 1.0:
        return ScoreEstimate(n, mean, los, None, edge, None, "lower")
    return ScoreEstimate(n, mean, 1.0 - los, None, None, -edge, "upper")


# --- what a pairing says -----------------------------------------------------------------------


def _side(low: float | None, high: float | None) -> str | None:
    """``better`` or ``worse`` where an interval excludes 0, ``undecided`` where it holds 0,
    ``None`` where there is none."""
    if low is None and high is None:
        return None
    if low is not None and low > 0:
        return "better"
    if high is not None and high < 0:
        return "worse"
    return "undecided"


def reading(score: ScoreEstimate, margin: MeanEstimate | None, unit: str = "pair") -> str:
    """What a pairing's units say at the level of its intervals (95%), in a few words.

    The series decide (the Elo interval or a sweep's bound, which agree with LOS): ``better``
    or ``worse`` where it excludes 0, ``undecided`` where it holds 0, and ``too few pairs
    (3 of 4)`` below ``MIN_UNITS`` units unless every unit went one way (a sweep's bound is
    exact from one unit). The point margin's interval qualifies it: where it says the same, or
    has no interval yet, nothing is added; where it holds 0, ``(series only)``; where it says
    the opposite, the pairing is ``split``; an undecided pairing whose margin decides says so.

    >>> reading(score_estimate([1.0] * 4, series=8), mean_estimate([400.0, 450, 420, 500]))
    'better'
    >>> reading(score_estimate([1.0] * 4, series=8), mean_estimate([-40.0, 10, -20, -30]))
    'better (series only)'
    >>> reading(score_estimate([1.0] * 2, series=4), None), reading(score_estimate([0.5]), None)
    ('undecided', 'too few pairs (1 of 4)')
    """
    if score.los is None:
        return f"too few {unit}{'' if unit == 'series' else 's'} ({score.n} of {MIN_UNITS})"
    tail = (1.0 - LEVEL) / 2.0
    series = "better" if score.los > 1 - tail else "worse" if score.los < tail else "undecided"
    points = None if margin is None else _side(margin.low, margin.high)
    if points is None or points == series:
        return series
    if series == "undecided":
        return series if points == "undecided" else f"undecided (points {points})"
    if points == "undecided":
        return f"{series} (series only)"
    return f"split: series {series}, points {points}"
