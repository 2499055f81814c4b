"""An event's rounds in the store: each paired from the results before it, kept before it plays.

A Swiss or a knockout league (``LeagueConfig.event``) is played round by round. Its next round
is paired (:func:`advance`) only when every match of the last one is recorded: its ties come from
the pure pairing functions of ``tournaments.events``, fed the seeds and the tie results of the
rounds before it, and the round is stored with its matches in one transaction
(``Store.save_round``) before any of them plays. So a run killed at any point resumes with the
same rounds: a round stored is never paired again, and a round not yet stored is paired from the
same results, so the same. :func:`check_rounds` re-pairs every stored round from the results
before it (what ``gin league verify`` checks), with the version of the Swiss pairing its first
round was paired with (kept in each round's record; an event stored before versions were kept is
version 1's), so an event goes on, and verifies, as it was paired.

The seeds (the field in order, strongest first) are decided when the first round is paired and
kept in each round's record: the league file's order, a draw keyed by the league's secret, or
another league's ratings (``seeding = "league:NAME"``), which may change later and must not
change this event's pairings.

A tie is ``series_per_pairing`` series of its two bots (in duplicate pairs); a pairing met again
(a forced Swiss repeat) goes on with new series indices, so new deals. A tie's result is from
its first bot's side: its series points and its point margin, over the tie's series.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from protocol.bounded import JsonObject, loads_json
from tournaments.events import (
    PAIRING_METHOD,
    PAIRING_METHODS,
    Tie,
    TieResult,
    knockout_round,
    knockout_rounds,
    swiss_round,
    swiss_table,
)
from tournaments.league import LeagueConfig, LeagueError, StoredLeague, series_of, stored_league
from tournaments.stats.pairs import Pentanomial, pair_outcomes
from tournaments.stats.sprt import SprtSettings, Verdict, status
from tournaments.stats.standings import read_standings
from tournaments.store import MatchRow, ResultRow, Store, StoreDamaged

__all__ = [
    "STAGES",
    "EventLine",
    "EventState",
    "StoredRound",
    "TiePlan",
    "advance",
    "check_rounds",
    "event_standings",
    "event_state",
    "seeding",
    "tie_plan",
    "tie_result",
]


@dataclass(frozen=True, slots=True)
class StoredRound:
    """A round as the store keeps it: the event's seeds, the round's ties, and the version of
    the Swiss pairing the event is paired with (``method``; a round stored before versions
    were kept has none in its JSON, and is read as version 1's)."""

    seeds: tuple[str, ...]
    ties: tuple[Tie, ...]
    method: int = PAIRING_METHOD

    def to_json(self) -> str:
        """The ``pairing`` column of ``event_rounds``."""
        ties = [[tie.first, tie.second] for tie in self.ties]
        return json.dumps({"seeds": list(self.seeds), "ties": ties, "method": self.method})

    @classmethod
    def from_json(cls, text: str, number: int) -> StoredRound:
        """Read :meth:`to_json`'s form.

        Raises:
            StoreDamaged: it is not a round's pairing.
        """
        try:
            data = loads_json(text)
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            seeds, ties, method = data["seeds"], data["ties"], data.get("method", 1)
            if not isinstance(seeds, list) or not isinstance(ties, list):
                raise TypeError("seeds and ties are not lists")
            if method not in PAIRING_METHODS or isinstance(method, bool):
                raise ValueError(f"no pairing method {method!r}")
            assert isinstance(method, int)
            return cls(tuple(map(_name, seeds)), tuple(map(_tie, ties)), method)
        except (ValueError, KeyError, TypeError) as error:
            raise StoreDamaged(f"pairing of round {number + 1}", repr(error)) from None


def _name(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a bot")
    return value


def _tie(value: object) -> Tie:
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError(f"{value!r} is not a tie")
    first, second = value
    return Tie(_name(first), None if second is None else _name(second))


@dataclass(frozen=True, slots=True)
class EventState:
    """Where an event is: its rounds stored, the results of those complete, what comes next."""

    league: StoredLeague
    seeds: tuple[str, ...]
    """The field in seeding order (empty before the first round is paired)."""
    rounds: tuple[StoredRound, ...]
    results: tuple[tuple[TieResult, ...], ...]
    """The results of the complete rounds, in order (all but the last stored, or all)."""
    tie_states: tuple[tuple[str, ...], ...]
    """Each stored round's ties' states: ``bye``, ``pending`` (some series to play) or
    ``played``."""
    scheduled: tuple[MatchRow, ...] = ()
    """The matches its rounds' ties schedule, as far as their results go."""
    method: int = PAIRING_METHOD
    """The version of the Swiss pairing: its first round's (the current one before that)."""

    @property
    def complete(self) -> bool:
        """Whether every stored round is played."""
        return len(self.results) == len(self.rounds)

    @property
    def finished(self) -> bool:
        """Whether the event is over: every round played and none left to pair."""
        return self.complete and bool(self.rounds) and not self.next_ties()

    def next_ties(self) -> tuple[Tie, ...]:
        """The next round's ties (empty: the Swiss has played its rounds, or the knockout has
        its winner); only when every stored round is complete."""
        assert self.complete, "a round is paired only when the last one is recorded"
        config = self.league.config
        try:
            if config.format == "swiss":
                if len(self.rounds) >= config.rounds:
                    return ()
                return swiss_round(self.seeds, self.results, config.rounds, self.method)
            return knockout_round(self.seeds, self.results)
        except (ValueError, KeyError) as error:  # rounds edited by hand: pairs no bracket makes
            raise StoreDamaged(f"rounds of event {config.name!r}", str(error)) from None

    def to_dict(self) -> JsonObject:
        """The JSON form of ``gin league status --json``'s ``event`` (docs/cli.md)."""
        rounds = []
        for number, stored in enumerate(self.rounds):
            played = self.results[number] if number < len(self.results) else None
            ties: list[JsonObject] = []
            for index, tie in enumerate(stored.ties):
                entry: JsonObject = {
                    "first": tie.first,
                    "second": tie.second,
                    "state": self.tie_states[number][index],
                }
                if played is not None and not tie.bye:
                    result = played[index]
                    entry |= {"points": result.points, "series": result.series}
                    level = result.match_points() == (0.5, 0.5)
                    winner = (
                        None if level and self.league.config.format == "swiss" else result.winner()
                    )
                    entry |= {"margin": result.margin, "winner": winner}
                ties.append(entry)
            rounds.append({"round": number + 1, "ties": ties})
        config = self.league.config
        document: JsonObject = {"format": config.format, "seeding": config.seeding}
        document |= {"seeds": list(self.seeds), "finished": self.finished, "rounds": rounds}
        if config.format == "swiss":
            document["rounds_planned"] = config.rounds
        return document


def event_state(store: Store, name: str) -> EventState:
    """An event's state, read from the store.

    Raises:
        LeagueError: no such league, or not an event.
        StoreDamaged: a round or a result cannot be read.
    """
    league = _event(store, name)
    rounds = _checked_rounds(
        tuple(
            StoredRound.from_json(text, number)
            for number, text in enumerate(store.event_rounds(name))
        )
    )
    by_id = {result.match_id: result for result in store.results(name)}
    secret = store.league_secret(name)
    met: Counter[frozenset[str]] = Counter()
    results: list[tuple[TieResult, ...]] = []
    states: list[tuple[str, ...]] = []
    wanted: list[MatchRow] = []
    for stored in rounds:
        plans = [tie_plan(league, secret, tie, met, by_id) for tie in stored.ties]
        wanted += [match for plan in plans for match in plan.matches]
        states.append(tuple(plan.state for plan in plans))
        if len(results) == len(states) - 1 and "pending" not in states[-1]:
            results.append(tuple(plan.result for plan in plans))
    seeds = rounds[0].seeds if rounds else ()
    method = rounds[0].method if rounds else PAIRING_METHOD
    return EventState(league, seeds, rounds, tuple(results), tuple(states), tuple(wanted), method)


def _checked_rounds(rounds: tuple[StoredRound, ...]) -> tuple[StoredRound, ...]:
    """The stored rounds, if each keeps round 1's seeds and pairing method and pairs only bots
    among them.

    Raises:
        StoreDamaged: a round that does not.
    """
    for number, stored in enumerate(rounds):
        if stored.seeds != rounds[0].seeds:
            raise StoreDamaged(f"pairing of round {number + 1}", "its seeds are not round 1's")
        if stored.method != rounds[0].method:
            raise StoreDamaged(f"pairing of round {number + 1}", "its method is not round 1's")
        named = {bot for tie in stored.ties for bot in tie.bots()}
        if not named <= set(stored.seeds) or len(set(stored.seeds)) != len(stored.seeds):
            raise StoreDamaged(f"pairing of round {number + 1}", "a tie names a bot not seeded")
    return rounds


def _event(store: Store, name: str) -> StoredLeague:
    league = stored_league(store, name)
    if league is None:
        raise LeagueError(f"no league {name!r}")
    if not league.config.event:
        raise LeagueError(f"league {name} is a round robin, not an event")
    return league


@dataclass(frozen=True, slots=True)
class TiePlan:
    """What a tie plays, as far as its results go: its matches, its state, its result."""

    matches: tuple[MatchRow, ...]
    """Its series scheduled so far: all of a fixed tie's; a sequential tie's pairs up to the
    one it plays now (or the last it played)."""
    state: str
    """``bye``, ``pending`` (a series to play) or ``played``."""
    result: TieResult


def tie_plan(
    league: StoredLeague,
    secret: bytes | None,
    tie: Tie,
    met: Counter[frozenset[str]],
    results: dict[str, ResultRow],
) -> TiePlan:
    """A tie's series and how far it is: ``series_per_pairing`` series, or with an event's
    ``[sprt]`` one pair at a time until the test over its pairs decides or ``max_pairs`` are
    played. ``met`` counts the ties of each pairing so far (this one is added), so a pairing
    met again plays new series; ``results``: the event's, by match id."""
    if tie.second is None:
        return TiePlan((), "bye", TieResult(tie))
    key = frozenset(tie.bots())
    first, second = sorted(tie.bots())
    config = league.config
    start = met[key] * max(config.series_per_pairing, 2 * config.max_pairs)
    met[key] += 1
    if not config.max_pairs or not isinstance(config.sprt, SprtSettings):
        matches = series_of(config, secret, first, second, start)
        found = [results[m.match_id] for m in matches if m.match_id in results]
        state = "played" if len(found) == len(matches) else "pending"
        return TiePlan(tuple(matches), state, tie_result(tie, found))
    return _sequential(config, secret, tie, start, results)


def _sequential(
    config: LeagueConfig, secret: bytes | None, tie: Tie, start: int, results: dict[str, ResultRow]
) -> TiePlan:
    """A sequential tie: its pairs in order, as long as the ones before are complete and the
    test has not decided."""
    assert isinstance(config.sprt, SprtSettings)
    first, second = sorted(tie.bots())
    one_pair = dataclasses.replace(config, series_per_pairing=2)
    matches: list[MatchRow] = []
    found: list[ResultRow] = []
    for pair in range(config.max_pairs):
        legs = series_of(one_pair, secret, first, second, start + 2 * pair)
        matches += legs
        played = [results[m.match_id] for m in legs if m.match_id in results]
        found += played
        if len(played) < len(legs):
            return TiePlan(tuple(matches), "pending", tie_result(tie, found))
        verdict = status(_counts(tie, found), config.sprt).verdict
        if verdict is not None:
            winner = tie.first if verdict is Verdict.H1 else tie.second
            return TiePlan(tuple(matches), "played", tie_result(tie, found, winner))
    return TiePlan(tuple(matches), "played", tie_result(tie, found))


def _counts(tie: Tie, results: Sequence[ResultRow]) -> Pentanomial:
    """The complete pairs of a tie, by its first bot's series score in them."""
    counts = [0, 0, 0, 0, 0]
    for unit in pair_outcomes(results):
        if unit.complete:
            side = unit if unit.bot == tie.first else unit.flipped()
            counts[round(2 * sum(side.scores))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def tie_result(tie: Tie, results: Sequence[ResultRow], decided_for: str | None = None) -> TieResult:
    """A tie's result from its recorded series, from its first bot's side (``decided_for``: the
    winner a sequential test chose)."""
    points, margin = 0.0, 0
    for unit in pair_outcomes(results):
        side = unit if unit.bot == tie.first else unit.flipped()
        points += sum(side.scores)
        margin += side.margin
    return TieResult(tie, len(results), points, margin, decided_for)


def advance(store: Store, name: str) -> int:
    """Schedule what the event plays next: a sequential tie's next pair, or, when every
    match of the last round is recorded, the next round (paired, and stored with its matches
    in one transaction). Returns how many matches it added (0: the scheduled ones are still
    being played, or the event is over).

    Raises:
        LeagueError: no such league, or not an event.
        StoreDamaged: a round or a result cannot be read.
    """
    state = event_state(store, name)
    problems = _pairing_problems(state)
    if problems:  # edited by hand: play nothing more of it (gin league verify lists them all)
        raise StoreDamaged(f"rounds of event {name!r}", problems[0])
    if not state.complete:
        return store.add_matches(name, list(state.scheduled))
    seeds = state.seeds or seeding(store, state.league)
    state = dataclasses.replace(state, seeds=seeds)
    ties = state.next_ties()
    if not ties:
        return 0
    secret = store.league_secret(name)
    met: Counter[frozenset[str]] = Counter()
    for stored in state.rounds:
        for tie in stored.ties:
            tie_plan(state.league, secret, tie, met, {})
    rows = [m for tie in ties for m in tie_plan(state.league, secret, tie, met, {}).matches]
    pairing = StoredRound(seeds, ties, state.method).to_json()
    fresh = store.save_round(name, len(state.rounds), pairing, rows)
    return len(rows) if fresh else 0


def seeding(store: Store, league: StoredLeague) -> tuple[str, ...]:
    """The field in seeding order, strongest first: as the league lists it, by a draw keyed
    with its secret, or by another league's ratings (bots it has not rated after, in order)."""
    field = tuple(league.resolved)
    how = league.config.seeding
    if how == "draw":
        secret = store.league_secret(league.config.name) or b""
        return tuple(sorted(field, key=lambda bot: _draw(secret, bot)))
    if how.startswith("league:"):
        rated = [line.bot for line in read_standings(store, how.removeprefix("league:")).bots]
        place = {bot: index for index, bot in enumerate(rated)}
        return tuple(sorted(field, key=lambda bot: place.get(bot, len(place))))
    return field


def _draw(secret: bytes, bot: str) -> bytes:
    return hmac.new(secret, f"hollywood-gin/draw/v1/{bot}".encode(), hashlib.sha256).digest()


def check_rounds(store: Store, name: str) -> list[str]:
    """What disagrees in an event's rounds, a line each (what ``gin league verify`` reports;
    empty: nothing): a stored round whose ties are not those paired from the results before
    it, seeds not those of its seeding, and matches not those of its rounds' ties."""
    state = event_state(store, name)
    return _seed_problems(store, state) + _match_problems(store, state) + _pairing_problems(state)


def _pairing_problems(state: EventState) -> list[str]:
    """The stored rounds whose ties are not those paired from the results before them."""
    problems = []
    for number, stored in enumerate(state.rounds):
        if number > len(state.results):
            break  # rounds after an unfinished one cannot be checked (and are never paired)
        before = EventState(
            state.league,
            state.seeds,
            state.rounds[:number],
            state.results[:number],
            state.tie_states[:number],
            method=state.method,
        )
        try:
            expected = before.next_ties()
        except StoreDamaged as error:  # a knockout's round that its bracket does not pair
            problems.append(f"round {number + 1}: {error.why}")
            continue
        if stored.ties != expected:
            problems.append(
                f"round {number + 1} is paired {_said(stored.ties)} in the store; the results "
                f"before it pair {_said(expected)}"
            )
    return problems


def _seed_problems(store: Store, state: EventState) -> list[str]:
    if state.league.config.seeding not in ("order", "draw") or not state.rounds:
        return []  # another league's ratings may have changed since: the kept seeds stand
    seeds = seeding(store, state.league)
    if seeds == state.seeds:
        return []
    return [f"the seeds are {', '.join(state.seeds)} in the store, not {', '.join(seeds)}"]


def _match_problems(store: Store, state: EventState) -> list[str]:
    """The matches scheduled that no round's tie has, and those a tie has that differ or are
    missing (a sequential tie's next pair is scheduled by the next run: not a problem)."""
    expected = {match.match_id: match for match in state.scheduled}
    problems = []
    for match in store.matches(state.league.config.name):
        want = expected.pop(match.match_id, None)
        if want is None:
            problems.append(f"match {match.match_id} is of no round's tie")
        elif (match.seat0, match.seat1, match.seed, match.duplicate_of) != (
            want.seat0,
            want.seat1,
            want.seed,
            want.duplicate_of,
        ):
            problems.append(f"match {match.match_id} is not the series its tie schedules")
    if not state.league.config.max_pairs or state.complete:
        problems += [f"match {match_id} of a round's tie is not scheduled" for match_id in expected]
    return problems


def _said(ties: Sequence[Tie]) -> str:
    return (
        ", ".join(
            f"{tie.first} v {tie.second}" if tie.second else f"{tie.first} bye" for tie in ties
        )
        or "nothing"
    )


@dataclass(frozen=True, slots=True)
class EventLine:
    """One bot's line of an event's standings."""

    bot: str
    score: float
    """A Swiss's points (a tie won 1, drawn ½, a bye 1); a knockout's ties won (byes too)."""
    buchholz: float | None
    """A Swiss's tie-break: the sum of its opponents' scores (``None`` in a knockout)."""
    reached: str | None
    """A knockout's last stage: ``winner``, ``final``, ``semi-final``, ``quarter-final``,
    ``round N``, or ``in round N`` while it is still in (``None`` in a Swiss)."""
    rating: float | None
    """Its Bradley-Terry rating over the event's series (``None``: no series played)."""

    def to_dict(self) -> JsonObject:
        """Its JSON form (``docs/standings.md``, events)."""
        return {
            "bot": self.bot,
            "score": self.score,
            "buchholz": self.buchholz,
            "reached": self.reached,
            "rating": self.rating,
        }


STAGES = ("final", "semi-final", "quarter-final")
"""A knockout's last rounds, the last first."""


def event_standings(state: EventState, ratings: dict[str, float]) -> list[EventLine]:
    """The event's standings: a Swiss by score, Buchholz, then seed; a knockout by the stage
    reached, then seed; each bot's rating (of ``ratings``) beside it."""
    if not state.seeds:  # before its first round: the field as listed, nothing played
        swiss = state.league.config.format == "swiss"
        return [
            EventLine(bot, 0.0, 0.0 if swiss else None, None if swiss else "in round 1", None)
            for bot in state.league.resolved
        ]
    if state.league.config.format == "swiss":
        return [
            EventLine(line.bot, line.score, line.buchholz, None, ratings.get(line.bot))
            for line in swiss_table(state.seeds, state.results)
        ]
    out, won = _knocked_out(state)
    place = {bot: index for index, bot in enumerate(state.seeds)}
    total = knockout_rounds(len(state.seeds))
    lines = []
    for bot in state.seeds:
        stage = out.get(bot)
        if stage is None:
            reached = "winner" if state.finished else f"in round {len(state.results) + 1}"
        else:
            left = total - 1 - stage
            reached = STAGES[left] if left < len(STAGES) else f"round {stage + 1}"
        lines.append(EventLine(bot, float(won[bot]), None, reached, ratings.get(bot)))
    depth = {line.bot: out.get(line.bot, total) for line in lines}
    return sorted(lines, key=lambda line: (-depth[line.bot], place[line.bot]))


def _knocked_out(state: EventState) -> tuple[dict[str, int], Counter[str]]:
    """The round (from 0) each bot went out in, and the ties each won."""
    out: dict[str, int] = {}
    won: Counter[str] = Counter()
    for number, results in enumerate(state.results):
        for result in results:
            winner = result.winner()
            won[winner] += 1
            out.update({bot: number for bot in result.tie.bots() if bot != winner})
    return out, won
