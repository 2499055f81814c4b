"""Matches between bot folders on this machine: the glue the CLI, the conformance kit and the
league runner share.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path, PurePath

import trio

from protocol.manifest import IgnoreRule, Manifest, ignore_rule
from referee import bot_text
from referee.match import MatchConfig, MatchResult, play_match
from referee.matchlog import LogWriter, MatchLog, NullLog, stderr_path
from referee.records import LogRecord
from referee.remote import JailFactory, RemoteSeat
from referee.seats import Seat

Watcher = Callable[[LogRecord], None]
"""Called with each log record as it is written (a typed :data:`referee.records.LogRecord`),
for live displays, which follow the log as it is written."""


def bot_files(folder: Path) -> Iterator[Path]:
    """Everything in a bot folder that belongs to its code, in sorted order (caches, version
    control and what ``.ginignore`` names left out: ``protocol.manifest.ignore_rule``): what
    its hash covers, and what travels to a cluster's workers.

    One walk, depth first in name order (``sorted(folder.rglob("*"))``'s order), that never
    enters a left-out folder or a symlink, and passes over a folder it cannot list, as
    ``rglob`` does; each entry costs one check of the compiled rule."""
    yield from _kept_below(folder, PurePath(), ignore_rule(folder))


def _kept_below(folder: Path, relative: PurePath, rule: IgnoreRule) -> Iterator[Path]:
    try:
        with os.scandir(folder / relative) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        inside = relative / entry.name
        if rule.leaves_out(inside):
            continue
        yield folder / inside
        if _is_folder(entry):
            yield from _kept_below(folder, inside, rule)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """A folder, not a symlink to one; False for an entry that cannot be looked at."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def code_hash(folder: Path) -> str:
    """SHA-256 over a bot folder's files (relative path and content, in sorted order).

    Symlinks count by their target text, so the hash says exactly what the folder holds.
    """
    digest = hashlib.sha256()
    for path in bot_files(folder):
        relative = path.relative_to(folder).as_posix().encode()
        if path.is_symlink():
            digest.update(b"L" + relative + b"\0" + str(path.readlink()).encode() + b"\0")
        elif path.is_file():
            digest.update(b"F" + relative + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class WatchedLog:
    """A match log that also shows each record to a watcher."""

    def __init__(self, log: LogWriter, watcher: Watcher) -> None:
        self.log = log
        self.watcher = watcher

    def write(self, record: LogRecord, /) -> None:
        """Write the record, then show it."""
        self.log.write(record)
        self.watcher(record)

    def flush(self) -> None:
        """Flush the underlying log."""
        self.log.flush()

    def close(self) -> None:
        """Close the underlying log."""
        self.log.close()


def remote_seat(manifest: Manifest, jails: JailFactory, label: str) -> RemoteSeat:
    """A seat for a bot folder, with its code hash."""
    return RemoteSeat(manifest, jails, label, code_hash(manifest.folder))


async def play_folders(
    seats: tuple[Seat, Seat],
    config: MatchConfig,
    log_path: Path | None = None,
    watcher: Watcher | None = None,
    *,
    closing: trio.Nursery | None = None,
    on_closed: Callable[[], None] | None = None,
    gate: AbstractAsyncContextManager[object] | None = None,
) -> MatchResult:
    """Play one match, logging to ``log_path`` (if given) and showing records to ``watcher``;
    each bot's stderr is kept beside the log once its seat is closed (:func:`keep_stderr`).

    With ``closing``, a match that ended normally returns as soon as its log is complete and
    closed, and its seats close in that nursery (a worker's next match starts meanwhile);
    ``on_closed`` is called once they are closed and their stderr is kept, whether or not the
    close was deferred. ``gate``: the series begins inside it, once both bots are up (see
    :func:`referee.match.play_match`).
    """
    log: LogWriter = MatchLog(log_path) if log_path is not None else NullLog()
    handed: list[Callable[[], Awaitable[None]]] = []
    try:
        shown = WatchedLog(log, watcher) if watcher is not None else log
        later = handed.append if closing is not None else None
        return await play_match(seats, config, shown, close_later=later, gate=gate)
    finally:
        log.close()
        if handed and closing is not None:
            closing.start_soon(_close_then_keep, handed[0], seats, log_path, on_closed)
        else:
            _after_close(seats, log_path, on_closed)


async def _close_then_keep(
    close: Callable[[], Awaitable[None]],
    seats: tuple[Seat, Seat],
    log_path: Path | None,
    on_closed: Callable[[], None] | None,
) -> None:
    """A deferred close: the seats, then their stderr. It runs beside later matches, so a
    failure here is reported on stderr, never raised into them."""
    try:
        await close()
    except Exception as error:  # a teardown's failure must not end the next match
        print(f"warning: closing a match's seats failed: {error!r}", file=sys.stderr, flush=True)
    _after_close(seats, log_path, on_closed)


def _after_close(
    seats: tuple[Seat, Seat], log_path: Path | None, on_closed: Callable[[], None] | None
) -> None:
    if log_path is not None:
        keep_stderr(seats, log_path)
    if on_closed is not None:
        on_closed()


def keep_stderr(seats: tuple[Seat, Seat], log_path: Path) -> None:
    """Write each bot's stderr, as kept and escaped, to ``stderr_path(log_path, seat)``.

    A seat whose bot never ran has no file (a stale one of an earlier attempt goes). The stderr
    is a debugging aid beside the log, so a file that cannot be written is left out.
    """
    for index, seat in enumerate(seats):
        if not isinstance(seat, RemoteSeat):
            continue
        path = stderr_path(log_path, index)
        kept = seat.stderr_kept()
        with contextlib.suppress(OSError):
            if kept is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(bot_text.shown(kept, lines=True), encoding="utf-8")
