"""The app's defences at its edge: a strict Content Security Policy and the usual security
headers on every response, and request bodies capped while they are read (413), timed while
they are read (408: a body sent a byte at a time holds no connection for long), and a client
gone mid-body said in one line of the log, not a traceback."""

from __future__ import annotations

import logging
from contextlib import aclosing
from typing import Final
from urllib.parse import parse_qs

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tournaments.arena.web._errors import Refused

__all__ = [
    "BODY_GRACE_S",
    "BODY_MIN_RATE",
    "CSP",
    "FORM_BYTES",
    "HEADERS",
    "REPLAY_CSP",
    "Hardened",
    "body_deadline",
    "read_body",
    "read_form",
]

_log = logging.getLogger("gin.arena.web")


CSP: Final = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; form-action 'self'; "
    "base-uri 'none'"
)
"""The Content Security Policy of every page (the replay pages have their own)."""
REPLAY_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
"""The replay page's policy: its inline style and script, nothing loaded from anywhere."""
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "SAMEORIGIN",
    "cross-origin-opener-policy": "same-origin",
}
"""The security headers of every response (those it does not set itself)."""
FORM_BYTES: Final = 16 * 1024
"""The most a form post (or a bodiless API post) may carry."""
BODY_GRACE_S: Final = 10.0
BODY_MIN_RATE: Final = 64 * 1024
"""A request's body must be in within ``BODY_GRACE_S`` seconds plus its size (as declared, or
the most the endpoint takes) at ``BODY_MIN_RATE`` bytes a second: 10 s for a form, 138 s for
the largest upload (a slow phone line's 512 kbit/s). Slower is refused with 408 and the
connection let go: 800 clients sending a body a byte at a time held every connection for 60 s
before (issue 30)."""


def body_deadline(expected: int) -> float:
    """The seconds a body of ``expected`` bytes may take to arrive."""
    return BODY_GRACE_S + expected / BODY_MIN_RATE


class Hardened:
    """ASGI middleware: the security headers on every response that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {bytes(name).lower() for name, _ in headers}
                for name, value in HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_hardened)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, read no further than ``limit`` bytes and for no longer than
    :func:`body_deadline` of its declared length (or of ``limit``).

    Raises:
        Refused: it is bigger (413), its length is not a number (400), it came too slowly
            (408), or the client went away before it ended (400, said in one line of the log).
    """
    length = request.headers.get("content-length")
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            raise Refused(400, "bad Content-Length") from None
        if declared > limit:
            raise Refused(413, f"request too large: at most {limit} bytes")
    else:
        declared = limit
    chunks: list[bytes] = []
    size = 0
    deadline = body_deadline(declared)
    with anyio.move_on_after(deadline) as timer:
        try:
            async with aclosing(request.stream()) as stream:
                async for chunk in stream:
                    size += len(chunk)
                    if size > limit:
                        raise Refused(413, f"request too large: at most {limit} bytes")
                    chunks.append(chunk)
        except ClientDisconnect:
            _log.info("client gone after %d bytes of its request to %s", size, request.url.path)
            raise Refused(400, "the request ended before its body did") from None
    if timer.cancelled_caught:
        _log.info(
            "request body to %s too slow: %d bytes in %.0f s", request.url.path, size, deadline
        )
        raise Refused(408, f"request body too slow: not in within {deadline:.0f} s")
    return b"".join(chunks)


async def read_form(request: Request) -> dict[str, str]:
    """A small ``application/x-www-form-urlencoded`` form (first value of each field).

    Raises:
        Refused: not such a form (415), too big (413), not text (400).
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "expected a form (application/x-www-form-urlencoded)")
    body = await read_body(request, FORM_BYTES)
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=16, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "a form that cannot be read") from None
    return {name: values[0] for name, values in fields.items() if values}
