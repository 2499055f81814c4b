"""The hosted arena's intake: uploads are hostile until checked.

Each unpacking attack is built with ``tarfile`` here and sent through ``Intake.receive`` and one
step of the checker: each must end in a rejection naming the member, with nothing written
outside the scratch folder, nothing registered and nothing left behind.
"""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import shutil
import sqlite3
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol.manifest import MAX_FILES, MAX_FOLDER_BYTES
from referee.conformance import CheckItem, CheckReport, Verdict, check_bot
from referee.faults import Fault, FaultKind
from referee.sandbox import Sandbox
from tournaments.arena.accounts import add_author
from tournaments.arena.intake import (
    MAX_UPLOAD_BYTES,
    UnsafeUpload,
    UploadRefused,
    unpack_upload,
)
from tournaments.arena.ladder import LADDER
from tournaments.arena.service import ArenaService
from tournaments.arena.store import ArenaStore, EntrantState, Submission, SubmissionState
from tournaments.executors.fake import FakeExecutor
from tournaments.registry import Arena, Checker, submit
from tournaments.store import BotRow

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "sample_bots" / "greedy"
BOT_PY = "import sys\nsys.exit(0)\n"


def manifest(name: str = "mybot", version: str = "1.0.0") -> bytes:
    return f'name = "{name}"\nversion = "{version}"\ncommand = ["python", "bot.py"]\n'.encode()


def make_service(tmp_path: Path, checker: Checker | None = None) -> ArenaService:
    arena = Arena(tmp_path / "home")
    store = ArenaStore(arena.store_path)
    for author in ("a", "b"):
        add_author(store, author)
    return ArenaService(arena, store, ladder=False, checker=checker)


Member = tuple[tarfile.TarInfo, bytes | None]


def file_member(name: str, data: bytes = b"", mode: int = 0o644) -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def typed_member(name: str, kind: bytes, linkname: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def good_members(name: str = "mybot", version: str = "1.0.0") -> list[Member]:
    return [
        file_member("bot.toml", manifest(name, version)),
        file_member("bot.py", BOT_PY.encode()),
    ]


def tgz(members: list[Member], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, None if data is None else io.BytesIO(data))
    return buffer.getvalue()


def check_one(service: ArenaService, author: str, data: bytes) -> Submission:
    """Receive an upload and run the checker once; the upload's row after its verdict."""
    submission_id = service.intake.receive(author, data)
    assert trio.run(service.intake.check_next)
    found = service.store.submission(submission_id)
    assert found is not None
    return found


def uploads_left(service: ArenaService) -> list[str]:
    """What the uploads folder holds, but the intake's lock file."""
    uploads = service.arena.home / "uploads"
    return sorted(p.name for p in uploads.iterdir() if p.name != ".intake.lock")


def assert_clean(service: ArenaService, tmp_path: Path) -> None:
    """Nothing registered, nothing outside the home, nothing left in the uploads folder."""
    store = service.store
    assert store.bots() == []
    assert store.entrants() == []
    assert store.owners() == {}
    home = service.arena.home
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
    others = {p.name for p in home.iterdir()} - {"bots", "uploads"}
    assert all(name.startswith("arena.sqlite") for name in others), others
    assert list((home / "uploads").iterdir()) == []
    bots = home / "bots"
    assert not bots.exists() or list(bots.rglob("*")) == []


def rejected(service: ArenaService, tmp_path: Path, data: bytes, *phrases: str) -> str:
    found = check_one(service, "a", data)
    assert found.state is SubmissionState.REJECTED, found
    assert found.finished_at is not None
    for phrase in phrases:
        assert phrase in found.message, found.message
    assert "\n" not in found.message
    assert_clean(service, tmp_path)
    return found.message


# --- receive -------------------------------------------------------------------------------------


def test_an_upload_over_the_limit_is_refused_before_it_is_kept(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    data = b"\x1f\x8b\x08" + bytes(MAX_UPLOAD_BYTES)
    with pytest.raises(UploadRefused) as caught:
        service.intake.receive("a", data)
    assert caught.value.status == 413
    assert service.store.submissions() == []
    uploads = service.arena.home / "uploads"
    assert not uploads.exists() or list(uploads.iterdir()) == []


def test_an_upload_that_is_not_gzip_is_refused_at_once(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    with pytest.raises(UploadRefused) as caught:
        service.intake.receive("a", b"PK\x03\x04 a zip file")
    assert caught.value.status == 400
    assert "gzip" in str(caught.value)
    assert service.store.submissions() == []


def test_an_upload_is_kept_durably_and_queued_under_an_unguessable_id(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    data = tgz(good_members())
    ids = {service.intake.receive(author, data): author for author in ("a", "b", "a")}
    assert len(ids) == 3
    assert all(len(submission_id) >= 22 for submission_id in ids)
    for submission_id, author in ids.items():
        kept = service.arena.home / "uploads" / f"{submission_id}.tgz"
        assert kept.read_bytes() == data
        row = service.store.submission(submission_id)
        assert row is not None
        assert row.state is SubmissionState.QUEUED
        assert row.author == author
    assert not list((service.arena.home / "uploads").glob("*.part"))


# --- the unpacking attacks -----------------------------------------------------------------------


def test_an_absolute_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "evil"
    data = tgz([*good_members(), file_member(str(target), b"owned")])
    rejected(make_service(tmp_path), tmp_path, data, repr(str(target)), "absolute")
    assert not target.exists()


def test_a_path_climbing_out_is_refused(tmp_path: Path) -> None:
    data = tgz([*good_members(), file_member("../../../evil", b"owned")])
    rejected(make_service(tmp_path), tmp_path, data, "'../../../evil'", "'..'")
    assert not (tmp_path / "home" / "evil").exists()


@pytest.mark.parametrize("name", ["a\x00b", "bad\nname", "\x1b[2Jclear", "del\x7f"])
def test_a_name_with_nul_or_control_characters_is_refused(tmp_path: Path, name: str) -> None:
    info, data = file_member("placeholder", b"x")
    info.pax_headers = {"path": name}  # a pax header carries what a plain header cannot
    rejected(make_service(tmp_path), tmp_path, tgz([*good_members(), (info, data)]), "control")


def test_a_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        for info, data in good_members():
            tar.addfile(info, io.BytesIO(data or b""))
        info, data = file_member("caf\xe9", b"x")
        tar.addfile(info, io.BytesIO(data or b""))
    rejected(make_service(tmp_path), tmp_path, gzip.compress(raw.getvalue()), "not UTF-8")


@pytest.mark.parametrize(
    ("kind", "linkname", "said"),
    [
        (tarfile.SYMTYPE, "/etc/passwd", "a symlink"),
        (tarfile.SYMTYPE, "bot.py", "a symlink"),
        (tarfile.LNKTYPE, "bot.toml", "a hard link"),
        (tarfile.CHRTYPE, "", "a device"),
        (tarfile.BLKTYPE, "", "a device"),
        (tarfile.FIFOTYPE, "", "a FIFO"),
        (tarfile.CONTTYPE, "", "of type"),
    ],
)
def test_what_is_not_a_file_or_a_folder_is_refused(
    tmp_path: Path, kind: bytes, linkname: str, said: str
) -> None:
    data = tgz([*good_members(), typed_member("odd", kind, linkname)])
    rejected(make_service(tmp_path), tmp_path, data, "'odd'", said, "only files and folders")


def test_a_symlink_then_a_file_through_it_writes_nothing_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    members = [
        *good_members(),
        typed_member("link", tarfile.SYMTYPE, str(outside)),
        file_member("link/evil", b"owned"),
    ]
    service = make_service(tmp_path)
    found = check_one(service, "a", tgz(members))
    assert found.state is SubmissionState.REJECTED
    assert "a symlink" in found.message
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "members",
    [
        [*good_members(), file_member("bot.py", b"print('again')")],
        [
            *good_members(),
            typed_member("lib", tarfile.DIRTYPE),
            typed_member("lib", tarfile.DIRTYPE),
        ],
        [*good_members(), file_member("lib", b"x"), typed_member("lib", tarfile.DIRTYPE)],
        [*good_members(), file_member("lib/a.py", b"x"), file_member("lib", b"x")],
        [*good_members(), file_member("lib", b"x"), file_member("lib/a.py", b"x")],
    ],
    ids=["file twice", "folder twice", "file then folder", "folder then file", "under a file"],
)
def test_a_duplicate_name_is_refused(tmp_path: Path, members: list[Member]) -> None:
    rejected(make_service(tmp_path), tmp_path, tgz(members), "duplicate name")


@pytest.mark.slow
def test_more_than_max_files_members_are_refused(tmp_path: Path) -> None:
    extra = [file_member(f"f/{index}") for index in range(MAX_FILES)]
    data = tgz([*good_members(), *extra], fmt=tarfile.USTAR_FORMAT)
    rejected(make_service(tmp_path), tmp_path, data, f"more than {MAX_FILES} members")


def test_a_path_too_deep_is_refused(tmp_path: Path) -> None:
    deep = "/".join(["d"] * 33) + "/f.py"
    rejected(make_service(tmp_path), tmp_path, tgz([*good_members(), file_member(deep)]), "deeper")


def test_a_path_too_long_is_refused(tmp_path: Path) -> None:
    long = "x" * 150 + "/" + "y" * 110
    rejected(make_service(tmp_path), tmp_path, tgz([*good_members(), file_member(long)]), "longer")


def test_a_truncated_gzip_is_refused(tmp_path: Path) -> None:
    data = tgz([*good_members(), file_member("big.bin", bytes(range(256)) * 400)])
    cut = data[: len(data) // 2]
    rejected(make_service(tmp_path), tmp_path, cut, "not a whole gzip'd tar")


@pytest.mark.parametrize("where", ["in a header", "in a file", "before the end"])
def test_a_truncated_tar_in_a_whole_gzip_is_refused(tmp_path: Path, where: str) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for info, data in [*good_members(), file_member("data.bin", b"z" * 5000)]:
            tar.addfile(info, io.BytesIO(data or b""))
    whole = raw.getvalue()
    header = whole.index(b"data.bin")  # the last member's header
    cut = {
        "in a header": header + 100,
        "in a file": header + 512 + 2000,
        "before the end": header + 512 + 5120,  # every byte of the file, no end blocks
    }[where]
    service = make_service(tmp_path)
    rejected(service, tmp_path, gzip.compress(whole[:cut]), "truncated")


def test_a_gzip_of_something_else_is_refused(tmp_path: Path) -> None:
    data = gzip.compress(b"hello, this is not a tar at all\n" * 100)
    rejected(make_service(tmp_path), tmp_path, data, "not a whole gzip'd tar")


def zeros_gzip(prefix: bytes, total: int, suffix: bytes = b"") -> bytes:
    """``prefix``, ``total`` zero bytes and ``suffix``, gzip'd small: gzip members of 16 MiB of
    zeros each, concatenated (one gzip stream to a reader)."""
    chunk = 16 << 20
    zeros = gzip.compress(bytes(chunk), compresslevel=9)
    assert total % chunk == 0
    return gzip.compress(prefix) + zeros * (total // chunk) + gzip.compress(suffix)


def raw_header(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.type = kind
    return info.tobuf(tarfile.GNU_FORMAT)


def good_tar_prefix() -> bytes:
    """The good members' headers and data, with no end-of-archive marker (more may follow)."""
    parts = []
    for info, data in good_members():
        payload = data or b""
        padding = -len(payload) % tarfile.BLOCKSIZE
        parts.append(info.tobuf(tarfile.USTAR_FORMAT) + payload + b"\0" * padding)
    return b"".join(parts)


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


@pytest.mark.parametrize(
    "shape", ["one file of 1 GiB", "many files of 1 MiB", "a long name of 1 GiB"]
)
def test_a_gzip_bomb_stops_fast_at_the_budget(tmp_path: Path, shape: str) -> None:
    prefix = good_tar_prefix()
    with tarfile.open(fileobj=io.BytesIO(prefix + bytes(1024))) as whole:
        assert whole.getnames() == ["bot.toml", "bot.py"]
    if shape == "one file of 1 GiB":
        data = zeros_gzip(prefix + raw_header("zeros.bin", 1 << 30), 1 << 30)
    elif shape == "a long name of 1 GiB":
        data = zeros_gzip(
            prefix + raw_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGNAME), 1 << 30
        )
    else:  # 128 files of 1 MiB each: every header's size is small, the sum is not
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for info, payload in good_members():
                tar.addfile(info, io.BytesIO(payload or b""))
            for index in range(128):
                info, payload = file_member(f"z/{index}.bin", bytes(1 << 20))
                tar.addfile(info, io.BytesIO(payload or b""))
        data = gzip.compress(raw.getvalue(), compresslevel=9)
    assert len(data) < MAX_UPLOAD_BYTES
    upload = tmp_path / "bomb.tgz"
    upload.write_bytes(data)
    destination = tmp_path / "scratch"
    destination.mkdir()
    started = time.perf_counter()
    with pytest.raises(UnsafeUpload, match="more than 50 MiB"):
        unpack_upload(upload, destination)
    elapsed = time.perf_counter() - started
    assert elapsed < 5.0, elapsed
    assert folder_bytes(destination) <= MAX_FOLDER_BYTES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bomb.tgz", "scratch"]
    service = make_service(tmp_path / "arena")
    found = check_one(service, "a", data)
    assert found.state is SubmissionState.REJECTED
    assert "more than 50 MiB" in found.message
    assert_clean(service, tmp_path / "arena")


# --- what an accepted upload is ------------------------------------------------------------------


def test_files_are_written_with_plain_modes_whatever_the_tar_says(tmp_path: Path) -> None:
    members = [
        file_member("bot.toml", manifest(), mode=0o4777),
        file_member("bot.py", BOT_PY.encode(), mode=0o700),
        typed_member("lib", tarfile.DIRTYPE),
        file_member("lib/data.txt", b"data", mode=0o666),
    ]
    members[2][0].mode = 0o777
    members[0][0].mtime = members[1][0].mtime = 1
    upload = tmp_path / "bot.tgz"
    upload.write_bytes(tgz(members))
    destination = tmp_path / "scratch"
    destination.mkdir()
    folder = unpack_upload(upload, destination)
    assert folder == destination
    modes = {p.name: p.stat().st_mode & 0o7777 for p in folder.rglob("*")}
    assert modes == {"bot.toml": 0o755, "bot.py": 0o755, "lib": 0o755, "data.txt": 0o644}
    assert (folder / "bot.py").stat().st_mtime > 1000


def test_a_single_top_folder_holding_the_manifest_is_stripped(tmp_path: Path) -> None:
    members = [typed_member("mybot", tarfile.DIRTYPE)]
    members += [(info.replace(name=f"mybot/{info.name}"), data) for info, data in good_members()]
    service = make_service(tmp_path)
    found = check_one(service, "a", tgz(members))
    assert found.state is SubmissionState.ACCEPTED, found.message
    row = service.store.bot("mybot")
    assert row is not None
    assert sorted(p.name for p in row.path.iterdir()) == ["bot.py", "bot.toml"]


def test_a_tar_of_dot_is_taken_as_the_folder(tmp_path: Path) -> None:
    members = [typed_member(".", tarfile.DIRTYPE)]
    members += [(info.replace(name=f"./{info.name}"), data) for info, data in good_members()]
    service = make_service(tmp_path)
    found = check_one(service, "a", tgz(members))
    assert found.state is SubmissionState.ACCEPTED, found.message
    assert found.bot == "mybot@1.0.0"
    assert [entrant.ident for entrant in service.store.entrants()] == ["mybot@1.0.0"]
    assert service.store.owner("mybot") == "a"
    assert list((service.arena.home / "uploads").iterdir()) == []


def test_an_invalid_manifest_is_rejected_without_the_server_path(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    found = check_one(service, "a", tgz([file_member("bot.py", BOT_PY.encode())]))
    assert found.state is SubmissionState.REJECTED
    assert found.message.startswith("not a valid bot folder: no bot.toml")
    assert str(service.arena.home) not in found.message
    assert_clean(service, tmp_path)


# --- ownership -----------------------------------------------------------------------------------


def test_a_name_belongs_to_the_author_who_first_had_it_accepted(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    first = check_one(service, "a", tgz(good_members("mybot", "1.0.0")))
    assert first.state is SubmissionState.ACCEPTED
    taken = check_one(service, "b", tgz(good_members("mybot", "2.0.0")))
    assert taken.state is SubmissionState.REJECTED
    assert "another author's" in taken.message
    assert service.store.bot("mybot", "2.0.0") is None
    again = check_one(service, "a", tgz(good_members("mybot", "2.0.0")))
    assert again.state is SubmissionState.ACCEPTED, again.message
    states = {e.ident: e.state for e in service.store.entrants()}
    assert states == {"mybot@1.0.0": EntrantState.RETIRED, "mybot@2.0.0": EntrantState.ACTIVE}
    assert service.store.owners() == {"mybot": "a"}


def test_a_rejected_upload_claims_no_name(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    members = [*good_members("mybot"), typed_member("odd", tarfile.FIFOTYPE)]
    assert check_one(service, "b", tgz(members)).state is SubmissionState.REJECTED
    assert service.store.owners() == {}
    assert check_one(service, "a", tgz(good_members("mybot"))).state is SubmissionState.ACCEPTED


def test_nobody_takes_the_organisers_bot_name(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    trio.run(submit, service.arena, service.store, GREEDY, None)  # the organiser's own
    for author in ("a", "b"):
        found = check_one(service, author, tgz(good_members("greedy", "9.0.0")))
        assert found.state is SubmissionState.REJECTED
        assert "organiser's" in found.message
    assert service.store.bot("greedy", "9.0.0") is None
    assert service.store.owners() == {}


def test_a_suspended_version_sent_again_stays_suspended(tmp_path: Path) -> None:
    """Suspension ends with a new version: the same one sent again is refused."""
    service = make_service(tmp_path)
    assert check_one(service, "a", tgz(good_members("mybot"))).state is SubmissionState.ACCEPTED
    service.store.set_entrant("mybot@1.0.0", EntrantState.SUSPENDED, "crashed in every series")
    again = check_one(service, "a", tgz(good_members("mybot")))
    assert again.state is SubmissionState.REJECTED
    assert "suspended (crashed in every series)" in again.message
    entrant = service.store.entrant("mybot@1.0.0")
    assert entrant is not None
    assert entrant.state is EntrantState.SUSPENDED
    fixed = check_one(service, "a", tgz(good_members("mybot", "1.0.1")))
    assert fixed.state is SubmissionState.ACCEPTED


# --- the loop ------------------------------------------------------------------------------------


def test_an_upload_left_checking_is_checked_after_a_restart(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    submission_id = service.intake.receive("a", tgz(good_members()))
    service.store.set_submission(submission_id, SubmissionState.CHECKING)  # the server died
    stale = service.arena.home / "uploads" / ".check-stale"
    stale.mkdir()
    (stale / "x").write_text("left by a killed server")
    again = ArenaService(service.arena, ArenaStore(service.arena.store_path), ladder=False)

    async def start_then_stop() -> None:
        with trio.move_on_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(again.intake.run)
                while True:
                    found = again.store.submission(submission_id)
                    assert found is not None
                    if found.state is SubmissionState.ACCEPTED:
                        nursery.cancel_scope.cancel()
                        return
                    await trio.sleep(0.01)

    trio.run(start_then_stop)
    found = again.store.submission(submission_id)
    assert found is not None
    assert found.state is SubmissionState.ACCEPTED
    assert [e.ident for e in again.store.entrants()] == ["mybot@1.0.0"]
    assert uploads_left(service) == []


def test_run_wakes_for_each_upload_and_checks_them_in_order(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    order: list[str] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(service.intake.run)
            await trio.testing.wait_all_tasks_blocked()  # the loop waits for an upload
            for author, version in (("a", "1.0.0"), ("b", "1.1.0"), ("a", "1.2.0")):
                order.append(service.intake.receive(author, tgz(good_members("mybot", version))))
            with trio.fail_after(10):
                while any(
                    not (row := service.store.submission(s)) or row.finished_at is None
                    for s in order
                ):
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()

    trio.run(main)
    rows = [service.store.submission(s) for s in order]
    assert [row.bot for row in rows if row] == ["mybot@1.0.0", "mybot@1.1.0", "mybot@1.2.0"]
    finished = [row.finished_at or 0.0 for row in rows if row]
    assert finished == sorted(finished)


def test_an_unexpected_error_rejects_that_upload_and_the_loop_goes_on(tmp_path: Path) -> None:
    async def broken(path: Path) -> CheckReport:
        raise RuntimeError("the kit broke")

    service = make_service(tmp_path, broken)
    found = check_one(service, "a", tgz(good_members()))
    assert found.state is SubmissionState.REJECTED
    assert "failed while checking" in found.message
    assert found.id in found.message
    assert "the kit broke" not in found.message
    assert_clean(service, tmp_path)
    service.intake.checker = None
    assert check_one(service, "a", tgz(good_members())).state is SubmissionState.ACCEPTED


def test_a_failing_store_does_not_stop_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = make_service(tmp_path)
    submission_id = service.intake.receive("a", tgz(good_members()))
    real = service.store.submissions
    failures = [sqlite3.OperationalError("database is locked")]

    def flaky(*args: Any, **kwargs: Any) -> list[Submission]:
        if failures and kwargs.get("limit") == 1:
            raise failures.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(service.store, "submissions", flaky)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(service.intake.run)
            with trio.fail_after(10):
                while (row := service.store.submission(submission_id)) and not row.finished_at:
                    await trio.sleep(0.02)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert failures == []
    found = service.store.submission(submission_id)
    assert found is not None
    assert found.state is SubmissionState.ACCEPTED


def test_a_cancelled_check_leaves_the_upload_to_be_checked_again(tmp_path: Path) -> None:
    started = trio.Event()

    async def slow(path: Path) -> CheckReport:
        started.set()
        await trio.sleep_forever()
        raise AssertionError  # pragma: no cover

    service = make_service(tmp_path, slow)
    submission_id = service.intake.receive("a", tgz(good_members()))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(service.intake.run)
            await started.wait()
            nursery.cancel_scope.cancel()

    trio.run(main)
    found = service.store.submission(submission_id)
    assert found is not None
    assert found.state is SubmissionState.CHECKING
    assert service.store.bots() == []
    assert service.store.entrants() == []
    assert uploads_left(service) == [f"{submission_id}.tgz"]
    bots = service.arena.bots_dir
    assert not bots.exists() or list(bots.rglob("*")) == []
    service.intake.checker = None
    service.store.requeue_submissions()
    assert trio.run(service.intake.check_next)
    found = service.store.submission(submission_id)
    assert found is not None
    assert found.state is SubmissionState.ACCEPTED


@pytest.mark.slow
def test_a_real_bot_passes_the_real_check_and_enters_the_ladder(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "greedy2"
    shutil.copytree(GREEDY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    text = (folder / "bot.toml").read_text().replace('name = "greedy"', 'name = "greedy2"')
    (folder / "bot.toml").write_text(text)
    sandbox = Sandbox()

    async def checker(path: Path) -> CheckReport:
        return await check_bot(path, sandbox.prepare)

    service = make_service(tmp_path / "arena", checker)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        tar.add(folder, arcname="greedy2")
    found = check_one(service, "a", raw.getvalue())
    assert found.state is SubmissionState.ACCEPTED, found.message
    assert [e.ident for e in service.store.entrants()] == ["greedy2@1.0.0"]
    assert service.store.owner("greedy2") == "a"


@pytest.mark.slow
def test_a_bot_failing_the_real_check_is_rejected_with_its_checklist(tmp_path: Path) -> None:
    sandbox = Sandbox()

    async def checker(path: Path) -> CheckReport:
        return await check_bot(path, sandbox.prepare, decisions=20)

    service = make_service(tmp_path, checker)
    found = check_one(service, "a", tgz(good_members()))  # exits at once: never says hello
    assert found.state is SubmissionState.REJECTED
    assert "failed the conformance check" in found.message
    assert found.report is not None
    report = CheckReport.from_dict(json.loads(found.report))
    assert not report.passed
    assert report.ident == "mybot@1.0.0"
    assert str(service.arena.home) not in found.report
    assert service.store.bots() == []
    assert service.store.owners() == {}


def test_a_checklist_document_reads_back_as_the_same_report() -> None:
    report = CheckReport(
        Path("mybot@1.0.0"),
        "mybot@1.0.0",
        (CheckItem("starts", Verdict.PASSED), CheckItem("legal", Verdict.FAILED, "card 99")),
        decisions=12,
        series=2,
        startup_ms=35.5,
        faults=(Fault(1, FaultKind.ILLEGAL_ACTION, "card 99"),),
        never_started="",
        stderr=("Traceback", "  boom"),
    )
    document = json.loads(json.dumps(report.to_dict()))
    assert CheckReport.from_dict(document) == report
    assert document["passed"] is False
    assert document["never_started"] is None
    with pytest.raises(ValueError, match="not a conformance checklist"):
        CheckReport.from_dict({"items": [{"name": "x", "verdict": "maybe"}]})


# --- the review's findings -----------------------------------------------------------------------


def passing(path: Path) -> CheckReport:
    return CheckReport(path, "mybot@1.0.0", (CheckItem("starts", Verdict.PASSED),))


def test_a_house_bot_removed_from_the_registry_keeps_its_name_the_organisers(
    tmp_path: Path,
) -> None:
    service = make_service(tmp_path)
    trio.run(submit, service.arena, service.store, GREEDY, None)
    service.store.remove_bot("greedy", "1.0.0")  # `gin bot remove greedy@1.0.0`
    found = check_one(service, "a", tgz(good_members("greedy", "9.0.0")))
    assert found.state is SubmissionState.REJECTED
    assert "organiser's" in found.message
    assert service.store.owners() == {}


def test_a_failure_after_registering_leaves_the_name_its_authors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = make_service(tmp_path)

    def broken_admit(row: object) -> list[str]:
        raise RuntimeError("database is locked")

    monkeypatch.setattr(service, "admit", broken_admit)
    first = check_one(service, "a", tgz(good_members("mybot", "1.0.0")))
    assert first.state is SubmissionState.REJECTED
    assert service.store.owner("mybot") == "a"
    monkeypatch.undo()
    again = check_one(service, "a", tgz(good_members("mybot", "1.0.1")))
    assert again.state is SubmissionState.ACCEPTED, again.message


class Killed(BaseException):
    """The server killed at that point (nothing after it runs, nothing catches it)."""


def test_a_server_killed_between_registering_and_admitting_admits_on_the_recheck(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = make_service(tmp_path)

    def killed(row: object) -> list[str]:
        raise Killed

    monkeypatch.setattr(service, "admit", killed)
    submission_id = service.intake.receive("a", tgz(good_members()))
    with pytest.raises(Killed):
        trio.run(service.intake.check_next)
    assert service.store.bot("mybot", "1.0.0") is not None  # registered, not admitted
    assert service.store.entrants() == []
    monkeypatch.undo()
    assert service.store.requeue_submissions() == 1  # what the restarted server does
    assert trio.run(service.intake.check_next)
    found = service.store.submission(submission_id)
    assert found is not None
    assert found.state is SubmissionState.ACCEPTED, found.message
    assert [(e.ident, e.state) for e in service.store.entrants()] == [
        ("mybot@1.0.0", EntrantState.ACTIVE)
    ]
    assert service.store.owners() == {"mybot": "a"}


def test_a_refused_check_gives_the_claimed_name_back(tmp_path: Path) -> None:
    async def failing(path: Path) -> CheckReport:
        return CheckReport(path, "mybot@1.0.0", (CheckItem("starts", Verdict.FAILED, "no"),))

    service = make_service(tmp_path, failing)
    found = check_one(service, "a", tgz(good_members()))
    assert found.state is SubmissionState.REJECTED
    assert "failed the conformance check" in found.message
    assert service.store.owners() == {}
    service.intake.checker = None
    assert check_one(service, "b", tgz(good_members())).state is SubmissionState.ACCEPTED
    assert service.store.owners() == {"mybot": "b"}


def test_a_retired_version_sent_again_stays_retired(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    assert check_one(service, "a", tgz(good_members())).state is SubmissionState.ACCEPTED
    service.store.set_entrant("mybot@1.0.0", EntrantState.RETIRED, "retired by the organiser")
    again = check_one(service, "a", tgz(good_members()))
    assert again.state is SubmissionState.REJECTED
    assert "mybot@1.0.0 is retired (retired by the organiser)" in again.message
    assert "new version" in again.message
    entrant = service.store.entrant("mybot@1.0.0")
    assert entrant is not None
    assert entrant.state is EntrantState.RETIRED
    assert service.store.owners() == {"mybot": "a"}  # a refusal takes no registered name away
    assert check_one(service, "a", tgz(good_members("mybot", "1.0.1"))).state is (
        SubmissionState.ACCEPTED
    )


def test_no_upload_of_a_banned_name_is_accepted(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    assert check_one(service, "a", tgz(good_members())).state is SubmissionState.ACCEPTED
    service.store.ban("mybot", "cheating")
    service.store.ban("fresh", "offensive")
    for author, name, reason in (("a", "mybot", "cheating"), ("b", "fresh", "offensive")):
        found = check_one(service, author, tgz(good_members(name, "2.0.0")))
        assert found.state is SubmissionState.REJECTED
        assert f"{name!r} is banned from this arena ({reason})" in found.message
    assert service.store.bot("mybot", "2.0.0") is None
    assert service.store.bot("fresh", "2.0.0") is None
    assert service.store.owners() == {"mybot": "a"}
    service.store.unban("fresh")
    assert check_one(service, "b", tgz(good_members("fresh", "2.0.0"))).state is (
        SubmissionState.ACCEPTED
    )


def test_one_author_cannot_fill_the_queue(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    data = tgz(good_members())
    first = service.intake.receive("a", data)
    service.intake.receive("a", tgz(good_members("mybot", "1.0.1")))
    service.store.set_submission(first, SubmissionState.CHECKING)  # one queued, one checking
    with pytest.raises(UploadRefused) as caught:
        service.intake.receive("a", data)
    assert caught.value.status == 429
    assert "you have 2 uploads waiting for their check" in str(caught.value)
    assert len(service.store.submissions()) == 2
    assert len(uploads_left(service)) == 2  # the refused one was not kept
    service.intake.receive("b", tgz(good_members("other")))  # another author is not held up
    service.store.requeue_submissions()
    assert trio.run(service.intake.check_next)
    service.intake.receive("a", data)  # a verdict came: room for one more


def test_one_intake_per_home_checks_and_another_takes_over_when_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second server on the home (``--no-ladder``) queues uploads but neither requeues nor
    sweeps nor checks while the first one's intake runs; stopped, the first hands over."""
    going = trio.Event()
    started = trio.Event()

    async def held(path: Path) -> CheckReport:
        started.set()
        await going.wait()
        return passing(path)

    first = make_service(tmp_path, held)
    second = ArenaService(first.arena, ArenaStore(first.arena.store_path), ladder=False)
    for intake in (first.intake, second.intake):
        intake.lock_retry_s = intake.poll_s = 0.02
    refused = [0]  # attempts at the home's intake lock that found it held
    real_flock = fcntl.flock

    def flock(descriptor: int, operation: int) -> None:
        try:
            real_flock(descriptor, operation)
        except BlockingIOError:
            refused[0] += 1
            raise

    monkeypatch.setattr(fcntl, "flock", flock)

    def state(service: ArenaService, submission_id: str) -> SubmissionState:
        row = service.store.submission(submission_id)
        assert row is not None
        return row.state

    async def until(done: Callable[[], bool]) -> None:
        with trio.fail_after(10):
            while not done():
                await trio.sleep(0.01)

    async def second_refused(times: int) -> None:
        """Until the second intake has found the lock held ``times`` more times: what it would
        have done with the lock (requeue, sweep, check) it would have done by then."""
        wanted = refused[0] + times
        await until(lambda: refused[0] >= wanted)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            running = trio.CancelScope()

            async def run_first() -> None:
                with running:
                    await first.intake.run()

            nursery.start_soon(run_first)
            mine = first.intake.receive("a", tgz(good_members("mybot")))
            await started.wait()
            assert first.intake.checks
            nursery.start_soon(second.intake.run)
            await second_refused(2)
            assert not second.intake.checks
            assert state(first, mine) is SubmissionState.CHECKING  # not requeued by the second
            assert f"{mine}.tgz" in uploads_left(first)  # nor swept
            theirs = second.intake.receive("b", tgz(good_members("mybot", "2.0.0")))
            await second_refused(2)
            assert state(first, theirs) is SubmissionState.QUEUED  # one check at a time
            going.set()
            await until(lambda: state(first, theirs) is SubmissionState.REJECTED)
            assert state(first, mine) is SubmissionState.ACCEPTED
            await trio.testing.wait_all_tasks_blocked()  # the first is idle: an upload to
            # the second wakes it not, its poll finds it
            idle = second.intake.receive("b", tgz(good_members("idle")))
            await until(lambda: state(first, idle) is SubmissionState.ACCEPTED)
            assert not second.intake.checks
            running.cancel()
            await until(lambda: second.intake.checks)
            later = second.intake.receive("b", tgz(good_members("other")))
            await until(lambda: state(second, later) is SubmissionState.ACCEPTED)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert first.store.owners() == {"mybot": "a", "idle": "b", "other": "b"}
    rows = {row.id: row for row in first.store.submissions()}
    assert sum("another author's" in row.message for row in rows.values()) == 1


def test_the_ladder_starts_no_new_pair_while_an_upload_is_checked(tmp_path: Path) -> None:
    """Bots checked under a ladder playing at full width fail the kit's timings: while the kit
    runs, the pairs under way finish and none starts; play resumes after the verdict."""
    arena = Arena(tmp_path / "home")
    store = ArenaStore(arena.store_path)
    add_author(store, "a")
    for name in "xyz":
        store.add_bot(BotRow(name, "1", name * 64, tmp_path / name, "", "", time.time()))
        store.enter(f"{name}@1", name)
    executor = FakeExecutor(2, seconds=lambda _job: 0.05)
    seen: dict[str, tuple[int, set[str]]] = {}

    async def checker(path: Path) -> CheckReport:
        seen["start"] = (len(executor.jobs), {m.match_id for m in store.matches(LADDER)})
        with trio.fail_after(10):
            while True:  # until what was under way finished, and the ladder, free to start a
                await trio.testing.wait_all_tasks_blocked()  # pair, has had its turn
                if not executor.running:
                    break
                await trio.sleep(0.01)
        seen["end"] = (len(executor.jobs), {m.match_id for m in store.matches(LADDER)})
        return passing(path)

    service = ArenaService(arena, store, jobs=2, executor=executor, checker=checker, seed=1)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            with trio.fail_after(20):
                while len(executor.jobs) < 10:
                    await trio.sleep(0.01)
                submission_id = service.intake.receive("a", tgz(good_members()))
                while (row := service.store.submission(submission_id)) and not row.finished_at:
                    await trio.sleep(0.01)
                after = len(executor.jobs)
                while len(executor.jobs) < after + 6:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert "end" in seen, "play never stopped for the check: the ladder was not held"
    started, scheduled = seen["start"]
    ended, scheduled_then = seen["end"]
    assert scheduled_then == scheduled
    assert {job.match_id for job in executor.jobs[started:ended]} <= scheduled
    found = [row for row in store.submissions() if row.author == "a"]
    assert found[0].state is SubmissionState.ACCEPTED, found[0].message
