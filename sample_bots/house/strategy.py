"""house: the decision logic of the ``house`` sample bot, determinized Monte Carlo search.

:class:`HousePolicy` is a callable ``(view, legal) -> action`` on the standard library,
:mod:`referee.rules` and the ``strong`` bot's evaluation. For each decision it:

1. **Shortlists** the actions worth searching: both choices of an upcard offer or a draw; in
   the discard phase the few best throws by the ``strong`` policy's hand values and, when a
   knock is legal, ``strong``'s best knock layout (gin is played at once, unsearched).
2. **Imagines** deals consistent with the view (:func:`~sample_bots.house.table.imagine`): the
   opponent's hidden cards and the stock's order are sampled from the unseen cards, the cards
   the opponent took from the pile are in its hand. Nothing hidden is read: the policy sees the
   observation a bot sees, no more.
3. **Plays out** the shortlisted actions on the imagined deals (the same deals for all, so
   their differences are not noise of the deals), both seats then playing the rules' greedy
   policy (or, if asked, the table's wary one) to the end of the hand, and scores the hand's
   points from our side. The first :data:`SCREEN` deals play every action; after them only
   ``strong``'s choice and the contender that led it go on, so the rest of the budget is
   spent on the one comparison that can change the decision.
4. **Chooses** ``strong``'s own choice unless the contender beat it by a clear margin (two
   standard errors of the mean difference) on the deals after the screen, which did not
   choose it: a lead found on the screen's deals is partly luck, and is not counted twice.

The search stops at its :class:`Budget`: a time per decision and, if set, a number of played
out hands. Its randomness comes from the policy's seed and the view alone, so the same seed and
the same view give the same action (a league run again with the same secret replays).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from referee.rules import DISCARDS, Action, Discard, Knock, Observation, Phase, deadwood_of_mask
from sample_bots.house.table import imagine
from sample_bots.strong.strategy import Evaluator, StrongPolicy, Tuning, best_knock, read_board

__all__ = [
    "CONFIDENCE",
    "DEFAULT_SECONDS",
    "SCREEN",
    "Budget",
    "HousePolicy",
    "Search",
    "shortlist",
]

DEFAULT_SECONDS = 0.1
"""Search time per decision by default: a tenth of the default second a move, which leaves
room for the sandbox, the transport and a busy machine."""

THROWS = 4
"""Throws searched in the discard phase: the best ones by ``strong``'s values."""

SCREEN = 12
"""Deals on which every shortlisted action is played before all but two are dropped."""

CONFIDENCE = 2.0
"""Standard errors by which another action must beat ``strong``'s choice to be played instead
(on the same deals): the search overrules ``strong``'s judgement only when it is sure."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How long one decision may search: ``seconds`` of the clock and, if set, at most
    ``rollouts`` played-out hands (a fixed amount of work, for tests and benchmarks)."""

    seconds: float = DEFAULT_SECONDS
    rollouts: int | None = None
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False)
    """The clock the search reads (a fake one makes budgets testable without waiting)."""


@dataclass(slots=True)
class Search:
    """What one decision's search found: the shortlisted actions, the points each scored on
    each imagined deal, and how many played-out hands that took.

    The first :data:`SCREEN` deals play every action; then (with three or more actions) only
    ``strong``'s choice and the one contender that did best against it go on, and the
    contender must beat it on the deals after the screen, which did not choose it.
    """

    actions: list[Action]
    scores: list[list[int]]
    """Per action, its points on each deal it played (the same deals for every action: the
    first ones for all, the later ones for those still :attr:`live`)."""
    rollouts: int = 0
    live: list[int] = field(default_factory=list)
    """The actions still played on each new deal (all of them until the screen)."""
    screened: int = 0
    """Deals before the screen, once it has happened (0 before)."""

    @property
    def deals(self) -> int:
        """Deals imagined."""
        return len(self.scores[0])

    def means(self) -> list[float]:
        """Each action's mean points per hand on the deals it played (0 before any deal)."""
        return [sum(points) / max(1, len(points)) for points in self.scores]

    def screen(self, favourite: int = 0) -> None:
        """Keep ``favourite`` and the action that beats it by most so far; drop the rest."""
        others = [index for index in range(len(self.actions)) if index != favourite]
        contender = max(others, key=lambda index: self.edge(index, favourite)[0])
        self.live, self.screened = [favourite, contender], self.deals

    def edge(self, index: int, favourite: int, start: int = 0) -> tuple[float, float]:
        """How much action ``index`` beats ``favourite`` by on the same deals from ``start``
        on: the mean difference of their points and that mean's standard error."""
        ours, theirs = self.scores[index][start:], self.scores[favourite][start:]
        diffs = [a - b for a, b in zip(ours, theirs, strict=True)]
        n = len(diffs)
        mean = sum(diffs) / n
        var = sum((d - mean) ** 2 for d in diffs) / max(1, n - 1)
        return mean, math.sqrt(var / n)

    def best(self, favourite: int = 0, confidence: float = CONFIDENCE) -> Action:
        """The action that beats ``favourite`` by most, among those that beat it by more than
        ``confidence`` standard errors; else ``favourite``. After the screen only the
        contender can, and only on the later deals (all of them, if the budget ended at the
        screen)."""
        fresh = self.screened and self.deals > self.screened
        start = self.screened if fresh else 0
        candidates = self.live if fresh else range(len(self.actions))
        choice, most = favourite, 0.0
        for index in candidates:
            if index == favourite:
                continue
            mean, error = self.edge(index, favourite, start)
            if mean > most and mean > confidence * error:
                choice, most = index, mean
        return self.actions[choice]


def shortlist(view: Observation, legal: Sequence[Action], tuning: Tuning) -> list[Action]:
    """The actions to search, ``strong``'s choice first (see the module docstring). A single
    entry means there is nothing to search."""
    strong = StrongPolicy(tuning)(view, legal)
    if view.phase is not Phase.DISCARD:
        return [strong, *(action for action in legal if action != strong)]
    board = read_board(view)
    ev = Evaluator(board, tuning)
    knocks = [action.card for action in legal if isinstance(action, Knock)]
    options: list[Action] = [strong]
    if knocks:
        knock = best_knock(ev, board.hand, knocks, view.params.gin_bonus)
        if deadwood_of_mask(board.hand & ~(1 << knock.card)) == 0:
            return [knock]  # gin: nothing scores more
        options.append(knock)
    throws = {action.card for action in legal if isinstance(action, Discard)}
    ranked = sorted(throws, key=lambda card: ev.throw_score(board.hand, card))
    options += [DISCARDS[card] for card in ranked[:THROWS]]
    return _unique(options)


def _unique(actions: list[Action]) -> list[Action]:
    """``actions`` without repeats, in order (a knock and a discard of one card both stay)."""
    seen: list[Action] = []
    for action in actions:
        if action not in seen:
            seen.append(action)
    return seen


def decision_rng(seed: int, view: Observation) -> random.Random:
    """The generator of one decision: a function of the seed and the view only."""
    key = (
        f"{seed}/{view.hand_number}/{view.turns}/{view.phase.value}/{view.hand.mask}/"
        f"{','.join(map(str, view.discard_pile))}/{len(view.history)}"
    )
    return random.Random(key)


def search(
    view: Observation,
    actions: list[Action],
    budget: Budget,
    rng: random.Random,
    *,
    wary: bool = False,
    screen: int = SCREEN,
) -> Search:
    """Play every action out on imagined deals until the budget is spent: a deal is begun only
    if, at the pace so far, it ends before the deadline (the first one always is)."""
    found = Search(actions, [[] for _ in actions], live=list(range(len(actions))))
    start = budget.clock()
    while found.deals == 0 or _affordable(found, budget, start):
        table = imagine(view, rng)
        for index in found.live:
            trial = table.copy()
            trial.apply(actions[index])
            found.scores[index].append(trial.play_out(wary).points_for(view.seat))
        found.rollouts += len(found.live)
        if screen and not found.screened and found.deals >= screen and len(actions) > 2:
            found.screen()
    return found


def _affordable(found: Search, budget: Budget, start: float) -> bool:
    """Whether one more deal fits the budget's time and its played-out hands."""
    if budget.rollouts is not None and found.rollouts + len(found.live) > budget.rollouts:
        return False
    spent = budget.clock() - start
    return spent + spent / found.deals <= budget.seconds


class HousePolicy:
    """Determinized Monte Carlo over ``strong``'s shortlist; see the module docstring.

    Fresh or reused, an instance answers the same view the same way (it keeps no state but
    :attr:`last`, the latest search, for tests and curious authors).
    """

    def __init__(
        self,
        budget: Budget | None = None,
        seed: int = 0,
        *,
        confidence: float = CONFIDENCE,
        wary: bool = False,
        screen: int = SCREEN,
    ) -> None:
        self.budget = budget or Budget()
        self.seed = seed
        self.confidence = confidence
        self.wary = wary
        self.screen = screen
        self.tuning = Tuning()
        self.last: Search | None = None

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        actions = shortlist(view, legal, self.tuning)
        if len(actions) == 1:
            self.last = None
            return actions[0]
        rng = decision_rng(self.seed, view)
        self.last = search(view, actions, self.budget, rng, wary=self.wary, screen=self.screen)
        return self.last.best(favourite=0, confidence=self.confidence)
