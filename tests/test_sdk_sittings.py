"""The Python SDK plays sittings: several series on one stream, each opened by its own Welcome,
each played by the bot ``Bot.next_series`` gives (by default a fresh instance), against the
scripted fake referee over a real gRPC stream."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from protocol import hollywood_gin_pb2 as pb
from protocol.sdk import Bot, SeriesInfo, SeriesSummary
from protocol.template import create_bot_folder
from referee.rules import PublicEvent, SeriesState
from sample_bots.greedy.bot import GreedyBot
from sample_bots.random.bot import RandomBot
from sample_bots.strong.bot import StrongBot
from tests.fake_referee import (
    FakeReferee,
    Script,
    SittingLog,
    assert_plays_a_scripted_sitting,
    goodbye,
    request,
    run_bot_process,
    sitting_script,
    welcome,
)

ROOT = Path(__file__).resolve().parent.parent
SEATS = (0, 1, 0)
SEEDS = (21, 22, 23)
"""The sitting_script's series: bot seed = seed + 1, match ids test-0, test-1, test-2."""


class Tracked(GreedyBot):
    """Greedy play; every instance and every callback it got, in the class's own list."""

    made: ClassVar[list[Tracked]] = []

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[SeriesInfo] = []
        self.ends: list[SeriesSummary] = []
        self.seeds: list[int] = []
        self.opponent_actions = 0
        Tracked.made.append(self)

    def on_series_start(self, info: SeriesInfo) -> None:
        self.starts.append(info)
        self.seeds.append(self.seed)

    def on_opponent_action(self, event: PublicEvent) -> None:
        self.opponent_actions += 1

    def on_series_end(self, summary: SeriesSummary) -> None:
        self.ends.append(summary)


class Remembering(Tracked):
    """Keeps itself for the whole sitting: what it learnt of the opponent goes on growing."""

    def next_series(self) -> Bot:
        return self


def play_sitting(tmp_path: Path, bot: Bot, seeds: Sequence[int] = SEEDS) -> tuple[int, SittingLog]:
    log, script = sitting_script(seeds, SEATS)
    with FakeReferee(tmp_path, script) as referee:
        code = bot.run(referee.address, "secret")
    return code, log


def assert_whole_sitting(log: SittingLog) -> None:
    """Three series, each played to its end with every request id echoed, then the goodbye."""
    assert log.hello is not None
    assert log.hello.plays_on
    assert log.said_goodbye
    assert len(log.series) == 3
    for played in log.series:
        assert played.result is not None
        assert played.echoed_ids == played.sent_ids != []
    every_id = [number for played in log.series for number in played.sent_ids]
    assert every_id == sorted(every_id)  # increasing across the whole stream


def test_a_bot_plays_a_sitting_with_a_fresh_instance_per_series(tmp_path: Path) -> None:
    Tracked.made.clear()
    first = Tracked()
    first.name, first.version = "from-toml", "3.0.0"  # as run() takes them from bot.toml
    code, log = play_sitting(tmp_path, first)
    assert code == 0
    assert_whole_sitting(log)
    made = Tracked.made
    assert len(made) == 3
    assert made[0] is first
    assert len({id(bot) for bot in made}) == 3
    for index, bot in enumerate(made):
        (info,) = bot.starts  # one series each, begun and ended
        assert len(bot.ends) == 1
        assert (info.seat, info.match_id, info.bot_seed) == (
            SEATS[index],
            f"test-{index}",
            22 + index,
        )
        assert bot.seeds == [22 + index]  # rng seeded from each Welcome before on_series_start
        assert (bot.name, bot.version) == ("from-toml", "3.0.0")  # the hello's identity
        assert bot.opponent_actions > 0
    assert [bot.ends[0].hands for bot in made] == [len(s.hands) for s in log.series]


def test_a_bot_whose_hook_returns_itself_keeps_its_memory(tmp_path: Path) -> None:
    Tracked.made.clear()
    bot = Remembering()
    code, log = play_sitting(tmp_path, bot)
    assert code == 0
    assert_whole_sitting(log)
    assert Tracked.made == [bot]
    assert [info.seat for info in bot.starts] == list(SEATS)
    assert bot.seeds == [22, 23, 24]  # its generator reseeded for each series all the same
    assert len(bot.ends) == 3


class RaisingHook(GreedyBot):
    def next_series(self) -> Bot:
        raise RuntimeError("no memory today")


class NeedsArguments(GreedyBot):
    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth = depth


class WrongHook(GreedyBot):
    def next_series(self) -> Bot:
        return "another bot"  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("bot", "said"),
    [
        (RaisingHook(), "RuntimeError: no memory today"),
        (NeedsArguments(3), "TypeError"),  # the default hook: type(self)()
        (WrongHook(), "next_series() returned a str, not a Bot"),
    ],
    ids=["raises", "default-needs-arguments", "not-a-bot"],
)
def test_a_hook_that_fails_is_a_bot_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bot: Bot, said: str
) -> None:
    code, log = play_sitting(tmp_path, bot)
    err = capsys.readouterr().err
    assert code == 1
    assert said in err
    assert "next_series()" in err
    assert log.series[0].result is not None  # the first series was played in full
    assert log.series[1].echoed_ids == []  # the second was never played


def test_a_bot_that_does_not_play_on_says_so_and_plays_one_series(tmp_path: Path) -> None:
    class Once(Tracked):
        plays_on = False

    Tracked.made.clear()
    code, log = play_sitting(tmp_path, Once())
    assert code == 0
    assert log.hello is not None
    assert not log.hello.plays_on
    assert len(log.series) == 1
    assert log.series[0].result is not None
    assert log.said_goodbye
    assert len(Tracked.made) == 1


def second_welcome_script(mid_series: bool) -> Script:
    """A referee that sends a second Welcome: in the middle of the series, or after its end."""

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        if mid_series:
            yield request(SeriesState(1), 1)
            next(incoming)
        else:
            ended = pb.SeriesEnded(end=pb.SERIES_END_COMPLETE, winner=-1)
            ended.score.totals.add(games=[0, 0, 0])
            ended.score.totals.add(games=[0, 0, 0])
            yield pb.RefereeMessage(event=pb.Event(series_ended=ended))
        yield welcome(seat=1)
        yield goodbye()

    return script


@pytest.mark.parametrize(
    ("plays_on", "mid_series", "said"),
    [
        (False, False, "second welcome, but the hello did not set plays_on"),
        (True, True, "a welcome in the middle of a series"),
    ],
    ids=["not-playing-on", "mid-series"],
)
def test_a_welcome_out_of_turn_is_reported(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    plays_on: bool,
    mid_series: bool,
    said: str,
) -> None:
    bot = GreedyBot()
    bot.plays_on = plays_on
    with FakeReferee(tmp_path, second_welcome_script(mid_series)) as referee:
        assert bot.run(referee.address, "secret") == 1
    assert said in capsys.readouterr().err


def test_a_request_between_two_series_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        ended = pb.SeriesEnded(end=pb.SERIES_END_COMPLETE, winner=-1)
        ended.score.totals.add(games=[0, 0, 0])
        ended.score.totals.add(games=[0, 0, 0])
        yield pb.RefereeMessage(event=pb.Event(series_ended=ended))
        yield request(SeriesState(1), 9)
        next(incoming, None)

    with FakeReferee(tmp_path, script) as referee:
        assert GreedyBot().run(referee.address, "secret") == 1
    assert "before the welcome of its series" in capsys.readouterr().err


def template_bot_class(tmp_path: Path) -> type[Bot]:
    """The class ``gin bot new`` writes, loaded from its folder."""
    folder = create_bot_folder("sitter", tmp_path)
    spec = importlib.util.spec_from_file_location("sitter_bot", folder / "bot.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: type[Bot] = module.Sitter
    return found


def sample_class(kind: str, tmp_path: Path) -> type[Bot]:
    classes: dict[str, type[Bot]] = {"random": RandomBot, "greedy": GreedyBot, "strong": StrongBot}
    return classes[kind] if kind in classes else template_bot_class(tmp_path / "folder")


@pytest.mark.parametrize("kind", ["random", "greedy", "strong", "template"])
def test_the_sample_bots_and_the_template_make_their_next_bot(tmp_path: Path, kind: str) -> None:
    cls = sample_class(kind, tmp_path)
    first = cls()
    following = first.next_series()
    assert type(following) is cls
    assert following is not first
    assert first.plays_on


@pytest.mark.parametrize("kind", ["greedy", "strong", "template"])  # (random: long series)
def test_the_sample_bots_and_the_template_play_a_sitting(tmp_path: Path, kind: str) -> None:
    code, log = play_sitting(tmp_path, sample_class(kind, tmp_path)())
    assert code == 0
    assert_whole_sitting(log)


@pytest.mark.parametrize("kind", ["greedy", "template"])
def test_bot_programs_play_a_sitting(tmp_path: Path, kind: str) -> None:
    folder = ROOT / "sample_bots" / "greedy" if kind == "greedy" else tmp_path / "sitter"
    if kind == "template":
        create_bot_folder("sitter", tmp_path)

    def run(environment: dict[str, str]) -> tuple[int, str, str]:
        return run_bot_process([sys.executable, "bot.py"], folder, environment)

    assert_plays_a_scripted_sitting(tmp_path, run, kind, series=3)
