"""The hosted arena's ladder: a league that never ends, scheduled one duplicate pair at a time.

The ladder is the league named :data:`LADDER` in the store, played by the league runner (the same
claims, retries, logs and results, so ``gin league standings ladder`` and ``gin league verify
ladder`` read it as any league). What differs is where its matches come from: whenever a slot is
free, :func:`choose_pairing` picks the next pairing from the bots entered and active, and the
pair's two legs (the same deal, seats swapped) are scheduled then and played one after the other
on that slot, so the legs of a pair are never played at once.

The choice: a bot with fewer than :data:`FIRST_PAIRS` pairs plays first (the fewest first), so a
new bot has its first games at once. Past that, a share :data:`EXPLORE_SHARE` of the pairs is
drawn across the whole field (any two bots, the weight falling slowly with the gap between their
ratings and with the pairs between them), so that bots far apart in the order meet and the fit
measures the field's spread, on which each bot's interval against the field rests (on simulated
ladders of 40-80 bots, with the estimator as before issue 31, those intervals covered the truth
75-86% of the time without these draws, 85-89% with them; with it fixed, 94-95% with them:
``tests/test_arena_ladder_stats.py``, ``docs/arena.md``). The other pairs go
where the order is least settled: a bot is drawn with a weight of how unsettled its order is
against its nearest neighbours by rating (close ratings against wide intervals), and its
opponent is the bot whose order against it is the least settled, with few pairs between them.

Restart-safe as a league is: the series index of a pairing's next pair follows from the store, so
a killed server's half-played pair is played (its pending legs) before any new one, and no result
can be recorded twice (results are keyed by match id). A bot whose every one of its last
:data:`SUSPEND_AFTER` series has a fault of its own (a crash, a timeout, a bad answer) is
suspended, with the reason its page shows.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

import trio

from referee.control import FaultPolicy, TimeControl
from referee.rules import RuleParams
from tournaments.arena.store import ArenaStore, EntrantState
from tournaments.executors import Executor
from tournaments.league import LeagueConfig, StoredLeague, derive_seed, match_id
from tournaments.registry import Arena
from tournaments.runner import LeagueRunner, Listener, pairs_in_order
from tournaments.stats.inference import score_from_elo
from tournaments.store import MatchRow, MatchState

__all__ = [
    "EXPLORE_SHARE",
    "FIRST_PAIRS",
    "LADDER",
    "SUSPEND_AFTER",
    "UNKNOWN_WIDTH",
    "Known",
    "Ladder",
    "choose_pairing",
    "ladder_config",
    "pairing_key",
]


LADDER: Final = "ladder"
"""The ladder's league name in the store."""
FIRST_PAIRS: Final = 3
"""Pairs a new bot plays before the choice weighs uncertainty."""
SUSPEND_AFTER: Final = 4
"""A bot with a fault of its own in each of its last this many series is suspended."""
UNKNOWN_WIDTH: Final = 400.0
"""The interval half-width (Elo) of a bot the ratings do not know yet."""
UNSETTLED_FLOOR: Final = 0.05
"""The least weight of a bot as the first of a pairing (every bot plays now and then)."""
EXPLORE_SHARE: Final = 1 / 3
"""The share of pairs (past the new bots' first ones) that measure the field's spread: a
pairing drawn across the whole field, however settled, rather than the least settled one."""
_EXPLORE_TRIES: Final = 64
"""Draws of a pairing across the field before the best drawn is taken."""


@dataclass(frozen=True, slots=True)
class Known:
    """What the scheduler knows of a bot: its rating and the half-width of its interval."""

    rating: float = 0.0
    width: float = UNKNOWN_WIDTH


def pairing_key(first: str, second: str) -> str:
    """The pairing of two bots as the store keys it (sorted: ``a|b``)."""
    low, high = sorted((first, second))
    return f"{low}|{high}"


def choose_pairing(
    active: Collection[str],
    known: Mapping[str, Known],
    pairs: Mapping[str, int],
    between: Mapping[str, int],
    *,
    busy: Collection[str] = (),
    rng: random.Random | None = None,
) -> tuple[str, str] | None:
    """The next pairing to play (sorted), or ``None`` when fewer than two bots can play.

    ``pairs``: pairs each bot has played or has in flight; ``between``: pairs of each pairing
    (its key, :func:`pairing_key`); ``busy``: pairings in flight, which are not chosen again
    while another pairing is possible.

    A bot with fewer than :data:`FIRST_PAIRS` pairs plays first (the fewest first). Otherwise,
    with a chance of :data:`EXPLORE_SHARE`, the pairing is drawn across the field
    (:func:`_across`); else the first bot is drawn by :func:`_unsettled` and its opponent is
    :func:`_opponent`'s.

    >>> choose_pairing(["a", "b", "c"], {}, {"a": 5, "b": 5, "c": 0}, {}, rng=random.Random(1))[1]
    'c'
    """
    rng = rng or random.Random()
    bots = sorted(active)
    if len(bots) < 2:
        return None
    fresh = [bot for bot in bots if pairs.get(bot, 0) < FIRST_PAIRS]
    if fresh:
        least = min(pairs.get(bot, 0) for bot in fresh)
        first = rng.choice([bot for bot in fresh if pairs.get(bot, 0) == least])
    elif rng.random() < EXPLORE_SHARE:
        across = _across(bots, known, between, busy=busy, rng=rng)
        if across is not None:
            return across
        first = rng.choices(bots, _unsettled(bots, known))[0]
    else:
        first = rng.choices(bots, _unsettled(bots, known))[0]
    others = [bot for bot in bots if bot != first]
    rng.shuffle(others)
    others.sort(key=lambda bot: pairs.get(bot, 0) >= FIRST_PAIRS)  # fresh ones next
    for candidate in (first, *others):  # the first bot with a pairing that is not in flight
        opponent = _opponent(candidate, bots, known, between, busy=busy, rng=rng)
        if opponent is not None:
            low, high = sorted((candidate, opponent))
            return low, high
    low, high = sorted((first, rng.choice(others)))  # every pairing is in flight: play one again
    return low, high


def _closeness(mine: Known, theirs: Known) -> float:
    """How unsettled the order of two bots is: 1 for equal ratings, falling as the gap between
    them grows against the width of their intervals."""
    spread = math.sqrt(mine.width**2 + theirs.width**2) + 1.0
    return math.exp(-0.5 * ((mine.rating - theirs.rating) / spread) ** 2)


def _unsettled(bots: list[str], known: Mapping[str, Known]) -> list[float]:
    """Each bot's weight as the first of a pairing: how unsettled its order is against its
    nearest neighbours by rating (above and below), with a floor so that every bot plays now and
    then. A bot far from every other (the last by far, say) is settled however wide its own
    interval."""
    ranked = sorted(range(len(bots)), key=lambda i: known.get(bots[i], Known()).rating)
    weights = [UNSETTLED_FLOOR] * len(bots)
    for place, i in enumerate(ranked):
        mine = known.get(bots[i], Known())
        for near in (place - 1, place + 1):
            if 0 <= near < len(ranked):
                theirs = known.get(bots[ranked[near]], Known())
                weights[i] = max(weights[i], _closeness(mine, theirs))
    return weights


def _informative(mine: Known, theirs: Known) -> float:
    """A pairing's weight in a draw across the field: ``p (1 - p)`` of the score expected at
    half the gap between the two ratings, 0.25 for equal ratings, 0.13 at 600 Elo apart, 0.03 at
    1,200 (broader than the information of a series, ``p (1 - p)`` at the whole gap, so that bots
    a few hundred Elo apart meet nearly as often as neighbours; only the pairings decided in
    advance are rare)."""
    p = score_from_elo((mine.rating - theirs.rating) / 2)
    return p * (1.0 - p)


def _across(
    bots: list[str],
    known: Mapping[str, Known],
    between: Mapping[str, int],
    *,
    busy: Collection[str],
    rng: random.Random,
) -> tuple[str, str] | None:
    """A pairing drawn across the whole field (``None``: every one drawn was in flight), each
    with a weight that falls as the two ratings are far apart (:func:`_informative`), divided by
    one plus the pairs already between the two, whatever their intervals: bots far apart in the
    order meet too, so the spread of the ratings is measured, not only neighbours' order. Drawn
    by rejection (a uniform pairing kept with a chance of its weight over the highest possible),
    the best of :data:`_EXPLORE_TRIES` draws if none is kept."""
    best: tuple[float, str, str] | None = None
    for _ in range(_EXPLORE_TRIES):
        first, second = rng.sample(bots, 2)
        key = pairing_key(first, second)
        if key in busy:
            continue
        weight = _informative(known.get(first, Known()), known.get(second, Known()))
        weight /= 1 + between.get(key, 0)
        if rng.random() * 0.25 < weight:
            best = (weight, first, second)
            break
        if best is None or weight > best[0]:
            best = (weight, first, second)
    if best is None:
        return None
    low, high = sorted(best[1:])
    return low, high


def _opponent(
    first: str,
    bots: list[str],
    known: Mapping[str, Known],
    between: Mapping[str, int],
    *,
    busy: Collection[str],
    rng: random.Random,
) -> str | None:
    """The opponent whose order against ``first`` is the least settled (``None``: every pairing
    of ``first`` is in flight)."""
    mine = known.get(first, Known())
    best: tuple[float, str] | None = None
    for other in bots:
        key = pairing_key(first, other)
        if other == first or key in busy:
            continue
        closeness = _closeness(mine, known.get(other, Known()))
        weight = closeness / (1 + between.get(key, 0)) * (1.0 + 0.2 * rng.random())
        if best is None or weight > best[0]:
            best = (weight, other)
    return None if best is None else best[1]


def ladder_config(
    bots: Collection[str],
    jobs: int,
    time_control: TimeControl | None = None,
    fault_policy: FaultPolicy | None = None,
    rules: RuleParams | None = None,
) -> LeagueConfig:
    """The ladder's league definition (its bots: every one that ever entered)."""
    return LeagueConfig(
        LADDER,
        None,
        tuple(sorted(bots)),
        series_per_pairing=2,
        duplicate=True,
        jobs=jobs,
        time_control=time_control or TimeControl(),
        fault_policy=fault_policy or FaultPolicy(),
        rules=rules or RuleParams(),
    )


def own_faults(store: ArenaStore, ident: str, count: int = SUSPEND_AFTER) -> list[str] | None:
    """The kinds of this bot's own faults in each of its last ``count`` played series, one kind
    per series (its first fault there); ``None`` if one of them had none or it has played fewer
    than ``count``."""
    played = [m for m in store.matches_of(LADDER, ident, 4 * count) if m.state == MatchState.DONE]
    kinds: list[str] = []
    for match in played[:count]:
        result = store.result(match.match_id)
        if result is None:
            return None
        seat = 0 if match.seat0 == ident else 1
        mine = [fault for fault in result.summary.faults if fault.seat == seat]
        if not mine:
            return None
        kinds.append(mine[0].kind.value)
    return kinds if len(kinds) == count else None


PairListener = Callable[[list[MatchRow]], None]


class Ladder(LeagueRunner):
    """Plays the ladder until cancelled: every slot busy with a duplicate pair."""

    store: ArenaStore
    """The league runner's store, with the arena's tables (the entrants it pairs)."""

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        jobs: int,
        *,
        executor: Executor | None = None,
        listener: Listener | None = None,
        on_pair: PairListener | None = None,
        strict: bool = False,
        time_control: TimeControl | None = None,
        rules: RuleParams | None = None,
        seed: int | None = None,
    ) -> None:
        """``on_pair`` is told of each pair once both its legs are recorded (the ratings'
        refresh, the pages' events); ``seed`` fixes the scheduler's random choices (tests)."""
        entered = [entrant.ident for entrant in store.entrants()]
        config = ladder_config(entered, jobs, time_control, None, rules)
        super().__init__(
            arena, store, config, jobs, strict=strict, listener=listener, executor=executor
        )
        self.on_pair = on_pair or (lambda _legs: None)
        self.known: dict[str, Known] = {}
        """The latest ratings (the arena's board sets them after each refresh)."""
        self._rng = random.Random(seed)
        self._changed = trio.Event()
        """Set when bots enter or leave, or a pair ends: the scheduler looks again."""
        self._busy: Counter[str] = Counter()
        """Pairings in flight."""
        self._between: dict[str, int] = {}
        self._pairs: Counter[str] = Counter()
        self.pairs_done = 0
        self._secret: bytes | None = None
        """The secret the ladder's deal seeds derive from (read at its first pair)."""
        self._holds = 0
        """How many :meth:`holding` blocks are open: while any is, no new pair starts."""

    @contextmanager
    def holding(self) -> Iterator[None]:
        """For the block, start no new pair (those running finish): an upload's conformance
        check gets the machine's cores. Blocks may nest or overlap; play resumes when the last
        ends."""
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            self._room.unpark_all()

    @property
    def in_flight(self) -> int:
        """The ladder's pairs started and not ended."""
        return self._started

    def wake(self) -> None:
        """Bots entered or left: look for a pairing again."""
        self._changed.set()

    def _count_scheduled(self) -> None:
        self._between = {
            key: (count + 1) // 2 for key, count in self.store.pairing_counts(LADDER).items()
        }
        self._pairs = Counter()
        for key, count in self._between.items():
            for ident in key.split("|"):
                self._pairs[ident] += count

    async def _start(self, nursery: trio.Nursery, limiter: trio.CapacityLimiter) -> None:
        """First the legs a killed server left pending, then new pairs for ever."""
        self._count_scheduled()
        registered = self._registered()
        for legs in pairs_in_order(self.store.pending(LADDER)):
            if not {legs[0].seat0, legs[0].seat1} <= registered:
                continue  # a bot removed from the registry since: its legs stay pending
            await self._wait_for_room()
            self._launch(nursery, legs, limiter)
        while True:
            await self._wait_for_room()
            scheduled = self._schedule()
            if scheduled is None:
                self._changed = trio.Event()
                await self._changed.wait()
                continue
            self._launch(nursery, scheduled, limiter)

    async def _wait_for_room(self) -> None:
        while self._holds or self._started >= max(self.progress.slots, 1):
            await self._room.park()

    def _launch(
        self, nursery: trio.Nursery, legs: list[MatchRow], limiter: trio.CapacityLimiter
    ) -> None:
        key = legs[0].pairing
        self._busy[key] += 1
        self._started += 1
        nursery.start_soon(self._windowed, self._ladder_pair(legs, key, limiter))

    async def _ladder_pair(
        self, legs: list[MatchRow], key: str, limiter: trio.CapacityLimiter
    ) -> None:
        try:
            await self._play_pair(legs, limiter)
        finally:
            self._busy[key] -= 1
            if not self._busy[key]:
                del self._busy[key]
        self.pairs_done += 1
        self._suspend_faulty(legs)
        self.on_pair(legs)
        self._changed.set()

    def _registered(self) -> set[str]:
        """The bots in the registry (an active bot removed behind the ladder's back is not
        paired: its jobs could not be made)."""
        return {bot.ident for bot in self.store.bots()}

    def _schedule(self) -> list[MatchRow] | None:
        """The next pair's two legs, saved to the store (``None``: no pairing to play)."""
        registered = self._registered()
        active = [
            e.ident for e in self.store.entrants(EntrantState.ACTIVE) if e.ident in registered
        ]
        chosen = choose_pairing(
            active, self.known, self._pairs, self._between, busy=self._busy, rng=self._rng
        )
        if chosen is None:
            return None
        first, second = chosen
        key = pairing_key(first, second)
        index = self._between.get(key, 0)
        if self._secret is None:  # once: the league's, else the store's own for its ladder
            self._secret = self.store.league_secret(LADDER) or self.store.secret(f"league:{LADDER}")
        seed = derive_seed(self._secret, key, index)
        leg = match_id(LADDER, first, second, 2 * index)
        legs = [
            MatchRow(
                leg, LADDER, key, 2 * index, first, second, seed, None, MatchState.PENDING, 0, ""
            ),
            MatchRow(
                match_id(LADDER, first, second, 2 * index + 1),
                LADDER,
                key,
                2 * index + 1,
                second,
                first,
                seed,
                leg,
                MatchState.PENDING,
                0,
                "",
            ),
        ]
        entered = tuple(sorted(e.ident for e in self.store.entrants()))
        self.config = dataclasses.replace(self.config, bots=entered)
        stored = StoredLeague(self.config, entered)
        self.store.save_league(LADDER, stored.to_json(), legs, self._secret)
        self._between[key] = index + 1
        self._pairs[first] += 1
        self._pairs[second] += 1
        self.progress.total += 2
        return legs

    def _suspend_faulty(self, legs: list[MatchRow]) -> None:
        for ident in (legs[0].seat0, legs[0].seat1):
            kinds = own_faults(self.store, ident)
            if kinds is None:
                continue
            counted = ", ".join(f"{kind} ({n})" for kind, n in Counter(kinds).most_common())
            reason = (
                f"suspended: a fault of its own in each of its last {SUSPEND_AFTER} series "
                f"({counted}); submit a new version to play again"
            )
            self.store.set_entrant(ident, EntrantState.SUSPENDED, reason)
