"""The forms a browser posts: logging in and out, and retiring a bot of one's own.

Posts are ``async`` endpoints on the trio thread, through the service's own store. Each form's
CSRF token and Origin (or Referer) are checked before anything is done; logging in is limited per
client address.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from tournaments.arena.accounts import author_of
from tournaments.arena.service import ArenaRefusal
from tournaments.arena.web._auth import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SESSION_S,
    Viewer,
    client,
    client_key,
    open_session,
    session_digest,
    set_cookie,
    viewer_of,
)
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._filters import url_path
from tournaments.arena.web._hardening import read_form
from tournaments.arena.web._state import web_of

__all__ = ["login", "login_form", "logout", "retire_form"]


def login_form(request: Request) -> Response:
    """``GET /login``: the form, its CSRF token made of a nonce in a cookie of its own."""
    web = web_of(request)
    store = web.service.reader()
    viewer = viewer_of(request, store)
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    fresh = len(nonce) != 32
    if fresh:
        nonce = secrets.token_hex(16)
    response = web.page(
        "login.html", viewer, login_csrf=web.csrf.token("login:" + nonce), message=""
    )
    if fresh:
        set_cookie(request, response, LOGIN_COOKIE, nonce, 3600)
    return response


async def login(request: Request) -> Response:
    """``POST /login``: a session opened with a live token (401 and the form again without)."""
    web = web_of(request)
    address = client_key(client(request))
    web.failed_logins.check(address)  # an address guessing tokens: stopped before its body
    web.logins.take(address)
    form = await read_form(request)
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    web.csrf.check(request, form, "login:" + nonce if nonce else "")
    token = form.get("token", "").strip()
    author = author_of(web.service.store, token)
    if author is None:
        web.failed_logins.take(address)
        return web.page(
            "login.html",
            Viewer(),
            401,
            login_csrf=web.csrf.token("login:" + nonce),
            message="That token is not a live one.",
        )
    response = RedirectResponse("/", 303)
    session = open_session(web.service.store, author, token)
    set_cookie(request, response, SESSION_COOKIE, session, SESSION_S)
    return response


async def logout(request: Request) -> Response:
    """``POST /logout``: the session ended and its cookie deleted."""
    web = web_of(request)
    viewer = viewer_of(request, web.service.store)
    response = RedirectResponse("/", 303)
    if viewer.author is not None:  # a dead session has nothing to end: just the cookie
        form = await read_form(request)  # (nor a body to wait for)
        web.csrf.check(request, form, viewer.session)
        web.service.store.end_session(session_digest(viewer.session))
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


async def retire_form(request: Request) -> Response:
    """``POST /bots/{ident}/retire``: the logged-in author's bot taken off the ladder."""
    web = web_of(request)
    viewer = viewer_of(request, web.service.store)
    if viewer.author is None:  # before its body is read
        raise Refused(401, "log in first")
    form = await read_form(request)
    web.csrf.check(request, form, viewer.session)
    ident = request.path_params["ident"]
    try:
        web.service.retire(viewer.author, ident)
    except ArenaRefusal as refusal:
        raise Refused(refusal.status, str(refusal)) from None
    return RedirectResponse(f"/bots/{url_path(ident)}", 303)
