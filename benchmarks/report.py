"""Printing and saving the results: rich tables, cross-check lines, and the JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchmarks.agreement import Agreement
from benchmarks.harness import Measured, ratio
from benchmarks.play import PlayStats


@dataclass
class Section:
    """The results of one measurement, ready to print and to save."""

    key: str
    title: str
    unit: str
    measured: list[Measured]
    agreements: list[Agreement] = field(default_factory=list)
    play: dict[str, PlayStats] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def speed_ratio(value: float) -> str:
    """Ours ÷ peer, with a plain reading."""
    if value >= 1:
        return f"{value:.2f}x (ours {value:.1f}x faster)"
    return f"{value:.2f}x (peer {1 / value:.1f}x faster)"


def ours_of(section: Section) -> Measured:
    """Our variant of a section (always the first)."""
    return section.measured[0]


def rate_cells(section: Section, entry: Measured) -> list[str]:
    """Median, range, time per unit, and ratio against ours."""
    ours = ours_of(section)
    against = "—" if entry is ours else speed_ratio(ratio(ours, entry))
    per_unit = 1e6 / entry.median
    per = f"{per_unit:.2f} µs" if per_unit < 1000 else f"{per_unit / 1000:.2f} ms"
    return [
        f"{entry.median:,.0f}",
        f"{entry.low:,.0f}-{entry.high:,.0f}",
        per,
        against,
    ]


def new_table(
    title: str, text_columns: Sequence[tuple[str, int]], number_columns: Sequence[str]
) -> Table:
    """A table whose text columns (name, least width) wrap and whose number columns never do."""
    table = Table(title=title, title_justify="left", show_lines=True)
    for name, width in text_columns:
        table.add_column(name, min_width=width)
    for name in number_columns:
        table.add_column(name, justify="right", no_wrap=True)
    return table


def plain(*cells: str) -> list[Text]:
    """Cells shown exactly as written (no rich markup: ``list[int]`` must stay)."""
    return [Text(cell) for cell in cells]


def calls_table(section: Section, runs: int) -> Table:
    """The table of a call-rate section."""
    unit = section.unit
    table = new_table(
        section.title,
        (("library", 9), ("call timed", 40), ("answers", 30)),
        (f"{unit}/s\nmedian of {runs}", "range\n(per run)", f"per {unit[:-1]}", "ours ÷ peer"),
    )
    for entry in section.measured:
        variant = entry.variant
        table.add_row(
            *plain(variant.library, variant.call, variant.returns, *rate_cells(section, entry))
        )
    return table


def play_table(section: Section, runs: int) -> Table:
    """The table of the random-play section."""
    table = new_table(
        section.title,
        (("library", 9), ("driver (a Python loop, both seats uniform random)", 34)),
        (
            f"hands/s\nmedian of {runs}",
            "range\n(per run)",
            "per hand",
            "ours ÷ peer",
            "decisions\n/hand",
            "≥2 legal\n/hand",
            "decisions/s",
            "chance nodes\n/hand",
        ),
    )
    for entry in section.measured:
        stats = section.play[entry.variant.library]
        per_hand = stats.per_hand(stats.decisions)
        table.add_row(
            *plain(
                entry.variant.library,
                entry.variant.call,
                *rate_cells(section, entry),
                f"{per_hand:.1f}",
                f"{stats.per_hand(stats.choices):.1f}",
                f"{entry.median * per_hand:,.0f}",
                f"{stats.per_hand(stats.chance):.1f}",
            )
        )
    return table


def endings_line(library: str, stats: PlayStats) -> str:
    """How the hands of one engine ended, as shares."""
    parts = [
        f"{name} {count} ({100 * count / stats.hands:.1f} %)"
        for name, count in stats.endings.most_common()
    ]
    return f"{library} endings over {stats.hands} timed hands: " + ", ".join(parts)


def agreement_lines(agreement: Agreement) -> list[str]:
    """The summary of one cross-check, then its example hands."""
    lines = [agreement.summary()]
    for example in agreement.examples:
        answers = "; ".join(f"{name} {value}" for name, value in example.items() if name != "hand")
        lines.append(f"    hand {example['hand']}: {answers}")
    return lines


def print_section(console: Console, section: Section, runs: int) -> None:
    """One measurement: its table, then its cross-checks or play details."""
    console.print()
    table = play_table(section, runs) if section.play else calls_table(section, runs)
    console.print(table)
    for agreement in section.agreements:
        for line in agreement_lines(agreement):
            console.print(line, highlight=False, markup=False)
    for library, stats in section.play.items():
        console.print(endings_line(library, stats), highlight=False, markup=False)
    for note in section.notes:
        console.print(note, highlight=False, markup=False)


RULE_DIFFERENCES = (
    "rules differ a little: OpenSpiel's knocker lays melds and the defender lays off one "
    "decision at a time, ours settles a knock in one action (layout and layoffs automatic); "
    "OpenSpiel offers one knock action, ours one knock per discard that allows it; OpenSpiel "
    "lets a player throw back the card just taken from the pile (two turns in a row of that "
    "end the hand: REPEATED_MOVE), ours forbids it"
)


def play_notes(section: Section) -> list[str]:
    """Per-decision costs, so engines with different decision counts can be compared."""
    notes = []
    for entry in section.measured:
        stats = section.play[entry.variant.library]
        per_decision = 1e6 / (entry.median * stats.per_hand(stats.decisions))
        chance = " (its chance nodes included)" if stats.chance else ""
        notes.append(
            f"{entry.variant.library}: {per_decision:.1f} µs per player decision, whole loop "
            f"included{chance}"
        )
    if len(section.measured) > 1:
        notes.append(RULE_DIFFERENCES)
    return notes


# --- JSON --------------------------------------------------------------------------------------


def measured_json(section: Section, entry: Measured) -> dict[str, object]:
    """One variant's figures."""
    variant = entry.variant
    ours = ours_of(section)
    return {
        "key": variant.key,
        "library": variant.library,
        "call": variant.call,
        "answers": variant.returns,
        "unit": f"{section.unit}/s",
        "rates": entry.rates,
        "median": entry.median,
        "min": entry.low,
        "max": entry.high,
        "ours_over_peer": None if entry is ours else ratio(ours, entry),
    }


def play_json(stats: PlayStats) -> dict[str, object]:
    """One engine's random-play totals."""
    return {
        "hands": stats.hands,
        "decisions_per_hand": stats.per_hand(stats.decisions),
        "choices_per_hand": stats.per_hand(stats.choices),
        "chance_nodes_per_hand": stats.per_hand(stats.chance),
        "endings": dict(stats.endings.most_common()),
    }


def section_json(section: Section) -> dict[str, object]:
    """One measurement's figures and checks."""
    return {
        "title": section.title,
        "variants": [measured_json(section, entry) for entry in section.measured],
        "agreement": [agreement.to_json() for agreement in section.agreements],
        "play": {library: play_json(stats) for library, stats in section.play.items()},
        "notes": section.notes,
    }
