"""The bot registry: checked, immutable, content-addressed copies of submitted bot folders.

``<home>/bots/<name>/<version>-<hash12>/`` holds a read-only copy; the store has its row. A new
version of a name is kept beside the old ones; the same name and version with different code is
refused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from protocol.manifest import (
    MANIFEST,
    MAX_FILES,
    MAX_FOLDER_BYTES,
    MIB,
    FolderEntry,
    Manifest,
    ManifestError,
    folder_entries,
    load_manifest,
)
from referee.conformance import CheckReport
from referee.local import code_hash
from tournaments.store import BOTS_DIR, LOGS_DIR, BotRow, Store

__all__ = ["Arena", "Checker", "RegistryError", "parse_spec", "resolve", "submit"]


DEFAULT_HOME: Final = ".gin"
HOME_ENV: Final = "GIN_HOME"


class RegistryError(ValueError):
    """A submission or a lookup that cannot be done; the message says why."""

    def __init__(self, message: str, report: CheckReport | None = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True, slots=True)
class Arena:
    """Where everything lives: the store, the registry's copies, the match logs."""

    home: Path

    @classmethod
    def default(cls) -> Arena:
        """``$GIN_HOME``, or ``.gin`` in the current folder; but from inside a bot folder (a
        folder with a ``bot.toml``, or below one), ``.gin`` beside it: the arena never writes
        into a bot."""
        if HOME_ENV in os.environ:
            return cls(Path(os.environ[HOME_ENV]))
        here = Path.cwd()
        for folder in (here, *here.parents):
            if (folder / MANIFEST).is_file():
                return cls(folder.parent / DEFAULT_HOME)
        return cls(Path(DEFAULT_HOME))

    @property
    def store_path(self) -> Path:
        """The SQLite file."""
        return self.home / "arena.sqlite"

    @property
    def bots_dir(self) -> Path:
        """The registry's copies."""
        return self.home / BOTS_DIR

    def logs_dir(self, league: str) -> Path:
        """A league's match logs."""
        return self.home / LOGS_DIR / league

    def open_store(self) -> Store:
        """The store (created on first use, with the home).

        Raises:
            StoreUnusable: the home or the store cannot be used (the message names the path and
                says what to do).
        """
        return Store(self.store_path)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME@VERSION``.

    >>> parse_spec("greedy@1.0.0"), parse_spec("greedy")
    (('greedy', '1.0.0'), ('greedy', None))
    """
    name, _, version = spec.partition("@")
    return name, version or None


def resolve(store: Store, spec: str) -> BotRow:
    """The bot a league names (``NAME`` is the latest version).

    Raises:
        RegistryError: no such bot.
    """
    name, version = parse_spec(spec)
    row = store.bot(name, version)
    if row is None:
        known = ", ".join(sorted({bot.ident for bot in store.bots()})) or "none yet"
        raise RegistryError(
            f"no submitted bot {spec!r} (submitted: {known}); submit it with: gin bot submit DIR"
        )
    return row


Checker = Callable[[Path], Awaitable[CheckReport]]


async def submit(arena: Arena, store: Store, folder: Path, checker: Checker | None) -> BotRow:
    """Check a bot folder, then keep an immutable copy of it and register it.

    The folder is copied first, into a staging folder of the registry; everything after that
    judges the copy, never the folder: its manifest is read and checked again, the conformance
    kit runs it, and it is hashed and registered under that hash. So a folder changed while it
    is submitted cannot leave a copy that hashes otherwise than its row says. Only then is the
    copy renamed into place (atomically) and its row written; on any failure the staging folder
    is removed, so no half-made entry is left.

    ``checker`` runs the conformance kit (``None`` skips it: only for trusted sample bots in
    tests and the demo). Submitting the same code under the same version again is a no-op.

    Raises:
        RegistryError: the manifest is invalid, the folder holds what cannot be kept (or cannot
            be read), the check fails (``report`` holds the checklist), or the name and version
            are taken by different code.
    """
    try:
        manifest = load_manifest(folder)
    except ManifestError as error:
        raise RegistryError(str(error)) from None
    parent = arena.bots_dir / manifest.name
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=parent))
    except OSError as error:
        raise RegistryError(f"cannot write the registry at {parent}: {error.strerror}") from None
    try:
        return await _register(store, manifest, folder, staging, checker)
    finally:
        if staging.exists():
            shutil.rmtree(staging, onerror=_make_writable)
        with contextlib.suppress(OSError):  # a name's folder that was made for nothing
            parent.rmdir()


async def _register(
    store: Store, manifest: Manifest, folder: Path, staging: Path, checker: Checker | None
) -> BotRow:
    copy = staging  # renamed into place within the same folder: no write access to it needed
    _copy_bot(Path(os.path.abspath(folder)), copy)
    try:
        kept = load_manifest(copy)
    except ManifestError as error:
        raise RegistryError(
            f"{folder} changed while it was submitted; submit it again:\n"
            + "\n".join(f"  - {problem}" for problem in error.problems)
        ) from None
    if (kept.name, kept.version) != (manifest.name, manifest.version):
        raise RegistryError(f"{folder} changed while it was submitted; submit it again")
    digest = code_hash(copy)
    existing = store.bot(kept.name, kept.version)
    if existing is not None:
        if existing.hash == digest:
            return existing
        raise RegistryError(
            f"{kept.ident} is already submitted with different code (hash "
            f"{existing.hash[:12]}, yours {digest[:12]}): give the new code a new version"
        )
    copy.chmod(0o755)  # mkdtemp made it 0700; the sandbox's bot user must be able to enter it
    _make_read_only(copy)
    if checker is not None:
        report = await checker(copy)
        if not report.passed:
            raise RegistryError(f"{kept.ident} failed the conformance check", report)
    if code_hash(copy) != digest:
        raise RegistryError(f"{kept.ident}: the registry's copy changed while it was checked")
    target = staging.parent / f"{kept.version}-{digest[:12]}"
    if target.exists():  # left by a submission that died before its row was written
        shutil.rmtree(target, onerror=_make_writable)
    copy.rename(target)
    row = BotRow(
        kept.name,
        kept.version,
        digest,
        target.resolve(),
        kept.author,
        kept.description,
        time.time(),
    )
    store.add_bot(row)
    return row


def _copy_bot(source: Path, target: Path) -> None:
    """Copy what is part of a bot (as :func:`~protocol.manifest.folder_entries` lists it) from
    ``source`` to ``target``: folders, symlinks as links, regular files by their content.

    Nothing else is copied and nothing outside ``source`` is read: a file is opened without
    following links and without blocking, and must still be a regular file once open; the
    limits of the manifest check hold for what is copied, whatever the folder grew meanwhile.

    Raises:
        RegistryError: an entry cannot be read, is not a file, folder or symlink, or the copy
            would pass a limit.
    ``target`` exists and is empty.
    """
    budget = MAX_FOLDER_BYTES
    count = 0
    try:
        for entry in folder_entries(source):
            count += 1
            if count > MAX_FILES:
                raise RegistryError(f"{source} has more than {MAX_FILES} files")
            name = entry.path.relative_to(source)
            destination = target / name
            mode = entry.info.st_mode
            if stat.S_ISDIR(mode):
                destination.mkdir()
            elif stat.S_ISLNK(mode):
                destination.symlink_to(os.readlink(entry.name, dir_fd=entry.parent))
            elif stat.S_ISREG(mode):
                budget -= _copy_file(entry, destination, budget)
            else:
                raise RegistryError(
                    f"{name} in {source} is not a file, folder or symlink: it cannot be kept"
                )
    except OSError as error:
        where = error.filename or source
        raise RegistryError(f"cannot copy {where}: {error.strerror}") from None


def _copy_file(entry: FolderEntry, destination: Path, budget: int) -> int:
    """Copy one regular file, reading at most ``budget`` bytes of it; returns its size."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(entry.name, flags, dir_fd=entry.parent)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(entry.path)) from None
    with open(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RegistryError(f"{entry.path} is not a regular file: it cannot be kept")
        size = 0
        with destination.open("xb") as out:
            while chunk := handle.read(1 << 20):
                size += len(chunk)
                if size > budget:
                    raise RegistryError(
                        f"{entry.path.parent} grew past {MAX_FOLDER_BYTES // MIB} MiB while it "
                        "was copied"
                    )
                out.write(chunk)
        os.chmod(destination, stat.S_IMODE(info.st_mode))
    return size


def _make_read_only(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(function: Callable[[str], object], path: str, _info: object) -> None:
    Path(path).parent.chmod(0o700)
    function(path)
