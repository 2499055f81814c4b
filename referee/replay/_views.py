"""What a viewer sees at one step of a replay: the referee (everything) or one seat.

A seat's table is built only from :func:`referee.rules.observation`, the one path from the full
state to what a seat may see; so a seat's view of a replay shows exactly what that bot was shown.
A step says what happened as data (the record it shows, the card it moved); the words are the
display's (``tournaments.views.words``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from referee.replay._records import BadRecord, BodyRecord, Totals, VerifyStatus
from referee.rules import Card, CardSet, HandEnd, HandOutcome, HandState, Phase, observation

Viewer = int | None
"""``None`` for the referee's view, else the seat (0 or 1) whose view it is."""

VIEWERS: tuple[Viewer, Viewer, Viewer] = (None, 0, 1)


def viewer_index(viewer: Viewer) -> int:
    """Position of a viewer in a step's per-viewer tuples (referee 0, seat 0 → 1, seat 1 → 2).

    >>> [viewer_index(viewer) for viewer in VIEWERS]
    [0, 1, 2]
    """
    return 0 if viewer is None else viewer + 1


def viewer_name(viewer: Viewer) -> str:
    """``referee`` or ``seat N``.

    >>> viewer_name(None), viewer_name(1)
    ('referee', 'seat 1')
    """
    return "referee" if viewer is None else f"seat {viewer}"


@dataclass(frozen=True, slots=True)
class SeatHand:
    """One seat's cards as a viewer sees them."""

    cards: CardSet | None
    """All the cards, or ``None`` when they are hidden from this viewer."""
    count: int
    known: CardSet
    """The cards this viewer knows are held (all of them when ``cards`` is shown)."""


@dataclass(frozen=True, slots=True)
class Showdown:
    """How a hand ended, with both layouts when someone knocked."""

    end: HandEnd
    winner: int | None
    points: int
    knocker: int | None
    knocker_melds: tuple[CardSet, ...]
    knocker_deadwood_cards: CardSet
    knocker_deadwood: int
    defender_melds: tuple[CardSet, ...]
    layoffs: tuple[tuple[CardSet, CardSet], ...]
    """``(cards laid off, the knocker's meld they went onto)``."""
    defender_deadwood_cards: CardSet
    defender_deadwood: int
    games: tuple[int, ...]
    """The games (0-based) the winner's points went into."""


@dataclass(frozen=True, slots=True)
class Table:
    """The table as one viewer sees it at one step."""

    viewer: Viewer
    hand_number: int
    dealer: int
    phase: Phase
    to_move: int
    hands: tuple[SeatHand, SeatHand]
    discard_pile: tuple[Card, ...]
    """Bottom first; the last card is the top."""
    stock: tuple[Card, ...] | None
    """The stock in drawing order, or ``None`` when hidden from this viewer."""
    stock_count: int
    totals: Totals
    game_winners: tuple[int | None, ...]
    showdown: Showdown | None = None

    def cards_shown(self) -> CardSet:
        """Every card this table shows face up (hands, known cards, pile, stock, showdown)."""
        mask = 0
        for seat in self.hands:
            mask |= seat.known.mask | (seat.cards.mask if seat.cards is not None else 0)
        for card in (*self.discard_pile, *(self.stock or ())):
            mask |= 1 << card
        if self.showdown is not None:
            mask |= _showdown_mask(self.showdown)
        return CardSet.of_mask(mask)


def _showdown_mask(showdown: Showdown) -> int:
    groups = [
        *showdown.knocker_melds,
        showdown.knocker_deadwood_cards,
        *showdown.defender_melds,
        *(cards for cards, _ in showdown.layoffs),
        showdown.defender_deadwood_cards,
    ]
    mask = 0
    for group in groups:
        mask |= group.mask
    return mask


class StepKind(enum.Enum):
    """What a replay step shows."""

    DEAL = "deal"
    ACTION = "action"
    FAULT = "fault"
    SHOWDOWN = "showdown"
    RESULT = "result"
    NOTE = "note"
    """Something the replay could not show or check (the log ends early or disagrees)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a replay: what happened, and the table after it, for each viewer."""

    index: int
    line: int
    """The log line of the record this step shows (0 when none)."""
    kind: StepKind
    hand_number: int
    seat: int | None
    """The seat that acted or faulted, if any."""
    record: BodyRecord | None
    """The record this step shows: the hand start of a deal, an action, a fault, the hand end of
    a showdown, the result; ``None`` for a note."""
    tables: tuple[Table, Table, Table] | None
    """The table after the step for each viewer (``None`` before any hand was dealt)."""
    ms: float | None = None
    """The decision's time, for a seat's own decisions and the referee."""
    card: Card | None = None
    """The card an action moved (a stock draw's too, which only the referee and the drawer may
    see), or the upcard of a deal."""
    problem: BadRecord | None = None
    """A note's: the record where the log disagrees or stops."""
    status: VerifyStatus | None = None
    """A note's: the verdict on the log."""

    def table(self, viewer: Viewer) -> Table | None:
        """The table after this step as ``viewer`` saw it."""
        return None if self.tables is None else self.tables[viewer_index(viewer)]


def showdown_of(outcome: HandOutcome, games: tuple[int, ...]) -> Showdown:
    """A hand's outcome as a :class:`Showdown`."""
    knock = outcome.knocker_layout
    defence = outcome.defender_layout
    return Showdown(
        end=outcome.end,
        winner=outcome.winner,
        points=outcome.points,
        knocker=outcome.knocker,
        knocker_melds=tuple(meld.cards for meld in knock.melds) if knock else (),
        knocker_deadwood_cards=knock.deadwood_cards if knock else CardSet(),
        knocker_deadwood=knock.deadwood if knock else 0,
        defender_melds=tuple(meld.cards for meld in defence.melds) if defence else (),
        layoffs=tuple((lay.cards, lay.onto.cards) for lay in defence.laid_off) if defence else (),
        defender_deadwood_cards=defence.deadwood_cards if defence else CardSet(),
        defender_deadwood=defence.deadwood if defence else 0,
        games=games,
    )


def referee_table(
    hand: HandState,
    *,
    hand_number: int,
    totals: Totals,
    game_winners: tuple[int | None, ...],
    games: tuple[int, ...] = (),
) -> Table:
    """The referee's table: both hands and the stock in order."""
    hands = hand.hands
    return Table(
        viewer=None,
        hand_number=hand_number,
        dealer=hand.dealer,
        phase=hand.phase,
        to_move=hand.to_move,
        hands=(
            SeatHand(hands[0], len(hands[0]), hands[0]),
            SeatHand(hands[1], len(hands[1]), hands[1]),
        ),
        discard_pile=hand.discard_pile,
        stock=hand.stock,
        stock_count=hand.stock_count,
        totals=totals,
        game_winners=game_winners,
        showdown=None if hand.outcome is None else showdown_of(hand.outcome, games),
    )


def seat_table(
    hand: HandState,
    seat: int,
    *,
    hand_number: int,
    totals: Totals,
    game_winners: tuple[int | None, ...],
    games: tuple[int, ...] = (),
) -> Table:
    """A seat's table, built from its observation alone (scores are public)."""
    view = observation(hand, seat)
    opponent = 1 - seat
    shown: CardSet | None = None
    if view.outcome is not None and not view.outcome.end.drawn:
        shown = view.outcome.hands[opponent]
    own = SeatHand(view.hand, len(view.hand), view.hand)
    other = SeatHand(shown, view.opponent_hand_size, shown or view.opponent_known)
    return Table(
        viewer=seat,
        hand_number=hand_number,
        dealer=view.dealer,
        phase=view.phase,
        to_move=view.to_move,
        hands=(own, other) if seat == 0 else (other, own),
        discard_pile=view.discard_pile,
        stock=None,
        stock_count=view.stock_count,
        totals=totals,
        game_winners=game_winners,
        showdown=None if view.outcome is None else showdown_of(view.outcome, games),
    )


def all_tables(
    hand: HandState,
    *,
    hand_number: int,
    totals: Totals,
    game_winners: tuple[int | None, ...],
    games: tuple[int, ...] = (),
) -> tuple[Table, Table, Table]:
    """The referee's table and each seat's."""
    seats = tuple(
        seat_table(
            hand,
            seat,
            hand_number=hand_number,
            totals=totals,
            game_winners=game_winners,
            games=games,
        )
        for seat in (0, 1)
    )
    referee = referee_table(
        hand, hand_number=hand_number, totals=totals, game_winners=game_winners, games=games
    )
    return (referee, seats[0], seats[1])
