"""Swiss pairing method 2 against method 1 on hand-made result sequences (issue 33): the
look-ahead that avoids the repeats method 1 is forced into, the bye chosen so as to force none,
the exact fewest-repeats round where method 1's greedy one is not the fewest, and the guarantee
(a Swiss of a round robin's rounds never repeats a pairing, whatever the results)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence

import pytest

from tournaments.events import Tie, TieResult, swiss_round

SIX = ["a", "b", "c", "d", "e", "f"]
Played = list[list[TieResult]]


def result(first: str, second: str | None, points: float = 0.0) -> TieResult:
    """A tie of two series whose first bot scored ``points``, or a bye."""
    if second is None:
        return TieResult(Tie(first))
    return TieResult(Tie(first, second), 2, points, 0)


def rounds_of(text: Sequence[Sequence[tuple[str, str | None, float]]]) -> Played:
    return [[result(*tie) for tie in round_] for round_ in text]


def play(seeds: list[str], rounds: int, method: int, points: object) -> Played:
    """A Swiss of ``rounds`` rounds played out, each tie's first bot scoring what ``points``
    says (a function of the tie, or a random.Random drawing 0, 1 or 2)."""
    played: Played = []
    for _ in range(rounds):
        ties = swiss_round(seeds, played, rounds, method)
        scored = []
        for tie in ties:
            if tie.bye:
                score = 0.0
            elif isinstance(points, random.Random):
                score = points.choice((0.0, 1.0, 2.0))
            else:
                assert callable(points)
                score = points(tie)
            scored.append(result(tie.first, tie.second, score))
        played.append(scored)
    return played


def repeats(played: Played) -> list[frozenset[str]]:
    """The pairings met again, and the bots given a bye again, in the order they happened."""
    seen: Counter[frozenset[str]] = Counter()
    again = []
    for round_ in played:
        for tie in (r.tie for r in round_):
            key = frozenset(tie.bots()) | ({"(bye)"} if tie.bye else set())
            if seen[key]:
                again.append(key)
            seen[key] += 1
    return again


def pairings(bots: list[str]) -> Iterator[list[tuple[str, str]]]:
    """Every perfect matching of an even field."""
    if not bots:
        yield []
        return
    top, rest = bots[0], bots[1:]
    for index, other in enumerate(rest):
        for more in pairings(rest[:index] + rest[index + 1 :]):
            yield [(top, other), *more]


def met_counts(played: Played) -> Counter[frozenset[str]]:
    return Counter(frozenset(r.tie.bots()) for round_ in played for r in round_ if not r.tie.bye)


def test_looking_ahead_avoids_the_repeat_method_1_is_forced_into() -> None:
    """Six bots, four rounds, the lower seed wins every tie. Method 1's third round leaves
    pairings no fourth round can complete; method 2's third round pairs b-c and e-a instead."""
    lower = {bot: index for index, bot in enumerate(SIX)}

    def upset(tie: Tie) -> float:
        assert tie.second is not None
        return 0.0 if lower[tie.first] < lower[tie.second] else 2.0

    old, new = play(SIX, 4, 1, upset), play(SIX, 4, 2, upset)
    assert repeats(old) == [frozenset("ac")]
    assert repeats(new) == []
    assert [r.tie for r in old[2]] == [Tie("d", "f"), Tie("b", "e"), Tie("a", "c")]
    assert [r.tie for r in new[2]] == [Tie("d", "f"), Tie("b", "c"), Tie("e", "a")]
    # after method 1's three rounds, every fourth round repeats a pairing
    met = met_counts(old[:3])
    assert all(any(met[frozenset(p)] for p in pairs) for pairs in pairings(SIX))


def test_the_bye_goes_where_it_forces_no_repeat() -> None:
    """Nine bots after six rounds. Method 1 gives the bye to d (the lowest ranked without one)
    and must then pair g and h again; method 2 gives it to a, who has had none either, and the
    others pair without a repeat."""
    nine = list("abcdefghi")
    played = rounds_of(
        [
            [("a", "b", 2), ("c", "d", 0), ("e", "f", 0), ("g", "h", 0), ("i", None, 0)],
            [("a", "d", 0), ("f", "h", 2), ("i", "b", 0), ("c", "e", 0), ("g", None, 0)],
            [("d", "f", 2), ("a", "e", 0), ("b", "g", 2), ("h", "i", 0), ("c", None, 0)],
            [("d", "b", 0), ("e", "i", 0), ("f", "a", 0), ("c", "g", 2), ("h", None, 0)],
            [("b", "c", 0), ("d", "i", 0), ("a", "h", 2), ("e", "g", 0), ("f", None, 0)],
            [("i", "a", 0), ("b", "f", 0), ("c", "h", 2), ("d", "g", 0), ("e", None, 0)],
        ]
    )
    assert repeats(played) == []
    old = swiss_round(nine, played, 7, method=1)
    new = swiss_round(nine, played, 7, method=2)
    assert old[-1] == Tie("d")
    assert repeats([*played, [result(t.first, t.second) for t in old]]) == [frozenset("gh")]
    assert new[-1] == Tie("a")
    assert repeats([*played, [result(t.first, t.second) for t in new]]) == []


def test_the_fewest_repeats_round_is_exact_where_greedy_is_not() -> None:
    """Six bots after six rounds (every pairing met, some twice): no round avoids repeats.
    Method 1 pairs top down with the least-met bot (4 meetings again); method 2 finds the round
    of fewest (3, the least of all 15 rounds of six)."""
    played = rounds_of(
        [
            [("a", "b", 2), ("c", "d", 2), ("e", "f", 2)],
            [("a", "c", 2), ("e", "b", 2), ("d", "f", 2)],
            [("a", "e", 0), ("c", "f", 2), ("d", "b", 0)],
            [("e", "c", 2), ("a", "d", 2), ("b", "f", 2)],
            [("e", "d", 2), ("a", "f", 2), ("b", "c", 2)],
            [("e", "a", 0), ("b", "c", 2), ("d", "f", 2)],
        ]
    )
    met = met_counts(played)

    def cost(ties: Sequence[Tie] | Sequence[tuple[str, str]]) -> int:
        return sum(met[frozenset(t.bots() if isinstance(t, Tie) else t)] for t in ties)

    old = swiss_round(SIX, played, 7, method=1)
    new = swiss_round(SIX, played, 7, method=2)
    least = min(cost(pairs) for pairs in pairings(SIX))
    assert (cost(old), cost(new), least) == (4, 3, 3)
    assert new == (Tie("a", "b"), Tie("e", "d"), Tie("c", "f"))


@pytest.mark.parametrize("bots", range(4, 11))
def test_a_round_robin_s_rounds_as_a_swiss_never_repeat(bots: int) -> None:
    """The guarantee: as many rounds as a round robin has (N - 1, N for an odd field), under
    results that favour the better seed, the lower one, or chance; no pairing twice, no bye
    twice. Method 1 repeats in some of these."""
    seeds = [f"b{index}" for index in range(bots)]
    rounds = bots if bots % 2 else bots - 1
    place = {bot: index for index, bot in enumerate(seeds)}

    def better(tie: Tie) -> float:
        assert tie.second is not None
        return 2.0 if place[tie.first] < place[tie.second] else 0.0

    def worse(tie: Tie) -> float:
        return 2.0 - better(tie)

    rules: list[object] = [better, worse, *(random.Random(f"{bots}/{n}") for n in range(8))]
    for rule in rules:
        assert repeats(play(seeds, rounds, 2, rule)) == []


def test_method_1_repeats_in_round_robin_s_rounds() -> None:
    """What the test above would catch: method 1 on the same kind of events (six bots, five
    rounds, the lower seed winning) pairs two pairings again."""
    seeds = [f"b{index}" for index in range(6)]

    def worse(tie: Tie) -> float:
        assert tie.second is not None
        return 2.0 if seeds.index(tie.first) > seeds.index(tie.second) else 0.0

    assert len(repeats(play(seeds, 5, 1, worse))) == 2
    assert repeats(play(seeds, 5, 2, worse)) == []


def test_a_look_ahead_that_runs_out_still_pairs_the_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every look-ahead with no budget fails: the round of fewest repeats (here none) is
    paired instead, still the first in Monrad order."""
    monkeypatch.setattr("tournaments.events.swiss.LOOKAHEAD_BUDGET", 0)
    played = rounds_of([[("a", "b", 2), ("c", "d", 2), ("e", "f", 2)]])
    assert swiss_round(SIX, played, 5) == (Tie("a", "c"), Tie("e", "b"), Tie("d", "f"))


def test_method_2_s_first_rounds_are_method_1_s_when_no_repeat_looms() -> None:
    """Where nothing is forced the two agree: round 1 by seed, then by score."""
    rng = random.Random(7)
    seeds = [f"b{index}" for index in range(16)]
    played: Played = []
    for _ in range(4):
        old = swiss_round(seeds, played, 5, method=1)
        assert swiss_round(seeds, played, 5, method=2) == old
        played.append([result(t.first, t.second, rng.choice((0.0, 2.0))) for t in old])


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="no Swiss pairing method 3"):
        swiss_round(SIX, [], 3, method=3)


def test_every_pairing_of_six_is_counted() -> None:
    """The brute force the tests above compare with: 15 rounds of six."""
    assert len(list(pairings(SIX))) == 15 == len(set(map(frozenset, pairings(SIX))))
    assert all(len(set(itertools.chain(*p))) == 6 for p in pairings(SIX))
