"""Standings fitted to the terminal: every bot's full name on one line at 60 to 200 columns, the
columns a narrow terminal hides said in one line, ``--wide`` showing them all."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from rich.console import Console

from tests.test_league import summary
from tests.test_store_damage import arena_with_golden, gin
from tournaments.cli import common, render
from tournaments.stats.standings import Standings, compute
from tournaments.store import ResultRow

WIDTHS = (60, 80, 100, 120, 200)
NAMES = (
    "greedy@1.0.0",
    "patient-knocker@2.10.3",
    "strong@1.0.0",
    "random@1.0.0",
    "node-greedy@0.3.1",
    "a-very-long-bot-name-indeed@12.0.1",
)


def league(names: tuple[str, ...] = NAMES, pairs: int = 5, seed: int = 1) -> Standings:
    """A round robin of duplicate pairs with random results (wins, losses and capped draws)."""
    rng = random.Random(seed)
    rows: list[ResultRow] = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            for _ in range(pairs):
                leg = f"m{len(rows)}"
                for seats, mirror in (([first, second], None), ([second, first], leg)):
                    winner = rng.choice([0, 1, None])
                    end = "hand_cap" if winner is None else "complete"
                    points = (rng.randint(0, 300), rng.randint(0, 300))
                    match_id = leg if mirror is None else f"m{len(rows)}"
                    document = summary(seats, winner, points, mirror)
                    rows.append(ResultRow.from_stored(match_id, "t", winner, end, "", document, ""))
    return compute("t", rows)


def grids(standings: Standings) -> list[render.Grid]:
    return [
        render.standings_grid(standings),
        render.pairwise_grid(standings),
        render.crosstable_grid(standings),
    ]


def printed(grid: render.Grid, width: int) -> str:
    """What a terminal this wide shows of the grid."""
    out = io.StringIO()
    console = Console(width=width, file=out, force_terminal=True, color_system=None)
    for part in render.fit(grid, width).renderables():
        console.print(part)
    return out.getvalue()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("which", range(3))
def test_every_name_is_whole_on_a_line_at_every_width(width: int, which: int) -> None:
    grid = grids(league())[which]
    output = printed(grid, width)
    lines = output.splitlines()
    assert all(len(line) <= width for line in lines), output
    for name in NAMES:
        assert any(name in line for line in lines), (name, output)
    shown_headings = [heading for heading, _ in grid.columns if heading.split()[0] in output]
    if len(shown_headings) < len(grid.columns) and "stacked" not in output:
        assert f"hidden at {width} columns: --wide shows all" in output, output


def test_a_wide_terminal_shows_every_column_and_every_name_without_a_note() -> None:
    for grid in grids(league()):
        laid_out = render.fit(grid, 400)
        assert laid_out.notes == ()
        ((shown_grid, _),) = laid_out.blocks
        assert shown_grid.columns == grid.columns
        assert shown_grid.rows == grid.rows  # no alias


def test_names_give_way_to_aliases_rather_than_push_out_the_pairwise_elo() -> None:
    grid = render.pairwise_grid(league())
    output = printed(grid, 80)
    assert "Elo diff" in output
    assert "#2 = a-very-long-bot-name-indeed@12.0.1" in output
    short = render.pairwise_grid(league(("greedy@1.0.0", "random@1.0.0", "strong@1.0.0")))
    assert "#1 =" not in printed(short, 80)  # short names fit whole: no alias


def test_the_standings_keep_the_rank_the_name_and_the_rating_at_60_columns() -> None:
    laid_out = render.fit(render.standings_grid(league()), 60)
    ((shown_grid, widths),) = laid_out.blocks
    headings = [heading for heading, _ in shown_grid.columns]
    assert headings[:3] == ["#", "bot", "Elo"]
    assert widths[1] == max(len(name) for name in NAMES)
    assert laid_out.notes[-1].endswith("hidden at 60 columns: --wide shows all")


def test_every_heading_the_layout_names_is_a_column_of_its_grid() -> None:
    for grid in grids(league()):
        headings = {heading for heading, _ in grid.columns}
        assert set(grid.drop) <= headings, grid.title
        assert set(grid.names) <= headings, grid.title
        assert set(grid.essential) <= headings, grid.title


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's console as a terminal 60 columns wide."""
    monkeypatch.setattr(common.console, "_force_terminal", True)
    monkeypatch.setattr(common.console, "_width", 60)


@pytest.mark.usefixtures("terminal")
def test_the_standings_command_fits_the_terminal_and_wide_shows_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    arena_with_golden(home)[0].close()  # north@1.0 against south@2.0
    fitted = gin(monkeypatch, home, "league", "standings", "t")
    assert fitted.exit_code == 0, fitted.output
    lines = fitted.output.splitlines()
    assert all(len(line) <= 60 for line in lines), fitted.output
    assert any("north@1.0" in line for line in lines)
    assert "hidden at 60 columns: --wide shows all" in fitted.output
    wide = gin(monkeypatch, home, "league", "standings", "t", "--wide")
    assert wide.exit_code == 0, wide.output
    assert "hidden at" not in wide.output
    assert "gin/knock/uc" in wide.output
    assert max(len(line) for line in wide.output.splitlines()) > 60


def test_the_html_page_heads_once_and_explains_every_heading() -> None:
    tables = grids(league())
    page = render.html_page("Standings: t", tables, render.GLOSSARY)
    assert page.count("Standings: t") == 2  # the <title> and the one heading
    assert "<h1>Standings: t (150 series)</h1>" in page
    legend = page[page.index("<h2>Legend</h2>") :]
    for grid in tables[:2]:  # the crosstable's headings are the bots' ranks
        for heading, _ in grid.columns:
            assert f"<dt>{heading}</dt>" in legend.replace("&amp;", "&"), heading
    assert "<h2>Legend</h2>" not in render.html_page("Standings: t", tables)


def test_a_column_hidden_on_the_way_comes_back_where_it_fits() -> None:
    # Hiding the wide margin makes room: the narrow draws and pairs ratio hidden before it return.
    standings = league(("ann@1", "bob@1"), pairs=4, seed=3)
    laid_out = render.fit(render.pairwise_grid(standings), 100)
    ((shown_grid, widths),) = laid_out.blocks
    headings = [heading for heading, _ in shown_grid.columns]
    assert "margin (95% CI)" not in headings
    assert {"draws", "pairs ratio"} <= set(headings)
    assert sum(widths) + 3 * len(widths) + 1 <= 100
