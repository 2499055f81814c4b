"""Uploads: received, kept, unpacked safely, checked by the conformance kit, registered.

An upload is hostile until checked. :meth:`Intake.receive` refuses at once what is too big or
not gzip'd, and keeps the rest durably (written, synced, renamed) before it is queued, so a
server killed at any moment loses no upload it said it had. :meth:`Intake.run` checks the queue
one upload at a time: :func:`unpack_upload` streams the tar into a scratch folder (regular files
and folders only, within the manifest's limits, counted as bytes are written), the bot name must
be free (it is claimed for the author first, and given back if the upload is refused) or the
author's own, and neither banned nor the organiser's; then the registry takes its checked,
immutable copy (:func:`tournaments.registry.submit`; the ladder starts no new pair meanwhile, so
the kit's timings are not squeezed) and the ladder admits it. One intake per home checks: the
server holding the home's intake lock; another server on the home only queues uploads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import gzip
import io
import json
import logging
import os
import secrets
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

import trio

from protocol.manifest import MANIFEST, MAX_FILES, MAX_FOLDER_BYTES, MIB, ManifestError
from protocol.manifest import load_manifest as _load_manifest
from tournaments.arena.store import EntrantState, Submission, SubmissionState
from tournaments.registry import Checker, RegistryError, submit

if TYPE_CHECKING:
    from tournaments.arena.service import ArenaService

__all__ = ["MAX_UPLOAD_BYTES", "Intake", "UnsafeUpload", "UploadRefused", "unpack_upload"]


MAX_UPLOAD_BYTES: Final = 8 * 1024 * 1024
"""The most an upload may weigh (gzip'd tar); a bigger one is refused before it is kept."""
MAX_DEPTH: Final = 32
"""The most folders deep a path of an upload may go."""
MAX_PATH: Final = 255
"""The longest path (in UTF-8 bytes) an upload may hold."""
UPLOADS_DIR: Final = "uploads"
"""Where, under the arena's home, uploads are kept until their verdict."""

_GZIP_MAGIC: Final = b"\x1f\x8b\x08"
_CHUNK: Final = 1 << 16
_STREAM_LIMIT: Final = MAX_FOLDER_BYTES + MAX_FILES * 2048 + 64 * 1024
"""The most decompressed bytes read from an upload: the folder's budget, plus headers."""
_RETRY_S: Final = 1.0
"""How long the intake waits after its store failed it, before it tries again."""
_LOCK_FILE: Final = ".intake.lock"
"""The home's intake lock, in the uploads folder: only the server holding it checks uploads."""
_WAITING_PER_AUTHOR: Final = 2
"""The most uploads of one author queued or being checked at once; a further one is refused."""
_log = logging.getLogger("gin.arena.intake")


class UploadRefused(ValueError):  # noqa: N818 - named for what is so, as LeagueBusy
    """An upload refused at once (too big, not a gzip'd tar); ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class UnsafeUpload(ValueError):  # noqa: N818 - named for what it is
    """An upload that cannot be unpacked as a bot folder; the message names the member."""


class _Capped:
    """A binary stream that fails once more than ``limit`` bytes were read from it."""

    def __init__(self, stream: io.BufferedIOBase, limit: int) -> None:
        self._stream = stream
        self._left = limit

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self._left:
            size = self._left + 1
        data = self._stream.read(size)
        self._left -= len(data)
        if self._left < 0:
            raise UnsafeUpload(f"the upload unpacks to more than {MAX_FOLDER_BYTES // MIB} MiB")
        return data


def _member_path(raw: str) -> PurePosixPath | None:
    """The checked relative path of a member (``None``: the top folder itself, ``.``).

    Raises:
        UnsafeUpload: the name is absolute, climbs out, holds NUL or control characters, is
            not UTF-8, or is too deep or too long.
    """
    shown = repr(raw)
    if any(ord(char) < 32 or ord(char) == 127 for char in raw):
        raise UnsafeUpload(f"{shown}: a name with NUL or control characters")
    try:
        encoded = raw.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsafeUpload(f"{shown}: a name that is not UTF-8") from None
    if raw.startswith("/"):
        raise UnsafeUpload(f"{shown}: an absolute path")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafeUpload(f"{shown}: a path with '..'")
    if len(parts) > MAX_DEPTH:
        raise UnsafeUpload(f"{shown}: deeper than {MAX_DEPTH} folders")
    if len(encoded) > MAX_PATH:
        raise UnsafeUpload(f"{shown}: a path longer than {MAX_PATH} bytes")
    return PurePosixPath(*parts) if parts else None


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "a symlink"
    if member.islnk():
        return "a hard link"
    if member.ischr() or member.isblk():
        return "a device"
    if member.isfifo():
        return "a FIFO"
    if member.sparse is not None or member.type == tarfile.GNUTYPE_SPARSE:
        return "a sparse file"
    return f"a member of type {member.type!r}"


class _Unpacker:
    """Writes the members of one tar into ``root``, refusing what a bot folder cannot hold."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.budget = MAX_FOLDER_BYTES
        self.named: set[PurePosixPath] = set()
        """The paths the members named (a name twice is refused)."""
        self.files: set[PurePosixPath] = set()
        self.folders: set[PurePosixPath] = set()
        self.count = 0

    def add(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        self.count += 1
        if self.count > MAX_FILES:
            raise UnsafeUpload(f"more than {MAX_FILES} members, the limit")
        path = _member_path(member.name)
        shown = repr(member.name)
        regular = member.type in (tarfile.REGTYPE, tarfile.AREGTYPE) and member.sparse is None
        if not (regular or member.type == tarfile.DIRTYPE):
            raise UnsafeUpload(f"{shown}: {_kind(member)}; an upload holds only files and folders")
        if path is None:
            if regular:
                raise UnsafeUpload(f"{shown}: a file with no name")
            return
        if path in self.named or (path in self.folders and regular):
            raise UnsafeUpload(f"{shown}: a duplicate name")
        self.named.add(path)
        for parent in reversed(path.parents[:-1]):  # every folder above it, top down
            self._folder(parent, shown)
        if regular:
            self._file(tar, member, path, shown)
        else:
            self._folder(path, shown)

    def _folder(self, path: PurePosixPath, shown: str) -> None:
        if path in self.folders:
            return
        if path in self.files:
            raise UnsafeUpload(f"{shown}: a duplicate name ({path} is a file)")
        target = self.root / path
        target.mkdir(mode=0o700)
        target.chmod(0o755)
        self.folders.add(path)

    def _file(
        self, tar: tarfile.TarFile, member: tarfile.TarInfo, path: PurePosixPath, shown: str
    ) -> None:
        if member.size > self.budget:
            raise UnsafeUpload(f"{shown}: the upload unpacks to more than {self._limit()}")
        source = tar.extractfile(member)
        if source is None:  # pragma: no cover - a regular member always has a file
            raise UnsafeUpload(f"{shown}: cannot be read")
        mode = 0o755 if member.mode & 0o111 else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self.files.add(path)
        descriptor = os.open(self.root / path, flags, 0o600)
        with open(descriptor, "wb") as out:
            os.fchmod(out.fileno(), mode)
            while chunk := source.read(_CHUNK):
                self.budget -= len(chunk)  # counted as written, whatever the header said
                if self.budget < 0:
                    raise UnsafeUpload(f"{shown}: the upload unpacks to more than {self._limit()}")
                out.write(chunk)

    @staticmethod
    def _limit() -> str:
        return f"{MAX_FOLDER_BYTES // MIB} MiB"


def unpack_upload(upload: Path, destination: Path) -> Path:
    """Unpack a gzip'd tar of a bot folder into ``destination`` (an empty folder); returns the
    bot folder: ``destination``, or the single top folder holding ``bot.toml``.

    The tar is streamed (its header sizes are not trusted: bytes are counted as written, and at
    most the folder's budget is written). Only regular files and folders are made, files 0644
    (0755 with an x bit), folders 0755, owned by this process, times not kept. What is left in
    ``destination`` after a refusal is the caller's to remove.

    Raises:
        UnsafeUpload: the upload is not a gzip'd tar, is truncated, or holds what a bot folder
            cannot (the message names the member): an absolute path, ``..``, NUL or control
            characters, a link, device or FIFO, a duplicate name, more than ``MAX_FILES``
            members or ``MAX_FOLDER_BYTES`` of content, a path too deep or too long.
    """
    unpacker = _Unpacker(destination)
    try:
        with upload.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
            stream = _Capped(unzipped, _STREAM_LIMIT)
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
                for member in tar:
                    unpacker.add(tar, member)
                fileobj = tar.fileobj
                assert fileobj is not None
                if fileobj.tell() < tar.offset + tarfile.BLOCKSIZE:
                    raise UnsafeUpload("the tar is truncated (it has no end-of-archive marker)")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise UnsafeUpload(f"not a whole gzip'd tar: truncated or damaged ({error})") from None
    if not (destination / MANIFEST).exists():
        top = list(destination.iterdir())
        if len(top) == 1 and top[0].is_dir() and (top[0] / MANIFEST).is_file():
            return top[0]
    return destination


class Intake:
    """Takes uploads and checks them one at a time, in the order they came."""

    def __init__(self, service: ArenaService, checker: Checker | None) -> None:
        self.service = service
        self.checker = checker
        self._wanted = trio.Event()
        self.lock_retry_s = 3.0
        """How often an intake waiting for the home's intake lock tries again."""
        self.poll_s = 2.0
        """How often the checking intake looks at the queue when not woken (uploads another
        server on the home took wake nothing here)."""
        self.checks = False
        """Whether this intake holds the home's intake lock: it alone checks uploads."""

    @property
    def uploads_dir(self) -> Path:
        """Where uploads are kept until their verdict (and unpacked, in scratch folders)."""
        return self.service.arena.home / UPLOADS_DIR

    def _kept(self, submission_id: str) -> Path:
        return self.uploads_dir / f"{submission_id}.tgz"

    def receive(self, author: str, data: bytes) -> str:
        """Keep an upload of ``author`` and queue it for its check; returns its submission id.

        Raises:
            UploadRefused: refused before it was kept (too big, not a gzip'd tar, or the author
                has :data:`_WAITING_PER_AUTHOR` uploads waiting already: status 429).
        """
        if len(data) > MAX_UPLOAD_BYTES:
            raise UploadRefused(
                f"upload too big: {len(data)} bytes, the limit is {MAX_UPLOAD_BYTES // MIB} MiB",
                413,
            )
        if not data.startswith(_GZIP_MAGIC):
            raise UploadRefused(
                "not a gzip'd tar: send the bot folder as made by tar czf bot.tgz -C mybot ."
            )
        waiting = self.service.store.waiting_submissions(author)
        if waiting >= _WAITING_PER_AUTHOR:
            raise UploadRefused(
                f"you have {waiting} uploads waiting for their check: wait for their verdicts",
                429,
            )
        submission_id = secrets.token_urlsafe(18)
        folder = self.uploads_dir
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        kept = self._kept(submission_id)
        part = kept.with_name(kept.name + ".part")
        try:
            with part.open("xb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            part.rename(kept)
            _sync_folder(folder)
            self.service.store.add_submission(submission_id, author)
        except BaseException:
            part.unlink(missing_ok=True)
            kept.unlink(missing_ok=True)
            raise
        self._wanted.set()
        return submission_id

    async def run(self) -> None:
        """Check queued uploads for ever (those a killed server was checking first), once this
        intake holds the home's intake lock: another server's intake on the same home checks
        meanwhile, and this one takes over when that server stops."""
        async with self._locked():
            store = self.service.store
            store.requeue_submissions()
            self._sweep()
            while True:
                self._wanted = trio.Event()
                try:
                    checked = await self.check_next()
                except Exception:  # the store failed us: say so, wait a little, go on
                    _log.exception("the intake could not take the next upload")
                    await trio.sleep(_RETRY_S)
                    continue
                if not checked:
                    with trio.move_on_after(self.poll_s):
                        await self._wanted.wait()

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """Wait until this intake holds the home's intake lock (``.intake.lock`` in the uploads
        folder: an ``flock``, which the kernel drops when the server dies, however it dies), and
        hold it for the block."""
        self.uploads_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(self.uploads_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            said = False
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not said:
                        holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
                        _log.info(
                            "another server (process %s) checks this home's uploads: this one"
                            " queues them, and checks them once that one stops",
                            holder or "?",
                        )
                        said = True
                await trio.sleep(self.lock_retry_s)
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, str(os.getpid()).encode(), 0)
            self.checks = True
            yield
        finally:
            self.checks = False
            os.close(descriptor)  # releases the lock

    async def check_next(self) -> bool:
        """Check the oldest queued upload, to its verdict; False if none was queued."""
        queued = self.service.store.submissions(SubmissionState.QUEUED, limit=1)
        if not queued:
            return False
        await self._check(queued[0])
        return True

    def _sweep(self) -> None:
        """Remove what a killed server left: scratch folders, half-written and judged uploads."""
        if not self.uploads_dir.is_dir():
            return
        waiting = {
            row.id for row in self.service.store.submissions(SubmissionState.QUEUED, limit=-1)
        }
        for path in self.uploads_dir.iterdir():
            if path.name == _LOCK_FILE:
                continue
            if path.name.startswith(".check-"):
                shutil.rmtree(path, ignore_errors=True)
            elif path.name.removesuffix(".tgz") not in waiting:
                path.unlink(missing_ok=True)

    async def _check(self, submission: Submission) -> None:
        store = self.service.store
        store.set_submission(submission.id, SubmissionState.CHECKING)
        kept = self._kept(submission.id)
        scratch: Path | None = None
        try:
            self.uploads_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=".check-", dir=self.uploads_dir))
            state, bot, message, report = await self._judge(submission, kept, scratch)
        except Exception:  # anything unforeseen rejects this upload, never stops the intake
            _log.exception("checking upload %s failed", submission.id)
            state, bot, message, report = (
                SubmissionState.REJECTED,
                None,
                "the arena failed while checking this upload: send it again, or tell the "
                f"organiser (upload {submission.id})",
                None,
            )
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        store.set_submission(submission.id, state, bot=bot, message=message, report=report)
        kept.unlink(missing_ok=True)

    async def _judge(
        self, submission: Submission, kept: Path, scratch: Path
    ) -> tuple[SubmissionState, str | None, str, str | None]:
        """The verdict on one upload: state, bot, message, checklist (JSON)."""
        rejected = SubmissionState.REJECTED
        if not kept.is_file():
            return rejected, None, "the upload was lost before its check: send it again", None
        try:
            (scratch / "bot").mkdir()
            folder = await trio.to_thread.run_sync(unpack_upload, kept, scratch / "bot")
        except UnsafeUpload as error:
            return rejected, None, f"refused: {error}", None
        try:
            manifest = _load_manifest(folder)
        except ManifestError as error:
            problems = "; ".join(p.replace(str(folder), "the upload") for p in error.problems)
            return rejected, None, f"not a valid bot folder: {problems}", None
        name, author = manifest.name, submission.author
        store = self.service.store
        reason = store.banned(name)
        if reason is not None:
            return (
                rejected,
                manifest.ident,
                f"the bot name {name!r} is banned from this arena ({reason})",
                None,
            )
        owner = store.owner(name)
        if owner is None:
            if store.name_known(name):  # registered with no owner: a house bot, removed or not
                why = f"the bot name {name!r} is the organiser's: choose another name"
                return rejected, manifest.ident, why, None
            owner = store.claim_name(name, author)  # before submit: no bot is left ownerless
        if owner != author:
            return rejected, manifest.ident, f"the bot name {name!r} is another author's", None
        try:
            verdict = await self._register(manifest.ident, folder)
        except Exception:  # not when cancelled: the check is done again, the name still its
            store.release_name(name, author)
            raise
        if verdict[0] is rejected:
            store.release_name(name, author)  # kept only if a version of it is registered
        return verdict

    async def _register(
        self, ident: str, folder: Path
    ) -> tuple[SubmissionState, str | None, str, str | None]:
        """The verdict on an upload whose bot name is its author's: registered and admitted, or
        refused (a version retired or suspended, a failed check)."""
        rejected = SubmissionState.REJECTED
        store = self.service.store
        entrant = store.entrant(ident)
        if entrant is not None and entrant.state is not EntrantState.ACTIVE:
            state, why = entrant.state.value, entrant.reason
            why = f"{ident} is {state} ({why}): give the new code a new version"
            return rejected, ident, why, None
        ladder = self.service.ladder
        try:
            with contextlib.nullcontext() if ladder is None else ladder.holding():
                row = await submit(self.service.arena, store, folder, self.checker)
        except RegistryError as error:
            report = None
            if error.report is not None:
                shown = dataclasses.replace(error.report, folder=Path(ident))
                report = json.dumps(shown.to_dict())
            return rejected, ident, str(error).replace(str(folder), "the upload"), report
        self.service.admit(row)  # nothing awaits from submit on: no half-registered bot
        return (
            SubmissionState.ACCEPTED,
            row.ident,
            f"accepted: {row.ident} entered the ladder",
            None,
        )


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
