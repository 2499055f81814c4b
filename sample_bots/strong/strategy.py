"""strong: the decision logic of the ``strong`` sample bot, as a pure policy.

:class:`StrongPolicy` is a callable ``(view, legal) -> action`` built on the standard library and
:mod:`referee.rules` only. It reads everything a seat may see and nothing else:

- **Where the cards are.** Cards in the discard pile are dead; the cards the opponent took from
  the pile are known to be in their hand; every other card we do not hold is *unseen* (in the
  stock or in the opponent's hand, equally likely as far as we know).
- **Hand value.** A 10-card hand is worth its deadwood less the weighted expected deadwood gain
  of one stock draw, counted over the unseen cards only. A card whose meld partners are dead is
  worth little; a combo with live outs is worth keeping. The weight shrinks as the hand ages,
  because the longer a hand lasts the likelier the opponent knocks before our draws pay off.
- **Discard safety.** A throw costs extra by the chance that it completes an opponent meld, from
  the cards they may hold (taken from the pile: certainly; unseen: by their share). Cards of a
  rank they threw or declined, or next to such a card in suit, are safer.
- **Drawing.** Take the pile's top card when the hand it makes is worth more than the expected
  hand after a stock draw.
- **Knocking.** Gin at once. Otherwise estimate the knock's points by sampling plausible
  opponent hands (their known cards plus unseen ones, improved as a player keeps cards over its
  draws) and laying off exactly as the referee does; play on only when an undercut makes the
  knock a clear loser. A knock that would end a game for us, or whose alternative is a drawn
  hand, is taken more readily (the score sheet and the stock count).
- **Knock layout.** Among all least-deadwood layouts (over every legal knock discard), declare
  the one with the least deadwood plus expected layoffs, where a layoff card counts only if it
  is not dead and not ours.

Decisions are a pure function of the view (and the instance's seed): nothing is remembered
between calls, and the only randomness, the knock sampling, is seeded from the view.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from referee.rules import (
    CARD_VALUES,
    CARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    CardSet,
    Discard,
    DrawDiscard,
    DrawStock,
    Knock,
    Observation,
    PassUpcard,
    Phase,
    TakeUpcard,
    deadwood_of_mask,
    lay_off,
    min_deadwood,
    optimal_meld_groups,
)

LANE = 13
LANE_BITS = (1 << LANE) - 1
FULL_DECK = (1 << 52) - 1
RANK_CARDS = tuple(sum(1 << (suit * LANE + rank) for suit in range(4)) for rank in range(LANE))
"""The four cards of each rank, as masks."""
_LOW_RANKS = tuple(sum(((1 << k) - 1) << (suit * LANE) for suit in range(4)) for k in range(3))
_HIGH_RANKS = tuple(
    sum((((1 << k) - 1) << (LANE - k)) << (suit * LANE) for suit in range(4)) for k in range(3)
)


# --- card masks --------------------------------------------------------------------------------


def bits(mask: int) -> list[int]:
    """The card numbers of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def neighbours(mask: int) -> int:
    """Cards that could share a meld with a card of ``mask``: the same rank in another suit, or
    the same suit within two ranks. Any other card can only lower deadwood by replacing a higher
    unmatched card, which is cheap to count without a search."""
    ranks = (mask | mask >> LANE | mask >> 2 * LANE | mask >> 3 * LANE) & LANE_BITS
    out = ranks | ranks << LANE | ranks << 2 * LANE | ranks << 3 * LANE
    for k in (1, 2):
        out |= (mask << k) & ~_LOW_RANKS[k] & FULL_DECK
        out |= (mask >> k) & ~_HIGH_RANKS[k]
    return out & ~mask


def best_after_draw(hand: int) -> int:
    """Deadwood of an 11-card hand after throwing the highest unmatched card of a best layout.

    This is one exact search instead of eleven; it can miss a better throw that reshapes the
    melds, which costs nothing measurable in play. With every card melded some meld holds four
    cards and can spare one, so the answer is 0.
    """
    layout = min_deadwood(CardSet.of_mask(hand))
    if not layout.unmatched:
        return 0
    return layout.deadwood - max(CARD_VALUES[c] for c in bits(layout.unmatched))


# --- tuning ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tuning:
    """The strategy's weights. The defaults were tuned against ``greedy_policy`` on duplicate
    hands (see ``benchmarks.strength`` for the series-level measure)."""

    potential: float = 2.0
    """Weight of one stock draw's expected deadwood gain in a hand's value, at the deal."""
    horizon: float = 30.0
    """Turns over which that weight falls linearly to zero (the opponent's knock gets closer)."""
    danger: float = 3.0
    """Deadwood points a throw costs per unit of chance that it completes an opponent meld."""
    take_margin: float = -1.5
    """How much better than a stock draw the pile's top card must be to take it (negative:
    take a little more readily than the plain comparison says)."""
    prune: int = 10
    """Throws whose plain deadwood is this far above the best throw's are not valued (they break
    a meld, and no potential makes up for that)."""
    knock_floor: float | None = -3.0
    """Play on instead of knocking when the knock's sampled expected points fall below this;
    ``None`` knocks whenever it may."""
    samples: int = 32
    """Opponent hands sampled to value a knock."""
    skill: float = 0.7
    """How many extra cards, per stock draw the opponent made, a sampled opponent hand gets to
    choose its ten from (calibrated on greedy's hands at the same turn)."""


# --- what the seat knows -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Board:
    """What one seat knows of where the cards are, as card masks."""

    hand: int
    pile: int
    top: int | None
    opp_known: int
    """Cards the opponent took from the pile and still holds."""
    unseen: int
    """Cards in the stock or hidden in the opponent's hand."""
    opp_hidden: int
    """How many of the opponent's cards we cannot name."""
    rejected: int
    """Cards the opponent threw, or declined when they were offered."""
    opp_draws: int
    """Stock cards the opponent has drawn this hand."""
    stock: int
    turns: int
    knock_limit: int

    @property
    def p_hidden(self) -> float:
        """Chance that a given unseen card is in the opponent's hand rather than the stock."""
        unseen = self.unseen.bit_count()
        return self.opp_hidden / unseen if unseen else 0.0

    def p_opp(self, card: int) -> float:
        """Chance that the opponent holds ``card``."""
        if self.opp_known >> card & 1:
            return 1.0
        if self.unseen >> card & 1:
            return self.p_hidden
        return 0.0


@dataclass(frozen=True, slots=True)
class Replay:
    """What the public history says about the opponent beyond the cards they hold."""

    rejected: int
    opp_draws: int


def replay_history(view: Observation) -> Replay:
    """Walk the public history with a model of the pile to learn which cards the opponent threw
    or declined (the upcard they passed, a top card they left for a stock draw): a player rarely
    collects a card it does not want, nor its close neighbours."""
    upcard = -1  # stands for the first upcard until we learn which card it is
    pile = [upcard]
    rejected = 0
    declined_upcard = stock_only = False
    passes = draws = 0
    for event in view.history:
        theirs = event.seat != view.seat
        action = event.action
        if isinstance(action, PassUpcard):
            passes += 1
            stock_only = passes == 2
            declined_upcard |= theirs
        elif isinstance(action, TakeUpcard | DrawDiscard):
            if pile.pop() == -1 and event.card is not None:
                upcard = event.card
        elif isinstance(action, DrawStock):
            if theirs:
                draws += 1
                if not stock_only and pile and pile[-1] >= 0:
                    rejected |= 1 << pile[-1]
            stock_only = False
        elif event.card is not None:  # a discard or a knock
            pile.append(event.card)
            if theirs:
                rejected |= 1 << event.card
    if upcard == -1 and -1 in pile and view.discard_pile:
        upcard = view.discard_pile[0]
    if declined_upcard and upcard >= 0:
        rejected |= 1 << upcard
    return Replay(rejected, draws)


def read_board(view: Observation) -> Board:
    """Everything the strategy uses from one observation."""
    hand = view.hand.mask
    pile = 0
    for card in view.discard_pile:
        pile |= 1 << card
    known = view.opponent_known.mask
    replay = replay_history(view)
    return Board(
        hand=hand,
        pile=pile,
        top=view.discard_pile[-1] if view.discard_pile else None,
        opp_known=known,
        unseen=FULL_DECK & ~hand & ~pile & ~known,
        opp_hidden=max(0, view.opponent_hand_size - known.bit_count()),
        rejected=replay.rejected & ~known,
        opp_draws=replay.opp_draws,
        stock=view.stock_count,
        turns=view.turns,
        knock_limit=view.params.knock_limit,
    )


# --- valuing hands and throws ------------------------------------------------------------------


class Evaluator:
    """Values hands and throws for one decision (memoised: the same hands recur within it)."""

    def __init__(self, board: Board, tuning: Tuning) -> None:
        self.board = board
        self.tuning = tuning
        self.live = bits(board.unseen)
        fading = 1 - board.turns / tuning.horizon if tuning.horizon > 0 else 1.0
        self.weight = tuning.potential * max(0.0, fading)
        self.memo: dict[int, tuple[int, float]] = {}

    def analyse(self, hand: int) -> tuple[int, float]:
        """Deadwood of a 10-card hand and the expected deadwood gain of one stock draw.

        Each unseen card is equally likely to be drawn. A card that can join a meld is searched;
        any other card gains only by replacing our highest unmatched card.
        """
        cached = self.memo.get(hand)
        if cached is not None:
            return cached
        layout = min_deadwood(CardSet.of_mask(hand))
        base = layout.deadwood
        highest = max((CARD_VALUES[c] for c in bits(layout.unmatched)), default=0)
        near = neighbours(hand)
        total = 0
        for card in self.live:
            if near >> card & 1:
                gain = base - best_after_draw(hand | 1 << card)
            else:
                gain = highest - CARD_VALUES[card]
            if gain > 0:
                total += gain
        result = (base, total / max(1, len(self.live)))
        self.memo[hand] = result
        return result

    def value(self, hand: int) -> float:
        """What a 10-card hand is worth to us in deadwood points (lower is better)."""
        base, gain = self.analyse(hand)
        return base - self.weight * gain

    def danger(self, card: int) -> float:
        """Chance that ``card`` completes a meld for the opponent: a set with two cards of its
        rank, or a run with two suit neighbours, from the chances they hold each one."""
        board = self.board
        rank, suit = card % LANE, card // LANE
        a, b, c = (board.p_opp(other) for other in bits(RANK_CARDS[rank] & ~(1 << card)))
        p_set = a * b + a * c + b * c - 2 * a * b * c
        if board.rejected & RANK_CARDS[rank]:
            p_set *= 0.4

        def held(offset: int) -> float:
            r = rank + offset
            return board.p_opp(suit * LANE + r) if 0 <= r < LANE else 0.0

        m2, m1, p1, p2 = held(-2), held(-1), held(1), held(2)
        p_run = 1 - (1 - m2 * m1) * (1 - m1 * p1) * (1 - p1 * p2)
        suit_rejected = board.rejected >> (suit * LANE) & LANE_BITS
        if suit_rejected >> max(0, rank - 1) & 0b111:
            p_run *= 0.5
        return 1 - (1 - p_set) * (1 - p_run)

    def throw_score(self, hand: int, card: int) -> float:
        """What throwing ``card`` from an 11-card hand leaves us, the risk of feeding the
        opponent included (lower is better)."""
        return self.value(hand ^ 1 << card) + self.tuning.danger * self.danger(card)

    def best_throw(self, hand: int, forbidden: int) -> tuple[float, int]:
        """The best throw of an 11-card hand and its score. Throws that break a meld are pruned
        by plain deadwood first, so few hands need valuing."""
        plain = [(deadwood_of_mask(hand ^ 1 << c), c) for c in bits(hand & ~forbidden)]
        ceiling = min(plain)[0] + self.tuning.prune
        return min((self.throw_score(hand, c), c) for d, c in plain if d <= ceiling)

    def expected_layoffs(self, melds: Sequence[int]) -> float:
        """Deadwood the defender is expected to lay off onto these melds: the fourth card of a
        three-card set, and chains of cards beyond each end of a run, each weighted by the
        chance the opponent holds it (so dead cards and ours count for nothing)."""
        total = 0.0
        for meld in melds:
            low = (meld & -meld).bit_length() - 1
            high = meld.bit_length() - 1
            if low % LANE == high % LANE:  # a set
                if meld.bit_count() == 3:
                    fourth = (RANK_CARDS[low % LANE] & ~meld).bit_length() - 1
                    total += self.board.p_opp(fourth) * CARD_VALUES[fourth]
                continue
            total += self.chain(low, -1) + self.chain(high, 1)
        return total

    def chain(self, end: int, step: int) -> float:
        """Expected deadwood laid off beyond one end of a run, card by card outwards."""
        total, chance, card = 0.0, 1.0, end + step
        while 0 <= card < 52 and card // LANE == end // LANE and chance > 0.01:
            chance *= self.board.p_opp(card)
            total += chance * CARD_VALUES[card]
            card += step
        return total


# --- knocking ----------------------------------------------------------------------------------


def best_knock(ev: Evaluator, hand: int, cards: Sequence[int], gin_bonus: int) -> Knock:
    """The knock to make: over every legal knock discard and every least-deadwood layout of the
    ten cards kept, the least deadwood plus expected layoffs (gin first: nobody lays off on
    gin), with the melds declared."""
    best: tuple[float, int, tuple[int, ...]] | None = None
    for card in cards:
        kept = hand ^ 1 << card
        for group in optimal_meld_groups(kept):
            melded = 0
            for meld in group:
                melded |= meld
            deadwood = sum(CARD_VALUES[c] for c in bits(kept & ~melded))
            score = deadwood + ev.expected_layoffs(group) if deadwood else -float(gin_bonus)
            if best is None or score < best[0]:
                best = (score, card, group)
    assert best is not None, "best_knock needs at least one legal knock"
    _, card, group = best
    return Knock(CARDS[card], tuple(CardSet.of_mask(meld) for meld in group))


def sample_opponent(board: Board, skill: float, rng: random.Random) -> int:
    """One plausible opponent hand: the cards they took and still hold, plus unseen cards dealt
    at random and improved the way a player keeps cards: a few extra cards per stock draw they
    made, then the worst cards (least deadwood kept, highest card on a tie) thrown."""
    pool = bits(board.unseen)
    extra = max(0, min(round(board.opp_draws * skill), len(pool) - board.opp_hidden))
    hand = board.opp_known
    for card in rng.sample(pool, min(len(pool), board.opp_hidden + extra)):
        hand |= 1 << card
    for _ in range(extra):
        hand ^= 1 << worst_card(hand, board.opp_known)
    return hand


def worst_card(hand: int, keep: int) -> int:
    """The card a player would throw: the highest unmatched card of a least-deadwood layout
    (one search, not one per card), never one of ``keep``; with nothing unmatched to spare, the
    card whose loss leaves the least deadwood."""
    unmatched = min_deadwood(CardSet.of_mask(hand)).unmatched & ~keep
    if unmatched:
        return max(bits(unmatched), key=lambda card: (CARD_VALUES[card], card))
    throws = [(deadwood_of_mask(hand ^ 1 << c), -CARD_VALUES[c], c) for c in bits(hand & ~keep)]
    return min(throws)[2]


def knock_points(board: Board, knock: Knock, view: Observation, tuning: Tuning, seed: int) -> float:
    """Expected points of a knock for us over sampled opponent hands (an undercut counts
    against). A sampled hand that could itself knock is dealt again (up to three times): an
    opponent holding one would usually have knocked already."""
    assert knock.melds is not None
    kept = board.hand & ~(1 << knock.card)
    for meld in knock.melds:
        kept &= ~meld.mask
    ours = sum(CARD_VALUES[c] for c in bits(kept))
    limit = view.params.knock_limit
    rng = random.Random(hash((seed, board.hand, board.pile, board.opp_known, board.turns)))
    total = 0.0
    for _ in range(tuning.samples):
        opponent = sample_opponent(board, tuning.skill, rng)
        for _ in range(3):
            if deadwood_of_mask(opponent) > limit:
                break
            opponent = sample_opponent(board, tuning.skill, rng)
        theirs = lay_off(knock.melds, CardSet.of_mask(opponent)).deadwood
        if theirs > ours:
            total += theirs - ours
        else:
            total -= view.params.undercut_bonus + ours - theirs
    return total / max(1, tuning.samples)


def win_ends_a_game(view: Observation, points: float) -> bool:
    """Whether winning this hand by about ``points`` would finish an open game we are in."""
    target = view.params.game_target
    mine = view.totals[view.seat]
    return any(
        winner is None and total > 0 and total + points >= target
        for winner, total in zip(view.game_winners, mine, strict=False)
    )


# --- the policy --------------------------------------------------------------------------------


class StrongPolicy:
    """Plays for live meld potential and safe throws; knocks at once unless an undercut is
    likely, declaring the layout that invites the fewest layoffs. See the module docstring.

    Fresh or reused, an instance answers the same view the same way (it keeps no state).
    """

    def __init__(self, tuning: Tuning | None = None, seed: int = 0) -> None:
        self.tuning = tuning or Tuning()
        self.seed = seed

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        board = read_board(view)
        ev = Evaluator(board, self.tuning)
        if view.phase is Phase.UPCARD:
            return TAKE_UPCARD if self.wants_top(ev, board) else PASS_UPCARD
        if view.phase is Phase.DRAW:
            if DRAW_DISCARD in legal and self.wants_top(ev, board):
                return DRAW_DISCARD
            return DRAW_STOCK
        return self.throw(ev, board, view, legal)

    def wants_top(self, ev: Evaluator, board: Board) -> bool:
        """Take the pile's top card when the hand it makes (after our best throw) is worth more
        than the expected hand after a stock draw: the hand now, less one draw's gain. A top
        card that lets us knock is always taken."""
        if board.top is None:
            return False
        base, gain = ev.analyse(board.hand)
        with_top = board.hand | 1 << board.top
        plain = min(deadwood_of_mask(with_top ^ 1 << c) for c in bits(board.hand))
        if plain < base and plain <= board.knock_limit:
            return True  # a knock now: the hand ends, so no later draw matters
        after_stock = base - (ev.weight + 1) * gain
        after_take, _ = ev.best_throw(with_top, 1 << board.top)
        return after_take < after_stock - self.tuning.take_margin

    def throw(
        self, ev: Evaluator, board: Board, view: Observation, legal: Sequence[Action]
    ) -> Action:
        """Knock if we should (see :meth:`should_knock`), else make the best throw."""
        knocks = [action.card for action in legal if isinstance(action, Knock)]
        if knocks:
            knock = best_knock(ev, board.hand, knocks, view.params.gin_bonus)
            if self.should_knock(board, knock, view):
                return knock
        forbidden = 0 if view.taken_this_turn is None else 1 << view.taken_this_turn
        _, card = ev.best_throw(board.hand, forbidden)
        return Discard(CARDS[card])

    def should_knock(self, board: Board, knock: Knock, view: Observation) -> bool:
        """Gin always. Otherwise knock unless the sampled expected points fall below the floor;
        the floor drops when a win would end a game for us (winning the hand matters more than
        its points), and rises to zero when the stock is too low for us to get another turn
        (playing on can then only end in a drawn hand or the opponent's knock)."""
        floor = self.tuning.knock_floor
        kept = board.hand & ~(1 << knock.card)
        if floor is None or deadwood_of_mask(kept) == 0:
            return True
        expected = knock_points(board, knock, view, self.tuning, self.seed)
        if board.stock <= view.params.stock_end + 1:
            floor = 0.0
        elif win_ends_a_game(view, max(expected, 0.0)):
            floor -= 10
        return expected >= floor
