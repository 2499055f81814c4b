"""What one seat may see: the only path from the full state to a player.

A seat sees its own hand, the discard pile, the stock count, every card the opponent took from
the discard pile, the upcard decisions, the scores, and after a hand the whole showdown. It never
sees the opponent's other cards, the stock order or the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from referee.rules.cards import Card, CardSet
from referee.rules.hand import Action, HandOutcome, HandState, Phase, PublicEvent
from referee.rules.params import RuleParams
from referee.rules.series import SeriesState


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything one seat may know at one moment."""

    seat: int
    phase: Phase
    to_move: int
    dealer: int
    hand: CardSet
    discard_pile: tuple[Card, ...]
    """Bottom first; the last card is the top."""
    stock_count: int
    opponent_took: tuple[Card, ...]
    """Every card the opponent took from the discard pile this hand, in order."""
    opponent_known: CardSet
    """The cards the opponent took from the pile and still holds."""
    opponent_hand_size: int
    taken_this_turn: Card | None
    """The card this seat took from the pile this turn (it may not be discarded this turn)."""
    turns: int
    history: tuple[PublicEvent, ...]
    outcome: HandOutcome | None
    """How the hand ended, once it is over. After a knock both hands are shown (the showdown);
    after a drawn hand nobody lays down, so the opponent's cards are left out (empty)."""
    params: RuleParams
    hand_number: int = 0
    totals: tuple[tuple[int, ...], tuple[int, ...]] = ((0, 0, 0), (0, 0, 0))
    """Each seat's totals in games 1-3 (by seat number)."""
    game_winners: tuple[int | None, ...] = (None, None, None)

    @property
    def upcard(self) -> Card | None:
        """The top of the discard pile (the upcard during the offer)."""
        return self.discard_pile[-1] if self.discard_pile else None

    @property
    def opponent(self) -> int:
        """The other seat."""
        return 1 - self.seat


def hand_observation(hand: HandState, seat: int, series: SeriesState | None = None) -> Observation:
    """A seat's view of one hand, with the series' scores when ``series`` is given.

    Raises:
        ValueError: a seat other than 0 or 1.
    """
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    opponent = 1 - seat
    if series is None:
        hand_number, totals, game_winners = 0, NO_SCORES, NO_WINNERS
    else:
        score = series.score
        hand_number = series.hand_number
        totals, game_winners = (score.totals(0), score.totals(1)), score.game_winners
    # Positional, in field order: an observation is made for every decision, and keywords cost
    # more here. ``test_observation_fields_in_order`` checks each field.
    return Observation(
        seat,
        hand.phase,
        hand.to_move,
        hand.dealer,
        hand.cards_of(seat),
        hand.discard_pile,
        hand.stock_count,
        hand.took_from_pile(opponent),
        hand.known_cards(opponent),
        hand.hand_size(opponent),
        hand.taken_this_turn if hand.to_move == seat else None,
        hand.turns,
        hand.seen_history(seat),
        _public_outcome(hand.outcome, seat),
        hand.params,
        hand_number,
        totals,
        game_winners,
    )


NO_SCORES: tuple[tuple[int, ...], tuple[int, ...]] = ((0, 0, 0), (0, 0, 0))
NO_WINNERS: tuple[int | None, ...] = (None, None, None)


def _public_outcome(outcome: HandOutcome | None, seat: int) -> HandOutcome | None:
    if outcome is None or not outcome.end.drawn:
        return outcome
    hands = [CardSet(), CardSet()]
    hands[seat] = outcome.hands[seat]
    return replace(outcome, hands=(hands[0], hands[1]))


def observation(state: SeriesState | HandState, seat: int) -> Observation:
    """What ``seat`` may see of a series (or of a lone hand): the one way to look at a state.

    >>> from referee.rules.series import SeriesState
    >>> view = observation(SeriesState(seed=5), 0)
    >>> len(view.hand), view.stock_count, len(view.discard_pile), view.totals
    (10, 31, 1, ((0, 0, 0), (0, 0, 0)))

    Raises:
        ValueError: a seat other than 0 or 1.
    """
    if isinstance(state, HandState):
        return hand_observation(state, seat)
    return hand_observation(state.hand, seat, state)


def legal_actions(state: SeriesState | HandState) -> list[Action]:
    """Every legal action of the player to move (empty when nothing is left to play).

    >>> from referee.rules.series import SeriesState
    >>> [str(action) for action in legal_actions(SeriesState(seed=5))]
    ['take upcard', 'pass upcard']
    """
    return state.legal_actions()
