"""Option (a), the referee's transport before ``referee.bridge`` served the stream itself: a
grpcio server per seat, kept here so ``benchmarks.referee_bench`` can measure it beside the
current one, in the same run (``--transports``).

grpcio has no trio support. Each seat gets its own gRPC server on a Unix socket; the servicer's
``Play`` runs in a gRPC thread. Messages from the bot are parsed in gRPC's polling thread (the
servicer's deserializer), appended to a deque and signalled on an eventfd that the trio side
waits on with ``wait_readable``; messages to the bot go, serialized in the trio thread, through a
thread-safe queue that the servicer's response generator drains. A decision request is handed
over: the trio thread waits, for at most ``HAND_OVER_WAIT_S``, until the sending thread has taken
it. The server admits one connection and one stream on it, in gRPC's core.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import trio

from protocol import hollywood_gin_pb2 as pb
from referee.bridge import Arrival, Incoming

MAX_MESSAGE_BYTES: Final = 64 * 1024
"""Largest message a bot may send; a bigger one is a protocol violation (a strike)."""
TRANSPORT_LIMIT_BYTES: Final = 1024 * 1024
"""gRPC's own cap: a message over this ends the bot's stream."""
ARRIVALS_CAP: Final = 1024
"""Arrivals waiting for the match at most; a flooding bot loses the rest."""
_POLL_S: Final = 0.25
HAND_OVER_WAIT_S: Final = 0.002
"""Longest a request waits for the sending thread to take it (a stream that ended never does)."""
SERVICE: Final = pb.DESCRIPTOR.services_by_name["Referee"].full_name


_STOP: Final = object()
_DELIVERED: Final = object()
"""What the request iterator yields: ``_Servicer.arrived`` has delivered the message already."""


@dataclass(frozen=True, slots=True)
class _HandOver:
    """A serialized message whose sender waits until ``taken`` is released."""

    data: bytes
    taken: threading.Lock


class _Servicer:
    """The Referee service's one method, ``Play``, for one seat."""

    def __init__(self, deliver: Callable[[Incoming], None], outbox: queue.SimpleQueue[object]):
        self.deliver = deliver
        self.outbox = outbox
        self.lock = threading.Lock()
        self.connected = False

    def Play(  # noqa: N802 - the gRPC method name
        self, request_iterator: Iterator[object], context: grpc.ServicerContext
    ) -> Iterator[bytes]:
        with self.lock:
            first, self.connected = not self.connected, True
        if not first:
            self.deliver(Incoming(Arrival.SECOND_STREAM, time.monotonic()))
            context.abort(grpc.StatusCode.ALREADY_EXISTS, "one Play stream per seat")
        reader = threading.Thread(target=self._read, args=(request_iterator,), daemon=True)
        reader.start()
        while context.is_active():
            try:
                item = self.outbox.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if item is _STOP:
                return
            if isinstance(item, _HandOver):
                item.taken.release()
                item = item.data
            assert isinstance(item, bytes)
            yield item

    def arrived(self, data: bytes) -> object:
        """The request deserializer: hands each message to the match as it arrives.

        gRPC calls it in its polling thread as soon as a message is in, before it wakes the
        reader thread, which then only asks for the next message. So an answer reaches the match
        one thread hop sooner, and without parsing its size again. A message over
        ``MAX_MESSAGE_BYTES`` is not parsed at all (``OVERSIZED``). One that does not parse
        raises, and gRPC ends the call, as with the plain deserializer.
        """
        if len(data) > MAX_MESSAGE_BYTES:
            self.deliver(Incoming(Arrival.OVERSIZED, time.monotonic(), detail=str(len(data))))
        else:
            message = pb.BotMessage.FromString(data)
            self.deliver(Incoming(Arrival.MESSAGE, time.monotonic(), message))
        return _DELIVERED

    def _read(self, request_iterator: Iterator[object]) -> None:
        """Keep asking for messages (``arrived`` delivers them), then say how the stream ended."""
        try:
            for _ in request_iterator:
                pass
        except Exception as error:  # any failure of the stream is the bot's side ending
            self.deliver(Incoming(Arrival.BROKEN, time.monotonic(), detail=_describe(error)))
        else:
            self.deliver(Incoming(Arrival.CLOSED, time.monotonic()))


def _add_servicer(servicer: _Servicer, server: grpc.Server) -> None:
    """``add_RefereeServicer_to_server``, except that responses go out as the bytes queued."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=servicer.arrived,
            response_serializer=None,
        )
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, handlers), _Elsewhere(servicer.deliver))
    )
    server.add_registered_method_handlers(SERVICE, handlers)


class _Elsewhere(grpc.GenericRpcHandler):
    """Any method but ``Play``: the seat hears of it (a bot that does this before its hello
    fails its start-up and is stopped at once) and the call ends unimplemented."""

    def __init__(self, deliver: Callable[[Incoming], None]) -> None:
        self.deliver = deliver

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = str(handler_call_details.method)[:100]
        self.deliver(Incoming(Arrival.UNKNOWN_METHOD, time.monotonic(), detail=method))
        return grpc.unary_unary_rpc_method_handler(_unimplemented)


def _unimplemented(_request: object, context: grpc.ServicerContext) -> None:
    context.abort(grpc.StatusCode.UNIMPLEMENTED, "this socket serves Referee.Play only")


def _describe(error: Exception) -> str:
    """A failed stream in words (server-side RpcErrors may carry no status code)."""
    code = getattr(error, "code", None)
    details = getattr(error, "details", None)
    if callable(code) and callable(details):
        return f"{code()}: {details()}"
    return repr(error)


class SeatChannel:
    """One seat's gRPC server and the two directions of its stream, seen from trio.

    Create it inside trio (it captures the running loop's token), then :meth:`start`; one trio
    task at a time may :meth:`receive`.
    """

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.address = f"unix://{socket_path}"
        self._token = trio.lowlevel.current_trio_token()
        self._arrivals: deque[Incoming] = deque()
        self._wakeup = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._wakeup_lock = threading.Lock()
        """Held to signal or close the eventfd, so no thread writes to a reused descriptor."""
        self.outbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="gin-seat"),
            options=[
                ("grpc.max_receive_message_length", TRANSPORT_LIMIT_BYTES),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                ("grpc.so_reuseport", 0),
                ("grpc.max_allowed_incoming_connections", 1),
                ("grpc.max_concurrent_streams", 1),
            ],
            maximum_concurrent_rpcs=2,
        )
        _add_servicer(_Servicer(self.deliver, self.outbox), self._server)
        self._stopped = False
        self._ended = False

    def start(self) -> None:
        """Bind the Unix socket and start serving.

        Raises:
            RuntimeError: the socket could not be bound.
        """
        if self._server.add_insecure_port(self.address) == 0:
            raise RuntimeError(f"cannot bind {self.address}")
        self._server.start()

    def deliver(self, item: Incoming) -> None:
        """Hand an arrival to the trio side (from any thread; dropped once stopped)."""
        if len(self._arrivals) >= ARRIVALS_CAP:
            return  # a flooding bot loses its extra messages; the match is not held up
        self._arrivals.append(item)  # before the signal, so a woken receiver finds it
        with self._wakeup_lock:
            if self._wakeup >= 0:
                os.eventfd_write(self._wakeup, 1)

    async def receive(self) -> Incoming:
        """The next arrival (waits); once the channel is stopped and drained, ``CLOSED``."""
        if self._arrivals:
            await trio.lowlevel.checkpoint()
        while not self._arrivals:
            if self._wakeup < 0:
                return Incoming(Arrival.CLOSED, time.monotonic())
            try:
                await trio.lowlevel.wait_readable(self._wakeup)
            except trio.ClosedResourceError:
                continue  # stopped while waiting
            with contextlib.suppress(BlockingIOError):
                os.eventfd_read(self._wakeup)  # reset; the deque says what arrived
        return self._arrivals.popleft()

    def send(self, message: pb.RefereeMessage | bytes, *, hand_over: bool = False) -> bool:
        """Queue a message, or a serialized one, to the bot; False once the stream has ended.

        With ``hand_over``, wait (at most ``HAND_OVER_WAIT_S``) until the sending thread has
        taken it, for decision requests, whose answer the match waits for anyway; then False
        also if it was not taken in that time (it still goes out, later).
        """
        if self._ended:
            return False
        data = message if isinstance(message, bytes) else message.SerializeToString()
        if not hand_over:
            self.outbox.put(data)
            return True
        taken = threading.Lock()
        taken.acquire()
        self.outbox.put(_HandOver(data, taken))
        return taken.acquire(timeout=HAND_OVER_WAIT_S)

    def end_stream(self) -> None:
        """Close the referee's side of the stream after what is queued (idempotent)."""
        if not self._ended:
            self._ended = True
            self.outbox.put(_STOP)

    def stop(self, grace_s: float = 0.5) -> None:
        """End the stream and stop the server (idempotent)."""
        if self._stopped:
            return
        self.end_stream()
        self._stopped = True
        self._server.stop(grace=grace_s).wait(timeout=grace_s + 1.0)
        try:
            # In trio's thread, so a receiver waiting on the eventfd is told before it closes.
            self._token.run_sync_soon(self._close_wakeup)
        except trio.RunFinishedError:
            self._close_wakeup(in_trio=False)

    def _close_wakeup(self, *, in_trio: bool = True) -> None:
        with self._wakeup_lock:
            if self._wakeup >= 0:
                if in_trio:
                    trio.lowlevel.notify_closing(self._wakeup)
                os.close(self._wakeup)
                self._wakeup = -1
