"""The bot side of ``python -m benchmarks.sdk_bench --transport``: one client a process.

    python -m benchmarks.sdk_clients VARIANT     (GIN_REFEREE and GIN_TOKEN set)

Every client says hello (``plays_on`` and ``events_in_requests`` set) and answers each decision
request with its first legal action, echoing the request id, until the goodbye. The bare
clients do only that, on the message objects; the SDK's run a :class:`protocol.sdk.Bot` whose
``decide`` returns ``legal[0]``, so what the SDK adds is its own work (decoding the request into
rules types, the callbacks, encoding the answer), not a policy's. Each bare client is grpcio
used one way (``h2`` is no grpcio at all: HTTP/2 in pure Python, for scale):

* ``stub-threads``: the public sync stub, its request iterator fed from a queue (grpcio's thread
  reads it), as ``benchmarks/bots/echo`` and most Python bots do;
* ``stub-inline``: the same stub, its request iterator reading the responses itself: every
  message handled in grpcio's consumer thread, the main thread waiting for the end;
* ``aio``: ``grpc.aio`` in one asyncio loop, ``call.write()`` and ``call.read()``;
* ``core``: the call on a completion queue of its own (grpcio's ``segregated_call``), waited on
  in the main thread: what the SDK's stream does (``protocol._stream.CoreStream``);
* ``h2``: the ``h2`` library over a blocking Unix socket.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from protocol.sdk import Bot

METHOD = "/hollywood_gin.v1.Referee/Play"


def hello() -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            token=os.environ["GIN_TOKEN"],
            name="bench",
            version="1",
            protocol_version=1,
            events_in_requests=True,
            plays_on=True,
        )
    )


def answer(message: pb.RefereeMessage) -> pb.BotMessage | None:
    """The answer to a request (``None`` for any other message)."""
    if message.WhichOneof("kind") != "request":
        return None
    action = pb.Action()
    action.CopyFrom(message.request.legal_actions[0])
    action.request_id = message.request.request_id
    return pb.BotMessage(action=action)


def is_goodbye(message: pb.RefereeMessage) -> bool:
    return message.WhichOneof("kind") == "goodbye"


def stub_threads() -> None:
    from _queue import SimpleQueue  # noqa: PLC0415 - each client imports what it uses

    outbox: SimpleQueue[pb.BotMessage | None] = SimpleQueue()
    outbox.put(hello())

    def messages() -> Iterator[pb.BotMessage]:
        while (item := outbox.get()) is not None:
            yield item

    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        for message in pb_grpc.RefereeStub(channel).Play(messages()):
            if (reply := answer(message)) is not None:
                outbox.put(reply)
            elif is_goodbye(message):
                break
    outbox.put(None)


def stub_inline() -> None:
    responses: list[Iterator[pb.RefereeMessage]] = []
    ready, done = threading.Event(), threading.Event()

    def messages() -> Iterator[pb.BotMessage]:
        yield hello()
        ready.wait()
        try:
            for message in responses[0]:
                if (reply := answer(message)) is not None:
                    yield reply
                elif is_goodbye(message):
                    break
        finally:
            done.set()

    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        responses.append(pb_grpc.RefereeStub(channel).Play(messages()))
        ready.set()
        done.wait()


def aio() -> None:
    import asyncio  # noqa: PLC0415

    import grpc.aio  # noqa: PLC0415

    async def play() -> None:
        async with grpc.aio.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
            call: Any = pb_grpc.RefereeStub(channel).Play()
            await call.write(hello())
            while (message := await call.read()) is not grpc.aio.EOF:
                if (reply := answer(message)) is not None:
                    await call.write(reply)
                elif is_goodbye(message):
                    break
            await call.done_writing()

    asyncio.run(play())


def core() -> None:
    import importlib  # noqa: PLC0415

    cygrpc: Any = importlib.import_module("grpc._cython.cygrpc")
    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        opening = (
            ((cygrpc.SendInitialMetadataOperation(None, 0),), "metadata"),
            ((cygrpc.ReceiveInitialMetadataOperation(0),), "headers"),
            ((cygrpc.ReceiveStatusOnClientOperation(0),), "status"),
        )
        flags = cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS
        call = channel._channel.segregated_call(  # type: ignore[attr-defined]
            flags, METHOD.encode(), None, None, None, None, opening
        )
        due = {"metadata", "headers", "status"}

        def operate(operation: Any, tag: str) -> None:
            while tag in due:  # one send and one receive at a time
                due.discard(call.next_event().tag)
            if call.operate((operation,), tag):
                due.add(tag)

        operate(cygrpc.SendMessageOperation(hello().SerializeToString(), 0), "send")
        while True:
            operate(cygrpc.ReceiveMessageOperation(0), "receive")
            data = None
            while "receive" in due:
                event = call.next_event()
                due.discard(event.tag)
                if event.tag == "receive":
                    data = event.batch_operations[0].message()
            message = None if data is None else pb.RefereeMessage.FromString(data)
            if message is None or is_goodbye(message):
                break
            if (reply := answer(message)) is not None:
                operate(cygrpc.SendMessageOperation(reply.SerializeToString(), 0), "send")
        call.cancel(cygrpc.StatusCode.cancelled, "done")
        while due:
            due.discard(call.next_event().tag)


def h2() -> None:
    import socket  # noqa: PLC0415

    import h2.config  # noqa: PLC0415 - h2 comes with hypercorn (the arena)
    import h2.connection  # noqa: PLC0415
    import h2.events  # noqa: PLC0415

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.environ["GIN_REFEREE"].removeprefix("unix://"))
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    headers = {":method": "POST", ":scheme": "http", ":path": METHOD, ":authority": "localhost"}
    headers |= {"content-type": "application/grpc", "te": "trailers"}
    connection.send_headers(1, list(headers.items()))

    def send(message: pb.BotMessage) -> None:
        body = message.SerializeToString()
        connection.send_data(1, b"\0" + len(body).to_bytes(4, "big") + body)

    send(hello())
    sock.sendall(connection.data_to_send())
    data = bytearray()
    over = False
    while not over and (chunk := sock.recv(65536)):
        for event in connection.receive_data(chunk):
            if isinstance(event, h2.events.DataReceived):
                connection.acknowledge_received_data(event.flow_controlled_length, 1)
                data += event.data
                while len(data) >= 5 and len(data) >= 5 + int.from_bytes(data[1:5], "big"):
                    size = int.from_bytes(data[1:5], "big")
                    message = pb.RefereeMessage.FromString(bytes(data[5 : 5 + size]))
                    del data[: 5 + size]
                    if (reply := answer(message)) is not None:
                        send(reply)
                    over = over or is_goodbye(message)
            elif isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                over = True
        sock.sendall(connection.data_to_send())
    sock.close()


def first_legal() -> Bot:
    """A bot that plays the first legal action, through the whole SDK (imported only here, so
    the bare clients' start-up is theirs alone)."""
    from protocol.sdk import Bot  # noqa: PLC0415
    from referee.rules import Action, Observation  # noqa: PLC0415

    class First(Bot):
        name = "bench"
        version = "1"

        def decide(self, view: Observation, legal: Sequence[Action]) -> Action:  # noqa: ARG002
            return legal[0]

    return First()


def sdk() -> None:
    if first_legal().run() != 0:
        raise SystemExit(1)


def sdk_threads() -> None:
    """The SDK on the public stub's threads (its fallback, and its transport before)."""
    from protocol.sdk import Session  # noqa: PLC0415

    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        session = Session(first_legal(), os.environ["GIN_TOKEN"])
        status = session.play(pb_grpc.RefereeStub(channel))
    if status != 0:
        raise SystemExit(1)


CLIENTS: dict[str, Callable[[], None]] = {
    "stub-threads": stub_threads,
    "stub-inline": stub_inline,
    "aio": aio,
    "core": core,
    "h2": h2,
    "sdk": sdk,
    "sdk-threads": sdk_threads,
}


if __name__ == "__main__":
    CLIENTS[sys.argv[1]]()
