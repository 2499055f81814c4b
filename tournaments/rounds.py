"""An event's rounds in the store: each paired from the results before it, kept before it plays.

A Swiss or a knockout league (``LeagueConfig.event``) is played round by round. Its next round
is paired (:func:`advance`) only when every match of the last one is recorded: its ties come from
the pure pairing functions of ``tournaments.events``, fed the seeds and the tie results of the
rounds before it, and the round is stored with its matches in one transaction
(``Store.save_round``) before any of them plays. So a run killed at any point resumes with the
same rounds: a round stored is never paired again, and a round not yet stored is paired from the
same results, so the same. :func:`check_rounds` re-pairs every stored round from the results
before it (what ``gin league verify`` checks).

The seeds (the field in order, strongest first) are decided when the first round is paired and
kept in each round's record: the league file's order, a draw keyed by the league's secret, or
another league's ratings (``seeding = "league:NAME"``), which may change later and must not
change this event's pairings.

A tie is ``series_per_pairing`` series of its two bots (in duplicate pairs); a pairing met again
(a forced Swiss repeat) goes on with new series indices, so new deals. A tie's result is from
its first bot's side: its series points and its point margin, over the tie's series.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from protocol.bounded import JsonObject, loads_json
from tournaments.events import (
    Tie,
    TieResult,
    knockout_round,
    knockout_rounds,
    swiss_round,
    swiss_table,
)
from tournaments.league import LeagueError, StoredLeague, series_of, stored_league
from tournaments.stats.pairs import pair_outcomes
from tournaments.stats.standings import read_standings
from tournaments.store import MatchRow, ResultRow, Store, StoreDamaged

__all__ = [
    "STAGES",
    "EventLine",
    "EventState",
    "StoredRound",
    "advance",
    "check_rounds",
    "event_standings",
    "event_state",
    "round_matches",
    "seeding",
    "tie_result",
]


@dataclass(frozen=True, slots=True)
class StoredRound:
    """A round as the store keeps it: the event's seeds and the round's ties."""

    seeds: tuple[str, ...]
    ties: tuple[Tie, ...]

    def to_json(self) -> str:
        """The ``pairing`` column of ``event_rounds``."""
        ties = [[tie.first, tie.second] for tie in self.ties]
        return json.dumps({"seeds": list(self.seeds), "ties": ties})

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
            seeds, ties = data["seeds"], data["ties"]
            if not isinstance(seeds, list) or not isinstance(ties, list):
                raise TypeError("seeds and ties are not lists")
            return cls(tuple(map(_name, seeds)), tuple(map(_tie, ties)))
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
        if config.format == "swiss":
            if len(self.rounds) >= config.rounds:
                return ()
            return swiss_round(self.seeds, self.results)
        return knockout_round(self.seeds, self.results)

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
                    entry |= {"margin": result.margin, "winner": result.winner()}
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
    rounds = tuple(
        StoredRound.from_json(text, number) for number, text in enumerate(store.event_rounds(name))
    )
    by_id = {result.match_id: result for result in store.results(name)}
    met: Counter[frozenset[str]] = Counter()
    results: list[tuple[TieResult, ...]] = []
    states: list[tuple[str, ...]] = []
    for stored in rounds:
        tie_results: list[TieResult] = []
        tie_states: list[str] = []
        for tie in stored.ties:
            rows = [by_id.get(m.match_id) for m in round_matches(league, store, tie, met)]
            found = [row for row in rows if row is not None]
            tie_states.append(
                "bye" if tie.bye else "played" if len(found) == len(rows) else "pending"
            )
            tie_results.append(tie_result(tie, found))
        states.append(tuple(tie_states))
        if len(results) == len(states) - 1 and "pending" not in tie_states:
            results.append(tuple(tie_results))
    seeds = rounds[0].seeds if rounds else ()
    return EventState(league, seeds, rounds, tuple(results), tuple(states))


def _event(store: Store, name: str) -> StoredLeague:
    league = stored_league(store, name)
    if league is None:
        raise LeagueError(f"no league {name!r}")
    if not league.config.event:
        raise LeagueError(f"league {name} is a round robin, not an event")
    return league


def round_matches(
    league: StoredLeague, store: Store, tie: Tie, met: Counter[frozenset[str]]
) -> list[MatchRow]:
    """The series of a tie (none for a bye); ``met`` counts the ties of each pairing so far
    (this one is added), so that a pairing met again plays new series."""
    if tie.second is None:
        return []
    key = frozenset(tie.bots())
    first, second = sorted(tie.bots())
    config = league.config
    start = met[key] * config.series_per_pairing
    met[key] += 1
    return series_of(config, store.league_secret(config.name), first, second, start)


def tie_result(tie: Tie, results: Sequence[ResultRow]) -> TieResult:
    """A tie's result from its recorded series, from its first bot's side."""
    points, margin = 0.0, 0
    for unit in pair_outcomes(results):
        side = unit if unit.bot == tie.first else unit.flipped()
        points += sum(side.scores)
        margin += side.margin
    return TieResult(tie, len(results), points, margin)


def advance(store: Store, name: str) -> int:
    """Pair and store the event's next round when the last one is recorded; returns how many
    matches it added (0: a round is still being played, or the event is over).

    Raises:
        LeagueError: no such league, or not an event.
        StoreDamaged: a round or a result cannot be read.
    """
    state = event_state(store, name)
    if not state.complete:
        return 0
    seeds = state.seeds or seeding(store, state.league)
    state = EventState(state.league, seeds, state.rounds, state.results, state.tie_states)
    ties = state.next_ties()
    if not ties:
        return 0
    met: Counter[frozenset[str]] = Counter()
    for stored in state.rounds:
        for tie in stored.ties:
            round_matches(state.league, store, tie, met)
    rows = [m for tie in ties for m in round_matches(state.league, store, tie, met)]
    fresh = store.save_round(name, len(state.rounds), StoredRound(seeds, ties).to_json(), rows)
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
    problems = _seed_problems(store, state) + _match_problems(store, state)
    for number, stored in enumerate(state.rounds):
        if number > len(state.results):
            break  # rounds after an unfinished one cannot be checked (and are never paired)
        before = EventState(
            state.league,
            state.seeds,
            state.rounds[:number],
            state.results[:number],
            state.tie_states[:number],
        )
        try:
            expected = before.next_ties()
        except ValueError as error:  # a knockout's round that its bracket does not pair
            problems.append(f"round {number + 1}: {error}")
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
    missing."""
    met: Counter[frozenset[str]] = Counter()
    expected = {
        match.match_id: match
        for stored in state.rounds
        for tie in stored.ties
        for match in round_matches(state.league, store, tie, met)
    }
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
