"""``gin replay --html``: a self-contained page, checked as text and in a real headless Chromium.

The browser tests use Debian's Chromium (``make browser-deps`` installs it) over its DevTools
pipe: no port is opened and the page is loaded from a file. They skip, saying why, only when
Chromium is not installed. Screenshots are kept in ``tests/artifacts/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.replay import VIEWERS, Table, load_replay
from tests.chromium import Chromium, find_chromium, launch
from tournaments.views.replay_html import replay_html
from tournaments.views.words import step_text

GOLDEN = Path(__file__).parent / "golden"
STRIKES = GOLDEN / "format1-strikes.jsonl"
ARTIFACTS = Path(__file__).parent / "artifacts"


def page_data(page: str) -> dict[str, Any]:
    """The page's JSON, each view's table at each step rebuilt whole (as the script does)."""
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    for step in data["steps"]:
        for view in step["v"]:
            for key in ("text", "table"):
                if isinstance(view.get(key), int):
                    view[key] = step["v"][view[key]][key]
    for index in range(len(data["views"])):
        table = None
        for step in data["steps"]:
            view = step["v"][index]
            if "table" in view:
                table = rebuilt(table, view["table"])
            view["table"] = table
    return data


def rebuilt(table: dict[str, Any] | None, patch: dict[str, Any] | None) -> dict[str, Any] | None:
    """A table from the one before and a step's patch (card runs left as strings)."""
    if patch is None:
        return None
    whole = {**(table or {}), **patch}
    if "hands" in patch:
        before = [{}, {}] if table is None else table["hands"]
        whole["hands"] = [
            old if new is None else {**old, **new}
            for old, new in zip(before, patch["hands"], strict=True)
        ]
    return whole


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    replay = load_replay(STRIKES)
    folder = tmp_path_factory.mktemp("pages")
    written = {}
    for name, viewer in (("referee", None), ("seat0", 0), ("seat1", 1)):
        path = folder / f"{name}.html"
        path.write_text(replay_html(replay, viewer), encoding="utf-8")
        written[name] = path
    return written


# --- the page as a file --------------------------------------------------------------------------


def test_the_page_loads_nothing_from_anywhere(pages: dict[str, Path]) -> None:
    page = pages["referee"].read_text()
    assert "Content-Security-Policy" in page
    assert "default-src 'none'" in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert "http://" not in page
    assert "https://" not in page
    assert "@import" not in page
    assert "url(" not in page


def test_a_seats_page_holds_only_what_that_seat_saw(pages: dict[str, Path]) -> None:
    replay = load_replay(STRIKES)
    for seat in (0, 1):
        data = page_data(pages[f"seat{seat}"].read_text())
        assert [view["seat"] for view in data["views"]] == [seat]
        for step, original in zip(data["steps"], replay.steps, strict=True):
            (view,) = step["v"]
            table = view["table"]
            assert table["stock"] is None
            other = table["hands"][1 - seat]
            showdown = table["showdown"]
            if showdown is None or showdown["knocker"] is None:
                assert other["cards"] is None
            assert view["text"] == step_text(original, seat, replay.names)
    referee = page_data(pages["referee"].read_text())
    assert len(referee["views"]) == 3
    assert referee["steps"][1]["v"][0]["table"]["stock"] is not None


def test_text_from_the_log_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    lines = STRIKES.read_text().splitlines()
    header = json.loads(lines[0])
    header["seats"][0]["name"] = "</script><script>alert(1)</script>"
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n")
    page = replay_html(load_replay(path), None)
    assert "<script>alert(1)" not in page
    assert page_data(page)["names"][0] == "</script><script>alert(1)</script>@1.0"


# --- the page in a real browser ------------------------------------------------------------------

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (as root, `make browser-deps` runs apt-get install chromium)",
)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Chromium]:
    assert CHROMIUM is not None
    with launch(CHROMIUM, tmp_path / "profile") as chromium:
        yield chromium


def shown(browser: Chromium) -> dict[str, Any]:
    """What the page shows now: the position, the event, and the cards in each place."""
    result: dict[str, Any] = browser.evaluate(
        """(() => {
          const cards = (id) => Array.from(document.querySelectorAll('#' + id + ' .card'))
            .map((c) => c.dataset.card || 'back');
          return {where: document.getElementById('where').textContent,
                  event: document.getElementById('event').textContent,
                  hand0: cards('hand-0'), hand1: cards('hand-1'),
                  pile: cards('pile'), stock: cards('stock'),
                  score: document.getElementById('score') ?
                    document.getElementById('score').textContent : '',
                  showdown: !!document.getElementById('showdown')};
        })()"""
    )
    return result


@pytest.mark.slow
@needs_chromium
def test_the_page_steps_in_chromium(browser: Chromium, pages: dict[str, Path]) -> None:
    browser.open(pages["referee"])
    assert browser.evaluate("document.body.dataset.ready") == "true"
    start = shown(browser)
    assert start["where"].startswith("hand 1 of 14 · step 1/")
    assert len(start["hand0"]) == 10
    assert len(start["hand1"]) == 10
    assert "back" not in start["hand0"] + start["hand1"]
    assert len(start["pile"]) == 1
    assert len(start["stock"]) == 31

    browser.click("#next")
    after_click = shown(browser)
    assert after_click["where"].startswith("hand 1 of 14 · step 2/")
    assert after_click["event"] != start["event"]
    assert after_click != start

    browser.press("ArrowRight", 39)
    after_key = shown(browser)
    assert after_key["where"].startswith("hand 1 of 14 · step 3/")
    assert after_key["pile"] != after_click["pile"]

    browser.click("#next-hand")
    assert shown(browser)["where"].startswith("hand 2 of 14")

    # Play: virtual time runs the page's timers at once, without waiting for real time.
    before_play = shown(browser)["where"]
    browser.click("#play")
    browser.call("Emulation.setVirtualTimePolicy", {"policy": "advance", "budget": 3000})
    browser.wait_for_event("Emulation.virtualTimeBudgetExpired")
    browser.click("#play")
    assert shown(browser)["where"] != before_play

    # A showdown with its score, for the screenshot.
    browser.evaluate(
        "(() => { const s = document.getElementById('slider'); s.value = '62';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    showdown = shown(browser)
    assert showdown["showdown"]
    assert "11" in showdown["score"]
    browser.screenshot(ARTIFACTS / "replay-referee-showdown.png")
    assert browser.errors() == []
    assert all(url.startswith("file:") for url in browser.requests()), browser.requests()


EVERY_STEP = """(() => {
  const cards = (id) => Array.from(document.querySelectorAll('#' + id + ' .card'))
    .map((c) => c.dataset.card || 'back');
  const slider = document.getElementById('slider');
  const views = document.getElementById('view-select');
  const seen = [];
  for (let view = 0; view < views.options.length; view++) {
    views.value = String(view);
    views.dispatchEvent(new Event('change'));
    for (let step = 0; step <= Number(slider.max); step++) {
      slider.value = String(step);
      slider.dispatchEvent(new Event('input'));
      seen.push([cards('hand-0'), cards('hand-1'), cards('pile'), cards('stock'),
                 document.getElementById('event').textContent]);
    }
  }
  return seen;
})()"""


def expected_cards(table: Table | None) -> list[list[str]]:
    """What the page shows of a full table: each hand (backs for unknown cards), the pile's last
    16, the stock (one back when hidden)."""
    if table is None:
        return [[], [], [], []]
    hands = []
    for hand in table.hands:
        if hand.cards is not None:
            hands.append([str(card) for card in hand.cards])
        else:
            known = [str(card) for card in hand.known]
            hands.append(known + ["back"] * (hand.count - len(known)))
    pile = [str(card) for card in table.discard_pile][-16:]
    if table.stock is not None:
        stock = [str(card) for card in table.stock]
    else:
        stock = ["back"] if table.stock_count > 0 else []
    return [*hands, pile, stock]


@pytest.mark.slow
@needs_chromium
def test_the_page_rebuilds_every_views_table_at_every_step(
    browser: Chromium, pages: dict[str, Path]
) -> None:
    """The page's JSON holds each view's changes only (cards as runs of codes, a view's text or
    table as an earlier view's number): the script's tables, at every step of every view, show
    the cards the replay's own tables hold."""
    replay = load_replay(STRIKES)
    browser.open(pages["referee"])
    seen = browser.evaluate(EVERY_STEP)
    expected = []
    for viewer in VIEWERS:
        for step in replay.steps:
            expected.append(expected_cards(step.table(viewer)))
    assert len(seen) == len(expected) == 3 * len(replay.steps)
    for index, (got, wanted) in enumerate(zip(seen, expected, strict=True)):
        if wanted == [[], [], [], []]:
            continue  # no hand dealt: no felt
        assert got[:4] == wanted, index
    assert len({tuple(map(tuple, got[:4])) for got in seen}) > len(replay.steps)
    assert browser.errors() == []


@pytest.mark.slow
@needs_chromium
def test_a_seats_page_in_chromium_shows_backs(browser: Chromium, pages: dict[str, Path]) -> None:
    browser.open(pages["seat0"])
    browser.press("ArrowRight", 39)
    browser.press("ArrowRight", 39)
    view = shown(browser)
    assert "back" not in view["hand0"]
    assert set(view["hand1"]) - {"back"} <= set(view["pile"]) | {"Ah"}  # known: the upcard
    assert view["stock"] == ["back"]
    assert browser.evaluate("document.getElementById('view-select').disabled") is True
    browser.screenshot(ARTIFACTS / "replay-seat0.png")
    assert browser.errors() == []
    assert all(url.startswith("file:") for url in browser.requests())


LAYOUT = """(() => {
  const log = document.getElementById('log');
  const current = log.querySelector('li.current');
  return {where: document.getElementById('where').textContent, hash: location.hash,
          overflow: document.documentElement.scrollWidth - window.innerWidth,
          followed: current.offsetTop >= log.scrollTop &&
            current.offsetTop + current.offsetHeight <= log.scrollTop + log.clientHeight,
          current: current.textContent,
          series: document.getElementById('series') ?
            document.getElementById('series').textContent : '',
          showdown: !!document.getElementById('showdown')};
})()"""


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("width", [390, 800, 1400])
def test_the_page_at_phone_tablet_and_wide_widths(
    browser: Chromium, pages: dict[str, Path], width: int
) -> None:
    """A deep link opens its hand and step; the play log follows the step; the page never
    overflows sideways; the last step keeps the showdown and sums up the series."""
    data = page_data(pages["referee"].read_text(encoding="utf-8"))
    hands = data["hands"]
    longest = max(range(len(hands) - 1), key=lambda h: hands[h + 1] - hands[h])
    late = hands[longest + 1] - hands[longest] - 1  # the hand's last step, far down its log
    browser.open(pages["referee"], width=width, fragment=f"hand={longest + 1}&step={late}")
    at = browser.evaluate(LAYOUT)
    assert at["where"].startswith(f"hand {longest + 1} of 14 · step {hands[longest] + late}/")
    assert at["followed"], at
    assert at["overflow"] <= 0, at
    assert "ms)" in at["current"] or data["steps"][hands[longest] + late - 1]["v"][0]["ms"] is None
    browser.screenshot(ARTIFACTS / f"replay-{width}px.png")
    browser.press("End", 35)
    end = browser.evaluate(LAYOUT)
    assert end["showdown"]
    assert "wins the series" in end["series"]
    assert "game 3:" in end["series"]
    assert end["hash"].startswith("#hand=14&step=")
    assert end["overflow"] <= 0, end
    browser.screenshot(ARTIFACTS / f"replay-{width}px-end.png")
    assert browser.errors() == []
