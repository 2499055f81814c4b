"""The lane tables the rules ship precomputed (``referee/rules/_tables.py``).

The shipped copy must be exactly what the builders of ``referee.rules._tablegen`` make (the drift
check), and the tables the rules unpack from it at import must hold what the original
import-time construction made, and what a brute force independent of the builders finds.

    python -m tests.test_rules_tables --write    # regenerate referee/rules/_tables.py
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

from referee.rules import CARD_VALUES, CardSet, _tablegen, _tables, cards, deadwood_value, melds
from referee.rules.melds import MELDS_BY_MASK, MeldKind

TABLES = Path(_tables.__file__)
LANE = 13
LANES = 1 << LANE


def test_shipped_tables_are_what_the_builders_make() -> None:
    assert TABLES.read_text(encoding="utf-8") == _tablegen.render(), (
        "referee/rules/_tables.py has drifted: run python -m tests.test_rules_tables --write"
    )


def test_lane_value_is_the_sum_of_card_values() -> None:
    table = cards.LANE_VALUE
    assert type(table) is tuple
    assert len(table) == LANES
    for lane in range(LANES):
        cards_of_lane = [rank for rank in range(LANE) if lane >> rank & 1]
        assert table[lane] == sum(CARD_VALUES[rank] for rank in cards_of_lane)
        assert type(table[lane]) is int
    spades = 0b1000000000101
    assert deadwood_value(CardSet(spades << 3 * LANE)) == table[spades] == 1 + 3 + 10


def brute_lane_runs() -> list[int]:
    """Runs-only minimum deadwood of every lane, from the top card down (the builders go up)."""
    best = [0] * LANES
    for lane in range(1, LANES):
        rank = lane.bit_length() - 1
        top = 1 << rank
        value = best[lane ^ top] + CARD_VALUES[rank]
        run, length = top, 1
        while rank - length >= 0 and lane >> (rank - length) & 1:
            run |= 1 << (rank - length)
            length += 1
            if length >= 3:
                value = min(value, best[lane ^ run])
        best[lane] = value
    return best


def test_lane_run_deadwood_is_the_runs_only_minimum() -> None:
    table = melds.LANE_RUN_DEADWOOD
    assert type(table) is list
    assert table == brute_lane_runs()
    assert all(type(value) is int for value in table)


def original_lane_run_melds() -> tuple[tuple[tuple[object, ...], ...], ...]:
    """The construction the rules did at import before the tables were shipped."""
    _, choice = _tablegen.lane_runs()
    return tuple(
        tuple(
            tuple(MELDS_BY_MASK[run << (suit * LANE)] for run in _tablegen.split_of(lane, choice))
            for lane in range(LANES)
        )
        for suit in range(4)
    )


def test_lane_run_melds_are_the_original_construction() -> None:
    table = melds._LANE_RUN_MELDS
    assert table == original_lane_run_melds()
    assert type(table) is tuple
    assert all(type(per_suit) is tuple and len(per_suit) == LANES for per_suit in table)
    for suit, per_suit in enumerate(table):
        for lane, runs in enumerate(per_suit):
            assert type(runs) is tuple
            covered = 0
            for meld in runs:
                assert meld is MELDS_BY_MASK[meld.mask]  # the one shared object per meld
                assert meld.kind is MeldKind.RUN
                assert meld.mask & covered == 0
                covered |= meld.mask
            assert covered & ~(lane << (suit * LANE)) == 0
            left = lane ^ (covered >> (suit * LANE))
            assert melds._LANE_LEFT[lane] == left
            assert melds.LANE_RUN_DEADWOOD[lane] == sum(
                CARD_VALUES[rank] for rank in range(LANE) if left >> rank & 1
            )


def test_lane_left_is_a_tuple_of_ints() -> None:
    table = melds._LANE_LEFT
    assert type(table) is tuple
    assert len(table) == LANES
    assert all(type(value) is int for value in table)
    assert table[0b111] == 0 and table[0b1111011] == 0b11  # noqa: PT018 - two examples


def test_set_choices_are_every_set_of_a_rank_in_search_order() -> None:
    # "No set" first, then the 4-set, then the 3-sets in combination order: the first best wins.
    for rank in range(LANE):
        for pattern in range(16):
            held = [suit for suit in range(4) if pattern >> suit & 1]
            sizes = {4: (4, 3), 3: (3,)}.get(len(held), ())
            expected = [0] + [
                sum(1 << (suit * LANE + rank) for suit in group)
                for size in sizes
                for group in itertools.combinations(held, size)
            ]
            choices = melds._SET_CHOICES[rank][pattern]
            assert type(choices) is tuple
            assert list(choices) == expected
            assert all(MELDS_BY_MASK[mask].kind is MeldKind.SET for mask in choices[1:])


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates the shipped tables from the builders."""
    parser = argparse.ArgumentParser(description="Regenerate referee/rules/_tables.py.")
    parser.add_argument("--write", action="store_true", help="rewrite the shipped tables")
    args = parser.parse_args(argv)
    text = _tablegen.render()
    if not args.write:
        same = TABLES.read_text(encoding="utf-8") == text
        print(f"{TABLES}: {'matches the builders' if same else 'drifted (use --write)'}")
        return 0 if same else 1
    TABLES.write_text(text, encoding="utf-8")
    print(f"wrote {TABLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
