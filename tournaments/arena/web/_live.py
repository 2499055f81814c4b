"""The live page and its event stream (server-sent events of the ladder's pairs and matches).

A stream resumes after the last event its browser saw (``Last-Event-ID``), sends a comment every
:data:`PING_S` to keep its connection open, and counts against its client address's
:data:`~tournaments.arena.web._auth.STREAMS_PER_CLIENT` until it ends, however it ends.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any, Final

import trio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from tournaments.arena.service import MAX_LISTENERS, ArenaService, Event
from tournaments.arena.web._auth import client, viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._state import web_of

__all__ = ["PING_S", "events", "live_page"]


PING_S: Final = 15.0
"""How often the event stream sends a comment, to keep the connection open."""


class HeldStream(StreamingResponse):
    """A streaming response that calls ``release`` once it ends, however it ends."""

    def __init__(  # type: ignore[explicit-any]  # Starlette's response options
        self, content: AsyncIterator[bytes], release: Callable[[], None], **options: Any
    ) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


async def live_page(request: Request) -> Response:
    """``/live``: the matches playing now and the latest pairs."""
    web = web_of(request)
    viewer = viewer_of(request, web.service.store)
    pairs = [event for event in web.service.events.recent if event.kind == "pair"][::-1]
    return web.page("live.html", viewer, live=web.service.live(), pairs=pairs[:20], now=time.time())


async def events(request: Request) -> Response:
    """``/events``: the live page's event stream.

    Raises:
        Refused: the author or the visitor's address holds too many streams (429), visitors
            hold their share of all streams, or the service has too many listeners (503).
    """
    web = web_of(request)
    key = web.streams.hold(client(request), viewer_of(request, web.service.reader()).author)
    if web.service.events.listeners >= MAX_LISTENERS:
        web.streams.release(key)
        raise Refused(503, "too many live pages open: try again later")
    try:
        last = int(request.headers.get("last-event-id", "0"))
    except ValueError:
        last = 0
    return HeldStream(
        _stream(web.service, last),
        partial(web.streams.release, key),
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
    )


async def _stream(service: ArenaService, last: int) -> AsyncIterator[bytes]:
    """The events a live page has not seen (those after ``last``, none when it is 0), then each
    as it comes, with a ping whenever none has come for :data:`PING_S`."""
    async with service.events.listen() as channel:
        yield b": live\n\n"
        seen = last
        for event in list(service.events.recent):
            if last and event.id > seen:
                seen = event.id
                yield _sse(event)
        while True:
            with trio.move_on_after(PING_S) as scope:
                event = await channel.receive()
            if scope.cancelled_caught:
                yield b": ping\n\n"
            elif event.id > seen:
                seen = event.id
                yield _sse(event)


def _sse(event: Event) -> bytes:
    """An event as the stream sends it."""
    data = json.dumps(event.data, separators=(",", ":"))
    return f"event: {event.kind}\nid: {event.id}\ndata: {data}\n\n".encode()
