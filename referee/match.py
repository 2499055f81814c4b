"""One match: a whole Hollywood series between two seats. The only place rules and seats meet.

The referee holds the full state; each seat gets only its observation. Every answer is checked
against the rules before anything is applied; a fault is recorded with its evidence, and the
fault policy decides between a strike (the referee plays a safe legal action instead) and a
forfeit. A fault beside a decision (a duplicate of an answer given already) is a strike of its
own and the decision goes on. Every step goes to the match log as it happens.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager as AsyncContextManager
from dataclasses import dataclass, field

import trio

from referee.bookkeeping import MatchEnd as MatchEnd  # noqa: PLC0414 - re-exported
from referee.bookkeeping import SeatBook, match_verdict, too_slow
from referee.bookkeeping import SeatStats as SeatStats  # noqa: PLC0414 - re-exported
from referee.control import FaultPolicy, TimeControl
from referee.faults import BotFault, BotTimeout, Fault, FaultKind, IllegalAction, StartupFailure
from referee.matchlog import (
    LOG_FORMAT,
    SALT_BYTES,
    LogWriter,
    NullLog,
    action_to_dict,
    hand_salt,
    log_dealing,
    seed_commitment,
)
from referee.records import (
    ActionRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    Header,
    LogRecord,
    Request,
    ResultRecord,
    SeatIdentity,
)
from referee.rules import (
    DISCARDS,
    DRAW_STOCK,
    PASS_UPCARD,
    Action,
    Card,
    DrawStock,
    Event,
    HandRecord,
    HandState,
    IllegalActionError,
    Phase,
    PublicEvent,
    RuleParams,
    SeriesResult,
    SeriesState,
    best_throw,
    deck_commitment,
    observation,
)
from referee.seats import (
    BotIdentity,
    Decision,
    FaultNoticed,
    HandEnded,
    HandStarted,
    OpponentActed,
    Seat,
    SeriesEnded,
    Welcome,
)

FORFEIT = MatchEnd.FORFEIT.value
"""A forfeit, as the log writes it."""
CLOSE_TIMEOUT_S = 5.0
CloseLater = Callable[[Callable[[], Awaitable[None]]], None]
"""Takes a finished match's close (see :func:`play_match`) to run it later."""
LOG_STALL_S = 0.001
"""Log writing after a request is out that takes longer than this (a stalled disk) is not counted
as the bot's time; shorter writes (tens of µs) are left in it, well within the grace, so that the
decision times stay true round trips."""


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """Everything that defines a match besides its seats."""

    match_id: str
    seed: int
    """The deal seed: the referee's secret until the series is over (leagues and ``gin play``
    derive it with a keyed hash: see ``tournaments.league``)."""
    params: RuleParams = field(default_factory=RuleParams)
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    sandbox: tuple[str, ...] = ()
    """The sandbox layers in force, for the log."""
    cpus: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    """The CPU placement in force, for the log: the referee's CPUs and the bots' (see
    ``referee.sandbox.CpuPlacement``); ``None``: no placement."""
    salt: bytes = field(default_factory=lambda: secrets.token_bytes(SALT_BYTES), repr=False)
    """Salts the seed and deck commitments; revealed in the result record only."""
    bot_seeds: tuple[int, int] | None = None
    """Each seat's own seed for its random choices, sent in its Welcome and written in the log's
    header (leagues and ``gin play`` derive them apart from the deal:
    ``tournaments.formats.seeds``); ``None``: none given (the Welcome says 0)."""


@dataclass(slots=True)
class _Answer:
    """The action played for a decision, and who chose it."""

    request_id: int
    action: Action
    elapsed_ms: float
    by: str
    """``bot``; ``referee`` (a safe action after a fault); ``forced`` (the only legal one)."""


@dataclass(slots=True)
class _Asking:
    """The decision in progress: whose, which request, when it started, its limit."""

    seat: int
    request_id: int
    started: float
    limit_ms: float


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended: its result record (the log's last), with what the log does not keep
    (who said hello, the rules' own account of the series, its hands)."""

    record: ResultRecord
    """The result as the log's last record holds it (the match salt revealed)."""
    identities: tuple[BotIdentity | None, BotIdentity | None]
    series: SeriesResult | None
    hand_records: tuple[HandRecord, ...] = ()

    @property
    def match_id(self) -> str:
        return self.record.match_id

    @property
    def seed(self) -> int:
        return self.record.seed

    @property
    def winner(self) -> int | None:
        return self.record.winner

    @property
    def end(self) -> MatchEnd:
        return MatchEnd(self.record.end)

    @property
    def forfeited(self) -> tuple[int, ...]:
        return self.record.forfeited

    @property
    def totals(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self.record.totals

    @property
    def game_winners(self) -> tuple[int | None, ...]:
        return self.record.game_winners

    @property
    def hands(self) -> int:
        return self.record.hands

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self.record.faults

    @property
    def stats(self) -> tuple[SeatStats, SeatStats]:
        first, second = self.record.stats
        return first, second


def safe_action(state: SeriesState | HandState) -> Action:
    """The action the referee plays for a seat at fault: never a knock, always legal.

    Pass the upcard; draw from the stock; discard the card that leaves the least deadwood (the
    highest card, then the lowest card number, on ties).
    """
    hand = state.hand if isinstance(state, SeriesState) else state
    if hand.phase is Phase.UPCARD:
        return PASS_UPCARD
    if hand.phase is Phase.DRAW:
        return DRAW_STOCK
    taken = hand.taken_this_turn
    forbidden = 0 if taken is None or not hand.params.no_rediscard else 1 << taken
    return DISCARDS[best_throw(hand.hands[hand.to_move].mask, forbidden)[1]]


def _public(seat: int, event_seat: int, action: Action, card: Card | None) -> PublicEvent:
    hidden = event_seat != seat and isinstance(action, DrawStock)
    return PublicEvent(event_seat, action, None if hidden else card)


class Match:
    """Plays one series between two seats; use :func:`play_match`."""

    def __init__(self, seats: tuple[Seat, Seat], config: MatchConfig, log: LogWriter) -> None:
        self.seats = seats
        self.config = config
        self.log = log
        self.series = SeriesState(config.seed, config.params, log_dealing(LOG_FORMAT))
        self.books = (
            SeatBook.start(config.time_control),
            SeatBook.start(config.time_control),
        )
        """Each seat's clock and tally (:mod:`referee.bookkeeping`)."""
        self.faults: list[Fault] = []
        self.forfeited: list[int] = []
        self.identities: list[BotIdentity | None] = [None, None]
        self.request_id = 0
        self.announced = -1
        self._dealt: tuple[Card, ...] = ()
        """The deck of the hand announced last (revealed in its ``hand_end`` record)."""
        self.startup_faults: list[Fault] = []
        """Faults of the start, recorded once the header is written."""
        self._clock = trio.CancelScope()
        """Times the decisions of the current stretch of turns (see :meth:`_play`)."""
        self._asking: _Asking | None = None
        self._records: list[LogRecord] = []
        """Log records not written yet (see :meth:`_write_records`)."""
        self._sent = False
        """Whether the seat said that the current decision's request is out."""
        self._noticed_fault = self._noticed
        """``Decision.noticed``, bound once rather than on each decision's path."""

    async def run(
        self, close_later: CloseLater | None = None, gate: AsyncContextManager[object] | None = None
    ) -> MatchResult:
        """Connect, then (inside ``gate``, if given) play the series to its end (or a forfeit);
        close both seats: at once, or, when the series ended normally and ``close_later`` is
        given, by handing it the close."""
        ended = False
        try:
            await self._connect_all(hold=gate is not None)
            async with gate or contextlib.nullcontext():
                if gate is not None:
                    self._hold(False)
                self._log_header()
                for fault in self.startup_faults:
                    self._record(fault)
                if not self.forfeited:
                    await self._welcome_all()
                    await self._play()
                result = self._result()
                self._finish(result)
            ended = True
            return result
        finally:
            try:
                self._write_records(flush=True)
            finally:  # the bots go even if the log cannot be written
                if ended and close_later is not None:
                    close_later(self.close_seats)
                else:
                    await self.close_seats()

    def _hold(self, held: bool) -> None:
        for seat in self.seats:
            seat.hold(held)

    async def close_seats(self) -> None:
        """Say goodbye to both seats and tear their bots down, shielded from cancellation."""
        with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT_S * 2):
            async with trio.open_nursery() as nursery:
                for seat in self.seats:
                    nursery.start_soon(seat.close, "series over")

    # --- start -------------------------------------------------------------------------------

    async def _connect_all(self, *, hold: bool) -> None:
        """Start both seats; with ``hold`` (a series to wait for), each is frozen as soon as it
        has said hello, so a bot started early gets no CPU beside the series playing."""
        async with trio.open_nursery() as nursery:
            for index in (0, 1):
                nursery.start_soon(self._connect, index, hold)

    async def _connect(self, index: int, hold: bool) -> None:
        budget = self.config.time_control.startup_ms / 1000
        started = trio.current_time()
        try:
            await self.seats[index].prepare()  # its jail: not the bot's time
            started = trio.current_time()
            with trio.fail_after(budget):
                self.identities[index] = await self.seats[index].connect(index)
            if hold:
                self.seats[index].hold(True)
        except trio.TooSlowError:
            self.startup_faults.append(
                StartupFailure(
                    f"no hello within the start-up budget of {budget:g} s",
                    seat=index,
                    elapsed_ms=(trio.current_time() - started) * 1000,
                    evidence=self.seats[index].diagnostics(),
                ).fault
            )
        except BotFault as error:
            fault = error.fault
            if fault.kind is not FaultKind.STARTUP_FAILURE:
                error = StartupFailure(fault.detail, evidence=fault.evidence)
            self.startup_faults.append(_with_seat(error.fault, index))

    async def _welcome_all(self) -> None:
        seeds = self.config.bot_seeds or (0, 0)
        for index in (0, 1):
            opponent = self.identities[1 - index]
            assert opponent is not None
            await self.seats[index].welcome(
                Welcome(
                    index,
                    self.config.params,
                    self.config.time_control,
                    opponent,
                    self.config.match_id,
                    seeds[index],
                )
            )

    def _log_header(self) -> None:
        config = self.config
        self._log(
            Header(
                line=0,
                format=LOG_FORMAT,
                match_id=config.match_id,
                started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                params=config.params,
                seed_commitment=seed_commitment(config.seed, config.salt),
                first_dealer=self.series.first_dealer,
                time_control=config.time_control,
                fault_policy=config.fault_policy,
                sandbox=config.sandbox,
                seats=(_identity(self.identities[0]), _identity(self.identities[1])),
                bot_seeds=config.bot_seeds,
                cpus=config.cpus,
            )
        )

    # --- the log -------------------------------------------------------------------------------

    def _log(self, record: LogRecord) -> None:
        """Queue a log record; :meth:`_write_records` writes it."""
        self._records.append(record)

    def _write_records(self, *, flush: bool = False) -> None:
        """Write the queued records, in order; with ``flush``, put the log on disk.

        The match writes once each decision request is on its way (:meth:`_request_sent`), so
        the log is written while the bot thinks and not on the path its answer waits for (after
        the decision for a seat that does not say when its request is out), and flushes it at
        the end of every hand and of the match (a flush per decision was a write system call
        per decision). So a crash leaves every record of every finished hand on disk.
        """
        if self._records:
            records, self._records = self._records, []
            for record in records:
                self.log.write(record)
        if flush:
            self.log.flush()

    def _request_sent(self) -> None:
        """``Decision.sent``: write the log while the bot thinks. A write that stalls past
        ``LOG_STALL_S`` is the referee's time, not the bot's: the decision's start and deadline
        move by it."""
        self._sent = True
        begun = trio.current_time()
        self._write_records()
        spent = trio.current_time() - begun
        asking = self._asking
        if asking is not None and spent > LOG_STALL_S:
            asking.started += spent
            self._clock.deadline += spent

    # --- play ----------------------------------------------------------------------------------

    async def _play(self) -> None:
        """Turns until the series ends or a seat forfeits.

        One cancel scope times every decision of a stretch of turns: each request moves its
        deadline (a fresh ``fail_after`` per decision cost about 20 µs on the path a bot's answer
        waits for). A decision is the only await in a stretch, so the deadline set for it is the
        only one that can fire. When a bot runs out of time the scope ends the stretch; the
        timed-out turn is finished outside it and a new stretch begins. A scope whose deadline
        passed just as an answer came in is spent too: its stretch ends and the answer counts.
        """
        while self.series.result is None and not self.forfeited:
            with trio.CancelScope() as clock:
                self._clock = clock
                while self.series.result is None and not self.forfeited:
                    if clock.cancel_called:
                        break
                    await self._turn()
            if clock.cancelled_caught:
                self._timed_out()

    async def _turn(self) -> None:
        series = self.series
        if series.hand_number != self.announced:
            self._announce_hand()
        seat = series.hand.to_move
        legal = series.legal_actions()
        if len(legal) == 1:
            self._apply(seat, _Answer(0, legal[0], 0.0, "forced"))
        else:
            await self._ask(seat, legal)

    def _apply(self, seat: int, answer: _Answer) -> None:
        """Play an answer for ``seat`` (see :meth:`_played`)."""
        hands_before = len(self.series.finished)
        self._played(seat, answer, self.series.apply(answer.action), hands_before)

    def _played(self, seat: int, answer: _Answer, event: Event, hands_before: int) -> None:
        """Log an answer just played for ``seat``, tell the opponent, and close the hand if it
        ended (``hands_before``: the number of finished hands before it)."""
        series = self.series
        self._log(
            ActionRecord(
                0, seat, answer.request_id, answer.action, answer.by, round(answer.elapsed_ms, 3)
            )
        )
        opponent = 1 - seat
        self.seats[opponent].notify(
            OpponentActed(_public(opponent, seat, answer.action, event.card))
        )
        if len(series.finished) > hands_before:
            self._hand_ended(series.finished[-1], event.card)

    def _announce_hand(self) -> None:
        hand = self.series.hand
        self.announced = self.series.hand_number
        self._dealt = hand.deck
        commitment = deck_commitment(hand.deck, hand_salt(self.config.salt, self.announced))
        self._log(HandStart(0, self.series.hand_number, hand.dealer, commitment))
        upcard = hand.discard_pile[-1]
        for index in (0, 1):
            self.seats[index].notify(
                HandStarted(
                    self.series.hand_number,
                    hand.dealer,
                    hand.hands[index],
                    upcard,
                    commitment,
                )
            )

    def _hand_ended(self, record: HandRecord, discard: Card | None) -> None:
        outcome = record.outcome
        score = self.series.score
        totals = (score.totals(0), score.totals(1))
        deck = self._dealt  # the hand that ended is the one announced last
        self._log(
            HandEndRecord(
                line=0,
                hand=record.number,
                end=outcome.end.value,
                winner=outcome.winner,
                points=outcome.points,
                knocker=outcome.knocker,
                games=tuple(record.games),
                knocker_layout=_layout(outcome.knocker_layout),
                defender_layout=_layout(outcome.defender_layout),
                totals=totals,
                turns=outcome.turns,
                deck=deck,
                salt=hand_salt(self.config.salt, record.number),
            )
        )
        for seat in self.seats:
            seat.notify(
                HandEnded(
                    record,
                    discard if outcome.knocker is not None else None,
                    totals,
                    score.game_winners,
                )
            )
        self._write_records(flush=True)  # a finished hand is on disk, whatever happens next

    async def _ask(self, seat: int, legal: list[Action]) -> None:
        """Ask ``seat`` for an action within its time; :meth:`_settle` plays what follows."""
        self.request_id += 1
        request_id = self.request_id
        clock = self.books[seat].clock
        limit_ms = clock.limit_ms()
        decision = Decision(
            request_id,
            observation(self.series, seat),
            tuple(legal),
            clock.time_left_ms,
            clock.bank_ms,
            limit_ms,
            self._request_sent,
            self._noticed_fault,
        )
        self._log(
            Request(0, request_id, seat, decision.view.phase.value, len(legal), round(limit_ms, 3))
        )
        asking = _Asking(seat, request_id, trio.current_time(), limit_ms)
        self._asking = asking
        self._sent = False
        self._clock.deadline = asking.started + limit_ms / 1000
        fault: BotFault | None = None
        action: Action | None = None
        try:
            action = await self.seats[seat].decide(decision)
        except BotFault as error:
            fault = error
        self._asking = None
        self._settle(asking, action, fault)
        if not self._sent:
            self._write_records()  # the seat did not say when its request was out

    def _noticed(self, error: BotFault) -> bool:
        """``Decision.noticed``: a fault beside the decision in progress (a duplicate answer) is a
        strike of its own, and the seat waits on for its answer. When that strike
        would forfeit, it is left to the seat to raise, and :meth:`_settle` records it."""
        asking = self._asking
        assert asking is not None, "a seat notices faults only during a decision"
        seat = asking.seat
        if self.books[seat].tally.would_forfeit(error.kind, self.config.fault_policy):
            return True
        elapsed_ms = (trio.current_time() - asking.started) * 1000
        fault = error.fault
        evidence = {**fault.evidence, **self.seats[seat].diagnostics()}
        self._record(
            Fault(
                seat, fault.kind, fault.detail, asking.request_id, elapsed_ms, evidence, stray=True
            )
        )
        return False

    def _timed_out(self) -> None:
        """Finish the turn whose decision the clock cut short (see :meth:`_play`)."""
        asking = self._asking
        assert asking is not None, "the match clock fires only during a decision"
        self._asking = None
        self._settle(asking, None, BotTimeout(f"no answer within {asking.limit_ms:.0f} ms"))

    def _settle(self, asking: _Asking, action: Action | None, fault: BotFault | None) -> None:
        """Play what follows a finished decision: the bot's action if it is legal; after a fault,
        a strike and the referee's safe action instead, or a forfeit."""
        seat, request_id = asking.seat, asking.request_id
        elapsed_ms = (trio.current_time() - asking.started) * 1000
        self.books[seat].decided(elapsed_ms)
        if fault is None and too_slow(elapsed_ms, asking.limit_ms):  # the clock fired late
            fault = BotTimeout(
                f"answered after {elapsed_ms:.0f} ms, over the limit of {asking.limit_ms:.0f} ms"
            )
        if fault is None and action is not None:
            hands_before = len(self.series.finished)
            try:
                event = self.series.apply(action)  # checks first; nothing changes if illegal
            except IllegalActionError as error:
                fault = IllegalAction(str(error))
            else:
                answer = _Answer(request_id, action, elapsed_ms, "bot")
                self._played(seat, answer, event, hands_before)
                return
        assert fault is not None
        evidence = {**fault.fault.evidence, **self.seats[seat].diagnostics()}
        if action is not None:
            evidence["answer"] = action_to_dict(action)
        recorded = Fault(seat, fault.kind, fault.fault.detail, request_id, elapsed_ms, evidence)
        if not self._record(recorded):
            self._apply(seat, _Answer(request_id, safe_action(self.series), elapsed_ms, "referee"))

    def _record(self, fault: Fault) -> bool:
        """Log and count a fault; True when it forfeits the series."""
        tally = self.books[fault.seat].tally
        forfeits = tally.struck(fault.kind, self.config.fault_policy)
        self.faults.append(fault)
        if forfeits and fault.seat not in self.forfeited:
            self.forfeited.append(fault.seat)
        self._log(FaultRecord.of(fault, tally.strikes, forfeits))
        for seat in self.seats:
            seat.notify(FaultNoticed(fault, forfeits))
        return forfeits

    # --- end -----------------------------------------------------------------------------------

    def _result(self) -> MatchResult:
        series = self.series.result
        score = self.series.score
        winner, end = match_verdict(
            self.forfeited,
            None if series is None else series.end,
            None if series is None else series.winner,
        )
        record = ResultRecord(
            line=0,
            match_id=self.config.match_id,
            winner=winner,
            end=end.value,
            forfeited=tuple(sorted(self.forfeited)),
            totals=(score.totals(0), score.totals(1)),
            game_winners=score.game_winners,
            hands=len(self.series.finished),
            faults=tuple(self.faults),
            stats=(self.books[0].tally.frozen(), self.books[1].tally.frozen()),
            seed=self.config.seed,
            salt=self.config.salt,
        )
        return MatchResult(
            record,
            (self.identities[0], self.identities[1]),
            series,
            tuple(self.series.finished),
        )

    def _finish(self, result: MatchResult) -> None:
        self._log(result.record)
        for seat in self.seats:
            seat.notify(
                SeriesEnded(
                    result.end, result.winner, result.totals, result.game_winners, result.hands
                )
            )


def _identity(identity: BotIdentity | None) -> SeatIdentity | None:
    if identity is None:
        return None
    return SeatIdentity(identity.name, identity.version, identity.code_hash)


def _layout(layout: object | None) -> str | None:
    """A showdown's layout as the log writes it (``None``: no layout)."""
    return None if layout is None else str(layout)


def _with_seat(fault: Fault, seat: int) -> Fault:
    return Fault(seat, fault.kind, fault.detail, fault.request_id, fault.elapsed_ms, fault.evidence)


async def play_match(
    seats: tuple[Seat, Seat],
    config: MatchConfig,
    log: LogWriter | None = None,
    *,
    close_later: CloseLater | None = None,
    gate: AsyncContextManager[object] | None = None,
) -> MatchResult:
    """Play one series between two seats under ``config``; returns the result once every record
    is written. The seats are closed before it returns, unless ``close_later`` is given: then a
    series that ended normally hands it the close (a coroutine function) to run when it likes,
    and returns at once (a worker starts its next match meanwhile). With ``gate`` (a lock, say)
    the bots start and say hello at once, but the series begins only inside the gate: a worker
    starts its next match's bots while the current match plays.

    Never raises for a bot's misbehaviour: that is a fault in the result.
    """
    return await Match(seats, config, log or NullLog()).run(close_later, gate)
