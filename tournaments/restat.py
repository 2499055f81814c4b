"""Stored statistics recomputed from the logs: ``gin league restat``.

The standings derive from the match logs. Each stored result keeps its seats' hand statistics
(:class:`~tournaments.stats.HandStats`, counted by the worker at the match's end); this counts
them again from each result's log with the same function and rewrites those that differ (a
statistic added since, or a stored summary that was damaged).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from referee.replay import BadRecord, LogReadError, read_log
from tournaments.stats import hand_stats, logged_hands
from tournaments.store import ResultRow, Store


@dataclass(frozen=True, slots=True)
class RestatReport:
    """What :func:`restat` did to a league's results."""

    checked: int
    """Results whose log was read whole."""
    changed: tuple[str, ...]
    """The match ids whose statistics were rewritten."""
    unreadable: tuple[tuple[str, str], ...] = ()
    """(match id, why): results left as they were, their log unreadable or cut short."""


def restat(store: Store, league: str) -> RestatReport:
    """Recompute every stored result's hand statistics from its log; rewrite those that
    changed."""
    rewritten: list[ResultRow] = []
    unreadable: list[tuple[str, str]] = []
    results = store.results(league)
    for result in results:
        try:
            fresh = recounted(result)
        except LogReadError as error:
            unreadable.append((result.match_id, str(error)))
            continue
        if fresh != result:
            rewritten.append(fresh)
    if rewritten:
        store.rewrite_summaries(rewritten)
    checked = len(results) - len(unreadable)
    return RestatReport(checked, tuple(r.match_id for r in rewritten), tuple(unreadable))


def recounted(result: ResultRow) -> ResultRow:
    """The result with its statistics counted from its log.

    Raises:
        LogReadError: the log cannot be read, or stops before its result record.
    """
    path = Path(result.log_path)
    log = read_log(path)
    if log.stop is not None or log.result is None:
        raise LogReadError(log.stop or _no_result(len(log.records) + 1), path)
    summary = dataclasses.replace(result.summary, hand_stats=hand_stats(logged_hands(log)))
    return dataclasses.replace(result, summary=summary)


def _no_result(line: int) -> BadRecord:
    return BadRecord(line, None, "the log ends before its result record")
