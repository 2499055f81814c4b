"""Time control and fault policy: league settings, recorded in every match log."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Final

from protocol.bounded import JsonObject
from referee.faults import FaultKind

MAX_MS = 2**32 - 1
"""The protocol's limit of any time (a ``uint32`` of milliseconds): the bounds below keep a
decision's whole time (move time, bank and grace together) and the start-up budget within it."""
SANE_MS: Final = {
    "move_time_ms": (10, 600_000),
    "grace_ms": (0, 60_000),
    "time_bank_ms": (0, 24 * 3_600_000),
    "startup_ms": (100, 600_000),
}
"""The bounds of each time limit: below them every series would end in timeouts (a zero move
time made every series a double forfeit), above them a stuck bot holds a match for hours."""
_DURATION: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|min)?")
_UNIT_MS: Final = {"ms": 1, "s": 1000, "min": 60_000}


def duration_ms(text: str, default_unit: str = "s") -> int:
    """A duration as people write it (``500ms``, ``1.5s``, ``2min``; a bare number is in
    ``default_unit``), in whole milliseconds.

    >>> duration_ms("500ms"), duration_ms("1.5s"), duration_ms("2min"), duration_ms("0.25")
    (500, 1500, 120000, 250)

    Raises:
        ValueError: not a duration.
    """
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a duration (write it as 1s, 500ms or 2min)")
    number, unit = found.groups()
    value = float(number) * _UNIT_MS[unit or default_unit]
    if not value < MAX_MS:  # an absurd length (or one too long for a float)
        raise ValueError(f"{text!r} is longer than any time limit ({MAX_MS} ms)")
    return round(value)


"""Times travel to bots as unsigned 32-bit milliseconds."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How long a bot may think. Defaults suit bots written in Python.

    A decision's limit is ``move_time_ms`` plus whatever is left in the series' time bank plus
    ``grace_ms`` for transport. Time over ``move_time_ms`` is taken from the bank.

    >>> TimeControl().limit_ms(bank_left_ms=500)
    1700.0
    """

    move_time_ms: int = 1000
    grace_ms: int = 200
    time_bank_ms: int = 10_000
    startup_ms: int = 10_000

    def __post_init__(self) -> None:
        for name in ("move_time_ms", "grace_ms", "time_bank_ms", "startup_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"time control {name} must be a whole number of milliseconds")
            if value < 0:
                raise ValueError(f"time control {name} cannot be negative")
        for name, (low, high) in SANE_MS.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(
                    f"time control {name} = {value}: must be between {low} and {high} ms"
                )

    def limit_ms(self, bank_left_ms: float) -> float:
        """The most a decision may take, grace included."""
        return float(self.move_time_ms + max(bank_left_ms, 0.0) + self.grace_ms)

    def to_dict(self) -> JsonObject:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """What follows a fault.

    A timeout, an illegal action or a protocol violation costs a strike and the referee plays a
    safe legal action instead; the ``strikes``-th strike forfeits the series. A crash or a
    start-up failure forfeits at once (there is no bot left to ask). ``strikes=1`` forfeits on
    the first fault of any kind.
    """

    strikes: int = 3

    def __post_init__(self) -> None:
        if self.strikes < 1:
            raise ValueError("fault policy strikes must be at least 1")

    def forfeits(self, kind: FaultKind, strikes_so_far: int) -> bool:
        """Whether this fault (already counted in ``strikes_so_far``) ends the series."""
        if kind in (FaultKind.CRASH, FaultKind.STARTUP_FAILURE):
            return True
        return strikes_so_far >= self.strikes

    def to_dict(self) -> JsonObject:
        """JSON-ready form."""
        return dataclasses.asdict(self)
