"""Reading a match log: JSON Lines, then a reader chosen by the header's format version.

Each format version has its own reader, which turns that version's records into today's typed
records (:mod:`referee.replay._records`). A format change adds a version and a reader; the old
readers stay, so every log ever written can still be replayed and verified.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from protocol.bounded import MAX_DEPTH, MAX_DIGITS, JsonObject, TooComplex, loads_json
from referee.replay._records import BadRecord, LogReadError, MatchLogData

MAX_LINE_BYTES: Final = 1 << 20
"""The longest line of a log that is read (1 MiB): a record is at most a few KiB; a longer
line is a bad record, so a reader holds no more than this of a line at once."""
MAX_WHOLE_LOG_BYTES: Final = 16 << 20
"""The largest log read whole into records (16 MiB), for a replay's display (``--print``,
``--html``, the player) and the league audit; a match's log is some 100 KiB. Verifying a log
(:func:`~referee.replay.verify_log`) streams it and has no such cap."""


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One line of a log: its JSON object, or why it is not one."""

    line: int
    data: JsonObject | None
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
    if len(text) > MAX_LINE_BYTES:
        return RawRecord(number, None, _too_long(), False)
    try:
        data = loads_json(text)
    except json.JSONDecodeError as error:
        return RawRecord(number, None, f"{error.msg} at column {error.colno}", cut)
    except TooComplex as error:
        bounds = f"nesting up to {MAX_DEPTH} levels, numbers up to {MAX_DIGITS} digits"
        return RawRecord(number, None, f"{error}: a record holds {bounds}", cut)
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


def _reader(header: JsonObject, path: Path | None) -> VersionReader:
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


def header_data(first: RawRecord | None, path: Path | None) -> JsonObject:
    """The first line's JSON object, checked to be a header of a known format version.

    Raises:
        LogReadError: no first line, not a record, not a header, or a format not known.
    """
    if first is None:
        raise LogReadError(BadRecord(1, None, "the log is empty"), path)
    if first.data is None:
        raise LogReadError(first.problem, path)
    if first.data["type"] != "header":
        reason = (
            f"a log starts with a header record, but this one starts with {first.data['type']!r}"
        )
        raise LogReadError(BadRecord(1, first.data["type"], reason), path)
    _reader(first.data, path)
    return first.data


def read_text(text: str, path: Path | None = None) -> MatchLogData:
    """Read a log from its text; see :func:`read_log`."""
    raws = raw_records(text)
    data = header_data(raws[0] if raws else None, path)
    return _reader(data, path)(path, raws)


def stream_lines(handle: BinaryIO, path: Path | None, line: int = 0) -> Iterator[RawRecord]:
    """The lines of a log file from where ``handle`` is (after line ``line``), decoded one at a
    time: at most :data:`MAX_LINE_BYTES` of the file are held at once. It ends after a line
    too long to read, which it yields as a bad record.

    Raises:
        LogReadError: a line is not UTF-8 (the file is not a log), or the file cannot be read.
    """
    while True:
        try:
            chunk = handle.readline(MAX_LINE_BYTES + 1)
        except OSError as error:
            bad = BadRecord(line + 1, None, f"cannot read: {error.strerror}")
            raise LogReadError(bad, path) from None
        if not chunk:
            return
        line += 1
        complete = chunk.endswith(b"\n")
        if not complete and len(chunk) > MAX_LINE_BYTES:
            yield RawRecord(line, None, _too_long())
            return
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            raise LogReadError(BadRecord(line, None, "not UTF-8 text"), path) from None
        yield parse_line(line, text.removesuffix("\n"), cut=not complete)


def _too_long() -> str:
    return f"a line longer than {MAX_LINE_BYTES >> 20} MiB (no record is that long)"


def open_log(path: Path) -> BinaryIO:
    """A log file opened for reading: a regular file only (a FIFO or a device would block or
    never end).

    Raises:
        LogReadError: not a regular file, or it cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open would wait for a writer
    except OSError as error:
        raise LogReadError(BadRecord(0, None, f"cannot read: {error.strerror}"), path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogReadError(BadRecord(0, None, "not a regular file"), path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _file_raws(path: Path) -> list[RawRecord]:
    """Every line of a log file of at most :data:`MAX_WHOLE_LOG_BYTES`, decoded.

    Raises:
        LogReadError: the file cannot be read, is too big to read whole, or is not UTF-8.
    """
    with open_log(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_WHOLE_LOG_BYTES:
            reason = (
                f"the log is {size:,} bytes, over the {MAX_WHOLE_LOG_BYTES:,} a replay reads "
                "whole (gin replay --verify checks a log of any size)"
            )
            raise LogReadError(BadRecord(0, None, reason), path)
        return list(stream_lines(handle, path))


def read_log(path: Path) -> MatchLogData:
    """Read a match log file into typed records, whatever format version wrote it.

    Reading stops at the first line that is not a readable record of its version; the records
    before it are kept and :attr:`MatchLogData.stop` says where and why.

    Raises:
        LogReadError: the file cannot be read, is not a regular file, is over
            :data:`MAX_WHOLE_LOG_BYTES`, is not UTF-8, is empty, has no header first, or has a
            format version this code does not know.
    """
    raws = _file_raws(path)
    data = header_data(raws[0] if raws else None, path)
    return _reader(data, path)(path, raws)


def read_records(path: Path) -> list[JsonObject]:
    """Every record of a log file as the JSON object it was written as, in order: for tools
    and tests that look at a record's fields as written (typed records: :func:`read_log`).

    Raises:
        LogReadError: the file cannot be read, a line is not a JSON record, or the header's
            format version is not known.
    """
    raws = _file_raws(path)
    records = []
    for raw in raws:
        if raw.data is None:
            raise LogReadError(raw.problem, path)
        records.append(raw.data)
    if records and records[0]["type"] == "header":
        _reader(records[0], path)
    return records
