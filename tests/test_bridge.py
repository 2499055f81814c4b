"""The bridge between gRPC's threads and trio, with a real stream on a Unix socket."""

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import trio

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from referee.bridge import ARRIVALS_CAP, HAND_OVER_WAIT_S, Arrival, Incoming, SeatChannel


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
            # The sending thread takes each request as it comes (in time nearly always: most of
            # 20, leaving room for a loaded machine).
            wires = [request(number).SerializeToString() for number in range(20)]
            taken = [channel.send(wire, hand_over=True) for wire in wires]
            assert sum(taken) >= 10
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


def test_a_hand_over_nobody_takes_waits_only_briefly_and_still_goes_out(tmp_path: Path) -> None:
    async def main() -> None:
        channel = SeatChannel(tmp_path / "seat.sock")
        channel.start()
        started = time.monotonic()
        assert not channel.send(request(1).SerializeToString(), hand_over=True)  # no stream yet
        waited = time.monotonic() - started
        assert HAND_OVER_WAIT_S <= waited < HAND_OVER_WAIT_S + 0.05
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
