"""``gin match A B``: a head-to-head of two bots in duplicate pairs, a fixed number of them or
until the sequential test decides, live, resumable (``tournaments.headtohead`` does the work)."""

from __future__ import annotations

import dataclasses
import json
from contextlib import nullcontext
from functools import partial
from typing import Annotated

import trio
import typer
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from referee.bot_text import shown
from tournaments.cli.common import (
    MoveTimeOrDefault,
    Strict,
    console,
    fail,
    move_time_control,
    open_arena,
    said,
)
from tournaments.cli.league_new import BotArguments
from tournaments.executors import ExecutorError
from tournaments.headtohead import (
    MatchReport,
    batch_pairs,
    match_config,
    match_name,
    match_report,
    play_match,
    start_match,
)
from tournaments.league import MAX_LEAGUE_MATCHES, LeagueConfig, LeagueError
from tournaments.registry import Arena
from tournaments.runner import LeagueBusy, PairTally, Progress
from tournaments.stats.margin_sprt import (
    MARGIN,
    MEASURED_SKEW,
    PENTANOMIAL,
    STATISTICS,
    MarginSettings,
    TestSettings,
    sequential_status,
    settings_from_dict,
)
from tournaments.stats.sprt import SprtStatus, Verdict
from tournaments.stats.stopping import StoppedEstimate
from tournaments.store import Store, StoreDamaged
from tournaments.views.words import counts_text, elo_text, verdict_text

__all__ = ["MatchTestView", "match", "summary_line"]


DEFAULT_CAP = 2000
"""Pairs at most of a match with a test, unless ``--max-pairs`` says otherwise."""


class MatchTestView:
    """The live display of ``gin match``: the test's LLR between its bounds, the pair counts,
    the Elo difference with its interval; not on a terminal, one plain line per finished pair."""

    def __init__(
        self,
        config: LeagueConfig,
        tally: PairTally,
        cap: int | None,
        out: Console,
        decision: SprtStatus | None = None,
    ) -> None:
        """``decision``: the test's status when it decided, kept from an earlier run."""
        self.config = config
        self.tally = tally
        self.cap = cap
        self.out = out
        self.progress: Progress | None = None
        self.shown_pairs = len(tally.units)
        self.decision = decision

    def report(self) -> MatchReport:
        """Where the match stands now: once the test has decided, at its decision (the pairs
        that were running then finish, and count in the estimates, not in the test)."""
        return match_report(self.config, self.tally, self.decision, self.cap)

    def after_decision(self) -> str:
        """What the test decided at, and the pairs finished since (empty while undecided)."""
        if self.decision is None:
            return ""
        extra = len(self.tally.units) - self.decision.pairs
        since = f", {_pairs(extra)} finished after it (not in the test)" if extra > 0 else ""
        return f"decided at {_pairs(self.decision.pairs)} (LLR {self.decision.llr:+.2f}){since}"

    def _watch_decision(self, progress: Progress) -> None:
        """Keep the test's status at the result that decided it: the run stops as that result
        is recorded and tells its listener at once, before any other result is counted."""
        settings = self.config.sprt
        if self.decision is not None or not progress.stopped or settings is None:
            return
        margins = [unit.margin for unit in self.tally.units]
        now = sequential_status(settings, self.tally.counts, margins)
        if now.verdict is not None:
            self.decision = now

    def update(self, progress: Progress) -> None:
        """The runner's listener (off a terminal: a line for each pair finished since)."""
        self.progress = progress
        self._watch_decision(progress)
        if self.out.is_terminal:
            return
        while self.shown_pairs < len(self.tally.units):
            self.shown_pairs += 1
            unit = self.tally.units[self.shown_pairs - 1]
            line = f"pair {self.shown_pairs}: {2 * unit.score:g}/2; {summary_line(self.report())}"
            if self.decision is not None and self.shown_pairs > self.decision.pairs:
                line += f"; {self.after_decision()}"
            self.out.print(shown(line), markup=False, highlight=False, soft_wrap=True)

    def __rich__(self) -> RenderableType:
        report = self.report()
        scheduled = self.config.series_per_pairing // 2
        of = f" of {scheduled}" if self.cap is None else f" (cap {self.cap})"
        running = 0 if self.progress is None else len(self.progress.running)
        first, second = report.bots
        head = Text(
            shown(
                f"{report.name}: {first} vs {second}: {report.pairs} pairs{of}, {running} running"
            )
        )
        parts: list[RenderableType] = [head]
        test = report.test
        if test is not None:
            parts.append(Text(llr_text(test)))
            parts.append(Text(llr_gauge(test.llr, test.lower, test.upper)))
            if self.decision is not None:
                parts.append(Text(self.after_decision()))
        parts.append(Text(counts_text(report.counts)))
        parts.append(Text(estimate_line(report)))
        return Group(*parts)


def llr_gauge(llr: float, lower: float, upper: float, width: int = 41) -> str:
    """Where the LLR stands between the bounds: H0 accepted at the left end, H1 at the right.

    >>> llr_gauge(0.0, -3.0, 3.0, width=9), llr_gauge(5.0, -3.0, 3.0, width=9)
    ('H0 ····●···· H1', 'H0 ········● H1')
    """
    share = min(max((llr - lower) / (upper - lower), 0.0), 1.0)
    marks = ["·"] * width
    marks[round(share * (width - 1))] = "●"
    return f"H0 {''.join(marks)} H1"


def estimate_line(report: MatchReport) -> str:
    """The Elo difference, LOS and margin, from the first bot's side."""
    words = [elo_text(report.score)]
    if report.score is not None and report.score.los is not None:
        words.append(f"LOS {100 * report.score.los:.1f}%")
    margin = report.margin
    if margin is not None and margin.low is not None and margin.high is not None:
        words.append(f"margin {margin.mean:+.1f} [{margin.low:+.1f}, {margin.high:+.1f}] points")
    return ", ".join(words)


def llr_text(test: SprtStatus) -> str:
    """The LLR, its % of the bound it heads for, and the bounds: the live view's and the lines'.

    >>> from tournaments.stats.sprt import SprtSettings, status
    >>> llr_text(status((0, 0, 0, 0, 0), SprtSettings(0.0, 20.0)))
    'LLR +0.00 (0.0%) [-2.94, +2.94]'
    """
    return f"LLR {test.llr:+.2f} ({test.percent:.1f}%) [{test.lower:+.2f}, {test.upper:+.2f}]"


def summary_line(report: MatchReport) -> str:
    """One line: the pair counts, the test (if any: the LLR, its % of the bound it heads for,
    the bounds), the estimates."""
    words = [counts_text(report.counts)]
    test = report.test
    if test is not None:
        words.append(llr_text(test))
    words.append(estimate_line(report))
    return "; ".join(words)


def _hypotheses(
    statistic: str | None,
    elo: tuple[float | None, float | None],
    effect: tuple[float | None, float | None],
) -> dict[str, object]:
    """The test's hypotheses as its settings name them, checked against the statistic."""
    if statistic not in (None, *STATISTICS):
        raise fail(f"--statistic must be pentanomial or margin, not {statistic!r}")
    if statistic == MARGIN:
        if any(value is not None for value in elo):
            raise fail("--statistic margin takes --effect0 and --effect1, not --elo0, --elo1")
        if None in effect:
            raise fail("--statistic margin needs --effect0 and --effect1 (docs/match.md)")
        return {"statistic": MARGIN, "effect0": effect[0], "effect1": effect[1]}
    if any(value is not None for value in effect):
        raise fail("--effect0 and --effect1 are the margin test's: add --statistic margin")
    if None in elo:
        raise fail("give --pairs N, or the sequential test's --elo0 and --elo1 (docs/match.md)")
    return {"statistic": PENTANOMIAL, "elo0": elo[0], "elo1": elo[1]}


def _mode(
    pairs: int | None,
    elo: tuple[float | None, float | None],
    errors: tuple[float | None, float | None],
    max_pairs: int | None,
    statistic: str | None = None,
    effect: tuple[float | None, float | None] = (None, None),
) -> tuple[TestSettings | None, int]:
    """The test's settings (``None``: a fixed match) and the pairs: fixed, or the cap."""
    alpha, beta = errors
    testing = any(value is not None for value in (*elo, *effect, alpha, beta, max_pairs, statistic))
    if pairs is not None:
        if testing:
            raise fail(
                "--pairs is a fixed match: leave out --statistic, --elo0, --elo1, --effect0, "
                "--effect1, --alpha, --beta"
            )
        if pairs < 1:
            raise fail(f"--pairs must be positive, not {pairs}")
        return None, pairs
    hypotheses = _hypotheses(statistic, elo, effect)
    cap = DEFAULT_CAP if max_pairs is None else max_pairs
    if cap < 1:
        raise fail(f"--max-pairs must be positive, not {cap}")
    if 2 * cap > MAX_LEAGUE_MATCHES:
        raise fail(f"--max-pairs {cap}: at most {MAX_LEAGUE_MATCHES // 2} (a league's limit)")
    given = {**hypotheses, "alpha": alpha, "beta": beta}
    try:
        settings = settings_from_dict({k: v for k, v in given.items() if v is not None})
    except ValueError as error:
        raise fail(f"the sequential test: {error}") from None
    return settings, cap


def _options(settings: TestSettings | None, count: int, move_time: float | None) -> str:
    """The command's options for this match, as a user would type them again."""
    if settings is None:
        words = f"--pairs {count}"
    elif isinstance(settings, MarginSettings):
        words = (
            f"--statistic margin --effect0 {settings.effect0:g} --effect1 {settings.effect1:g} "
            f"--alpha {settings.alpha:g} --beta {settings.beta:g} --max-pairs {count}"
        )
    else:
        words = (
            f"--elo0 {settings.elo0:g} --elo1 {settings.elo1:g} --alpha {settings.alpha:g} "
            f"--beta {settings.beta:g} --max-pairs {count}"
        )
    return words if move_time is None else f"{words} --move-time {move_time:g}"


def match(
    first: Annotated[
        str, typer.Argument(help="The bot under test: NAME, NAME@VERSION or a bot folder.")
    ],
    second: Annotated[str, typer.Argument(help="Its opponent: NAME, NAME@VERSION or a folder.")],
    pairs: Annotated[
        int | None, typer.Option("--pairs", help="A fixed number of duplicate pairs.")
    ] = None,
    elo0: Annotated[
        float | None, typer.Option("--elo0", help="The test's H0: an Elo difference of elo0.")
    ] = None,
    elo1: Annotated[
        float | None, typer.Option("--elo1", help="The test's H1: an Elo difference of elo1.")
    ] = None,
    alpha: Annotated[
        float | None, typer.Option("--alpha", help="Chance of accepting H1 under H0 [0.05].")
    ] = None,
    beta: Annotated[
        float | None, typer.Option("--beta", help="Chance of accepting H0 under H1 [0.05].")
    ] = None,
    max_pairs: Annotated[
        int | None,
        typer.Option("--max-pairs", help=f"The test's cap on pairs [{DEFAULT_CAP}]."),
    ] = None,
    statistic: Annotated[
        str | None,
        typer.Option(
            "--statistic",
            metavar="pentanomial|margin",
            help="What the test counts: pair scores, or point margins [pentanomial].",
        ),
    ] = None,
    effect0: Annotated[
        float | None,
        typer.Option("--effect0", help="The margin test's H0: mean margin / its sd, a pair."),
    ] = None,
    effect1: Annotated[
        float | None,
        typer.Option("--effect1", help="The margin test's H1: mean margin / its sd, a pair."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The match's name [A-vs-B]; the same resumes.")
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", help="Matches at once.")] = 2,
    strict: Strict = False,
    move_time: MoveTimeOrDefault = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", metavar="", help="Print the result as JSON at the end (docs/match.md)."
        ),
    ] = False,
) -> None:
    """Two bots head to head in duplicate pairs, fixed or until a sequential test decides.

    A fixed number of pairs (--pairs), or the sequential test (--elo0, --elo1; or --statistic
    margin --effect0, --effect1), stopping once it decides. Ctrl-C, then the same command,
    resumes."""
    settings, count = _mode(
        pairs, (elo0, elo1), (alpha, beta), max_pairs, statistic, (effect0, effect1)
    )
    if jobs < 1:
        raise fail(f"--jobs must be positive, not {jobs}")
    arena, store = open_arena()
    out = Console(stderr=True, emoji=False) if as_json else console
    arguments = BotArguments(arena, store, strict, out, to_stderr=as_json)  # names or folders
    bots = arguments.ident(first), arguments.ident(second)
    first, second = arguments.written(first), arguments.written(second)
    if bots[0] == bots[1]:
        raise fail(f"{first} and {second} are the same bot ({bots[0]}): a match needs two")
    name = name or match_name(first, second)
    move_ms = None if move_time is None else move_time_control(move_time).move_time_ms
    initial = count if settings is None else batch_pairs(jobs, 0, count)
    try:
        config = start_match(store, match_config(name, bots, initial, settings, jobs, move_ms))
    except LeagueError as error:
        raise fail(" ".join(str(error).split())) from None
    arguments.sandbox()  # its warnings: on stderr with --json
    again = f"gin match {first} {second} {_options(settings, count, move_time)} --name {name}"
    cap = None if settings is None else count
    report = _play(arena, store, config, cap, strict=strict, out=out, again=again)
    _finish(report, out, as_json)


def _play(
    arena: Arena,
    store: Store,
    config: LeagueConfig,
    cap: int | None,
    *,
    strict: bool,
    out: Console,
    again: str,
) -> MatchReport:
    """Play the match (:func:`tournaments.headtohead.play_match`); the final report."""
    try:
        tally = PairTally(config.bots[0], store.results(config.name))
        kept = store.decision(config.name)
        decided = None if kept is None else SprtStatus.from_json(kept)
    except StoreDamaged as error:
        raise fail(f"{error}; restore the store from a backup") from None
    except ValueError as error:  # as the runner reads it, which refuses it as damage
        raise fail(f"the store's decision of {config.name}: {error}") from None
    view = MatchTestView(config, tally, cap, out, decided)
    live = Live(view, console=out, refresh_per_second=4) if out.is_terminal else nullcontext()

    def grown(progress: Progress) -> None:
        view.config = dataclasses.replace(view.config, series_per_pairing=progress.total)
        view.update(progress)

    play = partial(play_match, arena, store, config, tally, cap, strict=strict, listener=grown)
    try:
        with live:
            config, decision = trio.run(play)
    except LeagueBusy as busy:
        raise fail(str(busy)) from None
    except LeagueError as error:  # its next batch would pass a limit
        raise fail(" ".join(str(error).split())) from None
    except StoreDamaged as error:
        raise fail(f"{error}; restore the store from a backup") from None
    except (KeyboardInterrupt, ExecutorError) as stop:
        if isinstance(stop, ExecutorError):
            out.print(f"[red]error:[/red] {said(stop)}")
        out.print(
            f"stopped ({_pairs(len(tally.units))} complete). Resume with: {said(again)}",
            soft_wrap=True,
        )
        raise typer.Exit(130 if isinstance(stop, KeyboardInterrupt) else 1) from None
    return match_report(config, tally, decision, cap)


def margin_verdict_text(verdict: Verdict, first: str, second: str, settings: MarginSettings) -> str:
    """The margin test's decision in one line.

    >>> print(margin_verdict_text(Verdict.H1, "new", "old", MarginSettings(0.0, 0.3)))
    ... # doctest: +NORMALIZE_WHITESPACE
    H1 accepted: new outscores old by more than +0 sd of the margin a pair; the pairs favour
    +0.3 over +0 (an effect of +0 or less ends this way at most 5% of the time)
    """
    if verdict is Verdict.H1:
        low, high, chance = settings.effect0, settings.effect1, settings.alpha
        return (
            f"H1 accepted: {first} outscores {second} by more than {low:+g} sd of the margin "
            f"a pair; the pairs favour {high:+g} over {low:+g} (an effect of {low:+g} or less "
            f"ends this way at most {100 * chance:g}% of the time)"
        )
    low, high, chance = settings.effect0, settings.effect1, settings.beta
    return (
        f"H0 accepted: {first} does not outscore {second} by {high:+g} sd of the margin a pair "
        f"or more; the pairs favour {low:+g} over {high:+g} (an effect of {high:+g} or more "
        f"ends this way at most {100 * chance:g}% of the time)"
    )


def skew_note(settings: TestSettings, skew: float | None) -> str | None:
    """A warning when a margin test decided on margins more skewed (``skew``, their sample
    skewness) than its error rates were measured on (``None``: no need).

    >>> print(skew_note(MarginSettings(0.0, 0.3), -1.5))
    ... # doctest: +NORMALIZE_WHITESPACE
    note: the margins are skewed (-1.50); the margin test's error rates hold within 1.5 points
    only up to 0.5 either way (docs/match.md): check with the pentanomial test
    >>> skew_note(MarginSettings(0.0, 0.3), 0.2) is None
    True
    """
    if not isinstance(settings, MarginSettings) or skew is None or abs(skew) <= MEASURED_SKEW:
        return None
    return (
        f"note: the margins are skewed ({skew:+.2f}); the margin test's error rates hold within "
        f"1.5 points only up to {MEASURED_SKEW:g} either way (docs/match.md): check with the "
        "pentanomial test"
    )


def corrected_text(found: StoppedEstimate) -> str:
    """The estimates corrected for the test's stop, in one line.

    >>> print(corrected_text(StoppedEstimate(31.0, 2.5, 60.0, 20.4, 1.0, 40.0, 0.21)))
    ... # doctest: +NORMALIZE_WHITESPACE
    corrected for the stop: Elo +31 [+2, +60], margin +20.4 [+1.0, +40.0] points a pair
    (effect +0.21)
    >>> print(corrected_text(StoppedEstimate(None, None, None, 20.4, 1.0, None, 0.21)))
    ... # doctest: +NORMALIZE_WHITESPACE
    corrected for the stop: Elo not estimated (every pair went one way), margin +20.4 [+1.0,
    open] points a pair (effect +0.21)
    """
    if found.elo is None:
        elo = "not estimated (every pair went one way)"
    else:
        elo = f"{found.elo:+.0f} [{_end(found.elo_low, 0)}, {_end(found.elo_high, 0)}]"
    return (
        f"corrected for the stop: Elo {elo}, margin {found.margin:+.1f} "
        f"[{_end(found.margin_low, 1)}, {_end(found.margin_high, 1)}] points a pair (effect "
        f"{found.effect:+.2f})"
    )


def _end(value: float | None, digits: int) -> str:
    return "open" if value is None else f"{value:+.{digits}f}"


def _pairs(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


def _finish(report: MatchReport, out: Console, as_json: bool) -> None:
    """Say where the match ended, in a line or two; the JSON on stdout with ``--json``."""
    first, second = report.bots
    out.print(
        f"{said(report.name)}: {said(first)} vs {said(second)}, {report.pairs} pairs "
        f"({report.series} series): {said(summary_line(report))}",
        soft_wrap=True,
    )
    line = report.reading_line()
    if line is not None:  # from the first bot's side, as the standings' pairwise row
        out.print(said(f"{first} against {second}: {line}"), soft_wrap=True)
    test, settings = report.test, report.settings
    if test is not None and test.verdict is not None and settings is not None:
        if isinstance(settings, MarginSettings):
            words = margin_verdict_text(test.verdict, first, second, settings)
        else:
            words = verdict_text(test.verdict, first, second, settings)
        out.print(said(words), soft_wrap=True)
        if report.corrected is not None:
            out.print(said(corrected_text(report.corrected)), soft_wrap=True)
        note = skew_note(settings, report.margin_skewness)
        if note is not None:
            out.print(said(note), soft_wrap=True)
    elif report.state == "cap reached":
        out.print(
            f"cap reached: {_pairs(report.pairs)} and the test has not decided (LLR "
            f"{test.llr if test else 0:+.2f} between its bounds); raise --max-pairs to go on",
            soft_wrap=True,
        )
    elif report.state == "unfinished":
        out.print(
            f"unfinished: some matches failed (gin league status {said(report.name)}); run the "
            "same command again to retry them",
            soft_wrap=True,
        )
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    if report.state == "unfinished":
        raise typer.Exit(1)
