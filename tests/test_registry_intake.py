"""What the registry takes in: only what it can keep, judged on the copy it keeps.

Each case was found by trying odd, hostile or unlucky bot folders (issue 17): device nodes and
named pipes, symlink loops, unreadable and binary files, a command that climbs out of the folder,
a folder changed while it is submitted. Every one must end in a one-line refusal (or a clean
admission) and leave no half-made entry in the registry.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from protocol.manifest import (
    MAX_FILES,
    FolderEntry,
    Manifest,
    ManifestError,
    folder_entries,
    load_manifest,
)
from referee.conformance import CheckReport
from referee.local import code_hash
from tournaments.registry import Arena, Checker, RegistryError, submit
from tournaments.store import BotRow, Store

SAMPLE = Path(__file__).resolve().parent.parent / "sample_bots" / "random"


def bot_folder(where: Path, version: str = "1.0.0", command: str | None = None) -> Path:
    """A copy of the random sample bot, with its own version (and command)."""
    folder = where / f"bot-{version}"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (folder / "bot.toml").read_text().replace('"1.0.0"', f'"{version}"')
    if command is not None:
        manifest = "\n".join(
            f"command = {command}" if line.startswith("command") else line
            for line in manifest.splitlines()
        )
    (folder / "bot.toml").write_text(manifest + "\n")
    return folder


def problems(folder: Path) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    return caught.value.problems


def arena(tmp_path: Path) -> tuple[Arena, Store]:
    place = Arena(tmp_path / "home")
    return place, place.open_store()


def submitted(place: Arena, store: Store, folder: Path, checker: Checker | None = None) -> BotRow:
    return trio.run(submit, place, store, folder, checker)


def assert_registry_clean(place: Arena, store: Store) -> None:
    """No row and no folder (finished or half-made) in the registry."""
    assert store.bots() == []
    leftovers = list(place.bots_dir.rglob("*")) if place.bots_dir.exists() else []
    assert leftovers == []  # not even an empty folder for the name


def test_a_device_node_is_refused_before_anything_is_copied(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    os.mknod(folder / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    assert problems(folder) == [
        "zero is a character device: a bot folder holds only files, folders and symlinks"
    ]
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="character device"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def test_a_named_pipe_is_refused_and_leaves_no_half_made_copy(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    os.mkfifo(folder / "pipe")
    assert problems(folder) == [
        "pipe is a named pipe: a bot folder holds only files, folders and symlinks"
    ]
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="named pipe"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def test_a_pipe_that_appears_after_the_check_is_not_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy judges every entry again: a pipe made between the check and the copy ends the
    submission with one line, without blocking on the pipe."""
    folder = bot_folder(tmp_path)

    def check_then_add_a_pipe(where: Path | str) -> Manifest:
        manifest = load_manifest(where)
        if Path(where) == folder:
            os.mkfifo(folder / "late-pipe")
        return manifest

    monkeypatch.setattr("tournaments.registry.load_manifest", check_then_add_a_pipe)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match=r"late-pipe .*not a file, folder or symlink"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def test_too_many_symlinks_stop_the_scan_at_the_limit(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    links = folder / "links"
    links.mkdir()
    for index in range(MAX_FILES + 10):
        (links / f"l{index}").symlink_to("../bot.py")
    started = time.perf_counter()
    assert problems(folder) == [f"too many files: more than {MAX_FILES}, the limit"]
    assert time.perf_counter() - started < 30  # a generous ceiling: the point is it ends


def test_symlink_loops_are_kept_as_links_and_never_followed(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "self").symlink_to(".")
    (folder / "x").symlink_to("y")
    (folder / "y").symlink_to("x")
    (folder / "a").symlink_to("a")
    load_manifest(folder)
    place, store = arena(tmp_path)
    row = submitted(place, store, folder)
    kept = row.path
    assert {os.readlink(kept / name) for name in ("self", "x", "y", "a")} == {".", "y", "x", "a"}
    assert code_hash(kept) == row.hash


def test_a_command_that_is_a_symlink_loop_is_a_problem(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, command='["./x"]')
    (folder / "x").symlink_to("y")
    (folder / "y").symlink_to("x")
    assert problems(folder) == ["command not found: ./x is not a file in the bot folder"]


def test_an_unreadable_file_is_a_one_line_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root every file is readable, so the refusal of the file system is simulated."""
    folder = bot_folder(tmp_path)
    secret = folder / "weights.bin"
    secret.write_bytes(b"\0" * 10)
    real_open = os.open

    def refusing_open(path: str | os.PathLike[str], flags: int, *args: int, **kw: int) -> int:
        if Path(path).name == secret.name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", refusing_open)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError) as caught:
        submitted(place, store, folder)
    assert str(caught.value) == f"cannot copy {secret}: Permission denied"
    assert_registry_clean(place, store)


def test_a_binary_manifest_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "bot.toml").write_bytes(bytes(range(256)))
    assert problems(folder) == ["bot.toml is not UTF-8 text (a TOML file is)"]


def test_a_huge_manifest_is_not_read_whole(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "bot.toml").write_text("# " + "x" * 200_000 + "\n")
    assert problems(folder) == ["bot.toml is over 64 KiB: not a manifest"]


def test_a_manifest_symlinked_from_outside_is_not_read(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    outside = tmp_path / "elsewhere.toml"
    outside.write_text((folder / "bot.toml").read_text())
    (folder / "bot.toml").unlink()
    (folder / "bot.toml").symlink_to(outside)
    assert problems(folder) == ["bot.toml is a symlink: it must be a file of the folder"]


def test_an_unbalanced_quote_in_the_command_is_a_problem(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, command="'python \"bot.py'")
    assert problems(folder) == ["bad command 'python \"bot.py': no closing quotation"]


@pytest.mark.parametrize(
    "command",
    ['["../outside/run.sh"]', '["sub/../../outside/run.sh"]', '["python", "../outside/bot.py"]',
     '["/opt/outside/run.sh"]', '"../outside/run.sh --fast"'],
)  # fmt: skip
def test_a_command_outside_the_folder_is_refused(tmp_path: Path, command: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "run.sh").write_text("#!/bin/sh\nexec python3 bot.py\n")
    (outside / "run.sh").chmod(0o755)
    (outside / "bot.py").write_text("")
    folder = bot_folder(tmp_path, command=command)
    [problem] = problems(folder)
    assert problem.startswith("command outside the bot folder: ")
    assert "a bot sees only its own folder" in problem


def test_a_system_program_by_absolute_path_is_accepted(tmp_path: Path) -> None:
    env = shutil.which("env", path="/usr/bin:/bin")
    assert env is not None
    folder = bot_folder(tmp_path, command='["/usr/bin/env", "python3", "bot.py"]')
    assert load_manifest(folder).command[0] == "/usr/bin/env"


def test_a_program_found_only_off_the_sandbox_path_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host's PATH is not the bot's: a program the sandbox cannot see is not found."""
    private = tmp_path / "private-bin"
    private.mkdir()
    (private / "only-here").write_text("#!/bin/sh\n")
    (private / "only-here").chmod(0o755)
    monkeypatch.setenv("PATH", f"{private}:{os.environ['PATH']}")
    folder = bot_folder(tmp_path, command='["only-here"]')
    [problem] = problems(folder)
    assert problem.startswith("command not found: only-here is neither in the folder nor on the")


def test_an_absolute_symlink_outside_the_system_is_refused(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "data").symlink_to(tmp_path)
    [problem] = problems(folder)
    assert problem.startswith(f"symlink data points to {tmp_path}, which a bot does not see")


def test_a_folder_changed_during_the_check_registers_what_was_copied(tmp_path: Path) -> None:
    """The conformance kit runs the copy; a change to the folder meanwhile does not reach the
    registry, and the row's hash is the kept copy's."""
    folder = bot_folder(tmp_path)

    async def checker_that_edits_the_folder(checked: Path) -> CheckReport:
        assert checked != folder  # the copy is checked, not the folder
        (folder / "bot.py").write_text("# changed while submitted\n")
        return CheckReport(checked, "random@1.0.0", ())

    place, store = arena(tmp_path)
    row = submitted(place, store, folder, checker_that_edits_the_folder)
    kept = row.path
    assert code_hash(kept) == row.hash
    assert (kept / "bot.py").read_text() == (SAMPLE / "bot.py").read_text()


def test_a_copy_changed_during_its_check_is_not_registered(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)

    async def checker_that_edits_the_copy(checked: Path) -> CheckReport:
        (checked / "bot.py").chmod(0o644)
        (checked / "bot.py").write_text("# swapped\n")
        return CheckReport(checked, "random@1.0.0", ())

    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="changed while it was checked"):
        submitted(place, store, folder, checker_that_edits_the_copy)
    assert_registry_clean(place, store)


def test_a_kept_copy_is_complete_read_only_and_hashes_as_its_row(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "sub" / "table.txt").write_text("x")
    place, store = arena(tmp_path)
    row = submitted(place, store, folder)
    kept = row.path
    assert code_hash(kept) == code_hash(folder) == row.hash
    assert not (kept / "sub" / "table.txt").stat().st_mode & 0o222
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no staging left
    again = submitted(place, store, folder)
    assert again == row
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]


def test_a_file_that_grows_past_the_limit_while_copied_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy keeps its own count of bytes: a folder that passed the check and then grew is
    refused, whatever the check saw (here the copy's limit is made smaller than the check's)."""
    folder = bot_folder(tmp_path)
    (folder / "weights.bin").write_bytes(b"\0" * 5000)
    monkeypatch.setattr("tournaments.registry.MAX_FOLDER_BYTES", 4000)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="grew past"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def test_a_manifest_changed_between_check_and_copy_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy's manifest is read again: one that now names another version is not kept under
    the version that was checked."""
    folder = bot_folder(tmp_path)
    reads: list[Path] = []

    def bumped(where: Path | str) -> Manifest:
        manifest = load_manifest(where)
        reads.append(Path(where))
        return manifest if len(reads) == 1 else dataclasses.replace(manifest, version="9.9.9")

    monkeypatch.setattr("tournaments.registry.load_manifest", bumped)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="changed while it was submitted"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def test_an_entry_that_is_no_longer_a_file_once_opened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file swapped for a named pipe between its listing and its opening is caught by the
    open file's own kind (the listing said regular file), without blocking on the pipe."""
    folder = bot_folder(tmp_path)
    os.mkfifo(folder / "swapped")

    def as_if_regular(source: Path) -> Iterator[FolderEntry]:
        for entry in folder_entries(source):
            if entry.name == "swapped":
                info = os.stat_result((stat.S_IFREG | 0o644, *entry.info[1:]))
                entry = dataclasses.replace(entry, info=info)  # noqa: PLW2901
            yield entry

    monkeypatch.setattr("tournaments.registry.folder_entries", as_if_regular)
    monkeypatch.setattr("tournaments.registry.load_manifest", _checked)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="swapped is not a regular file"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)


def _checked(where: Path | str) -> Manifest:
    """The manifest check without its scan of the folder (which would see the pipe)."""
    folder = Path(where)
    data = (folder / "bot.toml").read_text()
    version = data.split('version = "')[1].split('"')[0]
    return Manifest(folder, "random", version, ("python", "bot.py"))


def test_a_folder_swapped_for_a_symlink_while_copied_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of the bot replaced by a link to outside between its listing and its copy: the
    copy opens each folder through its parent's descriptor, without following links, so the
    outside is never read (it was: the copy kept a secret from outside the folder)."""
    folder = bot_folder(tmp_path)
    (folder / "z").mkdir()
    (folder / "z" / "table.txt").write_text("mine")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "table.txt").write_text("TOP SECRET")
    real_open = os.open
    opened: list[str] = []

    def swap_then_open(path: str | os.PathLike[str], flags: int, *args: int, **kw: int) -> int:
        if str(path) == "z" and flags & os.O_DIRECTORY:
            opened.append("z")
            if len(opened) == 2:  # the copy's walk (the check's was the first): listed as a
                shutil.rmtree(folder / "z")  # folder, a link by the time it is opened
                (folder / "z").symlink_to(outside)
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", swap_then_open)
    place, store = arena(tmp_path)
    with pytest.raises(RegistryError, match="cannot copy"):
        submitted(place, store, folder)
    assert_registry_clean(place, store)
