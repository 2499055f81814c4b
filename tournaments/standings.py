"""Standings from a league's results: counts per bot, ratings with intervals, per pairing.

The unit of every comparison is a duplicate pair, or a lone series where there are no pairs
(``tournaments.pairs``): the two legs of a pair share their deals, so they are one observation.

Ratings are a Bradley-Terry fit of the series (a draw half a win) with a weak prior, on the Elo
scale, centred on the field average; their 95% intervals (and those of every rating difference)
come from the centred covariance of the fit, scaled by the dispersion of the units. Per pairing:
the mean unit score, the Elo difference with a t interval, LOS from the same t, and the paired
point margin with its t interval (``tournaments.inference``). ``docs/standings.md`` says what each
number is and how the intervals were checked. Stdlib only.

Up to ``DENSE_FIT_MAX_BOTS`` bots the fit uses dense matrices and the exact inverse information.
Larger fields (a ladder of 1,000 bots) get the same ratings from a sparse fit (conjugate
gradients on the information, a graph Laplacian plus the prior) and intervals from an estimate
of the covariance; their standings say so (``approximate``).
"""

from __future__ import annotations

import csv
import io
import math
import operator
import random
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from itertools import chain
from typing import Any, Final, NamedTuple, Protocol

from tournaments.inference import (
    ELO_PER_NAT,
    LEVEL,
    Bound,
    critical_t,
    critical_z,
    elo_from_score,
    mean_estimate,
    reading,
    score_estimate,
)
from tournaments.pairs import PairOutcome, by_pairing, pentanomial, units_of
from tournaments.stats import HandStats
from tournaments.store import ResultRow, Store, _collector_paused

__all__ = [
    "DENSE_FIT_MAX_BOTS",
    "BotStanding",
    "Pairwise",
    "Ratings",
    "Standings",
    "compute",
    "fit_ratings",
    "read_standings",
]


ELO: Final = ELO_PER_NAT
PRIOR_GAMES: Final = 1.0
DISPERSION_MIN_WEIGHT: Final = 0.05
"""Units whose expected series score ``p`` has ``p (1 - p)`` below this (p outside about
0.05-0.95) say too little of the dispersion to count in it."""
PRIOR_DISPERSION_DF: Final = 2
DENSE_FIT_MAX_BOTS: Final = 160
"""Fields of up to this many bots are fitted with dense matrices and get exact intervals (the
fit takes about 2 s at 160 bots, and grows as the cube); larger ones get the sparse fit, with
estimated intervals (``docs/standings.md``, "Large fields")."""
_PROBES: Final = 32
"""Random vectors of the Hutchinson estimate of a large field's covariance."""
_MODES: Final = 24
"""Vectors spanning its broad shape (:class:`_ProbedCovariance`)."""
_PROBE_SEED: Final = "standings"
"""Its random vectors' seed: the same results give the same intervals."""
_SOLVE_TOLERANCE: Final = 1e-12
_PROBE_TOLERANCE: Final = 1e-6


@dataclass
class BotStanding:
    """One bot's line in the standings."""

    bot: str
    series: int = 0
    series_won: int = 0
    series_lost: int = 0
    series_drawn: int = 0
    """Series won, lost and drawn: counts (the share of points is :attr:`score`)."""
    forfeits: int = 0
    games_won: int = 0
    games_lost: int = 0
    hands_won: int = 0
    points_for: int = 0
    points_against: int = 0
    gins: int = 0
    knocks: int = 0
    undercuts_given: int = 0
    undercuts_suffered: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    mean_ms: float = 0.0
    worst_ms: float = 0.0
    rating: float = 0.0
    """Centred on the field average (the fit's, finite even for a bound: it ranks the bots)."""
    rating_low: float | None = 0.0
    """The 95% interval's lower end; ``None`` for a bot that lost every series."""
    rating_high: float | None = 0.0
    """The 95% interval's upper end; ``None`` for a bot that won every series."""
    rating_bound: Bound | None = None
    """``lower``: the bot won every series, its rating is at least ``rating_low`` and has no
    upper end; ``upper``: it lost every series, its rating is at most ``rating_high``."""

    @property
    def score(self) -> float:
        """Share of series won (draws half)."""
        return (self.series_won + 0.5 * self.series_drawn) / self.series if self.series else 0.0


@dataclass(frozen=True)
class Pairwise:
    """One ordered pairing: how ``bot`` did against ``opponent``, counted in units (pairs)."""

    bot: str
    opponent: str
    series: int
    """Series between them, every leg counted."""
    units: int
    """The units the statistics below are computed from: complete duplicate pairs where the
    pairing has any (a pair whose second leg is not in yet waits), else lone series."""
    wins: int
    draws: int
    losses: int
    """The bot's series won, drawn and lost (every series): counts."""
    pentanomial: tuple[int, int, int, int, int] | None
    """Complete pairs in which the bot scored 0, 0.5, 1, 1.5, 2 series; ``None`` without pairs."""
    score: float
    """The mean unit score: the bot's share of the units' series, draws half."""
    elo: float | None
    """The Elo difference at ``score``; ``None`` when it is only a bound (``elo_bound``)."""
    elo_low: float | None
    elo_high: float | None
    """Its 95% t interval (from 4 units; an end is ``None`` where it is open)."""
    elo_bound: Bound | None
    """``lower`` when the bot won every unit (``elo >= elo_low``), ``upper`` when it lost all."""
    los: float | None
    """Likelihood of superiority from the same units and t (from 4 units up): above 97.5%
    exactly when ``elo_low`` is above 0 (before either is rounded)."""
    margin: float | None
    """The mean point margin per unit (the bot's hand points minus the opponent's)."""
    margin_low: float | None
    margin_high: float | None
    """Its 95% t interval (from 4 units up)."""
    rating_diff: float
    rating_diff_low: float | None
    rating_diff_high: float | None
    """The difference of the two ratings and its 95% interval: from the fit of the whole league,
    so it uses every result, not only this pairing's. With ``elo_bound`` (one side won every
    unit, so the fit's prior decides the gap) it is the same exact bound as ``elo_low`` or
    ``elo_high``, and its other end is ``None``."""
    draw_ratio: float
    """Series drawn over series played."""
    pairs_ratio: float | None
    """fastchess's pairs ratio: pairs the bot won (scored 1½ or 2) over pairs it lost (0 or
    ½); ``None`` without pairs, or with none lost."""
    reading: str
    """What the units say at 95%, in a few words (:func:`~tournaments.inference.reading`):
    ``better``, ``worse``, ``undecided``, ``too few pairs (3 of 4)``..."""


@dataclass(frozen=True)
class Crosstable:
    """Rows and columns of bots, best first; each cell the row bot's pairing with the column's."""

    bots: tuple[str, ...]
    cells: dict[tuple[str, str], Pairwise]

    def cell(self, row: str, column: str) -> Pairwise | None:
        """The row bot's pairing against the column bot, ``None`` if they did not meet."""
        return self.cells.get((row, column))

    def to_dict(self) -> dict[str, Any]:
        """``bots``, and per row and column: the row bot's ``score`` and the ``units``."""
        grid = [[self.cell(row, column) for column in self.bots] for row in self.bots]
        return {
            "bots": list(self.bots),
            "score": [[None if c is None else c.score for c in row] for row in grid],
            "units": [[None if c is None else c.units for c in row] for row in grid],
        }


@dataclass(frozen=True)
class Standings:
    """The whole table."""

    league: str
    bots: list[BotStanding]
    pairwise: list[Pairwise]
    series: int
    approximate: bool = False
    """Whether the rating intervals are estimates (a field above ``DENSE_FIT_MAX_BOTS`` bots:
    ``docs/standings.md``, "Large fields"), not the exact ones of smaller fields."""

    def crosstable(self) -> Crosstable:
        """The pairings as a grid, bots in the order of the standings."""
        cells = {(pair.bot, pair.opponent): pair for pair in self.pairwise}
        return Crosstable(tuple(bot.bot for bot in self.bots), cells)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema in ``docs/standings.md``); ``approximate`` only when true."""
        document: dict[str, Any] = {"league": self.league, "series": self.series}
        if self.approximate:
            document["approximate"] = True
        document["bots"] = [{**asdict(bot), "score": round(bot.score, 4)} for bot in self.bots]
        document["pairwise"] = [asdict(pair) for pair in self.pairwise]
        document["crosstable"] = self.crosstable().to_dict()
        return document

    def to_csv(self) -> str:
        """One row per bot (faults flattened to ``faults_<kind>`` columns)."""
        kinds = sorted({kind for bot in self.bots for kind in bot.faults})
        columns = [name for name in asdict(self.bots[0]) if name != "faults"] if self.bots else []
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["rank", *columns, "score", *(f"faults_{kind}" for kind in kinds)])
        for rank, bot in enumerate(self.bots, start=1):
            values = asdict(bot)
            writer.writerow(
                [
                    rank,
                    *(values[name] for name in columns),
                    round(bot.score, 4),
                    *(bot.faults.get(kind, 0) for kind in kinds),
                ]
            )
        return out.getvalue()

    def pairwise_csv(self) -> str:
        """One row per ordered pairing, every field of :class:`Pairwise` (the pentanomial as
        ``penta_0`` ... ``penta_4``: pairs in which the bot scored 0, 0.5, 1, 1.5, 2 series;
        an absent value is an empty cell)."""
        columns = [f.name for f in fields(Pairwise) if f.name != "pentanomial"]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow([*columns, *(f"penta_{k}" for k in range(5))])
        for pair in self.pairwise:
            values = asdict(pair)
            counts = pair.pentanomial or ("",) * 5
            writer.writerow([*("" if values[c] is None else values[c] for c in columns), *counts])
        return out.getvalue()


# --- counting ----------------------------------------------------------------------------------


class _Series(NamedTuple):
    """What the standings count of one series (from a :class:`ResultRow`, or read straight from
    its stored summary by :func:`read_standings`)."""

    match_id: str
    duplicate_of: str | None
    seats: tuple[str, str]
    winner: int | None
    forfeited: Sequence[int]
    game_winners: Sequence[int | None]
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    """Per seat: hands won, points, gins, knocks, undercuts given and suffered."""
    times: tuple[tuple[int, float, float], tuple[int, float, float]]
    """Per seat: decisions, their mean and their longest time (ms)."""
    faults: tuple[tuple[int, str], ...]
    """Each fault's seat and kind, in order."""


def _of_result(result: ResultRow) -> _Series:
    summary = result.summary
    first, second = summary.stats
    return _Series(
        result.match_id,
        result.duplicate_of,
        result.seats,
        summary.winner,
        summary.forfeited,
        summary.game_winners,
        (_hand_counts(summary.hand_stats[0]), _hand_counts(summary.hand_stats[1])),
        (
            (first.decisions, first.mean_ms, first.max_ms),
            (second.decisions, second.mean_ms, second.max_ms),
        ),
        tuple((fault.seat, fault.kind.value) for fault in summary.faults),
    )


def _hand_counts(stats: HandStats) -> tuple[int, ...]:
    return (
        stats.hands_won,
        stats.points,
        stats.gins,
        stats.knocks,
        stats.undercuts_given,
        stats.undercuts_suffered,
    )


_COUNTED: Final = len(_hand_counts(HandStats()))


def _of_stored(match_id: str, end: str, data: Any) -> _Series | None:
    """A series from its stored columns, read as :meth:`ResultRow.from_stored` reads them (the
    summary through ``MatchSummary.from_dict``, the one reader of its form); ``None`` where that
    fails, so that the row is read again the long way and refused as :meth:`Store.results`
    refuses it."""
    try:
        return _of_result(ResultRow.from_stored(match_id, "", None, end, "", data, ""))
    except Exception:  # read the long way, which raises what it raises
        return None


def _count(results: Sequence[_Series]) -> dict[str, BotStanding]:
    """Each bot's line from its series, in the order the bots first played (not yet rated).

    One pass sorts each series under its two bots, by seat; the counting is then done per bot
    over those lists, by the built-in counting and summing (a league's standings count 200,000
    seats). Sums of times are taken in the order of the results, as series by series."""
    played: dict[str, tuple[list[_Series], list[_Series]]] = {}
    own: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    faults: dict[str, dict[str, int]] = defaultdict(dict)
    for result in results:
        seats = result.seats
        for seat, bot in enumerate(seats):
            lists = played.get(bot)
            if lists is None:
                lists = played[bot] = ([], [])
            lists[seat].append(result)
        first, second = result.times
        own[seats[0]].append(first)
        own[seats[1]].append(second)
        if result.faults:
            for seat, bot in enumerate(seats):
                kinds = faults[bot]
                for at, kind in result.faults:
                    if at == seat:
                        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        bot: _line(bot, as_first, as_second, own[bot], faults.get(bot, {}))
        for bot, (as_first, as_second) in played.items()
    }


def _line(
    bot: str,
    as_first: list[_Series],
    as_second: list[_Series],
    own: list[tuple[int, float, float]],
    faults: dict[str, int],
) -> BotStanding:
    """A bot's line from its series in seat 0 and in seat 1, and its seats' times in the order
    of the results."""
    line = BotStanding(bot, faults=dict(faults))
    line.series = len(as_first) + len(as_second)
    winners = list(map(_WINNER, as_first)), list(map(_WINNER, as_second))
    line.series_won = winners[0].count(0) + winners[1].count(1)
    line.series_drawn = winners[0].count(None) + winners[1].count(None)
    line.series_lost = line.series - line.series_won - line.series_drawn
    line.forfeits = sum(
        seat in forfeited
        for seat, summaries in enumerate((as_first, as_second))
        for forfeited in map(_FORFEITED, summaries)
        if forfeited
    )
    games = (
        list(chain.from_iterable(map(_GAME_WINNERS, as_first))),
        list(chain.from_iterable(map(_GAME_WINNERS, as_second))),
    )
    line.games_won = games[0].count(0) + games[1].count(1)
    line.games_lost = games[0].count(1) + games[1].count(0)
    mine = [*map(_FIRST, map(_HANDS, as_first)), *map(_SECOND, map(_HANDS, as_second))]
    theirs = [*map(_SECOND, map(_HANDS, as_first)), *map(_FIRST, map(_HANDS, as_second))]
    (
        line.hands_won,
        line.points_for,
        line.gins,
        line.knocks,
        line.undercuts_given,
        line.undercuts_suffered,
    ) = map(sum, zip(*mine, strict=True)) if mine else (0,) * _COUNTED
    line.points_against = sum(map(_SECOND, theirs))
    decisions = list(map(_FIRST, own))
    line.decisions = sum(decisions)
    line.worst_ms = max(chain((line.worst_ms,), map(_THIRD, own)))
    if line.decisions:
        spent = sum(map(operator.mul, decisions, map(_SECOND, own)))
        line.mean_ms = round(spent / line.decisions, 3)
    return line


_WINNER: Final = operator.attrgetter("winner")
_FORFEITED: Final = operator.attrgetter("forfeited")
_GAME_WINNERS: Final = operator.attrgetter("game_winners")
_HANDS: Final = operator.attrgetter("hands")
_FIRST: Final = operator.itemgetter(0)
_SECOND: Final = operator.itemgetter(1)
_THIRD: Final = operator.itemgetter(2)


def _series_leg(series: _Series, mine: int) -> tuple[float, int]:
    """A series from the side of the bot in seat ``mine``: its score and point margin."""
    winner = series.winner
    score = 0.5 if winner is None else float(winner == mine)
    return score, series.hands[mine][1] - series.hands[1 - mine][1]


# --- ratings -----------------------------------------------------------------------------------


class _Row(Protocol):
    """One row of a covariance: its entries by column."""

    def __getitem__(self, column: int, /) -> float: ...


class _Covariance(Protocol):
    """A covariance read entry by entry, ``covariance[i][j]``: a tuple of tuples (the exact one
    of a small field), or :class:`_ProbedCovariance` (the estimate of a large one)."""

    def __getitem__(self, row: int, /) -> _Row: ...


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
    covariance: _Covariance
    dispersion: float
    """Pearson's chi-square of the units over its degrees of freedom (with two more at 1): about
    1 if each series were an independent Bradley-Terry trial, below 1 when luck cancels within
    pairs, above 1 when it doubles."""
    df: int
    """Residual degrees of freedom: units minus bots plus one (0: too few to estimate)."""
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


def _invert(matrix: Matrix) -> Matrix:
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


def _solve(matrix: Matrix, vector: Sequence[float]) -> list[float]:
    """``x`` with ``matrix x = vector``, by Gaussian elimination with partial pivoting (a third
    of the work of :func:`_invert`, which a Newton step does not need)."""
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


def _centred(matrix: Matrix) -> Matrix:
    """``C M Cᵀ`` with ``C = I - J/n``: the covariance of the ratings minus their mean."""
    size = len(matrix)
    if not size:
        return []
    rows = [statistics.fmean(row) for row in matrix]
    cols = [statistics.fmean(col) for col in zip(*matrix, strict=True)]
    total = statistics.fmean(rows)
    return [[matrix[i][j] - rows[i] - cols[j] + total for j in range(size)] for i in range(size)]


_Unit = tuple[int, int, tuple[float, ...]]


def _totals(units: Sequence[_Unit]) -> dict[tuple[int, int], tuple[float, int]]:
    """Per pairing (lower index first): the first bot's score and the series, summed."""
    totals: dict[tuple[int, int], tuple[float, int]] = {}
    for i, j, scores in units:
        key, won = ((i, j), sum(scores)) if i < j else ((j, i), len(scores) - sum(scores))
        score, count = totals.get(key, (0.0, 0))
        totals[key] = (score + won, count + len(scores))
    return totals


def _information(
    totals: dict[tuple[int, int], tuple[float, int]], theta: Sequence[float]
) -> tuple[list[float], Matrix]:
    """Gradient and information of the log-likelihood with the prior, at ``theta`` (natural)."""
    size = len(theta)
    grad = [0.0] * size
    info = [[0.0] * size for _ in range(size)]
    for bot, value in enumerate(theta):
        p = 1 / (1 + math.exp(-value))
        grad[bot] += PRIOR_GAMES * (1 - 2 * p)
        info[bot][bot] += 2 * PRIOR_GAMES * p * (1 - p)
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


def _dispersion(units: Sequence[_Unit], theta: Sequence[float]) -> tuple[float, int]:
    """Pearson's chi-square of the units' series totals over its degrees of freedom, with
    ``PRIOR_DISPERSION_DF`` more at dispersion 1 (so that a handful of units that happen to
    sit on their expectation do not give intervals of width 0), and those degrees of freedom.

    Units the fit cannot judge are left out of both: those of a pairing one side won outright
    (the prior, not the data, sets its expectation) and those it expects to be all but certain
    (``p (1 - p)`` under ``DISPERSION_MIN_WEIGHT``). Kept in, they add nothing to the chi-square
    and a degree of freedom each, and one lopsided bot shrank every other interval (three close
    bots beside one 1,200 Elo weaker: their differences covered 88%)."""
    shutouts = _shutouts(units)
    judged = []
    for i, j, scores in units:
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        if (min(i, j), max(i, j)) in shutouts or p * (1 - p) < DISPERSION_MIN_WEIGHT:
            continue
        judged.append((sum(scores) - len(scores) * p) ** 2 / (len(scores) * p * (1 - p)))
    df = len(judged) - (len(theta) - 1)
    if not theta or df <= 0:
        return 1.0, max(df, 0)
    return (math.fsum(judged) + PRIOR_DISPERSION_DF) / (df + PRIOR_DISPERSION_DF), df


def _shutouts(units: Sequence[_Unit]) -> set[tuple[int, int]]:
    """The pairings (lower index first) one side won outright, unit by unit."""
    seen: dict[tuple[int, int], set[float]] = {}
    for i, j, scores in units:
        key = (min(i, j), max(i, j))
        share = sum(scores) / len(scores)
        seen.setdefault(key, set()).add(share if i < j else 1.0 - share)
    return {key for key, shares in seen.items() if shares in ({0.0}, {1.0})}


def fit_ratings(
    units: Sequence[PairOutcome],
    bots: Sequence[str],
    rounds: int = 100,
    *,
    dense_max_bots: int | None = None,
) -> Ratings:
    """Bradley-Terry ratings of the units' series (a draw half a win) and their covariance.

    The fit maximises the likelihood of every series with a weak prior (each bot also played
    one win and one loss against a bot rated 0, so an unbeaten bot keeps a finite rating), by
    Newton's method. The covariance is quasi-likelihood's: the inverse information times the
    dispersion of the unit totals, so that the two legs of a duplicate pair count as the one
    observation they are; chosen over a sandwich (robust) covariance summed over pairs, which
    covered 92-94% at 5-10 pairs per pairing where this covers 94-96% (docs/standings.md).

    Fields of up to ``dense_max_bots`` bots (``DENSE_FIT_MAX_BOTS`` unless given) are fitted
    with dense matrices, the exact inverse information giving the covariance. Larger ones are
    fitted by :func:`_sparse_fit`: the same ratings (to about 1e-6 Elo), in time and memory that
    grow with the pairings played rather than the cube of the bots, and an estimated covariance
    (``approximate``).

    >>> one = PairOutcome("a", "b", (1.0, 0.0), 0)
    >>> ratings = fit_ratings([one] * 6 + [PairOutcome("a", "b", (1.0, 1.0), 0)] * 2, ["a", "b"])
    >>> [round(x) for x in ratings.difference("a", "b")]
    [83, -72, 239]
    """
    index = {bot: i for i, bot in enumerate(bots)}
    coded = [(index[u.bot], index[u.opponent], u.scores) for u in units]
    totals = _totals(coded)
    if len(bots) > (DENSE_FIT_MAX_BOTS if dense_max_bots is None else dense_max_bots):
        return _sparse_fit(coded, totals, bots, rounds)
    theta = [0.0] * len(bots)
    for _ in range(rounds):
        grad, info = _information(totals, theta)
        step = _solve(info, grad)
        theta = [value + change for value, change in zip(theta, step, strict=True)]
        if max(map(abs, step), default=0.0) < 1e-10:
            break
    inverse = _invert(_information(totals, theta)[1])
    dispersion, df = _dispersion(coded, theta)
    level = statistics.fmean(theta) if theta else 0.0
    covariance = _centred([[dispersion * ELO * ELO * value for value in row] for row in inverse])
    return Ratings(
        tuple(bots),
        tuple(ELO * (value - level) for value in theta),
        tuple(map(tuple, covariance)),
        dispersion,
        df,
    )


# --- ratings of a large field ------------------------------------------------------------------


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
    """The graph of :func:`_totals`' pairings among ``size`` bots."""
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


def _sparse_information(graph: _Graph, theta: Sequence[float]) -> _Sparse:
    """:func:`_information`, sparse: the same gradient and matrix, in ``O(pairings)``."""
    grad = [0.0] * len(theta)
    diagonal = [0.0] * len(theta)
    for bot, value in enumerate(theta):
        p = 1 / (1 + math.exp(-value))
        grad[bot] += PRIOR_GAMES * (1 - 2 * p)
        diagonal[bot] += 2 * PRIOR_GAMES * p * (1 - p)
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


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
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
    rz = _dot(r, z)
    limit = tolerance * tolerance * _dot(b, b)
    for _ in range(4 * len(b) + 20):
        if _dot(r, r) <= limit:
            break
        q = _times(info, graph, p)
        alpha = rz / _dot(p, q)
        x = [value + alpha * change for value, change in zip(x, p, strict=True)]
        r = [value - alpha * change for value, change in zip(r, q, strict=True)]
        z = [value / d for value, d in zip(r, diagonal, strict=True)]
        rz, before = _dot(r, z), rz
        p = [value + rz / before * change for value, change in zip(z, p, strict=True)]
    return x


def _sparse_fit(
    coded: Sequence[_Unit],
    totals: dict[tuple[int, int], tuple[float, int]],
    bots: Sequence[str],
    rounds: int,
) -> Ratings:
    """:func:`fit_ratings` of a large field: the same model, prior, Newton's method and centring,
    each Newton step solved by :func:`_conjugate_gradient` on the sparse information (a weighted
    graph Laplacian plus the prior's diagonal); the covariance is :class:`_ProbedCovariance`'s
    estimate, times the same dispersion."""
    graph = _graph(totals, len(bots))
    theta = [0.0] * len(bots)
    for _ in range(rounds):
        info = _sparse_information(graph, theta)
        step = _conjugate_gradient(info, graph, info.grad, _SOLVE_TOLERANCE)
        theta = [value + change for value, change in zip(theta, step, strict=True)]
        if max(map(abs, step), default=0.0) < 1e-10:
            break
    dispersion, df = _dispersion(coded, theta)
    level = statistics.fmean(theta) if theta else 0.0
    covariance = _ProbedCovariance.of(graph, _sparse_information(graph, theta), dispersion)
    return Ratings(
        tuple(bots),
        tuple(ELO * (value - level) for value in theta),
        covariance,
        dispersion,
        df,
        approximate=True,
    )


class _ProbedRow:
    """A row of :class:`_ProbedCovariance`, its entries computed when read."""

    __slots__ = ("_matrix", "_row")

    def __init__(self, matrix: _ProbedCovariance, row: int) -> None:
        self._matrix = matrix
        self._row = row

    def __getitem__(self, column: int, /) -> float:
        return self._matrix.entry(self._row, column)


class _ProbedCovariance:
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
    def of(cls, graph: _Graph, info: _Sparse, dispersion: float) -> _ProbedCovariance:
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
        return self._scale * (self._near.local(i, j) + _dot(self._left[i], self._right[j]))


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
        length = math.sqrt(_dot(v, v))
        for _ in range(2):
            for done in basis:
                along = _dot(done, v)
                v = [a - along * b for a, b in zip(v, done, strict=True)]
        rest = math.sqrt(_dot(v, v))
        if rest > 1e-6 * length:
            basis.append([value / rest for value in v])
    return basis


def _matrix_times(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    return [_dot(row, vector) for row in matrix]


class _Near:
    """``K = G + (1 - Π) N (1 - Π)ᵀ`` of :class:`_ProbedCovariance`, read entry by entry and
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
        h = _invert([[_dot(u, column) for column in w] for u in basis]) if basis else []
        middle = [[_dot(column, other) for other in b] for column in w]
        left = [[_dot(row, column) for column in zip(*middle, strict=True)] for row in h]
        f = [
            [_dot(row, column) + h[i][k] for k, column in enumerate(zip(*h, strict=True))]
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
            value - _dot(row_u, by_b) - _dot(row_b, by_u) + _dot(row_u, by_f)
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


def _rating_edge(
    bot: str,
    bound: Bound,
    grouped: dict[tuple[str, str], list[PairOutcome]],
    ratings: Ratings,
) -> float | None:
    """The one finite end of an unbeaten (or winless) bot's rating: not the fit's, which its
    prior decides, but the exact bound on its score against its opponents (every unit won: see
    :func:`~tournaments.inference.score_estimate`, which counts a pair as its two series)
    added to their average rating, then centred with the field (from any number of units: with
    few, the bound is weak, but it holds).

    With B bots, ``r`` the bot's rating and ``r'`` the others' ratings centred among themselves,
    centring all B puts the others at ``r' - r/(B-1)``, so ``r - mean(opponents) >= d`` is
    ``r >= (d + mean(r' of opponents)) (B-1)/B``."""
    own = [
        (opponent, unit)
        for (first, opponent), found in grouped.items()
        if first == bot
        for unit in found
    ]
    if not own:
        return None
    series = sum(len(unit.scores) for _, unit in own)  # every series won (a pair: two)
    beaten = elo_from_score(((1.0 - LEVEL) / 2.0) ** (1.0 / series))
    edge = beaten if bound == "lower" else -beaten
    others = [other for other in ratings.bots if other != bot]
    level = statistics.fmean(ratings.elo[ratings.bots.index(o)] for o in others)
    opponents = statistics.fmean(
        ratings.elo[ratings.bots.index(opponent)] - level for opponent, _ in own
    )
    size = len(ratings.bots)
    return (edge + opponents) * (size - 1) / size


def _bound(line: BotStanding) -> Bound | None:
    """Whether the bot's rating is only a bound: it won (``lower``) or lost every series."""
    if line.series and line.series_won == line.series:
        return "lower"
    if line.series and line.series_lost == line.series:
        return "upper"
    return None


# --- pairwise ------------------------------------------------------------------------------------


def _pairing(bot: str, opponent: str, units: Sequence[PairOutcome], ratings: Ratings) -> Pairwise:
    """One ordered pairing from its units: complete pairs where there are any, else series."""
    complete = [unit for unit in units if len(unit.scores) == 2]  # unit.complete, inline
    used = complete or list(units)
    scores = [score for unit in units for score in unit.scores]
    estimate = score_estimate(  # a sweep's bound counts every series of its units
        [sum(unit.scores) / len(unit.scores) for unit in used],
        series=sum(len(unit.scores) for unit in used),
    )
    margin = mean_estimate([float(unit.margin) for unit in used])
    counts = pentanomial(complete) if complete else None
    diff, low, high = ratings.difference(bot, opponent)
    diff_low: float | None = low
    diff_high: float | None = high
    if estimate.bound is not None:  # one side won every unit: the fit's prior decides its
        diff_low, diff_high = estimate.elo_low, estimate.elo_high  # gap; the exact bound holds
    return Pairwise(
        bot=bot,
        opponent=opponent,
        series=len(scores),
        units=len(used),
        wins=scores.count(1.0),
        draws=scores.count(0.5),
        losses=scores.count(0.0),
        pentanomial=counts,
        score=round(estimate.mean, 4),
        elo=_rounded(estimate.elo, 1),
        elo_low=_rounded(estimate.elo_low, 1),
        elo_high=_rounded(estimate.elo_high, 1),
        elo_bound=estimate.bound,
        los=_rounded(estimate.los, 4),
        margin=round(margin.mean, 2),
        margin_low=_rounded(margin.low, 2),
        margin_high=_rounded(margin.high, 2),
        rating_diff=round(diff, 1),
        rating_diff_low=_rounded(diff_low, 1),
        rating_diff_high=_rounded(diff_high, 1),
        draw_ratio=round(scores.count(0.5) / len(scores), 4),
        pairs_ratio=_pairs_ratio(counts),
        reading=reading(estimate, margin, "pair" if complete else "series"),
    )


def _pairs_ratio(counts: tuple[int, int, int, int, int] | None) -> float | None:
    """Pairs won over pairs lost (fastchess's ``(WW + WD) / (LD + LL)``), to 3 places."""
    if counts is None or counts[0] + counts[1] == 0:
        return None
    return round((counts[3] + counts[4]) / (counts[0] + counts[1]), 3)


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def compute(league: str, results: Sequence[ResultRow]) -> Standings:
    """Standings of a league from its results, best rating first."""
    with _collector_paused():
        return _compute(league, [_of_result(result) for result in results])


def read_standings(store: Store, league: str) -> Standings:
    """``compute(league, store.results(league))``, read faster: each stored summary's figures
    straight from its JSON, without the records ``results`` makes of it (a second or more for
    100,000 results); a result in any other form than the store writes is read as ``results``
    reads it, so that the same results give the same standings and the same errors.

    Raises:
        StoreDamaged: a result cannot be read.
    """
    with _collector_paused():
        return _compute(league, store.read_results(league, _of_stored, _of_result))


def _compute(league: str, results: Sequence[_Series]) -> Standings:
    table = _count(results)
    bots = sorted(table)
    units = units_of(results, _series_leg)
    ratings = fit_ratings(units, bots)
    grouped = by_pairing(units)
    for bot in bots:
        line = table[bot]
        rating, low, high = ratings.rating(bot)
        line.rating_bound = _bound(line)
        line.rating = round(rating, 1)
        if line.rating_bound is None:
            line.rating_low, line.rating_high = round(low, 1), round(high, 1)
            continue
        edge = _rating_edge(bot, line.rating_bound, grouped, ratings)
        line.rating_low = None if line.rating_bound == "upper" else _rounded(edge, 1)
        line.rating_high = None if line.rating_bound == "lower" else _rounded(edge, 1)
    ranked = sorted(table.values(), key=lambda line: (-line.rating, -line.score, line.bot))
    pairwise = [
        _pairing(bot, opponent, found, ratings)
        for (bot, opponent), found in sorted(grouped.items())
    ]
    return Standings(league, ranked, pairwise, len(results), ratings.approximate)
