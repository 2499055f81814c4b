"""A head-to-head match of two bots (``gin match``): a league of one pairing in duplicate pairs,
a fixed number of them or until the sequential test decides (``LeagueConfig.sprt``), and what
its end says.

A match with a test is scheduled in batches: a first batch of pairs, then another each time the
previous one is played and the test has not decided, up to the cap (``gin league extend``'s
path, so no existing deal changes and a cap of 100000 pairs puts no 200000 rows in the store
before anything is played). Everything is counted from complete pairs, from the first bot's
side (:class:`tournaments.runner.PairTally`): a half-played pair counts for nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from protocol.bounded import JsonObject
from referee.control import TimeControl
from tournaments.executors import Executor
from tournaments.league import (
    LeagueConfig,
    LeagueError,
    create_league,
    extend_league,
    stored_league,
)
from tournaments.registry import Arena
from tournaments.runner import LeagueRunner, Listener, PairTally
from tournaments.stats.inference import (
    MeanEstimate,
    ScoreEstimate,
    mean_estimate,
    reading,
    score_estimate,
)
from tournaments.stats.margin_sprt import (
    MarginSettings,
    TestSettings,
    margin_skewness,
    sequential_status,
    statistic_of,
)
from tournaments.stats.pairs import PairOutcome, Pentanomial
from tournaments.stats.sprt import SprtStatus
from tournaments.stats.stopping import StoppedEstimate, corrected_estimates
from tournaments.store import Store

__all__ = [
    "MatchReport",
    "batch_pairs",
    "match_config",
    "match_name",
    "match_report",
    "play_match",
    "start_match",
]


BATCH_PAIRS: Final = 8
"""The fewest pairs a batch of a match with a test schedules (more with more jobs)."""
PAIRS_PER_JOB: Final = 4


def match_name(first: str, second: str) -> str:
    """A league name for a match of two bots (``NAME`` or ``NAME@VERSION``), valid under
    ``NAME_PATTERN``.

    >>> match_name("random", "greedy"), match_name("New@2.0", "new@1")
    ('random-vs-greedy', 'new-2-0-vs-new-1')
    """
    text = re.sub(r"[^a-z0-9_-]+", "-", f"{first}-vs-{second}".lower()).strip("-_")
    return text[:40] or "match"


def batch_pairs(jobs: int, scheduled: int, cap: int) -> int:
    """How many pairs the next batch of a match with a test adds (0: the cap is reached).

    >>> batch_pairs(2, 0, 1000), batch_pairs(4, 0, 1000), batch_pairs(2, 995, 1000)
    (8, 16, 5)
    """
    return max(0, min(max(BATCH_PAIRS, PAIRS_PER_JOB * jobs), cap - scheduled))


def match_config(  # noqa: PLR0917 - a match's settings, as the command takes them
    name: str,
    bots: tuple[str, str],
    pairs: int,
    settings: TestSettings | None,
    jobs: int,
    move_time_ms: int | None,
) -> LeagueConfig:
    """The league of a match: ``bots`` resolved (``name@version``), ``pairs`` duplicate pairs
    scheduled (a test's first batch), a random secret.

    Raises:
        LeagueError: a bad name, count or setting (every problem listed).
    """
    data: JsonObject = {
        "name": name,
        "bots": list(bots),
        "series_per_pairing": 2 * pairs,
        "duplicate": True,
        "jobs": jobs,
    }
    if move_time_ms is not None:
        data["time_control"] = {"move_time_ms": move_time_ms}
    if settings is not None:
        data["sprt"] = settings.to_dict()
    return LeagueConfig.from_dict(data)


def describe(config: LeagueConfig) -> str:
    """A match's settings as ``gin match`` takes them.

    >>> describe(match_config("m", ("a@1", "b@1"), 5, None, 2, 500))
    'a@1 b@1 --pairs 5 --move-time 0.5 --name m'
    """
    words = [*config.bots]
    if config.sprt is None:
        words.append(f"--pairs {config.series_per_pairing // 2}")
    elif isinstance(config.sprt, MarginSettings):
        margin = config.sprt
        words.append(
            f"--statistic margin --effect0 {margin.effect0:g} --effect1 {margin.effect1:g} "
            f"--alpha {margin.alpha:g} --beta {margin.beta:g}"
        )
    else:
        settings = config.sprt
        words.append(
            f"--elo0 {settings.elo0:g} --elo1 {settings.elo1:g} "
            f"--alpha {settings.alpha:g} --beta {settings.beta:g}"
        )
    if config.time_control != TimeControl():
        words.append(f"--move-time {config.time_control.move_time_ms / 1000:g}")
    words.append(f"--name {config.name}")
    return " ".join(words)


def start_match(store: Store, config: LeagueConfig) -> LeagueConfig:
    """Create a match's league, or take the stored one of that name if it has the same
    settings (for a match with a test, however many batches it has scheduled); ``jobs`` is the
    caller's either way.

    Raises:
        LeagueError: the name is taken by a league of other settings, or a bot is unknown.
    """
    stored = stored_league(store, config.name)
    if stored is None:
        create_league(store, config)
        return config
    old = stored.config
    if config.sprt is not None:
        config = dataclasses.replace(config, series_per_pairing=old.series_per_pairing)
    if dataclasses.replace(old, jobs=config.jobs) != config:
        if describe(old) == describe(config):  # rules, faults, a time bank: not gin match's
            raise LeagueError(
                f"{config.name} is a league gin match did not make (its rules, time control "
                "or fault policy differ): give the match another --name"
            )
        raise LeagueError(
            f"{config.name} exists with other settings (gin match {describe(old)}): run it "
            f"with those to resume it, or give another --name"
        )
    return config


async def play_match(
    arena: Arena,
    store: Store,
    config: LeagueConfig,
    tally: PairTally,
    cap: int | None,
    *,
    strict: bool = False,
    listener: Listener | None = None,
    executor: Callable[[], Executor | None] = lambda: None,
) -> tuple[LeagueConfig, SprtStatus | None]:
    """Play a match's pending pairs; with a test, batch after batch (:func:`batch_pairs`) until
    it decides or ``cap`` pairs are scheduled and played. Returns the match's definition as it
    grew and the test's status when it decided (``None``: it did not, or there is none).

    ``executor`` makes each run's executor (``None``: local worker processes). A run with
    failed matches ends the match here (a later call retries them).

    Raises:
        KeyboardInterrupt, LeagueBusy, ExecutorError: as :meth:`LeagueRunner.run` does; what
            was played is kept and a later call carries on.
    """
    decision = None
    while True:
        runner = LeagueRunner(
            arena,
            store,
            config,
            config.jobs,
            strict=strict,
            listener=listener,
            executor=executor(),
            tally=tally,
        )
        progress = await runner.run()
        decision = decision or runner.decision
        scheduled = config.series_per_pairing // 2
        more = 0 if cap is None else batch_pairs(config.jobs, scheduled, cap)
        if decision is not None or progress.failed or more == 0:
            return config, decision
        grown, _ = extend_league(store, config.name, 2 * more)
        config = dataclasses.replace(grown, jobs=config.jobs)


@dataclass(frozen=True, slots=True)
class MatchReport:
    """Where a match stands, from the first bot's side (complete pairs only)."""

    name: str
    bots: tuple[str, str]
    pairs: int
    """Complete pairs."""
    series: int
    """Series played (a half-played pair's leg too)."""
    counts: Pentanomial
    record: tuple[int, int, int]
    """The first bot's series won, lost and drawn in the complete pairs."""
    score: ScoreEstimate | None
    """The first bot's mean pair score, Elo difference, interval and LOS (``None``: no pairs)."""
    margin: MeanEstimate | None
    """The first bot's points minus the second's per pair (``None``: no pairs)."""
    settings: TestSettings | None
    test: SprtStatus | None
    """The test at its decision, or now while undecided (``None``: a fixed number of pairs)."""
    max_pairs: int | None
    state: str
    """``decided``, ``cap reached`` (a test undecided at the cap), ``played`` (every pair of a
    fixed match) or ``unfinished``."""
    corrected: StoppedEstimate | None = None
    """Once the test has decided: the Elo difference and the margin corrected for its stop
    (``tournaments.stats.stopping``), from the pairs it counted."""
    margin_skewness: float | None = None
    """The sample skewness of the pairs' margins (``None``: below 3 pairs, or no spread)."""

    @property
    def reading(self) -> str | None:
        """What the pairs show at 95% (:func:`~tournaments.stats.inference.reading`; ``None``: no
        pairs)."""
        return None if self.score is None else reading(self.score, self.margin)

    def reading_line(self) -> str | None:
        """The record and what it shows, e.g. ``8-0 (4 pairs, all won): better at 95%``."""
        if self.reading is None or self.score is None:
            return None
        won, lost, drawn = self.record
        record = f"{won}-{lost}" + (f"-{drawn}" if drawn else "")
        pairs = f"{self.pairs} pair{'' if self.pairs == 1 else 's'}"
        swept = {"lower": ", all won", "upper": ", all lost"}.get(self.score.bound or "", "")
        said = self.reading
        if not said.startswith("too few"):
            said = said.replace(" (", " at 95% (", 1) if " (" in said else f"{said} at 95%"
        return f"{record} ({pairs}{swept}): {said}"

    def to_dict(self) -> JsonObject:
        """The ``--json`` form (docs/match.md has the schema)."""
        score, margin, test = self.score, self.margin, self.test
        return {
            "match": self.name,
            "bots": list(self.bots),
            "pairs": self.pairs,
            "series": self.series,
            "pentanomial": list(self.counts),
            "series_won": self.record[0],
            "series_lost": self.record[1],
            "series_drawn": self.record[2],
            "score": None if score is None else score.mean,
            "elo": None
            if score is None
            else {
                "estimate": score.elo,
                "low": score.elo_low,
                "high": score.elo_high,
                "bound": score.bound,
            },
            "los": None if score is None else score.los,
            "margin": None
            if margin is None
            else {"mean": margin.mean, "low": margin.low, "high": margin.high},
            "statistic": None if self.settings is None else statistic_of(self.settings),
            "settings": None if self.settings is None else dict(self.settings.to_dict()),
            "corrected": _corrected_dict(self.corrected),
            "max_pairs": self.max_pairs,
            "llr": None if test is None else test.llr,
            "llr_percent": None if test is None else round(test.percent, 1),
            "reading": self.reading,
            "bounds": None if test is None else [test.lower, test.upper],
            "verdict": None if test is None or test.verdict is None else str(test.verdict),
            "state": self.state,
        }


def match_report(
    config: LeagueConfig,
    tally: PairTally,
    decision: SprtStatus | None,
    max_pairs: int | None,
) -> MatchReport:
    """What a match's pairs say now; ``decision``: the test's status when it decided (kept over
    any pair that finished after it)."""
    units = tally.units
    settings = config.sprt
    test = decision
    if test is None and settings is not None:
        test = sequential_status(settings, tally.counts, [unit.margin for unit in units])
    scheduled = config.series_per_pairing // 2
    if test is not None and test.verdict is not None:
        state = "decided"
    elif len(units) < scheduled:
        state = "unfinished"
    elif settings is not None and max_pairs is not None and scheduled >= max_pairs:
        state = "cap reached"
    else:
        state = "played" if settings is None else "unfinished"
    first, second = config.bots[0], config.bots[1]
    return MatchReport(
        config.name,
        (first, second),
        len(units),
        tally.series,
        tally.counts,
        _record(units),
        score_estimate([unit.score for unit in units], series=2 * len(units)) if units else None,
        mean_estimate([unit.margin for unit in units]) if units else None,
        settings,
        test,
        max_pairs,
        state,
        None
        if test is None or test.verdict is None or settings is None
        else corrected_estimates(units, settings, test),
        margin_skewness([float(unit.margin) for unit in units]),
    )


def _corrected_dict(found: StoppedEstimate | None) -> JsonObject | None:
    """The ``corrected`` entry of the ``--json`` form."""
    if found is None:
        return None
    return {
        "elo": {"estimate": found.elo, "low": found.elo_low, "high": found.elo_high},
        "margin": {"mean": found.margin, "low": found.margin_low, "high": found.margin_high},
        "effect": found.effect,
    }


def _record(units: list[PairOutcome]) -> tuple[int, int, int]:
    """Series won, lost and drawn over the units."""
    scores = [score for unit in units for score in unit.scores]
    return scores.count(1.0), scores.count(0.0), scores.count(0.5)
