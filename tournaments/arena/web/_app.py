"""The app: its routes, its error pages (never a traceback) and :func:`create_app`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from tournaments.arena.service import ArenaService
from tournaments.arena.web._api import (
    leaderboard_api,
    retire_api,
    stderr_api,
    submission,
    upload,
)
from tournaments.arena.web._downloads import log_download, standings_csv, standings_json, static
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._event import event_download, event_page
from tournaments.arena.web._forms import login, login_form, logout, retire_form
from tournaments.arena.web._front import Front
from tournaments.arena.web._hardening import HEADERS, Hardened
from tournaments.arena.web._live import events, live_page
from tournaments.arena.web._pages import bot_page, leaderboard, match_page, replay_page
from tournaments.arena.web._publish import Published
from tournaments.arena.web._state import Web, web_of

__all__ = ["ROUTES", "create_app"]


_log = logging.getLogger("gin.arena.web")

_GET: Final = ["GET"]
_POST: Final = ["POST"]
ROUTES: Final = (
    Route("/", leaderboard, methods=_GET),
    Route("/bots/{ident}", bot_page, methods=_GET),
    Route("/bots/{ident}/retire", retire_form, methods=_POST),
    Route("/matches/{match_id}", match_page, methods=_GET),
    Route("/matches/{match_id}/replay", replay_page, methods=_GET),
    Route("/matches/{match_id}/log.jsonl", log_download, methods=_GET),
    Route("/live", live_page, methods=_GET),
    Route("/events", events, methods=_GET),
    Route("/events/{name}", event_page, methods=_GET),
    Route("/events/{name}/event.tar.gz", event_download, methods=_GET),
    Route("/login", login_form, methods=_GET),
    Route("/login", login, methods=_POST),
    Route("/logout", logout, methods=_POST),
    Route("/standings.json", standings_json, methods=_GET),
    Route("/standings.csv", standings_csv, methods=_GET),
    Route("/static/{name}", static, methods=_GET),
    Route("/api/bots", upload, methods=_POST),
    Route("/api/submissions/{submission_id}", submission, methods=_GET),
    Route("/api/bots/{ident}/retire", retire_api, methods=_POST),
    Route("/api/matches/{match_id}/stderr/{seat}", stderr_api, methods=_GET),
    Route("/api/leaderboard", leaderboard_api, methods=_GET),
)
"""Every URL the app answers, and its endpoint."""


def create_app(service: ArenaService, *, publish: bool = True, front: bool = True) -> ASGIApp:
    """The ASGI app serving ``service``: a visitor's pages from the published tree under the
    arena's home, answered by :class:`Front` before Starlette (``publish=False``: rendered per
    request, as before the tree; ``front=False``: the tree's pages through Starlette, as before
    the front; both for the benchmarks)."""
    web = Web(service)
    if publish:
        web.published = service.publisher = Published(web)
    app = Starlette(
        debug=False,
        routes=ROUTES,
        middleware=[Middleware(Hardened)],
        exception_handlers=_HANDLERS,
    )
    app.state.web = web
    return Front(app, web) if front else app


# --- errors --------------------------------------------------------------------------------------


def _error_response(request: Request, status: int, message: str, retry: int | None) -> Response:
    """An error as JSON under ``/api/``, else as a page (``Retry-After`` with ``retry``)."""
    if request.url.path.startswith("/api/"):
        return _json_error(status, message, retry)
    headers = {"cache-control": "no-store"}
    if retry is not None:
        headers["retry-after"] = str(retry)
    template = web_of(request).env.get_template("error.html")
    html = template.render(viewer=None, csrf="", status=status, message=message)
    return HTMLResponse(html, status, headers=headers)


def _json_error(status: int, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    return JSONResponse({"error": message}, status, headers=headers)


async def _refused(request: Request, error: Exception) -> Response:
    assert isinstance(error, Refused)
    return _error_response(request, error.status, error.message, error.retry_after)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    words = {404: "not found", 405: "method not allowed"}
    return _error_response(
        request, error.status_code, words.get(error.status_code, "refused"), None
    )


async def _server_error(request: Request, error: Exception) -> Response:
    _log.error("error serving %s: %r", request.url.path, error, exc_info=error)
    response = _error_response(request, 500, "server error: it has been logged", None)
    for name, value in HEADERS.items():  # outside the middleware: set them here
        response.headers.setdefault(name, value)
    return response


_HANDLERS: Final[dict[Any, Callable[[Request, Exception], Awaitable[Response]]]] = {  # type: ignore[explicit-any]  # Starlette's handler keys (status codes and exception classes)
    Refused: _refused,
    HTTPException: _http_error,
    Exception: _server_error,
}
"""What answers each error an endpoint raises (the last, every other one)."""
