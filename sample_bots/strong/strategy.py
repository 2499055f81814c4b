"""strong: the decision logic of the ``strong`` sample bot, as a pure policy.

Everything a seat can see is used; see StrongPolicy and Evaluator for how.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from referee.rules import (
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Discard,
    DrawDiscard,
    DrawStock,
    Knock,
    Observation,
    PassUpcard,
    Phase,
    TakeUpcard,
)
from referee.rules.cards import CARD_VALUES, CARDS, CardSet
from referee.rules.melds import (
    deadwood_of_mask,
    discard_deadwoods,
    min_deadwood,
    optimal_meld_groups,
)

LANE = 13
LANE_BITS = (1 << LANE) - 1
FULL_DECK = (1 << 52) - 1
SUITS_OF_RANK = tuple(sum(1 << (s * LANE + r) for s in range(4)) for r in range(LANE))
_LOW = [sum(((1 << k) - 1) << (s * LANE) for s in range(4)) for k in range(3)]
_HIGH = [sum((((1 << k) - 1) << (LANE - k)) << (s * LANE) for s in range(4)) for k in range(3)]


def bits(mask: int) -> list[int]:
    """Card numbers of a mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def neighbours(mask: int) -> int:
    """Cards that could join a meld with some card of ``mask``: same rank, or same suit within
    two ranks. A card outside this mask can only lower deadwood by replacing a higher card."""
    ranks = (mask | mask >> LANE | mask >> 2 * LANE | mask >> 3 * LANE) & LANE_BITS
    out = ranks | ranks << LANE | ranks << 2 * LANE | ranks << 3 * LANE
    for k in (1, 2):
        out |= (mask << k) & ~_LOW[k] & FULL_DECK
        out |= (mask >> k) & ~_HIGH[k]
    return out & ~mask


def best_after_draw(hand: int) -> int:
    """Deadwood of an 11-card hand after throwing the highest unmatched card of one best
    arrangement (all melded: some meld has four cards and can spare one)."""
    layout = min_deadwood(CardSet.of_mask(hand))
    if not layout.unmatched:
        return 0
    return layout.deadwood - max(CARD_VALUES[c] for c in bits(layout.unmatched))


@dataclass(frozen=True, slots=True)
class Tuning:
    """The weights of the strategy (defaults are the tuned ones)."""

    potential: float = 1.0
    """How much one stock draw's expected deadwood gain counts in a hand's value."""
    danger: float = 8.0
    """Deadwood points a discard costs per unit of chance that it completes an opponent meld."""
    take_margin: float = 0.0
    """Extra gain a pile card must offer over a stock draw (taking shows the card)."""
    prune: int = 10
    exact: bool = False
    knock_bonus: float = 0.0
    horizon: float = 0.0
    two_level: bool = False


@dataclass(frozen=True, slots=True)
class Board:
    """What one seat knows of where the cards are."""

    hand: int
    pile: int
    top: int | None
    opp_known: int
    unseen: int
    opp_hidden: int
    rejected: int
    stock: int
    knock_limit: int

    @property
    def p_hidden(self) -> float:
        """Chance that one unseen card is in the opponent's hand (not in the stock)."""
        n = self.unseen.bit_count()
        return self.opp_hidden / n if n else 0.0

    def p_opp(self, card: int) -> float:
        """Chance the opponent holds ``card``."""
        if self.opp_known >> card & 1:
            return 1.0
        if self.unseen >> card & 1:
            return self.p_hidden
        return 0.0


def read_board(view: Observation) -> Board:
    """Collect what the seat knows: dead cards, the opponent's known cards and what they threw
    or declined (a card they did not want rarely completes one of their melds)."""
    hand = view.hand.mask
    pile = 0
    for card in view.discard_pile:
        pile |= 1 << card
    known = view.opponent_known.mask
    rejected = 0
    sentinel = -1
    stack: list[int] = [sentinel]
    upcard: int | None = None
    declined_upcard = False
    stock_only = False
    passes = 0
    for event in view.history:
        action = event.action
        mine = event.seat == view.seat
        if isinstance(action, PassUpcard):
            passes += 1
            stock_only = passes == 2
            if not mine:
                declined_upcard = True
        elif isinstance(action, TakeUpcard | DrawDiscard):
            taken = stack.pop()
            if taken == sentinel:
                upcard = event.card
        elif isinstance(action, DrawStock):
            if not mine and not stock_only and stack and stack[-1] != sentinel:
                rejected |= 1 << stack[-1]
            stock_only = False
        elif isinstance(action, Discard | Knock) and event.card is not None:
            stack.append(event.card)
            if not mine:
                rejected |= 1 << event.card
    if upcard is None and view.discard_pile and sentinel in stack:
        upcard = view.discard_pile[0]
    if declined_upcard and upcard is not None:
        rejected |= 1 << upcard
    unseen = FULL_DECK & ~hand & ~pile & ~known
    hidden = view.opponent_hand_size - known.bit_count()
    top = view.discard_pile[-1] if view.discard_pile else None
    return Board(
        hand,
        pile,
        top,
        known,
        unseen,
        hidden,
        rejected & ~known,
        view.stock_count,
        view.params.knock_limit,
    )


class Evaluator:
    """Values of 10-card hands for one decision (memoised: the same hands come up often)."""

    def __init__(self, board: Board, tuning: Tuning, turns: int = 0) -> None:
        self.board = board
        self.tuning = tuning
        weight = tuning.potential
        if tuning.horizon > 0:
            weight *= max(0.0, 1 - turns / tuning.horizon)
        self.weight = weight
        self.live = bits(board.unseen)
        self.memo: dict[int, tuple[int, float]] = {}

    def analyse(self, hand: int) -> tuple[int, float]:
        """Deadwood of a 10-card hand and the expected deadwood gain of one stock draw."""
        cached = self.memo.get(hand)
        if cached is not None:
            return cached
        layout = min_deadwood(CardSet.of_mask(hand))
        base = layout.deadwood
        removable = max((CARD_VALUES[c] for c in bits(layout.unmatched)), default=0)
        near = neighbours(hand)
        exact = self.tuning.exact
        total = 0.0
        bonus = self.tuning.knock_bonus
        limit = self.board.knock_limit
        for card in self.live:
            if near >> card & 1:
                if exact:
                    after = discard_deadwoods(hand | 1 << card)[0]
                else:
                    after = best_after_draw(hand | 1 << card)
                if after < base:
                    total += base - after
                    if after <= limit < base:
                        total += bonus
            else:
                gain = removable - CARD_VALUES[card]
                if gain > 0:
                    total += gain
                    if base - gain <= limit < base:
                        total += bonus
        result = (base, total / max(1, len(self.live)))
        self.memo[hand] = result
        return result

    def value(self, hand: int) -> float:
        """Deadwood now, less the weighted expected gain of a stock draw (lower is better)."""
        base, gain = self.analyse(hand)
        return base - self.weight * gain

    def danger(self, card: int) -> float:
        """Chance that ``card`` completes a meld for the opponent, from the cards they may hold.

        Evidence lowers it: if they threw or declined a card of the same rank, they are not
        collecting that rank; likewise for a same-suit card next to it.
        """
        board = self.board
        rank, suit = card % LANE, card // LANE
        others = [board.p_opp(c) for c in bits(SUITS_OF_RANK[rank] & ~(1 << card))]
        p_set = 0.0
        if len(others) == 3:
            a, b, c = others
            p_set = a * b + a * c + b * c - 2 * a * b * c
        if board.rejected & SUITS_OF_RANK[rank]:
            p_set *= 0.4

        def p(offset: int) -> float:
            r = rank + offset
            return board.p_opp(suit * LANE + r) if 0 <= r < LANE else 0.0

        m2, m1, p1, p2 = p(-2), p(-1), p(1), p(2)
        miss = (1 - m2 * m1) * (1 - m1 * p1) * (1 - p1 * p2)
        p_run = 1 - miss
        lane = board.rejected >> (suit * LANE) & LANE_BITS
        if lane and (lane >> max(0, rank - 1)) & 0b111:
            p_run *= 0.5
        return 1 - (1 - p_set) * (1 - p_run)

    def discard_score(self, hand: int, card: int) -> float:
        """What throwing ``card`` from an 11-card hand leaves us, danger to us included."""
        return self.value(hand ^ 1 << card) + self.tuning.danger * self.danger(card)

    def best_discard(self, hand: int, forbidden: int) -> tuple[float, int]:
        """The best throw of an 11-card hand and its score. Throws that break a meld (plain
        deadwood far above the best throw's) are not worth valuing."""
        plain = [(deadwood_of_mask(hand ^ 1 << c), c) for c in bits(hand & ~forbidden)]
        floor = min(plain)[0] + self.tuning.prune
        return min((self.discard_score(hand, c), c) for d, c in plain if d <= floor)

    def expected_layoffs(self, melds: Sequence[int]) -> float:
        """Deadwood the defender is expected to lay off onto these melds."""
        board = self.board
        total = 0.0
        for meld in melds:
            low = (meld & -meld).bit_length() - 1
            high = meld.bit_length() - 1
            if low % LANE == high % LANE:  # a set
                if meld.bit_count() == 3:
                    fourth = (SUITS_OF_RANK[low % LANE] & ~meld).bit_length() - 1
                    total += board.p_opp(fourth) * CARD_VALUES[fourth]
                continue
            chance = 1.0
            card = low - 1
            while card >= 0 and card // LANE == low // LANE:
                chance *= board.p_opp(card)
                if chance < 0.01:
                    break
                total += chance * CARD_VALUES[card]
                card -= 1
            chance = 1.0
            card = high + 1
            while card // LANE == high // LANE and card < 52:
                chance *= board.p_opp(card)
                if chance < 0.01:
                    break
                total += chance * CARD_VALUES[card]
                card += 1
        return total


def best_knock(ev: Evaluator, hand: int, cards: Sequence[int]) -> tuple[float, Knock]:
    """The knock (discard and declared melds) that leaves the least deadwood plus expected
    layoffs. Scores are in deadwood points; lower is better."""
    best: tuple[float, Knock] | None = None
    for card in cards:
        kept = hand ^ 1 << card
        for group in optimal_meld_groups(kept):
            melded = 0
            for meld in group:
                melded |= meld
            deadwood = sum(CARD_VALUES[c] for c in bits(kept & ~melded))
            score = deadwood + ev.expected_layoffs(group)
            if best is None or score < best[0]:
                melds = tuple(CardSet.of_mask(m) for m in group)
                best = (score, Knock(CARDS[card], melds))
    assert best is not None
    return best


class StrongPolicy:
    """Plays for meld potential and safety; knocks with the layout that invites fewest layoffs."""

    def __init__(self, tuning: Tuning | None = None) -> None:
        self.tuning = tuning or Tuning()

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        board = read_board(view)
        ev = Evaluator(board, self.tuning, view.turns)
        if view.phase is Phase.UPCARD:
            return TAKE_UPCARD if self.wants_top(ev, board) else PASS_UPCARD
        if view.phase is Phase.DRAW:
            if DRAW_DISCARD in legal and self.wants_top(ev, board):
                return DRAW_DISCARD
            return DRAW_STOCK
        return self.discard(ev, board, view, legal)

    def wants_top(self, ev: Evaluator, board: Board) -> bool:
        """Take the pile's top card when the hand it makes beats the expected hand after a
        stock draw: that is the value of the hand now less one draw's expected gain."""
        top = board.top
        if top is None:
            return False
        hand = board.hand
        base, gain = ev.analyse(hand)
        stock = base - (ev.weight + 1) * gain
        take = ev.best_discard(hand | 1 << top, 1 << top)[0]
        if self.tuning.two_level:
            now = ev.value(hand)
            if take >= now:
                return False
            return now - take > self.stock_gain(ev, hand, now) + self.tuning.take_margin
        return take < stock - self.tuning.take_margin

    def stock_gain(self, ev: Evaluator, hand: int, now: float) -> float:
        """Expected gain of a stock draw, at the same horizon as taking the top card."""
        near = neighbours(hand)
        removable = max(
            deadwood_of_mask(hand) - deadwood_of_mask(hand ^ 1 << c) for c in bits(hand)
        )
        total = 0.0
        for card in ev.live:
            if near >> card & 1:
                with_card = hand | 1 << card
                _, throws = discard_deadwoods(with_card)
                best = min(ev.value(with_card ^ 1 << t) for t in throws)
                if best < now:
                    total += now - best
            else:
                gain = removable - CARD_VALUES[card]
                if gain > 0:
                    total += gain
        return total / max(1, len(ev.live))

    def discard(
        self, ev: Evaluator, board: Board, view: Observation, legal: Sequence[Action]
    ) -> Action:
        """Knock when we may (gin first), else throw the card that leaves the best hand."""
        knocks = [a.card for a in legal if isinstance(a, Knock)]
        hand = board.hand
        if knocks:
            return best_knock(ev, hand, knocks)[1]
        forbidden = 0 if view.taken_this_turn is None else 1 << view.taken_this_turn
        _, card = ev.best_discard(hand, forbidden)
        return Discard(CARDS[card])
