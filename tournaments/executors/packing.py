"""A bot's code by value: a deterministic tar of its folder (what ``code_hash`` covers), and its
unpacking into a cache that a folder enters only once it hashes to the registry's hash.

The Dask executor carries bots to its workers this way; the match process hashes the folder
again before it plays, and refuses code that changed (:class:`BotCodeMismatchError` both times).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.local import bot_files, code_hash
from referee.sandbox import private_dir, remove_tree

__all__ = ["BotCodeMismatchError", "Bundle", "bundle_bot", "pack_bot", "unpack_bot"]


class BotCodeMismatchError(RuntimeError):
    """A bot's code did not hash to what the registry says it is: in a bundle, in the registry
    copy, or in the folder a match process was given (it refuses to play it)."""


def _reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner, no time: the same folder always packs to the same bytes."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def pack_bot(folder: Path) -> bytes:
    """The bot folder as a gzip'd tar of its files, folders and symlinks (what ``code_hash``
    covers, in sorted order)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for path in bot_files(folder):
            if path.is_symlink() or path.is_dir() or path.is_file():
                arcname = path.relative_to(folder).as_posix()
                tar.add(path, arcname=arcname, recursive=False, filter=_reset)
    return buffer.getvalue()


def _member_filter() -> Callable[[tarfile.TarInfo, str], tarfile.TarInfo]:
    """tar's ``data`` filter, except that a symlink may point anywhere (a bot folder may hold
    one, as its registry copy does); no member may be placed through a symlink."""
    links: list[str] = []

    def check(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo:
        if any(member.name == link or member.name.startswith(f"{link}/") for link in links):
            raise tarfile.OutsideDestinationError(member, os.path.join(destination, member.name))
        if not member.issym():
            return tarfile.data_filter(member, destination)
        placed = tarfile.data_filter(member.replace(linkname=".", deep=False), destination)
        links.append(member.name)
        return placed.replace(linkname=member.linkname, deep=False)

    return check


def unpack_bot(bundle: bytes, expected: str, cache: Path) -> Path:
    """The bot's code folder in ``cache``, unpacked from ``bundle`` unless already there.

    A folder enters the cache only after hashing to ``expected`` (the registry's hash), under
    that name, by an atomic rename: a half-unpacked or wrong bot is never used.

    Raises:
        BotCodeMismatchError: the bundle's files do not hash to ``expected``.
        SandboxUnavailable: ``cache`` is a symlink or another user's folder.
    """
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise BotCodeMismatchError(f"not a code hash: {expected!r}")
    target = cache / expected
    if target.is_dir():
        return target
    private_dir(cache, 0o700)  # ours only: refused if a symlink or someone else's
    scratch = Path(tempfile.mkdtemp(prefix=f".{expected[:12]}-", dir=cache))
    try:
        code = scratch / "code"
        with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as tar:
            tar.extractall(code, filter=_member_filter())
        actual = code_hash(code)
        if actual != expected:
            raise BotCodeMismatchError(
                f"bot code arrived with hash {actual[:12]}, the registry says {expected[:12]}"
            )
        with contextlib.suppress(OSError):  # another task of this machine may have won the race
            code.rename(target)
    finally:
        remove_tree(scratch)
    if not target.is_dir():
        raise BotCodeMismatchError(f"bot {expected[:12]} could not be placed in {cache}")
    return target


@dataclass(frozen=True)
class Bundle:
    """A bot's code packed for the trip, under its registry hash."""

    digest: str
    bundle: bytes


def bundle_bot(folder: Path, digest: str) -> Bundle:
    """The registry copy in ``folder`` packed, after checking it still hashes to ``digest``.

    Raises:
        BotCodeMismatchError: it was changed after submission.
    """
    actual = code_hash(folder)
    if actual != digest:
        raise BotCodeMismatchError(
            f"the registry copy {folder} hashes to {actual[:12]}, not to its submitted hash "
            f"{digest[:12]}: it was changed after submission"
        )
    return Bundle(digest, pack_bot(folder))
