"""Stored statistics recomputed from the logs: ``gin league restat``.

The standings derive from the match logs. Each stored result keeps its seats' hand statistics
(:class:`~tournaments.formats.hands.HandStats`, counted by the worker at the match's end); this
counts them again with the same function from each result's log, once the log verifies and names
that match, and rewrites those that differ (a statistic added since, or a stored summary that was
damaged). A result whose log does not verify is left as it is and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from protocol.bounded import loads_json
from referee.replay import LogReadError, read_log, verify_records
from tournaments.formats.hands import HandStats, hand_stats, logged_hands, read_hand_stats
from tournaments.store import LoggedResult, Store

__all__ = ["RestatReport", "restat"]


@dataclass(frozen=True, slots=True)
class RestatReport:
    """What :func:`restat` did to a league's results."""

    checked: int
    """Results whose log verified and whose statistics were recounted."""
    changed: tuple[str, ...]
    """The match ids whose statistics were rewritten."""
    refused: tuple[tuple[str, str], ...] = ()
    """(match id, why): results left as they were, their log unreadable, not verified, or
    another match's."""


class NotRecounted(ValueError):  # noqa: N818 - named for what is so
    """A result's log cannot be trusted to recount it."""


def restat(store: Store, league: str) -> RestatReport:
    """Recount every stored result's hand statistics from its verified log; rewrite those that
    changed (only their ``hand_stats``: the rest of each summary stays as stored)."""
    rewritten: list[tuple[str, tuple[HandStats, HandStats]]] = []
    refused: list[tuple[str, str]] = []
    results = store.logged_results(league)
    for result in results:
        try:
            fresh = recounted(result)
        except NotRecounted as error:
            refused.append((result.match_id, str(error)))
            continue
        if fresh != _stored_hand_stats(result):
            rewritten.append((result.match_id, fresh))
    if rewritten:
        store.rewrite_hand_stats(rewritten)
    checked = len(results) - len(refused)
    return RestatReport(checked, tuple(match_id for match_id, _ in rewritten), tuple(refused))


def recounted(result: LoggedResult) -> tuple[HandStats, HandStats]:
    """Both seats' hand statistics counted from the result's log.

    Raises:
        NotRecounted: the log cannot be read, does not verify, or is another match's.
    """
    path = Path(result.log_path)
    try:
        log = read_log(path)
    except LogReadError as error:
        raise NotRecounted(f"its log {path} does not verify: it cannot be read ({error})") from None
    report = verify_records(log)  # the log as read once: what is counted is what was verified
    if not report.ok:
        raise NotRecounted(f"its log {path} does not verify: {report.summary()}")
    if log.header.match_id != result.match_id:
        raise NotRecounted(f"its log {path} is of match {log.header.match_id}")
    return hand_stats(logged_hands(log))


def _stored_hand_stats(result: LoggedResult) -> tuple[HandStats, HandStats] | None:
    """The hand statistics as stored, or None if they cannot be read (then they are rewritten)."""
    try:
        summary = loads_json(result.summary)
    except ValueError:  # TooComplex too
        return None
    return read_hand_stats(summary.get("hand_stats")) if isinstance(summary, dict) else None
