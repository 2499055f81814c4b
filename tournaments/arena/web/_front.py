"""The app's front: a visitor's published pages answered straight from the tree, as nginx
answers the same files, before Starlette sees the request.

:class:`Front` is a plain ASGI layer. A ``GET`` or ``HEAD`` of a published path (the board, a
bot, a match, a replay, the standings) with no body and no session cookie is answered from the
page's precomputed head (:class:`Page`), from memory, else read from disk in a thread; anything
else (a session cookie, a form, the API, a page not published: a match still playing, a held
first leg) goes on to the app. A cookie is not checked here (that is a store lookup): the app
checks it, and serves the tree's page to a session that is not a live one.

:func:`answer` is what nginx (docs/arena.md's configuration, ``max_ranges 1``) answers for a
file: gzip when asked for (the ``.gz``), 304 when ``If-None-Match`` names the ETag and
``If-Modified-Since`` is exactly its date (each only if present, both if both are), 206 for one
byte range of the plain file (``If-Range`` honoured), 416 for a range past its end, and the
whole file for several ranges (nginx's ``max_ranges 1``: no multipart answers) or for any range
of the gzipped one. ``?seat=`` is read as nginx's ``$arg_seat`` reads it (:func:`query_arg`).
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from tournaments.arena.web._hardening import HEADERS
from tournaments.arena.web._tree import CACHE_CONTROL, LEADERBOARD, Head, Page

if TYPE_CHECKING:
    from tournaments.arena.web._publish import Published
    from tournaments.arena.web._state import Web

__all__ = ["Answer", "Front", "answer", "byte_range", "page_for", "query_arg", "served"]


Answer = tuple[int, Head, bytes]
"""A status, its headers and its body."""
_UNSATISFIABLE: Final = b"<html><body><h1>416 Requested Range Not Satisfiable</h1></body></html>\n"
_DATES: Final = ("%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y")
"""The dates nginx reads (RFC 1123, RFC 850, asctime)."""
_RANGE: Final = re.compile(r"(?:([0-9]+) *- *|-)([0-9]*)")
"""One range of a ``Range`` header, its spaces around stripped, as nginx reads it (no space
after a suffix range's ``-``). Nothing in it is tried two ways over a run of spaces (a pattern
with spaces at both ends took seconds over a long run of them)."""
_DIGITS: Final = 19
"""The most digits of a number in a range (more is past ``off_t``, as nginx checks: and Python
refuses to read more than 4,300)."""
_OFF_T: Final = 2**63 - 1


def served(request: Request, page: Page) -> Response:
    """A published page as :func:`answer` gives it, as a Starlette response."""
    status, head, body = answer(page, request.headers, request.method == "HEAD")
    response = Response(body, status)
    response.raw_headers = list(head)
    return response


def answer(page: Page, headers: Mapping[str, str], head_only: bool = False) -> Answer:
    """What nginx answers for ``page`` to a request with ``headers`` (no body: ``head_only``)."""
    packed = _takes_gzip(headers.get("accept-encoding", ""))
    status, head, body = _conditional(page, headers, packed)
    return status, head, b"" if head_only else body


def _conditional(page: Page, headers: Mapping[str, str], packed: bool) -> Answer:
    since, tags = headers.get("if-modified-since"), headers.get("if-none-match")
    if since is not None or tags is not None:
        etag = page.gz_etag if packed else page.etag
        dated = since is None or _date(since) == page.mtime
        if dated and (tags is None or _names(tags, etag)):
            return 304, page.gz_short_head if packed else page.short_head, b""
    if packed:
        return 200, page.gz_head, page.gz
    asked = headers.get("range")
    if asked is None or not _range_applies(page, headers.get("if-range")):
        return 200, page.plain_head, page.body
    found = byte_range(asked, len(page.body))
    if found is None:
        return 200, page.plain_head, page.body
    size = len(page.body)
    if isinstance(found, str):  # "unsatisfiable"
        return 416, _unsatisfiable_head(size), _UNSATISFIABLE
    start, end = found
    head = (
        (b"content-type", page.kind.encode()),
        (b"content-length", b"%d" % (end - start)),
        (b"content-range", b"bytes %d-%d/%d" % (start, end - 1, size)),
        *page.short_head,
    )
    return 206, head, page.body[start:end]


def _unsatisfiable_head(size: int) -> Head:
    named = {
        "content-type": "text/html; charset=utf-8",
        "content-length": str(len(_UNSATISFIABLE)),
        "content-range": f"bytes */{size}",
        "cache-control": CACHE_CONTROL,
        "vary": "Accept-Encoding",
        **HEADERS,
    }
    return tuple((name.encode(), value.encode()) for name, value in named.items())


def _takes_gzip(accepted: str) -> bool:
    """Whether ``Accept-Encoding`` takes gzip (a ``q=0`` refusing it)."""
    for part in accepted.lower().split(","):
        name, _, params = part.partition(";")
        if name.strip() == "gzip":
            quality = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(quality) > 0
            except ValueError:
                return False
    return False


def _names(given: str, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag``, as nginx reads it (weakly; ``*`` alone is any).

    >>> _names('"a", W/"b"', '"b"'), _names('"a", *', '"b"'), _names("*", '"b"')
    (True, False, True)
    """
    if given == "*":
        return True
    return any(part.strip(" \t").removeprefix("W/") == etag for part in given.split(","))


def _date(text: str) -> int | None:
    """An HTTP date in seconds (``None``: not one that nginx reads)."""
    for layout in _DATES:
        try:
            return calendar.timegm(time.strptime(text.strip(), layout))
        except ValueError:
            continue
    return None


def _range_applies(page: Page, condition: str | None) -> bool:
    """Whether ``If-Range`` (if any) lets a range be answered: the plain file's ETag exactly,
    or its date exactly."""
    if condition is None:
        return True
    if len(condition) >= 2 and condition.endswith('"'):
        return condition == page.etag
    return _date(condition) == page.mtime


def byte_range(value: str, size: int) -> tuple[int, int] | str | None:
    """The one byte range ``[start, end)`` of ``size`` bytes that a ``Range`` header asks for,
    read as nginx with ``max_ranges 1`` reads it: ``"unsatisfiable"`` (416), or ``None`` (the
    whole file: not ``bytes=``, several ranges, or a range from 0 of nothing).

    >>> byte_range("bytes=0-4", 35), byte_range("bytes=-4", 35), byte_range("bytes=30-", 35)
    ((0, 5), (31, 35), (30, 35))
    >>> byte_range("bytes=100-", 35), byte_range("bytes=0-1,3-4", 35), byte_range("items=1-", 35)
    ('unsatisfiable', None, None)
    """
    if len(value) < 7 or value[:6].lower() != "bytes=":
        return None
    found: list[tuple[int, int]] = []
    for part in value[6:].split(","):
        bounds = _bounds(part, size)
        if bounds is None:
            return "unsatisfiable"
        start, end = bounds
        if start < end:
            found.append((start, end))
            if len(found) > 1:
                return None
        elif start == 0:
            return None
    return found[0] if found else "unsatisfiable"


def _bounds(part: str, size: int) -> tuple[int, int] | None:
    """One range's ``[start, end)`` clipped to ``size`` (``None``: not a range)."""
    found = _RANGE.fullmatch(part.strip(" "))
    if found is None or (found.group(1) is None and not found.group(2)):
        return None
    if any(len((text or "").lstrip("0")) > _DIGITS for text in found.groups()):
        return None
    first, last = (None if text is None or text == "" else int(text) for text in found.groups())
    if max(first or 0, last or 0) > _OFF_T:
        return None
    if first is None:
        assert last is not None
        return (size - last if last < size else 0), size
    return first, size if last is None else min(last + 1, size)


def query_arg(query: bytes, name: bytes) -> str | None:
    """A query's first ``name=`` argument, its name in any case, its value as sent (not
    decoded), as nginx's ``$arg_name`` reads it (``None``: none; ``?seat`` without ``=`` is
    none).

    >>> query_arg(b"seat=0&seat=1", b"seat"), query_arg(b"x=1&SEAT=1", b"seat")
    ('0', '1')
    >>> query_arg(b"xseat=0", b"seat"), query_arg(b"seat=%30", b"seat"), query_arg(b"", b"seat")
    (None, '%30', None)
    """
    for part in query.split(b"&"):
        key, equals, value = part.partition(b"=")
        if equals and key.lower() == name:
            return value.decode("latin-1")
    return None


class Front:
    """ASGI: a visitor's published pages from the tree (see the module), the rest to ``app``."""

    def __init__(self, app: ASGIApp, web: Web) -> None:
        self.app = app
        self.web = web

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            headers = Headers(scope=scope)
            page = await page_for(self, scope["path"], scope["query_string"], headers)
            if page is not None:
                status, head, body = answer(page, headers, scope["method"] == "HEAD")
                await send({"type": "http.response.start", "status": status, "headers": head})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


async def page_for(front: Front, path: str, query: bytes, headers: Headers) -> Page | None:
    """The published page a ``GET`` or ``HEAD`` asks for, if the front answers it: no body, no
    session cookie, a path of the tree and a page there (``None``: the app answers)."""
    published = front.web.published
    if published is None or not _bare(headers):
        return None
    return await _page(published, path, query)


def _bare(headers: Headers) -> bool:
    """Whether a request has no body and no session cookie (any ``gin_session`` in any cookie
    header, however malformed: the app decides what it is)."""
    if headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
        return False
    return not any("gin_session" in cookie for cookie in headers.getlist("cookie"))


async def _page(published: Published, path: str, query: bytes) -> Page | None:
    """The published page at ``path`` (from memory, else from disk in a thread: the replays
    asked for can be more than memory holds); ``None``: not one, the app answers."""
    look = _route(published, path, query)
    if look is None:
        return None
    page = look(True)
    if page is not None:
        return page
    return await anyio.to_thread.run_sync(look, False)


def _route(published: Published, path: str, query: bytes) -> Callable[[bool], Page | None] | None:
    """How to look up the page of one of the tree's paths (its argument: from memory only),
    as the app's routes read the path (``None``: not one of them)."""
    if path == "/":
        return lambda peek: published.board(peek=peek)
    if path in ("/standings.json", "/standings.csv"):
        return lambda peek: published.download(path[1:], peek=peek)
    if path == "/api/leaderboard":
        return lambda peek: published.download(LEADERBOARD, peek=peek)
    kind, _, rest = path[1:].partition("/")
    if kind == "bots" and rest and "/" not in rest:
        return lambda peek: published.bot(rest, peek=peek)
    match_id, slash, view = rest.partition("/")
    if kind != "matches" or not match_id:
        return None
    if not slash:
        return lambda peek: published.match(match_id, peek=peek)
    seat = query_arg(query, b"seat")
    if view != "replay" or seat not in (None, "", "0", "1"):
        return None
    number = int(seat) if seat else None
    return lambda peek: published.replay(match_id, number, peek=peek)
