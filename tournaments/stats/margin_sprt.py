"""``gin match --statistic margin``: a sequential test on the paired point margin.

A pair's *margin* is the first bot's hand points minus its opponent's over the pair's two legs
(``PairOutcome.margin``). It carries more of what separates two bots than the pair's series
score: ``benchmarks/pair_power`` measured 1.79x [1.43, 2.28] fewer pairs for the same evidence,
strong against greedy. The test decides between two hypotheses about the *effect*, the mean
margin over its standard deviation (both per pair): H0, that it is ``effect0``, and H1, that it
is ``effect1`` (``effect0 < effect1``).

The effect is the unit because it is what the test's length depends on, whatever the point
scale (which moves with the rule variant and the opponents): at ``effect0 = 0``, a test for
``effect1 = d`` takes about ``5.3 / d**2`` pairs at either hypothesis at 5%/5% (59 at 0.3,
measured 65; 15 at 0.6), the way fishtest states its hypotheses in normalized Elo. The margin
itself, in points, is reported beside it (``effect * sd``).

The LLR is the generalized likelihood ratio of a normal model of the margins whose mean is
``effect * sd``, the sd fitted by maximum likelihood under each hypothesis (it has a closed
form: :func:`margin_llr`). It depends on the margins only through ``r = mean / sqrt(mean of
squares)``, so it does not change when the points are scaled. The model is only a means to a
statistic: its error rates on heavy-tailed, skewed and real margins are measured by
``benchmarks/margin_sprt``.

>>> settings = MarginSettings(effect0=0.0, effect1=0.3)
>>> margin_status([], settings).llr
0.0
>>> margin_status([30.0, -10.0, 25.0, 5.0] * 20, settings).verdict
<Verdict.H1: 'H1'>
>>> margin_status([-30.0, 10.0, -25.0, 5.0] * 20, settings).verdict
<Verdict.H0: 'H0'>
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tournaments.stats.sprt import (
    SprtSettings,
    SprtStatus,
    Verdict,
    check_hypotheses,
    finite,
    settings_fields,
    status,
    wald_bounds,
)

__all__ = [
    "EFFECT_LIMIT",
    "MARGIN",
    "MEASURED_SKEW",
    "PENTANOMIAL",
    "STATISTICS",
    "MarginRun",
    "MarginSettings",
    "TestSettings",
    "margin_llr",
    "margin_skewness",
    "margin_status",
    "sequential_status",
    "settings_from_dict",
    "statistic_of",
]

PENTANOMIAL: Final = "pentanomial"
"""The statistic of the default test: each pair's series score (``tournaments.stats.sprt``)."""
MARGIN: Final = "margin"
"""The statistic of this module's test: each pair's point margin."""
STATISTICS: Final = (PENTANOMIAL, MARGIN)

EFFECT_LIMIT: Final = 3.0
"""The largest effect a hypothesis may name: a mean margin of three standard deviations a pair
(two bots that far apart need no sequential test)."""


@dataclass(frozen=True, slots=True)
class MarginSettings:
    """The hypotheses (effects ``effect0 < effect1``: mean margin over its sd, per pair) and the
    error rates of the margin test.

    Raises:
        ValueError: a field out of range, with a one-line message naming it.

    >>> MarginSettings(effect0=0.5, effect1=0.2)
    Traceback (most recent call last):
    ...
    ValueError: effect1 must be greater than effect0 (got effect0=0.5, effect1=0.2)
    >>> MarginSettings.from_dict(MarginSettings(0.0, 0.3, beta=0.1).to_dict())
    MarginSettings(effect0=0.0, effect1=0.3, alpha=0.05, beta=0.1)
    """

    effect0: float
    effect1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        check_hypotheses(
            ("effect0", self.effect0),
            ("effect1", self.effect1),
            EFFECT_LIMIT,
            self.alpha,
            self.beta,
        )

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds on the LLR, as the pentanomial test's."""
        return wald_bounds(self.alpha, self.beta)

    def to_dict(self) -> dict[str, float | str]:
        """The settings as a JSON-ready mapping, the statistic named (read by ``from_dict`` and
        :func:`settings_from_dict`)."""
        return {
            "statistic": MARGIN,
            "effect0": self.effect0,
            "effect1": self.effect1,
            "alpha": self.alpha,
            "beta": self.beta,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> MarginSettings:
        """Settings from ``to_dict``'s mapping; ``alpha`` and ``beta`` may be left out.

        Raises:
            ValueError: a field missing, unknown, not a number or out of range.
        """
        return cls(**settings_fields(data, ("effect0", "effect1"), "margin test"))


MEASURED_SKEW: Final = 0.5
"""The largest skewness of margins (either way) at which the test's error rates were measured
within 1.5 points of nominal (``benchmarks/margin_sprt``): beyond it, alpha grows when the long
tail is on the losing side (8% at a skew of -1) and shrinks when it is on the winning side."""


def margin_skewness(margins: Sequence[float]) -> float | None:
    """The sample skewness of the margins (``None`` below 3 of them or without spread).

    >>> round(margin_skewness([0.0, 0.0, 0.0, 10.0]), 3)
    1.155
    """
    if len(margins) < 3:
        return None
    mean = math.fsum(margins) / len(margins)
    second = math.fsum((x - mean) ** 2 for x in margins) / len(margins)
    if second <= 0.0:
        return None
    third = math.fsum((x - mean) ** 3 for x in margins) / len(margins)
    return float(third / math.pow(second, 1.5))


TestSettings = SprtSettings | MarginSettings
"""A match's sequential test: on the pentanomial of series scores, or on the margin."""


def statistic_of(settings: TestSettings) -> str:
    """The statistic a test counts: ``pentanomial`` or ``margin``."""
    return MARGIN if isinstance(settings, MarginSettings) else PENTANOMIAL


def settings_from_dict(data: Mapping[str, object]) -> TestSettings:
    """A test's settings as stored (``statistic`` absent: the pentanomial test, as stored before
    the margin test existed).

    Raises:
        ValueError: an unknown statistic, or settings that do not fit it.

    >>> settings_from_dict({"elo0": 0, "elo1": 10})
    SprtSettings(elo0=0.0, elo1=10.0, alpha=0.05, beta=0.05)
    >>> settings_from_dict({"statistic": "margin", "effect0": 0, "effect1": 0.3}).effect1
    0.3
    >>> settings_from_dict({"statistic": "elo"})
    Traceback (most recent call last):
    ...
    ValueError: the statistic must be pentanomial or margin, not 'elo'
    """
    statistic = data.get("statistic", PENTANOMIAL)
    if statistic == MARGIN:
        return MarginSettings.from_dict(data)
    if statistic != PENTANOMIAL:
        raise ValueError(f"the statistic must be pentanomial or margin, not {statistic!r}")
    return SprtSettings.from_dict({key: value for key, value in data.items() if key != "statistic"})


def _profile(effect: float, r: float) -> float:
    """The normal log-likelihood per pair, the sd profiled out, at mean ``effect * sd``, less
    what does not depend on ``effect`` (``r``: mean over root mean square of the margins).

    With ``u = 1 / sd``, the log-likelihood per pair is ``log u - m2 u^2 / 2 + effect m1 u -
    effect^2 / 2``; its maximum is at the positive root of ``m2 u^2 - effect m1 u - 1``, and
    ``u sqrt(m2)`` is the ``w`` below."""
    w = (effect * r + math.sqrt(effect * effect * r * r + 4.0)) / 2.0
    return math.log(w) + effect * r * w / 2.0 - effect * effect / 2.0


def _ratio(count: int, total: float, squares: float) -> float:
    """``r``: the mean margin over its root mean square (0 when every margin is 0)."""
    if count == 0 or squares <= 0.0:
        return 0.0
    return max(-1.0, min(1.0, (total / count) / math.sqrt(squares / count)))


def _llr_of(count: int, total: float, squares: float, settings: MarginSettings) -> float:
    if count == 0:
        return 0.0
    r = _ratio(count, total, squares)
    return count * (_profile(settings.effect1, r) - _profile(settings.effect0, r))


def margin_llr(margins: Sequence[float], settings: MarginSettings) -> float:
    """The generalized log-likelihood ratio of H1 against H0 given the pairs' margins: 0 with no
    pairs; pairs that all tie on points count as pairs of mean margin 0 (``r = 0``).

    >>> settings = MarginSettings(0.0, 0.3)
    >>> round(margin_llr([30.0, -10.0, 25.0, 5.0] * 20, settings), 3)
    11.874
    >>> margin_llr([3.0, -1.0], settings) == margin_llr([300.0, -100.0], settings)
    True
    """
    total = math.fsum(margins)
    squares = math.fsum(x * x for x in margins)
    return _llr_of(len(margins), total, squares, settings)


def _status(value: float, bounds: tuple[float, float], pairs: int) -> SprtStatus:
    lower, upper = bounds
    verdict = Verdict.H1 if value >= upper else Verdict.H0 if value <= lower else None
    return SprtStatus(value, lower, upper, verdict, pairs)


def margin_status(margins: Sequence[float], settings: MarginSettings) -> SprtStatus:
    """The LLR of the margins, the bounds, and the verdict if the LLR has reached one."""
    return _status(margin_llr(margins, settings), settings.bounds, len(margins))


def sequential_status(
    settings: TestSettings, counts: Sequence[int], margins: Sequence[float]
) -> SprtStatus:
    """Where a match's test stands: the pentanomial test reads ``counts`` (pairs by outcome),
    the margin test ``margins`` (one per complete pair).

    Raises:
        ValueError: ``counts`` is not five counts of zero or more (pentanomial test).
    """
    if isinstance(settings, MarginSettings):
        return margin_status(margins, settings)
    c = tuple(counts)
    if len(c) != 5:
        raise ValueError(f"a pentanomial is five counts of zero or more, not {c}")
    return status((c[0], c[1], c[2], c[3], c[4]), settings)


class MarginRun:
    """The margin test fed one pair at a time (running sums: each step costs the same).

    >>> run = MarginRun(MarginSettings(0.0, 0.3))
    >>> for margin in [30.0, -10.0, 25.0, 5.0] * 20:
    ...     now = run.add(margin)
    >>> now.pairs, round(now.llr, 3)
    (80, 11.874)
    """

    def __init__(self, settings: MarginSettings) -> None:
        self.settings = settings
        self.pairs = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, margin: float) -> SprtStatus:
        """Count one more pair's margin and say where the test stands.

        Raises:
            ValueError: ``margin`` is not a finite number.
        """
        value = finite("a margin", margin)
        self.pairs += 1
        self.total += value
        self.squares += value * value
        llr = _llr_of(self.pairs, self.total, self.squares, self.settings)
        return _status(llr, self.settings.bounds, self.pairs)
