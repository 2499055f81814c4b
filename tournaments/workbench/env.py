"""A training environment over the rules engine: PettingZoo's AEC API for two seats, and a
Gymnasium wrapper for one seat against a fixed opponent policy.

An episode is one Hollywood series (:class:`referee.rules.SeriesState`), dealt from the seed of
``reset(seed=...)`` exactly as :func:`referee.rules.play_series` deals it. Agent ``player_0`` is
seat 0, ``player_1`` seat 1. Each seat sees what :func:`referee.rules.observation` gives it, and
nothing else: the numeric ``observation`` is made from that :class:`~referee.rules.Observation`
alone (:func:`encode`), and the info of the agent to move carries the same object and its legal
actions, so a rules or SDK policy ``(view, legal) -> action`` plays unchanged:

>>> from referee.rules import greedy_policy
>>> game = env()
>>> game.reset(seed=7)
>>> for agent in game.agent_iter():
...     obs, reward, terminated, truncated, info = game.last()
...     if terminated or truncated:
...         game.step(None)
...     else:
...         game.step(greedy_policy(info["observation"], info["legal_actions"]))
>>> game.unwrapped.series_result.winner in (0, 1)
True

Actions are numbered (:data:`ACTIONS`): 0 take the upcard, 1 pass it, 2 draw from the stock,
3 draw the discard, ``4 + c`` discard card ``c``, ``56 + c`` knock with card ``c`` (the knocker's
melds laid out by the rules, as :func:`referee.rules.legal_actions` lists knocks). ``step`` takes
such a number or a rules :data:`~referee.rules.Action` itself (a knock with declared melds too).
Rewards are ``"series"`` (default), ``"game"`` or ``"hand"``; see :class:`GinEnv`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final, Literal, SupportsInt, TypeAlias, TypeVar, cast, get_args

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from referee.rules import (
    DISCARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCKS,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Discard,
    IllegalActionError,
    Knock,
    Observation,
    PassUpcard,
    Phase,
    Policy,
    PublicEvent,
    RuleParams,
    SeriesResult,
    SeriesState,
    greedy_policy,
    observation,
)

T = TypeVar("T")

DEFAULT_PARAMS: Final = RuleParams()
"""The rules' default parameters (a series to 100 points a game, the usual knock limit)."""

AGENTS: Final = ("player_0", "player_1")
"""The agent of each seat."""

ACTIONS: Final[tuple[Action, ...]] = (
    TAKE_UPCARD,
    PASS_UPCARD,
    DRAW_STOCK,
    DRAW_DISCARD,
    *DISCARDS,
    *KNOCKS,
)
"""Each action number's rules action: ``ACTIONS[4 + c]`` discards card ``c``, ``ACTIONS[56 + c]``
knocks with it."""
DISCARD_BASE: Final = 4
KNOCK_BASE: Final = DISCARD_BASE + 52
ACTION_COUNT: Final = len(ACTIONS)

_NUMBER_OF: Final[dict[Action, int]] = {action: number for number, action in enumerate(ACTIONS)}
_NUMBER_OF_SHARED: Final = {id(action): number for number, action in enumerate(ACTIONS)}
"""By identity: the rules list their shared action objects, quicker to look up so."""


def action_number(action: Action) -> int:
    """The number of a rules action; a knock with declared melds has the number of the plain
    knock of its card (stepping the action itself keeps the melds).

    >>> from referee.rules import Card
    >>> action_number(DRAW_STOCK), action_number(Discard(Card.parse("2c")))
    (2, 5)
    >>> ACTIONS[action_number(Knock(Card.parse("Ks")))]
    Knock(card=Card('Ks'), melds=None)

    Raises:
        ValueError: not a rules action.
    """
    number = _NUMBER_OF.get(action)
    if number is not None:
        return number
    if isinstance(action, Knock):
        return KNOCK_BASE + action.card
    raise ValueError(f"not a Hollywood Gin action: {action!r}")


# --- the observation ---------------------------------------------------------------------------

FIELDS: Final = (
    ("hand", 52),
    ("upcard", 52),
    ("pile", 52),
    ("taken_this_turn", 52),
    ("my_discards", 52),
    ("opponent_took", 52),
    ("opponent_known", 52),
    ("opponent_discards", 52),
    ("passed_upcard", 2),
    ("phase", 4),
    ("my_turn", 1),
    ("my_deal", 1),
    ("seat", 1),
    ("stock", 1),
    ("opponent_hand_size", 1),
    ("turns", 1),
    ("hand_number", 1),
    ("totals", 6),
    ("game_winners", 6),
)
"""The observation vector's fields in order, with their lengths (see :data:`LAYOUT`)."""


def _layout() -> dict[str, slice[int, int, None]]:
    layout, start = {}, 0
    for name, size in FIELDS:
        layout[name] = slice(start, start + size)
        start += size
    return layout


LAYOUT: Final = _layout()
"""Where each field lies in the observation vector: ``vector[LAYOUT["hand"]]``."""
OBSERVATION_SIZE: Final = sum(size for _, size in FIELDS)
PHASES: Final = (Phase.UPCARD, Phase.DRAW, Phase.DISCARD, Phase.OVER)
"""The order of the ``phase`` one-hot."""
STOCK_SIZE: Final = 31
MAX_HAND_SIZE: Final = 11
PILE_SCALE: Final = 52
MOST_DEADWOOD: Final = 100
"""The most deadwood ten cards can hold (four kings, four queens, two jacks)."""


def total_bound(params: RuleParams) -> float:
    """The highest value a ``totals`` entry can take: a game total (below the target until its
    last hand) plus the most one hand can score, over the target.

    >>> round(total_bound(RuleParams()), 2)
    2.24
    """
    most = max(
        params.gin_bonus + MOST_DEADWOOD,
        MOST_DEADWOOD,
        params.undercut_bonus + params.knock_limit,
    )
    return (params.game_target - 1 + most) / params.game_target


def observation_bounds(params: RuleParams) -> npt.NDArray[np.float32]:
    """The upper bound of each entry of the observation vector (all lower bounds are 0)."""
    high = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    high[LAYOUT["totals"]] = total_bound(params)
    return high


def _bits(mask: int) -> npt.NDArray[np.uint8]:
    """A 52-bit card mask as 52 zeros and ones, card number order."""
    raw = np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:52]


_START: Final = {name: where.start for name, where in LAYOUT.items()}


def encode(view: Observation) -> npt.NDArray[np.float32]:
    """One seat's view as the fixed-length vector of :data:`FIELDS` (made from ``view`` alone).

    Card fields are 52 entries in card-number order, 1 for a card in the set: the seat's
    ``hand``, the ``upcard`` (top of the pile), ``taken_this_turn``, the cards the seat and the
    opponent discarded this hand (``my_discards``, ``opponent_discards``), what the opponent took
    from the pile (``opponent_took``) and still holds (``opponent_known``). ``pile`` holds each
    pile card's place, ``(1 + position from the bottom) / 52``, so its order too. ``phase`` is a
    one-hot of :data:`PHASES`; ``stock`` is the stock count over 31, ``opponent_hand_size`` over
    11, ``turns`` over the turn cap, ``hand_number`` over the hand cap; ``passed_upcard`` is
    (this seat passed, the opponent passed); ``totals`` are this seat's then the opponent's
    totals in games 1-3 over the game target; ``game_winners`` (this seat won game 1-3, the
    opponent won game 1-3).

    >>> from referee.rules import SeriesState, observation
    >>> vector = encode(observation(SeriesState(seed=5), 0))
    >>> vector.shape, int(vector[LAYOUT["hand"]].sum()), float(vector[LAYOUT["stock"]][0])
    ((441,), 10, 1.0)
    """
    out = _encode_state(view)
    _mark_history(out, view.history, view.seat)
    return out


def _encode_state(view: Observation) -> npt.NDArray[np.float32]:
    """Every field but the history's (the discards and the upcard passes)."""
    out = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    out[LAYOUT["hand"]] = _bits(view.hand.mask)
    out[LAYOUT["opponent_known"]] = _bits(view.opponent_known.mask)
    pile = view.discard_pile
    if pile:
        out[_START["upcard"] + pile[-1]] = 1
        start = _START["pile"]
        for position, card in enumerate(pile, start=1):
            out[start + card] = position / PILE_SCALE
    if view.taken_this_turn is not None:
        out[_START["taken_this_turn"] + view.taken_this_turn] = 1
    start = _START["opponent_took"]
    for card in view.opponent_took:
        out[start + card] = 1
    out[_START["phase"] :] = _tail(view)
    return out


def _tail(view: Observation) -> list[float]:
    """The fields from ``phase`` to the end, in order."""
    seat, params = view.seat, view.params
    phase = [0.0] * len(PHASES)
    phase[PHASES.index(view.phase)] = 1.0
    target = params.game_target
    totals = [total / target for who in (seat, 1 - seat) for total in _three(view.totals[who], 0)]
    winners = [
        float(winner == who)
        for who in (seat, 1 - seat)
        for winner in _three(view.game_winners, None)
    ]
    return [
        *phase,
        float(view.to_move == seat and view.phase is not Phase.OVER),
        float(view.dealer == seat),
        float(seat),
        view.stock_count / STOCK_SIZE,
        view.opponent_hand_size / MAX_HAND_SIZE,
        view.turns / params.turn_cap,
        view.hand_number / params.hand_cap,
        *totals,
        *winners,
    ]


def _three(values: tuple[T, ...], empty: T) -> tuple[T, ...]:
    """Per-game values padded to three games with ``empty`` (plain Gin Rummy has one game)."""
    return values + (empty,) * (3 - len(values))


_HISTORY: Final = (LAYOUT["my_discards"], LAYOUT["opponent_discards"], LAYOUT["passed_upcard"])


def _mark_history(out: npt.NDArray[np.float32], events: Sequence[PublicEvent], seat: int) -> None:
    """Mark the discards and upcard passes of some of a hand's events, seen by ``seat``."""
    mine, theirs = _START["my_discards"], _START["opponent_discards"]
    passed = _START["passed_upcard"]
    for event in events:
        action = event.action
        if isinstance(action, Discard | Knock):
            out[(mine if event.seat == seat else theirs) + action.card] = 1
        elif isinstance(action, PassUpcard):
            out[passed + (event.seat != seat)] = 1


class Encoder:
    """:func:`encode` for one seat's successive views, reading each hand's history once.

    It keeps the history fields of the views it was given and, when the next view continues
    the same history (same seat and hand, the last event seen still in place), marks only the
    new events; any other view is encoded from scratch. Its result is always ``encode(view)``.
    """

    def __init__(self) -> None:
        self._marks = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        self._hand: tuple[int, int] | None = None
        self._seen = 0
        self._last: PublicEvent | None = None

    def __call__(self, view: Observation) -> npt.NDArray[np.float32]:
        """The vector of ``view``, as :func:`encode` makes it."""
        history, seen = view.history, self._seen
        continues = (
            self._hand == (view.seat, view.hand_number)
            and seen <= len(history)
            and (seen == 0 or history[seen - 1] is self._last)
        )
        if not continues:
            self._marks[:] = 0
            self._hand, seen = (view.seat, view.hand_number), 0
        _mark_history(self._marks, history[seen:], view.seat)
        self._seen = len(history)
        self._last = history[-1] if history else None
        out = _encode_state(view)
        for where in _HISTORY:
            out[where] = self._marks[where]
        return out


def action_mask(legal: Sequence[Action]) -> npt.NDArray[np.int8]:
    """1 for the number of each legal action, else 0.

    >>> from referee.rules import SeriesState
    >>> action_mask(SeriesState(seed=5).legal_actions()).nonzero()[0].tolist()
    [0, 1]
    """
    mask = np.zeros(ACTION_COUNT, dtype=np.int8)
    for action in legal:
        number = _NUMBER_OF_SHARED.get(id(action))
        mask[action_number(action) if number is None else number] = 1
    return mask


def observation_space(
    params: RuleParams = DEFAULT_PARAMS,
) -> spaces.Dict[npt.NDArray[np.float32 | np.int8]]:
    """The observation space of either seat: ``observation`` (:func:`encode`) and
    ``action_mask`` (:func:`action_mask`)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(low=0.0, high=observation_bounds(params), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(ACTION_COUNT,), dtype=np.int8),
        }
    )


# --- the AEC environment -----------------------------------------------------------------------

Reward: TypeAlias = Literal["series", "game", "hand"]
REWARDS: Final[tuple[Reward, ...]] = get_args(Reward)
RENDER_MODES: Final = ("human", "ansi")
EnvObservation: TypeAlias = dict[str, npt.NDArray[np.float32 | np.int8]]
"""``observation`` and ``action_mask``, two NumPy arrays (as in :func:`observation_space`)."""
EnvAction: TypeAlias = int | SupportsInt | Action | None


def _as_action(action: object) -> Action | None:
    """The rules action of a step's argument (a number or an action), or ``None`` if neither."""
    if isinstance(action, Action):
        return action
    if isinstance(action, int | np.integer) and not isinstance(action, bool):
        number = int(action)
        return ACTIONS[number] if 0 <= number < ACTION_COUNT else None
    return None


class GinEnv(AECEnv[str, EnvObservation, EnvAction]):
    """A Hollywood series for two agents, one action at a time (PettingZoo's AEC API).

    Rewards, zero-sum, to both agents after the step that earned them (``reward=``):

    * ``"series"`` (the default: what a league counts, and the only one that cannot pull a
      learner away from winning the series): +1 to the series winner and -1 to the loser when
      the series ends, 0 to both if nobody won (possible only at the hand cap). Summed over an
      episode: +1, -1 or 0.
    * ``"game"``: +1 and -1 each time one of the three games ends (reaches the target, or
      is closed to its leader at the hand cap; an unwon tie gives 0). Summed: games won minus
      games lost.
    * ``"hand"``: each hand's points (:attr:`HandOutcome.points`), + to its winner and - to the
      other; 0 for a drawn hand. Summed: the points won minus the points lost.

    An illegal action (a number that is not in the mask, a rules action the rules refuse, or
    anything else) follows PettingZoo's convention (``TerminateIllegalWrapper``): a warning is
    logged, the series stops (every agent terminated and truncated), the offender gets
    ``illegal_reward`` (-1) and the other agent 0.

    ``reset(seed=s)`` plays the series ``play_series(..., seed=s)`` deals; ``reset()`` without a
    seed takes the next seed from a generator seeded by the last seeded reset (or, before any,
    by the system). ``options`` is accepted and unused. A series never truncates by itself: the
    hand cap is a rule of the series, so a capped series terminates with its result.
    """

    metadata: dict[str, object] = {  # noqa: RUF012 - PettingZoo's class attribute
        "name": "hollywood_gin_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
    }

    series: SeriesState
    """The full state of the series being played (the referee's view)."""

    def __init__(
        self,
        *,
        reward: Reward = "series",
        params: RuleParams = DEFAULT_PARAMS,
        render_mode: str | None = None,
        illegal_reward: float = -1.0,
    ) -> None:
        """Raises:
        ValueError: an unknown reward or render mode.
        """
        super().__init__()  # type: ignore[no-untyped-call]
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be human, ansi or None, not {render_mode!r}")
        self.reward = reward
        self.params = params
        self.render_mode = render_mode
        self.illegal_reward = illegal_reward
        self.possible_agents = list(AGENTS)
        # Gymnasium types a Dict space as a space of sub-spaces, not of their values.
        space = cast("gymnasium.spaces.Space[EnvObservation]", observation_space(params))
        self.observation_spaces = dict.fromkeys(AGENTS, space)
        self.action_spaces = {agent: spaces.Discrete(ACTION_COUNT) for agent in AGENTS}
        self._seeds = random.Random()
        self._views: list[Observation | None] = [None, None]
        self._legal: list[Action] = []
        self._encoders = (Encoder(), Encoder())

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[EnvObservation]:
        """The same :func:`observation_space` object for either agent."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[EnvAction]:
        """``Discrete(108)``: the action numbers of :data:`ACTIONS`."""
        return self.action_spaces[agent]

    def reset(
        self,
        seed: int | None = None,
        options: dict[str, object] | None = None,  # noqa: ARG002 - PettingZoo's signature
    ) -> None:
        """Deal a new series: the series of ``seed``, or the next seed of the generator.

        Raises:
            ValueError: a negative seed.
        """
        if seed is None:
            seed = self._seeds.randrange(2**63)
        else:
            self._seeds = random.Random(seed)
        self.series = SeriesState(seed, self.params)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self._after_move()

    @property
    def series_result(self) -> SeriesResult | None:
        """How the series ended (``None`` while it goes on, or after an illegal action)."""
        return self.series.result

    def view(self, agent: str) -> Observation:
        """What ``agent``'s seat sees now: :func:`referee.rules.observation` of the series."""
        seat = AGENTS.index(agent)
        view = self._views[seat]
        if view is None:
            view = self._views[seat] = observation(self.series, seat)
        return view

    def observe(self, agent: str) -> EnvObservation:
        """The agent's :func:`encode` and, if it is to move, its mask (else all zeros)."""
        mask = (
            action_mask(self._legal)
            if agent == self.agent_selection
            else np.zeros(ACTION_COUNT, dtype=np.int8)
        )
        encoder = self._encoders[AGENTS.index(agent)]
        return {"observation": encoder(self.view(agent)), "action_mask": mask}

    def step(self, action: EnvAction) -> None:
        """Play the agent to move's action (a number of :data:`ACTIONS` or a rules action); an
        agent already done steps ``None``."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        move = _as_action(action)
        series = self.series
        hands, games = len(series.finished), series.score.game_winners
        try:
            if move is None:
                raise IllegalActionError(f"not an action: {action!r}")
            series.apply(move)
        except IllegalActionError:
            self._stop_illegal(agent)
            return
        gain = self._gain(hands, games)
        self.rewards = {AGENTS[0]: gain, AGENTS[1]: -gain}
        if series.is_over:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._after_move()
        self._accumulate_rewards()

    def _gain(self, hands: int, games: tuple[int | None, ...]) -> float:
        """Seat 0's reward for the step just played (seat 1's is its negative)."""
        series = self.series
        gain = 0
        if self.reward == "hand":
            for record in series.finished[hands:]:
                winner = record.outcome.winner
                if winner is not None:
                    gain += record.outcome.points if winner == 0 else -record.outcome.points
        elif self.reward == "game":
            for before, after in zip(games, series.score.game_winners, strict=True):
                if before is None and after is not None:
                    gain += 1 if after == 0 else -1
        elif series.result is not None and series.result.winner is not None:
            gain = 1 if series.result.winner == 0 else -1
        return float(gain)

    def _after_move(self) -> None:
        """Select the next agent and give the infos of the new state."""
        series = self.series
        self._views = [None, None]
        self._legal = series.legal_actions()
        if series.is_over:
            self.agent_selection = AGENTS[1 - series.to_move]
            self.infos = {
                agent: {"observation": self.view(agent), "legal_actions": []} for agent in AGENTS
            }
            return
        self.agent_selection = mover = AGENTS[series.to_move]
        self.infos = {agent: {} for agent in AGENTS}
        self.infos[mover] = {"observation": self.view(mover), "legal_actions": self._legal}

    def _stop_illegal(self, agent: str) -> None:
        EnvLogger.warn_on_illegal_move()
        self._legal = []
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(self.illegal_reward)
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The referee's view of the series (both hands shown): printed in ``human`` mode,
        returned in ``ansi``; nothing without a render mode."""
        if self.render_mode is None:
            return None
        text = describe(self.series)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def describe(series: SeriesState) -> str:
    """A few lines on a series' state, both hands shown (for :meth:`GinEnv.render`)."""
    hand = series.hand
    pile = hand.discard_pile
    lines = [
        f"hand {series.hand_number + 1}, dealer seat {hand.dealer}, "
        f"seat {hand.to_move} to {hand.phase.value}; stock {hand.stock_count}, "
        f"upcard {pile[-1] if pile else '-'}",
    ]
    for seat in (0, 1):
        totals = " ".join(map(str, series.score.totals(seat)))
        lines.append(f"seat {seat}: {hand.cards_of(seat)} (totals {totals})")
    if series.result is not None:
        lines.append(f"series over ({series.result.end.value}): winner {series.result.winner}")
    return "\n".join(lines)


def env(
    *,
    reward: Reward = "series",
    params: RuleParams = DEFAULT_PARAMS,
    render_mode: str | None = None,
    illegal_reward: float = -1.0,
) -> OrderEnforcingWrapper[str, EnvObservation, EnvAction]:
    """A :class:`GinEnv` (same keyword arguments) in PettingZoo's ``OrderEnforcingWrapper``.

    Raises:
        ValueError: an unknown reward or render mode.
    """
    game = GinEnv(
        reward=reward, params=params, render_mode=render_mode, illegal_reward=illegal_reward
    )
    return OrderEnforcingWrapper(game)


raw_env = GinEnv
"""PettingZoo's name for the unwrapped environment."""


# --- one seat against a policy (Gymnasium) -----------------------------------------------------


class SoloGinEnv(gymnasium.Env[EnvObservation, np.int64]):
    """One seat of a Hollywood series against a fixed opponent policy (Gymnasium's API).

    The learner plays ``seat``; ``opponent`` (a rules or SDK policy, :func:`greedy_policy`
    unless given) plays the other seat in-process, between the learner's steps. Observations,
    actions, rewards (the learner's, summed over the opponent's moves since its last step) and
    seeding are those of :class:`GinEnv`. An illegal action of the learner ends the episode
    with ``illegal_reward``; one of the opponent raises.
    """

    metadata: dict[str, object] = {"render_modes": list(RENDER_MODES)}  # noqa: RUF012 - Gymnasium's class attribute

    def __init__(
        self,
        opponent: Policy = greedy_policy,
        *,
        seat: int = 0,
        reward: Reward = "series",
        params: RuleParams = DEFAULT_PARAMS,
        render_mode: str | None = None,
        illegal_reward: float = -1.0,
    ) -> None:
        """Raises:
        ValueError: a seat other than 0 or 1, an unknown reward or render mode.
        """
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {seat!r}")
        self.game = GinEnv(
            reward=reward, params=params, render_mode=render_mode, illegal_reward=illegal_reward
        )
        self.opponent = opponent
        self.agent = AGENTS[seat]
        self.render_mode = render_mode
        self.observation_space = self.game.observation_space(self.agent)
        self.action_space = spaces.Discrete(ACTION_COUNT)

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[EnvObservation, dict[str, object]]:
        """Deal a series (as :meth:`GinEnv.reset`) and play the opponent up to the learner's
        first decision.

        Raises:
            IllegalActionError: the opponent policy chose an illegal action.
        """
        super().reset(seed=seed)
        self.game.reset(seed=seed, options=options)
        self._play_opponent()
        return self._outcome()[0], self._info()

    def step(
        self, action: int | SupportsInt | Action
    ) -> tuple[EnvObservation, float, bool, bool, dict[str, object]]:
        """Play the learner's action, then the opponent's until the learner is to move again
        or the series is over.

        Raises:
            IllegalActionError: the opponent policy chose an illegal action.
        """
        self.game.step(action)
        self._play_opponent()
        observed, reward, over = self._outcome()
        return observed, reward, over, False, self._info()

    def _play_opponent(self) -> None:
        game = self.game
        while not game.terminations[self.agent] and game.agent_selection != self.agent:
            view = game.view(game.agent_selection)
            legal = game.series.legal_actions()
            chosen = self.opponent(view, legal)
            try:
                game.series.hand.verify(chosen)
            except IllegalActionError as error:
                raise IllegalActionError(f"the opponent policy chose {chosen}: {error}") from None
            game.step(chosen)

    def _info(self) -> dict[str, object]:
        """A new info dict (a caller may keep and change it): the learner's view and legal
        actions, as :class:`GinEnv` gives the agent to move."""
        info = self.game.infos[self.agent]
        return {
            key: list(value) if isinstance(value, list) else value for key, value in info.items()
        }

    def _outcome(self) -> tuple[EnvObservation, float, bool]:
        game, agent = self.game, self.agent
        reward = game._cumulative_rewards[agent]  # the reward since our last step
        game._cumulative_rewards[agent] = 0.0
        return game.observe(agent), reward, game.terminations[agent]

    @property
    def series_result(self) -> SeriesResult | None:
        """How the series ended (``None`` while it goes on, or after an illegal action)."""
        return self.game.series_result

    def render(self) -> str | None:
        """As :meth:`GinEnv.render`."""
        return self.game.render()


__all__ = [
    "ACTIONS",
    "ACTION_COUNT",
    "AGENTS",
    "DISCARD_BASE",
    "FIELDS",
    "KNOCK_BASE",
    "LAYOUT",
    "OBSERVATION_SIZE",
    "PHASES",
    "REWARDS",
    "Encoder",
    "GinEnv",
    "Reward",
    "SoloGinEnv",
    "action_mask",
    "action_number",
    "describe",
    "encode",
    "env",
    "observation_bounds",
    "observation_space",
    "raw_env",
    "total_bound",
]
