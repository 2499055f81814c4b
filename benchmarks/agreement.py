"""Untimed cross-checks: do the engines give the same answers on the hands that were timed?

A *judge* answers one question about a hand given in our cards (it converts to its library's
form itself, since nothing here is timed). :func:`compare` asks every judge about every hand and
keeps the hands on which they do not all agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from referee.rules import Card, card_set

Answer = int | frozenset[str]
"""A deadwood value, or a set of cards in our notation."""

Judge = Callable[[list[Card]], Answer]

MAX_EXAMPLES = 5


@dataclass
class Agreement:
    """The outcome of asking several engines one question about the same hands."""

    question: str
    judges: list[str]
    expected: str = ""
    """What to expect when the engines are known to differ (empty: they should all agree)."""
    hands: int = 0
    nonempty: int = 0
    """Hands where the first judge answered a non-empty set of cards."""
    mismatches: int = 0
    examples: list[dict[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the report."""
        who = ", ".join(self.judges)
        tally = f"{self.hands} hands"
        if self.nonempty:
            tally += f" ({self.nonempty} with a non-empty answer)"
        if len(self.judges) < 2:
            return f"{self.question}: only {who} available, nothing to compare"
        if not self.mismatches:
            return f"{self.question}: {who} agree on all {tally}"
        share = 100 * self.mismatches / self.hands
        tail = f" ({self.expected})" if self.expected else ""
        return (
            f"{self.question}: {who} disagree on {self.mismatches} of {tally} ({share:.2f} %){tail}"
        )

    def to_json(self) -> dict[str, object]:
        """Machine-readable form."""
        return {
            "question": self.question,
            "judges": self.judges,
            "expected": self.expected,
            "hands": self.hands,
            "nonempty": self.nonempty,
            "mismatches": self.mismatches,
            "examples": self.examples,
        }


def show(answer: Answer) -> str:
    """An answer as text: the number, or the cards sorted and space-separated."""
    if isinstance(answer, int):
        return str(answer)
    return "{" + " ".join(sorted(answer)) + "}"


def compare(
    question: str, hands: Iterable[list[Card]], judges: Mapping[str, Judge], expected: str = ""
) -> Agreement:
    """Ask every judge about every hand; record the hands where the answers differ."""
    result = Agreement(question, list(judges), expected)
    for cards in hands:
        result.hands += 1
        answers = {name: judge(cards) for name, judge in judges.items()}
        first = next(iter(answers.values()))
        if isinstance(first, frozenset) and first:
            result.nonempty += 1
        if len(set(answers.values())) > 1:
            result.mismatches += 1
            if len(result.examples) < MAX_EXAMPLES:
                example = {"hand": str(card_set(cards))}
                example.update({name: show(answer) for name, answer in answers.items()})
                result.examples.append(example)
    return result


__all__ = ["Agreement", "Answer", "Judge", "compare", "show"]
