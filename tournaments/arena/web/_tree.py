"""The published tree: what a visitor reads, kept as files under ``<arena>/public`` (each with a
``.gz`` beside it, written atomically: a temporary file, then a rename), served by the app from
memory or disk and by any static server from the same files.

A file's ETag is the one nginx gives a static file, ``"<mtime>-<size>"`` in hex, of the file it
sends (the ``.gz`` for a client that takes gzip), so that the app and nginx answer alike. It is
strong because a path's mtime goes up by at least a second each time its bytes change (a file
rewritten within the second is dated a second later); a page rendered again to the same bytes
is not rewritten, and keeps its ETag.

Each page keeps the head of its answer in each encoding (the type, length, ETag, date, cache
policy, ``Vary``, the security headers and its path's own: a replay's policy, a download's name),
made once when the page is, so that answering it costs no header building.

A file that cannot be read, or whose ``.gz`` is not the file compressed, is no page: the app
renders it again. A tree written by other code (other templates: ``.stamp`` differs) is emptied
when the app starts; otherwise the temporary files of a writer killed mid-write (``.tmp-*``
older than :data:`TEMPORARY_S`) are swept then.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Final

from tournaments.arena.web._hardening import HEADERS, REPLAY_CSP

__all__ = [
    "CACHE_CONTROL",
    "KINDS",
    "LEADERBOARD",
    "MEMORY_BYTES",
    "PUBLIC",
    "SPARE_PAGES",
    "TEMPORARY_S",
    "Head",
    "Page",
    "Tree",
    "own_headers",
    "safe_segment",
    "stamped_files",
    "tree_stamp",
]


_log = logging.getLogger("gin.arena.web")
PUBLIC: Final = "public"
"""The tree's folder in the arena's home."""
LEADERBOARD: Final = "api/leaderboard.json"
"""``/api/leaderboard``'s file in the tree (written with the leaderboard)."""
MEMORY_BYTES: Final = 64 * 1024 * 1024
"""The most of the tree's bytes (both encodings) kept in memory (least recently used out)."""
KINDS: Final = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript",
}
"""The type of each file of the tree, by its suffix."""
LEVEL: Final = 6
"""gzip's level for the ``.gz`` files (zlib's default: 9 makes them 1% smaller, 3x slower)."""
TEMPORARY_S: Final = 300.0
"""How old a temporary file of the tree must be to be swept when the app starts (a younger one
may be another process's write in flight)."""
_TEMPORARY: Final = ".tmp-"
CACHE_CONTROL: Final = "no-cache"
"""Every published page: a browser may keep it but asks each time (a 304 when unchanged)."""
SPARE_PAGES: Final = 64
"""Pages the tree had no room for (an old match's, rendered when asked for) kept in memory, so
that asking for one again renders nothing and gets a 304."""
STRIPES: Final = 256
"""Locks a tree's paths share (by hash): a disk read and a put of one path never interleave."""
_SEGMENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@~+-]{0,199}")
_ARENA: Final = Path(__file__).parent.parent
_STAMPED: Final = (
    _ARENA / "templates",
    _ARENA / "static",
    _ARENA / "web",
    _ARENA.parent / "views",
)
_RENDERING: Final = (
    _ARENA / "privacy.py",
    _ARENA / "replays.py",
    _ARENA.parent.parent / "referee" / "bot_text.py",
)


def stamped_files() -> list[Path]:
    """The files whose bytes :func:`tree_stamp` digests (besides its ``sources``)."""
    return [
        file
        for folder in _STAMPED
        for file in sorted(folder.rglob("*"))
        if file.is_file() and "__pycache__" not in file.parts
    ] + list(_RENDERING)


def safe_segment(text: str) -> bool:
    """Whether a URL's path segment may name a file of the tree as it is (no ``/``, no
    ``..``, no leading dot; what ladder idents and match ids are made of).

    >>> safe_segment("alpha@1.0"), safe_segment("../x"), safe_segment(".stamp")
    (True, False, False)
    """
    return _SEGMENT.fullmatch(text) is not None and ".." not in text


def tree_stamp(*sources: Path) -> str:
    """A digest of what renders the tree: the templates, the static files, the code of the web
    app, the views and the privacy rules (a fix to redaction or escaping must not leave pages
    rendered before it in the tree), the referee's text filter, and ``sources``."""
    digest = hashlib.sha256()
    for file in [*stamped_files(), *sources]:
        digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


Head = tuple[tuple[bytes, bytes], ...]
"""An answer's headers as ASGI sends them."""


def own_headers(rel: str) -> dict[str, str]:
    """The headers of the file at ``rel`` besides every page's (as docs/arena.md's nginx
    configuration gives them): a replay's own policy, the CSV download's name.

    >>> own_headers("standings.csv")
    {'content-disposition': 'attachment; filename="standings.csv"'}
    """
    if rel == "standings.csv":
        return {"content-disposition": 'attachment; filename="standings.csv"'}
    if rel.startswith("matches/") and rel.count("/") == 2:
        return {"content-security-policy": REPLAY_CSP}
    return {}


@dataclass(frozen=True, slots=True)
class Page:
    """One file of the tree, both encodings, what it was rendered from, and its answer's head
    in each encoding (``own``: its path's own headers, :func:`own_headers`)."""

    body: bytes
    gz: bytes
    kind: str
    mtime: int
    tag: object = None
    """What it shows (a board's time and troubles), compared by the app; ``None``: read from
    disk, or final (a finished match)."""
    own: tuple[tuple[str, str], ...] = ()
    plain_head: Head = field(default=(), init=False, compare=False, repr=False)
    """The head of a 200 with ``body`` (nginx's ``Accept-Ranges`` with it)."""
    gz_head: Head = field(default=(), init=False, compare=False, repr=False)
    """The head of a 200 with ``gz``."""
    short_head: Head = field(default=(), init=False, compare=False, repr=False)
    """What every answer of the page says (a 304's, a 206's besides its range), plain."""
    gz_short_head: Head = field(default=(), init=False, compare=False, repr=False)
    """What every answer of the page says, gzipped."""

    def __post_init__(self) -> None:
        for name, packed in (("plain", False), ("gz", True)):
            short = self._short(packed)
            size = len(self.gz if packed else self.body)
            full = ((b"content-type", self.kind.encode()), (b"content-length", b"%d" % size))
            tail = ((b"content-encoding", b"gzip"),) if packed else ((b"accept-ranges", b"bytes"),)
            object.__setattr__(self, f"{name}_head", full + short + tail)
            object.__setattr__(self, "gz_short_head" if packed else "short_head", short)

    def _short(self, packed: bool) -> Head:
        own = dict(self.own)
        named = {
            "etag": self.gz_etag if packed else self.etag,
            "last-modified": formatdate(self.mtime, usegmt=True),
            "cache-control": CACHE_CONTROL,
            "vary": "Accept-Encoding",
            **HEADERS,
            **own,
        }
        return tuple((name.encode(), value.encode("latin-1")) for name, value in named.items())

    @property
    def etag(self) -> str:
        return _etag(self.mtime, len(self.body))

    @property
    def gz_etag(self) -> str:
        return _etag(self.mtime, len(self.gz))

    @property
    def size(self) -> int:
        return len(self.body) + len(self.gz)


def _etag(mtime: int, size: int) -> str:
    return f'"{mtime:x}-{size:x}"'


class Tree:
    """The files under ``root``, a bounded part of them in memory; safe across threads.

    A reader that misses memory reads the disk and keeps what it read under its path's lock
    (one of :data:`STRIPES`), which a put holds while it writes and keeps: a page read before a
    put can no longer be kept over the put's newer page (``reading``: a hook between the read and
    the keep, for the test that interleaves them)."""

    def __init__(self, root: Path, stamp: str) -> None:
        self.root = root
        self._memory: OrderedDict[str, Page] = OrderedDict()
        self._spare: OrderedDict[str, Page] = OrderedDict()
        """Pages answered but not in the tree (:meth:`unkept`), the last asked for at the end."""
        self._bytes = 0
        self._lock = threading.Lock()
        self._paths = [threading.Lock() for _ in range(STRIPES)]
        self.reading: Callable[[str], None] = _nothing
        if root.is_symlink() or (root.exists() and not root.is_dir()):
            root.unlink()  # not a tree of ours (rmtree would leave it, and mkdir then fail)
        marker = root / ".stamp"
        try:
            kept = marker.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            kept = ""
        if kept != stamp:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True, exist_ok=True)
            marker.write_text(stamp, encoding="ascii")
        else:
            _sweep(root, time.time() - TEMPORARY_S)

    def get(self, rel: str) -> Page | None:
        """The file at ``rel`` (from memory, else from disk; ``None``: none that can be read)."""
        page = self.peek(rel, touch=True)
        if page is not None:
            return page
        with self._path_lock(rel):
            return self._get_locked(rel)

    def peek(self, rel: str, *, touch: bool = False) -> Page | None:
        """The file at ``rel`` if it is in memory (never reads the disk: for the event loop;
        ``touch``: counted as used, for the least-recently-used order)."""
        with self._lock:
            page = self._memory.get(rel)
            if page is not None and touch:
                self._memory.move_to_end(rel)
            if page is None and (page := self._spare.get(rel)) is not None and touch:
                self._spare.move_to_end(rel)
            return page

    def put(self, rel: str, body: bytes, tag: object = None) -> Page:
        """Publish ``body`` at ``rel`` (unchanged bytes: the file stays as it is)."""
        with self._path_lock(rel):
            old = self._get_locked(rel)
            if old is not None and old.body == body:
                page = self._page(rel, old.body, old.gz, old.mtime, tag)
            else:
                try:
                    page = self._write(rel, body, tag, self._written_at(rel, old))
                except OSError as error:  # a full disk: served from memory, written next time
                    _log.warning("%s not written to the published tree: %s", rel, error)
                    packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
                    mtime = max(int(time.time()), 1 + (0 if old is None else old.mtime))
                    page = self._page(rel, body, packed, mtime, tag)
            self._keep(rel, page)
            return page

    def unkept(self, rel: str, body: bytes, tag: object = None) -> Page:
        """A page for ``rel`` that the tree has no room for: not written, but kept among the
        :data:`SPARE_PAGES` such pages asked for last (answered as if in the tree, its ETag
        the same while it is kept and its bytes are)."""
        with self._lock:
            old = self._spare.pop(rel, None)
        if old is not None and old.body == body:
            page = self._page(rel, old.body, old.gz, old.mtime, tag)
        else:
            packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
            mtime = max(int(time.time()), 1 + (0 if old is None else old.mtime))
            page = self._page(rel, body, packed, mtime, tag)
        with self._lock:
            self._spare[rel] = page
            while len(self._spare) > SPARE_PAGES:
                self._spare.popitem(last=False)
        return page

    def _path_lock(self, rel: str) -> threading.Lock:
        return self._paths[hash(rel) % STRIPES]

    def _get_locked(self, rel: str) -> Page | None:
        """:meth:`get`, its path's lock held (memory again: a put may have kept it meanwhile)."""
        page = self.peek(rel, touch=True)
        if page is not None:
            return page
        page = self._read(rel)
        self.reading(rel)
        if page is not None:
            self._keep(rel, page)
        return page

    def remove(self, rel: str) -> None:
        """Take the file at ``rel`` (and its ``.gz``) out of the tree, from memory and disk."""
        with self._lock:
            old = self._memory.pop(rel, None)
            self._bytes -= 0 if old is None else old.size
            self._spare.pop(rel, None)
        path = self.root / rel
        for file in (path, Path(f"{path}.gz")):
            file.unlink(missing_ok=True)

    def _keep(self, rel: str, page: Page) -> None:
        with self._lock:
            self._spare.pop(rel, None)  # in the tree now
            old = self._memory.pop(rel, None)
            self._bytes -= 0 if old is None else old.size
            self._memory[rel] = page
            self._bytes += page.size
            while self._bytes > MEMORY_BYTES and len(self._memory) > 1:
                _, dropped = self._memory.popitem(last=False)
                self._bytes -= dropped.size

    def _page(self, rel: str, body: bytes, packed: bytes, mtime: int, tag: object) -> Page:
        own = tuple(own_headers(rel).items())
        return Page(body, packed, KINDS[Path(rel).suffix], mtime, tag, own)

    def _read(self, rel: str) -> Page | None:
        path = self.root / rel
        try:
            with path.open("rb") as file:  # the time of the bytes read, not of a file since put
                mtime = int(os.fstat(file.fileno()).st_mtime)
                body = file.read()
            packed = Path(f"{path}.gz").read_bytes()
            if gzip.decompress(packed) != body:
                return None
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
            return None
        return self._page(rel, body, packed, mtime, None)

    def _written_at(self, rel: str, old: Page | None) -> int:
        """The time of the file at ``rel`` now, readable or not (0: none), so that a page put
        over it, in the same second and of the same size, still gets another ETag."""
        if old is not None:
            return old.mtime
        try:
            return int((self.root / rel).stat().st_mtime)
        except OSError:
            return 0

    def _write(self, rel: str, body: bytes, tag: object, before: int) -> Page:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        mtime = max(int(time.time()), before + 1)
        packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
        _write_atomically(Path(f"{path}.gz"), packed, mtime)
        _write_atomically(path, body, mtime)
        return self._page(rel, body, packed, mtime, tag)


def _nothing(rel: str) -> None:
    """The default :attr:`Tree.reading` hook."""


def _sweep(root: Path, before: float) -> None:
    """Remove the temporary files under ``root`` last written before ``before``."""
    for file in root.rglob(f"{_TEMPORARY}*"):
        try:
            if file.lstat().st_mtime < before:
                file.unlink()
        except OSError:  # gone meanwhile, or not ours to remove: left
            continue


def _write_atomically(path: Path, data: bytes, mtime: int) -> None:
    """``data`` at ``path`` by a rename: a reader sees the old file or the new, never half."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=_TEMPORARY)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.utime(temporary, (mtime, mtime))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
