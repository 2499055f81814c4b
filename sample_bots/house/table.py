"""house: one hand as the search sees it, on card masks, and the deals it imagines.

A :class:`Table` is a whole hand (both hands, the stock's order, the pile) that the search plays
forward fast: the rules' own helpers (``deadwood_of_mask``, ``knock_layout``, ``lay_off``,
``score_hand``) decide deadwood, layoffs and points, and the table only moves cards between
masks. Greedy's throw and take are the rules' choices found with fewer searches (remembered
deadwoods, suit look-ups when no set can form, a bound that stops early): some 1.8 times as many
played-out hands a second as with the rules' ``best_throw``. The referee's
:class:`~referee.rules.HandState` remains the one bookkeeping of a real hand; tests check that
the fast throw and take choose as the rules' do, and that greedy play on a table ends every hand
as it does on a ``HandState``.

:func:`imagine` builds a table from what one seat sees and nothing else: its own hand, the pile,
the cards the opponent took from it, the stock count. The opponent's other cards are drawn from
the unseen cards (biased towards the hands a player keeps, as the ``strong`` bot samples them),
the rest of the unseen cards make the stock, in a random order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.rules import (
    CARD_VALUES,
    Action,
    CardSet,
    Discard,
    DrawDiscard,
    DrawStock,
    Knock,
    Meld,
    Observation,
    PassUpcard,
    Phase,
    RuleParams,
    TakeUpcard,
    arrangement_of,
    deadwood_of_mask,
    knock_layout,
    lay_off,
    score_hand,
)
from sample_bots.strong.strategy import bits, read_board, sample_opponent

__all__ = ["Table", "imagine"]

SKILL = 0.7
"""Extra cards per opponent stock draw that an imagined opponent hand chooses its cards from
(see :func:`sample_bots.strong.strategy.sample_opponent`)."""


WARY_MARGIN = 5
"""Deadwood a wary play-out gives up to keep a card from the opponent who would take it."""

MEMO_LIMIT = 1 << 18
"""Hands whose deadwood :func:`deadwood` remembers before it starts afresh (a few tens of MB)."""

_memo: dict[int, int] = {}


def deadwood(mask: int) -> int:
    """:func:`~referee.rules.deadwood_of_mask`, remembered: play-outs of one decision meet the
    same hands again and again (our own hand, the opponent's early hands), so most lookups hit."""
    found = _memo.get(mask)
    if found is None:
        if len(_memo) >= MEMO_LIMIT:
            _memo.clear()
        found = _memo[mask] = deadwood_of_mask(mask)
    return found


LANE = 13
LANE_MASK = (1 << LANE) - 1
RUN_DEADWOOD = tuple(deadwood_of_mask(lane) for lane in range(1 << LANE))
"""Deadwood of the cards of one suit, by their 13-bit lane (within a suit only runs meld)."""


def set_ranks(hand: int) -> int:
    """The ranks of which ``hand`` holds three or four cards, as a lane."""
    c, d = hand & LANE_MASK, hand >> LANE & LANE_MASK
    h, s = hand >> 2 * LANE & LANE_MASK, hand >> 3 * LANE
    return (c & d & (h | s)) | (h & s & (c | d))


BY_VALUE = tuple(
    sum(1 << card for card in range(52) if CARD_VALUES[card] == value) for value in range(10, 0, -1)
)
"""The cards of each value, as masks, the highest value first."""


RANK_VALUES = tuple(min(rank + 1, 10) for rank in range(LANE))
NO_DROP = (1 << 30, 0, 0)


def _lane_drop(lane: int, allowed: int | None = None) -> tuple[int, int, int]:
    """The best card to take out of one suit's lane, among the ranks of ``allowed`` (by default
    all): ``(change of its deadwood, -value, rank)``, least first (the rules' order of throws
    within a suit); :data:`NO_DROP` when there is none."""
    ranks = lane if allowed is None else lane & allowed
    return min(
        (
            (RUN_DEADWOOD[lane ^ 1 << rank] - RUN_DEADWOOD[lane], -RANK_VALUES[rank], rank)
            for rank in range(LANE)
            if ranks >> rank & 1
        ),
        default=NO_DROP,
    )


LANE_DROP = (NO_DROP, *(_lane_drop(lane) for lane in range(1, 1 << LANE)))
"""Per lane, its best single throw (see :func:`_lane_drop`); an empty lane has none."""


def lanes_of(hand: int) -> list[int]:
    """The 13-bit lanes of a hand, clubs first."""
    return [hand & LANE_MASK, hand >> LANE & LANE_MASK, hand >> 2 * LANE & LANE_MASK, hand >> 39]


def lane_best_throw(hand: int, forbidden: int) -> tuple[int, int]:
    """:func:`best_throw` for a hand in which no rank is held three times: no set can form, so
    the hand's deadwood is the sum of its suits' and a throw changes only its own suit's; each
    suit's best throw is a table look-up (the suit of a forbidden card is searched)."""
    lanes = lanes_of(hand)
    best = (*NO_DROP, 0)
    for suit, lane in enumerate(lanes):
        banned = forbidden >> (suit * LANE) & lane
        change, value, rank = _lane_drop(lane, ~banned) if banned else LANE_DROP[lane]
        best = min(best, (change, value, suit, rank))  # the rules' order: card number last
    change, _, suit, rank = best
    return sum(RUN_DEADWOOD[lane] for lane in lanes) + change, suit * LANE + rank


def best_throw(hand: int, forbidden: int = 0) -> tuple[int, int]:
    """The rules' :func:`~referee.rules.best_throw`, faster: ``(deadwood after, card)`` with the
    same card on the same ties (least deadwood, then the highest card value, then the lowest
    card number).

    With sets possible it searches the throws from the highest value down and stops early:
    throwing a card leaves at least the hand's deadwood less the card's value (a layout of the
    ten is one of the eleven with that card unmatched).
    """
    if not set_ranks(hand):
        return lane_best_throw(hand, forbidden)
    candidates = hand & ~forbidden
    whole = deadwood(hand)
    best = (1 << 30, 0, 0)
    for value, group in zip(range(10, 0, -1), BY_VALUE, strict=True):
        if whole - value > best[0]:
            break
        for card in bits(candidates & group):
            key = (deadwood(hand ^ 1 << card), -value, card)
            best = min(best, key)
    return best[0], best[2]


def improves(hand: int, card: int) -> bool:
    """Whether taking ``card`` and then the best other throw lowers the deadwood of ``hand``
    (the rules' greedy test)."""
    now, taken = deadwood(hand), hand | 1 << card
    if not set_ranks(taken):
        return lane_best_throw(taken, 1 << card)[0] < now
    for value, group in zip(range(10, 0, -1), BY_VALUE, strict=True):
        if deadwood(taken) - value >= now:
            return False
        if any(deadwood(taken ^ 1 << other) < now for other in bits(hand & group)):
            return True
    return False


@dataclass(slots=True)
class Table:
    """A hand in play, everything known: cards as masks, the stock as a list in drawing order.

    Mutable: :meth:`apply` and :meth:`play_greedy` move it on; :meth:`copy` before trying an
    action on a table that is needed again.
    """

    hands: list[int]
    stock: list[int]
    """Cards still in the stock, the next draw last (so a draw is a ``pop``)."""
    pile: list[int]
    """The discard pile, the top card last."""
    to_move: int
    phase: Phase
    params: RuleParams
    taken: int = 0
    """The card taken from the pile this turn, as a mask (it may not be thrown this turn)."""
    passes: int = 0
    """Upcard passes so far; after two, the first draw must come from the stock."""
    stock_only: bool = False
    turns: int = 0
    winner: int | None = None
    points: int = 0

    @classmethod
    def deal(cls, deck: list[int], dealer: int, params: RuleParams) -> Table:
        """A fresh hand from a deck in dealing order (as :meth:`HandState.deal` takes it)."""
        hands = [0, 0]
        for index in range(20):
            seat = 1 - dealer if index % 2 == 0 else dealer
            hands[seat] |= 1 << deck[index]
        stock = list(reversed(deck[21:]))
        return cls(hands, stock, [deck[20]], 1 - dealer, Phase.UPCARD, params)

    def copy(self) -> Table:
        """An independent table in the same position."""
        return Table(
            list(self.hands),
            list(self.stock),
            list(self.pile),
            self.to_move,
            self.phase,
            self.params,
            self.taken,
            self.passes,
            self.stock_only,
            self.turns,
            self.winner,
            self.points,
        )

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase is Phase.OVER

    def points_for(self, seat: int) -> int:
        """The hand's points from ``seat``'s side: won positive, lost negative, drawn 0."""
        if self.winner is None:
            return 0
        return self.points if self.winner == seat else -self.points

    # --- moves -----------------------------------------------------------------------------------

    def apply(self, action: Action) -> None:
        """Play a legal action of the player to move (the caller keeps to the legal ones)."""
        if isinstance(action, PassUpcard):
            self.pass_upcard()
        elif isinstance(action, TakeUpcard | DrawDiscard):
            self.take_top()
        elif isinstance(action, DrawStock):
            self.draw_stock()
        elif isinstance(action, Knock):
            self.knock(action.card, action.melds)
        elif isinstance(action, Discard):
            self.discard(action.card)

    def pass_upcard(self) -> None:
        self.passes += 1
        self.to_move = 1 - self.to_move
        if self.passes == 2:
            self.phase, self.stock_only = Phase.DRAW, True

    def take_top(self) -> None:
        card = self.pile.pop()
        self.hands[self.to_move] |= 1 << card
        self.taken = 1 << card if self.params.no_rediscard else 0
        self.phase = Phase.DISCARD

    def draw_stock(self) -> None:
        self.hands[self.to_move] |= 1 << self.stock.pop()
        self.stock_only = False
        self.phase = Phase.DISCARD

    def discard(self, card: int) -> None:
        """Throw ``card``; the hand is drawn when the stock is down to its end or turns run out."""
        self.hands[self.to_move] &= ~(1 << card)
        self.pile.append(card)
        self.taken = 0
        self.turns += 1
        if len(self.stock) <= self.params.stock_end or self.turns >= self.params.turn_cap:
            self.phase = Phase.OVER
        else:
            self.to_move, self.phase = 1 - self.to_move, Phase.DRAW

    def knock(self, card: int, melds: tuple[CardSet | Meld, ...] | None = None) -> None:
        """Knock with ``card`` (the melds declared, or the referee's layout) and score the hand."""
        knocker = self.to_move
        kept = CardSet.of_mask(self.hands[knocker] & ~(1 << card))
        layout = knock_layout(kept) if melds is None else arrangement_of(kept, melds)
        defender = CardSet.of_mask(self.hands[1 - knocker])
        gin = layout.deadwood == 0
        theirs = (
            deadwood_of_mask(defender.mask) if gin else lay_off(layout.melds, defender).deadwood
        )
        side, self.points = score_hand(layout.deadwood, theirs, gin, self.params)
        self.winner = knocker if side == "knocker" else 1 - knocker
        self.hands[knocker] &= ~(1 << card)
        self.turns += 1
        self.phase = Phase.OVER

    # --- greedy play -----------------------------------------------------------------------------

    def improves(self, card: int) -> bool:
        """Whether the player to move lowers its deadwood by taking ``card`` (greedy's test)."""
        return improves(self.hands[self.to_move], card)

    def greedy_move(self) -> None:
        """One move of the rules' ``greedy_policy``: take a card only if it lowers the deadwood,
        throw the card that leaves the least, knock at the first chance."""
        if self.phase is Phase.UPCARD:
            self.take_top() if self.improves(self.pile[-1]) else self.pass_upcard()
        elif self.phase is Phase.DRAW:
            use_pile = not self.stock_only and self.improves(self.pile[-1])
            self.take_top() if use_pile else self.draw_stock()
        else:
            after, card = best_throw(self.hands[self.to_move], self.taken)
            if after <= self.params.knock_limit:
                self.knock(card)
            else:
                self.discard(card)

    def wary_move(self) -> None:
        """One move of the wary play-out: greedy's, except that a throw that would join a meld
        in the opponent's hand gives way to the least-deadwood throw that would not, if that
        leaves at most :data:`WARY_MARGIN` more deadwood (``strong`` weighs the same risk from
        what it can see; the play-out reads the opponent's imagined hand)."""
        if self.phase is not Phase.DISCARD:
            self.greedy_move()
            return
        hand, limit = self.hands[self.to_move], self.params.knock_limit
        after, card = best_throw(hand, self.taken)
        if after <= limit:
            self.knock(card)
            return
        self.discard(safe_throw(hand, self.taken, self.hands[1 - self.to_move], (after, card)))

    def play_out(self, wary: bool = False) -> Table:
        """Play the hand to its end, both seats greedy (or wary); returns the table."""
        move = self.wary_move if wary else self.greedy_move
        while self.phase is not Phase.OVER:
            move()
        return self

    def play_greedy(self) -> Table:
        """Play the hand to its end with both seats greedy; returns the table."""
        return self.play_out()


def safe_throw(hand: int, forbidden: int, opponent: int, best: tuple[int, int]) -> int:
    """The throw of :meth:`Table.wary_move`: ``best`` (greedy's, ``(deadwood after, card)``)
    unless it :func:`feeds` ``opponent``, then the least-deadwood throw within
    :data:`WARY_MARGIN` that does not (ties as the rules break them), else ``best``."""
    after, card = best
    if not feeds(opponent, card):
        return card
    others = sorted(
        (deadwood(hand ^ 1 << other), -CARD_VALUES[other], other)
        for other in bits(hand & ~forbidden & ~(1 << card))
    )
    for left, _, other in others:
        if left > after + WARY_MARGIN:
            break
        if not feeds(opponent, other):
            return other
    return card


def feeds(hand: int, card: int) -> bool:
    """Whether ``card`` would join a meld in ``hand``: with it, the least deadwood grows by
    less than the card's value."""
    return deadwood(hand | 1 << card) < deadwood(hand) + CARD_VALUES[card]


def imagine(view: Observation, rng: random.Random) -> Table:
    """A whole hand consistent with everything ``view`` shows (and with nothing else).

    The opponent holds the cards it took from the pile and still has, plus unseen cards drawn
    by :func:`~sample_bots.strong.strategy.sample_opponent`; the stock is the other unseen cards,
    shuffled. Only the view is read, so two states that look the same to this seat give the
    same tables from the same generator.
    """
    board = read_board(view)
    opponent = sample_opponent(board, SKILL, rng)
    stock = bits(board.unseen & ~opponent)
    rng.shuffle(stock)
    hands = [0, 0]
    hands[view.seat], hands[view.opponent] = board.hand, opponent
    taken = 0 if view.taken_this_turn is None else 1 << view.taken_this_turn
    passes = sum(isinstance(event.action, PassUpcard) for event in view.history)
    stock_only = passes == 2 and not any(isinstance(e.action, DrawStock) for e in view.history)
    return Table(
        hands,
        stock,
        list(view.discard_pile),
        view.to_move,
        view.phase,
        view.params,
        taken if view.params.no_rediscard else 0,
        passes,
        stock_only,
        view.turns,
    )
