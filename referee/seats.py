"""Seats: how the referee asks a player. A remote bot over gRPC, or an in-process policy.

The match talks to seats in rules terms (observations, actions, records); a remote seat turns
them into protocol messages. Events are fire-and-forget; only :meth:`Seat.decide` waits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from referee.bookkeeping import MatchEnd
from referee.control import TimeControl
from referee.faults import BotFault, Fault
from referee.rules import (
    Action,
    Card,
    CardSet,
    HandRecord,
    Observation,
    Policy,
    PublicEvent,
    RuleParams,
)


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who a seat says it is (from its hello), and its code hash when known."""

    name: str
    version: str
    code_hash: str = ""


@dataclass(frozen=True, slots=True)
class Welcome:
    """Sent to a seat once both have connected."""

    seat: int
    params: RuleParams
    time_control: TimeControl
    opponent: BotIdentity
    match_id: str
    bot_seed: int = 0
    """The seat's own seed for its random choices (0: none given)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision asked of a seat."""

    request_id: int
    view: Observation
    legal: tuple[Action, ...]
    time_left_ms: float
    """The whole limit of this decision (move time plus the bank), grace not included."""
    bank_left_ms: float
    limit_ms: float
    """When the referee gives up: ``time_left_ms`` plus grace."""
    sent: Callable[[], None] = lambda: None
    """A seat calls it once, when the request is on its way (before it waits for the answer): the
    match writes its log then, while the bot thinks, rather than on the path the answer waits
    for, and does not count that time as the bot's. Optional: without it the match writes the
    log once ``decide`` returns."""
    noticed: Callable[[BotFault], bool] = lambda fault: True  # noqa: ARG005
    """A seat calls it with a fault beside the decision (a duplicate of an earlier answer), then
    waits on for its answer: the match counts a strike of its own. True when that strike would
    forfeit the series: the seat raises the fault then, and the decision ends with it. Optional:
    without it every fault ends the decision."""


@dataclass(frozen=True, slots=True)
class OpponentActed:
    """The opponent acted; ``event`` is as this seat may see it."""

    event: PublicEvent


@dataclass(frozen=True, slots=True)
class HandStarted:
    """A new hand: this seat's cards and the upcard."""

    hand_number: int
    dealer: int
    hand: CardSet
    upcard: Card
    commitment: str


@dataclass(frozen=True, slots=True)
class HandEnded:
    """A hand ended: the showdown, and the score sheet after it."""

    record: HandRecord
    discard: Card | None
    totals: tuple[tuple[int, ...], tuple[int, ...]]
    game_winners: tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class SeriesEnded:
    """The series ended: why (a series end, or a forfeit), who won, the score sheet."""

    end: MatchEnd
    winner: int | None
    totals: tuple[tuple[int, ...], tuple[int, ...]]
    game_winners: tuple[int | None, ...]
    hands: int


@dataclass(frozen=True, slots=True)
class FaultNoticed:
    """A fault was recorded against a seat."""

    fault: Fault
    forfeited: bool


SeatEvent = OpponentActed | HandStarted | HandEnded | SeriesEnded | FaultNoticed


class Seat(Protocol):
    """How the match asks a player."""

    async def prepare(self) -> None:
        """Make what the player needs before it starts (a bot's jail), outside its start-up
        budget.

        Raises:
            StartupFailure: it could not be made.
        """
        ...

    async def connect(self, seat: int) -> BotIdentity:
        """Get the player ready (start the bot, take its hello).

        Raises:
            StartupFailure: the player could not be started.
        """
        ...

    async def welcome(self, welcome: Welcome) -> None:
        """Tell the player its seat, the rules and the opponent."""
        ...

    async def decide(self, decision: Decision) -> Action:
        """Ask for one action (checked by the match, not here); call ``decision.sent()`` once
        the request is out, and ``decision.noticed`` for a fault that is no answer to it.

        Raises:
            BotFault: a timeout, crash or protocol violation that ends the decision.
        """
        ...

    def notify(self, event: SeatEvent) -> None:
        """Pass on an event without waiting."""
        ...

    def hold(self, held: bool) -> None:
        """Pause the player while it waits for its series to begin (``held``), or resume it;
        nothing where it cannot be paused."""
        ...

    async def close(self, detail: str) -> None:
        """Say goodbye and release everything the seat holds."""
        ...

    def diagnostics(self) -> dict[str, object]:
        """Evidence for fault records: stderr tail, exit status, sandbox layers."""
        ...


class InProcessSeat:
    """A Python policy in the referee's own process (tests, simulations, the demo)."""

    def __init__(self, policy: Policy, name: str = "in-process", version: str = "0") -> None:
        self.policy = policy
        self.identity = BotIdentity(name, version)
        self.events: list[SeatEvent] = []
        self.closed = False

    async def prepare(self) -> None:
        """Nothing to make."""

    async def connect(self, seat: int) -> BotIdentity:  # noqa: ARG002 - same shape as remote
        return self.identity

    async def welcome(self, welcome: Welcome) -> None:
        self.seat_welcome = welcome

    async def decide(self, decision: Decision) -> Action:
        decision.sent()
        return self.policy(decision.view, decision.legal)

    def notify(self, event: SeatEvent) -> None:
        self.events.append(event)

    def hold(self, held: bool) -> None:
        """Nothing to pause: the policy runs only when asked."""

    async def close(self, detail: str) -> None:  # noqa: ARG002
        self.closed = True

    def diagnostics(self) -> dict[str, object]:
        return {"kind": "in-process"}
