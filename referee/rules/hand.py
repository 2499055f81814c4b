"""One hand of Gin as an explicit state machine: deal, upcard offer, turns, knock, showdown.

The state holds everything (the stock order, both hands); :func:`referee.rules.observation`
decides what a seat may see. Every action is checked by :meth:`HandState.verify` before
anything changes, and :meth:`HandState.apply` returns a frozen record of what happened.

>>> state = HandState.deal(shuffled_deck(7, 0), dealer=0)
>>> state.phase.name, state.to_move, len(state.hands[1]), state.stock_count
('UPCARD', 1, 10, 31)
>>> [str(action) for action in state.legal_actions()]
['take upcard', 'pass upcard']
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from referee.rules.cards import CARDS, Card, CardSet, format_cards, iter_cards
from referee.rules.layoffs import DefenderLayout, lay_off, no_layoffs
from referee.rules.melds import (
    Arrangement,
    Meld,
    arrangement_of,
    knock_discards,
    knock_layout,
)
from referee.rules.params import RuleParams
from referee.rules.scoring import DEFAULT_PARAMS, score_hand


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state; the message says why."""


class Phase(enum.Enum):
    """What the player to move must decide."""

    UPCARD = "upcard"
    """Take the upcard or pass (the first turn's offer)."""
    DRAW = "draw"
    """Draw from the stock or the discard pile."""
    DISCARD = "discard"
    """Discard a card, or knock."""
    OVER = "over"
    """The hand has ended; see :attr:`HandState.outcome`."""


class HandEnd(enum.Enum):
    """Why a hand ended."""

    GIN = "gin"
    KNOCK = "knock"
    UNDERCUT = "undercut"
    STOCK_EXHAUSTED = "stock_exhausted"
    """Drawn: a discard left only ``stock_end`` cards in the stock."""
    TURN_CAP = "turn_cap"
    """Drawn: the hand reached the turn cap (marked capped in logs)."""

    @property
    def drawn(self) -> bool:
        """Whether nobody scores."""
        return self in (HandEnd.STOCK_EXHAUSTED, HandEnd.TURN_CAP)


# --- actions -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TakeUpcard:
    """Take the upcard during the first turn's offer (then discard or knock)."""

    def __str__(self) -> str:
        return "take upcard"


@dataclass(frozen=True, slots=True)
class PassUpcard:
    """Decline the upcard during the first turn's offer."""

    def __str__(self) -> str:
        return "pass upcard"


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Draw the top card of the stock."""

    def __str__(self) -> str:
        return "draw stock"


@dataclass(frozen=True, slots=True)
class DrawDiscard:
    """Draw the top card of the discard pile."""

    def __str__(self) -> str:
        return "draw discard"


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard a card face up, ending the turn."""

    card: Card

    def __str__(self) -> str:
        return f"discard {self.card}"


@dataclass(frozen=True, slots=True)
class Knock:
    """Discard ``card`` and knock, optionally declaring the melds of the ten cards kept.

    Without ``melds`` the referee lays the cards out (see :func:`knock_layout`). A knock that
    leaves deadwood 0 is gin.
    """

    card: Card
    melds: tuple[CardSet | Meld, ...] | None = None

    def __str__(self) -> str:
        if self.melds is None:
            return f"knock {self.card}"
        declared = " | ".join(format_cards(meld) for meld in self.melds)
        return f"knock {self.card} [{declared}]"


Action = TakeUpcard | PassUpcard | DrawStock | DrawDiscard | Discard | Knock

TAKE_UPCARD: Final = TakeUpcard()
PASS_UPCARD: Final = PassUpcard()
DRAW_STOCK: Final = DrawStock()
DRAW_DISCARD: Final = DrawDiscard()
DISCARDS: Final = tuple(Discard(card) for card in CARDS)
"""The discard of each card number: the objects :func:`legal_actions` lists."""
KNOCKS: Final = tuple(Knock(card) for card in CARDS)
"""The knock (melds left to the referee) of each card number, as :func:`legal_actions` lists."""


# --- records -----------------------------------------------------------------------------------


class Event(NamedTuple):
    """What one action did, seen by the referee (the card drawn from the stock included)."""

    seat: int
    action: Action
    card: Card | None
    """The card taken (upcard or draw) or thrown (discard or knock); ``None`` for a pass."""


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """One action as a seat saw it: ``card`` is ``None`` for the opponent's stock draw."""

    seat: int
    action: Action
    card: Card | None


def public_view(event: Event, seat: int) -> PublicEvent:
    """What ``seat`` sees of an action: everything but the card of the opponent's stock draw.

    >>> drawn = Event(1, DRAW_STOCK, CARDS[0])
    >>> public_view(drawn, seat=0).card, public_view(drawn, seat=1).card
    (None, Card('Ac'))
    """
    hidden = event.seat != seat and isinstance(event.action, DrawStock)
    return PublicEvent(event.seat, event.action, None if hidden else event.card)


@dataclass(frozen=True, slots=True)
class HandOutcome:
    """How a hand ended, with the showdown when someone knocked."""

    end: HandEnd
    winner: int | None
    """The seat that scores (``None`` for a drawn hand)."""
    points: int
    knocker: int | None
    knocker_layout: Arrangement | None
    defender_layout: DefenderLayout | None
    hands: tuple[CardSet, CardSet]
    """Both seats' cards at the end (the knocker's without the knock discard)."""
    turns: int


# --- the deck ----------------------------------------------------------------------------------

_DECK_DOMAIN: Final = b"hollywood-gin/deck/v1"


def _seed_bytes(seed: int) -> bytes:
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed}")
    return seed.to_bytes(max(1, (seed.bit_length() + 7) // 8), "big")


def shuffled_deck(seed: int, hand_number: int) -> tuple[Card, ...]:
    """The shuffle of one hand of a series: the 52 cards in an order fixed by the seed and the
    hand number. :func:`dealt_deck` turns it into the dealing order.

    A Fisher-Yates shuffle driven by SHA-256 of ``(seed, hand_number)`` in counter mode, with
    rejection sampling so every order is equally likely. It is the same in any language and
    Python version, so a log's seed alone rebuilds every deck.

    >>> deck = shuffled_deck(42, 0)
    >>> len(set(deck)), deck == shuffled_deck(42, 0), deck == shuffled_deck(42, 1)
    (52, True, False)

    Raises:
        ValueError: a negative seed or hand number.
    """
    if hand_number < 0:
        raise ValueError(f"hand number must be non-negative, not {hand_number}")
    import hashlib  # noqa: PLC0415 - deferred: ~4 ms to import, and only the referee deals

    key = _DECK_DOMAIN + _seed_bytes(seed) + b"/" + hand_number.to_bytes(8, "big")
    counter = 0
    pool = b""
    cards = list(range(52))
    for top in range(51, 0, -1):
        bound = top + 1
        limit = 65536 - 65536 % bound
        while True:
            if len(pool) < 2:
                pool = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
                counter += 1
            draw, pool = int.from_bytes(pool[:2], "big"), pool[2:]
            if draw < limit:
                break
        pick = draw % bound
        cards[top], cards[pick] = cards[pick], cards[top]
    return tuple(CARDS[card] for card in cards)


class Dealing(enum.Enum):
    """Which of a hand's shuffled cards each player receives.

    The shuffle (:func:`shuffled_deck`) fixes 52 positions; a dealing rule says which positions
    make up whose hand. Under either rule position 20 is the upcard and positions 21 to 51 the
    stock, in drawing order.
    """

    BY_SEAT = "by_seat"
    """Seat 0 receives positions 0, 2, .., 18 and seat 1 positions 1, 3, .., 19, whoever deals.
    The rule of log format 3 on: in a duplicate pair (one seed, seats swapped) each bot then
    holds, hand by hand, the cards its opponent held in the other leg."""
    BY_DEALER = "by_dealer"
    """The shuffle is the dealing order: the non-dealer receives positions 0, 2, .., 18. The
    rule of log formats 1 and 2; as the winner of a hand deals the next, a bot that won the
    same hand in both legs of a pair was dealt the same cards again in both."""


def dealt_deck(
    seed: int, hand_number: int, dealer: int, dealing: Dealing = Dealing.BY_SEAT
) -> tuple[Card, ...]:
    """The deck of one hand of a series in dealing order (what :meth:`HandState.deal` takes):
    the shuffle of ``(seed, hand_number)`` with its first twenty cards given out by ``dealing``.

    Under :attr:`Dealing.BY_SEAT` the same seat holds the same cards whoever deals:

    >>> by_seat = [HandState.deal(dealt_deck(5, 0, dealer), dealer).hands for dealer in (0, 1)]
    >>> by_seat[0] == by_seat[1]
    True
    >>> by_dealer = [
    ...     HandState.deal(dealt_deck(5, 0, dealer, Dealing.BY_DEALER), dealer).hands
    ...     for dealer in (0, 1)
    ... ]
    >>> by_dealer[0] == by_dealer[1][::-1]
    True
    >>> dealt_deck(5, 0, 1) == shuffled_deck(5, 0) == dealt_deck(5, 0, 0, Dealing.BY_DEALER)
    True

    Raises:
        ValueError: a negative seed or hand number, or a dealer that is not seat 0 or 1.
    """
    if dealer not in (0, 1):
        raise ValueError(f"dealer must be seat 0 or 1, not {dealer!r}")
    deck = shuffled_deck(seed, hand_number)
    if dealing is Dealing.BY_DEALER or dealer == 1:
        return deck  # the non-dealer, first to receive, is seat 0: the shuffle's even positions
    swapped = [card for index in range(0, 20, 2) for card in (deck[index + 1], deck[index])]
    return (*swapped, *deck[20:])


_COMMITMENT_DOMAIN: Final = b"hollywood-gin/deck-commitment/v2/"


def deck_commitment(deck: Sequence[int], salt: bytes | None = None) -> str:
    """SHA-256 hex of a deck's order, salted: published before a hand, checkable after it.

    The salt (secret until the hand's end, 16 random-looking bytes per hand) is what stops a
    seat from testing guesses of the seed against the commitment it is shown. ``None`` is the
    unsalted commitment of format-1 logs, kept so they still verify.

    >>> deck = shuffled_deck(1, 0)
    >>> one, other = deck_commitment(deck, bytes(16)), deck_commitment(deck, b"x" * 16)
    >>> len(one), one == other
    (64, False)
    """
    import hashlib  # noqa: PLC0415 - deferred, see shuffled_deck

    if salt is None:
        return hashlib.sha256(bytes(deck)).hexdigest()
    return hashlib.sha256(_COMMITMENT_DOMAIN + salt + bytes(deck)).hexdigest()


# --- the state machine -------------------------------------------------------------------------


class HandState:
    """The full state of one hand. Mutable; changed only through :meth:`apply`."""

    def __init__(self, deck: Sequence[int], dealer: int, params: RuleParams) -> None:
        if sorted(deck) != list(range(52)):
            raise ValueError("a deck must hold each of the 52 cards exactly once")
        if dealer not in (0, 1):
            raise ValueError(f"dealer must be seat 0 or 1, not {dealer!r}")
        self.params = params
        self.dealer = dealer
        self.deck = tuple(CARDS[card] for card in deck)
        non_dealer = 1 - dealer
        hands = [0, 0]
        for index in range(20):
            seat = non_dealer if index % 2 == 0 else dealer
            hands[seat] |= 1 << deck[index]
        self._hands = hands
        self._stock = self.deck[21:]
        self._stock_next = 0
        self._pile: list[Card] = [self.deck[20]]
        self.phase = Phase.UPCARD
        self.to_move = non_dealer
        self.turns = 0
        self._passes = 0
        self._stock_only = False
        self._taken = 0
        self._took: tuple[list[Card], list[Card]] = ([], [])
        self._known = [0, 0]
        """Per seat: cards it took from the pile and still holds (public knowledge)."""
        self._views: tuple[list[PublicEvent], list[PublicEvent]] = ([], [])
        """Per seat: the history as that seat saw it, kept as the hand goes."""
        self._history: list[Event] = []
        self.outcome: HandOutcome | None = None

    @classmethod
    def deal(
        cls, deck: Sequence[int], dealer: int, params: RuleParams = DEFAULT_PARAMS
    ) -> HandState:
        """Deal a hand from a deck in dealing order: ten cards each, one at a time from the
        non-dealer, then the upcard; the rest is the stock. :func:`dealt_deck` gives a series'
        decks in this order.

        Raises:
            ValueError: the deck is not the 52 cards once each, or the dealer is not 0 or 1.
        """
        return cls(deck, dealer, params)

    # --- what anyone may ask -------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase is Phase.OVER

    @property
    def hands(self) -> tuple[CardSet, CardSet]:
        """Both seats' cards (referee's view)."""
        return (CardSet.of_mask(self._hands[0]), CardSet.of_mask(self._hands[1]))

    def cards_of(self, seat: int) -> CardSet:
        """One seat's cards (``hands[seat]`` without making both sets)."""
        return CardSet.of_mask(self._hands[seat])

    def hand_size(self, seat: int) -> int:
        """How many cards ``seat`` holds."""
        return self._hands[seat].bit_count()

    @property
    def stock(self) -> tuple[Card, ...]:
        """The stock in drawing order (referee's view)."""
        return self._stock[self._stock_next :]

    @property
    def stock_count(self) -> int:
        """Cards left in the stock."""
        return len(self._stock) - self._stock_next

    @property
    def discard_pile(self) -> tuple[Card, ...]:
        """The discard pile, bottom first (the last card is the top)."""
        return tuple(self._pile)

    @property
    def history(self) -> tuple[Event, ...]:
        """Every action so far, in order."""
        return tuple(self._history)

    @property
    def taken_this_turn(self) -> Card | None:
        """The card the player to move took from the discard pile this turn, if any."""
        return CARDS[self._taken.bit_length() - 1] if self._taken else None

    def took_from_pile(self, seat: int) -> tuple[Card, ...]:
        """Every card ``seat`` took from the discard pile this hand (public knowledge)."""
        return tuple(self._took[seat])

    def known_cards(self, seat: int) -> CardSet:
        """The cards ``seat`` took from the pile and still holds (public knowledge)."""
        return CardSet.of_mask(self._known[seat])

    def seen_history(self, seat: int) -> tuple[PublicEvent, ...]:
        """This hand's actions as ``seat`` saw them (see :func:`public_view`)."""
        return tuple(self._views[seat])

    def legal_actions(self) -> list[Action]:
        """Every legal action of the player to move (empty once the hand is over).

        In the discard phase this lists each allowed discard, then a knock (without declared
        melds) for each discard that leaves deadwood within the knock limit.
        """
        phase = self.phase
        if phase is Phase.DRAW:
            return [DRAW_STOCK] if self._stock_only else [DRAW_STOCK, DRAW_DISCARD]
        if phase is Phase.DISCARD:
            hand = self._hands[self.to_move]
            forbidden = self._taken if self.params.no_rediscard else 0
            actions: list[Action] = [DISCARDS[card] for card in iter_cards(hand & ~forbidden)]
            for card in knock_discards(hand, self.params.knock_limit, forbidden):
                actions.append(KNOCKS[card])
            return actions
        if phase is Phase.UPCARD:
            return [TAKE_UPCARD, PASS_UPCARD]
        return []

    # --- checking and applying -----------------------------------------------------------------

    def verify(self, action: Action) -> None:
        """Check that ``action`` is legal now, without changing anything.

        Raises:
            IllegalActionError: with a sentence saying why it is not.
        """
        self._check(action)

    def _check(self, action: Action) -> Arrangement | None:
        """Raise unless ``action`` is legal; for a knock, return the knocker's layout."""
        phase = self.phase
        if phase is Phase.OVER:
            raise IllegalActionError("the hand is over")
        if not isinstance(action, _PHASE_ACTIONS[phase]):
            raise IllegalActionError(
                f"{action} is not allowed now: seat {self.to_move} must {_PHASE_WORDS[phase]}"
            )
        if isinstance(action, DrawDiscard) and self._stock_only:
            raise IllegalActionError(
                "both players passed the upcard, so the first draw must come from the stock"
            )
        if isinstance(action, Discard | Knock):
            self._verify_throw(action.card)
        if isinstance(action, Knock):
            return self._knock_layout(action)
        return None

    def _verify_throw(self, card: int) -> None:
        if not isinstance(card, int) or not 0 <= card < 52:
            raise IllegalActionError(f"not a card: {card!r}")
        if not self._hands[self.to_move] >> card & 1:
            raise IllegalActionError(f"{CARDS[card]} is not in seat {self.to_move}'s hand")
        if self.params.no_rediscard and self._taken >> card & 1:
            raise IllegalActionError(
                f"{CARDS[card]} was just taken from the discard pile and "
                "may not be discarded this turn"
            )

    def _knock_layout(self, action: Knock) -> Arrangement:
        kept = self._hands[self.to_move] & ~(1 << action.card)
        if action.melds is None:
            layout = knock_layout(CardSet.of_mask(kept))
        else:
            try:
                layout = arrangement_of(CardSet.of_mask(kept), action.melds)
            except ValueError as error:
                raise IllegalActionError(
                    f"declared knock arrangement is invalid: {error}"
                ) from None
        if layout.deadwood > self.params.knock_limit:
            raise IllegalActionError(
                f"cannot knock: deadwood after discarding {action.card} would be "
                f"{layout.deadwood} ({layout.deadwood_cards}), over the limit of "
                f"{self.params.knock_limit}"
            )
        return layout

    def apply(self, action: Action) -> Event:
        """Check and play ``action`` for the player to move; returns what happened.

        Raises:
            IllegalActionError: the action is not legal now (nothing is changed).
        """
        layout = self._check(action)
        if isinstance(action, Discard):
            return self._discard(action.card)
        if isinstance(action, DrawStock):
            return self._draw_stock()
        if isinstance(action, DrawDiscard | TakeUpcard):
            return self._take_from_pile(action)
        if isinstance(action, Knock):
            assert layout is not None
            return self._knock(action, layout)
        return self._pass_upcard()

    def _record(self, action: Action, card: Card | None) -> Event:
        event = Event(self.to_move, action, card)
        self._history.append(event)
        for seat in (0, 1):
            self._views[seat].append(public_view(event, seat))
        if card is not None:
            if isinstance(action, TakeUpcard | DrawDiscard):
                self._known[self.to_move] |= 1 << card
            elif isinstance(action, Discard | Knock):
                self._known[self.to_move] &= ~(1 << card)
        return event

    def _pass_upcard(self) -> Event:
        event = self._record(PASS_UPCARD, None)
        self._passes += 1
        self.to_move = 1 - self.to_move
        if self._passes == 2:
            self.phase = Phase.DRAW
            self._stock_only = True
        return event

    def _take_from_pile(self, action: Action) -> Event:
        card = self._pile.pop()
        self._hands[self.to_move] |= 1 << card
        self._taken = 1 << card
        self._took[self.to_move].append(card)
        self.phase = Phase.DISCARD
        return self._record(action, card)

    def _draw_stock(self) -> Event:
        card = self._stock[self._stock_next]
        self._stock_next += 1
        self._hands[self.to_move] |= 1 << card
        self._stock_only = False
        self.phase = Phase.DISCARD
        return self._record(DRAW_STOCK, card)

    def _discard(self, card: Card) -> Event:
        card = CARDS[card]
        event = self._record(DISCARDS[card], card)
        self._hands[self.to_move] &= ~(1 << card)
        self._pile.append(card)
        self._taken = 0
        self.turns += 1
        if self.stock_count <= self.params.stock_end:
            self._end_drawn(HandEnd.STOCK_EXHAUSTED)
        elif self.turns >= self.params.turn_cap:
            self._end_drawn(HandEnd.TURN_CAP)
        else:
            self.to_move = 1 - self.to_move
            self.phase = Phase.DRAW
        return event

    def _end_drawn(self, end: HandEnd) -> None:
        self.phase = Phase.OVER
        self.outcome = HandOutcome(end, None, 0, None, None, None, self.hands, self.turns)

    def _knock(self, action: Knock, layout: Arrangement) -> Event:
        card = CARDS[action.card]
        knocker = self.to_move
        event = self._record(action, card)
        self._hands[knocker] &= ~(1 << card)
        self._pile.append(card)
        self._taken = 0
        self.turns += 1
        defender_cards = CardSet.of_mask(self._hands[1 - knocker])
        gin = layout.deadwood == 0
        defence = no_layoffs(defender_cards) if gin else lay_off(layout.melds, defender_cards)
        side, points = score_hand(layout.deadwood, defence.deadwood, gin, self.params)
        if gin:
            end = HandEnd.GIN
        else:
            end = HandEnd.KNOCK if side == "knocker" else HandEnd.UNDERCUT
        winner = knocker if side == "knocker" else 1 - knocker
        self.phase = Phase.OVER
        self.outcome = HandOutcome(
            end, winner, points, knocker, layout, defence, self.hands, self.turns
        )
        return event

    def __repr__(self) -> str:
        return (
            f"HandState(phase={self.phase.name}, to_move={self.to_move}, "
            f"hands=({self.hands[0]} / {self.hands[1]}), stock={self.stock_count}, "
            f"pile_top={self._pile[-1] if self._pile else None})"
        )


_PHASE_ACTIONS: Final[dict[Phase, tuple[type, ...]]] = {
    Phase.UPCARD: (TakeUpcard, PassUpcard),
    Phase.DRAW: (DrawStock, DrawDiscard),
    Phase.DISCARD: (Discard, Knock),
}

_PHASE_WORDS: Final = {
    Phase.UPCARD: "take or pass the upcard",
    Phase.DRAW: "draw from the stock or the discard pile",
    Phase.DISCARD: "discard a card or knock",
}
