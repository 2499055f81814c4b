"""The published tree: what a visitor reads, kept as files under ``<arena>/public`` (each with a
``.gz`` beside it, written atomically: a temporary file, then a rename), served by the app from
memory or disk and by any static server from the same files.

A file's ETag is the one nginx gives a static file, ``"<mtime>-<size>"`` in hex, of the file it
sends (the ``.gz`` for a client that takes gzip), so that the app and nginx answer alike. It is
strong because a path's mtime goes up by at least a second each time its bytes change (a file
rewritten within the second is dated a second later); a page rendered again to the same bytes
is not rewritten, and keeps its ETag.

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
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

__all__ = [
    "KINDS",
    "MEMORY_BYTES",
    "PUBLIC",
    "TEMPORARY_S",
    "Page",
    "Tree",
    "safe_segment",
    "served",
    "stamped_files",
    "tree_stamp",
]


_log = logging.getLogger("gin.arena.web")
PUBLIC: Final = "public"
"""The tree's folder in the arena's home."""
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
_SEGMENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@~+-]{0,199}")
_ARENA: Final = Path(__file__).parent.parent
_STAMPED: Final = (
    _ARENA / "templates",
    _ARENA / "static",
    _ARENA / "web",
    _ARENA.parent / "views",
)
_RENDERING: Final = (_ARENA / "privacy.py", _ARENA.parent.parent / "referee" / "bot_text.py")


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


@dataclass(frozen=True, slots=True)
class Page:
    """One file of the tree, both encodings, and what it was rendered from."""

    body: bytes
    gz: bytes
    kind: str
    mtime: int
    tag: object = None
    """What it shows (a board's time and troubles), compared by the app; ``None``: read from
    disk, or final (a finished match)."""

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
    """The files under ``root``, a bounded part of them in memory; safe across threads."""

    def __init__(self, root: Path, stamp: str) -> None:
        self.root = root
        self._memory: OrderedDict[str, Page] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
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
        with self._lock:
            page = self._memory.get(rel)
            if page is not None:
                self._memory.move_to_end(rel)
                return page
        page = self._read(rel)
        if page is not None:
            self._keep(rel, page)
        return page

    def peek(self, rel: str) -> Page | None:
        """The file at ``rel`` if it is in memory (never reads the disk: for the event loop)."""
        with self._lock:
            return self._memory.get(rel)

    def put(self, rel: str, body: bytes, tag: object = None) -> Page:
        """Publish ``body`` at ``rel`` (unchanged bytes: the file stays as it is)."""
        old = self.get(rel)
        if old is not None and old.body == body:
            page = Page(old.body, old.gz, old.kind, old.mtime, tag)
        else:
            try:
                page = self._write(rel, body, tag, self._written_at(rel, old))
            except OSError as error:  # a full disk: served from memory, written next time
                _log.warning("%s not written to the published tree: %s", rel, error)
                packed = gzip.compress(body, compresslevel=LEVEL, mtime=0)
                mtime = max(int(time.time()), 1 + (0 if old is None else old.mtime))
                page = Page(body, packed, KINDS[Path(rel).suffix], mtime, tag)
        self._keep(rel, page)
        return page

    def remove(self, rel: str) -> None:
        """Take the file at ``rel`` (and its ``.gz``) out of the tree, from memory and disk."""
        with self._lock:
            old = self._memory.pop(rel, None)
            self._bytes -= 0 if old is None else old.size
        path = self.root / rel
        for file in (path, Path(f"{path}.gz")):
            file.unlink(missing_ok=True)

    def _keep(self, rel: str, page: Page) -> None:
        with self._lock:
            old = self._memory.pop(rel, None)
            self._bytes -= 0 if old is None else old.size
            self._memory[rel] = page
            self._bytes += page.size
            while self._bytes > MEMORY_BYTES and len(self._memory) > 1:
                _, dropped = self._memory.popitem(last=False)
                self._bytes -= dropped.size

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
        return Page(body, packed, KINDS[path.suffix], mtime)

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
        return Page(body, packed, KINDS[path.suffix], mtime, tag)


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


def _takes_gzip(request: Request) -> bool:
    """Whether the client accepts gzip (``Accept-Encoding``, a ``q=0`` refusing it)."""
    for part in request.headers.get("accept-encoding", "").lower().split(","):
        name, _, params = part.partition(";")
        if name.strip() == "gzip":
            quality = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(quality) > 0
            except ValueError:
                return False
    return False


def _matches(request: Request, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weak comparison, as RFC 9110 asks)."""
    given = request.headers.get("if-none-match")
    if given is None:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in given.split(",")]
    return "*" in tags or etag in tags


def served(request: Request, page: Page, headers: dict[str, str] | None = None) -> Response:
    """A published page as the request asks for it: gzipped if it takes gzip, 304 if it holds
    the ETag already; ``headers`` added (a replay's own policy, a download's name)."""
    packed = _takes_gzip(request)
    etag = page.gz_etag if packed else page.etag
    head = {
        "etag": etag,
        "last-modified": formatdate(page.mtime, usegmt=True),
        "cache-control": CACHE_CONTROL,
        "vary": "Accept-Encoding",
        **(headers or {}),
    }
    if _matches(request, etag):
        return Response(status_code=304, headers=head)
    if packed:
        head["content-encoding"] = "gzip"
    return Response(page.gz if packed else page.body, headers=head, media_type=page.kind)
