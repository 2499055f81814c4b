"""The bot registry: checked, immutable, content-addressed copies of submitted bot folders.

``<home>/bots/<name>/<version>-<hash12>/`` holds a read-only copy; the store has its row. A new
version of a name is kept beside the old ones; the same name and version with different code is
refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from protocol.manifest import MANIFEST, ManifestError, ignore_rule, load_manifest
from referee.conformance import CheckReport
from referee.local import code_hash
from tournaments.store import LOGS_DIR, BotRow, Store

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
        return self.home / "bots"

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

    ``checker`` runs the conformance kit (``None`` skips it: only for trusted sample bots in
    tests and the demo). Submitting the same code under the same version again is a no-op.

    Raises:
        RegistryError: the manifest is invalid, the check fails (``report`` holds the
            checklist), or the name and version are taken by different code.
    """
    try:
        manifest = load_manifest(folder)
    except ManifestError as error:
        raise RegistryError(str(error)) from None
    digest = code_hash(folder)
    existing = store.bot(manifest.name, manifest.version)
    if existing is not None:
        if existing.hash == digest:
            return existing
        raise RegistryError(
            f"{manifest.ident} is already submitted with different code (hash "
            f"{existing.hash[:12]}, yours {digest[:12]}): give the new code a new version"
        )
    if checker is not None:
        report = await checker(folder)
        if not report.passed:
            raise RegistryError(f"{manifest.ident} failed the conformance check", report)
    target = arena.bots_dir / manifest.name / f"{manifest.version}-{digest[:12]}"
    _copy_read_only(folder, target)
    row = BotRow(
        manifest.name,
        manifest.version,
        digest,
        target.resolve(),
        manifest.author,
        manifest.description,
        time.time(),
    )
    store.add_bot(row)
    return row


def _copy_read_only(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target, onerror=_make_writable)
    target.parent.mkdir(parents=True, exist_ok=True)
    ignored = ignore_rule(source)
    shutil.copytree(
        source,
        target,
        symlinks=True,
        ignore=lambda folder, names: {
            name for name in names if ignored(Path(folder).relative_to(source) / name)
        },
    )
    for path in sorted(target.rglob("*"), reverse=True):
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(function: Callable[[str], object], path: str, _info: object) -> None:
    Path(path).parent.chmod(0o700)
    function(path)
