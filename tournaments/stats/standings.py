"""Standings from a league's results: counts per bot, ratings with intervals, per pairing.

The unit of every comparison is a duplicate pair, or a lone series where there are no pairs
(``tournaments.stats.pairs``): the two legs of a pair share their deals, so they are one
observation.

Ratings are a Bradley-Terry fit of the series (a draw half a win) with a weak prior, on the Elo
scale, centred on the field average; their 95% intervals (and those of every rating difference)
come from the centred covariance of the fit, scaled by the dispersion of the units. Per pairing:
the mean unit score, the Elo difference with a t interval, LOS from the same t, and the paired
point margin with its t interval (``tournaments.stats.inference``). ``docs/standings.md`` says what
each number is and how the intervals were checked. Stdlib only.

Up to ``DENSE_FIT_MAX_BOTS`` bots the fit uses dense matrices and the exact inverse information.
Larger fields (a ladder of 1,000 bots) get the same ratings from a sparse fit (conjugate
gradients on the information, a graph Laplacian plus the prior) and intervals from an estimate
of the covariance; their standings say so (``approximate``).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import operator
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from itertools import chain
from typing import Final, NamedTuple, Protocol

from protocol.bounded import JsonObject, JsonValue
from tournaments.formats.bulk import collector_paused
from tournaments.formats.hands import HandStats
from tournaments.stats.inference import (
    LEVEL,
    Bound,
    elo_from_score,
    mean_estimate,
    normalized_elo,
    reading,
    score_estimate,
    t_cdf,
)
from tournaments.stats.pairs import PairOutcome, by_pairing, pentanomial, units_of
from tournaments.stats.ratings import DENSE_FIT_MAX_BOTS, Ratings, dense_fit, pairing_totals
from tournaments.stats.sparse import sparse_fit
from tournaments.store.rows import ResultRow

__all__ = [
    "DENSE_FIT_MAX_BOTS",
    "BotStanding",
    "Pairwise",
    "Ratings",
    "ResultReader",
    "Standings",
    "compute",
    "fit_ratings",
    "read_standings",
]


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
    los_next: float | None = None
    """Likelihood of superiority over the bot ranked next below: the chance, from the fit of
    the whole league (its difference and covariance, t on its degrees of freedom), that this
    bot is the stronger of the two. ``None`` for the last bot and where either rating is a
    bound (the fit's prior, not the data, sets the gap)."""

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
    nelo: float | None
    nelo_low: float | None
    nelo_high: float | None
    """Normalized Elo (:func:`~tournaments.stats.inference.normalized_elo`) and its 95% interval:
    the score's distance from even over its standard deviation per series (from 4 units up; not
    for a sweep)."""
    reading: str
    """What the units say at 95%, in a few words (:func:`~tournaments.stats.inference.reading`):
    ``better``, ``worse``, ``undecided``, ``too few pairs (3 of 4)``..."""


@dataclass(frozen=True)
class Crosstable:
    """Rows and columns of bots, best first; each cell the row bot's pairing with the column's."""

    bots: tuple[str, ...]
    cells: dict[tuple[str, str], Pairwise]

    def cell(self, row: str, column: str) -> Pairwise | None:
        """The row bot's pairing against the column bot, ``None`` if they did not meet."""
        return self.cells.get((row, column))

    def to_dict(self) -> JsonObject:
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

    def to_dict(self) -> JsonObject:
        """The JSON document (schema in ``docs/standings.md``); ``approximate`` only when true."""
        document: JsonObject = {"league": self.league, "series": self.series}
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


def _of_stored(match_id: str, end: str, data: JsonValue) -> _Series | None:
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


def fit_ratings(
    units: Sequence[PairOutcome],
    bots: Sequence[str],
    rounds: int = 100,
    *,
    dense_max_bots: int | None = None,
) -> Ratings:
    """Bradley-Terry ratings of the units' series (a draw half a win) and their covariance.

    The fit maximises the likelihood of every series with a weak prior (each bot also played
    one win and one loss against a bot rated 0, so an unbeaten bot keeps a finite rating,
    weighed by the dispersion as quasi-likelihood asks: refitted until that weight settles), by
    Newton's method. The covariance is quasi-likelihood's: the inverse information times the
    dispersion of the unit totals, so that the two legs of a duplicate pair count as the one
    observation they are; chosen over a sandwich (robust) covariance summed over pairs, which
    covered 92-94% at 5-10 pairs per pairing where this covers 94-96% (docs/standings.md).

    Fields of up to ``dense_max_bots`` bots (``DENSE_FIT_MAX_BOTS`` unless given) are fitted
    with dense matrices, the exact inverse information giving the covariance. Larger ones are
    fitted by :func:`~tournaments.stats.sparse.sparse_fit`: the same ratings (to about 1e-6 Elo), in
    time and memory that grow with the pairings played rather than the cube of the bots, and an
    estimated covariance (``approximate``).

    >>> one = PairOutcome("a", "b", (1.0, 0.0), 0)
    >>> ratings = fit_ratings([one] * 6 + [PairOutcome("a", "b", (1.0, 1.0), 0)] * 2, ["a", "b"])
    >>> [round(x) for x in ratings.difference("a", "b")]
    [85, -72, 243]
    """
    index = {bot: i for i, bot in enumerate(bots)}
    coded = [(index[u.bot], index[u.opponent], u.scores) for u in units]
    totals = pairing_totals(coded)
    if len(bots) > (DENSE_FIT_MAX_BOTS if dense_max_bots is None else dense_max_bots):
        return sparse_fit(coded, totals, bots, rounds)
    return dense_fit(coded, totals, bots, rounds)


def _rating_edge(
    bot: str,
    bound: Bound,
    grouped: dict[tuple[str, str], list[PairOutcome]],
    ratings: Ratings,
) -> float | None:
    """The one finite end of an unbeaten (or winless) bot's rating: not the fit's, which its
    prior decides, but the exact bound on its score against its opponents (every unit won: see
    :func:`~tournaments.stats.inference.score_estimate`, which counts a pair as its two series)
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
    nelo = normalized_elo(
        [sum(unit.scores) / len(unit.scores) for unit in used], 2 if complete else 1
    )
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
        nelo=None if nelo is None else round(nelo[1], 1),
        nelo_low=None if nelo is None else round(nelo[0], 1),
        nelo_high=None if nelo is None else round(nelo[2], 1),
        reading=reading(estimate, margin, "pair" if complete else "series"),
    )


def _superiority(ratings: Ratings, bot: str, other: str) -> float | None:
    """The chance that ``bot`` is stronger than ``other`` by the fit: the t (normal without
    degrees of freedom) distribution function at their difference over its standard error, to
    4 places; ``None`` if the fit gives the difference no spread."""
    diff, low, high = ratings.difference(bot, other)
    spread = (high - low) / (2 * ratings.critical())
    if not spread > 0:
        return None
    z = diff / spread
    chance = t_cdf(z, ratings.df) if ratings.df > 0 else 0.5 * math.erfc(-z / math.sqrt(2))
    return round(chance, 4)


def _pairs_ratio(counts: tuple[int, int, int, int, int] | None) -> float | None:
    """Pairs won over pairs lost (fastchess's ``(WW + WD) / (LD + LL)``), to 3 places."""
    if counts is None or counts[0] + counts[1] == 0:
        return None
    return round((counts[3] + counts[4]) / (counts[0] + counts[1]), 3)


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


class ResultReader(Protocol):
    """What the standings read of a store (:meth:`tournaments.store.Store.read_results`): the
    statistics take the store as this, and never import its database."""

    def read_results(
        self,
        league: str,
        read: Callable[[str, str, JsonValue], _Series | None],
        convert: Callable[[ResultRow], _Series],
    ) -> list[_Series]: ...


def compute(league: str, results: Sequence[ResultRow]) -> Standings:
    """Standings of a league from its results, best rating first."""
    with collector_paused():
        return _compute(league, [_of_result(result) for result in results])


def read_standings(store: ResultReader, league: str) -> Standings:
    """``compute(league, store.results(league))``, read faster: each stored summary's figures
    straight from its JSON, without the records ``results`` makes of it (a second or more for
    100,000 results); a result in any other form than the store writes is read as ``results``
    reads it, so that the same results give the same standings and the same errors.

    Raises:
        StoreDamaged: a result cannot be read.
    """
    with collector_paused():
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
    for line, below in itertools.pairwise(ranked):
        if line.rating_bound is None and below.rating_bound is None:
            line.los_next = _superiority(ratings, line.bot, below.bot)
    pairwise = [
        _pairing(bot, opponent, found, ratings)
        for (bot, opponent), found in sorted(grouped.items())
    ]
    return Standings(league, ranked, pairwise, len(results), ratings.approximate)
