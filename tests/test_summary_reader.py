"""A stored summary has one reader, :meth:`MatchSummary.from_dict`, with a fast path for the
usual form (a league's standings read 100,000): the fast path gives what the long way gives, on
every golden log's summary and on summaries fuzzed from them, or it steps aside."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from pathlib import Path

import pytest

from protocol.bounded import JsonObject, JsonValue
from referee.replay import read_log
from tournaments.formats.hands import hand_stats, logged_hands
from tournaments.formats.records import MatchSummary, _usual_summary

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.jsonl"))
ODD_VALUES: tuple[JsonValue, ...] = (
    None,
    0,
    1,
    -1,
    2,
    1.5,
    True,
    "",
    "x",
    "complete",
    [],
    [0],
    [None],
    [[1], [2]],
    {},
    {"a": 1},
)


def golden_summary(path: Path) -> MatchSummary:
    """The summary the runner would keep of a golden log: its result record, salt aside."""
    log = read_log(path)
    record = log.result
    assert record is not None
    return MatchSummary(
        dataclasses.replace(record, line=0, salt=None),
        hand_stats(logged_hands(log)),
        log.names,
        path.name,
        "w1" if "bank" in path.name else None,
    )


def long_way(data: JsonObject) -> MatchSummary | type[BaseException]:
    try:
        return MatchSummary._read(data)
    except Exception as error:
        return type(error)


def fast_way(data: JsonObject) -> MatchSummary | None:
    try:
        return _usual_summary(data)
    except Exception:
        return None


def places(value: JsonValue, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in a document, as the keys and indices that reach it."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += places(item, (*path, index))
    return found


def mutated(data: JsonObject, rng: random.Random) -> JsonObject:
    """``data`` with one place set to an odd value, or taken out."""
    changed = copy.deepcopy(data)
    path = rng.choice(places(changed))
    parent: JsonValue = changed
    for step in path[:-1]:
        parent = parent[step]
    if rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    return changed


def test_the_fast_path_reads_every_golden_summary_as_the_long_way() -> None:
    """Where it reads a summary at all: not one with an undecided game (a ``null`` among its
    game winners), which it leaves to the long way."""
    fast_paths = 0
    for path in GOLDEN:
        summary = golden_summary(path)
        data = json.loads(json.dumps(summary.to_dict()))
        assert long_way(data) == summary == MatchSummary.from_dict(data)
        fast = fast_way(data)
        assert fast is None or fast == summary
        assert (fast is None) == (None in summary.game_winners)
        fast_paths += fast is not None
    assert len(GOLDEN) > fast_paths >= 4


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.name)
def test_on_fuzzed_summaries_the_fast_path_agrees_or_steps_aside(path: Path) -> None:
    data = golden_summary(path).to_dict()
    usual = fast_way(data) is not None
    rng = random.Random(path.name)
    taken = 0
    for _ in range(300):
        changed = mutated(data, rng)
        fast, slow = fast_way(changed), long_way(changed)
        if fast is not None:
            taken += 1
            assert fast == slow, changed
        if isinstance(slow, MatchSummary):
            assert MatchSummary.from_dict(changed) == slow
        else:
            with pytest.raises(slow):
                MatchSummary.from_dict(changed)
    if usual:
        assert taken > 30  # many a mutation (a count, a name) stays on the fast path
