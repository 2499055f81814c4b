"""A seat's channel: a real gRPC stream on a Unix socket, and its HTTP/2 side frame by frame."""

import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import hpack
import pytest
import trio
import trio.testing

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.manifest import load_manifest
from referee.bridge import ABUSE_BUDGET, ARRIVALS_CAP, Arrival, Incoming, SeatChannel
from referee.http2 import END_HEADERS, END_STREAM, PREFACE, Frame, PlayConnection, frame
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.sandbox import Sandbox


class Client:
    """A bot's side of the stream in a thread: sends what is queued, keeps what comes."""

    def __init__(self, address: str) -> None:
        self.outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        self.received: queue.SimpleQueue[pb.RefereeMessage] = queue.SimpleQueue()
        self.channel = grpc.insecure_channel(address)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _messages(self) -> Iterator[pb.BotMessage]:
        while (message := self.outbox.get()) is not None:
            yield message

    def _run(self) -> None:
        try:
            for message in pb_grpc.RefereeStub(self.channel).Play(self._messages()):
                self.received.put(message)
        except grpc.RpcError:
            pass

    def close(self) -> None:
        self.outbox.put(None)
        self.thread.join(timeout=5)
        self.channel.close()


def hello() -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token="t", name="client", protocol_version=1))


def request(request_id: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(request=pb.DecisionRequest(request_id=request_id))


def test_messages_both_ways_and_a_handed_over_request(tmp_path: Path) -> None:
    async def main() -> None:
        channel = SeatChannel(tmp_path / "seat.sock")
        channel.start()
        client = Client(channel.address)
        try:
            client.outbox.put(hello())
            first = await channel.receive()
            assert first.arrival is Arrival.MESSAGE
            assert first.message is not None
            assert first.message.hello.name == "client"
            channel.send(pb.RefereeMessage(goodbye=pb.Goodbye(detail="as a message")))
            assert client.received.get(timeout=5).goodbye.detail == "as a message"
            # Each request is written to the socket within ``send``.
            wires = [request(number).SerializeToString() for number in range(20)]
            taken = [channel.send(wire, hand_over=True) for wire in wires]
            assert all(taken)
            assert [client.received.get(timeout=5).request.request_id for _ in taken] == [
                *range(20)
            ]
            channel.send(request(7).SerializeToString(), hand_over=True)
            assert client.received.get(timeout=5).request.request_id == 7
            client.outbox.put(pb.BotMessage(action=pb.Action(request_id=7)))
            answer = await channel.receive()
            assert answer.message is not None
            assert answer.message.action.request_id == 7
        finally:
            await trio.to_thread.run_sync(channel.stop)
            client.close()

    trio.run(main)


def test_a_request_before_the_stream_waits_for_it_and_then_goes_out(tmp_path: Path) -> None:
    async def main() -> None:
        channel = SeatChannel(tmp_path / "seat.sock")
        channel.start()
        assert not channel.send(request(1).SerializeToString(), hand_over=True)  # no stream yet
        client = Client(channel.address)
        try:
            client.outbox.put(hello())
            await channel.receive()
            assert client.received.get(timeout=5).request.request_id == 1
        finally:
            await trio.to_thread.run_sync(channel.stop)
            client.close()

    trio.run(main)


def test_a_flood_is_capped_and_a_stopped_channel_says_closed(tmp_path: Path) -> None:
    async def main() -> None:
        channel = SeatChannel(tmp_path / "seat.sock")
        for number in range(ARRIVALS_CAP + 50):
            channel.deliver(Incoming(Arrival.OVERSIZED, 0.0, detail=str(number)))
        await trio.to_thread.run_sync(channel.stop)
        kept = [await channel.receive() for _ in range(ARRIVALS_CAP)]
        assert [item.detail for item in kept] == [str(number) for number in range(ARRIVALS_CAP)]
        assert (await channel.receive()).arrival is Arrival.CLOSED

    trio.run(main)


# --- the HTTP/2 side, without sockets ------------------------------------------------------------

PLAY = b"/hollywood_gin.v1.Referee/Play"


class Heard:
    """A ``referee.http2.Listener`` that keeps what it hears, in order."""

    def __init__(self) -> None:
        self.said: list[tuple[str, object]] = []

    def message(self, data: bytes) -> bool:
        self.said.append(("message", data))
        return data != b"unparseable"

    def oversized(self, size: int) -> None:
        self.said.append(("oversized", size))

    def closed(self) -> None:
        self.said.append(("closed", None))

    def broken(self, detail: str) -> None:
        self.said.append(("broken", detail))

    def second_stream(self) -> None:
        self.said.append(("second_stream", None))

    def unknown_method(self, path: str) -> None:
        self.said.append(("unknown_method", path))

    def abused(self, detail: str) -> None:
        self.said.append(("abused", detail))


class Bot:
    """A bot's side of the connection, by hand: it feeds frames and reads the referee's."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.heard = Heard()
        self.connection = PlayConnection(self.heard, PLAY, 64 * 1024, 1024 * 1024, clock)
        self.connection.start()
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.connection.feed(PREFACE + frame(Frame.SETTINGS, 0, 0))

    def open(self, stream: int, path: bytes = PLAY, flags: int = END_HEADERS) -> None:
        fields = [(":method", "POST"), (":scheme", "http"), (":path", path.decode())]
        fields += [(":authority", "x"), ("content-type", "application/grpc"), ("te", "trailers")]
        self.connection.feed(frame(Frame.HEADERS, flags, stream, self.encoder.encode(fields)))

    def say(self, data: bytes, stream: int = 1, flags: int = 0) -> None:
        body = b"\x00" + len(data).to_bytes(4, "big") + data
        self.connection.feed(frame(Frame.DATA, flags, stream, body))

    def frames(self) -> list[tuple[int, int, int, bytes]]:
        """What the referee wrote since last asked, frame by frame."""
        data, out = self.connection.take_output(), []
        while data:
            size = int.from_bytes(data[:3], "big")
            kind, flags, stream = data[3], data[4], int.from_bytes(data[5:9], "big")
            out.append((kind, flags, stream, data[9 : 9 + size]))
            data = data[9 + size :]
        return out

    def headers(self, stream: int) -> dict[str, str]:
        fields: dict[str, str] = {}
        for kind, _, at, payload in self.frames():
            if kind == Frame.HEADERS and at == stream:
                fields.update(
                    (str(name), str(value)) for name, value in self.decoder.decode(payload)
                )
        return fields


def test_the_play_stream_carries_messages_both_ways_and_ends_with_trailers() -> None:
    bot = Bot()
    bot.open(1)
    assert bot.headers(1) == {":status": "200", "content-type": "application/grpc"}
    bot.say(b"hello")
    bot.say(b"")  # an empty message is a message
    assert bot.heard.said == [("message", b"hello"), ("message", b"")]
    assert bot.connection.send_message(b"welcome")
    data = [p for kind, _, s, p in bot.frames() if kind == Frame.DATA and s == 1]
    assert data == [b"\x00\x00\x00\x00\x07welcome"]
    bot.connection.end_stream()
    assert bot.headers(1) == {"grpc-status": "0"}
    assert not bot.connection.send_message(b"too late")
    bot.connection.feed(frame(Frame.DATA, END_STREAM, 1))
    assert bot.heard.said[-1] == ("closed", None)


def test_a_message_waits_for_the_stream_and_for_the_bots_window() -> None:
    bot = Bot()
    assert not bot.connection.send_message(b"early")  # no stream yet: it waits for it
    small_window = (4).to_bytes(2, "big") + (10).to_bytes(4, "big")  # INITIAL_WINDOW_SIZE 10
    bot.connection.feed(frame(Frame.SETTINGS, 0, 0, small_window))
    bot.open(1)
    sent = b"".join(p for kind, _, s, p in bot.frames() if kind == Frame.DATA)
    assert sent == b"\x00\x00\x00\x00\x05early"  # 10 bytes: the window
    assert not bot.connection.send_message(b"next")
    assert not [f for f in bot.frames() if f[0] == Frame.DATA]
    bot.connection.feed(frame(Frame.WINDOW_UPDATE, 0, 1, (100).to_bytes(4, "big")))
    sent = b"".join(p for kind, _, s, p in bot.frames() if kind == Frame.DATA)
    assert sent == b"\x00\x00\x00\x00\x04next"


def test_the_referee_acknowledges_what_it_receives() -> None:
    bot = Bot()
    bot.open(1)
    bot.frames()
    for _ in range(40):  # 40 x 16 KiB: past half the window
        bot.say(b"x" * 16000)
    updates = {s for kind, _, s, _ in bot.frames() if kind == Frame.WINDOW_UPDATE}
    assert updates == {0, 1}


def test_oversized_messages_are_counted_unread_or_end_the_stream() -> None:
    bot = Bot()
    bot.open(1)
    big = 100_000
    head = b"\x00" + big.to_bytes(4, "big")
    body = head + b"y" * big
    for at in range(0, len(body), 16000):
        bot.connection.feed(frame(Frame.DATA, 0, 1, body[at : at + 16000]))
    assert bot.heard.said == [("oversized", big)]
    assert len(bot.connection.inbound.buffer) < 16000  # dropped as it came, not kept
    bot.frames()
    bot.connection.feed(frame(Frame.DATA, 0, 1, b"\x00" + (2 << 20).to_bytes(4, "big")))
    assert bot.heard.said[-1][0] == "broken"
    assert "RESOURCE_EXHAUSTED" in str(bot.heard.said[-1][1])
    assert bot.headers(1)["grpc-status"] == "8"
    bot.say(b"unparseable")
    assert bot.heard.said[-1][0] == "broken"  # nothing more is read on that stream


def test_a_message_that_does_not_parse_ends_the_stream() -> None:
    bot = Bot()
    bot.open(1)
    bot.say(b"unparseable")
    assert bot.heard.said[-1] == ("broken", "StatusCode.INTERNAL: a message that does not parse")


def test_other_methods_and_streams_are_answered_at_once() -> None:
    bot = Bot()
    bot.open(1, b"/nothing.Here/Flood", END_HEADERS | END_STREAM)  # before Play
    assert bot.heard.said == [("unknown_method", "/nothing.Here/Flood")]
    assert bot.headers(1)["grpc-status"] == "12"
    bot.open(3)
    bot.frames()
    bot.open(5, b"/nothing.Here/Flood")  # beside the open Play: refused unseen
    assert bot.heard.said == [("unknown_method", "/nothing.Here/Flood")]
    refused = [f for f in bot.frames() if f[0] == Frame.RST_STREAM]
    assert refused == [(Frame.RST_STREAM, 0, 5, (7).to_bytes(4, "big"))]  # REFUSED_STREAM
    bot.connection.feed(frame(Frame.RST_STREAM, 0, 3, (8).to_bytes(4, "big")))
    assert bot.heard.said[-1][0] == "broken"
    bot.open(7)  # a second Play, once the first is over
    assert bot.heard.said[-1] == ("second_stream", None)
    assert bot.headers(7)["grpc-status"] == "6"


def test_control_frames_beyond_the_budget_end_the_connection() -> None:
    bot = Bot()
    bot.open(1)
    bot.frames()
    ping = frame(Frame.PING, 0, 0, b"pingpong")
    bot.connection.feed(ping * (ABUSE_BUDGET - 5))
    acks = [f for f in bot.frames() if f[0] == Frame.PING]
    assert len(acks) == ABUSE_BUDGET - 5  # each answered, within the budget
    bot.connection.feed(ping * 20)
    assert [kind for kind, _ in bot.heard.said] == ["abused", "broken"]
    assert "PING" in str(bot.heard.said[0][1])
    goaway = [p for kind, _, _, p in bot.frames() if kind == Frame.GOAWAY]
    assert len(goaway) == 1
    assert int.from_bytes(goaway[0][4:8], "big") == 11  # ENHANCE_YOUR_CALM
    bot.connection.feed(ping)
    assert bot.frames() == []  # nothing more is read


def test_the_budget_comes_back_with_the_referees_messages_and_with_time() -> None:
    now = [0.0]
    bot = Bot(clock=lambda: now[0])
    bot.open(1)
    update = frame(Frame.WINDOW_UPDATE, 0, 0, (100).to_bytes(4, "big"))
    for _ in range(5 * ABUSE_BUDGET):  # an honest client: two window updates per message
        bot.connection.send_message(b"request")
        bot.connection.feed(update * 2)
    assert bot.heard.said == []
    bot.connection.feed(update * (ABUSE_BUDGET - 5))  # nearly spent
    now[0] += 60.0
    bot.connection.feed(update * (ABUSE_BUDGET - 5))  # a minute later it is back
    assert bot.heard.said == []


def test_a_broken_rule_of_http2_ends_the_connection() -> None:
    bot = Bot()
    bot.open(1)
    bot.open(1)  # trailers without END_STREAM in the middle of Play
    assert [kind for kind, _ in bot.heard.said] == ["abused", "broken"]
    assert bot.connection.ended
    other = Bot()
    other.connection.feed(frame(Frame.DATA, 0, 0))  # DATA on stream 0
    assert other.heard.said == [("abused", "DATA on stream 0")]


def test_headers_after_the_bot_ended_play_end_the_connection() -> None:
    """Trailers on a Play the bot has half-closed: each would be decoded for nothing."""
    bot = Bot()
    bot.open(1)
    bot.connection.feed(frame(Frame.DATA, END_STREAM, 1))
    assert bot.heard.said == [("closed", None)]
    bot.open(1, flags=END_HEADERS | END_STREAM)
    assert [kind for kind, _ in bot.heard.said][:2] == ["closed", "abused"]
    assert bot.connection.ended


def test_a_flood_of_messages_spends_the_budget() -> None:
    """Copies of an answer the referee drops unseen cost the bot as control frames do; one
    message for each of the referee's is free."""
    bot = Bot()
    bot.open(1)
    for _ in range(3 * ABUSE_BUDGET):  # an honest bot: an answer for each request
        bot.connection.send_message(b"request")
        bot.say(b"answer")
    assert {kind for kind, _ in bot.heard.said} == {"message"}
    for _ in range(ABUSE_BUDGET + 10):
        bot.say(b"answer")
    assert [kind for kind, _ in bot.heard.said][-2:] == ["abused", "broken"]
    assert "messages" in str(bot.heard.said[-2][1])


# --- a bot's socket ---------------------------------------------------------------------------


def test_one_connection_is_admitted_and_an_abusive_one_ends(tmp_path: Path) -> None:
    async def main() -> None:
        channel = SeatChannel(tmp_path / "seat.sock")
        channel.start()
        client = trio.socket.socket(trio.socket.AF_UNIX)
        await client.connect(str(channel.socket_path))
        await client.send(PREFACE + frame(Frame.SETTINGS, 0, 0))
        await trio.testing.wait_all_tasks_blocked()  # the channel took the connection
        second = socket.socket(socket.AF_UNIX)
        with pytest.raises(ConnectionRefusedError):
            second.connect(str(channel.socket_path))  # the listening socket is closed
        second.close()
        await client.send(frame(Frame.PING, 0, 0, b"pingpong") * (ABUSE_BUDGET + 1))
        abuse = await channel.receive()
        assert abuse.arrival is Arrival.ABUSE
        assert (
            abuse.detail == f"too many control frames and streams ({ABUSE_BUDGET} PING, 1 SETTINGS)"
        )
        with trio.fail_after(5):
            while await client.recv(65536):
                pass  # the referee closed the connection
        client.close()
        await trio.to_thread.run_sync(channel.stop)
        assert (await channel.receive()).arrival is Arrival.CLOSED

    trio.run(main)


# --- real bots of each gRPC library ---------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["node", "go", "cpp", "greedy"])
def test_a_bot_of_each_grpc_library_plays_a_series_on_the_channel(
    sandbox: Sandbox, tmp_path: Path, bot: str
) -> None:
    # grpc-js, grpc-go, gRPC C++ and grpcio, each against the referee's own HTTP/2 (``make
    # node-bot``, ``make go-bot``, ``make cpp-bot`` build the first three).
    if bot == "node" and not (SAMPLES / "node" / "node_modules").is_dir():
        pytest.skip("the Node bot's dependencies are not installed (make node-bot)")
    if bot == "go" and not (SAMPLES / "go" / "gin-go-bot").is_file():
        pytest.skip("the Go bot is not built (make go-bot)")
    if bot == "cpp" and not (SAMPLES / "cpp" / "gin-cpp-bot").is_file():
        pytest.skip("the C++ bot is not built (make cpp-bot)")
    seats = (
        remote_seat(load_manifest(SAMPLES / bot), sandbox.prepare, f"{bot}-0"),
        remote_seat(load_manifest(SAMPLES / "greedy"), sandbox.prepare, f"greedy-{bot}-1"),
    )
    result = trio.run(play_folders, seats, MatchConfig(f"channel-{bot}", 5), tmp_path / "log")
    assert result.faults == ()
    assert result.end in ("complete", "decided")
    assert all(stats.decisions > 0 for stats in result.stats)
    assert [seat.exit_after_goodbye for seat in seats] == [0, 0]
