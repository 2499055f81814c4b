"""Builds the lane tables that :mod:`referee.rules._tables` ships precomputed.

The rules look up, for each 13-bit suit lane (8,192 of them), its deadwood value, its runs-only
minimum deadwood and the runs that reach it. Working those out takes longer than starting Python,
so they are computed here once and written as compact literals; importing the rules then only
unpacks them. Nothing imports this module at run time. :func:`render` gives the text of the
generated module (the rules do no I/O, so the test module writes and checks the file):

    python -m tests.test_rules_tables --write    # rewrite referee/rules/_tables.py from render()
    .venv/bin/pytest tests/test_rules_tables.py  # fails if the shipped copy has drifted
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules.cards import LANE, RANK_VALUES

LANES = 1 << LANE
_HEX_PER_LINE = 88


def lane_values() -> list[int]:
    """Deadwood value of every lane: the sum over its set bits."""
    return [
        sum(RANK_VALUES[rank] for rank in range(LANE) if lane >> rank & 1) for lane in range(LANES)
    ]


def lane_runs() -> tuple[list[int], list[int]]:
    """Runs-only minimum deadwood of every lane, and the choice that reaches it.

    The lowest card of a lane is either deadwood or the bottom of a run; a lane minus some bits
    is a smaller number, so one pass in increasing order fills the table. ``choice[lane]`` is 0
    when the lowest card is deadwood, else the length of the run it starts.
    """
    best = [0] * LANES
    choice = [0] * LANES
    for lane in range(1, LANES):
        low = lane & -lane
        rank = low.bit_length() - 1
        top = best[lane ^ low] + RANK_VALUES[rank]
        pick = 0
        length, run = 1, low
        while rank + length < LANE and lane >> (rank + length) & 1:
            run |= 1 << (rank + length)
            length += 1
            if length >= 3 and best[lane ^ run] < top:
                top, pick = best[lane ^ run], length
        best[lane], choice[lane] = top, pick
    return best, choice


def split_of(lane: int, choice: Sequence[int]) -> tuple[int, ...]:
    """The runs (as lane masks, lowest first) of the tabled best split of one lane."""
    runs = []
    while lane:
        low = lane & -lane
        length = choice[lane]
        if length:
            run = ((1 << length) - 1) * low
            runs.append(run)
            lane ^= run
        else:
            lane ^= low
    return tuple(runs)


def lane_splits(choice: Sequence[int]) -> tuple[list[tuple[int, ...]], list[int]]:
    """The distinct best splits (in order of first use) and, per lane, the index of its own."""
    splits: list[tuple[int, ...]] = []
    index_of: dict[tuple[int, ...], int] = {}
    indices = []
    for lane in range(LANES):
        split = split_of(lane, choice)
        if split not in index_of:
            index_of[split] = len(splits)
            splits.append(split)
        indices.append(index_of[split])
    return splits, indices


def _hex_literal(name: str, data: bytes, doc: str) -> list[str]:
    text = data.hex()
    lines = [f"{name} = bytes.fromhex("]
    lines += [f'    "{text[i : i + _HEX_PER_LINE]}"' for i in range(0, len(text), _HEX_PER_LINE)]
    return [*lines, ")", f'"""{doc}"""', ""]


def _u16(values: Sequence[int]) -> bytes:
    return b"".join(value.to_bytes(2, "little") for value in values)


def render() -> str:
    """The source text of the generated module, built from first principles."""
    values = lane_values()
    best, choice = lane_runs()
    splits, indices = lane_splits(choice)
    left = [lane ^ sum(splits[index]) for lane, index in enumerate(indices)]
    lines = [
        '"""Precomputed lane tables of the rules (generated: do not edit).',
        "",
        "Written by ``python -m tests.test_rules_tables --write`` from the builders in",
        ":mod:`referee.rules._tablegen`; ``tests/test_rules_tables.py`` checks this copy. Each",
        "table has one entry per 13-bit suit lane (8,192), as bytes; two-byte entries are little",
        "endian.",
        '"""',
        "",
    ]
    lines += _hex_literal("LANE_VALUE", bytes(values), "Deadwood value of each lane.")
    lines += _hex_literal(
        "LANE_RUN_DEADWOOD", bytes(best), "Runs-only minimum deadwood of each lane."
    )
    lines += _hex_literal(
        "LANE_LEFT", _u16(left), "Two bytes per lane: the lane's cards in no run of its split."
    )
    lines += _hex_literal(
        "LANE_SPLIT", _u16(indices), "Two bytes per lane: the index of its split in RUN_SPLITS."
    )
    lines.append("RUN_SPLITS = (")
    lines += [f"    {split!r}," for split in splits]
    lines += [")", '"""Every distinct best split: its runs as lane masks, lowest first."""', ""]
    return "\n".join(lines)
