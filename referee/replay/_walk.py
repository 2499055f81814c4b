"""Re-playing a log through the rules engine, record by record, checking each as it goes.

The walk keeps the full state the referee had (the hand, the score sheet, strikes, time banks)
and checks every record against it. It keeps the books with the match's own code
(:mod:`referee.bookkeeping`; :mod:`referee.rules.series` for entering a hand, the next dealer
and the series' end), so each rule of timing, counting and a series' end exists once. The first
record that disagrees stops the walk with a :class:`Disagreement` that names it. Along the way
it can collect the replay's steps.

Where a hand's deck comes from: the hand's own ``hand_end`` record (the deck is revealed there),
or, for a hand that never ended (a forfeit), the seed in the ``result`` record. Either way it is
checked against the hand's commitment *before* the hand's actions are replayed, since actions can
only be judged with a deck that is known to be the one dealt; a mismatch names the record that
revealed the deck. When the seed is known (the log has its result) every deck is also checked
against the deck the seed deals to the hand's dealer, under the dealing rule of the log's format
(:func:`referee.matchlog.log_dealing`: by dealer up to format 2, by seat from format 3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from referee.bookkeeping import SeatBook, SeatStats, SeatTally, match_verdict, too_slow
from referee.faults import Fault, FaultKind
from referee.match import safe_action
from referee.matchlog import hand_salt, log_dealing, seed_commitment
from referee.replay._records import (
    ActionRecord,
    BodyRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    Header,
    MatchLogData,
    Request,
    ResultRecord,
    record_type,
)
from referee.replay._views import Step, StepKind, Table, all_tables
from referee.rules import (
    Card,
    HandState,
    HollywoodScore,
    IllegalActionError,
    SeriesEnd,
    dealt_deck,
    deck_commitment,
    enter_hand,
    first_dealer,
    next_dealer,
    series_end,
)

TIME_TOLERANCE_MS = 0.5
"""Slack for times that the log rounds to the microsecond before they are summed again."""

SUBSTITUTE = ActionRecord.SUBSTITUTE
FORCED = ActionRecord.FORCED
BOT = ActionRecord.BOT


class Disagreement(Exception):  # noqa: N818 - it names what it is, like trio's errors
    """A record disagrees with the rules or with the records before it."""

    def __init__(self, record: Header | BodyRecord, reason: str) -> None:
        super().__init__(reason)
        self.line = record.line
        self.record_type = record_type(record)
        self.reason = reason


class WalkSource(Protocol):
    """What a walk reads: a log in memory (:class:`LoadedLog`) or a file read as a stream."""

    @property
    def header(self) -> Header: ...

    @property
    def result(self) -> ResultRecord | None:
        """The log's result record (the last readable one), known before the walk begins."""

    def records(self) -> Iterable[BodyRecord]:
        """The records after the header, up to the first that cannot be read."""

    def revealed(self, hand: int) -> HandEndRecord | None:
        """The ``hand_end`` record of ``hand``, asked when its ``hand_start`` is walked."""


class LoadedLog:
    """A log read whole (:class:`MatchLogData`) as a walk's source."""

    def __init__(self, log: MatchLogData) -> None:
        self.log = log
        self.header = log.header
        self.result = log.result
        self._revealed = {
            record.hand: record for record in log.records if isinstance(record, HandEndRecord)
        }

    def records(self) -> Iterable[BodyRecord]:
        return self.log.records

    def revealed(self, hand: int) -> HandEndRecord | None:
        return self._revealed.get(hand)


class Walk:
    """One pass over a log; :meth:`run` raises :class:`Disagreement` at the first bad record.

    It holds the state of one hand and counters, never the log's records: what it keeps does
    not grow with the log (a streamed log is checked in bounded memory).
    """

    def __init__(self, log: WalkSource, on_step: Callable[[Step], None] | None = None) -> None:
        self.log = log
        self.header = log.header
        self.params = log.header.params
        self.on_step = on_step
        self.score = HollywoodScore(self.params)
        self.hand: HandState | None = None
        self.hand_number = -1
        self.blind: HandStart | None = None
        """A hand in progress whose deck was never revealed: its records cannot be checked."""
        self.blind_records = 0
        self.dealer = log.header.first_dealer
        self.finished = 0
        self.series_end: SeriesEnd | None = None
        self.request: Request | None = None
        self.request_fault: FaultRecord | None = None
        self.next_request = 1
        control = log.header.time_control
        self.books = (SeatBook.start(control), SeatBook.start(control))
        """Each seat's clock and tally, kept as the match keeps them."""
        self.forfeited: list[int] = []
        self.fault_count = 0
        self.faults_agree = True
        """Whether each fault so far is the one the result lists at its place."""
        self.result: ResultRecord | None = None
        self.actions_checked = 0
        self.steps = 0
        self.last_tables: tuple[Table, Table, Table] | None = None
        self.seed = self._trusted_seed()
        self.dealing = log_dealing(log.header.format)

    # --- the seed and the decks ------------------------------------------------------------

    def _trusted_seed(self) -> int | None:
        result = self.log.result
        if result is None or not self._commits_to(result):
            return None
        return result.seed

    def _commits_to(self, result: ResultRecord) -> bool:
        """Whether the result's seed (and salt, from format 2) is the header's commitment."""
        if self.header.format >= 2 and result.salt is None:
            return False
        return seed_commitment(result.seed, result.salt) == self.header.seed_commitment

    def _hand_salt(self, hand: int, source: BodyRecord) -> bytes | None:
        """The salt of ``hand``'s deck commitment, as revealed by ``source`` (format 1: none).

        Raises:
            Disagreement: a format-2 record reveals no salt, or one the match salt disagrees with.
        """
        if self.header.format < 2:
            return None
        result = self.log.result
        expected = None if result is None or result.salt is None else hand_salt(result.salt, hand)
        revealed = source.salt if isinstance(source, HandEndRecord) else expected
        if revealed is None:
            raise Disagreement(
                source, f"the salt of hand {hand + 1}'s deck commitment is not revealed"
            )
        if expected is not None and revealed != expected:
            raise Disagreement(
                source, f"the salt revealed for hand {hand + 1} is not the one the match salt gives"
            )
        return revealed

    def _deck(self, hand: int, dealer: int) -> tuple[tuple[Card, ...], BodyRecord] | None:
        """The deck of ``hand`` (dealt by ``dealer``) and the record that revealed it, if any."""
        revealed = self.log.revealed(hand)
        if revealed is not None:
            return revealed.deck, revealed
        result = self.log.result
        if result is None:
            return None
        if self.seed is None:
            raise Disagreement(
                result, f"the seed {result.seed} does not match the header's seed commitment"
            )
        return dealt_deck(self.seed, hand, dealer, self.dealing), result

    # --- the walk --------------------------------------------------------------------------

    def run(self) -> None:
        """Check the header and every record in order.

        Raises:
            Disagreement: at the first record that disagrees.
        """
        self._check_header()
        for record in self.log.records():
            if self.result is not None:
                raise Disagreement(record, "a record after the result, which must be the last")
            if self.blind is not None:
                self.blind_records += 1
                continue
            self._check(record)

    def _check(self, record: BodyRecord) -> None:
        if isinstance(record, HandStart):
            self._hand_start(record)
        elif isinstance(record, Request):
            self._request(record)
        elif isinstance(record, ActionRecord):
            self._action(record)
        elif isinstance(record, FaultRecord):
            self._fault(record)
        elif isinstance(record, HandEndRecord):
            self._hand_end(record)
        else:
            self._result(record)

    def _check_header(self) -> None:
        header = self.header
        if self.seed is not None and first_dealer(self.seed) != header.first_dealer:
            raise Disagreement(
                header,
                f"the first dealer is seat {header.first_dealer}, but the seed (revealed in the "
                f"result) makes seat {first_dealer(self.seed)} deal first",
            )

    def _emit(
        self,
        record: BodyRecord,
        kind: StepKind,
        *,
        seat: int | None = None,
        ms: float | None = None,
        card: Card | None = None,
        games: tuple[int, ...] = (),
    ) -> None:
        if self.on_step is None:
            return
        if self.hand is not None:
            totals = (self.score.totals(0), self.score.totals(1))
            self.last_tables = all_tables(
                self.hand,
                hand_number=self.hand_number,
                totals=totals,
                game_winners=self.score.game_winners,
                games=games,
            )
        step = Step(
            self.steps,
            record.line,
            kind,
            self.hand_number,
            seat,
            record,
            self.last_tables,
            ms,
            card,
        )
        self.steps += 1
        self.on_step(step)

    # --- hand start ------------------------------------------------------------------------

    def _hand_start(self, record: HandStart) -> None:
        self._expect_between_hands(record)
        if record.hand != self.hand_number + 1:
            raise Disagreement(
                record,
                f"hand {record.hand + 1} follows hand {self.hand_number + 1}: hands go in order",
            )
        if record.dealer != self.dealer:
            raise Disagreement(
                record,
                f"seat {record.dealer} deals, but the rules give seat {self.dealer} "
                "(the winner of a hand deals the next; after a draw the same dealer deals)",
            )
        self.hand_number = record.hand
        found = self._deck(record.hand, record.dealer)
        if found is None:
            self.blind = record
            return
        deck, source = found
        self._check_deck(record, deck, source)
        self.hand = HandState(deck, record.dealer, self.params)
        self._emit(record, StepKind.DEAL, card=self.hand.discard_pile[-1])

    def _expect_between_hands(self, record: BodyRecord) -> None:
        if self.forfeited:
            raise Disagreement(record, "the series was forfeited: only the result may follow")
        if self.hand is not None:
            raise Disagreement(record, f"hand {self.hand_number + 1} has not ended")
        if self.series_end is not None:
            raise Disagreement(
                record, f"the series has ended ({self.series_end.value}): the result must follow"
            )

    def _check_deck(self, record: HandStart, deck: tuple[Card, ...], source: BodyRecord) -> None:
        if deck_commitment(deck, self._hand_salt(record.hand, source)) != record.commitment:
            raise Disagreement(
                source,
                f"the deck revealed for hand {record.hand + 1} does not match its commitment "
                f"(line {record.line})",
            )
        if self.seed is not None and deck != dealt_deck(
            self.seed, record.hand, record.dealer, self.dealing
        ):
            raise Disagreement(
                source,
                f"the deck revealed for hand {record.hand + 1} is not the one the seed deals "
                f"(format {self.header.format} deals {self.dealing.value.replace('_', ' ')})",
            )

    # --- requests, actions, faults ---------------------------------------------------------

    def _live_hand(self, record: BodyRecord) -> HandState:
        if self.forfeited:
            raise Disagreement(record, "the series was forfeited: only the result may follow")
        if self.hand is None:
            raise Disagreement(record, "no hand is being played")
        if self.hand.is_over:
            raise Disagreement(
                record, f"hand {self.hand_number + 1} is over: its end record is due"
            )
        return self.hand

    def _request(self, record: Request) -> None:
        hand = self._live_hand(record)
        if self.request is not None:
            raise Disagreement(record, f"request {self.request.id} (line "
                               f"{self.request.line}) was never answered")  # fmt: skip
        if record.id != self.next_request:
            raise Disagreement(
                record, f"request id {record.id}; the next id is {self.next_request}"
            )
        legal = hand.legal_actions()
        expected = {
            "seat": (record.seat, hand.to_move),
            "phase": (record.phase, hand.phase.value),
            "legal": (record.legal, len(legal)),
        }
        for name, (got, want) in expected.items():
            if got != want:
                raise Disagreement(record, f"{name} is {got!r}, but the rules give {want!r}")
        if len(legal) == 1:
            raise Disagreement(record, "a decision with one legal action is never asked")
        limit = self.books[record.seat].clock.limit_ms()
        if abs(record.limit_ms - limit) > TIME_TOLERANCE_MS:
            raise Disagreement(
                record,
                f"limit_ms is {record.limit_ms:g}, but the time control and seat {record.seat}'s "
                f"time bank give {limit:g}",
            )
        self.request = record
        self.request_fault = None
        self.next_request += 1

    def _action(self, record: ActionRecord) -> None:
        hand = self._live_hand(record)
        if record.seat != hand.to_move:
            raise Disagreement(
                record, f"seat {record.seat} acts, but seat {hand.to_move} is to move"
            )
        self._check_chooser(record, hand)
        try:
            hand.verify(record.action)
        except IllegalActionError as error:
            raise Disagreement(
                record, f"seat {record.seat}'s action '{record.action}' is not legal: {error}"
            ) from None
        if record.by != FORCED:
            self.books[record.seat].decided(record.ms)
        event = hand.apply(record.action)
        self.request = None
        self.actions_checked += 1
        ms = None if record.by == FORCED else record.ms
        self._emit(record, StepKind.ACTION, seat=record.seat, ms=ms, card=event.card)

    def _check_chooser(self, record: ActionRecord, hand: HandState) -> None:
        """Check who chose the action against the request and fault records before it."""
        pending = self.request
        if record.by == FORCED:
            legal = hand.legal_actions()
            if pending is not None or record.request != 0 or len(legal) != 1:
                raise Disagreement(
                    record, "marked forced, but the seat had a choice (or a request)"
                )
            return
        if record.by not in (BOT, SUBSTITUTE):
            raise Disagreement(record, f"unknown chooser by={record.by!r}")
        if pending is None or record.request != pending.id:
            raise Disagreement(record, f"answers request {record.request}, which is not pending")
        fault = self.request_fault
        if record.by == BOT:
            if fault is not None:
                raise Disagreement(record, f"the bot's answer was a fault (line {fault.line})")
            if too_slow(record.ms, pending.limit_ms, TIME_TOLERANCE_MS):
                raise Disagreement(
                    record, f"took {record.ms:g} ms, over the limit of {pending.limit_ms:g} ms"
                )
            return
        if fault is None:
            raise Disagreement(record, "the referee played for a seat that made no fault")
        substitute = safe_action(hand)
        if record.action != substitute:
            raise Disagreement(
                record, f"the referee's substitute is '{substitute}', not '{record.action}'"
            )

    def _fault(self, record: FaultRecord) -> None:
        try:
            kind = FaultKind(record.kind)
        except ValueError:
            raise Disagreement(record, f"unknown fault kind {record.kind!r}") from None
        if self.hand is None and self.hand_number < 0:
            self._startup_fault(record, kind)
        else:
            self._decision_fault(record)
        book = self.books[record.seat]
        forfeits = book.tally.struck(kind, self.header.fault_policy)
        strikes = book.tally.strikes
        if record.strikes != strikes or record.forfeited != forfeits:
            raise Disagreement(
                record,
                f"strikes={record.strikes}, forfeited={str(record.forfeited).lower()}; the fault "
                f"policy gives strikes={strikes}, forfeited={str(forfeits).lower()}",
            )
        self._compare_fault(record)
        if forfeits:
            self.forfeited.append(record.seat)
            if self.request is not None:  # the match charges a decision that ends in a forfeit
                book.decided(record.elapsed_ms)
        self._emit(record, StepKind.FAULT, seat=record.seat)

    def _startup_fault(self, record: FaultRecord, kind: FaultKind) -> None:
        if kind is not FaultKind.STARTUP_FAILURE or record.request_id != 0:
            raise Disagreement(record, "before the first hand only a start-up failure can happen")
        if record.seat in self.forfeited:
            raise Disagreement(record, f"seat {record.seat} already failed to start")

    def _decision_fault(self, record: FaultRecord) -> None:
        self._live_hand(record)
        pending = self.request
        if pending is None or pending.id != record.request_id or pending.seat != record.seat:
            raise Disagreement(
                record, f"a fault on request {record.request_id} by seat {record.seat}, which is "
                "not the pending request",
            )  # fmt: skip
        if self.request_fault is not None:
            raise Disagreement(record, f"request {pending.id} already has a fault")
        timeout = record.kind == FaultKind.TIMEOUT.value and not record.stray
        if timeout and not too_slow(record.elapsed_ms, pending.limit_ms - 2 * TIME_TOLERANCE_MS):
            raise Disagreement(
                record, f"a timeout after {record.elapsed_ms} ms, within the limit of "
                f"{pending.limit_ms} ms",
            )  # fmt: skip
        if not record.stray:  # a stray fault leaves the request open for the seat's answer
            self.request_fault = record

    # --- hand end --------------------------------------------------------------------------

    def _hand_end(self, record: HandEndRecord) -> None:
        hand = self.hand
        if hand is None or self.forfeited:
            raise Disagreement(record, "no hand is being played")
        outcome = hand.outcome
        if outcome is None:
            raise Disagreement(record, f"hand {self.hand_number + 1} has not ended by the rules")
        games = enter_hand(self.score, outcome)
        totals = (self.score.totals(0), self.score.totals(1))
        expected = {
            "hand": (record.hand, self.hand_number),
            "end": (record.end, outcome.end.value),
            "winner": (record.winner, outcome.winner),
            "points": (record.points, outcome.points),
            "knocker": (record.knocker, outcome.knocker),
            "games": (record.games, games),
            "knocker_layout": (record.knocker_layout, _text(outcome.knocker_layout)),
            "defender_layout": (record.defender_layout, _text(outcome.defender_layout)),
            "totals": (record.totals, totals),
            "turns": (record.turns, outcome.turns),
        }
        for name, (got, want) in expected.items():
            if got != want:
                raise Disagreement(
                    record, f"{name} is {_show(got)}, but the rules give {_show(want)}"
                )
        self.finished += 1
        self.dealer = next_dealer(hand.dealer, outcome)
        self.series_end = series_end(self.score, self.finished)
        self._emit(record, StepKind.SHOWDOWN, seat=outcome.winner, games=games)
        self.hand = None

    # --- result ----------------------------------------------------------------------------

    def _result(self, record: ResultRecord) -> None:
        if not self._commits_to(record):
            raise Disagreement(
                record, f"the seed {record.seed} does not match the header's seed commitment"
            )
        if self.request is not None and not self.forfeited:
            raise Disagreement(record, f"request {self.request.id} was never answered")
        winner, end = self._expected_end(record)
        totals = (self.score.totals(0), self.score.totals(1))
        expected = {
            "match_id": (record.match_id, self.header.match_id),
            "end": (record.end, end),
            "winner": (record.winner, winner),
            "forfeited": (record.forfeited, tuple(sorted(self.forfeited))),
            "totals": (record.totals, totals),
            "game_winners": (record.game_winners, self.score.game_winners),
            "hands": (record.hands, self.finished),
        }
        for name, (got, want) in expected.items():
            if got != want:
                raise Disagreement(
                    record, f"{name} is {_show(got)}, but the log gives {_show(want)}"
                )
        if record.unreadable is not None:
            raise Disagreement(record, record.unreadable)
        self._check_faults(record)
        self._check_stats(record)
        self.result = record
        self._emit(record, StepKind.RESULT, seat=record.winner)

    def _expected_end(self, record: ResultRecord) -> tuple[int | None, str]:
        if not self.forfeited and self.series_end is None:
            raise Disagreement(record, "the result comes before the series has ended")
        verdict = match_verdict(self.forfeited, self.series_end, self.score.winner)
        return verdict.winner, verdict.end.value

    def _compare_fault(self, record: FaultRecord) -> None:
        """Compare a fault with the one the result lists at its place, as it is walked (the
        faults are not kept: a log may hold any number)."""
        result = self.log.result
        listed = result.faults if result is not None else ()
        index = self.fault_count
        self.fault_count += 1
        fault = Fault(
            record.seat,
            FaultKind(record.kind),
            record.detail,
            record.request_id,
            record.elapsed_ms,
            record.evidence,
            record.stray,
        )
        if index >= len(listed) or listed[index] != fault:
            self.faults_agree = False

    def _check_faults(self, record: ResultRecord) -> None:
        last = self.log.result
        if last is not None and last.line != record.line:
            return  # not the last result: the walk stops at the record after it, whatever
        if not self.faults_agree or len(record.faults) != self.fault_count:
            raise Disagreement(
                record, f"faults list {len(record.faults)}, the log records {self.fault_count} "
                "that differ from them",
            )  # fmt: skip

    def _check_stats(self, record: ResultRecord) -> None:
        if len(record.stats) != 2:
            raise Disagreement(record, "stats must hold both seats")
        for seat, (stats, book) in enumerate(zip(record.stats, self.books, strict=True)):
            _check_seat_stats(record, seat, stats, book.tally)


def _check_seat_stats(record: ResultRecord, seat: int, got: SeatStats, tally: SeatTally) -> None:
    """Check one seat's statistics against the books: counts exactly, times within rounding
    of the exact figures.

    Raises:
        Disagreement: a figure differs.
    """
    want = tally.frozen()
    exact = {
        "decisions": (got.decisions, want.decisions),
        "strikes": (got.strikes, want.strikes),
        "faults": (dict(got.faults), dict(want.faults)),
    }
    for name, (value, wanted) in exact.items():
        if value != wanted:
            raise Disagreement(
                record, f"seat {seat}'s {name} is {value!r}, the log gives {wanted!r}"
            )
    for name, value_ms, wanted_ms in (
        ("mean_ms", got.mean_ms, tally.mean_ms),
        ("max_ms", got.max_ms, tally.max_ms),
    ):
        if abs(value_ms - wanted_ms) > TIME_TOLERANCE_MS:
            raise Disagreement(
                record, f"seat {seat}'s {name} is {value_ms!r}, the log gives {wanted_ms:.3f}"
            )


def _text(layout: object | None) -> str | None:
    return None if layout is None else str(layout)


def _show(value: object) -> str:
    """A value in a message: tuples as lists and cards in notation, like the log writes them.

    >>> _show(((1, 2), (3,))), _show(None), _show("gin")
    ('[[1, 2], [3]]', 'null', "'gin'")
    """
    if value is None:
        return "null"
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    return repr(value)
