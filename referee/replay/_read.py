"""Reading a match log: JSON Lines, then a reader chosen by the header's format version.

Each format version has its own reader, which turns that version's records into today's typed
records (:mod:`referee.replay._records`). A format change adds a version and a reader; the old
readers stay, so every log ever written can still be replayed and verified.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.replay._records import BadRecord, LogReadError, MatchLogData


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One line of a log: its JSON object, or why it is not one."""

    line: int
    data: dict[str, Any] | None
    error: str | None = None
    cut: bool = False
    """The last line, without its newline: a record cut off mid-line."""

    @property
    def problem(self) -> BadRecord:
        """Why this line is not a record (only when ``data`` is ``None``)."""
        if self.cut:
            reason = (
                "the record is cut off mid-line: the log was truncated "
                f"(the writer stopped while writing it; {self.error})"
            )
        else:
            reason = f"not a JSON record ({self.error})"
        return BadRecord(self.line, None, reason)


VersionReader = Callable[[Path | None, Sequence[RawRecord]], MatchLogData]


def parse_line(number: int, text: str, cut: bool) -> RawRecord:
    """One line of log text as a raw record (never raises)."""
    if not text.strip():
        return RawRecord(number, None, "an empty line", cut)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return RawRecord(number, None, f"{error.msg} at column {error.colno}", cut)
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return RawRecord(number, None, "a record must be a JSON object with a 'type'", False)
    return RawRecord(number, data)


def raw_records(text: str) -> list[RawRecord]:
    """Split log text into lines and decode each as JSON (never raises).

    >>> [r.data for r in raw_records('{"type": "header"}\\n')]
    [{'type': 'header'}]
    >>> raw_records('{"type": "header"}\\n{"ty')[1].cut
    True
    """
    lines = text.split("\n")
    complete = lines[-1] == ""
    if complete:
        lines.pop()
    return [
        parse_line(number, line, cut=not complete and number == len(lines))
        for number, line in enumerate(lines, start=1)
    ]


def _readers() -> dict[int, VersionReader]:
    from referee.replay import _v1  # noqa: PLC0415 - the version modules import this one

    return {1: _v1.read, 2: _v1.read, 3: _v1.read}


def _reader(header: dict[str, Any], path: Path | None) -> VersionReader:
    """The reader of the format version ``header`` names.

    Raises:
        LogReadError: a version this code does not know.
    """
    version = header.get("format")
    reader = _readers().get(version) if isinstance(version, int) else None
    if reader is None:
        formats = ", ".join(str(known) for known in known_formats())
        reason = f"log format {version!r} is not known: this gin reads format {formats}"
        raise LogReadError(BadRecord(1, "header", reason), path)
    return reader


def known_formats() -> tuple[int, ...]:
    """The log format versions this code reads.

    >>> known_formats()
    (1, 2, 3)
    """
    return tuple(sorted(_readers()))


def read_text(text: str, path: Path | None = None) -> MatchLogData:
    """Read a log from its text; see :func:`read_log`."""
    raws = raw_records(text)
    if not raws:
        raise LogReadError(BadRecord(1, None, "the log is empty"), path)
    first = raws[0]
    if first.data is None:
        raise LogReadError(first.problem, path)
    if first.data["type"] != "header":
        reason = (
            f"a log starts with a header record, but this one starts with {first.data['type']!r}"
        )
        raise LogReadError(BadRecord(1, first.data["type"], reason), path)
    return _reader(first.data, path)(path, raws)


def _file_text(path: Path) -> str:
    """A log file's text.

    Raises:
        LogReadError: the file cannot be read, or is not UTF-8.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LogReadError(BadRecord(0, None, f"cannot read: {error.strerror}"), path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise LogReadError(BadRecord(line, None, "not UTF-8 text"), path) from None


def read_log(path: Path) -> MatchLogData:
    """Read a match log file into typed records, whatever format version wrote it.

    Reading stops at the first line that is not a readable record of its version; the records
    before it are kept and :attr:`MatchLogData.stop` says where and why.

    Raises:
        LogReadError: the file cannot be read, is not UTF-8, is empty, has no header first, or
            has a format version this code does not know.
    """
    return read_text(_file_text(path), path)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record of a log file as the JSON object it was written as, in order: for tools
    and tests that look at a record's fields as written (typed records: :func:`read_log`).

    Raises:
        LogReadError: the file cannot be read, a line is not a JSON record, or the header's
            format version is not known.
    """
    raws = raw_records(_file_text(path))
    records = []
    for raw in raws:
        if raw.data is None:
            raise LogReadError(raw.problem, path)
        records.append(raw.data)
    if records and records[0]["type"] == "header":
        _reader(records[0], path)
    return records
