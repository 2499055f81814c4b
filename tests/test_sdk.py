"""The Python SDK against a scripted fake referee over a real gRPC stream."""

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from protocol import hollywood_gin_pb2 as pb
from protocol.sdk import (
    Bot,
    HandSummary,
    SdkError,
    SeriesInfo,
    SeriesSummary,
    manifest_identity,
)
from referee.rules import Action, Observation, PublicEvent, SeriesState, play_series
from sample_bots.greedy.bot import GreedyBot
from sample_bots.random.bot import RandomBot
from tests.fake_referee import FakeReferee, Script, goodbye, request, series_script, welcome


class RecordingBot(GreedyBot):
    """Greedy play, and a record of every callback."""

    def __init__(self) -> None:
        super().__init__()
        self.info: SeriesInfo | None = None
        self.opponent_actions: list[PublicEvent] = []
        self.hands: list[HandSummary] = []
        self.summary: SeriesSummary | None = None

    def on_series_start(self, info: SeriesInfo) -> None:
        self.info = info

    def on_opponent_action(self, event: PublicEvent) -> None:
        self.opponent_actions.append(event)

    def on_hand_end(self, summary: HandSummary) -> None:
        self.hands.append(summary)

    def on_series_end(self, summary: SeriesSummary) -> None:
        self.summary = summary


def test_sdk_plays_a_whole_series_and_echoes_request_ids(tmp_path: Path) -> None:
    log, script = series_script(seed=5)
    bot = RecordingBot()
    with FakeReferee(tmp_path, script) as referee:
        assert bot.run(referee.address, "secret") == 0
        hello = referee.received[0].hello
    assert (hello.token, hello.name, hello.version, hello.protocol_version) == (
        "secret",
        "greedy",
        "1.0.0",
        1,
    )
    ids = log.echoed_ids
    assert ids == list(range(1007, 1007 + 7 * len(ids), 7))
    assert bot.info is not None
    assert bot.info.seat == 0
    assert bot.summary is not None
    assert bot.summary.hands == len(bot.hands) > 0
    assert bot.opponent_actions
    knocked = [hand for hand in bot.hands if hand.outcome.knocker is not None]
    assert knocked
    for hand in knocked:
        outcome = hand.outcome
        assert outcome.knocker_layout is not None
        assert outcome.defender_layout is not None
        assert len(outcome.hands[0]) == len(outcome.hands[1]) == 10


def run_script(tmp_path: Path, bot: Bot, script: Script) -> int:
    with FakeReferee(tmp_path, script) as referee:
        return bot.run(referee.address, "token")


def test_request_before_welcome_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield request(SeriesState(1), 1)
        yield goodbye()

    assert run_script(tmp_path, RandomBot(1), script) == 1
    assert "before the welcome" in capsys.readouterr().err


def test_stream_closed_without_goodbye_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()

    assert run_script(tmp_path, RandomBot(1), script) == 1
    assert "without a goodbye" in capsys.readouterr().err


def test_goodbye_with_a_refusal_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield goodbye(pb.GOODBYE_REASON_PROTOCOL_MISMATCH)

    assert run_script(tmp_path, RandomBot(1), script) == 1
    assert "PROTOCOL_MISMATCH" in capsys.readouterr().err


def test_malformed_request_is_reported_not_hidden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        message = request(SeriesState(1), 1)
        message.request.observation.hand.append("Zz")
        yield message
        yield goodbye()

    assert run_script(tmp_path, RandomBot(1), script) == 1
    assert "observation.hand" in capsys.readouterr().err


class BrokenBot(Bot):
    name = "broken"

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        raise ZeroDivisionError("a bug in the bot")


def test_bot_errors_go_to_stderr_with_the_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        yield request(SeriesState(1), 42)
        next(incoming, None)

    assert run_script(tmp_path, BrokenBot(), script) == 1
    err = capsys.readouterr().err
    assert "error in the bot's decide() on request 42" in err
    assert "ZeroDivisionError: a bug in the bot" in err


def test_run_needs_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIN_REFEREE", raising=False)
    monkeypatch.delenv("GIN_TOKEN", raising=False)
    with pytest.raises(SdkError, match="GIN_REFEREE and GIN_TOKEN must be set"):
        RandomBot().run()


def test_bots_play_in_process_as_policies() -> None:
    result = play_series(GreedyBot().as_policy(), RandomBot(3).as_policy(), seed=8)
    assert result.winner == 0


def test_the_sdk_takes_name_and_version_from_bot_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bot.toml").write_text('name = "from-toml"\nversion = "2.0.0"\ncommand = []\n')
    (tmp_path / "src").mkdir()
    assert manifest_identity(tmp_path / "src") == ("from-toml", "2.0.0")

    class Unnamed(Bot):
        pass

    class Misnamed(Bot):
        name = "other"

    unnamed, misnamed = Unnamed(), Misnamed()
    unnamed._take_identity(manifest_identity(tmp_path / "src"))
    misnamed._take_identity(manifest_identity(tmp_path))
    assert (unnamed.name, unnamed.version) == ("from-toml", "2.0.0")
    assert (misnamed.name, misnamed.version) == ("from-toml", "2.0.0")
    assert "name 'other' is not bot.toml's 'from-toml'" in capsys.readouterr().err
