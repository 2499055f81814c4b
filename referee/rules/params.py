"""The rule parameters: every number and option of the rule book, in one frozen record."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any


class Scoring(enum.Enum):
    """How hand points add up to a series."""

    HOLLYWOOD = "hollywood"
    """Three games scored at once (the default)."""
    PLAIN = "plain"
    """Plain Gin Rummy: one game."""


@dataclass(frozen=True, slots=True)
class RuleParams:
    """Every rule number and option, with the rule book's defaults.

    A match log records the whole record (:meth:`to_dict`), so a replay uses the same rules.

    >>> RuleParams().gin_bonus, RuleParams(gin_bonus=20).gin_bonus
    (25, 20)
    >>> RuleParams.from_dict(RuleParams(scoring=Scoring.PLAIN).to_dict()).games
    1

    Raises:
        ValueError: a value is out of its range (see :meth:`__post_init__`).
    """

    knock_limit: int = 10
    """Largest deadwood a knock may leave."""
    gin_bonus: int = 25
    """Points for going gin, on top of the defender's deadwood (some play 20)."""
    undercut_bonus: int = 10
    """Points for an undercut, on top of the deadwood difference (classic Gin Rummy: 25)."""
    undercut_on_tie: bool = True
    """Equal deadwood is an undercut (the rule book); if false the knocker wins 0 points."""
    game_target: int = 100
    """A game ends when a player's total in it reaches this."""
    scoring: Scoring = Scoring.HOLLYWOOD
    """Hollywood (three games) or plain Gin Rummy (one game)."""
    stock_end: int = 2
    """The hand is drawn when a discard leaves this many cards in the stock."""
    turn_cap: int = 200
    """A hand reaching this many turns (draw plus discard) is drawn and marked capped."""
    hand_cap: int = 500
    """A series reaching this many hands ends and is marked capped."""
    stop_when_decided: bool = False
    """End the series as soon as one player has won a majority of the games."""
    no_rediscard: bool = True
    """A card taken from the discard pile may not be discarded (or knocked with) that turn."""

    def __post_init__(self) -> None:
        checks = {
            "knock_limit": 0 <= self.knock_limit <= 100,
            "gin_bonus": self.gin_bonus >= 0,
            "undercut_bonus": self.undercut_bonus >= 0,
            "game_target": self.game_target >= 1,
            "stock_end": 0 <= self.stock_end <= 30,
            "turn_cap": self.turn_cap >= 1,
            "hand_cap": self.hand_cap >= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"rule parameter {name}={getattr(self, name)!r} is out of range")

    @property
    def games(self) -> int:
        """Number of games scored at once: 3 for Hollywood, 1 for plain Gin Rummy."""
        return 3 if self.scoring is Scoring.HOLLYWOOD else 1

    def to_dict(self) -> dict[str, Any]:  # type: ignore[explicit-any]  # JSON (the rules import nothing, so not protocol.bounded's alias)
        """Plain JSON-ready form (enums as their values)."""
        return {
            field.name: (value.value if isinstance(value, enum.Enum) else value)
            for field in dataclasses.fields(self)
            for value in [getattr(self, field.name)]
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleParams:  # type: ignore[explicit-any]  # JSON (the rules import nothing, so not protocol.bounded's alias)
        """Read :meth:`to_dict` output back; unknown names are refused.

        Raises:
            ValueError: an unknown parameter name or a bad value.
        """
        known = {field.name for field in dataclasses.fields(cls)}
        problems = []
        unknown = sorted(set(data) - known)
        if unknown:
            problems.append(
                f"unknown rule parameters: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        values = {name: value for name, value in data.items() if name in known}
        if "scoring" in values:
            try:
                values["scoring"] = Scoring(values["scoring"])
            except ValueError:
                allowed = ", ".join(f'"{kind.value}"' for kind in Scoring)
                problems.append(f"scoring = {values.pop('scoring')!r}: one of {allowed}")
        for name, value in values.items():
            if name != "scoring" and not isinstance(value, int):
                problems.append(f"rule parameter {name} must be a number or true/false")
        if problems:
            raise ValueError("; ".join(problems))
        return cls(**values)
