"""The SDK's side of the one ``Play`` stream, in two ways: grpc core's call driven from the bot's
own thread (what :meth:`protocol.sdk.Bot.run` uses), and grpcio's public threaded stub.

The public stub's stream-stream call reads what it sends from an iterator, in a thread of its
own, and learns of every completion (a message received, an answer gone) through another thread
that polls the channel: each message received crosses from the polling thread to the caller,
each answer from the caller to the sending thread, whose send is done when the polling thread
says so. Every crossing is a wake-up and a hand-over of the GIL. :class:`CoreStream` makes the
same call on a completion queue of its own (grpcio's ``segregated_call``, what its
single-threaded unary-stream option uses) and waits for its events in the calling thread: no
thread of grpcio's Python side, no crossing. It is the same call in grpc's core (the same HTTP/2,
message size limits and statuses), and the SDK spends about 0.6 of the CPU per decision it spends
on the threaded stub (``python -m benchmarks.sdk_bench --transport``). It uses grpcio's
internals, pinned in ``pyproject.toml``; a grpcio without them gets :class:`ThreadedStream` (see
:meth:`protocol.sdk.Session.play_channel`).

Both give the referee's messages parsed, ``None`` once the referee ended the stream with status
OK, and raise :class:`BrokenStreamError` when it ended otherwise (the referee gone, a message
over the size limit, a refusal).
"""

from __future__ import annotations

import importlib
from _queue import SimpleQueue  # what queue.SimpleQueue is, without importing queue
from collections.abc import Iterator
from typing import Any, Final, Protocol

import grpc
from google.protobuf.message import DecodeError

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc

METHOD: Final = b"/hollywood_gin.v1.Referee/Play"
STATUS_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
"""grpc core's status numbers to grpcio's codes."""

_SENT_METADATA, _HEADERS, _STATUS, _SEND, _RECEIVE = range(5)
"""The tags of the call's operations; each is in flight once at most (grpc core allows one send
and one receive at a time)."""


class BrokenStreamError(Exception):
    """The stream ended with a status other than OK."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code} {details}")
        self.code = code
        self.details = details


class NoCoreCallError(Exception):
    """This grpcio does not have the internals :class:`CoreStream` uses."""


class Stream(Protocol):
    """One ``Play`` stream, as the session sees it."""

    def send(self, message: pb.BotMessage) -> None:
        """Send ``message`` (dropped if the stream is over: :meth:`receive` says why)."""

    def receive(self) -> pb.RefereeMessage | None:
        """The referee's next message; ``None``: the stream ended with status OK.

        Raises:
            BrokenStreamError: the stream ended otherwise.
            ValueError: a message that does not parse.
        """

    def close(self) -> None:
        """End the stream (cancel it if it is still open) and let go of it."""


def parsed(data: bytes) -> pb.RefereeMessage:
    """A referee message from its bytes.

    Raises:
        ValueError: they are not one.
    """
    try:
        return pb.RefereeMessage.FromString(data)
    except DecodeError as error:
        raise ValueError(f"a message that does not parse ({error})") from None


class CoreStream:
    """The ``Play`` call on its own completion queue, waited on in the calling thread."""

    def __init__(self, channel: grpc.Channel) -> None:
        """Start the call on ``channel``.

        Raises:
            NoCoreCallError: this grpcio lacks the internals it needs.
        """
        try:
            cygrpc = importlib.import_module("grpc._cython.cygrpc")  # (no type stubs)
            self._cygrpc: Any = cygrpc  # type: ignore[explicit-any]  # grpc's cython internals are untyped
            core = channel._channel  # type: ignore[attr-defined]
            opening = (
                ((cygrpc.SendInitialMetadataOperation(None, 0),), _SENT_METADATA),
                ((cygrpc.ReceiveInitialMetadataOperation(0),), _HEADERS),
                ((cygrpc.ReceiveStatusOnClientOperation(0),), _STATUS),
            )
            flags = cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS
            self._call: Any = core.segregated_call(flags, METHOD, None, None, None, None, opening)  # type: ignore[explicit-any]  # grpc's cython internals are untyped
        except (ImportError, AttributeError, TypeError) as error:
            raise NoCoreCallError(f"{type(error).__name__}: {error}") from None
        self._due = {_SENT_METADATA, _HEADERS, _STATUS}
        """The tags of the operations in flight."""
        self._status: BrokenStreamError | None = None
        """How the call ended, once it did (OK too)."""
        self._arrived: bytes | None = None

    def send(self, message: pb.BotMessage) -> None:
        self._wait(_SEND)  # the one before it has gone
        operation = self._cygrpc.SendMessageOperation(message.SerializeToString(), 0)
        if self._call.operate((operation,), _SEND):
            self._due.add(_SEND)

    def receive(self) -> pb.RefereeMessage | None:
        if self._call.operate((self._cygrpc.ReceiveMessageOperation(0),), _RECEIVE):
            self._due.add(_RECEIVE)
            self._wait(_RECEIVE)
            if self._arrived is not None:
                data, self._arrived = self._arrived, None
                return parsed(data)
        self._wait(_STATUS)
        assert self._status is not None
        if self._status.code is grpc.StatusCode.OK:
            return None
        raise self._status

    def close(self) -> None:
        if self._due:
            self._call.cancel(self._cygrpc.StatusCode.cancelled, "the bot has left")
        while self._due:  # a cancelled call completes every operation at once
            self._next()

    def _wait(self, tag: int) -> None:
        """Take the call's events until the operation ``tag`` is done."""
        while tag in self._due:
            self._next()

    def _next(self) -> None:
        event = self._call.next_event()  # without the GIL, signals checked 5 times a second
        self._due.discard(event.tag)
        if event.tag == _RECEIVE:
            self._arrived = event.batch_operations[0].message()
        elif event.tag == _STATUS:
            status = event.batch_operations[0]
            code = STATUS_CODES.get(status.code(), grpc.StatusCode.UNKNOWN)
            details = status.details()
            if isinstance(details, bytes):
                details = details.decode("utf-8", "replace")
            self._status = BrokenStreamError(code, str(details))


_DONE: Final = object()


class ThreadedStream:
    """The ``Play`` call of grpcio's public stub: its thread reads what to send from a queue."""

    def __init__(self, stub: pb_grpc.RefereeStub) -> None:
        self._outbox: SimpleQueue[pb.BotMessage | object] = SimpleQueue()
        self._responses = stub.Play(self._messages())

    def _messages(self) -> Iterator[pb.BotMessage]:
        while (item := self._outbox.get()) is not _DONE:
            assert isinstance(item, pb.BotMessage)
            yield item

    def send(self, message: pb.BotMessage) -> None:
        self._outbox.put(message)

    def receive(self) -> pb.RefereeMessage | None:
        try:
            return next(self._responses)
        except StopIteration:
            return None
        except grpc.RpcError as error:
            call: Any = error  # type: ignore[explicit-any]  # the stub's errors are also its call: code() and details()
            raise BrokenStreamError(call.code(), call.details() or "") from None

    def close(self) -> None:
        self._outbox.put(_DONE)
        self._responses.cancel()
