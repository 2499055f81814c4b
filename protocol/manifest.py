"""Bot folders and their ``bot.toml`` manifest.

A bot is a folder holding ``bot.toml`` and its code::

    name = "my-bot"                    # lowercase letters, digits, - and _; up to 40
    version = "1.0.0"                  # letters, digits, . + - _; up to 32
    command = ["python", "bot.py"]     # run inside the folder
    author = "Ada"                     # optional
    description = "What it does."      # optional

In ``command``, ``python`` and ``python3`` mean the referee's own interpreter (which has the SDK
installed); any other program is looked up in the folder, then on ``PATH``.

Validation reports every problem at once, one plain sentence each, and never a traceback.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import re
import shlex
import shutil
import stat
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final

from protocol.bounded import JsonObject, TooComplex, loads_toml

MANIFEST: Final = "bot.toml"
NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
VERSION_PATTERN: Final = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}")
KNOWN_KEYS: Final = {"name", "version", "command", "author", "description"}
SYSTEM_PATHS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib64")
"""System folders every bot sees read-only (``referee.sandbox`` mounts them; a test checks), so a
symlink of a bot folder may point into them (a venv's interpreter)."""
CODE_MOUNT: Final = "/bot"
"""Where the sandbox shows a bot its own folder (read-only; its working directory)."""
MIB: Final = 1024 * 1024
MAX_FOLDER_BYTES: Final = 50 * MIB
MAX_FILES: Final = 10_000
PYTHON_NAMES: Final = {"python", "python3"}
SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
"""The ``PATH`` a bot runs with: a program not in its folder is looked up there, and only there."""
OUTSIDE_RULE: Final = (
    "a bot sees only its own folder and the system's /usr: name a program inside the folder "
    "or on the sandbox's PATH"
)


class ManifestError(ValueError):
    """A bot folder that cannot be admitted; ``problems`` lists every reason."""

    def __init__(self, folder: Path, problems: list[str]) -> None:
        self.folder = folder
        self.problems = problems
        listed = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"{folder} is not a valid bot folder:\n{listed}")


@dataclass(frozen=True, slots=True)
class Manifest:
    """A checked ``bot.toml``."""

    folder: Path
    name: str
    version: str
    command: tuple[str, ...]
    author: str = ""
    description: str = ""
    files: int = 0
    """How many files the folder holds, leaving out the ignored ones."""

    @property
    def ident(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def argv(self) -> list[str]:
        """The command to start the bot, with ``python`` resolved to this interpreter."""
        program, *args = self.command
        if program in PYTHON_NAMES:
            return [sys.executable, *args]
        local = self.folder / program
        if _is_file(local):  # not resolved: a venv's python must run as itself, links and all
            return [os.path.abspath(local), *args]
        return [shutil.which(program, path=SANDBOX_PATH) or program, *args]


MAX_MANIFEST_BYTES: Final = 64 * 1024


def _read_toml(path: Path, problems: list[str]) -> JsonObject:
    try:
        with path.open("rb") as handle:
            text = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError as error:
        problems.append(f"cannot read {MANIFEST}: {error.strerror}")
        return {}
    if len(text) > MAX_MANIFEST_BYTES:
        problems.append(f"{MANIFEST} is over {MAX_MANIFEST_BYTES // 1024} KiB: not a manifest")
        return {}
    try:
        return loads_toml(text.decode("utf-8"))
    except UnicodeDecodeError:
        problems.append(f"{MANIFEST} is not UTF-8 text (a TOML file is)")
    except tomllib.TOMLDecodeError as error:
        problems.append(f"{MANIFEST} is not valid TOML: {error}")
    except TooComplex as error:
        problems.append(f"{MANIFEST} is not a manifest: {error}")
    return {}


def _text_field(
    data: JsonObject, key: str, pattern: re.Pattern[str], problems: list[str], rule: str
) -> str:
    value = data.get(key)
    if value is None:
        problems.append(f"missing field '{key}' ({rule})")
        return ""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        problems.append(f"bad {key} {value!r}: {rule}")
        return ""
    return value


def _inside(name: str) -> bool:
    """Whether a path names something inside the bot folder, by its text: relative, and ``..``
    never climbing out.

    >>> _inside("bin/run"), _inside("bin/../run"), _inside("bin/../../x/run"), _inside("/b/x")
    (True, True, False, False)
    """
    if os.path.isabs(name):
        return False
    normal = os.path.normpath(name)
    return normal != ".." and not normal.startswith("../")


def _command(data: JsonObject, folder: Path, problems: list[str]) -> tuple[str, ...]:
    value = data.get("command")
    if value is None:
        problems.append(
            'missing field \'command\' (the program that starts the bot, e.g. ["python", "bot.py"])'
        )
        return ()
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as error:
            problems.append(f"bad command {value!r}: {str(error).lower()}")
            return ()
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problems.append('bad command: a non-empty list of strings, e.g. ["python", "bot.py"]')
        return ()
    command = tuple(value)
    program = command[0]
    if program in PYTHON_NAMES:
        script = next((arg for arg in command[1:] if not arg.startswith("-")), None)
        if script is not None and script.endswith(".py"):
            if not _inside(script):
                problems.append(f"command outside the bot folder: {script} ({OUTSIDE_RULE})")
            elif not _is_file(folder / script):
                problems.append(f"command not found: {script} is not a file in the bot folder")
        return command
    if os.path.isabs(program):
        if not any(Path(program).is_relative_to(system) for system in SYSTEM_PATHS):
            problems.append(f"command outside the bot folder: {program} ({OUTSIDE_RULE})")
        elif not _is_file(Path(program)) or not os.access(program, os.X_OK):
            problems.append(f"command not found: {program} is not a program")
        return command
    local = folder / program
    if "/" in program or _exists(local):
        if not _inside(program):
            problems.append(f"command outside the bot folder: {program} ({OUTSIDE_RULE})")
        elif not _is_file(local):
            problems.append(f"command not found: {program} is not a file in the bot folder")
        elif not os.access(local, os.X_OK):
            problems.append(f"command not executable: {program} (chmod +x it)")
    elif shutil.which(program, path=SANDBOX_PATH) is None:
        problems.append(
            f"command not found: {program} is neither in the folder nor on the sandbox's PATH "
            f"({SANDBOX_PATH})"
        )
    return command


IGNORE_FILE: Final = ".ginignore"
ALWAYS_IGNORED: Final = (
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".git",
    ".gin",
)
"""Never part of a bot: caches (the template's tests leave one), version control, an arena home
made inside the folder."""
MAX_IGNORE_BYTES: Final = 4 * MIB
MAX_IGNORE_LINES: Final = 100_000
MAX_IGNORE_GLOBS: Final = 200
"""The most lines of ``.ginignore`` with a wildcard other than one run of ``*`` at its start or
its end: a plain name or path, ``*.log`` and ``build*`` are looked up in a set or a sorted list,
whatever their number; each other glob is tried on every name and path of the folder."""
_WILDCARDS: Final = frozenset("*?[")


def _prefix_free(texts: Iterable[str]) -> tuple[str, ...]:
    """The texts, sorted, without those that start with another one (which says it all).

    >>> _prefix_free(["ab", "a", "b", "abc", "ba"])
    ('a', 'b')
    """
    kept: list[str] = []
    for text in sorted(set(texts)):
        if not kept or not text.startswith(kept[-1]):
            kept.append(text)
    return tuple(kept)


def _starts_with_one(prefixes: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` starts with one of the sorted, prefix-free ``prefixes``: only the last
    one not after ``text`` can (one before it that ``text`` starts with would be its prefix)."""
    index = bisect.bisect_right(prefixes, text)
    return index > 0 and text.startswith(prefixes[index - 1])


def _plain(text: str) -> bool:
    return not _WILDCARDS.intersection(text)


@dataclass(frozen=True, slots=True)
class _Globs:
    """One kind of ``.ginignore`` glob (names, or paths from the folder), compiled: each check
    costs a set lookup, two binary searches and one regular expression of the few real globs,
    however many lines the file has. ``fnmatch.fnmatchcase`` semantics, exactly."""

    exact: frozenset[str]
    """Globs without a wildcard: the text itself."""
    prefixes: tuple[str, ...]
    """``P*``: what the text starts with (sorted, prefix-free)."""
    suffixes: tuple[str, ...]
    """``*S``: what the text ends with, reversed (sorted, prefix-free)."""
    others: re.Pattern[str] | None
    """The rest, as one alternation of ``fnmatch.translate``'s expressions."""

    @classmethod
    def compile(cls, globs: Iterable[str]) -> _Globs:
        exact: set[str] = set()
        prefixes: set[str] = set()
        suffixes: set[str] = set()
        others: dict[str, None] = {}
        for glob in globs:
            core = glob.strip("*")
            if _plain(glob):
                exact.add(glob)
            elif not _plain(core):
                others[glob] = None
            elif not glob.startswith("*"):
                prefixes.add(core)
            elif not glob.endswith("*") or not core:
                suffixes.add(core[::-1])  # ``*`` alone ends with "": everything
            else:
                others[glob] = None  # ``*text*``
        pattern = "|".join(fnmatch.translate(glob) for glob in others)
        return cls(
            frozenset(exact),
            _prefix_free(prefixes),
            _prefix_free(suffixes),
            re.compile(pattern) if pattern else None,
        )

    def match(self, text: str) -> bool:
        """Whether one of the globs matches the whole of ``text``."""
        return (
            text in self.exact
            or _starts_with_one(self.prefixes, text)
            or _starts_with_one(self.suffixes, text[::-1])
            or (self.others is not None and self.others.match(text) is not None)
        )


def _real_glob(glob: str) -> bool:
    """Whether a glob goes to the few tried one by one (see ``MAX_IGNORE_GLOBS``)."""
    core = glob.strip("*")
    return not _plain(core) or (glob.startswith("*") and glob.endswith("*") and bool(core))


def _ignore_globs(text: str) -> list[str]:
    """The globs of a ``.ginignore``'s text: one a line, stripped, ``#`` lines and blank ones
    left out, a trailing ``/`` dropped."""
    globs = []
    for line in text.splitlines():
        glob = line.strip().rstrip("/")
        if glob and not glob.startswith("#"):
            globs.append(glob)
    return globs


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """What a bot folder leaves out (see :func:`ignore_rule`), compiled once: a check is linear
    in the path, not in the number of globs."""

    names: _Globs
    """Globs without ``/``: they match a name at any depth."""
    paths: _Globs
    """Globs with ``/`` (a leading one dropped): they match a path from the folder."""

    @classmethod
    def from_text(cls, text: str) -> IgnoreRule:
        """The rule of a ``.ginignore`` holding ``text``, with :data:`ALWAYS_IGNORED`."""
        globs = [*ALWAYS_IGNORED, *_ignore_globs(text)]
        return cls(
            _Globs.compile(glob for glob in globs if "/" not in glob),
            _Globs.compile(glob.lstrip("/") for glob in globs if "/" in glob),
        )

    def __call__(self, relative: PurePath) -> bool:
        """Whether ``relative`` is left out: one of its names, or it or a folder above it."""
        parts = relative.parts
        if any(self.names.match(part) for part in parts):
            return True
        return any(self.paths.match("/".join(parts[:n])) for n in range(1, len(parts) + 1))

    def leaves_out(self, relative: PurePath) -> bool:
        """``self(relative)`` for an entry whose folder is not left out (a walk that skips what
        is left out, and all below it, asks this): its own name and whole path only."""
        parts = relative.parts
        return bool(parts) and (self.names.match(parts[-1]) or self.paths.match("/".join(parts)))


def _read_ignores(folder: Path) -> tuple[str, str | None]:
    """The text of the folder's ``.ginignore`` ("" if there is none) and why it cannot be used,
    if it cannot: unreadable, not UTF-8, or over a bound (it is read no further than that)."""
    try:
        with (folder / IGNORE_FILE).open("rb") as handle:
            data = handle.read(MAX_IGNORE_BYTES + 1)
    except FileNotFoundError:
        return "", None
    except OSError as error:
        return "", f"cannot read {IGNORE_FILE}: {error.strerror}"
    if len(data) > MAX_IGNORE_BYTES:
        return "", f"{IGNORE_FILE} is over {MAX_IGNORE_BYTES // MIB} MiB, the limit"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", f"cannot read {IGNORE_FILE}: it is not UTF-8 text"
    lines = text.splitlines()
    if len(lines) > MAX_IGNORE_LINES:
        return "", f"{IGNORE_FILE} has over {MAX_IGNORE_LINES} lines, the limit"
    globs = sum(_real_glob(glob.lstrip("/")) for glob in _ignore_globs(text))
    if globs > MAX_IGNORE_GLOBS:
        return "", (
            f"{IGNORE_FILE} has {globs} globs with wildcards other than a leading or trailing "
            f"'*' (such as 'test_*.py' or '*.py[co]'), over {MAX_IGNORE_GLOBS}, the limit"
        )
    return text, None


def ignore_rule(folder: Path) -> IgnoreRule:
    """Whether a path (relative to ``folder``) is left out of the bot: caches, version control and
    what the folder's ``.ginignore`` names (one glob a line, ``#`` comments; a glob without ``/``
    matches a name at any depth, one with ``/`` a path from the folder; a trailing ``/`` is
    ignored). Left-out files are not hashed, copied, packed or counted: the bot does not have
    them. A ``.ginignore`` that cannot be used (unreadable, or over a bound of
    :data:`MAX_IGNORE_BYTES`, :data:`MAX_IGNORE_LINES` and :data:`MAX_IGNORE_GLOBS`) counts as
    empty: the check refuses the folder.

    >>> rule = ignore_rule(Path("/nonexistent"))
    >>> rule(PurePath("src/__pycache__/x.pyc")), rule(PurePath("src/x.py"))
    (True, False)
    """
    return IgnoreRule.from_text(_read_ignores(folder)[0])


def _check_ignores(folder: Path, command: tuple[str, ...], problems: list[str]) -> None:
    """``.ginignore`` is within its bounds, holds plain globs only, and leaves out nothing the
    bot starts from."""
    text, problem = _read_ignores(folder)
    if problem is not None:
        problems.append(problem)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("!") or "**" in line:
            problems.append(
                f"{IGNORE_FILE} line {number}: plain globs only ('!' and '**' are not supported)"
            )
    ignored = IgnoreRule.from_text(text)
    started = [MANIFEST, *(part for part in command if _is_file(folder / part))]
    for name in started:
        relative = PurePath(os.path.normpath(name))
        if not relative.is_absolute() and ignored(relative):
            problems.append(f"{IGNORE_FILE} leaves out {name}, which the bot needs to start")


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False for a path the system cannot even look up (too long, say)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    """``path.exists()``, False for a path the system cannot even look up."""
    try:
        return path.exists()
    except OSError:
        return False


def _link_problem(path: Path, folder: Path) -> str | None:
    """Why a symlink of a bot folder cannot work in the sandbox, if it cannot.

    A link is judged by its own text, one step at a time (a venv's ``python -> python3 ->
    /usr/bin/python3`` is two good links): a relative one must stay in the folder, an absolute
    one must point into the system folders that the sandbox shows every bot.
    """
    target = os.readlink(path)
    name = path.relative_to(folder)
    if os.path.isabs(target):
        if any(Path(target).is_relative_to(system) for system in SYSTEM_PATHS):
            return None
        return (
            f"symlink {name} points to {target}, which a bot does not see (only its own folder "
            f"and {', '.join(SYSTEM_PATHS)}); make a venv with /usr/bin/python3 -m venv"
        )
    inside = Path(os.path.normpath(path.parent / target))
    if inside == folder or inside.is_relative_to(folder):
        return None
    return f"symlink {name} points outside the bot folder (to {target})"


def _kind_problem(mode: int) -> str | None:
    """Why an entry that is neither a regular file, a folder nor a symlink cannot be in a bot."""
    for test, what in (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode) else "special"


@dataclass(frozen=True, slots=True)
class FolderEntry:
    """One entry of a bot folder, as :func:`folder_entries` finds it."""

    path: Path
    """Where it is (for messages: open it through ``parent`` and ``name``)."""
    info: os.stat_result
    """Its own ``lstat``: a symlink is a symlink."""
    parent: int
    """A descriptor of the folder it is in, open while the entry is being looked at: opened
    through it (``dir_fd``), the entry is the one listed, even if a folder on its path was
    swapped for a symlink meanwhile."""
    name: str


_FOLDER_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def folder_entries(folder: Path) -> Iterator[FolderEntry]:
    """Every entry below ``folder`` that is part of the bot (the ignored ones left out, and
    nothing below them), in sorted order, depth first. Symlinks are never followed and each
    folder is opened through its parent's descriptor, never by its path, so nothing outside
    the folder is looked at, even when the folder changes while it is walked.

    Raises:
        OSError: a folder cannot be listed (or is no longer a folder).
    """
    folder = Path(os.path.abspath(folder))
    root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        yield from _walk(root, folder, PurePath(), ignore_rule(folder))
    finally:
        os.close(root)


def _walk(
    descriptor: int, folder: Path, relative: PurePath, rule: IgnoreRule
) -> Iterator[FolderEntry]:
    with os.scandir(descriptor) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        inside = relative / entry.name
        if rule.leaves_out(inside):  # what is below a left-out folder is never listed
            continue
        info = entry.stat(follow_symlinks=False)
        yield FolderEntry(folder / inside, info, descriptor, entry.name)
        if stat.S_ISDIR(info.st_mode):
            child = os.open(entry.name, _FOLDER_FLAGS, dir_fd=descriptor)
            try:
                yield from _walk(child, folder, inside, rule)
            finally:
                os.close(child)


def _scan_folder(folder: Path, problems: list[str]) -> int:
    """Count the files (the ignored ones left out), with a problem past the size or count limit
    (the scan stops there); only regular files, folders and symlinks that work inside the
    sandbox may be in a bot folder."""
    folder = Path(os.path.abspath(folder))
    size = files = entries = 0
    try:
        for entry in folder_entries(folder):
            path, info = entry.path, entry.info
            entries += 1
            if entries > MAX_FILES:
                problems.append(f"too many files: more than {MAX_FILES}, the limit")
                break
            name = path.relative_to(folder)
            what = _kind_problem(info.st_mode)
            if what is not None:
                problems.append(
                    f"{name} is {what}: a bot folder holds only files, folders and symlinks"
                )
            elif stat.S_ISLNK(info.st_mode):
                problem = _link_problem(path, folder)
                if problem is not None:
                    problems.append(problem)
            elif stat.S_ISREG(info.st_mode):
                files += 1
                size += info.st_size
                if size > MAX_FOLDER_BYTES:
                    break
    except OSError as error:
        problems.append(f"cannot read the bot folder: {error.strerror} ({error.filename})")
    if size > MAX_FOLDER_BYTES:
        problems.append(
            f"folder too large: over {MAX_FOLDER_BYTES // MIB} MiB, the limit "
            f"(leave out what the bot does not need with {IGNORE_FILE})"
        )
    return files


def load_manifest(folder: Path | str) -> Manifest:
    """Read and check a bot folder.

    Raises:
        ManifestError: with every problem found (missing folder or manifest, bad or missing
            fields, unknown fields, command not found, folder too large, outside symlinks).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ManifestError(folder, [f"no such folder: {folder}"])
    path = folder / MANIFEST
    if path.is_symlink():
        raise ManifestError(folder, [f"{MANIFEST} is a symlink: it must be a file of the folder"])
    if not path.is_file():
        raise ManifestError(folder, [f"no {MANIFEST} in {folder}"])
    problems: list[str] = []
    data = _read_toml(path, problems)
    if problems:
        raise ManifestError(folder, problems)
    name = _text_field(
        data,
        "name",
        NAME_PATTERN,
        problems,
        "lowercase letters, digits, '-' and '_', at most 40, e.g. 'my-bot'",
    )
    version = _text_field(
        data,
        "version",
        VERSION_PATTERN,
        problems,
        "letters, digits, '.', '+', '-' and '_', at most 32, e.g. '1.0.0'",
    )
    command = _command(data, folder, problems)
    for key in ("author", "description"):
        if key in data and not isinstance(data[key], str):
            problems.append(f"bad {key}: must be text")
    for key in sorted(set(data) - KNOWN_KEYS):
        problems.append(f"unknown field '{key}' (known: {', '.join(sorted(KNOWN_KEYS))})")
    files = _scan_folder(folder, problems)
    _check_ignores(folder, command, problems)
    if problems:
        raise ManifestError(folder, problems)
    return Manifest(
        folder=folder,
        name=name,
        version=version,
        command=command,
        author=str(data.get("author", "")),
        description=str(data.get("description", "")),
        files=files,
    )
