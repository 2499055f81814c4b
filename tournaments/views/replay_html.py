"""``gin replay --html``: one self-contained page (no network at all) to watch a replay.

The page holds the replay as JSON, a stylesheet and a script, all inline; its Content Security
Policy forbids loading anything. The JSON is written small (a 16-hand series' referee's page went
from 896 KiB to about a fifth of that): a run of cards is one string of two-character codes
(``"AsKd"``), and each view's table at a step holds only what changed since that view's table at
the step before (:func:`table_patch`; the script rebuilds every table when the page loads). A
seat's page holds only that seat's view: the cards it could not see are not in the file at all.
The referee's page holds all three views and can switch. Text from the log (which a bot may
have shaped) goes in through :func:`referee.bot_text.shown`, as JSON no ``</script>`` or
``<!--`` can break out of, and the script shows it as text only.
"""

from __future__ import annotations

import json
from importlib.resources import files

from protocol.bounded import JsonObject
from referee.bot_text import shown
from referee.replay import (
    VIEWERS,
    Replay,
    ResultRecord,
    SeatHand,
    Showdown,
    StepKind,
    Table,
    Viewer,
    viewer_name,
)
from referee.rules import Card, CardSet, min_deadwood
from tournaments.views.words import drawn_text, scores_text, series_lines, step_text

__all__ = ["replay_html", "table_patch"]


ASSETS = files("tournaments.views") / "replay_assets"


def _cards(cards: CardSet | tuple[Card, ...]) -> str:
    """Cards as the page writes them, each card's two characters run together.

    >>> from referee.rules import parse_cards
    >>> _cards(parse_cards("Ah Ts"))
    'AhTs'
    """
    return "".join(str(card) for card in cards)


def _hand(hand: SeatHand) -> JsonObject:
    deadwood = None
    if hand.cards is not None and len(hand.cards) == 10:
        deadwood = min_deadwood(hand.cards).deadwood
    return {
        "cards": None if hand.cards is None else _cards(hand.cards),
        "count": hand.count,
        "known": _cards(hand.known),
        "deadwood": deadwood,
    }


def _showdown(showdown: Showdown | None, names: tuple[str, str]) -> JsonObject | None:
    if showdown is None:
        return None
    winner = showdown.winner
    return {
        "drawn": drawn_text(showdown.end.value.replace("_", " ", 1)),
        "scores": None
        if winner is None
        else shown(scores_text(names[winner], showdown.points, showdown.games)),
        "end": showdown.end.value,
        "winner": showdown.winner,
        "points": showdown.points,
        "knocker": showdown.knocker,
        "kMelds": [_cards(meld) for meld in showdown.knocker_melds],
        "kDead": _cards(showdown.knocker_deadwood_cards),
        "kDeadwood": showdown.knocker_deadwood,
        "dMelds": [_cards(meld) for meld in showdown.defender_melds],
        "layoffs": [[_cards(cards), _cards(onto)] for cards, onto in showdown.layoffs],
        "dDead": _cards(showdown.defender_deadwood_cards),
        "dDeadwood": showdown.defender_deadwood,
        "games": list(showdown.games),
    }


def table_data(table: Table | None, names: tuple[str, str]) -> JsonObject | None:
    """One viewer's table as the page's JSON (``names``: the seats', for the showdown's words)."""
    if table is None:
        return None
    return {
        "dealer": table.dealer,
        "toMove": table.to_move,
        "phase": table.phase.value,
        "hands": [_hand(table.hands[0]), _hand(table.hands[1])],
        "pile": _cards(table.discard_pile),
        "stock": None if table.stock is None else _cards(table.stock),
        "stockCount": table.stock_count,
        "totals": [list(table.totals[0]), list(table.totals[1])],
        "winners": list(table.game_winners),
        "showdown": _showdown(table.showdown, names),
    }


def table_patch(old: JsonObject | None, new: JsonObject | None) -> JsonObject | None:
    """``new`` as what differs from ``old``: its fields that changed (the whole table after
    none), and of ``hands``, ``None`` for a seat's hand unchanged, else its fields that changed.

    >>> table_patch({"toMove": 0, "pile": "As", "hands": [{"count": 10}, {"count": 11}]},
    ...             {"toMove": 1, "pile": "As", "hands": [{"count": 11}, {"count": 11}]})
    {'toMove': 1, 'hands': [{'count': 11}, None]}
    """
    if old is None or new is None:
        return new
    patch = {key: value for key, value in new.items() if old.get(key) != value}
    if "hands" in patch:
        patch["hands"] = [
            None if before == after else {k: v for k, v in after.items() if before.get(k) != v}
            for before, after in zip(old["hands"], new["hands"], strict=True)
        ]
    return patch


def _steps(replay: Replay, viewers: tuple[Viewer, ...]) -> list[JsonObject]:
    """Each step, a view of it for each viewer; a view's ``table`` left out when it is the
    table of that view's step before, else its :func:`table_patch`."""
    names = replay.names
    last: list[JsonObject | None] = [None for _ in viewers]
    steps: list[JsonObject] = []
    for number, step in enumerate(replay.steps):
        views = []
        for index, viewer in enumerate(viewers):
            own = step.ms is not None and (viewer is None or viewer == step.seat)
            view: JsonObject = {
                "text": shown(step_text(step, viewer, names)),
                "ms": step.ms if own else None,
            }
            table = table_data(step.table(viewer), names)
            if number == 0 or table != last[index]:
                view["table"] = table_patch(last[index], table)
            last[index] = table
            views.append(view)
        _shared(views)
        steps.append(
            {"kind": step.kind.value, "hand": step.hand_number, "line": step.line, "v": views}
        )
    return steps


def _shared(views: list[JsonObject]) -> None:
    """A view's ``text`` or ``table`` patch that an earlier view of the step has too, as the
    number of that view (the referee's and the seat to move often say and change the same)."""
    for index, view in enumerate(views):
        for key in ("text", "table"):
            if key not in view:
                continue
            same = next((i for i in range(index) if views[i].get(key) == view[key]), None)
            if same is not None and isinstance(views[same][key], (str, dict)):
                view[key] = same


def page_data(replay: Replay, viewer: Viewer) -> JsonObject:
    """Everything the page shows: every view for the referee, one seat's view for a seat."""
    viewers: tuple[Viewer, ...] = VIEWERS if viewer is None else (viewer,)
    views = [
        {
            "name": shown(viewer_name(one) + ("" if one is None else f" ({replay.names[one]})")),
            "seat": one,
        }
        for one in viewers
    ]
    return {
        "title": shown(replay.header.match_id),
        "names": [shown(name) for name in replay.names],
        "views": views,
        "hands": list(replay.hand_starts()),
        "steps": _steps(replay, viewers),
        "verdict": shown(replay.report.summary(), lines=True),
        "summary": [shown(line) for line in _series(replay)],
    }


def _series(replay: Replay) -> list[str]:
    """How the series ended, shown at its last step (none if the log has no result)."""
    for step in reversed(replay.steps):
        if step.kind is StepKind.RESULT and isinstance(step.record, ResultRecord):
            return series_lines(step.record, replay.names)
    return []


def _script_json(data: JsonObject) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``<`` to close it early or to open
    a comment).

    >>> _script_json({"name": "</script><!--<b>"})
    '{"name":"\\\\u003c/script>\\\\u003c!--\\\\u003cb>"}'
    """
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def replay_html(replay: Replay, viewer: Viewer = None) -> str:
    """The whole page for ``viewer`` (the referee when ``None``)."""
    page = (ASSETS / "page.html").read_text(encoding="utf-8")
    parts = {
        "/*CSS*/": (ASSETS / "page.css").read_text(encoding="utf-8"),
        "/*JS*/": (ASSETS / "page.js").read_text(encoding="utf-8"),
        "/*DATA*/": _script_json(page_data(replay, viewer)),
    }
    for marker, content in parts.items():
        page = page.replace(marker, content, 1)
    return page
