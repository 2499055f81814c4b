"""A Hollywood series: hands dealt from one seed until all three games have ended.

>>> series = SeriesState(seed=3)
>>> series.hand_number, series.hand.dealer == series.first_dealer, series.is_over
(0, True, False)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from referee.rules.cards import Card
from referee.rules.hand import Action, Dealing, Event, HandOutcome, HandState, dealt_deck
from referee.rules.params import RuleParams
from referee.rules.scoring import DEFAULT_PARAMS, HollywoodScore


class SeriesEnd(enum.Enum):
    """Why a series ended."""

    COMPLETE = "complete"
    """Every game ended."""
    DECIDED = "decided"
    """Stopped once one player had a majority of games (``stop_when_decided``)."""
    HAND_CAP = "hand_cap"
    """The hand cap was reached; open games went to their leaders (marked capped)."""


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One finished hand of a series."""

    number: int
    dealer: int
    outcome: HandOutcome
    games: tuple[int, ...]
    """The games (0-based) the winner's points were entered in."""


@dataclass(frozen=True, slots=True)
class SeriesResult:
    """The end of a series: who won, the score sheet and every hand."""

    seed: int
    params: RuleParams
    end: SeriesEnd
    winner: int | None
    """The seat that won a majority of games, or ``None`` (possible only at the hand cap)."""
    totals: tuple[tuple[int, ...], tuple[int, ...]]
    game_winners: tuple[int | None, ...]
    hands: tuple[HandRecord, ...]


def first_dealer(seed: int) -> int:
    """The first dealer of a series, drawn from its seed.

    >>> first_dealer(3) in (0, 1)
    True
    """
    import hashlib  # noqa: PLC0415 - deferred: ~4 ms to import, and only the referee deals

    digest = hashlib.sha256(b"hollywood-gin/first-dealer/v1" + str(seed).encode()).digest()
    return digest[0] & 1


def enter_hand(score: HollywoodScore, outcome: HandOutcome) -> tuple[int, ...]:
    """Enter a finished hand's points on the score sheet; the games (0-based) they went into
    (none for a drawn hand)."""
    if outcome.winner is None:
        return ()
    return score.record(outcome.winner, outcome.points)


def next_dealer(dealer: int, outcome: HandOutcome) -> int:
    """Who deals after a hand ``dealer`` dealt: its winner; after a drawn hand, the same dealer."""
    return dealer if outcome.winner is None else outcome.winner


def series_end(score: HollywoodScore, hands: int) -> SeriesEnd | None:
    """Whether a series ends once ``hands`` hands have finished (with ``score`` after them); at
    the hand cap it closes the open games (see :meth:`HollywoodScore.close_capped`).

    The rules of a series' end, of the next dealer and of entering a hand (the functions above)
    exist once: the referee's series and the replay verifier both call them.

    >>> series_end(HollywoodScore(RuleParams(hand_cap=2)), 1) is None
    True
    >>> series_end(HollywoodScore(RuleParams(hand_cap=2)), 2)
    <SeriesEnd.HAND_CAP: 'hand_cap'>
    """
    params = score.params
    if score.over:
        return SeriesEnd.COMPLETE
    if params.stop_when_decided and score.winner is not None:
        return SeriesEnd.DECIDED
    if hands >= params.hand_cap:
        score.close_capped()
        return SeriesEnd.HAND_CAP
    return None


class SeriesState:
    """The full state of a series: the score sheet, the current hand and the finished ones.

    Each hand is dealt by :func:`dealt_deck` from the seed, the hand number and its dealer,
    under ``dealing`` (by seat unless a caller replays the older rule).

    Raises:
        ValueError: a negative seed.
    """

    def __init__(
        self,
        seed: int,
        params: RuleParams = DEFAULT_PARAMS,
        dealing: Dealing = Dealing.BY_SEAT,
    ) -> None:
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, not {seed}")
        self.seed = seed
        self.params = params
        self.dealing = dealing
        self.score = HollywoodScore(params)
        self.first_dealer = first_dealer(seed)
        self.hand_number = 0
        self.hand = HandState(self._deck(0, self.first_dealer), self.first_dealer, params)
        self.finished: list[HandRecord] = []
        self.result: SeriesResult | None = None

    @property
    def is_over(self) -> bool:
        """Whether the series has ended."""
        return self.result is not None

    @property
    def to_move(self) -> int:
        """The seat to act in the current hand."""
        return self.hand.to_move

    def legal_actions(self) -> list[Action]:
        """Legal actions of the player to move (empty once the series is over)."""
        return [] if self.is_over else self.hand.legal_actions()

    def apply(self, action: Action) -> Event:
        """Play one action; when it ends the hand, score it and deal the next (or end).

        Raises:
            IllegalActionError: the action is not legal now (nothing is changed).
        """
        event = self.hand.apply(action)
        if self.hand.outcome is not None:
            self._finish_hand(self.hand.outcome)
        return event

    def _finish_hand(self, outcome: HandOutcome) -> None:
        games = enter_hand(self.score, outcome)
        self.finished.append(HandRecord(self.hand_number, self.hand.dealer, outcome, games))
        end = series_end(self.score, len(self.finished))
        if end is not None:
            self._end(end)
            return
        dealer = next_dealer(self.hand.dealer, outcome)
        self.hand_number += 1
        self.hand = HandState(self._deck(self.hand_number, dealer), dealer, self.params)

    def _deck(self, hand_number: int, dealer: int) -> tuple[Card, ...]:
        return dealt_deck(self.seed, hand_number, dealer, self.dealing)

    def _end(self, end: SeriesEnd) -> None:
        self.result = SeriesResult(
            seed=self.seed,
            params=self.params,
            end=end,
            winner=self.score.winner,
            totals=(self.score.totals(0), self.score.totals(1)),
            game_winners=self.score.game_winners,
            hands=tuple(self.finished),
        )
