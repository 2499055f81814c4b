"""One seat's gRPC stream, served in the match's own trio thread.

A seat's channel listens on a Unix socket in the seat's run folder and admits one connection:
the listening socket is closed as soon as that one is accepted, so any further connection fails
in the bot's own ``connect`` (and once the bot is in, remote.py unlinks the path as well). The
connection is read by a trio system task and written straight from :meth:`SeatChannel.send`, both
in the match's thread; what the bytes mean is ``referee.http2.PlayConnection``'s business (HTTP/2
and gRPC's framing, without I/O: one ``Play`` stream, other streams refused or answered at once,
and a budget of control frames whose end closes the connection of a bot flooding it with
resets, pings or settings: ``Arrival.ABUSE``, a protocol violation of that bot's). A message from
the bot is parsed where it is read and put where :meth:`SeatChannel.receive` waits; a request to
the bot is framed and written to the socket within ``send``. No thread, queue or lock stands
between the match and the bot: only :meth:`SeatChannel.deliver` is called from other threads (the
process watcher's ``EXITED``), through the trio token.

Why this design rather than grpcio's. Before it, each seat had a grpcio server, and every
decision crossed threads twice (trio to the servicer's thread through a queue and a hand-over
lock, gRPC's poller back to trio through an eventfd): 43% of the referee's CPU was the kernel's
(futexes, scheduling), and a rapid reset on the bot's own connection cost gRPC's threads seconds
of CPU, charged to the referee. Measured side by side on the 2-CPU reference machine
(``python -m benchmarks.transport_bench --runs 5 --hands 50``, medians over runs, the referee's
CPU per decision, all its threads, and its ratio run by run to a bare threaded grpcio stream's
server side):

====================================  ==========  ==========  ===============
variant                               round trip  CPU         ÷ bare grpcio
====================================  ==========  ==========  ===============
bare grpcio stream (threads)          367 µs      217 µs      1.00
bare grpc.aio stream (asyncio)        372 µs      230 µs      1.11
channel alone, grpcio bridge (before) 415 µs      254 µs      1.22
channel alone, this one               258 µs      100 µs      0.43
full series, grpcio bridge (before)   646 µs      582 µs      2.80
full series, this one                 410 µs      264 µs      1.16
====================================  ==========  ==========  ===============

grpc.aio (option (b)) costs as much as the threaded server on asyncio alone, before trio's guest
mode would add its own hand-offs, so it was not built. Over a series the referee's CPU was, by
thread, trio's 0.67 s, gRPC's servicer threads 0.25 s and its event engine 0.24 s before; trio's
0.75 s alone now (the match's own work is the rest of the series' CPU: about 160 µs a decision).
Under floods (``python -m benchmarks.flood_bench``, referee CPU and the honest seat's worst
decision as ratios to a calm series of the same run): a rapid reset on the bot's own connection
took 2.46x the calm CPU before (the flooder played on), 0.39x now, with a worst decision of
1.01x calm (its connection ends within a few hundred frames and it forfeits); a ping flood 0.39x.
"""

from __future__ import annotations

import contextlib
import enum
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVarTuple

import trio
from google.protobuf.message import DecodeError

from protocol import hollywood_gin_pb2 as pb
from referee.http2 import ABUSE_BUDGET as _ABUSE_BUDGET
from referee.http2 import Error, PlayConnection

MAX_MESSAGE_BYTES: Final = 64 * 1024
"""Largest message a bot may send; a bigger one is a protocol violation (a strike)."""
TRANSPORT_LIMIT_BYTES: Final = 1024 * 1024
"""The transport's cap: a message over this ends the bot's stream."""
ARRIVALS_CAP: Final = 1024
"""Arrivals waiting for the match at most; a flooding bot loses the rest."""
ABUSE_BUDGET: Final = _ABUSE_BUDGET
"""Control frames a bot's connection may spend (``referee.http2``); beyond, it is ended."""
SERVICE: Final = pb.DESCRIPTOR.services_by_name["Referee"].full_name
PLAY_PATH: Final = f"/{SERVICE}/Play".encode()
_READ_BYTES: Final = 65536
_UNSENT_CAP: Final = 8 << 20
"""Most bytes held for a bot that does not read its socket; beyond, they are dropped."""

Ts = TypeVarTuple("Ts")


class Arrival(enum.Enum):
    """What came from the bot's side."""

    MESSAGE = "message"
    CLOSED = "closed"
    """The bot closed its side of the stream."""
    BROKEN = "broken"
    """The stream failed (for example an oversized message, or the bot vanished)."""
    OVERSIZED = "oversized"
    """A message over ``MAX_MESSAGE_BYTES`` (dropped; ``detail`` has its size)."""
    SECOND_STREAM = "second_stream"
    """The bot tried to open another stream."""
    UNKNOWN_METHOD = "unknown_method"
    """The bot called a method other than ``Play`` (``detail`` has its name, up to 100 chars)."""
    EXITED = "exited"
    """The bot's process exited (set by the process watcher, not gRPC)."""
    ABUSE = "abuse"
    """The bot broke HTTP/2's rules or spent its budget of control frames: the referee closed
    its connection (``detail`` says how; a ``BROKEN`` follows)."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One thing that arrived, stamped with the monotonic time it arrived."""

    arrival: Arrival
    at: float
    message: pb.BotMessage | None = None
    detail: str = ""


class _Arrivals:
    """What the connection says, as arrivals (the ``referee.http2.Listener``)."""

    def __init__(self, arrive: Callable[[Incoming], None]) -> None:
        self.arrive = arrive

    def message(self, data: bytes) -> bool:
        try:
            message = pb.BotMessage.FromString(data)
        except DecodeError:
            return False
        self.arrive(Incoming(Arrival.MESSAGE, time.monotonic(), message))
        return True

    def oversized(self, size: int) -> None:
        self.arrive(Incoming(Arrival.OVERSIZED, time.monotonic(), detail=str(size)))

    def closed(self) -> None:
        self.arrive(Incoming(Arrival.CLOSED, time.monotonic()))

    def broken(self, detail: str) -> None:
        self.arrive(Incoming(Arrival.BROKEN, time.monotonic(), detail=detail))

    def second_stream(self) -> None:
        self.arrive(Incoming(Arrival.SECOND_STREAM, time.monotonic()))

    def unknown_method(self, path: str) -> None:
        self.arrive(Incoming(Arrival.UNKNOWN_METHOD, time.monotonic(), detail=path))

    def abused(self, detail: str) -> None:
        self.arrive(Incoming(Arrival.ABUSE, time.monotonic(), detail=detail))


class SeatChannel:
    """One seat's socket and the two directions of its stream, in trio.

    Create it inside trio (it takes the running loop's token and thread), then :meth:`start`
    (from any thread). :meth:`send`, :meth:`end_stream` and :meth:`receive` belong to the trio
    thread, one task at a time receiving; :meth:`deliver` and :meth:`stop` may come from any.
    """

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.address = f"unix://{socket_path}"
        self._token = trio.lowlevel.current_trio_token()
        self._thread = threading.get_ident()
        self._arrivals: deque[Incoming] = deque()
        self._waiting = trio.lowlevel.ParkingLot()
        self._connection = PlayConnection(
            _Arrivals(self._arrive), PLAY_PATH, MAX_MESSAGE_BYTES, TRANSPORT_LIMIT_BYTES
        )
        self._listener: socket.socket | None = None
        self._socket: socket.socket | None = None
        self._unsent = bytearray()
        self._flushing = False
        self._stopped = False
        self._ended = False

    # --- any thread ------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind the Unix socket and start serving.

        Raises:
            RuntimeError: the socket could not be bound.
        """
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            listener.setblocking(False)
            listener.bind(str(self.socket_path))
            listener.listen(8)
        except OSError as error:
            listener.close()
            raise RuntimeError(f"cannot bind {self.address}: {error.strerror}") from None
        self._listener = listener
        self._in_trio(trio.lowlevel.spawn_system_task, self._serve, listener)

    def deliver(self, item: Incoming) -> None:
        """Hand an arrival to the trio side (from any thread; dropped once the run is over)."""
        if threading.get_ident() == self._thread:
            self._arrive(item)
        else:
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._arrive, item)

    def stop(self, grace_s: float = 0.5) -> None:
        """End the stream, give what is unsent ``grace_s`` to go (unless called in the trio
        thread, which cannot wait), then close the connection (idempotent)."""
        if self._stopped:
            return
        if threading.get_ident() == self._thread:
            self._close()
            return
        try:
            trio.from_thread.run(self._stop_gracefully, grace_s, trio_token=self._token)
        except trio.RunFinishedError:
            self._close(in_trio=False)

    def _in_trio(self, function: Callable[[*Ts], object], *args: *Ts) -> None:
        if threading.get_ident() == self._thread:
            function(*args)
        else:
            trio.from_thread.run_sync(function, *args, trio_token=self._token)

    # --- the trio thread -------------------------------------------------------------------------

    async def receive(self) -> Incoming:
        """The next arrival (waits); once the channel is stopped and drained, ``CLOSED``."""
        if self._arrivals:
            await trio.lowlevel.checkpoint()
        while not self._arrivals:
            if self._stopped:
                return Incoming(Arrival.CLOSED, time.monotonic())
            await self._waiting.park()
        return self._arrivals.popleft()

    def send(self, message: pb.RefereeMessage | bytes, *, hand_over: bool = False) -> bool:
        """Write a message, or a serialized one, to the bot; False once the stream has ended.

        With ``hand_over`` (decision requests), False also if it did not go out at once (no
        stream yet, or the bot's window is closed): it goes when it can.
        """
        if self._ended or self._stopped:
            return False
        if not self._connection.accepting():
            return False
        data = message if isinstance(message, bytes) else message.SerializeToString()
        out = self._connection.send_message(data)
        self._write()
        return out or not hand_over

    def ready_to_go_on(self) -> bool:
        """Between two series of a sitting: whether the stream is still open both ways, with
        nothing but messages waiting (a close, a break or an abuse the last series left unread
        ends the sitting for the bot). The messages waiting belong to the series that ended:
        they are dropped, so that nothing of it is judged in the next one's log."""
        connection = self._connection
        if self._ended or self._stopped or not connection.accepting():
            return False
        if not (connection.play_open and connection.play_reading):
            return False
        if any(item.arrival is not Arrival.MESSAGE for item in self._arrivals):
            return False
        self._arrivals.clear()
        return True

    def end_stream(self) -> None:
        """Close the referee's side of the stream after what is queued (idempotent)."""
        if not self._ended:
            self._ended = True
            self._connection.end_stream()
            self._write()

    def _arrive(self, item: Incoming) -> None:
        if len(self._arrivals) >= ARRIVALS_CAP:
            return  # a flooding bot loses its extra messages; the match is not held up
        self._arrivals.append(item)
        self._waiting.unpark_all()

    async def _serve(self, listener: socket.socket) -> None:
        """Take the one connection, then read it until it ends (a system task)."""
        try:
            connection = await self._accept(listener)
        except (OSError, trio.ClosedResourceError):
            return  # stopped before the bot came
        self._socket = connection
        self._connection.start()
        self._write()
        try:
            await self._read(connection)
        finally:
            self._connection.lost()
            self._close_socket()

    async def _accept(self, listener: socket.socket) -> socket.socket:
        try:
            while True:
                await trio.lowlevel.wait_readable(listener)
                with contextlib.suppress(BlockingIOError):
                    connection, _ = listener.accept()
                    connection.setblocking(False)
                    return connection
        finally:
            self._close_listener()

    async def _read(self, connection: socket.socket) -> None:
        while not self._connection.ended:
            try:
                await trio.lowlevel.wait_readable(connection)
                data = connection.recv(_READ_BYTES)
            except BlockingIOError:
                continue
            except (OSError, trio.ClosedResourceError):
                return
            if not data:
                return
            try:
                self._connection.feed(data)
            except Exception as error:  # a flaw of ours must not crash the run: end the stream
                self._connection.goaway(Error.INTERNAL_ERROR)
                _Arrivals(self._arrive).broken(f"StatusCode.INTERNAL: {error!r}")
            self._write()

    def _write(self) -> None:
        """Write what the connection has to say, now; what the socket does not take, later."""
        data = self._connection.take_output()
        connection = self._socket
        if not data or connection is None:
            return  # nothing to say, or nobody to say it to (before the bot came, or after)
        if self._unsent:
            if len(self._unsent) + len(data) <= _UNSENT_CAP:
                self._unsent += data
            return
        try:
            written = connection.send(data)
        except BlockingIOError:
            written = 0
        except OSError:
            return  # the reader finds the connection gone
        if written < len(data):
            self._unsent += data[written:]
            if not self._flushing:
                self._flushing = True
                trio.lowlevel.spawn_system_task(self._flush, connection)

    async def _flush(self, connection: socket.socket) -> None:
        """Write what the socket did not take at once, as it takes it (a system task)."""
        try:
            while self._unsent:
                await trio.lowlevel.wait_writable(connection)
                with contextlib.suppress(BlockingIOError):
                    del self._unsent[: connection.send(self._unsent)]
        except (OSError, trio.ClosedResourceError):
            self._unsent.clear()
        finally:
            self._flushing = False

    async def _stop_gracefully(self, grace_s: float) -> None:
        self.end_stream()
        with trio.move_on_after(grace_s):
            while self._unsent and self._socket is not None:
                await trio.sleep(0.01)
        self._close()

    def _close(self, *, in_trio: bool = True) -> None:
        """Say goodbye on the connection (GOAWAY) and close it; out of trio only once its run
        is over, when no task is left to tell."""
        self._ended = self._stopped = True
        self._connection.end_stream()
        self._connection.goaway(Error.NO_ERROR)
        with contextlib.suppress(OSError):
            if self._socket is not None and not self._unsent:
                self._socket.send(self._connection.take_output())
        self._close_socket(in_trio=in_trio)
        self._close_listener(in_trio=in_trio)
        if in_trio:
            self._waiting.unpark_all()

    def _close_socket(self, *, in_trio: bool = True) -> None:
        connection, self._socket = self._socket, None
        if connection is not None:
            if in_trio:
                trio.lowlevel.notify_closing(connection)
            connection.close()

    def _close_listener(self, *, in_trio: bool = True) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            if in_trio:
                trio.lowlevel.notify_closing(listener)
            listener.close()
