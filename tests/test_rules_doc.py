"""The rule book (docs/rules.md) against the rules engine: every marked example is recomputed.

The book carries ``<!-- check: KIND ... -->`` markers next to its worked examples, and two
tables (the rule parameters and the score sheets) are read as they stand. Each kind of marker is
checked here with the engine, so a number in the book that drifts from the engine fails.
"""

from __future__ import annotations

import dataclasses
import enum
import random
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.matchlog import action_to_dict, record_line
from referee.rules import (
    CARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS_UPCARD,
    TAKE_UPCARD,
    Action,
    Card,
    Dealing,
    Discard,
    HandState,
    HollywoodScore,
    IllegalActionError,
    Knock,
    Phase,
    RuleParams,
    best_discards,
    card_set,
    dealt_deck,
    knock_layout,
    lay_off,
    min_deadwood,
    parse_cards,
    score_hand,
    shuffled_deck,
)

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs" / "rules.md"
TEXT = BOOK.read_text(encoding="utf-8")
CHECK = re.compile(r"<!-- check: (?P<kind>[a-z-]+)(?P<args>.*?)-->", re.DOTALL)
KINDS = (
    "deadwood",
    "discards",
    "knock-layout",
    "layoff",
    "score",
    "score-table",
    "hand",
    "deal",
    "stock-end",
    "sheet",
    "params",
    "log-line",
)


def markers(kind: str) -> list[tuple[str, int]]:
    """``(arguments, offset just past the marker)`` of every marker of one kind, in order."""
    return [
        (match["args"].strip(), match.end())
        for match in CHECK.finditer(TEXT)
        if match["kind"] == kind
    ]


def args_of(kind: str) -> list[str]:
    return [args for args, _ in markers(kind)]


TRAILING_MARKER = re.compile(r"\s*<!-- check:[^<]*-->\s*$")
PROSE_KINDS = {
    "deadwood": lambda args: args.rsplit("=", 1)[1],
    "discards": lambda args: args.split("=", 1)[1].split(":")[0],
    "layoff": lambda args: args.rsplit("=", 1)[1].split("off")[0],
    "score": lambda args: args.split()[-1],
    "stock-end": lambda args: args.split("turns=")[1].split()[0],
}
"""For each kind, the number of its result that the prose before the marker must say in bold."""


def prose_before(start: int) -> str:
    """The list item or paragraph just before a marker (other markers in between skipped)."""
    text = TEXT[:start]
    while (trimmed := TRAILING_MARKER.sub("", text)) != text:
        text = trimmed
    return re.split(r"\n\s*\n|\n- ", text)[-1]


def test_prose_says_what_each_marker_checks() -> None:
    """A marker and the sentence it sits under cannot disagree: the prose bolds the result."""
    for match in CHECK.finditer(TEXT):
        number = PROSE_KINDS.get(match["kind"])
        if number is None:
            continue
        value = number(match["args"].strip()).strip()
        prose = prose_before(match.start())
        assert f"**{value}**" in prose, f"**{value}** not in: {prose!r}"


def params_from(pairs: list[str]) -> RuleParams:
    """``name=value`` words as rule parameters (``true``/``false`` for options)."""
    values: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        values[name] = {"true": True, "false": False}.get(value, value)
        if isinstance(values[name], str) and values[name].isdigit():
            values[name] = int(values[name])
    return RuleParams.from_dict(values)


def test_every_kind_of_check_is_used() -> None:
    found = {match["kind"] for match in CHECK.finditer(TEXT)}
    assert found == set(KINDS), f"unknown or missing check kinds: {found ^ set(KINDS)}"


def test_book_covers_every_edge() -> None:
    """Each edge the book promises has its own section."""
    headings = re.findall(r"^## (.+)$", TEXT, re.MULTILINE)
    for word in (
        "upcard offer",
        "forced stock draw",
        "No re-discard",
        "stock end",
        "layoffs",
        "Hollywood score sheet",
        "Rule parameters",
        "Scoring a hand",
    ):
        assert any(word.lower() in heading.lower() for heading in headings), word
    for word in ("undercut on a tie", "shut-out", "HAND_END_STOCK_EXHAUSTED", '"by":"forced"'):
        assert word in TEXT, word


# --- rule parameters ---------------------------------------------------------------------------


def shown(value: object) -> str:
    """A default as the book writes it: ``10``, ``true``, ``"hollywood"``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return f'"{value.value}"'
    return str(value)


def table_after(offset: int) -> list[list[str]]:
    """The cells of the Markdown table that follows ``offset`` (header and rule skipped)."""
    rows = []
    started = False
    for line in TEXT[offset:].splitlines():
        if line.startswith("|"):
            started = True
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif started or (line.strip() and not line.startswith("<!--")):
            break
    assert len(rows) > 2, f"no table after the marker at offset {offset}"
    return rows[2:]


def test_every_rule_parameter_is_in_the_book_with_its_default() -> None:
    ((_, offset),) = markers("params")
    table = {row[0].strip("`"): row[1].strip("`") for row in table_after(offset)}
    defaults = RuleParams()
    fields = {
        field.name: shown(getattr(defaults, field.name)) for field in dataclasses.fields(defaults)
    }
    assert sorted(table) == sorted(fields), "the parameter table must list every field, once"
    for name, default in fields.items():
        assert table[name] == default, f"{name}: the book says {table[name]}, the engine {default}"


# --- cards, deadwood, layouts, layoffs, scores ------------------------------------------------


def test_deadwood_examples() -> None:
    checks = args_of("deadwood")
    assert len(checks) >= 3
    for args in checks:
        cards, _, expected = args.partition("=")
        assert min_deadwood(cards).deadwood == int(expected), args


def test_best_discard_examples() -> None:
    checks = args_of("discards")
    assert checks
    for args in checks:
        cards, _, expected = args.partition("=")
        least, _, throws = expected.partition(":")
        got, discards = best_discards(cards)
        assert (got, sorted(map(str, discards))) == (int(least), sorted(throws.split())), args


def test_knock_layout_examples() -> None:
    checks = args_of("knock-layout")
    assert len(checks) >= 2
    for args in checks:
        cards, _, expected = args.partition(" = ")
        assert str(knock_layout(cards)) == expected.strip(), args


def test_layoff_examples() -> None:
    checks = args_of("layoff")
    assert len(checks) >= 3
    for args in checks:
        melds, _, rest = args.partition(";")
        defender, _, expected = rest.partition("=")
        deadwood, _, laid = expected.partition("off")
        layout = lay_off([meld.strip() for meld in melds.split("|")], defender)
        laid_off = sorted(str(card) for layoff in layout.laid_off for card in layoff.cards)
        assert (layout.deadwood, laid_off) == (int(deadwood), sorted(laid.split())), args


def test_score_examples() -> None:
    checks = args_of("score")
    assert checks
    for args in checks:
        given, _, expected = args.partition(" = ")
        knocker, defender, kind, *options = given.split()
        side, points = expected.split()
        params = params_from(options)
        result = score_hand(int(knocker), int(defender), kind == "gin", params)
        assert result == (side, int(points)), args


MINUS_SIGN = "\N{MINUS SIGN}"
"""The book writes differences with a real minus sign."""


def test_score_table() -> None:
    """Each row of the visible table of hand scores, its arithmetic included."""
    ((_, offset),) = markers("score-table")
    rows = table_after(offset)
    assert len(rows) >= 6
    for row in rows:
        knocker, defender, rules, side, points = row
        options = [] if rules == "—" else [rules.strip("`").replace(" = ", "=")]
        params = params_from(options)
        result = score_hand(int(knocker.split()[0]), int(defender), "(gin)" in knocker, params)
        total = int(points.split()[-1])
        assert result == (side.split()[0], total), row
        if "=" in points:
            left = points.rsplit("=", 1)[0].replace(MINUS_SIGN, "-").replace(" ", "")
            assert sum(int(term) for term in left.replace("-", "+-").split("+")) == total, row


# --- scripted hands ----------------------------------------------------------------------------

NON_DEALER, DEALER = 1, 0


def scripted_deck(non_dealer: str, dealer: str, upcard: str, stock: str) -> list[Card]:
    """A deck in dealing order that deals these hands, this upcard and this top of the stock."""
    first, second = list(parse_cards(non_dealer)), list(parse_cards(dealer))
    assert len(first) == len(second) == 10
    deck = [card for pair in zip(first, second, strict=True) for card in pair]
    deck += [Card.parse(upcard), *parse_cards(stock)] if stock else [Card.parse(upcard)]
    used = set(deck)
    deck += [card for card in CARDS if card not in used]
    assert len(set(deck)) == 52
    return deck


def action_named(state: HandState, name: str) -> Action:
    """The legal action written ``name``; a knock with ``[melds | ...]`` declares its melds."""
    if "[" in name:
        head, _, declared = name.partition("[")
        card = Card.parse(head.split()[1])
        return Knock(card, tuple(parse_cards(meld) for meld in declared.strip("] ").split("|")))
    for action in state.legal_actions():
        if str(action) == name:
            return action
    raise AssertionError(f"{name!r} is not legal here: {[str(a) for a in state.legal_actions()]}")


def listed(text: str) -> list[str]:
    return [item.strip() for item in text.split(";") if item.strip()]


def seat_word(word: str) -> int:
    return {"nd": NON_DEALER, "d": DEALER}[word]


def test_scripted_hands() -> None:
    checks = args_of("hand")
    assert len(checks) >= 8
    for args in checks:
        fields = dict(word.split("=", 1) for word in shlex.split(args))
        deck = scripted_deck(fields["nd"], fields["d"], fields["up"], fields.get("stock", ""))
        state = HandState.deal(deck, dealer=DEALER)
        for name in listed(fields["do"]):
            state.apply(action_named(state, name))
        check_hand(state, fields, args)


def check_hand(state: HandState, fields: dict[str, str], args: str) -> None:
    outcome = state.outcome
    for key, want in fields.items():
        if key in ("nd", "d", "up", "stock", "do"):
            continue
        if key == "phase":
            assert state.phase is Phase(want), args
        elif key == "to_move":
            assert state.to_move == seat_word(want), args
        elif key == "legal":
            assert sorted(map(str, state.legal_actions())) == sorted(listed(want)), args
        elif key == "illegal":
            for name in listed(want):
                with pytest.raises(IllegalActionError):
                    state.verify(parse_action(name))
        elif key == "size":
            assert state.hand_size(state.to_move) == int(want), args
        elif key == "stock_count":
            assert state.stock_count == int(want), args
        elif key == "holds":
            assert parse_cards(want) <= state.cards_of(state.to_move), args
        else:
            assert outcome is not None, args
            got = {
                "end": outcome.end.value,
                "winner": outcome.winner,
                "points": outcome.points,
                "knocker_layout": str(outcome.knocker_layout),
                "defender_layout": str(outcome.defender_layout),
            }[key]
            expected: object = seat_word(want) if key == "winner" else want
            if key == "points":
                expected = int(want)
            assert got == expected, f"{key}: {got!r} != {expected!r} in {args}"


SIMPLE_ACTIONS: dict[str, Action] = {
    str(action): action for action in (TAKE_UPCARD, PASS_UPCARD, DRAW_STOCK, DRAW_DISCARD)
}


def parse_action(name: str) -> Action:
    """An action from its ``str()``: ``take upcard``, ``discard 9h``, ``knock Ks``..."""
    if name in SIMPLE_ACTIONS:
        return SIMPLE_ACTIONS[name]
    verb, _, card = name.partition(" ")
    if verb == "discard":
        return Discard(Card.parse(card))
    assert verb == "knock", name
    return Knock(Card.parse(card))


# --- the deal --------------------------------------------------------------------------------


def test_deal_examples() -> None:
    """Each seat receives its cards whoever deals, and they are the shuffle's positions the book
    gives them (even to seat 0, odd to seat 1, then the upcard); the older rule of log formats 1
    and 2 gives the same hands only when seat 1 deals."""
    checks = args_of("deal")
    assert checks
    for args in checks:
        fields = dict(word.split("=", 1) for word in shlex.split(args))
        seed, number = int(fields["seed"]), int(fields["hand"])
        seats = (parse_cards(fields["seat0"]), parse_cards(fields["seat1"]))
        shuffle = shuffled_deck(seed, number)
        shown = " ".join(str(card) for card in shuffle[:21])
        assert f"`{shown}`" in TEXT, f"the book must show the shuffle's first 21 cards: {shown}"
        assert seats == (card_set(shuffle[0:20:2]), card_set(shuffle[1:20:2])), args
        for dealer in (0, 1):
            state = HandState.deal(dealt_deck(seed, number, dealer), dealer)
            assert state.hands == seats, f"dealer {dealer}: {args}"
            assert state.discard_pile == (Card.parse(fields["up"]),), args
            old = HandState.deal(dealt_deck(seed, number, dealer, Dealing.BY_DEALER), dealer)
            assert (old.hands == seats) == (dealer == 1), args


# --- the stock end -----------------------------------------------------------------------------


def stock_draws_only(params: RuleParams) -> HandState:
    """A hand where both pass and then every turn draws from the stock and throws that card."""
    state = HandState.deal(scripted_deck(*SOME_HANDS), dealer=DEALER, params=params)
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    while not state.is_over:
        event = state.apply(DRAW_STOCK)
        assert event.card is not None
        state.apply(Discard(event.card))
    return state


SOME_HANDS = ("2c 5c 9c Jd Qd 3h 6h Kh 4s 8s", "Ac 3c 7c 2d 6d Td 5h 9h Jh 7s", "Ks", "")


def test_stock_end_examples() -> None:
    checks = args_of("stock-end")
    assert len(checks) >= 2
    for args in checks:
        words = args.split()
        expected = dict(word.split("=") for word in words if word.split("=")[0] in STOCK_KEYS)
        params = params_from([word for word in words if word.split("=")[0] not in STOCK_KEYS])
        state = stock_draws_only(params)
        assert state.outcome is not None
        got = {
            "turns": str(state.turns),
            "left": str(state.stock_count),
            "end": state.outcome.end.value,
        }
        assert got == expected, args
        assert state.outcome.winner is None
        assert state.outcome.points == 0


STOCK_KEYS = ("turns", "left", "end")


# --- the score sheet ---------------------------------------------------------------------------


def sheet_rows(offset: int) -> Iterator[tuple[int | None, int, tuple[int, ...], list[str]]]:
    """``(winner seat or None, points, games 1-based, [seat 0 totals, seat 1 totals])``."""
    for row in table_after(offset):
        _, winner, points, games, first, second = row
        if winner.startswith("seat "):
            seat: int | None = int(winner.split()[1])
            entered = tuple(int(game) for game in games.split(","))
            yield seat, int(points), entered, [first, second]
        else:
            yield None, 0, (), [first, second]


def totals_text(sheet: HollywoodScore, seat: int) -> str:
    return " / ".join(str(total) for total in sheet.totals(seat))


def test_score_sheets() -> None:
    checks = markers("sheet")
    assert len(checks) >= 2
    for args, offset in checks:
        expected = dict(word.split("=") for word in args.split())
        sheet = HollywoodScore()
        decided_after = None
        for number, (seat, points, games, totals) in enumerate(sheet_rows(offset), 1):
            if seat is not None:
                entered = tuple(game + 1 for game in sheet.record(seat, points))
                assert entered == games, f"hand {number}: entered in {entered}, not {games}"
            assert [totals_text(sheet, 0), totals_text(sheet, 1)] == totals, f"hand {number}"
            if decided_after is None and sheet.winner is not None:
                decided_after = number
        if "game_winners" in expected:
            winners = ",".join(str(seat) for seat in sheet.game_winners)
            assert winners == expected["game_winners"]
            assert str(sheet.winner) == expected["winner"]
            assert str(decided_after) == expected["decided_after"]
            assert sheet.over


def test_games_end_in_order() -> None:
    """The book says the games end in the order 1, 2, 3 (also after shut-outs)."""
    rng = random.Random(14)
    for _ in range(3000):
        sheet = HollywoodScore()
        ended: list[int] = []
        while not sheet.over:
            before = sheet.games_over
            sheet.record(rng.randrange(2), rng.choice((0, 5, 10, 25, 40, 60, 100)))
            ended += [game for game in range(3) if sheet.games_over[game] and not before[game]]
        assert ended == [0, 1, 2]


# --- the log line and the pointers -------------------------------------------------------------


def test_forced_draw_log_line() -> None:
    """The quoted record is the one the match log writes for the non-dealer's forced draw."""
    ((_, offset),) = markers("log-line")
    block = TEXT[offset:].split("```json\n", 1)[1].split("```", 1)[0].strip()
    fields = {
        "seat": NON_DEALER,
        "request": 0,
        "action": action_to_dict(DRAW_STOCK),
        "by": "forced",
        "ms": round(0.0, 3),
    }
    assert block == record_line("action", fields)


def test_forced_draw_is_the_only_action() -> None:
    """After two passes the non-dealer's draw has one legal action: the referee plays it."""
    state = HandState.deal(scripted_deck(*SOME_HANDS), dealer=DEALER)
    state.apply(PASS_UPCARD)
    state.apply(PASS_UPCARD)
    assert (state.to_move, state.legal_actions()) == (NON_DEALER, [DRAW_STOCK])


@pytest.mark.parametrize("path", ["README.md", "docs/bot-guide.md"])
def test_readme_and_guide_point_to_the_rule_book(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert "rules.md" in text
    assert "RULES.md" not in text
