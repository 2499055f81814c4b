"""The command line: the demo series and the deadwood helper."""

from typer.testing import CliRunner

from tournaments.cli import app

runner = CliRunner()


def test_demo_plays_a_series_and_shows_the_score_sheet() -> None:
    result = runner.invoke(app, ["demo", "--seed", "7"])
    assert result.exit_code == 0, result.output
    assert "Score sheet" in result.output
    assert "game 3" in result.output
    assert "wins the series" in result.output or "no winner" in result.output


def test_demo_is_deterministic_for_a_seed() -> None:
    first = runner.invoke(app, ["demo", "--seed", "3"]).output
    assert runner.invoke(app, ["demo", "--seed", "3"]).output == first


def test_plain_demo_has_one_game() -> None:
    result = runner.invoke(app, ["demo", "--plain", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "game 1" in result.output
    assert "game 2" not in result.output


def test_deadwood_command_shows_the_best_discard() -> None:
    result = runner.invoke(app, ["deadwood", "3c 6s 3s 7d Ac 4s 3h 9d 8d 2c 5s"])
    assert result.exit_code == 0, result.output
    assert "best discards: 3h (deadwood 0 after)" in result.output


def test_deadwood_command_reports_bad_cards_without_a_traceback() -> None:
    result = runner.invoke(app, ["deadwood", "As As"])
    assert result.exit_code == 2
    assert "appears twice" in result.output
    assert "Traceback" not in result.output
