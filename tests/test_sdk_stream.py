"""The SDK's stream, both ways it is carried: grpc core's call driven from the bot's own thread
(``Session.play_channel``, what ``Bot.run`` does) and grpcio's threaded stub (``Session.play``,
and the fallback for a grpcio without the core call). Each keeps the SDK's behaviour:
errors reported in one line, goodbyes, oversized and malformed messages, a referee that
vanishes, several messages sent for one request, in order."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent import futures
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import grpc
import pytest

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.sdk import MAX_MESSAGE_BYTES, Bot, Session
from referee.rules import Action, Observation, SeriesState
from sample_bots.greedy.bot import GreedyBot
from tests.fake_referee import FakeReferee, Script, goodbye, request, series_script, welcome

TRANSPORTS = ("core", "threads")
OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
]
"""The channel options of ``Bot.run``."""


def play_with(transport: str, address: str, session: Session) -> int:
    """``session`` played on a channel (``core``) or on a stub of it (``threads``)."""
    with grpc.insecure_channel(address, options=OPTIONS) as channel:
        if transport == "core":
            return session.play_channel(channel)
        return session.play(pb_grpc.RefereeStub(channel))


def run_script(tmp_path: Path, transport: str, script: Script, bot: Bot | None = None) -> int:
    with FakeReferee(tmp_path, script) as referee:
        return play_with(transport, referee.address, Session(bot or GreedyBot(), "token"))


GRPC_THREAD = "(_run)"
"""The end of the names of grpcio's client threads (its ``ForkManagedThread``): a stub's
stream-stream call has two, one reading the requests to send, one polling the channel."""


class ThreadWatcher(GreedyBot):
    """Greedy play; notes the thread of each decision and grpcio's threads beside it."""

    def __init__(self) -> None:
        super().__init__()
        self.in_main: set[bool] = set()
        self.grpc_threads: set[int] = set()
        """How many of grpcio's client threads there were at each decision."""

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        self.in_main.add(threading.current_thread() is threading.main_thread())
        threads = threading.enumerate()
        self.grpc_threads.add(sum(thread.name.endswith(GRPC_THREAD) for thread in threads))
        return super().decide(view, legal)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_whole_series_with_the_bot_in_the_main_thread(tmp_path: Path, transport: str) -> None:
    log, script = series_script(seed=5)
    bot = ThreadWatcher()
    assert run_script(tmp_path, transport, script, bot) == 0
    assert log.result is not None
    assert log.echoed_ids == log.sent_ids
    assert bot.in_main == {True}
    # The core call needs no thread of grpcio's: nothing crosses threads per message.
    assert bot.grpc_threads == ({0} if transport == "core" else {2})


class Plain:
    """A channel without grpcio's internals (another grpcio): only its public methods."""

    def __init__(self, channel: grpc.Channel) -> None:
        self._inner = channel

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_grpcio_without_the_core_call_plays_on_its_threads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, script = series_script(seed=5)
    bot = ThreadWatcher()
    with FakeReferee(tmp_path, script) as referee, grpc.insecure_channel(referee.address) as real:
        assert Session(bot, "token").play_channel(cast(grpc.Channel, Plain(real))) == 0
    assert log.result is not None
    assert bot.grpc_threads == {2}
    err = capsys.readouterr().err
    assert "this grpcio cannot make the SDK's call (AttributeError: _channel)" in err
    assert err.count("\n") == 1


def ends_with(last: pb.RefereeMessage | None) -> Script:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        if last is not None:
            yield last

    return script


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("last", "expected"),
    [
        (goodbye(), (0, "")),
        (goodbye(pb.GOODBYE_REASON_REMOVED), (1, "referee said goodbye: GOODBYE_REASON_REMOVED")),
        (None, (1, "the referee closed the stream without a goodbye")),
    ],
    ids=["goodbye", "removed", "no-goodbye"],
)
def test_the_stream_ends(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    transport: str,
    last: pb.RefereeMessage | None,
    expected: tuple[int, str],
) -> None:
    code, said = expected
    assert run_script(tmp_path, transport, ends_with(last)) == code
    err = capsys.readouterr().err
    assert said in err
    assert err.count("\n") == (1 if said else 0)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_referee_that_fails_is_reported_with_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        raise RuntimeError("the referee broke")

    assert run_script(tmp_path, transport, script) == 1
    err = capsys.readouterr().err
    assert "stream closed by the referee: StatusCode.UNKNOWN" in err
    assert "the referee broke" in err


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_message_over_the_size_limit_ends_the_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    huge = welcome()
    huge.welcome.opponent_name = "x" * (MAX_MESSAGE_BYTES + 1)
    assert run_script(tmp_path, transport, ends_with(huge)) == 1
    err = capsys.readouterr().err
    assert "stream closed by the referee: StatusCode.RESOURCE_EXHAUSTED" in err


SERVICE = "hollywood_gin.v1.Referee"


class RawReferee:
    """A gRPC server that sends ``replies`` as they are (bytes, not messages) after the hello."""

    def __init__(self, folder: Path, replies: Sequence[bytes]) -> None:
        self.address = f"unix://{folder / 'raw.sock'}"
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handler: grpc.RpcMethodHandler[pb.BotMessage, bytes] = (
            grpc.stream_stream_rpc_method_handler(
                self.play, request_deserializer=pb.BotMessage.FromString
            )
        )
        generic = grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})
        self.server.add_generic_rpc_handlers((generic,))
        self.server.add_insecure_port(self.address)
        self.replies = replies

    def play(self, incoming: Iterator[pb.BotMessage], context: object) -> Iterator[bytes]:
        next(incoming)
        yield from self.replies

    def __enter__(self) -> RawReferee:
        self.server.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.stop(grace=None).wait()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_message_that_does_not_parse_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    replies = [welcome().SerializeToString(), b"\x0a\xff\xff"]  # a field longer than the message
    with RawReferee(tmp_path, replies) as referee:
        assert play_with(transport, referee.address, Session(GreedyBot(), "token")) == 1
    err = capsys.readouterr().err
    said = {
        "core": "the referee sent something this SDK cannot follow: a message that does not parse",
        "threads": "stream closed by the referee: StatusCode.INTERNAL",  # grpcio's own parsing
    }
    assert said[transport] in err


VANISHING = """
import os, sys, threading, time
from concurrent import futures
import grpc

welcome = bytes.fromhex(sys.argv[2])

def play(incoming, context):
    next(incoming)
    yield welcome
    threading.Timer(0.3, os._exit, (0,)).start()  # gone, as a killed process is: no goodbye
    time.sleep(60)

handler = grpc.stream_stream_rpc_method_handler(play)
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
server.add_generic_rpc_handlers(
    (grpc.method_handlers_generic_handler("hollywood_gin.v1.Referee", {"Play": handler}),)
)
server.add_insecure_port(sys.argv[1])
server.start()
print("ready", flush=True)
time.sleep(60)
"""


class Welcomed(GreedyBot):
    def __init__(self) -> None:
        super().__init__()
        self.welcomed = threading.Event()

    def on_series_start(self, info: object) -> None:
        self.welcomed.set()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_referee_that_vanishes_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str
) -> None:
    address = f"unix://{tmp_path / 'gone.sock'}"
    argv = [sys.executable, "-c", VANISHING, address, welcome().SerializeToString().hex()]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as referee:
        try:
            assert referee.stdout is not None
            assert referee.stdout.readline() == "ready\n"
            bot = Welcomed()
            assert play_with(transport, address, Session(bot, "token")) == 1
            assert bot.welcomed.is_set()
            assert referee.wait(timeout=30) == 0  # it did exit
        finally:
            referee.kill()
    err = capsys.readouterr().err
    assert "stream closed by the referee: StatusCode.UNAVAILABLE" in err


class Thrice(Session):
    """Sends two more messages after each answer (as the hostile tests' bots do)."""

    def _request(self, request: pb.DecisionRequest) -> None:
        super()._request(request)
        for copy in (1, 2):
            self.outbox.put(pb.BotMessage(action=pb.Action(request_id=request.request_id + copy)))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_several_messages_for_one_request_go_in_order(tmp_path: Path, transport: str) -> None:
    seen: list[int] = []

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)
        yield welcome()
        for request_id in (10, 20, 30):
            yield request(SeriesState(1), request_id)
            seen.extend(next(incoming).action.request_id for _ in range(3))
        yield goodbye()

    with FakeReferee(tmp_path, script) as referee:
        session = Thrice(GreedyBot(), "token")
        assert play_with(transport, referee.address, session) == 0
    assert seen == [10, 11, 12, 20, 21, 22, 30, 31, 32]
