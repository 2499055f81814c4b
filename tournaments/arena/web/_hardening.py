"""The app's defences at its edge: a strict Content Security Policy and the usual security
headers on every response, and request bodies capped while they are read (413)."""

from __future__ import annotations

from contextlib import aclosing
from typing import Final
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tournaments.arena.web._errors import Refused

__all__ = ["CSP", "FORM_BYTES", "HEADERS", "REPLAY_CSP", "Hardened", "read_body", "read_form"]


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
    """The request's body, read no further than ``limit`` bytes.

    Raises:
        Refused: it is bigger (413), or its length is not a number (400).
    """
    length = request.headers.get("content-length")
    if length is not None:
        try:
            declared = int(length)
        except ValueError:
            raise Refused(400, "bad Content-Length") from None
        if declared > limit:
            raise Refused(413, f"request too large: at most {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async with aclosing(request.stream()) as stream:
        async for chunk in stream:
            size += len(chunk)
            if size > limit:
                raise Refused(413, f"request too large: at most {limit} bytes")
            chunks.append(chunk)
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
