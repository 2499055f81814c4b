"""The command line's words for a game: how a hand ended, and what each replay step says.

The replay (:mod:`referee.replay`) hands over typed steps and records; the terminal (``gin play``,
``gin replay``) and the HTML page say them in these words, written once here. Names and details
come from the log, which a bot may have shaped: the callers escape what these return.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.replay import (
    ActionRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    ResultRecord,
    Step,
    Viewer,
    viewer_index,
)
from referee.rules import Action, Card, DrawStock, HandEnd, Knock, TakeUpcard, format_cards
from tournaments.stats.inference import ScoreEstimate
from tournaments.stats.sprt import SprtSettings, Verdict

__all__ = [
    "END_WORDS",
    "counts_text",
    "drawn_text",
    "elo_text",
    "scores_text",
    "series_lines",
    "series_verdict",
    "step_text",
    "verdict_text",
]


Names = tuple[str, str]

END_WORDS = {
    HandEnd.GIN: "gin",
    HandEnd.KNOCK: "knock",
    HandEnd.UNDERCUT: "undercut",
    HandEnd.STOCK_EXHAUSTED: "drawn (stock)",
    HandEnd.TURN_CAP: "drawn (turn cap)",
}
"""A hand's end in a word or two (a table's cell)."""
END_VERBS = {
    HandEnd.GIN: "goes gin",
    HandEnd.KNOCK: "knocks and wins",
    HandEnd.UNDERCUT: "is undercut",
}
"""What the knocker did, in a sentence about a knocked hand's end."""
DRAWN_REASONS = {
    HandEnd.STOCK_EXHAUSTED: "the stock ran out",
    HandEnd.TURN_CAP: "the turn cap was reached",
}
"""Why a drawn hand was drawn."""
CHOOSERS = {
    ActionRecord.SUBSTITUTE: " (played by the referee after the fault)",
    ActionRecord.FORCED: " (the only legal action)",
}
"""What an action's line adds when the bot did not choose it."""


def games_text(games: tuple[int, ...], none: str = "") -> str:
    """The games (0-based) a hand's points went into, as people count them (``none``: what
    stands for no game).

    >>> games_text((0,)), games_text((1, 2)), games_text((), none="-")
    ('game 1', 'games 2, 3', 'game -')
    """
    numbers = ", ".join(str(game + 1) for game in games) or none
    return f"game{'s' if len(games) > 1 else ''} {numbers}"


def scores_text(winner: str, points: int, games: tuple[int, ...], none: str = "") -> str:
    """Who scored how much where.

    >>> scores_text("ann", 25, (0, 1))
    'ann scores 25 (games 1, 2)'
    """
    return f"{winner} scores {points} ({games_text(games, none)})"


def drawn_text(end: str) -> str:
    """A drawn hand's showdown, with how it ended.

    >>> drawn_text("turn cap")
    'drawn hand (turn cap): nobody scores'
    """
    return f"drawn hand ({end}): nobody scores"


def step_text(step: Step, viewer: Viewer, names: Names) -> str:
    """What happened at a replay step, as ``viewer`` saw it."""
    record = step.record
    if isinstance(record, HandStart):
        text = deal_text(record, step.card, names)
    elif isinstance(record, ActionRecord):
        text = action_texts(record.seat, record.action, step.card, names)[viewer_index(viewer)]
        text += CHOOSERS.get(record.by, "")
    elif isinstance(record, FaultRecord):
        text = fault_texts(record, names)[viewer_index(viewer)]
    elif isinstance(record, HandEndRecord):
        text = hand_end_text(record, names)
    elif isinstance(record, ResultRecord):
        text = result_text(record, names)
    else:
        text = note_text(step)
    return text


def deal_text(record: HandStart, upcard: Card | None, names: Names) -> str:
    """A deal: the hand, the dealer and the upcard."""
    return f"hand {record.hand + 1}: {names[record.dealer]} deals; the upcard is {upcard}"


def _verb(action: Action, card: Card | None, shown: bool) -> str:
    """How an action reads, with its card when the viewer may see it.

    >>> from referee.rules import DRAW_STOCK
    >>> _verb(DRAW_STOCK, Card.parse("7h"), True), _verb(DRAW_STOCK, Card.parse("7h"), False)
    ('draws 7h from the stock', 'draws from the stock')
    """
    if isinstance(action, DrawStock):
        return f"draws {card} from the stock" if shown else "draws from the stock"
    if isinstance(action, TakeUpcard):
        return f"takes the upcard {card}"
    if isinstance(action, Knock):
        declared = ""
        if action.melds is not None:
            declared = " declaring " + " | ".join(format_cards(meld) for meld in action.melds)
        return f"knocks, discarding {card}{declared}"
    words = {
        "pass upcard": "passes the upcard",
        "draw discard": f"draws {card} from the discard pile",
    }
    return words.get(str(action), f"discards {card}")


def action_texts(
    seat: int, action: Action, card: Card | None, names: Names
) -> tuple[str, str, str]:
    """An action as the referee and each seat saw it: only the actor sees a stock draw.

    >>> from referee.rules import DRAW_STOCK
    >>> action_texts(1, DRAW_STOCK, Card.parse("Qs"), ("ann", "bob"))
    ('bob draws Qs from the stock', 'bob draws from the stock', 'you draw Qs from the stock')
    """
    referee = f"{names[seat]} {_verb(action, card, True)}"
    own = "you " + _you(_verb(action, card, True))
    other = f"{names[seat]} {_verb(action, card, False)}"
    return (referee, own, other) if seat == 0 else (referee, other, own)


def _you(text: str) -> str:
    """The second person of a verb phrase.

    >>> _you("passes the upcard"), _you("discards 7h"), _you("knocks, discarding 5s")
    ('pass the upcard', 'discard 7h', 'knock, discarding 5s')
    """
    verb, _, rest = text.partition(" ")
    mark = verb[-1] if verb[-1:] in (",", ";", ":") else ""
    verb = verb.removesuffix(mark)
    verb = verb[:-2] if verb.endswith("ses") else verb[:-1]
    return f"{verb}{mark} {rest}"


def fault_texts(record: FaultRecord, names: Names) -> tuple[str, str, str]:
    """A fault as the referee (with the time and evidence) and each seat saw it."""
    verdict = "the series is forfeited" if record.forfeited else f"strike {record.strikes}"
    if record.stray and not record.forfeited:
        verdict += "; the decision goes on"
    public = f"fault by {names[record.seat]}: {record.kind}: {record.detail[:500]} ({verdict})"
    evidence = ", ".join(f"{key}={value!r}" for key, value in record.evidence.items())
    referee = f"{public}; after {record.elapsed_ms:g} ms; evidence: {evidence or 'none'}"
    return (referee, public, public)


def hand_end_text(record: HandEndRecord, names: Names) -> str:
    """How a hand ended: who knocked and scored, or why it was drawn."""
    hand = f"hand {record.hand + 1}"
    end = HandEnd(record.end)
    if record.knocker is None or record.winner is None:
        reason = DRAWN_REASONS.get(end, DRAWN_REASONS[HandEnd.TURN_CAP])
        return f"{hand} is drawn: {reason}; nobody scores"
    scores = scores_text(names[record.winner], record.points, record.games)
    return f"{hand}: {names[record.knocker]} {END_VERBS[end]}; {scores}"


def series_verdict(winner: str | None) -> str:
    """Who won a series, if anyone did.

    >>> series_verdict("ann"), series_verdict(None)
    ('ann wins the series', 'no winner')
    """
    return "no winner" if winner is None else f"{winner} wins the series"


def series_lines(record: ResultRecord, names: Names) -> list[str]:
    """How a series ended, a line each: the verdict, then each game's totals and winner (and
    who forfeited, if anyone did)."""
    lines = [result_text(record, names)]
    for game, winner in enumerate(record.game_winners):
        totals = " vs ".join(f"{names[seat]} {record.totals[seat][game]}" for seat in (0, 1))
        won = "no winner" if winner is None else f"won by {names[winner]}"
        lines.append(f"game {game + 1}: {totals} ({won})")
    if record.forfeited:
        lines.append("forfeited by " + ", ".join(names[seat] for seat in record.forfeited))
    return lines


def result_text(record: ResultRecord, names: Names) -> str:
    """Who won the series, how it ended and after how many hands."""
    verdict = series_verdict(None if record.winner is None else names[record.winner])
    return f"{verdict} ({record.end}, {record.hands} hands)"


def note_text(step: Step) -> str:
    """A note's verdict and the record where the log disagrees or stops."""
    status = "" if step.status is None else step.status.value
    return f"{status}: {step.problem}"


# --- a match's test (gin match) -----------------------------------------------------------------


def _percent(share: float) -> str:
    return f"{100 * share:g}%"


def h1_text(first: str, second: str, settings: SprtSettings) -> str:
    """What the sequential test accepting H1 says, and no more.

    >>> print(h1_text("new", "old", SprtSettings(0.0, 5.0)))  # doctest: +NORMALIZE_WHITESPACE
    H1 accepted: new is stronger than old by more than +0 Elo; the pairs favour +5 over +0
    (a difference of +0 or less ends this way at most 5% of the time)
    """
    elo0, elo1 = settings.elo0, settings.elo1
    return (
        f"H1 accepted: {first} is stronger than {second} by more than {elo0:+g} Elo; the pairs "
        f"favour {elo1:+g} over {elo0:+g} (a difference of {elo0:+g} or less ends this way at "
        f"most {_percent(settings.alpha)} of the time)"
    )


def h0_text(first: str, second: str, settings: SprtSettings) -> str:
    """What the sequential test accepting H0 says, and no more.

    >>> print(h0_text("new", "old", SprtSettings(0.0, 5.0, beta=0.1)))
    ... # doctest: +NORMALIZE_WHITESPACE
    H0 accepted: new is not stronger than old by +5 Elo or more; the pairs favour +0 over +5
    (a difference of +5 or more ends this way at most 10% of the time)
    """
    elo0, elo1 = settings.elo0, settings.elo1
    return (
        f"H0 accepted: {first} is not stronger than {second} by {elo1:+g} Elo or more; the "
        f"pairs favour {elo0:+g} over {elo1:+g} (a difference of {elo1:+g} or more ends this "
        f"way at most {_percent(settings.beta)} of the time)"
    )


def verdict_text(verdict: Verdict, first: str, second: str, settings: SprtSettings) -> str:
    """The test's decision in one line."""
    return (h1_text if verdict is Verdict.H1 else h0_text)(first, second, settings)


def elo_text(estimate: ScoreEstimate | None) -> str:
    """The Elo difference with its 95% interval (a bound when every pair went one way).

    >>> from tournaments.stats.inference import score_estimate
    >>> elo_text(score_estimate([1.0, 0.75, 0.5, 1.0, 0.75, 0.25]))
    'Elo +154 [-78, +inf]'
    >>> elo_text(score_estimate([1.0] * 8)), elo_text(score_estimate([0.5, 1.0]))
    ('Elo >= +93 (all won)', 'Elo +191 (no interval below 4 pairs)')
    """
    if estimate is None:
        return "Elo: no pairs yet"
    if estimate.bound is not None:
        lower = estimate.bound == "lower"
        word, sign = ("won", ">=") if lower else ("lost", "<=")  # as the standings write it
        edge = estimate.elo_low if lower else estimate.elo_high
        if edge is None:
            return f"Elo: all {word} (no bound below 4 pairs)"
        return f"Elo {sign} {edge:+.0f} (all {word})"
    assert estimate.elo is not None
    if estimate.los is None:
        return f"Elo {estimate.elo:+.0f} (no interval below 4 pairs)"
    low = "-inf" if estimate.elo_low is None else f"{estimate.elo_low:+.0f}"
    high = "+inf" if estimate.elo_high is None else f"{estimate.elo_high:+.0f}"
    return f"Elo {estimate.elo:+.0f} [{low}, {high}]"


def counts_text(counts: Sequence[int]) -> str:
    """The pentanomial: how many pairs the first bot scored 0, ½, 1, 1½ and 2 series of two.

    >>> counts_text((0, 1, 5, 2, 1))
    'pairs 0:0 ½:1 1:5 1½:2 2:1'
    """
    labels = ("0", "½", "1", "1½", "2")
    return "pairs " + " ".join(f"{label}:{n}" for label, n in zip(labels, counts, strict=True))
