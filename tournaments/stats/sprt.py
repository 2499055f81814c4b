"""The sequential test of ``gin match``: fishtest's GSPRT on pair outcomes.

The test decides between two hypotheses about the Elo difference of a bot over its opponent:
H0, that it is ``elo0``, and H1, that it is ``elo1`` (``elo0 < elo1``). Its unit is the duplicate
pair, seen as one of five outcomes (the bot's series score in the pair: 0, 0.5, 1, 1.5 or 2 of
two; see ``tournaments.stats.pairs.pentanomial``), so the luck shared by the two legs of a pair is
never counted as evidence.

After each pair the test computes the generalized log-likelihood ratio (LLR) of the pairs seen so
far, and stops as soon as it leaves the interval ``(lower, upper)`` of Wald's bounds: below
``lower`` it accepts H0, above ``upper`` H1. ``alpha`` is the chance of accepting H1 when H0 is
true, ``beta`` that of accepting H0 when H1 is true.

>>> settings = SprtSettings(elo0=0.0, elo1=20.0)
>>> [round(b, 3) for b in settings.bounds]
[-2.944, 2.944]
>>> empty = status((0, 0, 0, 0, 0), settings)
>>> empty.llr, empty.verdict, empty.pairs
(0.0, None, 0)
>>> status((10, 40, 100, 60, 30), settings).verdict
<Verdict.H1: 'H1'>
>>> status((30, 60, 100, 40, 10), settings).verdict
<Verdict.H0: 'H0'>
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protocol.bounded import loads_json
from tournaments.stats.pairs import Pentanomial

__all__ = [
    "ELO_LIMIT",
    "EMPTY_CELL",
    "PAIR_SCORES",
    "SprtRun",
    "SprtSettings",
    "SprtStatus",
    "Verdict",
    "check_hypotheses",
    "elo_score",
    "finite",
    "fit_mean",
    "llr",
    "llr_normal",
    "settings_fields",
    "status",
    "wald_bounds",
]


PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score (the bot's share of its two series) for each of the five outcomes."""

EMPTY_CELL = 1e-3
"""The count an empty outcome is given before the likelihoods are fitted (fishtest's
regularisation). Without it the fits could only use the outcomes seen so far: after a few pairs
all on one side of a hypothesis' score (three 1-1 pairs, say) no such distribution has that
score, and the LLR would not exist."""

_SOLVER_STEPS = 200
"""Enough for bisection alone to pin the multiplier to the last bit."""
_SOLVER_TOLERANCE = 1e-12
"""How near zero the fitting equation's value must come (Newton takes about 4 to 6 steps; more
on the first few pairs, when the regularised cells put the answer near the bracket's end)."""


def elo_score(elo: float) -> float:
    """The expected score of a series (and so of a pair) at an Elo difference, by the logistic
    model.

    >>> elo_score(0.0), round(elo_score(400.0), 4), round(elo_score(-400.0), 4)
    (0.5, 0.9091, 0.0909)
    """
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


ELO_LIMIT = 1000.0
"""The largest Elo difference a hypothesis may name (a score of 0.9968): beyond it the expected
score rounds towards 1 and the fit has no room."""


def finite(name: str, value: object) -> float:
    """``value`` as a float, if it is a finite number (not a bool).

    Raises:
        ValueError: one line naming ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, not {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, not {number}")
    return number


def wald_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on an LLR at the error rates:
    ``(log(beta/(1-alpha)), log((1-beta)/alpha))``."""
    return (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))


def check_hypotheses(
    low: tuple[str, float], high: tuple[str, float], limit: float, alpha: float, beta: float
) -> None:
    """Check a sequential test's settings: two named hypotheses, finite, within ``+-limit`` and
    in order, and error rates strictly between 0 and 0.5.

    Raises:
        ValueError: one line naming the field out of range.
    """
    for name, value in (low, high, ("alpha", alpha), ("beta", beta)):
        finite(name, value)
    for name, value in (low, high):
        if abs(value) > limit:
            raise ValueError(f"{name} must be between -{limit:g} and {limit:g}")
    if not low[1] < high[1]:
        raise ValueError(
            f"{high[0]} must be greater than {low[0]} (got {low[0]}={low[1]}, {high[0]}={high[1]})"
        )
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 0.5:
            raise ValueError(f"{name} must be between 0 and 0.5 (exclusive), not {value}")


def settings_fields(
    data: Mapping[str, object], hypotheses: tuple[str, str], label: str
) -> dict[str, float]:
    """A test's stored settings read as numbers: the two ``hypotheses`` required, ``alpha`` and
    ``beta`` optional, nothing else (a ``statistic`` key is the caller's).

    Raises:
        ValueError: a field unknown, missing or not a finite number, naming the ``label``ed test.
    """
    fields = {key: value for key, value in data.items() if key != "statistic"}
    unknown = sorted(set(fields) - {*hypotheses, "alpha", "beta"})
    if unknown:
        raise ValueError(f"unknown {label} setting {unknown[0]!r}")
    for name in hypotheses:
        if name not in fields:
            raise ValueError(f"{label} setting {name} is missing")
    return {name: finite(name, value) for name, value in fields.items()}


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """The hypotheses (Elo differences ``elo0 < elo1``) and the error rates of the test.

    Raises:
        ValueError: a field out of range, with a one-line message naming it.

    >>> SprtSettings(elo0=5.0, elo1=0.0)
    Traceback (most recent call last):
    ...
    ValueError: elo1 must be greater than elo0 (got elo0=5.0, elo1=0.0)
    >>> SprtSettings.from_dict(SprtSettings(0.0, 10.0, beta=0.1).to_dict())
    SprtSettings(elo0=0.0, elo1=10.0, alpha=0.05, beta=0.1)
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        check_hypotheses(("elo0", self.elo0), ("elo1", self.elo1), ELO_LIMIT, self.alpha, self.beta)

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds on the LLR: ``(log(beta/(1-alpha)), log((1-beta)/alpha))``."""
        return wald_bounds(self.alpha, self.beta)

    def to_dict(self) -> dict[str, float]:
        """The settings as a JSON-ready mapping (read back by ``from_dict``)."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> SprtSettings:
        """Settings from ``to_dict``'s mapping; ``alpha`` and ``beta`` may be left out.

        Raises:
            ValueError: a field missing, unknown, not a number or out of range.
        """
        return cls(**settings_fields(data, ("elo0", "elo1"), "SPRT"))


class Verdict(enum.StrEnum):
    """What the test accepted."""

    H0 = "H0"
    """Accepted ``elo0``: the bot is not better by ``elo1``."""
    H1 = "H1"
    """Accepted ``elo1``: the bot is better by at least about ``elo1``."""


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where the test stands after the pairs counted so far."""

    llr: float
    lower: float
    upper: float
    verdict: Verdict | None
    """``None`` while the LLR is strictly between the bounds: keep going."""
    pairs: int
    """Complete pairs counted."""

    @property
    def percent(self) -> float:
        """The LLR as a percentage of the bound it heads for (the upper one when positive, the
        lower one when negative), as cutechess and fastchess print it: 100% or more, decided.

        >>> round(SprtStatus(2.96, -2.944, 2.944, Verdict.H1, 90).percent, 1)
        100.5
        >>> SprtStatus(-1.472, -2.944, 2.944, None, 30).percent
        50.0
        """
        bound = self.upper if self.llr >= 0 else self.lower
        return 100.0 * self.llr / bound if bound else 0.0

    def to_json(self) -> str:
        """The status as the store keeps a match's decision."""
        return json.dumps(
            {
                "llr": self.llr,
                "lower": self.lower,
                "upper": self.upper,
                "verdict": None if self.verdict is None else self.verdict.value,
                "pairs": self.pairs,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> SprtStatus:
        """Read :meth:`to_json`'s form.

        Raises:
            ValueError: not such a status.
        """
        try:
            data = loads_json(text)
            verdict = data["verdict"]
            return cls(
                float(data["llr"]),
                float(data["lower"]),
                float(data["upper"]),
                None if verdict is None else Verdict(verdict),
                int(data["pairs"]),
            )
        except (TypeError, KeyError, ValueError) as error:
            raise ValueError(f"not a sequential test's status ({error})") from None


def _check_counts(counts: Sequence[int]) -> None:
    if len(counts) != len(PAIR_SCORES) or any(count < 0 for count in counts):
        raise ValueError(f"a pentanomial is five counts of zero or more, not {tuple(counts)}")


def _frequencies(counts: Sequence[int]) -> tuple[float, list[float]]:
    """The regularised number of pairs and the empirical share of each outcome."""
    cells = [float(count) if count > 0 else EMPTY_CELL for count in counts]
    total = sum(cells)
    return total, [cell / total for cell in cells]


def fit_mean(
    frequencies: Sequence[float], mean: float, scores: Sequence[float] = PAIR_SCORES
) -> list[float]:
    """The distribution over ``scores`` (ascending; by default the five pair scores) with
    expected score ``mean`` that is most likely to have produced the empirical ``frequencies``
    (one for each score, all positive, summing to 1; ``mean`` strictly between the end scores).

    The maximum-likelihood distribution under the constraint is ``p_i = f_i / (1 + t (x_i -
    mean))`` for the one ``t`` that makes it sum to 1 (a Lagrange multiplier; fishtest's
    ``MLE_expected``). ``t`` is found by Newton's method kept inside a bracket by bisection.
    Fitted to the five scores it gives the pentanomial likelihood; to the three series scores
    0, 0.5, 1, the trinomial one (only to show what ignoring the pairs would do).

    >>> [round(p, 4) for p in fit_mean([0.2] * 5, 0.5)]
    [0.2, 0.2, 0.2, 0.2, 0.2]
    >>> fitted = fit_mean([0.1, 0.2, 0.4, 0.2, 0.1], 0.6)
    >>> round(sum(fitted), 9), round(sum(p * x for p, x in zip(fitted, PAIR_SCORES)), 9)
    (1.0, 0.6)
    """
    gaps = [score - mean for score in scores]
    t = _multiplier(frequencies, gaps, 0.0)
    fitted = [f / (1.0 + t * g) for f, g in zip(frequencies, gaps, strict=True)]
    total = sum(fitted)
    return [p / total for p in fitted]


def _multiplier(frequencies: Sequence[float], gaps: Sequence[float], start: float) -> float:
    """The ``t`` of ``fit_mean`` for scores ``mean + gaps`` (ascending), Newton's method from
    ``start`` (any number: one outside the bracket is replaced by bisection)."""
    # Every 1 + t * gap must stay positive: t lies strictly between these two.
    low, high = -1.0 / gaps[-1], -1.0 / gaps[0]
    t = start if low < start < high else 0.0
    for _ in range(_SOLVER_STEPS):
        # value(t) = sum f g / (1 + t g) is decreasing in t, zero at the answer; slope = -value'.
        value = slope = 0.0
        for f, g in zip(frequencies, gaps, strict=True):
            share = g / (1.0 + t * g)
            value += f * share
            slope += f * share * share
        if abs(value) < _SOLVER_TOLERANCE:
            break
        if value > 0.0:
            low = t
        else:
            high = t
        step = t + value / slope
        t = step if low < step < high else (low + high) / 2.0
    return t


def _log_ratios(
    frequencies: Sequence[float],
    gaps0: Sequence[float],
    t0: float,
    gaps1: Sequence[float],
    t1: float,
) -> float:
    """``sum f log(p1 / p0)`` for the fits of multipliers ``t0`` and ``t1``."""
    fitted0 = [f / (1.0 + t0 * g) for f, g in zip(frequencies, gaps0, strict=True)]
    fitted1 = [f / (1.0 + t1 * g) for f, g in zip(frequencies, gaps1, strict=True)]
    norm = math.log(sum(fitted0) / sum(fitted1))
    return norm + sum(
        f * math.log(p1 / p0) for f, p0, p1 in zip(frequencies, fitted0, fitted1, strict=True)
    )


def _gaps(elo: float) -> list[float]:
    mean = elo_score(elo)
    return [score - mean for score in PAIR_SCORES]


def _llr(
    counts: Sequence[int], settings: SprtSettings, starts: tuple[float, float]
) -> tuple[float, tuple[float, float]]:
    """The LLR of ``counts`` and the two fits' multipliers, Newton started from ``starts``."""
    if sum(counts) == 0:
        return 0.0, starts
    total, frequencies = _frequencies(counts)
    gaps0, gaps1 = _gaps(settings.elo0), _gaps(settings.elo1)
    t0 = _multiplier(frequencies, gaps0, starts[0])
    t1 = _multiplier(frequencies, gaps1, starts[1])
    return total * _log_ratios(frequencies, gaps0, t0, gaps1, t1), (t0, t1)


def llr(counts: Pentanomial, settings: SprtSettings) -> float:
    """The generalized log-likelihood ratio of H1 against H0 given the pair counts.

    The empirical distribution of the five outcomes is fitted twice, by maximum likelihood, under
    the constraint that the expected pair score is that of ``elo0`` and then that of ``elo1``;
    the LLR is the log of the ratio of the likelihoods of the pairs under the two fits. Empty
    outcomes count as ``EMPTY_CELL`` pairs (fishtest's regularisation); with no pairs it is 0.

    Raises:
        ValueError: ``counts`` is not five counts of zero or more.

    >>> settings = SprtSettings(elo0=0.0, elo1=20.0)
    >>> round(llr((10, 40, 100, 60, 30), settings), 3)
    5.035
    >>> round(llr((30, 60, 100, 40, 10), settings), 3)
    -7.71
    """
    _check_counts(counts)
    return _llr(counts, settings, (0.0, 0.0))[0]


def llr_normal(counts: Pentanomial, settings: SprtSettings) -> float:
    """The LLR's normal approximation: ``n (s1 - s0) (2 m - s0 - s1) / (2 v)`` for ``n`` pairs of
    mean score ``m`` and variance ``v`` (``s0``, ``s1`` the scores of ``elo0``, ``elo1``).

    Close to ``llr`` when ``elo1 - elo0`` is small against the spread of pair scores; cheaper.
    With no pairs, or no spread (a single outcome seen), it is 0.

    Raises:
        ValueError: ``counts`` is not five counts of zero or more.

    >>> settings = SprtSettings(elo0=0.0, elo1=20.0)
    >>> round(llr_normal((10, 40, 100, 60, 30), settings), 3)
    5.205
    """
    _check_counts(counts)
    pairs = sum(counts)
    if pairs == 0:
        return 0.0
    mean = sum(c * x for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    variance = sum(c * (x - mean) ** 2 for c, x in zip(counts, PAIR_SCORES, strict=True)) / pairs
    if variance == 0.0:
        return 0.0
    s0, s1 = elo_score(settings.elo0), elo_score(settings.elo1)
    return pairs * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


def status(counts: Pentanomial, settings: SprtSettings) -> SprtStatus:
    """The LLR of ``counts``, the bounds, and the verdict if the LLR has reached one.

    Raises:
        ValueError: ``counts`` is not five counts of zero or more.
    """
    return _status(llr(counts, settings), settings, sum(counts))


def _status(value: float, settings: SprtSettings, pairs: int) -> SprtStatus:
    lower, upper = settings.bounds
    verdict = Verdict.H1 if value >= upper else Verdict.H0 if value <= lower else None
    return SprtStatus(value, lower, upper, verdict, pairs)


class SprtRun:
    """The test fed one pair at a time: after each, the same status as ``status`` of the counts
    so far (each fit's Newton search starts where the last pair's ended: about 15% faster over a
    whole run than ``status`` after each pair).

    >>> run = SprtRun(SprtSettings(elo0=0.0, elo1=20.0))
    >>> for outcome in [2, 3, 4] * 40:
    ...     now = run.add(outcome)
    >>> run.counts, abs(now.llr - status(run.counts, run.settings).llr) < 1e-9
    ((0, 0, 40, 40, 40), True)
    """

    def __init__(self, settings: SprtSettings, counts: Pentanomial = (0, 0, 0, 0, 0)) -> None:
        _check_counts(counts)
        self.settings = settings
        self._counts = list(counts)
        self._starts = (0.0, 0.0)

    @property
    def counts(self) -> Pentanomial:
        """The pairs counted so far, by outcome."""
        c = self._counts
        return c[0], c[1], c[2], c[3], c[4]

    def add(self, outcome: int) -> SprtStatus:
        """Count one more pair, of outcome ``outcome`` (0 to 4: the bot's series score in it,
        times two), and say where the test stands.

        Raises:
            ValueError: ``outcome`` is not 0 to 4.
        """
        if outcome not in range(len(PAIR_SCORES)):
            raise ValueError(f"a pair's outcome is 0 to 4, not {outcome!r}")
        self._counts[outcome] += 1
        value, self._starts = _llr(self._counts, self.settings, self._starts)
        return _status(value, self.settings, sum(self._counts))
