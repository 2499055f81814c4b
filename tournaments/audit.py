"""A league's store checked against its match logs: ``gin league verify``.

A log that verifies proves how its match went; the standings are computed from the store. This
checks that the two agree: every result's log verifies, names that match and the code hashes the
registry has for its seats, and says what the result says (winner, end, forfeits, totals, game
winners, hands, faults, hand statistics); every done match has one result and one log of its own,
no result is of a match that is not done or not scheduled, no result once recorded (the store's
ledger of recorded results) is gone, and no log in the league's folder belongs to no result. The
report counts the schedule by state, so that what is not verified is said, not left out.
Each disagreement is reported by match id; nothing is repaired here (``gin league restat``
recounts hand statistics from the logs).
"""

from __future__ import annotations

import functools
import json
import os
import stat
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from protocol.bounded import JsonObject, loads_json
from referee.replay import LogReadError, MatchLogData, ResultRecord, read_log, verify_records
from tournaments.formats.hands import hand_stats, logged_hands, read_hand_stats
from tournaments.formats.seeds import league_bot_seeds
from tournaments.league import stored_league
from tournaments.registry import parse_spec
from tournaments.rounds import check_rounds
from tournaments.store import (
    BotRow,
    LoggedResult,
    MatchRow,
    MatchState,
    ResultRow,
    Store,
    StoreDamaged,
)

__all__ = ["AuditReport", "audit", "unrecorded"]


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One thing about a match that the store and the logs disagree on (or, as a note, that
    could not be checked)."""

    match_id: str
    what: str

    def __str__(self) -> str:
        return f"{self.match_id}: {self.what}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What :func:`audit` found in a league."""

    results: int
    """Stored results checked."""
    verified: int
    """Of those, the results whose log verifies through the rules."""
    discrepancies: tuple[Discrepancy, ...]
    """Every disagreement, in schedule order (files that belong to no match last)."""
    unchecked: tuple[Discrepancy, ...] = ()
    """What could not be checked (a seat's bot no longer in the registry): not a disagreement."""
    scheduled: tuple[tuple[MatchState, int], ...] = ()
    """The league's matches by state (those of no state left out), as ``gin league status``
    counts them."""

    @property
    def matches(self) -> int:
        """The matches the league has scheduled."""
        return sum(count for _, count in self.scheduled)

    def count(self, state: MatchState) -> int:
        """The scheduled matches in this state."""
        return sum(count for found, count in self.scheduled if found is state)

    @property
    def ok(self) -> bool:
        """Whether the store and the logs agree in everything checked."""
        return not self.discrepancies


def audit(store: Store, league: str, logs: Path) -> AuditReport:
    """Check a league's stored results against their logs and its schedule (``logs``: the
    league's log folder, ``Arena.logs_dir``).

    Raises:
        StoreDamaged: a match's state cannot be read (then nothing can be checked).
    """
    with store.snapshot():  # a match recorded meanwhile: in both reads or in neither
        matches = {match.match_id: match for match in store.matches(league)}
        lost = store.lost_results(league)
        strays = store.stray_results(league)
        read: Iterator[tuple[LoggedResult, ResultRow | StoreDamaged | None]]
        try:
            read = store.checked_results(league)
        except StoreDamaged:  # text that is not UTF-8: read apart, to say which result's
            read = ((result, None) for result in store.logged_results(league))
    context = _League(store, league)
    found: list[Discrepancy] = []
    unchecked: list[Discrepancy] = []
    verified = 0
    results = []
    for result, stored in read:  # each let go once checked: only its match id and log kept
        check = _ResultCheck(context, result, matches.get(result.match_id), stored)
        verified += check.run()
        found += check.found
        unchecked += check.unchecked
        results.append(LoggedResult(result.match_id, result.log_path, ""))
    found += _schedule(matches, results, {match_id for match_id, _ in lost})
    found += [_lost(match_id, when, matches.get(match_id)) for match_id, when in lost]
    found += [Discrepancy(match_id, _STRAY) for match_id in strays]
    found += _shared_logs(results)
    found += _orphans(logs, results, matches)
    found += _rounds(store, league)
    order = {match_id: index for index, match_id in enumerate(matches)}
    found.sort(key=lambda item: order.get(item.match_id, len(order)))
    states = Counter(match.state for match in matches.values())
    scheduled = tuple((state, states[state]) for state in MatchState if states[state])
    return AuditReport(len(results), verified, tuple(found), tuple(unchecked), scheduled)


def _rounds(store: Store, league: str) -> list[Discrepancy]:
    """An event's rounds that are not paired from the results before them, or whose matches
    are not their ties' (``tournaments.rounds.check_rounds``), each under ``LEAGUE/rounds``."""
    stored = stored_league(store, league)
    if stored is None or not stored.config.event:
        return []
    return [Discrepancy(f"{league}/rounds", problem) for problem in check_rounds(store, league)]


def unrecorded(store: Store, league: str) -> list[str]:
    """The matches marked done that have no result row, and those whose recorded result is
    gone (deleted by hand, say, and the match set back to pending): the standings count
    results, so they leave these out. What ``gin league status`` warns of, and ``gin league
    verify`` reports.

    Raises:
        StoreDamaged: a match's state cannot be read.
    """
    with store.snapshot():
        done = store.matches(league, MatchState.DONE)
        recorded = {result.match_id for result in store.logged_results(league)}
        lost = [match_id for match_id, _ in store.lost_results(league)]
    missing = [match.match_id for match in done if match.match_id not in recorded]
    return missing + [match_id for match_id in lost if match_id not in missing]


_STRAY: Final = "a result of a match the schedule does not have (its match row is gone)"


def _lost(match_id: str, when: float, match: MatchRow | None) -> Discrepancy:
    """A result the ledger has and the store no longer does."""
    at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))
    if match is None:
        where = "and the schedule no longer has the match"
    elif match.state is MatchState.DONE:
        where = "though the match is done"
    else:
        where = f"and the match is {match.state.value} again"
    return Discrepancy(match_id, f"its result, recorded {at}, is gone from the store, {where}")


# --- the schedule and the log folder -------------------------------------------------------


def _schedule(
    matches: Mapping[str, MatchRow], results: list[LoggedResult], lost: set[str]
) -> list[Discrepancy]:
    """Every done match has a result (those whose result the ledger says was recorded are
    reported as lost instead); every result is of a done match of this league."""
    stored = {result.match_id for result in results}
    found = [
        Discrepancy(match.match_id, "the match is done, but the store has no result for it")
        for match in matches.values()
        if match.state is MatchState.DONE
        and match.match_id not in stored
        and match.match_id not in lost
    ]
    for result in results:
        match = matches.get(result.match_id)
        if match is None:
            found.append(Discrepancy(result.match_id, "a result of a match of another league"))
        elif match.state is not MatchState.DONE:
            found.append(
                Discrepancy(result.match_id, f"a result, but the match is {match.state.value}")
            )
    return found


def _shared_logs(results: list[LoggedResult]) -> list[Discrepancy]:
    """No two results have one log."""
    owners: dict[str, str] = {}
    found = []
    resolve = _Resolver()
    for result in results:
        path = resolve(result.log_path)
        owner = owners.setdefault(path, result.match_id)
        if owner != result.match_id:
            what = f"its log {result.log_path} is also the log of the result of match {owner}"
            found.append(Discrepancy(result.match_id, what))
    return found


def _orphans(
    logs: Path, results: list[LoggedResult], matches: Mapping[str, MatchRow]
) -> list[Discrepancy]:
    """Logs in the league's folder that no result has. Not orphans: a set-aside attempt
    (``.aborted-*``), a seat's stderr beside its log, and the log of a match not done (being
    played, or a failed attempt's, which the next run sets aside)."""
    if not logs.is_dir():
        return []
    resolve = _Resolver()
    claimed = {resolve(result.log_path) for result in results}
    found = []
    for path in sorted(logs.glob("*.jsonl"), key=str):  # as paths sort, but at C speed
        match = matches.get(path.stem)
        if resolve(str(path)) in claimed or (
            match is not None and match.state is not MatchState.DONE
        ):
            continue
        found.append(Discrepancy(path.stem, f"the log {path} belongs to no result"))
    return found


class _Resolver:
    """``str(Path(path).resolve())`` of many paths in few folders: each folder resolved once,
    then a path whose file is no symbolic link is its folder's and its name (one ``lstat``, not
    one per part of the path)."""

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        folder, name = os.path.split(path)
        if name in ("", ".", "..") or _is_link(path):
            return str(Path(path).resolve())
        real = self.folders.get(folder)
        if real is None:
            real = self.folders[folder] = str(Path(folder or ".").resolve())
        return os.path.join(real, name)


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False  # not there: resolved as a name in its folder, as resolve() does
    except ValueError:
        return True  # a NUL in the path: resolve() says so


# --- one result ----------------------------------------------------------------------------


class _League:
    """What every result of a league is checked against, read once (when first needed): its
    secrets and its bots."""

    def __init__(self, store: Store, league: str) -> None:
        self.store = store
        self.league = league
        self._bots: dict[str, BotRow | None] = {}

    @functools.cached_property
    def secrets(self) -> tuple[bytes | None, bytes]:
        """The league's secret and the store's own, which its bots' seeds derive from."""
        return self.store.league_secret(self.league), self.store.secret("home")

    def bot(self, ident: str) -> BotRow | None:
        """A seat's bot as the registry has it (removed ones too: their hash is kept)."""
        if ident not in self._bots:
            self._bots[ident] = self.store.bot(*parse_spec(ident), removed=True)
        return self._bots[ident]


FIRST_FORMAT_WITH_BOT_SEEDS: Final = 3
"""Logs of this format on that a league's runner wrote name the seeds its bots were given."""


class _ResultCheck:
    """One stored result against its log, its match and the registry."""

    def __init__(
        self,
        context: _League,
        result: LoggedResult,
        match: MatchRow | None,
        stored: ResultRow | StoreDamaged | None = None,
    ) -> None:
        """``stored``: the result's row as :meth:`Store.result` reads it (``None``: read it)."""
        self.context = context
        self.store = context.store
        self.league = context.league
        self.stored = stored
        self.result = result
        self.match = match
        self.path = Path(result.log_path)
        self.found: list[Discrepancy] = []
        self.unchecked: list[Discrepancy] = []

    def differs(self, what: str) -> None:
        self.found.append(Discrepancy(self.result.match_id, what))

    def run(self) -> bool:
        """Check everything; True when the log itself verifies."""
        try:
            log = read_log(self.path)
        except LogReadError as error:
            self.differs(f"its log does not verify: it cannot be read ({error})")
            return False
        report = verify_records(log)
        if not report.ok:
            self.differs(f"its log {self.path} does not verify: {report.summary()}")
        summary = _summary(self.result.summary)
        if isinstance(summary, str):
            self.differs(summary)
        else:
            self._scheduled(summary)
        if log.header.match_id != self.result.match_id:  # nothing more of it is this match's
            self.differs(f"its log {self.path} is of match {log.header.match_id}")
            return report.ok
        self._code(log)
        self._seeds(log)
        if log.result is not None:
            if not isinstance(summary, str):
                self._logged(summary, log)
            self._columns(log.result, readable=not isinstance(summary, str))
        return report.ok

    def _scheduled(self, summary: JsonObject) -> None:
        """The summary is of this match and its seats are the schedule's."""
        stored_id = summary.get("match_id", self.result.match_id)
        if stored_id != self.result.match_id:
            self.differs(f"its summary is of match {_json(stored_id)}")
        if self.match is not None:
            seats = [self.match.seat0, self.match.seat1]
            if summary.get("seats") != seats:
                self.differs(
                    f"seats are {_json(summary.get('seats'))} in the store, "
                    f"{_json(seats)} in the schedule"
                )

    def _code(self, log: MatchLogData) -> None:
        """Each seat that said hello ran the code the registry has for the match's bot."""
        if self.match is None:
            return
        for seat, (ident, identity) in enumerate(
            zip((self.match.seat0, self.match.seat1), log.header.seats, strict=True)
        ):
            if identity is None:
                continue  # the seat never said hello: its log names no code
            bot = self.context.bot(ident)  # its hash is kept
            if bot is None:
                what = f"seat {seat}'s bot {ident} is not in the registry: no code hash to check"
                self.unchecked.append(Discrepancy(self.result.match_id, what))
            elif bot.hash != identity.code_hash:
                self.differs(
                    f"seat {seat} ({ident}) played code hashing to "
                    f"{identity.code_hash[:12] or 'nothing'} in its log, but the registry's "
                    f"{ident} hashes to {bot.hash[:12]}"
                )

    def _seeds(self, log: MatchLogData) -> None:
        """The log was dealt from the schedule's seed, and its bots were given the seeds the
        league's secret gives them: what makes a league replayable is checked, not only that
        each log agrees with itself."""
        if self.match is None:
            return
        if log.result is not None and log.result.seed != self.match.seed:
            self.differs(
                f"its log was dealt from seed {log.result.seed}, the schedule's is "
                f"{self.match.seed}"
            )
        given = log.header.bot_seeds
        if given is None:
            if log.header.format >= FIRST_FORMAT_WITH_BOT_SEEDS:  # the runner always gives them
                self.differs("its log's header gives its bots no seeds")
            return  # a log from before bot seeds
        expected = league_bot_seeds(*self.context.secrets, self.match.match_id)
        if tuple(given) != expected:
            self.differs(
                f"its bots were given seeds {list(given)}, not the {list(expected)} the league's "
                "secret gives"
            )

    def _logged(self, summary: JsonObject, log: MatchLogData) -> None:
        """The summary says what the log's result record and hands say."""
        record = log.result
        assert record is not None
        for name, logged in _result_fields(record).items():
            if name not in summary:
                self.differs(f"its summary has no {name}")
            elif summary[name] != logged:
                self.differs(
                    f"{name} is {_json(summary[name])} in the store, {_json(logged)} in its log"
                )
        for name, logged in _optional_fields(log).items():  # absent in some older summaries
            if name in summary and summary[name] != logged:
                self.differs(
                    f"{name} is {_json(summary[name])} in the store, {_json(logged)} in its log"
                )
        self._faults(summary.get("faults"), record)
        self._hand_stats(summary.get("hand_stats"), log)

    def _faults(self, stored: object, record: ResultRecord) -> None:
        counts = _fault_counts(stored)
        logged = Counter((fault.kind.value, fault.seat) for fault in record.faults)
        if counts is None:
            self.differs("its summary's faults cannot be read")
        elif counts != logged:
            self.differs(
                f"faults are {_show_faults(counts)} in the store, {_show_faults(logged)} in its log"
            )

    def _hand_stats(self, stored: object, log: MatchLogData) -> None:
        counted = hand_stats(logged_hands(log))
        summed = read_hand_stats(stored)
        if summed is None:
            self.differs("its summary's hand statistics cannot be read")
        elif summed != counted:
            self.differs(
                "its hand statistics differ from those its log gives "
                f"(gin league restat {self.league} recounts them)"
            )

    def _columns(self, record: ResultRecord, *, readable: bool) -> None:
        """The results table's own winner and end columns (``readable``: the summary is a JSON
        object; a row that cannot be read is news only when nothing else was found)."""
        try:
            row = self.stored or self.store.result(self.result.match_id)
            if isinstance(row, StoreDamaged):
                raise row
        except StoreDamaged as error:
            if readable and not self.found:
                self.differs(str(error))
            return
        if row is None:
            return  # removed since it was listed: the next check sees it
        if row.winner != record.winner:
            self.differs(
                f"the results table's winner is {_json(row.winner)}, {_json(record.winner)} "
                "in its log"
            )
        if row.end.value != record.end:
            self.differs(f"the results table's end is {row.end.value!r}, {record.end!r} in its log")


def _summary(text: str) -> JsonObject | str:
    """A stored summary's JSON object, or why it is not one."""
    try:
        data = loads_json(text)
    except ValueError as error:  # TooComplex too
        return f"its summary is not JSON ({error})"
    if not isinstance(data, dict):
        return "its summary is not a JSON object"
    return data


def _result_fields(record: ResultRecord) -> dict[str, object]:
    """The log's result record in the summary's JSON form (``MatchSummary.to_dict``)."""
    return {
        "winner": record.winner,
        "end": record.end,
        "forfeited": list(record.forfeited),
        "totals": [list(seat) for seat in record.totals],
        "game_winners": list(record.game_winners),
        "hands": record.hands,
    }


def _optional_fields(log: MatchLogData) -> dict[str, object]:
    """What a summary may also say of its log, in the summary's JSON form: the seed, each
    seat's decision statistics and who said hello in each seat."""
    record = log.result
    assert record is not None
    return {
        "seed": record.seed,
        "stats": [stats.to_dict() for stats in record.stats],
        "hello": [
            None if seat is None else f"{seat.name}@{seat.version}" for seat in log.header.seats
        ],
    }


def _fault_counts(stored: object) -> Counter[tuple[str, int]] | None:
    """How many faults of each (kind, seat) a summary lists; None if they cannot be read."""
    if not isinstance(stored, list):
        return None
    counts: Counter[tuple[str, int]] = Counter()
    for fault in stored:
        if not isinstance(fault, dict):
            return None
        kind, seat = fault.get("kind"), fault.get("seat")
        if not isinstance(kind, str) or isinstance(seat, bool) or seat not in (0, 1):
            return None
        counts[kind, seat] += 1
    return counts


def _show_faults(counts: Counter[tuple[str, int]]) -> str:
    """Fault counts for a message.

    >>> _show_faults(Counter({("timeout", 0): 2, ("crash", 1): 1})), _show_faults(Counter())
    ('1 crash by seat 1, 2 timeout by seat 0', 'none')
    """
    shown: Iterable[str] = (
        f"{count} {kind} by seat {seat}" for (kind, seat), count in sorted(counts.items())
    )
    return ", ".join(shown) or "none"


def _json(value: object) -> str:
    """A stored value as JSON (as the store holds it)."""
    return json.dumps(value, default=repr)
