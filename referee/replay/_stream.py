"""A log file read as a stream, for verifying a log of any size in bounded memory.

A walk needs two things from further down the log before it reaches them: the result's seed
(to check each deck against, from the first hand on) and each hand's deck, revealed in the
hand's ``hand_end``. So the file is read in passes, a line at a time: a scan that reads every
line to the first it cannot read, keeping only the result; the walk's own pass; and, at each
hand's start, a look ahead to its end. What is held at once is a line (at most
:data:`~referee.replay._read.MAX_LINE_BYTES`), the result and a hand's state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from referee.replay import _v1
from referee.replay._read import RawRecord, header_data, open_log, stream_lines
from referee.replay._records import (
    BadRecord,
    BodyRecord,
    HandEndRecord,
    Header,
    ResultRecord,
)

BodyReader = Callable[[RawRecord], BodyRecord | BadRecord]
_BODY_READERS: dict[int, BodyReader] = {1: _v1.body_record, 2: _v1.body_record, 3: _v1.body_record}
"""Each format version's reader of one record after the header (as ``_read._readers``)."""


class StreamedLog:
    """A log file, scanned once on opening; a walk's source (:class:`~referee.replay._walk.
    WalkSource`). Use it as a context manager: it holds two handles on the file.

    Raises:
        LogReadError: (on opening) as :func:`~referee.replay.read_log`, but for no size.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stop: BadRecord | None = None
        self.truncated = False
        self.count = 0
        """Readable records after the header."""
        self.result: ResultRecord | None = None
        self._handle = open_log(path)
        self._ahead: BinaryIO | None = None
        self._line = 1
        try:
            self.header, self._read_body = self._read_header()
            self._body_start = self._handle.tell()
            self.last_line = self.header.line
            self._scan()
        except BaseException:
            self._handle.close()
            raise

    def __enter__(self) -> StreamedLog:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._handle.close()
        if self._ahead is not None:
            self._ahead.close()

    def _read_header(self) -> tuple[Header, BodyReader]:
        first = next(stream_lines(self._handle, self.path), None)
        data = header_data(first, self.path)
        assert first is not None  # header_data refuses a log without a first line
        return _v1.header_record(first, self.path), _BODY_READERS[data["format"]]

    def _scan(self) -> None:
        """Read every line to the first that cannot be read; keep the last result."""
        for raw in stream_lines(self._handle, self.path, line=1):
            record = self._read_body(raw)
            if isinstance(record, BadRecord):
                self.stop, self.truncated = record, raw.cut
                return
            self.count += 1
            self.last_line = raw.line
            if isinstance(record, ResultRecord):
                self.result = record

    def records(self) -> Iterator[BodyRecord]:
        """The readable records after the header, read again from the file."""
        self._handle.seek(self._body_start)
        for raw in stream_lines(self._handle, self.path, line=1):
            if raw.line > self.last_line:
                return
            record = self._read_body(raw)
            if isinstance(record, BadRecord):  # the file changed since the scan
                return
            self._line = raw.line
            yield record

    def revealed(self, hand: int) -> HandEndRecord | None:
        """The ``hand_end`` of ``hand``: the next hand end after the record just walked (its
        ``hand_start``), if it names that hand and comes before the next hand or the result."""
        if self._ahead is None:
            self._ahead = open_log(self.path)
        self._ahead.seek(self._handle.tell())
        for raw in stream_lines(self._ahead, self.path, line=self._line):
            if raw.line > self.last_line or raw.data is None:
                return None
            kind = raw.data["type"]
            if kind in ("hand_start", "result"):
                return None
            if kind == "hand_end":
                record = self._read_body(raw)
                found = isinstance(record, HandEndRecord) and record.hand == hand
                return record if found and isinstance(record, HandEndRecord) else None
        return None
