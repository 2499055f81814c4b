"""Verifying a log, and building a replay: both are one walk through the rules engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from referee.replay._read import read_log
from referee.replay._records import BadRecord, Header, LogReadError, MatchLogData, VerifyStatus
from referee.replay._stream import StreamedLog
from referee.replay._views import Step, StepKind
from referee.replay._walk import Disagreement, LoadedLog, Walk, WalkSource


@dataclass(frozen=True, slots=True)
class _Reading:
    """How reading a log's lines went: what a verdict needs besides the walk."""

    path: Path | None
    count: int
    """Readable records after the header."""
    last_line: int
    """The line of the last readable record (the header's when there is none)."""
    stop: BadRecord | None
    truncated: bool

    @classmethod
    def of(cls, log: MatchLogData) -> _Reading:
        last = log.records[-1].line if log.records else log.header.line
        return cls(log.path, len(log.records), last, log.stop, log.truncated)

    @classmethod
    def streamed(cls, log: StreamedLog) -> _Reading:
        return cls(log.path, log.count, log.last_line, log.stop, log.truncated)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify_log` found."""

    path: Path | None
    status: VerifyStatus
    problem: BadRecord | None
    """The first record that disagrees (``FAILED``) or where the log stops (``INCOMPLETE``)."""
    match_id: str | None = None
    format: int | None = None
    records: int = 0
    """Records read, the header included."""
    hands: int = 0
    """Hands checked to their end."""
    actions: int = 0
    """Actions checked for legality and replayed."""
    unchecked: tuple[str, ...] = ()
    """What could not be checked, and why (an incomplete log)."""

    @property
    def ok(self) -> bool:
        """Whether the whole log is verified."""
        return self.status is VerifyStatus.VERIFIED

    def summary(self) -> str:
        """One paragraph for people: the verdict, what was checked, what could not be."""
        checked = f"{self.records} records, {self.hands} hands, {self.actions} actions checked"
        if self.status is VerifyStatus.VERIFIED:
            lines = [f"verified: {checked}; every deck, action, showdown and score agrees"]
        elif self.status is VerifyStatus.FAILED:
            lines = [f"FAILED at {self.problem}", f"before it: {checked}"]
        else:
            lines = [f"incomplete: {self.problem}", f"what is there agrees: {checked}"]
        lines += [f"not checked: {note}" for note in self.unchecked]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Replay:
    """A log re-played through the rules: its steps for every viewer, and the verdict."""

    header: Header
    names: tuple[str, str]
    steps: tuple[Step, ...]
    report: VerifyReport

    def hand_starts(self) -> tuple[int, ...]:
        """The index of each hand's first step (its deal), in hand order."""
        return tuple(step.index for step in self.steps if step.kind is StepKind.DEAL)


def _walk(log: WalkSource, reading: _Reading, steps: list[Step] | None) -> VerifyReport:
    walk = Walk(log, None if steps is None else steps.append)
    problem: BadRecord | None = None
    try:
        walk.run()
    except Disagreement as error:
        problem = BadRecord(error.line, error.record_type, error.reason)
    header = log.header
    unchecked: list[str] = []
    if problem is None:
        problem, status = _ending(reading, walk, unchecked)
    else:
        status = VerifyStatus.FAILED
    return VerifyReport(
        path=reading.path,
        status=status,
        problem=problem,
        match_id=header.match_id,
        format=header.format,
        records=1 + reading.count,
        hands=walk.finished,
        actions=walk.actions_checked,
        unchecked=tuple(unchecked),
    )


def _ending(
    log: _Reading, walk: Walk, unchecked: list[str]
) -> tuple[BadRecord | None, VerifyStatus]:
    """The verdict of a walk that found no disagreement: whole, cut short, or damaged."""
    if walk.blind is not None:
        unchecked.append(
            f"hand {walk.blind.hand + 1} (from line {walk.blind.line}): the log ends before the "
            f"hand did and before the seed was revealed, so its deck is unknown and its "
            f"{walk.blind_records} later records could not be checked"
        )
    if log.stop is not None and not log.truncated:
        return log.stop, VerifyStatus.FAILED
    if log.stop is not None:
        unchecked.append("the result: the log was cut off before it")
        return log.stop, VerifyStatus.INCOMPLETE
    if walk.result is None:
        last = log.last_line
        unchecked.append("the result, the seed and the series' end: the log has no result record")
        reason = "the log ends here without a result record: the match did not finish"
        return BadRecord(last, None, reason), VerifyStatus.INCOMPLETE
    return None, VerifyStatus.VERIFIED


def _unreadable(error: LogReadError) -> VerifyReport:
    return VerifyReport(error.path, VerifyStatus.FAILED, error.bad)


def verify_log(path: Path) -> VerifyReport:
    """Re-play a log file through the rules engine and check every record.

    The file is read as a stream, a line at a time (:mod:`referee.replay._stream`): what is held
    at once does not grow with the log, so a log of any size is checked in bounded memory.

    Checks that each deck matches its commitment (and the seed, once revealed), that every
    action was legal and chosen as its record says, that every fault follows the fault policy,
    and that every showdown, score and the final result are what the rules give. Never raises
    for a bad log: the report says what is wrong, naming the first record that disagrees.

    >>> verify_log(Path("no/such/log.jsonl")).status.value
    'failed'
    """
    try:
        with StreamedLog(path) as log:
            return _walk(log, _Reading.streamed(log), None)
    except LogReadError as error:
        return _unreadable(error)


def verify_records(log: MatchLogData) -> VerifyReport:
    """Check a log already read (see :func:`verify_log`)."""
    return _walk(LoadedLog(log), _Reading.of(log), None)


def build_replay(log: MatchLogData) -> Replay:
    """Re-play a log into steps for every viewer; it stops at the first record that disagrees.

    The last step is a note when the log disagrees or ends early, saying why.
    """
    steps: list[Step] = []
    report = _walk(LoadedLog(log), _Reading.of(log), steps)
    if report.problem is not None:
        tables = steps[-1].tables if steps else None
        hand = steps[-1].hand_number if steps else -1
        line = report.problem.line
        steps.append(
            Step(
                len(steps),
                line,
                StepKind.NOTE,
                hand,
                None,
                None,
                tables,
                problem=report.problem,
                status=report.status,
            )
        )
    return Replay(log.header, log.names, tuple(steps), report)


def load_replay(path: Path) -> Replay:
    """Read a log file and re-play it (see :func:`build_replay`).

    Raises:
        LogReadError: the log cannot be read at all (no header, unknown format version), or is
            too big to read whole (:data:`~referee.replay._read.MAX_WHOLE_LOG_BYTES`).
    """
    return build_replay(read_log(path))
