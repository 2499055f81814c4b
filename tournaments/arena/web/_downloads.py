"""What the app serves as files: a match's log, the standings (JSON and CSV) and the static files
of the pages (from a fixed map held in memory: no path reaches the server's files)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tournaments.arena.privacy import redacted_log
from tournaments.arena.web._auth import api_author, bearer, viewer_of
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._filters import url_path
from tournaments.arena.web._front import served
from tournaments.arena.web._pages import peeked
from tournaments.arena.web._state import hold_for_mirror, owned_seats, web_of

__all__ = ["log_download", "standings_csv", "standings_json", "static"]


def log_download(request: Request) -> Response:
    """``/matches/{match_id}/log.jsonl``: a match's log, the fault evidence of the seats the
    viewer (by session or token) does not own emptied; held while its pair's other leg plays."""
    web = web_of(request)
    match_id = request.path_params["match_id"]
    store = web.service.reader()
    result = store.result(match_id)
    if result is None or not Path(result.log_path).is_file():
        raise Refused(404, "no log for this match")
    hold_for_mirror(store, match_id)
    author = viewer_of(request, store).author if bearer(request) is None else None
    if bearer(request) is not None:
        author = api_author(request, store, web.api)
    visible = owned_seats(store, result.seats, author)
    try:
        text = redacted_log(Path(result.log_path), visible)
    except (OSError, UnicodeDecodeError):
        raise Refused(404, "the log of this match cannot be read") from None
    return Response(
        text,
        media_type="application/x-ndjson",
        headers={"content-disposition": f'attachment; filename="{url_path(match_id)}.jsonl"'},
    )


_CSV_NAME: Final = {"content-disposition": 'attachment; filename="standings.csv"'}


async def standings_json(request: Request) -> Response:
    """``/standings.json``: the board's standings (from the published tree)."""
    page = peeked(request, lambda published: published.download("standings.json", peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_standings_json, request)


def _standings_json(request: Request) -> Response:
    web = web_of(request)
    if web.published is not None and (page := web.published.download("standings.json")):
        return served(request, page)
    standings = web.service.board.standings
    if standings is None:
        raise Refused(404, "no standings yet")
    return JSONResponse(standings.to_dict())


async def standings_csv(request: Request) -> Response:
    """``/standings.csv``: the board's standings, a row per bot (from the published tree)."""
    page = peeked(request, lambda published: published.download("standings.csv", peek=True))
    if page is not None:
        return served(request, page)
    return await run_in_threadpool(_standings_csv, request)


def _standings_csv(request: Request) -> Response:
    web = web_of(request)
    if web.published is not None and (page := web.published.download("standings.csv")):
        return served(request, page)
    standings = web.service.board.standings
    if standings is None:
        raise Refused(404, "no standings yet")
    return Response(standings.to_csv(), media_type="text/csv; charset=utf-8", headers=_CSV_NAME)


def static(request: Request) -> Response:
    """``/static/{name}``: one of the pages' style sheet and script."""
    found = web_of(request).static.get(request.path_params["name"])
    if found is None:
        raise Refused(404, "not found")
    content, kind = found
    return Response(content, media_type=kind, headers={"cache-control": "max-age=300"})
