"""Time controls stay within sane bounds (issue 17): a zero move time made every series of a
league a double forfeit, and an hour-long move time lets a stuck bot hold a match for hours."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from referee.control import MAX_MS, SANE_MS, TimeControl
from tournaments.cli.common import seconds
from tournaments.league import LeagueConfig, LeagueError, load_league
from tournaments.store import BotRow, Store


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"move_time_ms": 0}, "move_time_ms = 0: must be between 10 and 600000 ms"),
        ({"move_time_ms": 600_001}, "move_time_ms = 600001: must be between 10 and 600000 ms"),
        ({"startup_ms": 0}, "startup_ms = 0: must be between 100 and 600000 ms"),
        ({"grace_ms": 60_001}, "grace_ms = 60001: must be between 0 and 60000 ms"),
        ({"time_bank_ms": 24 * 3_600_000 + 1}, "time_bank_ms = 86400001"),
        ({"move_time_ms": 1.5}, "move_time_ms must be a whole number of milliseconds"),
        ({"move_time_ms": True}, "move_time_ms must be a whole number of milliseconds"),
    ],
)
def test_a_time_control_out_of_bounds_is_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TimeControl(**settings)


def test_the_bounds_keep_every_time_within_the_protocols_limit() -> None:
    decision = sum(SANE_MS[name][1] for name in ("move_time_ms", "time_bank_ms", "grace_ms"))
    assert max(decision, SANE_MS["startup_ms"][1]) <= MAX_MS
    TimeControl(**{name: high for name, (_, high) in SANE_MS.items()})  # the edge is allowed
    TimeControl(**{name: low for name, (low, _) in SANE_MS.items()})


def test_a_league_with_a_zero_move_time_is_refused_with_every_other_problem() -> None:
    with pytest.raises(LeagueError) as caught:
        LeagueConfig.from_dict({"name": "z", "bots": ["a"], "time_control": {"move_time_ms": 0}})
    text = str(caught.value)
    assert "[time_control]: time control move_time_ms = 0: must be between 10" in text
    assert "bots must name at least two different bots" in text


def test_a_typo_in_a_league_section_names_the_field_and_the_known_ones() -> None:
    """Not ``TimeControl.__init__() got an unexpected keyword argument`` (issue 18)."""
    with pytest.raises(LeagueError) as caught:
        LeagueConfig.from_dict(
            {
                "name": "t",
                "bots": ["a", "b"],
                "time_control": {"move_tme_ms": 5},
                "fault_policy": {"strike": 2},
            }
        )
    assert str(caught.value).splitlines()[1:] == [
        "  - [time_control]: unknown field 'move_tme_ms' (known: grace, grace_ms, move_time, "
        "move_time_ms, startup, startup_ms, time_bank, time_bank_ms)",
        "  - [fault_policy]: unknown field 'strike' (known: strikes)",
    ]


def test_a_binary_or_huge_league_file_is_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(128, 256)) * 3)
    with pytest.raises(LeagueError, match=r"binary.toml is not UTF-8 text \(a TOML file is\)$"):
        load_league(binary)
    huge = tmp_path / "huge.toml"
    huge.write_text("# " + "x" * 2_000_000 + "\n")
    with pytest.raises(LeagueError, match=r"huge\.toml is over 1024 KiB: not a league file"):
        load_league(huge)


def test_durations_are_written_as_people_write_them_in_files_and_flags() -> None:
    """One way to say a time: ``1s`` or ``500ms`` in a league file and after ``--move-time``
    alike (issue 18: the flag was in seconds, the file in milliseconds)."""
    config = LeagueConfig.from_dict(
        {"name": "d", "bots": ["a", "b"], "time_control": {"move_time": "500ms", "time_bank": "5s"}}
    )
    assert (config.time_control.move_time_ms, config.time_control.time_bank_ms) == (500, 5000)
    assert config == LeagueConfig.from_dict(config.to_dict())  # stored in milliseconds
    for given, problem in (
        ({"move_time": "fast"}, "'fast' is not a duration (write it as 1s, 500ms or 2min)"),
        ({"move_time": "1s", "move_time_ms": 5}, "give move_time or move_time_ms, not both"),
        ({"move_time": 3}, 'move_time = 3: a duration such as "1s" or "500ms"'),
    ):
        with pytest.raises(LeagueError, match=re.escape(problem)):
            LeagueConfig.from_dict({"name": "d", "bots": ["a", "b"], "time_control": given})
    assert [seconds(text) for text in ("500ms", "1.5s", "2", "1min")] == [0.5, 1.5, 2.0, 60.0]


def test_unknown_bots_are_listed_with_the_files_other_problems(tmp_path: Path) -> None:
    """Not only once every other problem is fixed (issue 18)."""
    store = Store(tmp_path / "s.sqlite")
    store.add_bot(BotRow("greedy", "1.0.0", "h", tmp_path, "", "", 0.0))
    league = tmp_path / "l.toml"
    league.write_text('name = "l"\nbots = ["greedy", "zed"]\njobs = 0\n')
    with pytest.raises(LeagueError) as caught:
        load_league(league, store)
    problems = str(caught.value).splitlines()[1:]
    assert any(problem.startswith("  - no submitted bot 'zed'") for problem in problems)
    assert "  - jobs must be a positive integer" in problems
