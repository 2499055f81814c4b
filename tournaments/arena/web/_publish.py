"""What a visitor reads, published when it changes rather than rendered per request.

The tree (``_tree``) holds, under ``<arena>/public``:

- ``index.html`` (the leaderboard), ``standings.json``, ``standings.csv`` and
  ``api/leaderboard.json`` (what ``/api/leaderboard`` answers): written when a board is
  computed, before the board is shown (a page is never older than the board the app shows);
- ``bots/<ident>.html``: each bot on the board whose page shows something else than at the last
  board (its line as the page rounds it, its recent matches and their states, its versions,
  the troubles), written after each board is shown (the service counts that time in the
  board's refresh);
- ``matches/<id>.html`` and ``matches/<id>/replay.html``, ``replay-0.html``, ``replay-1.html``
  (the referee's view and each seat's): written when the match is recorded, the log walked
  through the rules once for the three; a first leg whose mirror leg is still to play is not
  published (its page, rendered per request, says it is held) until that leg is recorded. Only
  the :data:`MATCH_PAGES` matches recorded last are kept (the older ones' files are removed, so
  that the tree does not grow with the ladder); an older match's page asked for is rendered
  each time, and not kept (it never pushes a newer match out of the tree);
- ``static/arena.css``, ``static/live.js``.

Only what a visitor (no session) sees goes in: no stderr, no fault evidence, nothing of an
author's own. A page asked for and missing (a match recorded before the app started, a file
damaged) is rendered and published then; a page is rendered again when what it shows changed
since: the board (the leaderboard, the standings, a bot's page) or the troubles every page but a
replay says (the ladder stopped, the board is old).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import tournaments.views.replay_html as replay_module
from referee.replay import LogReadError
from tournaments.arena.board import Board, BoardRow, board_json, standings_documents
from tournaments.arena.ladder import LADDER
from tournaments.arena.replays import ReplayProcess, replay_views
from tournaments.arena.store import ArenaStore
from tournaments.arena.web._auth import Viewer
from tournaments.arena.web._errors import Refused
from tournaments.arena.web._filters import num
from tournaments.arena.web._pages import render_board, render_bot, render_match
from tournaments.arena.web._state import Web
from tournaments.arena.web._tree import LEADERBOARD, PUBLIC, Page, Tree, safe_segment, tree_stamp
from tournaments.store import MatchState

__all__ = ["MATCH_PAGES", "PAGES_SHARE", "REPLAYS", "Published"]


_log = logging.getLogger("gin.arena.web")
REPLAYS: Final = {None: "replay.html", 0: "replay-0.html", 1: "replay-1.html"}
"""A match's replay files, by the seat whose view each is (``None``: the referee's)."""
_STOP: Final = ("stop", ())
_OPEN: Final = (MatchState.PENDING.value, MatchState.RUNNING.value)
PAGES_SHARE: Final = 0.25
"""The most of the interpreter a board's bot pages take while they are rendered (a thousand
bots' pages after each board would otherwise halve the web's requests for seconds)."""
MATCH_PAGES: Final = 1000
"""The finished matches whose pages the tree keeps: those published last (about 560 MiB of
them, at 574 KiB a match of 13 to 18 hands, measured by ``benchmarks/publish_bench.py``)."""


class Published:
    """The visitor's pages of an app, in a :class:`Tree`, kept up to date by the service's
    calls (:meth:`board_computed`, :meth:`recorded`) and a publishing thread."""

    def __init__(self, web: Web) -> None:
        self.web = web
        stamp = tree_stamp(Path(replay_module.__file__), Path(__file__))
        self.tree = Tree(web.service.arena.home / PUBLIC, stamp)
        for name, (content, _) in web.static.items():
            self.tree.put(f"static/{name}", content)
        self._jobs: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self._replays = ReplayProcess()
        self._replays_lock = threading.Lock()
        """Where the publishing thread renders a recorded match's replays (not a request)."""
        self._closed = threading.Event()
        """Set by :meth:`close`: a board's bot pages stop at their next pause."""
        self._latest: Board | None = None
        """The newest board given to :meth:`board_computed` (set before its pages are)."""
        self._board_lock = threading.Lock()
        """One board's pages written at a time, never an older board's over a newer one's."""
        self._kept: OrderedDict[str, None] = OrderedDict()
        """The matches whose pages are in the tree, the one published last at the end."""
        self._kept_lock = threading.Lock()
        self._bot_pages: dict[str, object] = {}
        """What each bot's page in the tree shows (:func:`_bot_shows`), as last rendered."""
        self._last_match = 0
        """The last row of the ladder's matches :meth:`_matches_moved` has seen."""
        self._open: dict[str, tuple[str, tuple[str, str]]] = {}
        """The ladder's matches not finished at the last board: the state and seats of each."""
        self.bot_pages_rendered = 0
        """Bot pages rendered after boards so far (the others were unchanged)."""
        self._jobs.put(("kept", ()))  # the tree's matches, from disk, first
        self._thread = threading.Thread(target=self._work, name="gin-publish", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the publishing thread (after what it has to do), and a board's bot pages at
        their next pause."""
        self._closed.set()
        self._jobs.put(_STOP)
        self._stop_replays()

    # --- what the service calls ----------------------------------------------------------------

    def board_computed(self, board: Board) -> None:
        """A new board, about to be shown (called in a worker thread): its pages now, its bots'
        after, in the publishing thread."""
        self._latest = board
        self._publish_board(board)

    def board_shown(self, board: Board) -> float:
        """A board just shown (called in a worker thread, timed by the board's refresh): the
        pages of its bots whose pages it changes; the others keep their files, tagged with it.
        After each page rendered it pauses, so that it takes at most :data:`PAGES_SHARE` of the
        interpreter from the web's requests; the seconds paused (not counted as its work)."""
        if board is not self._latest:
            return 0.0  # a newer board's pages come
        store = self.web.service.reader()
        moved = self._matches_moved(store)
        versions: dict[str, list[str]] = {}
        for bot in store.bots():
            versions.setdefault(bot.name, []).append(bot.ident)
        troubles = self.web.troubles()
        paused = 0.0
        for row in board.rows:
            if safe_segment(row.ident):
                shows = _bot_shows(row, versions.get(row.name, []), troubles)
                began = time.perf_counter()
                if self._publish_bot_if_changed(store, row.ident, board, shows, row.ident in moved):
                    pause = (time.perf_counter() - began) * (1 / PAGES_SHARE - 1)
                    if self._closed.wait(pause):
                        break  # the server stops: the pages left wait for the next start
                    paused += pause
        return paused

    def _matches_moved(self, store: ArenaStore) -> set[str]:
        """The bots whose recent matches changed since the last board: in a match scheduled
        since, or in one not finished then whose state is another now."""
        last, now = self._last_match, dict[str, tuple[str, tuple[str, str]]]()
        moved: set[str] = set()
        for number, match_id, seat0, seat1, state in store.open_or_newer(LADDER, last):
            if number > last or self._open.get(match_id, (state,))[0] != state:
                moved.update((seat0, seat1))
            if state in _OPEN:
                now[match_id] = (state, (seat0, seat1))
            self._last_match = max(self._last_match, number)
        for match_id, (_, seats) in self._open.items():
            if match_id not in now:  # finished since
                moved.update(seats)
        self._open = now
        return moved

    def recorded(self, match_ids: Sequence[str]) -> None:
        """Matches just recorded (called on the trio thread: only queued)."""
        self._jobs.put(("matches", tuple(match_ids)))

    # --- what the app asks for -----------------------------------------------------------------

    def board(self, *, peek: bool = False) -> Page | None:
        """The leaderboard of the board shown now (``peek``: only if it is in memory, else
        ``None``; never blocks, for the event loop)."""
        board = self.web.service.board
        page = self.tree.peek("index.html") if peek else self.tree.get("index.html")
        if page is not None and self._fresh(page, board):
            return page
        if peek or self._stale(board):
            return None  # a newer board's pages are being written: render this one per request
        return self._publish_board(board)

    def bot(self, ident: str, *, peek: bool = False) -> Page | None:
        """A bot's page (``None``: not a bot on the board, rendered per request)."""
        board = self.web.service.board
        if not safe_segment(ident):
            return None
        page = self._get(f"bots/{ident}.html", peek)
        if page is not None and self._fresh(page, board):
            return page
        if peek or board.row(ident) is None:
            return None
        return self._publish_bot(self.web.service.reader(), ident, board)

    def download(self, name: str, *, peek: bool = False) -> Page | None:
        """``standings.json`` or ``standings.csv`` of the board shown now (``None``: none yet),
        or :data:`LEADERBOARD` (``/api/leaderboard``'s JSON, standings or not)."""
        board = self.web.service.board
        if board.standings is None and name != LEADERBOARD:
            return None
        page = self._get(name, peek)
        if page is not None and self._fresh(page, board):
            return page
        if peek or self._stale(board):
            return None
        self._publish_board(board)
        return self.tree.get(name)

    def match(self, match_id: str, *, peek: bool = False) -> Page | None:
        """A finished match's page (``None``: not final yet, or held: rendered per request)."""
        if not safe_segment(match_id):
            return None
        page = self._get(f"matches/{match_id}.html", peek)
        troubles = self.web.troubles()
        if page is not None and (page.tag == troubles or (page.tag is None and not troubles)):
            return page
        if peek:
            return None
        store = self.web.service.reader()
        return self._publish_match(store, match_id) if _final(store, match_id) else None

    def replay(self, match_id: str, seat: int | None, *, peek: bool = False) -> Page | None:
        """A finished match's replay from one view (``None``: not final, or not a log)."""
        if not safe_segment(match_id):
            return None
        page = self._get(f"matches/{match_id}/{REPLAYS[seat]}", peek)
        if page is not None or peek:
            return page
        store = self.web.service.reader()
        if not _final(store, match_id):
            return None
        return self._publish_replays(store, match_id).get(seat)

    # --- publishing ----------------------------------------------------------------------------

    def _get(self, rel: str, peek: bool) -> Page | None:
        return self.tree.peek(rel) if peek else self.tree.get(rel)

    def _tag(self, board: Board) -> tuple[float, tuple[str, ...]]:
        return (board.at, self.web.troubles())

    def _fresh(self, page: Page, board: Board) -> bool:
        """Whether a board's page shows ``board`` (one read from disk: until the first board)."""
        return page.tag == self._tag(board) or (page.tag is None and not board.at)

    def _stale(self, board: Board) -> bool:
        """Whether a newer board than ``board`` has come (its pages are written or being so):
        ``board``'s must not be written over them, where nginx would serve them on."""
        latest = self._latest
        return latest is not None and latest is not board and latest.at > board.at

    def _publish_board(self, board: Board) -> Page:
        with self._board_lock:
            newer = self.tree.get("index.html") if self._stale(board) else None
            if newer is not None:  # a newer board came while this one waited: it stands
                return newer
            done = self.tree.peek("index.html")
            if done is not None and done.tag == self._tag(board):  # written while this waited
                return done  # (requests that queued here for one board write it once, not each)
            tag = self._tag(board)  # before rendering: troubles that come meanwhile are not in it
            if board.standings is not None:
                documents = board.documents or standings_documents(board.standings)
                self.tree.put("standings.json", documents[0], tag)
                self.tree.put("standings.csv", documents[1], tag)
            self.tree.put(LEADERBOARD, board_json(board), tag)
            page = bytes(render_board(self.web, Viewer(), board).body)
            return self.tree.put("index.html", page, tag)

    def _publish_bot(self, store: ArenaStore, ident: str, board: Board) -> Page | None:
        tag = self._tag(board)
        try:
            page = render_bot(self.web, store, Viewer(), ident, board)
        except Refused:
            return None
        return self.tree.put(f"bots/{ident}.html", bytes(page.body), tag)

    def _publish_bot_if_changed(
        self, store: ArenaStore, ident: str, board: Board, shows: object, moved: bool
    ) -> bool:
        """A bot's page rendered if ``shows`` is not what it showed, or its matches ``moved``
        (``True``); else its file kept, tagged with ``board``."""
        rel = f"bots/{ident}.html"
        same = not moved and self._bot_pages.get(ident) == shows
        page = self.tree.get(rel) if same else None
        if page is not None:
            self.tree.put(rel, page.body, self._tag(board))  # the same bytes: only its tag
            return False
        self.bot_pages_rendered += 1
        if self._publish_bot(store, ident, board) is not None:
            self._bot_pages[ident] = shows
        return True

    def _publish_match(self, store: ArenaStore, match_id: str, *, asked: bool = True) -> Page:
        tag = self.web.troubles()
        body = bytes(render_match(self.web, store, Viewer(), match_id).body)
        rel = f"matches/{match_id}.html"
        if self._keep_match(match_id, asked):
            return self.tree.put(rel, body, tag)
        return self.tree.unkept(rel, body, tag)

    def _keep_match(self, match_id: str, asked: bool) -> bool:
        """Whether ``match_id``'s pages go in the tree (again): a match just recorded does, the
        oldest kept beyond :data:`MATCH_PAGES` leaving it; one ``asked`` for (its pages not
        in the tree) does only while the tree holds fewer, so that a visitor reading old
        matches never pushes the latest out (each old one is rendered when asked for)."""
        with self._kept_lock:
            if asked and match_id not in self._kept and len(self._kept) >= MATCH_PAGES:
                return False
            self._kept[match_id] = None
            if not asked:  # a page asked for again keeps its match's place
                self._kept.move_to_end(match_id)
            dropped = [self._kept.popitem(last=False)[0] for _ in range(self._overflow())]
        for old in dropped:
            self._remove_match(old)
        return True

    def _overflow(self) -> int:
        return max(0, len(self._kept) - MATCH_PAGES)

    def _remove_match(self, match_id: str) -> None:
        self.tree.remove(f"matches/{match_id}.html")
        for name in REPLAYS.values():
            self.tree.remove(f"matches/{match_id}/{name}")
        with contextlib.suppress(OSError):  # none, or a file being written there again
            (self.tree.root / "matches" / match_id).rmdir()

    def _read_kept(self) -> None:
        """The matches the tree holds at the start, oldest first (by their files' times), and
        the oldest beyond :data:`MATCH_PAGES` removed."""
        found: dict[str, float] = {}
        try:
            entries = list(os.scandir(self.tree.root / "matches"))
        except OSError:  # no match published yet
            entries = []
        for entry in entries:
            match_id = entry.name.removesuffix(".html")
            if safe_segment(match_id) and not entry.name.endswith(".gz"):
                try:
                    at = entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue
                found[match_id] = max(at, found.get(match_id, at))
        with self._kept_lock:
            for match_id in sorted(found, key=found.__getitem__, reverse=True):
                if match_id not in self._kept:  # published since the start: newer
                    self._kept[match_id] = None
                    self._kept.move_to_end(match_id, last=False)
            dropped = [self._kept.popitem(last=False)[0] for _ in range(self._overflow())]
        for old in dropped:
            self._remove_match(old)

    def _publish_replays(
        self, store: ArenaStore, match_id: str, *, asked: bool = True
    ) -> dict[int | None, Page]:
        """The three views of a match's replay, from one walk of its log through the rules
        (none: its log cannot be read)."""
        result = store.result(match_id)
        if result is None:
            return {}
        try:
            views = self._views(Path(result.log_path), asked)
        except (OSError, UnicodeDecodeError, LogReadError, RuntimeError) as error:
            _log.warning("replay of %s not published: %s", match_id, error)
            return {}
        keep = self.tree.put if self._keep_match(match_id, asked) else self.tree.unkept
        return {
            seat: keep(f"matches/{match_id}/{name}", views[seat], None)
            for seat, name in REPLAYS.items()
        }

    def _work(self) -> None:
        """The publishing thread: each job in turn."""
        while True:
            kind, what = self._jobs.get()
            try:
                if kind == "stop":
                    self._stop_replays()
                    return
                if kind == "kept":
                    self._read_kept()
                    continue
                store = self.web.service.reader()
                if kind == "matches" and isinstance(what, tuple):
                    self._publish_finished(store, [str(match_id) for match_id in what])
            except Exception:  # a damaged row, a full disk: the next request renders it
                _log.exception("publishing the arena's pages failed")

    def _views(self, log_path: Path, asked: bool) -> dict[int | None, bytes]:
        """A replay's views: a recorded match's in the replays' process (the publishing thread
        never holds the web's interpreter for them), a page asked for here."""
        if asked:
            return replay_views(log_path)
        with self._replays_lock:
            return self._replays.views(log_path)

    def _stop_replays(self) -> None:
        with self._replays_lock:
            self._replays.stop()

    def _publish_finished(self, store: ArenaStore, match_ids: list[str]) -> None:
        for match_id in match_ids:
            if safe_segment(match_id) and _final(store, match_id):
                self._publish_match(store, match_id, asked=False)
                self._publish_replays(store, match_id, asked=False)


def _bot_shows(row: BoardRow, versions: list[str], troubles: tuple[str, ...]) -> object:
    """What a bot's page shows of a board, as the page writes it, without rendering it: its
    line (its rating plot gets a point, and its lines against each opponent change, only with
    its series), its versions, the troubles; its recent matches and their faults are told
    apart (:meth:`Published._matches_moved`)."""
    line = (row.state, row.reason, row.author, row.series, f"{row.score:.3f}", row.faults)
    rating = (num(row.rating), num(row.low), num(row.high))
    return (line, rating, versions, troubles)


def _final(store: ArenaStore, match_id: str) -> bool:
    """Whether a match's pages are final: it has its result, and no mirror leg to wait for."""
    return store.result(match_id) is not None and not store.mirror_pending(match_id)
