"""The JSON API of ``docs/arena.md``: uploads, submissions, retiring, a seat's stderr and the
leaderboard.

Every call is counted against a rate limit: its token's when it sends a live one, else its client
address's. Writes (an upload, retiring) are ``async`` endpoints on the trio thread, through the
service's own store; reads are plain endpoints, through :meth:`ArenaService.reader`.
"""

from __future__ import annotations

import json
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from protocol.bounded import JsonObject
from tournaments.arena import intake as intake_module
from tournaments.arena.board import board_json
from tournaments.arena.event import upload_note
from tournaments.arena.service import ArenaRefusal
from tournaments.arena.web._auth import api_author, bearer, client, viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._front import served
from tournaments.arena.web._hardening import FORM_BYTES, read_body
from tournaments.arena.web._state import stderr_text, web_of
from tournaments.arena.web._tree import LEADERBOARD
from tournaments.registry import parse_spec

__all__ = ["leaderboard_api", "retire_api", "stderr_api", "submission", "upload"]


async def upload(request: Request) -> Response:
    """``POST /api/bots``: a bot's gzip'd tar, queued for the intake (202, and where to ask)."""
    web = web_of(request)
    author = api_author(request, web.service.store, web.uploads)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in ("application/gzip", "application/octet-stream", "application/x-gzip"):
        raise Refused(415, "send the bot as a gzip'd tar (Content-Type: application/gzip)")
    data = await read_body(request, intake_module.MAX_UPLOAD_BYTES)
    try:
        submission = web.service.intake.receive(author, data)
    except intake_module.UploadRefused as refusal:
        raise Refused(refusal.status, str(refusal)) from None
    answer: JsonObject = {"id": submission, "state": "queued"}
    answer["url"] = f"/api/submissions/{submission}"
    note = upload_note(web.service.store, time.time())
    if note:
        answer["event"] = note
    return JSONResponse(answer, 202)


def submission(request: Request) -> Response:
    """``/api/submissions/{submission_id}``: an upload of one's own, and its checklist."""
    web = web_of(request)
    store = web.service.reader()
    author = api_author(request, store, web.api)
    found = store.submission(request.path_params["submission_id"])
    if found is None or found.author != author:
        raise Refused(404, "no such submission of yours")
    checklist = None if found.report is None else json.loads(found.report)
    return JSONResponse(
        {
            "id": found.id,
            "state": found.state.value,
            "bot": found.bot,
            "message": found.message,
            "checklist": checklist,
            "created_at": found.created_at,
            "finished_at": found.finished_at,
            "event": upload_note(store, found.finished_at or time.time()),
        }
    )


async def retire_api(request: Request) -> Response:
    """``POST /api/bots/{ident}/retire``: a bot of one's own taken off the ladder."""
    web = web_of(request)
    author = api_author(request, web.service.store, web.api)
    await read_body(request, FORM_BYTES)
    ident = request.path_params["ident"]
    try:
        entrant = web.service.retire(author, ident)
    except ArenaRefusal as refusal:
        raise Refused(refusal.status, str(refusal)) from None
    return JSONResponse({"bot": entrant.ident, "state": entrant.state.value})


def stderr_api(request: Request) -> Response:
    """``/api/matches/{match_id}/stderr/{seat}``: all of a seat's kept stderr, to the owner of
    its bot (by token, or by session for a page's link)."""
    web = web_of(request)
    store = web.service.reader()
    if bearer(request) is None:  # a page's link: the session's author
        author = viewer_of(request, store).author
        web.api.take("addr:" + client(request) if author is None else "author:" + author)
        if author is None:
            raise Refused(401, "log in, or send Authorization: Bearer TOKEN")
    else:
        author = api_author(request, store, web.api)
    seat_arg = request.path_params["seat"]
    if seat_arg not in ("0", "1"):
        raise Refused(404, "seat is 0 or 1")
    seat = int(seat_arg)
    result = store.result(request.path_params["match_id"])
    if result is None:
        raise Refused(404, "no result for this match")
    if store.owner(parse_spec(result.seats[seat])[0]) != author:
        raise Refused(403, "that seat's bot is not yours")
    text = stderr_text(result, seat, None)
    if text is None:
        raise Refused(404, "no stderr was kept for this seat")
    return PlainTextResponse(text, headers={"cache-control": "no-store"})


def leaderboard_api(request: Request) -> Response:
    """``/api/leaderboard``: the service's board as JSON (from the published tree; else made
    once per board)."""
    web = web_of(request)
    web.api.take("addr:" + client(request))
    if web.published is not None and (page := web.published.download(LEADERBOARD)):
        return served(request, page)
    board = web.service.board
    kept = web.board_json
    if kept is None or kept[0] is not board:  # made once per board
        kept = web.board_json = (board, board_json(board))
    return Response(kept[1], media_type="application/json")
