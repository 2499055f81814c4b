"""Standings from a league's results: counts per bot, ratings with intervals, pairwise table.

Ratings are a Bradley-Terry fit of series results (a draw counts half), by Hunter's MM
iterations with a weak prior (each bot also played one win and one loss against an average
bot, so an unbeaten bot keeps a finite rating), on the Elo scale (400 log10), centred on 0.
The 95% intervals come from the fit's information matrix. Stdlib only: a few dozen lines that are
tested against hand-made results, rather than numpy and scipy in the runtime.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from tournaments.records import MatchSummary
from tournaments.store import ResultRow

ELO: Final = 400 / math.log(10)
PRIOR_GAMES: Final = 1.0


@dataclass
class BotStanding:
    """One bot's line in the standings."""

    bot: str
    series: int = 0
    series_won: float = 0.0
    series_lost: float = 0.0
    series_drawn: int = 0
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
    rating_low: float = 0.0
    rating_high: float = 0.0

    @property
    def score(self) -> float:
        """Share of series won (draws half)."""
        return (self.series_won + 0.5 * self.series_drawn) / self.series if self.series else 0.0


@dataclass(frozen=True)
class Pairwise:
    """One ordered pair: how ``bot`` did against ``opponent``."""

    bot: str
    opponent: str
    series: int
    wins: float
    losses: float
    score: float
    los: float
    """Likelihood of superiority: P(bot is stronger) from wins and losses."""
    margin: float | None = None
    """Mean paired point margin per duplicate pair (bot minus opponent), if duplicate."""
    margin_low: float | None = None
    margin_high: float | None = None


@dataclass(frozen=True)
class Standings:
    """The whole table."""

    league: str
    bots: list[BotStanding]
    pairwise: list[Pairwise]
    series: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (schema in ``docs/standings.md``)."""
        return {
            "league": self.league,
            "series": self.series,
            "bots": [{**asdict(bot), "score": round(bot.score, 4)} for bot in self.bots],
            "pairwise": [asdict(pair) for pair in self.pairwise],
        }

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


# --- counting ----------------------------------------------------------------------------------


def _count(results: Sequence[ResultRow]) -> dict[str, BotStanding]:
    table: dict[str, BotStanding] = {}
    times: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for result in results:
        for seat, bot in enumerate(result.seats):
            line = table.setdefault(bot, BotStanding(bot))
            _add_series(line, result.summary, seat)
            stats = result.summary.stats[seat]
            times[bot].append((stats.decisions, stats.mean_ms))
            line.worst_ms = max(line.worst_ms, stats.max_ms)
    for bot, pairs in times.items():
        decisions = sum(count for count, _ in pairs)
        table[bot].decisions = decisions
        if decisions:
            table[bot].mean_ms = round(sum(c * m for c, m in pairs) / decisions, 3)
    return table


def _add_series(line: BotStanding, summary: MatchSummary, seat: int) -> None:
    other = 1 - seat
    line.series += 1
    winner = summary.winner
    if winner is None:
        line.series_drawn += 1
    elif winner == seat:
        line.series_won += 1
    else:
        line.series_lost += 1
    if seat in summary.forfeited:
        line.forfeits += 1
    line.games_won += sum(1 for game in summary.game_winners if game == seat)
    line.games_lost += sum(1 for game in summary.game_winners if game == other)
    mine, theirs = summary.hand_stats[seat], summary.hand_stats[other]
    line.hands_won += mine.hands_won
    line.points_for += mine.points
    line.points_against += theirs.points
    line.gins += mine.gins
    line.knocks += mine.knocks
    line.undercuts_given += mine.undercuts_given
    line.undercuts_suffered += mine.undercuts_suffered
    for fault in summary.faults:
        if fault.seat == seat:
            line.faults[fault.kind.value] = line.faults.get(fault.kind.value, 0) + 1


# --- ratings -----------------------------------------------------------------------------------

Outcome = tuple[str, str, float]
"""(first bot, second bot, first bot's score: 1, 0.5 or 0)."""


def outcomes(results: Iterable[ResultRow]) -> list[Outcome]:
    """Each series as (seat 0's bot, seat 1's bot, seat 0's score)."""
    found = []
    for result in results:
        winner = result.summary.winner
        score = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
        found.append((result.seats[0], result.seats[1], score))
    return found


def bradley_terry(
    games: Sequence[Outcome], bots: Sequence[str], rounds: int = 500
) -> dict[str, float]:
    """Elo-scale ratings (mean 0) fitted by Hunter's MM iterations with a weak prior.

    >>> ratings = bradley_terry([("a", "b", 1.0)] * 3 + [("a", "b", 0.0)], ["a", "b"])
    >>> round(ratings["a"] - ratings["b"])
    146
    """
    wins = dict.fromkeys(bots, PRIOR_GAMES)
    meetings: dict[tuple[str, str], float] = defaultdict(float)
    for first, second, score in games:
        wins[first] += score
        wins[second] += 1 - score
        meetings[first, second] += 1
        meetings[second, first] += 1
    strength = dict.fromkeys(bots, 1.0)
    for _ in range(rounds):
        updated = {}
        for bot in bots:
            total = 2 * PRIOR_GAMES / (strength[bot] + 1.0)
            total += sum(
                count / (strength[bot] + strength[other])
                for (one, other), count in meetings.items()
                if one == bot
            )
            updated[bot] = wins[bot] / total
        scale = math.exp(statistics.fmean(math.log(value) for value in updated.values()))
        strength = {bot: value / scale for bot, value in updated.items()}
    return {bot: ELO * math.log(value) for bot, value in strength.items()}


def _invert(matrix: list[list[float]]) -> list[list[float]]:
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


def intervals(
    games: Sequence[Outcome], bots: Sequence[str], ratings: dict[str, float]
) -> dict[str, tuple[float, float]]:
    """95% intervals from the fit's information matrix (the prior games included).

    >>> ratings = bradley_terry([("a", "b", 1.0)] * 4, ["a", "b"])
    >>> low, high = intervals([("a", "b", 1.0)] * 4, ["a", "b"], ratings)["a"]
    >>> low < 0 < ratings["a"] < high
    True
    """
    index = {bot: i for i, bot in enumerate(bots)}
    theta = {bot: ratings[bot] / ELO for bot in bots}
    info = [[0.0] * len(bots) for _ in bots]
    for bot in bots:
        p = 1 / (1 + math.exp(-theta[bot]))
        info[index[bot]][index[bot]] += 2 * PRIOR_GAMES * p * (1 - p)
    for first, second, _ in games:
        p = 1 / (1 + math.exp(theta[second] - theta[first]))
        weight = p * (1 - p)
        i, j = index[first], index[second]
        info[i][i] += weight
        info[j][j] += weight
        info[i][j] -= weight
        info[j][i] -= weight
    covariance = _invert(info)
    bounds = {}
    for bot in bots:
        half = 1.96 * math.sqrt(max(covariance[index[bot]][index[bot]], 0.0)) * ELO
        bounds[bot] = (ratings[bot] - half, ratings[bot] + half)
    return bounds


# --- pairwise ------------------------------------------------------------------------------------


def los(wins: float, losses: float) -> float:
    """Likelihood of superiority from wins and losses (draws do not count).

    >>> round(los(10, 5), 3), los(0, 0)
    (0.902, 0.5)
    """
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))


def _paired_margins(results: Sequence[ResultRow]) -> dict[tuple[str, str], list[float]]:
    """Per duplicate pair: (bot, opponent) -> bot's points minus the opponent's, both legs."""
    by_id = {result.match_id: result for result in results}
    margins: dict[tuple[str, str], list[float]] = defaultdict(list)
    for result in results:
        mirror = result.duplicate_of
        if mirror is None or mirror not in by_id:
            continue
        first = by_id[mirror]
        bot, opponent = first.seats
        points: dict[str, int] = defaultdict(int)
        for leg in (first, result):
            for seat in (0, 1):
                points[leg.seats[seat]] += leg.summary.hand_stats[seat].points
        margin = points[bot] - points[opponent]
        margins[bot, opponent].append(margin)
        margins[opponent, bot].append(-margin)
    return margins


def _pairwise(results: Sequence[ResultRow], games: Sequence[Outcome]) -> list[Pairwise]:
    tally: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for first, second, score in games:
        for bot, opponent, mine in ((first, second, score), (second, first, 1 - score)):
            record = tally[bot, opponent]
            record[0] += 1
            record[1] += mine == 1.0
            record[2] += mine == 0.0
    margins = _paired_margins(results)
    pairs = []
    for (bot, opponent), (count, won, lost) in sorted(tally.items()):
        drawn = count - won - lost
        margin = _mean_interval(margins.get((bot, opponent), []))
        pairs.append(
            Pairwise(
                bot,
                opponent,
                int(count),
                won,
                lost,
                round((won + drawn / 2) / count, 4),
                round(los(won, lost), 4),
                *margin,
            )
        )
    return pairs


def _mean_interval(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return round(mean, 2), None, None
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return round(mean, 2), round(mean - half, 2), round(mean + half, 2)


def compute(league: str, results: Sequence[ResultRow]) -> Standings:
    """Standings of a league from its results, best rating first."""
    table = _count(results)
    bots = sorted(table)
    games = outcomes(results)
    ratings = bradley_terry(games, bots) if bots else {}
    bounds = intervals(games, bots, ratings) if bots else {}
    for bot in bots:
        table[bot].rating = round(ratings[bot], 1)
        low, high = bounds[bot]
        table[bot].rating_low, table[bot].rating_high = round(low, 1), round(high, 1)
    ranked = sorted(table.values(), key=lambda line: (-line.rating, -line.score, line.bot))
    return Standings(league, ranked, _pairwise(results, games), len(results))
