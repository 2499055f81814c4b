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

import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

MANIFEST: Final = "bot.toml"
NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
VERSION_PATTERN: Final = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}")
KNOWN_KEYS: Final = {"name", "version", "command", "author", "description"}
MAX_FOLDER_BYTES: Final = 50 * 1024 * 1024
MAX_FILES: Final = 10_000
PYTHON_NAMES: Final = {"python", "python3"}


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
    size_bytes: int = 0
    files: int = 0

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
        if local.is_file():
            return [str(local.resolve()), *args]
        return [shutil.which(program) or program, *args]


def _read_toml(path: Path, problems: list[str]) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        problems.append(f"{MANIFEST} is not valid TOML: {error}")
    except OSError as error:
        problems.append(f"cannot read {MANIFEST}: {error.strerror}")
    return {}


def _text_field(
    data: dict[str, Any], key: str, pattern: re.Pattern[str], problems: list[str], rule: str
) -> str:
    value = data.get(key)
    if value is None:
        problems.append(f"missing field '{key}' ({rule})")
        return ""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        problems.append(f"bad {key} {value!r}: {rule}")
        return ""
    return value


def _command(data: dict[str, Any], folder: Path, problems: list[str]) -> tuple[str, ...]:
    value = data.get("command")
    if value is None:
        problems.append(
            'missing field \'command\' (the program that starts the bot, e.g. ["python", "bot.py"])'
        )
        return ()
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problems.append('bad command: a non-empty list of strings, e.g. ["python", "bot.py"]')
        return ()
    command = tuple(value)
    program = command[0]
    if program in PYTHON_NAMES:
        script = next((arg for arg in command[1:] if not arg.startswith("-")), None)
        if script is not None and script.endswith(".py") and not (folder / script).is_file():
            problems.append(f"command not found: {script} is not a file in the bot folder")
        return command
    local = folder / program
    if "/" in program or local.exists():
        if not local.is_file():
            problems.append(f"command not found: {program} is not a file in the bot folder")
        elif not os.access(local, os.X_OK):
            problems.append(f"command not executable: {program} (chmod +x it)")
    elif shutil.which(program) is None:
        problems.append(f"command not found: {program} is neither in the folder nor on PATH")
    return command


def _scan_folder(folder: Path, problems: list[str]) -> tuple[int, int]:
    """Total size and file count; symlinks must stay inside the folder."""
    root = folder.resolve()
    size = files = 0
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            target = path.resolve()
            if root != target and root not in target.parents:
                problems.append(
                    f"symlink {path.relative_to(folder)} points outside the bot "
                    f"folder (to {os.readlink(path)})"
                )
            continue
        if path.is_file():
            files += 1
            size += path.stat().st_size
    if size > MAX_FOLDER_BYTES:
        problems.append(
            f"folder too large: {size / 1e6:.1f} MB, the limit is {MAX_FOLDER_BYTES / 1e6:.0f} MB"
        )
    if files > MAX_FILES:
        problems.append(f"too many files: {files}, the limit is {MAX_FILES}")
    return size, files


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
    size, files = _scan_folder(folder, problems)
    if problems:
        raise ManifestError(folder, problems)
    return Manifest(
        folder=folder,
        name=name,
        version=version,
        command=command,
        author=str(data.get("author", "")),
        description=str(data.get("description", "")),
        size_bytes=size,
        files=files,
    )
