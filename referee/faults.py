"""Bot faults: distinct, typed, and carrying their evidence.

A fault is data first (:class:`Fault`, logged and counted) and an exception second
(:class:`BotFault` and its subclasses, raised by a seat and caught by the match).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from protocol.bounded import JsonObject


class FaultKind(enum.Enum):
    """What went wrong with a bot."""

    TIMEOUT = "timeout"
    """No answer within the decision's limit (move time, time bank and grace)."""
    CRASH = "crash"
    """The process exited or the stream closed during the series."""
    ILLEGAL_ACTION = "illegal_action"
    """An answer that is not a legal action."""
    PROTOCOL_VIOLATION = "protocol_violation"
    """A wrong request id, an unexpected, malformed or oversized message."""
    STARTUP_FAILURE = "startup_failure"
    """No correct hello within the start-up budget (never connected, bad token, bad version)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One recorded fault with its evidence."""

    seat: int
    kind: FaultKind
    detail: str
    request_id: int = 0
    elapsed_ms: float = 0.0
    evidence: JsonObject = field(default_factory=dict)
    """What was asked, what came back, the bot's stderr tail (capped), exit status: the one
    free-form field of a fault. It is diagnostics for a person reading the log, gathered by
    whichever seat or bridge saw the fault (each knows different things), written as JSON and
    never read back into a decision, so it stays a JSON object rather than a record."""
    stray: bool = False
    """A fault beside the decision on ``request_id`` (a duplicate of an earlier answer): a strike
    of its own while the seat waited on; the decision went on to its own end."""

    def to_dict(self) -> JsonObject:
        """JSON-ready form for the match log (``stray`` only when set, so older logs read alike)."""
        fields = {
            "seat": self.seat,
            "kind": self.kind.value,
            "detail": self.detail,
            "request_id": self.request_id,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "evidence": self.evidence,
        }
        if self.stray:
            fields["stray"] = True
        return fields


class BotFault(Exception):
    """A bot did something the referee cannot accept; ``fault`` says what."""

    kind: FaultKind = FaultKind.PROTOCOL_VIOLATION

    def __init__(
        self,
        detail: str,
        *,
        seat: int = -1,
        request_id: int = 0,
        elapsed_ms: float = 0.0,
        evidence: JsonObject | None = None,
    ) -> None:
        super().__init__(detail)
        self.fault = Fault(seat, self.kind, detail, request_id, elapsed_ms, evidence or {})


class BotTimeout(BotFault):
    """No answer in time."""

    kind = FaultKind.TIMEOUT


class BotCrashed(BotFault):
    """The bot's process exited or its stream closed."""

    kind = FaultKind.CRASH


class IllegalAction(BotFault):
    """The bot answered with an action the rules do not allow now."""

    kind = FaultKind.ILLEGAL_ACTION


class BotProtocolError(BotFault):
    """The bot broke the protocol."""

    kind = FaultKind.PROTOCOL_VIOLATION


class StartupFailure(BotFault):
    """The bot did not start correctly."""

    kind = FaultKind.STARTUP_FAILURE
