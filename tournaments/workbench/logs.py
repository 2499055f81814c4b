"""In-process series as match logs: replay, verify and watch them like a referee's.

A :class:`~referee.rules.SeriesResult` holds each hand's outcome, not the actions that led to
it, so a bare ``play_series`` result cannot be logged. :func:`play_recorded` plays the series
with :func:`referee.rules.play_series` itself, the policies wrapped so that each decision (seat,
action, number of legal actions, time taken) is kept beside the result. :func:`write_log` then
plays those decisions again through the referee's own match (:func:`referee.match.play_match`,
in-process seats that answer as recorded, on trio's mock clock), so the log is written by the
code that writes every referee's log: same records, same commitments and reveals, same
bookkeeping, and ``gin replay``, ``gin replay --html`` and ``gin replay --verify`` read it as
they read any other.

What an in-process run cannot know is written thus: ``started_at`` is when the log was written;
each seat's ``code_hash`` is empty and ``sandbox`` is ``[]`` (no bot process, no jail); ``ms``
is the time the policy took in this process (or 0 with ``think_times=False``), counted against
the time control in the header (the arena's default unless another is given), so a policy
slower than it is an error, not a log of faults that never happened; no ``bot_seeds``.

In a notebook, a :class:`RecordedSeries` shows itself as the self-contained replay page
(``_repr_html_``), in a sandboxed ``iframe``.
"""

from __future__ import annotations

import dataclasses
import html
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio
import trio.testing

from protocol.sdk import Bot
from referee.control import TimeControl
from referee.match import MatchConfig, MatchResult, play_match
from referee.matchlog import SALT_BYTES
from referee.records import LogRecord
from referee.replay import Replay, Viewer, build_replay, read_text
from referee.rules import (
    Action,
    HandRecord,
    Observation,
    Policy,
    RuleParams,
    SeriesResult,
    play_series,
)
from referee.seats import BotIdentity, Decision, Seat, SeatEvent, Welcome
from tournaments.views.replay_html import replay_html

__all__ = [
    "Decided",
    "NotAsRecordedError",
    "RecordedSeries",
    "play_recorded",
    "write_log",
]

IFRAME_HEIGHT_PX = 640


class NotAsRecordedError(ValueError):
    """The recorded decisions, played through the referee, do not give the recorded result (a
    policy slower than the time control, or a recording that was changed)."""


@dataclass(frozen=True, slots=True)
class Decided:
    """One call of a policy in an in-process series."""

    seat: int
    action: Action
    legal: int
    """How many legal actions there were (1: forced; the referee would not have asked)."""
    seconds: float
    """How long the policy took, in this process."""


@dataclass(frozen=True, slots=True)
class RecordedSeries:
    """An in-process series with every decision of its policies: what :func:`write_log` writes."""

    result: SeriesResult
    decisions: tuple[Decided, ...]
    names: tuple[str, str]
    versions: tuple[str, str] = ("0", "0")
    match_id: str = dataclasses.field(default_factory=lambda: f"in-process-{secrets.token_hex(6)}")
    """The id its logs are written under (unless another is given)."""
    salt: bytes = dataclasses.field(
        default_factory=lambda: secrets.token_bytes(SALT_BYTES), repr=False
    )
    """The secret of its logs' commitments (unless another is given): each log of the series
    is the same, but for when it was written."""

    def log_text(
        self,
        *,
        time_control: TimeControl | None = None,
        think_times: bool = True,
        match_id: str | None = None,
        salt: bytes | None = None,
    ) -> str:
        """The series' match log, as the text of a JSON Lines file (see :func:`write_log`).

        Raises:
            NotAsRecordedError: the decisions, refereed, end otherwise than the recorded result.
        """
        return _log_text(self, time_control, think_times, match_id, salt)

    def write_log(
        self,
        path: Path | str,
        *,
        time_control: TimeControl | None = None,
        think_times: bool = True,
        match_id: str | None = None,
        salt: bytes | None = None,
    ) -> Path:
        """:func:`write_log` of this series."""
        text = self.log_text(
            time_control=time_control, think_times=think_times, match_id=match_id, salt=salt
        )
        return _write_new(Path(path), text)

    def replay(self, *, think_times: bool = True) -> Replay:
        """The series re-played from its log, as ``gin replay`` reads a log file.

        Raises:
            NotAsRecordedError: as :meth:`log_text`.
        """
        return build_replay(read_text(self.log_text(think_times=think_times)))

    def html(self, viewer: Viewer = None, *, think_times: bool = True) -> str:
        """The self-contained replay page (``gin replay --html``) for ``viewer`` (the referee's
        full view when ``None``).

        Raises:
            NotAsRecordedError: as :meth:`log_text`.
        """
        return replay_html(self.replay(think_times=think_times), viewer)

    def _repr_html_(self) -> str:
        """A notebook's rendering: the replay page in an ``iframe`` of its own (its styles and
        script kept apart from the notebook's, nothing fetched). A series the referee would not
        have played so (a policy slower than the clock) shows the reason instead."""
        try:
            page = self.html()
        except NotAsRecordedError as error:
            return f"<pre>cannot show this series as refereed: {html.escape(str(error))}</pre>"
        title = html.escape(f"{self.names[0]} v {self.names[1]}, seed {self.result.seed}")
        return (
            f'<iframe title="{title}" srcdoc="{html.escape(page, quote=True)}" '
            f'sandbox="allow-scripts" style="width:100%;height:{IFRAME_HEIGHT_PX}px;border:0">'
            "</iframe>"
        )


class _Recording:
    """A policy wrapped to keep each decision it makes, with its time."""

    def __init__(self, policy: Policy, seat: int, kept: list[Decided]) -> None:
        self.policy = policy
        self.seat = seat
        self.kept = kept

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        started = time.perf_counter()
        action = self.policy(view, legal)
        spent = time.perf_counter() - started
        self.kept.append(Decided(self.seat, action, len(legal), spent))
        return action


def policy_identity(policy: Policy) -> tuple[str, str]:
    """A name and version for a policy in the log: a bot's own (``Bot.as_policy``), else the
    function's or the class's name.

    >>> from referee.rules import greedy_policy
    >>> policy_identity(greedy_policy)
    ('GreedyPolicy', '0')
    """
    bot = getattr(policy, "bot", None)
    if isinstance(bot, Bot):
        return bot.name or type(bot).__name__, bot.version or "0"
    name = getattr(policy, "__name__", None)
    return (name if isinstance(name, str) else type(policy).__name__), "0"


def play_recorded(
    first: Policy,
    second: Policy,
    seed: int,
    params: RuleParams | None = None,
    on_hand_end: Callable[[HandRecord], None] | None = None,
    *,
    names: tuple[str, str] | None = None,
) -> RecordedSeries:
    """:func:`referee.rules.play_series` (same arguments, same result in ``.result``), keeping
    every decision, so that the series can be written as a log and watched.

    Raises:
        IllegalActionError: a policy returned an illegal action (as ``play_series``).
    """
    kept: list[Decided] = []
    result = play_series(
        _Recording(first, 0, kept),
        _Recording(second, 1, kept),
        seed,
        params or RuleParams(),
        on_hand_end,
    )
    identities = (policy_identity(first), policy_identity(second))
    chosen = names or (identities[0][0], identities[1][0])
    return RecordedSeries(result, tuple(kept), chosen, (identities[0][1], identities[1][1]))


def write_log(
    series: RecordedSeries,
    path: Path | str,
    *,
    time_control: TimeControl | None = None,
    think_times: bool = True,
    match_id: str | None = None,
    salt: bytes | None = None,
) -> Path:
    """Write ``series`` as a match log at ``path`` (a new file); returns the path.

    ``time_control`` goes in the header (default: the arena's, ``TimeControl()``); with
    ``think_times`` each decision's ``ms`` is the time the policy took, else 0. ``match_id``
    and ``salt`` (the secret of the commitments) are the series' own unless given: they are
    there to make a log comparable with another. Nothing is written unless the
    whole log is made.

    Raises:
        NotAsRecordedError: the decisions, refereed, end otherwise than the recorded result (say, a
            decision slower than the time control allows: give a longer one, or
            ``think_times=False``).
        FileExistsError: ``path`` exists.
        OSError: the file cannot be written.
    """
    text = _log_text(series, time_control, think_times, match_id, salt)
    return _write_new(Path(path), text)


def _write_new(path: Path, text: str) -> Path:
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    return path


# --- the referee, on recorded decisions -----------------------------------------------------


class _MemoryLog:
    """A match log kept in memory as its lines. The one place this module meets
    :class:`referee.matchlog.LogWriter`'s API: writing a record."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, record: LogRecord, /) -> None:
        """Append one record, as :class:`referee.matchlog.MatchLog` writes it."""
        self.lines.append(record.to_line())

    def flush(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to close."""

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


class _Script:
    """The recorded decisions the referee asks for (forced ones it plays itself), in order."""

    def __init__(self, decisions: Sequence[Decided], think_times: bool) -> None:
        self.asked = [decided for decided in decisions if decided.legal > 1]
        self.think_times = think_times
        self.next = 0

    def answer(self, seat: int) -> Decided:
        if self.next >= len(self.asked):
            raise NotAsRecordedError("the referee asked for more decisions than were recorded")
        decided = self.asked[self.next]
        if decided.seat != seat:
            raise NotAsRecordedError(
                f"the referee asked seat {seat} for decision {self.next + 1}; "
                f"seat {decided.seat} made it"
            )
        self.next += 1
        return decided


class _ScriptedSeat:
    """An in-process seat that answers as recorded, taking the recorded time (on the mock
    clock, so no time passes)."""

    def __init__(self, script: _Script, seat: int, name: str, version: str) -> None:
        self.script = script
        self.seat = seat
        self.identity = BotIdentity(name, version)

    async def prepare(self) -> None:
        """Nothing to make."""

    async def connect(self, seat: int) -> BotIdentity:  # noqa: ARG002 - the Seat's shape
        return self.identity

    async def welcome(self, welcome: Welcome) -> None:
        """Nothing to tell: the answers are recorded."""

    async def decide(self, decision: Decision) -> Action:
        decision.sent()
        decided = self.script.answer(self.seat)
        if self.script.think_times:
            await trio.sleep(decided.seconds)
        return decided.action

    def notify(self, event: SeatEvent) -> None:
        """Nothing to tell."""

    def hold(self, held: bool) -> None:
        """Nothing to pause."""

    async def close(self, detail: str) -> None:
        """Nothing to end."""

    def diagnostics(self) -> dict[str, object]:
        return {"kind": "in-process"}


def _log_text(
    series: RecordedSeries,
    time_control: TimeControl | None,
    think_times: bool,
    match_id: str | None,
    salt: bytes | None,
) -> str:
    config = MatchConfig(
        match_id=match_id or series.match_id,
        seed=series.result.seed,
        params=series.result.params,
        time_control=time_control or TimeControl(),
        salt=series.salt if salt is None else salt,
    )
    script = _Script(series.decisions, think_times)
    seats: tuple[Seat, Seat] = (
        _ScriptedSeat(script, 0, series.names[0], series.versions[0]),
        _ScriptedSeat(script, 1, series.names[1], series.versions[1]),
    )
    log = _MemoryLog()
    result = trio.run(
        play_match, seats, config, log, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    _check(result, series, script)
    return log.text()


def _check(result: MatchResult, series: RecordedSeries, script: _Script) -> None:
    """The refereed match must be the recorded series, decision for decision."""
    if result.faults:
        fault = result.faults[0]
        raise NotAsRecordedError(
            f"refereed, seat {fault.seat} has a fault ({fault.kind.value}: {fault.detail}); "
            "give a longer time_control, or think_times=False"
        )
    if script.next != len(script.asked):
        raise NotAsRecordedError(
            f"the series ended after {script.next} of {len(script.asked)} recorded decisions"
        )
    if result.series != series.result:
        raise NotAsRecordedError(
            "the recorded decisions, refereed, do not give the recorded result"
        )
