"""The app's parts, kept in ``app.state.web`` for its endpoints: the service, the CSRF secret,
the templates, the static files, the limits and the caches (the replay pages, the leaderboard as
JSON and as a visitor's page)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from referee.bot_text import shown
from referee.matchlog import stderr_path
from tournaments.arena.board import Board
from tournaments.arena.privacy import redacted_replay
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore
from tournaments.arena.web._auth import (
    API_PER_MINUTE,
    FAILED_LOGINS_PER_MINUTE,
    LOGINS_PER_MINUTE,
    UPLOADS_PER_MINUTE,
    Buckets,
    Csrf,
    Streams,
    Viewer,
)
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._filters import bot_text, num, url_path, when
from tournaments.registry import parse_spec
from tournaments.stats.standings import Pairwise
from tournaments.store import ResultRow
from tournaments.views.replay_html import replay_html

if TYPE_CHECKING:
    from tournaments.arena.web._publish import Published

__all__ = ["HELD", "REPLAY_CACHE", "Web", "hold_for_mirror", "owned_seats", "stderr_text", "web_of"]


ARENA_DIR: Final = Path(__file__).parent.parent
"""The arena package's folder: its ``templates`` and ``static`` files."""
STATIC_FILES: Final = {"arena.css": "text/css; charset=utf-8", "live.js": "text/javascript"}
"""The static files served (a fixed map: no path reaches the server's files), by type."""
REPLAY_CACHE: Final = 128
"""Replay pages of finished matches kept in memory (least recently used out)."""


class Web:
    """The app's parts: the service, the secret, the templates, the limits, the replay cache."""

    def __init__(self, service: ArenaService) -> None:
        self.service = service
        self.csrf = Csrf(service.store.secret("web"))
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(ARENA_DIR / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.env.filters["when"] = when
        self.env.filters["path"] = url_path
        self.env.filters["bot"] = bot_text
        self.env.filters["num"] = num
        self.static = {
            name: ((ARENA_DIR / "static" / name).read_bytes(), kind)
            for name, kind in STATIC_FILES.items()
        }
        self.uploads = Buckets(UPLOADS_PER_MINUTE)
        self.api = Buckets(API_PER_MINUTE)
        self.logins = Buckets(LOGINS_PER_MINUTE)
        self.failed_logins = Buckets(FAILED_LOGINS_PER_MINUTE)
        self.streams = Streams()
        self._pairwise: tuple[Board | None, dict[str, list[Pairwise]]] = (None, {})
        self.board_json: tuple[Board, bytes] | None = None
        """``/api/leaderboard``'s body, for the board it shows."""
        self.published: Published | None = None
        """The published tree a visitor's pages come from (``None``: rendered per request)."""
        self._replays: OrderedDict[tuple[str, int | None, tuple[int, ...]], str] = OrderedDict()
        self._replay_lock = threading.Lock()

    def page(self, name: str, viewer: Viewer, status: int = 200, **context: Any) -> HTMLResponse:  # type: ignore[explicit-any]  # a template's context
        """A rendered page (autoescaped), with the troubles of the moment."""
        template = self.env.get_template(name)
        html = template.render(
            viewer=viewer.author,
            csrf=self.csrf.token(viewer.session) if viewer.author else "",
            troubles=self.troubles(),
            **context,
        )
        return HTMLResponse(html, status, headers={"cache-control": "no-store"})

    def troubles(self) -> tuple[str, ...]:
        """What the pages say is wrong now (the ladder stopped, the board is old)."""
        return tuple(t for t in (self.service.ladder_error, self.service.board_error) if t)

    def pairwise_of(self, board: Board, ident: str) -> list[Pairwise]:
        """A bot's lines against each opponent in a board's standings (indexed once a board)."""
        indexed, lines = self._pairwise
        if indexed is not board:
            lines = {}
            for pair in () if board.standings is None else board.standings.pairwise:
                lines.setdefault(pair.bot, []).append(pair)
            self._pairwise = (board, lines)
        return lines.get(ident, [])

    def replay(self, store: ArenaStore, match_id: str, seat: int | None, author: str | None) -> str:
        """A finished match's replay page for a viewer, the fault evidence of the seats that
        ``author`` does not own emptied (cached: a log never changes once its result is
        recorded).

        Raises:
            Refused: no such match, or not played yet (404).
        """
        result = store.result(match_id)
        if result is None:
            raise Refused(404, "no replay: this match has no result yet")
        hold_for_mirror(store, match_id)
        visible = owned_seats(store, result.seats, author)
        key = (match_id, seat, visible)
        with self._replay_lock:
            if key in self._replays:
                self._replays.move_to_end(key)
                return self._replays[key]
        html = replay_html(redacted_replay(Path(result.log_path), visible), seat)
        with self._replay_lock:
            self._replays[key] = html
            while len(self._replays) > REPLAY_CACHE:
                self._replays.popitem(last=False)
        return html


HELD: Final = (
    "held until the other leg of its pair, on the same deals, is played: its log would show "
    "that leg's cards"
)


def hold_for_mirror(store: ArenaStore, match_id: str) -> None:
    """Refuse what shows a match's deals (its log, its replay) while its pair's other leg,
    dealt the same cards with the seats swapped, is still to play or playing.

    Raises:
        Refused: it is held (404, saying so and why).
    """
    if store.mirror_pending(match_id):
        raise Refused(404, f"this match's log and replay are {HELD}")


def web_of(request: Request) -> Web:
    """The parts of the app serving a request."""
    web: Web = request.app.state.web
    return web


def owned_seats(store: ArenaStore, seats: tuple[str, str], author: str | None) -> tuple[int, ...]:
    """The seats whose bot ``author`` owns (whose fault evidence they may read)."""
    if author is None:
        return ()
    return tuple(seat for seat in (0, 1) if store.owner(parse_spec(seats[seat])[0]) == author)


def stderr_text(result: ResultRow, seat: int, limit: int | None) -> str | None:
    """A seat's kept stderr (already escaped by the referee; shown again for safety), or
    ``None`` when none was kept."""
    if not result.log_path:
        return None
    path = stderr_path(Path(result.log_path), seat)
    try:
        with path.open("rb") as file:
            data = file.read(-1 if limit is None else limit)
    except OSError:
        return None
    return shown(data.decode("utf-8", errors="replace"), lines=True)
