"""``read_standings``: the standings of ``compute(league, store.results(league))``, read straight
from the stored summaries, and refused where ``results`` refuses them; the table printed off a
terminal without rich, as rich prints it."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from benchmarks.scale_bench import LEAGUE, synthetic_league
from tournaments.cli import common, render
from tournaments.formats.records import MatchSummary
from tournaments.stats.standings import compute, read_standings
from tournaments.store import Store, StoreDamaged


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A synthetic league of 4 bots and 40 results (duplicate pairs), two of them with faults."""
    opened = synthetic_league(tmp_path / "home", 40, 4).open_store()
    for rowid, seat, kinds in ((5, 1, ("timeout", "crash")), (9, 0, ("illegal_action",))):
        faults = [
            {"seat": seat, "kind": kind, "detail": "d", "request_id": 3, "elapsed_ms": 2.5}
            for kind in kinds
        ]
        opened.db.execute(
            "UPDATE results SET summary = json_set(summary, '$.faults', json(?)) WHERE rowid = ?",
            (json.dumps(faults), rowid),
        )
    return opened


def summaries(store: Store) -> list[tuple[str, dict[str, object]]]:
    rows = store.db.execute("SELECT match_id, summary FROM results ORDER BY rowid").fetchall()
    return [(row["match_id"], json.loads(row["summary"])) for row in rows]


def rewrite(store: Store, match_id: str, summary: dict[str, object]) -> None:
    store.db.execute(
        "UPDATE results SET summary = ? WHERE match_id = ?", (json.dumps(summary), match_id)
    )


def test_the_standings_read_are_those_computed_from_the_results(store: Store) -> None:
    assert any(summary["faults"] for _, summary in summaries(store))  # read the long way
    assert any(not summary["faults"] for _, summary in summaries(store))  # read straight
    standings = read_standings(store, LEAGUE)
    assert standings == compute(LEAGUE, store.results(LEAGUE))
    faults: dict[str, dict[str, int]] = {}
    for _, summary in summaries(store):
        for fault in summary["faults"]:  # type: ignore[attr-defined]
            kinds = faults.setdefault(summary["seats"][fault["seat"]], {})  # type: ignore[index]
            kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
    assert {bot.bot: bot.faults for bot in standings.bots if bot.faults} == faults


def test_summaries_in_other_forms_count_as_the_results_read_them(store: Store) -> None:
    """A summary stored before these records (counts of 0 left out, no strikes), figures written
    as other JSON numbers, a draw: each read as ``results`` reads it."""
    rows = summaries(store)
    old, floats, drawn = rows[0], rows[1], rows[2]
    for seat in old[1]["hand_stats"]:  # type: ignore[attr-defined]
        for name in [name for name, count in seat.items() if not count]:
            del seat[name]
    for seat in old[1]["stats"]:  # type: ignore[attr-defined]
        del seat["strikes"]
    floats[1]["hand_stats"][0]["points"] = 7.9  # type: ignore[index]
    floats[1]["stats"][1]["mean_ms"] = 3  # type: ignore[index]
    drawn[1]["winner"] = None
    for match_id, summary in (old, floats, drawn):
        rewrite(store, match_id, summary)
    assert read_standings(store, LEAGUE) == compute(LEAGUE, store.results(LEAGUE))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("$.seed", '"x"'),  # fields the standings do not count are checked all the same
        ("$.end", '"won"'),
        ("$.hello", "3"),
        ("$.totals[1][0]", '"many"'),
        ("$.hands", "null"),
        ("$.hand_stats[1].drawn", '"x"'),
        ("$.stats[0].strikes", '"x"'),
        ("$.stats[0].faults", "[1]"),
        ("$.stats[1].faults", '{"timeout": "x"}'),
        ("$.hand_stats[0].points", '"x"'),  # and those they count
        ("$.stats[1].max_ms", "null"),
        ("$.game_winners", "5"),
        ("$.seats", '["a@1"]'),
        ("$.faults", '[{"seat": 0}]'),
    ],
)
def test_a_damaged_summary_is_refused_as_the_results_refuse_it(
    store: Store, path: str, value: str
) -> None:
    third = summaries(store)[2][0]
    store.db.execute(
        "UPDATE results SET summary = json_set(summary, ?, json(?)) WHERE match_id = ?",
        (path, value, third),
    )
    with pytest.raises(StoreDamaged) as before:
        store.results(LEAGUE)
    with pytest.raises(StoreDamaged) as now:
        read_standings(store, LEAGUE)
    assert str(now.value) == str(before.value)
    assert third in str(now.value)


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE results SET summary = 'not json' WHERE rowid = 3",
        "UPDATE results SET summary = '[1, 2]' WHERE rowid = 3",
        "UPDATE results SET summary = CAST(x'ff41' AS TEXT) WHERE rowid = 3",
        "UPDATE results SET end = 'won' WHERE rowid = 3",
    ],
)
def test_a_row_that_is_not_a_result_is_refused_as_before(store: Store, damage: str) -> None:
    store.db.execute(damage)
    with pytest.raises(StoreDamaged) as before:
        store.results(LEAGUE)
    with pytest.raises(StoreDamaged) as now:
        read_standings(store, LEAGUE)
    assert str(now.value) == str(before.value)
    assert store.db.text_factory is not str  # the store's own decoding is back


def test_a_summary_stored_as_a_blob_reads_as_the_results_read_it(store: Store) -> None:
    """A hand edit can leave a summary as a BLOB (``CAST(... AS BLOB)``): read as before."""
    store.db.execute("UPDATE results SET summary = CAST(summary AS BLOB) WHERE rowid = 3")
    assert read_standings(store, LEAGUE) == compute(LEAGUE, store.results(LEAGUE))


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("json_set(summary, '$.totals', json('[[1]]'))", "IndexError"),
        ("json_set(summary, '$.hands', json('1e400'))", "OverflowError"),
        (
            "'{\"a\": ' || replace(hex(zeroblob(3000)), '00', '[') || '1' || "
            "replace(hex(zeroblob(3000)), '00', ']') || '}'",
            "nested deeper than 64 levels",
        ),
    ],
    ids=["one-seat", "huge", "deep"],
)
def test_a_summary_no_reader_can_count_is_damage_not_a_crash(
    store: Store, edit: str, says: str
) -> None:
    store.db.execute(f"UPDATE results SET summary = {edit} WHERE rowid = 3")
    for read in (lambda: store.results(LEAGUE), lambda: read_standings(store, LEAGUE)):
        with pytest.raises(StoreDamaged, match=says):
            read()


def test_a_summary_reads_back_as_it_was_written(store: Store) -> None:
    """``MatchSummary.from_dict`` reads the usual form straight: the same record as written."""
    summary = store.results(LEAGUE)[4].summary
    assert summary.faults  # the fixture's
    changed = dataclasses.replace(
        summary,
        executed_on="w1",
        hello=(None, "x@1"),
        result=dataclasses.replace(summary.result, forfeited=(1,), winner=None),
    )
    undecided = dataclasses.replace(  # read the long way
        summary, result=dataclasses.replace(summary.result, game_winners=(0, None, 1))
    )
    unfaulted = dataclasses.replace(changed, result=dataclasses.replace(changed.result, faults=()))
    for written in (summary, changed, undecided, unfaulted):
        assert MatchSummary.from_dict(json.loads(json.dumps(written.to_dict()))) == written
    data = summary.to_dict()
    data["stats"][0]["mean_ms"] = 3
    data["totals"][0][0] = 5.0
    read = MatchSummary.from_dict(data)
    assert (type(read.stats[0].mean_ms), type(read.totals[0][0])) == (float, int)


def printed_by_rich(grid: render.Grid) -> str:
    """What ``print_table`` prints of the grid's rich table off a terminal."""
    out = io.StringIO()
    common.console.file = out
    try:
        common.print_table(render.rich_table(grid))
    finally:
        common.console.file = None  # type: ignore[assignment]
    return out.getvalue()


def test_the_plain_table_is_what_rich_prints(store: Store) -> None:
    standings = read_standings(store, LEAGUE)
    columns = (("#", "right"), ("bot", "left"), ("½·", "right"))
    grids = [
        render.standings_grid(standings),
        render.pairwise_grid(standings),
        render.crosstable_grid(standings),
        render.standings_grid(compute("empty", [])),
        render.Grid("", columns, (("1", "a b", "x"), ("", "", "22"))),
        render.Grid("A title much wider than its table, and than 80 columns too" * 2, columns, ()),
    ]
    for grid in grids:
        assert render.plain_table(grid) == printed_by_rich(grid), grid.title


@pytest.mark.parametrize(
    ("title", "cell"),
    [
        ("[bold]T", "x"),  # rich reads a title's markup
        ("T", "\x1b[31m"),  # a control: rich shows it otherwise
        ("T", "名前"),  # two columns a character
        ("T", " x"),  # a space at an end
        ("T", "x\ny"),
    ],
)
def test_a_grid_rich_may_show_otherwise_is_left_to_rich(title: str, cell: str) -> None:
    grid = render.Grid(title, (("bot", "left"),), ((cell,),))
    assert render.plain_table(grid) is None


def test_a_heading_with_markup_is_left_to_rich() -> None:
    grid = render.Grid("T", (("[#]", "left"),), (("x",),))  # rich reads headings as markup
    assert render.plain_table(grid) is None


def test_the_standings_command_prints_the_tables_rich_prints(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner  # noqa: PLC0415 - only here

    from tournaments.cli.app import app  # noqa: PLC0415 - only here

    store.close()
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["league", "standings", LEAGUE, "--crosstable"])
    assert result.exit_code == 0, result.output
    store = Store(tmp_path / "home" / "arena.sqlite")
    standings = compute(LEAGUE, store.results(LEAGUE))
    grids = (render.standings_grid, render.pairwise_grid, render.crosstable_grid)
    assert result.output == "".join(printed_by_rich(grid(standings)) for grid in grids)


def test_a_mirror_leg_with_other_seats_is_damage_not_a_crash(store: Store) -> None:
    store.db.execute(
        "UPDATE results SET summary = json_set(summary, '$.seats[0]',"
        " json_extract(summary, '$.seats[1]')) WHERE match_id = (SELECT match_id FROM results"
        " WHERE json_extract(summary, '$.duplicate_of') IS NOT NULL LIMIT 1)"
    )
    with pytest.raises(StoreDamaged, match="mirrors"):
        compute(LEAGUE, store.results(LEAGUE))
    with pytest.raises(StoreDamaged, match="mirrors"):
        read_standings(store, LEAGUE)
