"""The server side of one HTTP/2 connection that carries one gRPC stream, without I/O.

:class:`PlayConnection` takes the bytes a bot wrote (:meth:`PlayConnection.feed`), tells its
:class:`Listener` what they meant, and collects the bytes to write back (:meth:`take_output`);
the seat's channel (``referee.bridge``) moves the bytes, in the match's own trio thread. It speaks
just enough HTTP/2 (RFC 9113) for gRPC clients (grpcio, grpc-js, grpc-go): the prefaces, SETTINGS
and their acknowledgements, PING answers, flow control both ways (it acknowledges what it
received, and waits for the bot's window to send), header blocks (HPACK decoding with the
``hpack`` library; what it sends is never indexed, so it keeps no encoder state), gRPC's
length-prefixed messages, and gRPC's headers and trailers (``content-type: application/grpc``,
``grpc-status``, ``grpc-message``).

It admits one ``Play`` stream. It advertises a limit of one open stream, which gRPC clients
respect (a second ``Play`` waits in the client); a stream opened against that limit anyway is
refused (``REFUSED_STREAM``) unseen by the match, as gRPC's core did. A stream opened while none
is open (before ``Play``, or after it) is answered at once: ``UNIMPLEMENTED`` for another method,
``ALREADY_EXISTS`` for a second ``Play``, and the listener hears of it.

Everything a bot can make the referee do without sending a message costs it from a budget of
:data:`ABUSE_BUDGET` control frames per connection: each SETTINGS, PING, WINDOW_UPDATE, PRIORITY,
RST_STREAM, GOAWAY, CONTINUATION or unknown frame, each stream beside ``Play``, each DATA frame
on another stream, each DATA frame under 1 KiB of ``Play`` that completes no message, each
HEADERS frame on ``Play`` after the bot ended it (which ends the connection), and each message
(an honest bot sends one for each request, and a flood of copies costs it as frames do). The
budget earns :data:`EARNED_PER_MESSAGE` back for each message the referee sends (an honest client
answers a message with a PING and a window update or two, at most) and
:data:`EARNED_PER_SECOND` with time, up to the full budget again. When it runs out, or the bot
breaks HTTP/2's rules, the connection ends: a GOAWAY (``ENHANCE_YOUR_CALM`` for a spent budget),
then :meth:`Listener.abused`. So a flood of resets, pings or settings on the bot's own connection
costs the referee a few hundred frames' parsing, then ends that bot's stream.
"""

from __future__ import annotations

import enum
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Final, Protocol

import hpack

PREFACE: Final = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
MAX_FRAME: Final = 16384
"""The largest frame payload the referee takes (HTTP/2's default; it advertises no other)."""
RECEIVE_WINDOW: Final = 1 << 20
"""The flow-control window the referee gives the bot, for its stream and its connection."""
MAX_HEADER_BLOCK: Final = 16384
"""The largest header block (HEADERS and its CONTINUATIONs) a bot may send."""
ABUSE_BUDGET: Final = 200
EARNED_PER_MESSAGE: Final = 4
EARNED_PER_SECOND: Final = 10.0
MAX_PENDING_BYTES: Final = 8 << 20
"""Most the referee holds for a bot whose window is closed; beyond, its messages are dropped."""
_SMALL_DATA: Final = 1024
_MAX_WINDOW: Final = 2**31 - 1


class Frame(enum.IntEnum):
    """HTTP/2 frame types."""

    DATA = 0
    HEADERS = 1
    PRIORITY = 2
    RST_STREAM = 3
    SETTINGS = 4
    PUSH_PROMISE = 5
    PING = 6
    GOAWAY = 7
    WINDOW_UPDATE = 8
    CONTINUATION = 9


class Error(enum.IntEnum):
    """HTTP/2 error codes the referee sends."""

    NO_ERROR = 0
    PROTOCOL_ERROR = 1
    INTERNAL_ERROR = 2
    FLOW_CONTROL_ERROR = 3
    STREAM_CLOSED = 5
    FRAME_SIZE_ERROR = 6
    REFUSED_STREAM = 7
    CANCEL = 8
    COMPRESSION_ERROR = 9
    ENHANCE_YOUR_CALM = 11


END_STREAM: Final = 0x1
ACK: Final = 0x1
END_HEADERS: Final = 0x4
PADDED: Final = 0x8
PRIORITY_FLAG: Final = 0x20
_SETTING_HEADER_TABLE_SIZE: Final = 1
_SETTING_INITIAL_WINDOW_SIZE: Final = 4
_SETTING_MAX_FRAME_SIZE: Final = 5


class Status(enum.IntEnum):
    """The gRPC status codes the referee answers with."""

    OK = 0
    ALREADY_EXISTS = 6
    RESOURCE_EXHAUSTED = 8
    UNIMPLEMENTED = 12
    INTERNAL = 13


class Listener(Protocol):
    """What the connection tells the seat's channel (all calls in the channel's thread)."""

    def message(self, data: bytes) -> bool:
        """A whole message of ``Play`` (at most the channel's limit); False if it does not
        parse (the stream then ends with ``INTERNAL``)."""
        ...

    def oversized(self, size: int) -> None:
        """A message over the channel's limit, dropped unread."""
        ...

    def closed(self) -> None:
        """The bot closed its side of ``Play``."""
        ...

    def broken(self, detail: str) -> None:
        """``Play`` ended otherwise (reset, a message over the transport's limit, a lost
        connection)."""
        ...

    def second_stream(self) -> None:
        """Another ``Play`` stream, answered ``ALREADY_EXISTS``."""
        ...

    def unknown_method(self, path: str) -> None:
        """A stream to another method, answered ``UNIMPLEMENTED``."""
        ...

    def abused(self, detail: str) -> None:
        """The bot broke HTTP/2's rules or spent its budget: the connection is over."""
        ...


class EndConnectionError(Exception):
    """The bot broke HTTP/2's rules or spent its budget (internal: ends the connection)."""

    def __init__(self, code: Error, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame."""
    return (
        len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload
    )


def _integer(value: int, prefix_bits: int, first: int = 0) -> bytes:
    """An HPACK integer (RFC 7541, 5.1) in a first byte whose high bits are ``first``."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes((first | value,))
    out, value = bytearray((first | limit,)), value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def header_block(headers: list[tuple[bytes, bytes]]) -> bytes:
    """HPACK literals without indexing (so the client's table never changes), no Huffman."""
    block = bytearray()
    for name, value in headers:
        block += b"\x00" + _integer(len(name), 7) + name + _integer(len(value), 7) + value
    return bytes(block)


def _percent(text: str) -> bytes:
    """``grpc-message``'s percent-encoding."""
    return "".join(c if " " <= c <= "~" and c != "%" else f"%{ord(c):02X}" for c in text).encode()


_RESPONSE: Final = [(b":status", b"200"), (b"content-type", b"application/grpc")]


def trailers(status: Status, message: str = "") -> list[tuple[bytes, bytes]]:
    """gRPC's trailers."""
    fields = [(b"grpc-status", str(int(status)).encode())]
    return fields + ([(b"grpc-message", _percent(message))] if message else [])


class Budget:
    """The control frames a bot may still send: spent one by one, earned back by the messages
    the referee sends and by time, never above :data:`ABUSE_BUDGET`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.left = float(ABUSE_BUDGET)
        self.at = clock()
        self.spent: Counter[str] = Counter()

    def spend(self, what: str) -> None:
        """Spend one.

        Raises:
            EndConnectionError: the budget is spent (``ENHANCE_YOUR_CALM``).
        """
        self.spent[what] += 1
        if self.left < 1.0:
            self._refill()
        self.left -= 1.0
        if self.left < 0.0:
            counts = ", ".join(f"{count} {name}" for name, count in self.spent.most_common())
            raise EndConnectionError(
                Error.ENHANCE_YOUR_CALM, f"too many control frames and streams ({counts})"
            )

    def earn(self) -> None:
        """A message went to the bot."""
        self.left = min(float(ABUSE_BUDGET), self.left + EARNED_PER_MESSAGE)

    def _refill(self) -> None:
        now = self.clock()
        self.left = min(float(ABUSE_BUDGET), self.left + (now - self.at) * EARNED_PER_SECOND)
        self.at = now


class _Inbound:
    """gRPC's length-prefixed messages of ``Play`` as its DATA arrives: parsed up to
    ``keep_limit`` bytes, counted and dropped up to ``stream_limit``."""

    def __init__(self, keep_limit: int, stream_limit: int) -> None:
        self.keep_limit = keep_limit
        self.stream_limit = stream_limit
        self.buffer = bytearray()
        self.size = -1
        """The size of the message coming in, or -1 before its prefix."""
        self.skipping = 0
        """Bytes of an oversized message still to drop."""


class PlayConnection:
    """One bot's HTTP/2 connection, seen from the referee (see the module docstring)."""

    def __init__(
        self,
        listener: Listener,
        play_path: bytes,
        keep_limit: int,
        stream_limit: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.listener = listener
        self.play_path = play_path
        self.inbound = _Inbound(keep_limit, stream_limit)
        self.budget = Budget(clock)
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = MAX_HEADER_BLOCK
        self.output = bytearray()
        self.inbox = bytearray()
        self.preface_seen = False
        self.ended = False
        """The connection is over (GOAWAY sent, or lost): nothing more is read or sent."""
        self.last_stream = 0
        self.play = 0
        """The ``Play`` stream's id, once it came."""
        self.play_open = False
        """Whether ``Play`` may still carry the referee's messages."""
        self.play_reading = False
        """Whether the bot may still send on ``Play``."""
        self.headers_in: tuple[int, int, bytearray] | None = None
        """A header block coming in over CONTINUATIONs: its stream, its flags, its bytes."""
        self.peer_window = 65535
        """The bot's SETTINGS_INITIAL_WINDOW_SIZE."""
        self.peer_frame = MAX_FRAME
        self.send_connection = 65535
        self.send_stream = 0
        self.receive_connection = RECEIVE_WINDOW
        self.receive_stream = RECEIVE_WINDOW
        self.pending: deque[bytes] = deque()
        """Messages (prefixed) waiting for ``Play`` or for the bot's window."""
        self.pending_bytes = 0
        self.ending = False
        """The referee has ended its side: trailers go after what is pending."""
        self.table_resize = False
        """The bot shrank its HPACK table: the next block says the referee's is empty."""

    # --- the referee's side ----------------------------------------------------------------------

    def start(self) -> None:
        """The server's preface: its SETTINGS (one stream, a large window) and the connection's
        window raised to match."""
        settings = (3, 1), (_SETTING_INITIAL_WINDOW_SIZE, RECEIVE_WINDOW), (6, MAX_HEADER_BLOCK)
        payload = b"".join(
            key.to_bytes(2, "big") + value.to_bytes(4, "big") for key, value in settings
        )
        self.output += frame(Frame.SETTINGS, 0, 0, payload)
        self.output += frame(Frame.WINDOW_UPDATE, 0, 0, (RECEIVE_WINDOW - 65535).to_bytes(4, "big"))

    def take_output(self) -> bytes:
        """The bytes to write to the bot, taken."""
        data = bytes(self.output)
        self.output.clear()
        return data

    def accepting(self) -> bool:
        """Whether a message would still go (``Play`` and the referee's side not ended)."""
        return not (self.ended or self.ending or (self.play and not self.play_open))

    def send_message(self, data: bytes) -> bool:
        """Queue a serialized message on ``Play``; whether it is out (in :attr:`output`) now.
        A message is dropped once ``Play`` or the referee's side has ended, and beyond
        :data:`MAX_PENDING_BYTES` held."""
        if not self.accepting() or self.pending_bytes + len(data) > MAX_PENDING_BYTES:
            return False
        self.pending.append(b"\x00" + len(data).to_bytes(4, "big") + data)
        self.pending_bytes += len(data) + 5
        self._send_pending()
        return not self.pending

    def end_stream(self) -> None:
        """End the referee's side of ``Play`` (``grpc-status: 0``) after what is pending."""
        self.ending = True
        self._send_pending()

    def goaway(self, code: Error = Error.NO_ERROR, detail: str = "") -> None:
        """End the connection (nothing more is read or sent)."""
        if not self.ended:
            payload = self.last_stream.to_bytes(4, "big") + int(code).to_bytes(4, "big")
            self.output += frame(Frame.GOAWAY, 0, 0, payload + detail.encode()[:200])
            self.ended = True
            self.play_open = self.play_reading = False

    def lost(self) -> None:
        """The bot's end of the socket closed (or failed)."""
        if self.play_reading:
            self.play_reading = False
            self.listener.broken("StatusCode.CANCELLED: the bot's connection closed")
        self.play_open = False
        self.ended = True

    def _send_pending(self) -> None:
        if not self.play_open:
            return
        while self.pending:
            data = self.pending[0]
            size = min(len(data), self.peer_frame, self.send_connection, self.send_stream)
            if size <= 0:
                return
            self.output += frame(Frame.DATA, 0, self.play, data[:size])
            self.send_connection -= size
            self.send_stream -= size
            self.pending_bytes -= size
            if size == len(data):
                self.pending.popleft()
                self.budget.earn()
            else:
                self.pending[0] = data[size:]
        if self.ending:
            self._trailers(self.play, trailers(Status.OK))
            self.play_open = False

    def _headers(self, stream: int, fields: list[tuple[bytes, bytes]], flags: int) -> None:
        block = header_block(fields)
        if self.table_resize:
            block, self.table_resize = b"\x20" + block, False  # a dynamic table size of 0
        self.output += frame(Frame.HEADERS, flags | END_HEADERS, stream, block)

    def _trailers(self, stream: int, fields: list[tuple[bytes, bytes]]) -> None:
        self._headers(stream, fields, END_STREAM)

    def _end_play(self, status: Status, detail: str) -> None:
        """End ``Play`` from the referee's side at once (trailers, then a reset)."""
        if self.play_open:
            self._trailers(self.play, trailers(status, detail))
        self.output += frame(Frame.RST_STREAM, 0, self.play, int(Error.CANCEL).to_bytes(4, "big"))
        self.play_open = self.play_reading = False
        self.pending.clear()
        self.listener.broken(f"StatusCode.{status.name}: {detail}")

    # --- the bot's side --------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take bytes the bot wrote; a connection the bot broke ends (GOAWAY, ``abused``)."""
        if self.ended:
            return
        self.inbox += data
        try:
            self._frames()
        except EndConnectionError as end:
            reading = self.play_reading
            self.goaway(end.code, end.detail)
            self.inbox.clear()
            self.listener.abused(end.detail)
            if reading:
                self.listener.broken("StatusCode.CANCELLED: the referee closed the connection")

    def _frames(self) -> None:
        inbox = self.inbox
        if not self.preface_seen:
            if not PREFACE.startswith(bytes(inbox[:24])):
                raise EndConnectionError(Error.PROTOCOL_ERROR, "not an HTTP/2 connection preface")
            if len(inbox) < len(PREFACE):
                return
            del inbox[: len(PREFACE)]
            self.preface_seen = True
        offset = 0
        try:
            while len(inbox) - offset >= 9 and not self.ended:
                size = int.from_bytes(inbox[offset : offset + 3], "big")
                if size > MAX_FRAME:
                    raise EndConnectionError(Error.FRAME_SIZE_ERROR, f"a frame of {size} bytes")
                if len(inbox) - offset < 9 + size:
                    break
                kind, flags = inbox[offset + 3], inbox[offset + 4]
                stream = int.from_bytes(inbox[offset + 5 : offset + 9], "big") & 0x7FFFFFFF
                payload = bytes(inbox[offset + 9 : offset + 9 + size])
                offset += 9 + size
                self._frame(kind, flags, stream, payload)
        finally:
            del inbox[:offset]

    def _frame(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if self.headers_in is not None and kind != Frame.CONTINUATION:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "a header block left unfinished")
        if kind == Frame.DATA:
            self._data(flags, stream, payload)
        elif kind == Frame.HEADERS:
            self._headers_frame(flags, stream, payload)
        elif kind == Frame.CONTINUATION:
            self._continuation(flags, stream, payload)
        elif kind == Frame.SETTINGS:
            self._settings(flags, stream, payload)
        elif kind == Frame.PING:
            self._ping(flags, stream, payload)
        elif kind == Frame.WINDOW_UPDATE:
            self._window_update(stream, payload)
        elif kind == Frame.RST_STREAM:
            self._reset(stream, payload)
        elif kind == Frame.PUSH_PROMISE:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "a PUSH_PROMISE from a client")
        elif kind == Frame.GOAWAY:
            self.budget.spend("GOAWAY")
        elif kind == Frame.PRIORITY:
            self.budget.spend("PRIORITY")
        else:
            self.budget.spend("unknown frames")

    @staticmethod
    def _unpad(flags: int, payload: bytes) -> bytes:
        if not flags & PADDED:
            return payload
        if not payload or payload[0] >= len(payload):
            raise EndConnectionError(Error.PROTOCOL_ERROR, "padding longer than its frame")
        return payload[1 : len(payload) - payload[0]]

    def _data(self, flags: int, stream: int, payload: bytes) -> None:
        if stream == 0:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "DATA on stream 0")
        self.receive_connection -= len(payload)
        if self.receive_connection < 0:
            raise EndConnectionError(
                Error.FLOW_CONTROL_ERROR, "DATA beyond the connection's window"
            )
        if self.receive_connection < RECEIVE_WINDOW // 2:
            self._grant(0, RECEIVE_WINDOW - self.receive_connection)
            self.receive_connection = RECEIVE_WINDOW
        if stream != self.play or not self.play_reading:
            self.budget.spend("DATA on other streams")
            return
        self.receive_stream -= len(payload)
        if self.receive_stream < 0:
            raise EndConnectionError(Error.FLOW_CONTROL_ERROR, "DATA beyond the stream's window")
        if self.receive_stream < RECEIVE_WINDOW // 2:
            self._grant(stream, RECEIVE_WINDOW - self.receive_stream)
            self.receive_stream = RECEIVE_WINDOW
        completed = self._take(self._unpad(flags, payload))
        if not completed and len(payload) < _SMALL_DATA and not flags & END_STREAM:
            self.budget.spend("small DATA frames")
        if flags & END_STREAM and self.play_reading:
            self.play_reading = False
            self.listener.closed()

    def _grant(self, stream: int, increment: int) -> None:
        self.output += frame(Frame.WINDOW_UPDATE, 0, stream, increment.to_bytes(4, "big"))

    def _take(self, data: bytes) -> int:
        """Add ``Play``'s bytes; how many messages they completed."""
        inbound, completed = self.inbound, 0
        buffer = inbound.buffer
        buffer += data
        while self.play_reading:
            if inbound.skipping:
                dropped = min(inbound.skipping, len(buffer))
                del buffer[:dropped]
                inbound.skipping -= dropped
                if inbound.skipping:
                    break
                completed += 1
                self.listener.oversized(inbound.size)
                inbound.size = -1
            if inbound.size < 0:
                if len(buffer) < 5:
                    break
                if not self._prefix(buffer):
                    break
                continue
            if len(buffer) < inbound.size:
                break
            message = bytes(buffer[: inbound.size])
            del buffer[: inbound.size]
            inbound.size = -1
            completed += 1
            self.budget.spend("messages")  # earned back by each one the referee sends
            if not self.listener.message(message):
                self._end_play(Status.INTERNAL, "a message that does not parse")
        return completed

    def _prefix(self, buffer: bytearray) -> bool:
        """Read a message's 5-byte prefix; False if it ended ``Play``."""
        inbound = self.inbound
        compressed, size = buffer[0], int.from_bytes(buffer[1:5], "big")
        del buffer[:5]
        if compressed:
            self._end_play(Status.INTERNAL, "a compressed message (no compression is agreed)")
            return False
        if size > inbound.stream_limit:
            detail = f"a message of {size} bytes, over the limit of {inbound.stream_limit}"
            self._end_play(Status.RESOURCE_EXHAUSTED, detail)
            return False
        inbound.size = size
        if size > inbound.keep_limit:
            inbound.skipping = size
        return True

    def _headers_frame(self, flags: int, stream: int, payload: bytes) -> None:
        if stream == 0:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "HEADERS on stream 0")
        block = self._unpad(flags, payload)
        if flags & PRIORITY_FLAG:
            block = block[5:]
        if flags & END_HEADERS:
            self._header_block(stream, flags, block)
        else:
            self.headers_in = (stream, flags, bytearray(block))

    def _continuation(self, flags: int, stream: int, payload: bytes) -> None:
        if self.headers_in is None or self.headers_in[0] != stream:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "a CONTINUATION out of place")
        self.budget.spend("CONTINUATION")
        _, first_flags, block = self.headers_in
        block += payload
        if len(block) > MAX_HEADER_BLOCK:
            raise EndConnectionError(Error.ENHANCE_YOUR_CALM, "a header block over 16 KiB")
        if flags & END_HEADERS:
            self.headers_in = None
            self._header_block(stream, first_flags, bytes(block))

    def _header_block(self, stream: int, flags: int, block: bytes) -> None:
        try:
            fields = dict(self.decoder.decode(block, raw=True))
        except Exception as error:  # hpack's errors, of any kind: the bot's bad block
            raise EndConnectionError(
                Error.COMPRESSION_ERROR, f"a bad header block ({error})"
            ) from None
        if stream == self.play:
            self._play_trailers(flags)
        elif stream <= self.last_stream or stream % 2 == 0:
            raise EndConnectionError(Error.PROTOCOL_ERROR, f"stream {stream} out of order")
        else:
            self.last_stream = stream
            self._new_stream(stream, flags, fields)

    def _play_trailers(self, flags: int) -> None:
        if not flags & END_STREAM:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "headers in the middle of Play")
        if not self.play_reading:  # Play is half-closed by the bot: nothing more may come on it
            raise EndConnectionError(Error.STREAM_CLOSED, "headers after the end of Play")
        self.play_reading = False
        self.listener.closed()

    def _new_stream(self, stream: int, flags: int, fields: dict[bytes, bytes]) -> None:
        path = fields.get(b":path", b"")
        grpc = fields.get(b"content-type", b"").startswith(b"application/grpc")
        if self.play_open or self.play_reading:  # over the limit of one open stream
            self.budget.spend("streams beside Play")
            self.output += frame(
                Frame.RST_STREAM, 0, stream, int(Error.REFUSED_STREAM).to_bytes(4, "big")
            )
            return
        if path == self.play_path and grpc and not self.play:
            self._open_play(stream, flags)
            return
        self.budget.spend("streams beside Play")
        if path == self.play_path:
            self._refuse(stream, Status.ALREADY_EXISTS, "one Play stream per seat")
            self.listener.second_stream()
        else:
            self._refuse(stream, Status.UNIMPLEMENTED, "this socket serves Referee.Play only")
            self.listener.unknown_method(path.decode("utf-8", errors="replace")[:100])

    def _open_play(self, stream: int, flags: int) -> None:
        self.play, self.play_open, self.play_reading = stream, True, True
        self.send_stream = self.peer_window
        self._headers(stream, _RESPONSE, 0)
        if flags & END_STREAM:
            self.play_reading = False
            self.listener.closed()
        self._send_pending()

    def _refuse(self, stream: int, status: Status, detail: str) -> None:
        """Answer a stream at once, trailers only."""
        self._headers(stream, _RESPONSE + trailers(status, detail), END_STREAM)

    def _settings(self, flags: int, stream: int, payload: bytes) -> None:
        if stream != 0:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "SETTINGS on a stream")
        self.budget.spend("SETTINGS")
        if flags & ACK:
            return
        if len(payload) % 6:
            raise EndConnectionError(Error.FRAME_SIZE_ERROR, "a SETTINGS frame of odd size")
        for at in range(0, len(payload), 6):
            self._setting(
                int.from_bytes(payload[at : at + 2], "big"),
                int.from_bytes(payload[at + 2 : at + 6], "big"),
            )
        self.output += frame(Frame.SETTINGS, ACK, 0)
        self._send_pending()

    def _setting(self, key: int, value: int) -> None:
        if key == _SETTING_INITIAL_WINDOW_SIZE:
            if value > _MAX_WINDOW:
                raise EndConnectionError(Error.FLOW_CONTROL_ERROR, "a window over 2^31-1")
            self.send_stream += value - self.peer_window
            self.peer_window = value
        elif key == _SETTING_MAX_FRAME_SIZE:
            if not MAX_FRAME <= value < 1 << 24:
                raise EndConnectionError(Error.PROTOCOL_ERROR, f"a MAX_FRAME_SIZE of {value}")
            self.peer_frame = value
        elif key == _SETTING_HEADER_TABLE_SIZE and value < 4096:
            self.table_resize = True

    def _ping(self, flags: int, stream: int, payload: bytes) -> None:
        if stream != 0 or len(payload) != 8:
            raise EndConnectionError(Error.FRAME_SIZE_ERROR, "a malformed PING")
        self.budget.spend("PING")
        if not flags & ACK:
            self.output += frame(Frame.PING, ACK, 0, payload)

    def _window_update(self, stream: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise EndConnectionError(Error.FRAME_SIZE_ERROR, "a malformed WINDOW_UPDATE")
        self.budget.spend("WINDOW_UPDATE")
        increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
        if increment == 0:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0")
        if stream == 0:
            self.send_connection += increment
            if self.send_connection > _MAX_WINDOW:
                raise EndConnectionError(Error.FLOW_CONTROL_ERROR, "a window over 2^31-1")
        elif stream == self.play:
            self.send_stream += increment
        self._send_pending()

    def _reset(self, stream: int, payload: bytes) -> None:
        if stream == 0 or len(payload) != 4:
            raise EndConnectionError(Error.PROTOCOL_ERROR, "a malformed RST_STREAM")
        if stream == self.play and (self.play_open or self.play_reading):
            self.play_open = False
            self.pending.clear()
            if self.play_reading:
                self.play_reading = False
                code = int.from_bytes(payload, "big")
                self.listener.broken(
                    f"StatusCode.CANCELLED: the bot reset its stream (code {code})"
                )
            return
        self.budget.spend("RST_STREAM")
