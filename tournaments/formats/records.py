"""What a league's runner, its executors and its workers hand each other, as frozen records.

The runner makes a :class:`MatchJob`; an executor plays it (a ``python -m
tournaments.executors.worker`` process reads :meth:`MatchJob.to_json` on stdin, here or on a
cluster's worker) and gives back a :class:`MatchOutcome` (its :class:`MatchSummary`, the part the
store keeps) or a :class:`WorkerFailure` when no result came back. Each record has one writer and
one reader of its serialised form, here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from protocol.bounded import JsonObject, JsonValue
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.match import MatchEnd, MatchResult, SeatStats
from referee.records import ResultRecord
from referee.rules import RuleParams
from referee.sandbox import SandboxLimits
from tournaments.formats.hands import HandStats, hand_stats

__all__ = ["MatchJob", "MatchOutcome", "MatchSummary", "WorkerFailure"]


Totals = tuple[tuple[int, ...], tuple[int, ...]]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One match to play: its deal, its bots' folders and registry hashes, where to log it."""

    match_id: str
    seed: int
    bots: tuple[str, str]
    """The bots' code folders, seat 0 first."""
    hashes: tuple[str, str]
    """The bots' registry hashes: the worker refuses a folder that no longer hashes so."""
    rules: RuleParams
    time_control: TimeControl
    fault_policy: FaultPolicy
    log: str
    strict: bool = False
    """Refuse to play without every sandbox layer."""
    parent: int = 0
    """The runner's process id: the worker stops its match once that process is gone."""
    limits: SandboxLimits = dataclasses.field(default_factory=SandboxLimits)
    bot_seeds: tuple[int, int] = (0, 0)
    """Each seat's own seed, sent in its Welcome (``tournaments.formats.seeds``); 0: none given (a
    job written before bots had seeds)."""
    sitting: str = ""
    """The sitting this series belongs to (``""``: none): a worker may play the series of one
    sitting, sent one after another, on the same bot processes (those whose hello says they can
    play on). The runner never puts both legs of a duplicate pair in one sitting."""
    sitting_ends: bool = True
    """Whether this is the sitting's last series: its bots are closed after it."""

    def to_json(self) -> str:
        """The job as the worker reads it on stdin."""
        return json.dumps(
            {
                "match_id": self.match_id,
                "seed": self.seed,
                "bots": list(self.bots),
                "hashes": list(self.hashes),
                "rules": self.rules.to_dict(),
                "time_control": self.time_control.to_dict(),
                "fault_policy": self.fault_policy.to_dict(),
                "log": self.log,
                "strict": self.strict,
                "parent": self.parent,
                "limits": dataclasses.asdict(self.limits),
                "bot_seeds": list(self.bot_seeds),
                "sitting": self.sitting,
                "sitting_ends": self.sitting_ends,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> MatchJob:
        """Read :meth:`to_json`'s form.

        Raises:
            KeyError, TypeError, ValueError: not that form.
        """
        data = _object(json.loads(text))
        return cls(
            str(data["match_id"]),
            int(data["seed"]),
            _pair(data["bots"]),
            _pair(data["hashes"]),
            RuleParams.from_dict(_object(data["rules"])),
            TimeControl(**_object(data["time_control"])),
            FaultPolicy(**_object(data["fault_policy"])),
            str(data["log"]),
            bool(data.get("strict", False)),
            int(data["parent"]),
            SandboxLimits(**_object(data.get("limits", {}))),
            _seeds(data.get("bot_seeds", [0, 0])),
            str(data.get("sitting", "")),
            data.get("sitting_ends", True) is not False,
        )


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """What the store keeps of a played match: the log's result record, both seats' hand
    statistics, and who said hello in each seat."""

    result: ResultRecord
    """The match's result record, as the log holds it but for the match salt (the store keeps
    no secret of the commitments; ``salt`` is ``None``)."""
    hand_stats: tuple[HandStats, HandStats]
    hello: tuple[str | None, str | None] = (None, None)
    """Each seat's ``name@version`` as its hello gave it (``None``: it never said hello)."""
    log: str = ""
    executed_on: str | None = None
    """The cluster worker that played it (``None``: played on this machine)."""

    @classmethod
    def of(cls, result: MatchResult, log_path: Path) -> MatchSummary:
        """A finished match's summary (its hand statistics counted from its hands)."""
        hello = tuple(None if i is None else f"{i.name}@{i.version}" for i in result.identities)
        return cls(
            dataclasses.replace(result.record, salt=None),
            hand_stats(record.outcome for record in result.hand_records),
            (hello[0], hello[1]),
            str(log_path),
        )

    @property
    def match_id(self) -> str:
        return self.result.match_id

    @property
    def seed(self) -> int:
        return self.result.seed

    @property
    def winner(self) -> int | None:
        return self.result.winner

    @property
    def end(self) -> MatchEnd:
        return _ENDS[self.result.end]

    @property
    def forfeited(self) -> tuple[int, ...]:
        return self.result.forfeited

    @property
    def totals(self) -> Totals:
        return self.result.totals

    @property
    def game_winners(self) -> tuple[int | None, ...]:
        return self.result.game_winners

    @property
    def hands(self) -> int:
        return self.result.hands

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self.result.faults

    @property
    def stats(self) -> tuple[SeatStats, SeatStats]:
        first, second = self.result.stats
        return first, second

    def to_dict(self) -> JsonObject:
        """JSON-ready form (the ``summary`` column of the store's results)."""
        result = self.result
        data: JsonObject = {
            "match_id": result.match_id,
            "seed": result.seed,
            "winner": result.winner,
            "end": result.end,
            "forfeited": list(result.forfeited),
            "totals": [list(seat) for seat in result.totals],
            "game_winners": list(result.game_winners),
            "hands": result.hands,
            "faults": [fault.to_dict() for fault in result.faults],
            "stats": [stats.to_dict() for stats in result.stats],
            "hand_stats": [stats.to_dict() for stats in self.hand_stats],
            "hello": list(self.hello),
            "log": self.log,
        }
        if self.executed_on is not None:
            data["executed_on"] = self.executed_on
        return data

    @classmethod
    def from_dict(cls, data: JsonObject) -> MatchSummary:
        """Read :meth:`to_dict`'s form, or a summary stored before these records (hand
        statistics holding only the counts that were not 0; the fields a hand-made summary may
        lack read as nothing).

        Raises:
            KeyError, TypeError, ValueError: not a summary.
        """
        try:
            fast = _usual_summary(data)
        except Exception:  # read again the long way, which raises what it raises
            fast = None
        return fast if fast is not None else cls._read(data)

    @classmethod
    def _read(cls, data: JsonObject) -> MatchSummary:
        """:meth:`from_dict` the long way: any form it reads, and its errors."""
        totals = [tuple(int(points) for points in seat) for seat in data.get("totals", [(), ()])]
        hello = [None if name is None else str(name) for name in data.get("hello", [None, None])]
        result = ResultRecord(  # no line, no salt: a stored summary keeps neither
            line=0,
            match_id=str(data.get("match_id", "")),
            seed=int(data.get("seed", 0)),
            winner=_seat(data["winner"]),
            end=MatchEnd(data["end"]).value,
            forfeited=tuple(int(seat) for seat in data.get("forfeited", ())),
            totals=(totals[0], totals[1]),
            game_winners=tuple(_seat(winner) for winner in data["game_winners"]),
            hands=int(data.get("hands", 0)),
            faults=tuple(_fault(_object(fault)) for fault in data["faults"]),
            stats=_pair_of(_seat_stats, data["stats"]),
        )
        return cls(
            result,
            _pair_of(HandStats.from_dict, data["hand_stats"]),
            (hello[0], hello[1]),
            str(data.get("log", "")),
            None if data.get("executed_on") is None else str(data["executed_on"]),
        )


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """A played match, as its worker reports it: the summary and why the match ended."""

    summary: MatchSummary
    reason: str

    def to_json(self) -> str:
        """The worker's last line on stdout."""
        return json.dumps({"summary": self.summary.to_dict(), "reason": self.reason})

    @classmethod
    def from_json(cls, text: str) -> MatchOutcome:
        """Read :meth:`to_json`'s form.

        Raises:
            KeyError, TypeError, ValueError: not that form (a worker that was interrupted, say).
        """
        data = _object(json.loads(text))
        return cls(MatchSummary.from_dict(_object(data["summary"])), str(data["reason"]))


@dataclass(frozen=True, slots=True)
class WorkerFailure:
    """No result came back (not a bot's fault: that is a result), and what went wrong. The
    runner tries the match again, then marks it failed with this message."""

    message: str

    def __str__(self) -> str:
        return self.message


_ENDS: Final = {end.value: end for end in MatchEnd}
_NO_FAULTS: Final = ()


def _usual_summary(data: JsonObject) -> MatchSummary | None:
    """A summary in the form :meth:`MatchSummary.to_dict` writes, read with the same conversions
    as :meth:`MatchSummary.from_dict` but none of its generic steps (a league's standings read
    100,000); ``None`` (or an error) for any other form, which ``from_dict`` then reads the long
    way, so that what it gives and raises is the same either way."""
    if type(data) is not dict:
        return None
    get = data.get
    match_id, winner, end = get("match_id", ""), data["winner"], data["end"]
    log, executed_on = get("log", ""), get("executed_on")
    totals, hello, stats = get("totals"), get("hello"), data["stats"]
    faults, hands = data["faults"], data["hand_stats"]
    if (
        type(match_id) is not str
        or type(log) is not str
        or type(end) is not str
        or not (winner is None or type(winner) is int)
        or not (executed_on is None or type(executed_on) is str)
        or type(totals) is not list
        or len(totals) != 2
        or type(hello) is not list
        or len(hello) != 2
        or not all(name is None or type(name) is str for name in hello)
        or type(stats) is not list
        or len(stats) != 2
        or type(hands) is not list
        or len(hands) != 2
        or type(faults) is not list
    ):
        return None
    game_winners = data["game_winners"]
    if type(game_winners) is not list or None in game_winners:
        return None
    first, second = stats
    mine, theirs = hands
    if type(first) is not dict or type(second) is not dict:
        return None
    if type(mine) is not dict or type(theirs) is not dict:
        return None
    result = ResultRecord(
        line=0,
        match_id=match_id,
        seed=int(get("seed", 0)),
        winner=winner,
        end=_ENDS[end].value,
        forfeited=tuple(map(int, get("forfeited", ()))),
        totals=(tuple(map(int, totals[0])), tuple(map(int, totals[1]))),
        game_winners=tuple(map(int, game_winners)),
        hands=int(get("hands", 0)),
        faults=tuple(_fault(_object(fault)) for fault in faults) if faults else _NO_FAULTS,
        stats=(_usual_seat_stats(first), _usual_seat_stats(second)),
    )
    return MatchSummary(
        result,
        (HandStats.from_dict(mine), HandStats.from_dict(theirs)),
        (hello[0], hello[1]),
        log,
        executed_on,
    )


def _usual_seat_stats(data: JsonObject) -> SeatStats:
    """:func:`_seat_stats` without its copy of ``data`` (the same conversions)."""
    faults = data.get("faults") or {}
    if not isinstance(faults, dict):
        raise TypeError("faults is not an object")
    return SeatStats(
        int(data["decisions"]),
        float(data["mean_ms"]),
        float(data["max_ms"]),
        int(data.get("strikes", 0)),
        tuple((str(kind), int(count)) for kind, count in faults.items()) if faults else (),
    )


def _object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, not {type(value).__name__}")
    return value


def _pair(value: JsonValue) -> tuple[str, str]:
    first, second = (str(item) for item in value)
    return first, second


def _seeds(value: JsonValue) -> tuple[int, int]:
    """Two bot seeds: a list of two whole numbers that fit the Welcome's ``uint64``."""
    if not (
        isinstance(value, list)
        and len(value) == 2
        and all(type(item) is int and 0 <= item < 1 << 64 for item in value)
    ):
        raise ValueError(f"bot seeds must be two whole numbers from 0 to 2**64 - 1, not {value!r}")
    return value[0], value[1]


def _pair_of(read: Callable[[JsonObject], T], value: JsonValue) -> tuple[T, T]:
    first, second = (read(_object(item)) for item in value)
    return first, second


def _seat(value: JsonValue) -> int | None:
    return None if value is None else int(value)


def _seat_stats(data: JsonObject) -> SeatStats:
    return SeatStats.from_dict({"strikes": 0, **data})  # strikes: not in hand-made summaries


def _fault(data: JsonObject) -> Fault:
    return Fault(
        int(data["seat"]),
        FaultKind(data["kind"]),
        str(data["detail"]),
        int(data.get("request_id", 0)),
        float(data.get("elapsed_ms", 0.0)),
        _object(data.get("evidence", {})),
        bool(data.get("stray", False)),
    )
