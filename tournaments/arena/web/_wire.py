"""The arena's HTTP/1.1 door: a visitor's published pages answered on the connection itself,
everything else handed, bytes and all, to Hypercorn.

Hypercorn costs more per request than the rest of the app together (a trivial ASGI app under it
answers about 1,700 requests a second on this 2-core machine; nginx 16,000 the board). So each
connection is read here first: a request whose head came whole in what was read, and is the
plainest kind (``GET`` or ``HEAD`` of an origin-form path, HTTP/1.1, one ``Host``, no body, no
``Upgrade`` or ``Expect``, no ``Connection`` but ``keep-alive``, no control characters, at most
``h11_max_incomplete_size`` bytes), of a published page (:class:`Front` decides, as it does for
Hypercorn: no session cookie, a page of the tree), is answered with :func:`answer`'s bytes, and
the connection read on (keep-alive, ``keep_alive_timeout`` between requests). The first request
that is anything else (a form, the API, a cookie, a page not published, a head cut in two, an
error) is left unread: the connection goes to Hypercorn's own connection handler with the bytes
read so far put back in front of it, and Hypercorn answers it and the rest of the connection
(its limits, timeouts and errors as before). Nothing is answered here that Hypercorn would not
answer alike (the tests run the whole web suite through this door).

It runs Hypercorn's worker loop (``hypercorn.trio.run.worker_serve``, pinned at 0.18.0) with its
connection handler wrapped: plain http only (no TLS, no QUIC, one process).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from email.utils import formatdate
from functools import partial
from typing import Final, cast
from urllib.parse import unquote

import trio
from hypercorn.config import Config
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState, LifespanState
from hypercorn.utils import ShutdownError, raise_shutdown, repr_socket_addr, wrap_app
from starlette.datastructures import Headers
from starlette.types import ASGIApp

from tournaments.arena.web._front import Front, answer, page_for

__all__ = ["Plain", "plain_request", "serve_door"]

_log = logging.getLogger("gin.arena.web")


_LINE: Final = re.compile(rb"(GET|HEAD) (/[!-~]*) HTTP/1\.1")
_FIELD: Final = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):([ -~\t\x80-\xff]*)")
"""A header line: its name, and its value with the spaces and tabs around it (stripped after:
a pattern that left them out of the value would backtrack over a value's runs of spaces, seconds
of the server's interpreter for one 64 KiB head)."""
_REFUSED: Final = frozenset({b"upgrade", b"expect", b"content-length", b"transfer-encoding"})
_CLOSE: Final = ((b"connection", b"close"),)
_REASONS: Final = {
    200: b"OK",
    206: b"Partial Content",
    304: b"Not Modified",
    416: b"Range Not Satisfiable",
}


class Plain:
    """A request of the plainest kind, as :func:`plain_request` read it."""

    __slots__ = ("headers", "method", "path", "query", "size")

    def __init__(self, method: str, path: str, query: bytes, headers: Headers, size: int) -> None:
        self.method, self.path, self.query, self.headers = method, path, query, headers
        self.size = size
        """The bytes of its head, the blank line with it."""


def plain_request(buffer: bytes | bytearray, limit: int) -> Plain | None:
    """The request at the start of ``buffer`` if it is of the plainest kind and whole (``None``:
    anything else, for Hypercorn).

    >>> plain_request(b"GET /bots/a%40b?seat=1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n", 65536).path
    '/bots/a@b'
    >>> plain_request(b"GET / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 0\\r\\n\\r\\n", 65536)
    """
    end = buffer.find(b"\r\n\r\n", 0, limit)
    if end < 0:
        return None
    lines = bytes(buffer[:end]).split(b"\r\n")
    line = _LINE.fullmatch(lines[0])
    if line is None:
        return None
    fields: list[tuple[bytes, bytes]] = []
    for text in lines[1:]:
        field = _FIELD.fullmatch(text)
        if field is None:
            return None
        name, value = field.group(1).lower(), field.group(2).strip(b" \t")
        if name in _REFUSED or (name == b"connection" and value.lower() != b"keep-alive"):
            return None
        fields.append((name, value))
    if sum(name == b"host" for name, _ in fields) != 1:
        return None
    target, _, query = line.group(2).partition(b"?")
    path = unquote(target.decode("ascii"))
    return Plain(line.group(1).decode(), path, query, Headers(raw=fields), end + 4)


def _wire(status: int, head: tuple[tuple[bytes, bytes], ...], body: bytes) -> bytes:
    lines = [b"HTTP/1.1 %d %s" % (status, _REASONS[status]), b"date: " + _date()]
    lines += [name + b": " + value for name, value in head]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


_DATE: list[tuple[int, bytes]] = [(0, b"")]


def _date() -> bytes:
    """Now as an HTTP date (made once a second)."""
    now = int(time.time())
    if _DATE[0][0] != now:
        _DATE[0] = (now, formatdate(now, usegmt=True).encode())
    return _DATE[0][1]


class _Replayed(trio.abc.HalfCloseableStream):
    """A connection with what was read of it put back in front (what Hypercorn is handed)."""

    def __init__(self, stream: trio.SocketStream, first: bytes) -> None:
        self._stream = stream
        self._first = first
        self.socket = stream.socket

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._first:
            data, self._first = self._first, b""
            await trio.lowlevel.checkpoint()
            return data
        return bytes(await self._stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Doors:
    """The connections read at the door: those waiting for a request (each its scope, cancelled
    when the server stops, as Hypercorn lets its idle connections go at once)."""

    def __init__(self) -> None:
        self.closing = False
        self.idle: set[trio.CancelScope] = set()

    def close(self) -> None:
        """The server stops: idle connections close now, and no request more is read."""
        self.closing = True
        for scope in self.idle:
            scope.cancel()


async def _connection(
    front: Front,
    config: Config,
    doors: _Doors,
    hand_off: Callable[[trio.abc.Stream], Awaitable[None]],
    stream: trio.SocketStream,
) -> None:
    """Answer a connection's plain requests for published pages, then hand it to Hypercorn at
    its first other request (closed after Hypercorn's ``keep_alive_max_requests`` answers)."""
    buffer = bytearray()
    limit = config.h11_max_incomplete_size
    answered = 0
    try:
        while True:
            if not buffer and not await _wait(stream, buffer, config, doors):
                await stream.aclose()  # gone, idle too long, or the server stops
                return
            request = plain_request(buffer, limit)
            page = (
                None
                if request is None or doors.closing
                else await page_for(front, request.path, request.query, request.headers)
            )
            if request is None or page is None:
                break
            status, head, body = answer(page, request.headers, request.method == "HEAD")
            del buffer[: request.size]
            answered += 1
            last = answered >= config.keep_alive_max_requests
            await stream.send_all(_wire(status, (*head, *_CLOSE) if last else head, body))
            if last:  # Hypercorn's most requests a connection: closed, as Hypercorn does
                await stream.aclose()
                return
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.aclose()
        return
    except Exception:  # a fault of ours: that connection closed, the server serves on
        _log.exception("the arena's door failed on a connection")
        await stream.aclose()
        return
    await hand_off(cast(trio.abc.Stream, _Replayed(stream, bytes(buffer))))


async def _wait(
    stream: trio.SocketStream, buffer: bytearray, config: Config, doors: _Doors
) -> bool:
    """Read the next bytes of an idle connection into ``buffer`` (``False``: none came in
    ``keep_alive_timeout``, the client closed, or the server stops)."""
    if doors.closing:
        return False
    with trio.move_on_after(config.keep_alive_timeout) as scope:
        doors.idle.add(scope)
        try:
            buffer += await stream.receive_some(config.h11_max_incomplete_size)
        finally:
            doors.idle.discard(scope)
    return bool(buffer) and not doors.closing


async def serve_door(
    app: ASGIApp,
    front: Front | None,
    config: Config,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]],
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` as ``hypercorn.trio.serve`` does, its connections read by this door first
    (``front``: what answers the published pages; ``None``: Hypercorn alone)."""
    wrapped = wrap_app(cast(object, app), config.wsgi_max_body_size, "asgi")  # type: ignore[arg-type]  # Starlette's ASGI types are not Hypercorn's
    state: LifespanState = {}
    lifespan = Lifespan(wrapped, config, state)
    context = WorkerContext(None)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as server_nursery:
            sockets = config.create_sockets()
            listeners = []
            for sock in sockets.insecure_sockets:
                sock.listen(config.backlog)
                listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
            binds = [
                f"http://{repr_socket_addr(s.family, s.getsockname())}"
                for s in sockets.insecure_sockets
            ]
            task_status.started(binds)
            hypercorn = partial(TCPServer, wrapped, config, context, ConnectionState(state.copy()))
            doors = _Doors()
            handler = (
                hypercorn
                if front is None
                else partial(_connection, front, config, doors, hypercorn)
            )
            try:
                async with trio.open_nursery(strict_exception_groups=True) as nursery:
                    nursery.start_soon(raise_shutdown, shutdown_trigger)
                    nursery.start_soon(raise_shutdown, context.terminate.wait)
                    nursery.start_soon(
                        partial(
                            trio.serve_listeners, handler, listeners, handler_nursery=server_nursery
                        )
                    )
                    await trio.sleep_forever()
            except BaseExceptionGroup as error:
                _, others = error.split((ShutdownError, KeyboardInterrupt))
                if others is not None:
                    raise others from None
            finally:
                doors.close()
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()
