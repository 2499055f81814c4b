"""``gin league standings NAME --crosstable``: the grid in the terminal, the pairings in CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.test_store_damage import arena_with_golden, gin


def test_standings_crosstable_table_csv_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    arena_with_golden(home)[0].close()  # league t: north against south, one series played
    table = gin(monkeypatch, home, "league", "standings", "t", "--crosstable")
    assert table.exit_code == 0, table.output
    assert "Crosstable" in table.output
    assert "Pairwise" in table.output
    plain = gin(monkeypatch, home, "league", "standings", "t")
    assert "Crosstable" not in plain.output
    rows = list(
        csv.DictReader(
            io.StringIO(
                gin(
                    monkeypatch, home, "league", "standings", "t", "--format", "csv", "--crosstable"
                ).output
            )
        )
    )
    assert {(row["bot"], row["opponent"]) for row in rows} == {
        ("north@1.0", "south@2.0"),
        ("south@2.0", "north@1.0"),
    }
    assert all(row["margin_low"] == "" and row["units"] == "1" for row in rows)  # below 4 units
    assert {row["los"] for row in rows} <= {"", "0.5"}  # a one-series sweep: exact, 1 - 0.5
    bots = gin(monkeypatch, home, "league", "standings", "t", "--format", "csv").output
    assert bots.splitlines()[0].startswith("rank,bot,series")
    document = json.loads(
        gin(monkeypatch, home, "league", "standings", "t", "--format", "json").output
    )
    assert document["crosstable"]["units"] == [[None, 1], [1, None]]
