"""Events: formats played round by round, each round paired from the results before it.

Pure functions of the seeds and the rounds played, as the statistics are of the results: a
Swiss (:mod:`~tournaments.events.swiss`, the Monrad system with Buchholz, looking ahead) and a
knockout bracket (:mod:`~tournaments.events.knockout`), both made of ties
(:mod:`~tournaments.events.ties`). The league machinery (``tournaments.rounds``) stores each
round's pairing before it plays and feeds the results back.
"""

from __future__ import annotations

from tournaments.events.knockout import bracket_order, knockout_round, knockout_rounds
from tournaments.events.swiss import (
    PAIRING_METHOD,
    PAIRING_METHODS,
    SwissLine,
    swiss_round,
    swiss_table,
)
from tournaments.events.ties import Tie, TieResult

__all__ = [
    "PAIRING_METHOD",
    "PAIRING_METHODS",
    "SwissLine",
    "Tie",
    "TieResult",
    "bracket_order",
    "knockout_round",
    "knockout_rounds",
    "swiss_round",
    "swiss_table",
]
