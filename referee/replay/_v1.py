"""The reader of log formats 1, 2 and 3 (``referee.matchlog``, ``LOG_FORMAT``).

Format 2 is format 1 with salted commitments: each ``hand_end`` and the ``result`` carry a
``salt`` (hex); the walker checks the commitments by the header's format.

Each record is read by its own ``from_json`` (:mod:`referee.records`), which checks every field
for presence and type (a time in milliseconds: finite, never negative); a record that fails
names its line and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from referee.records import BODY_READERS, BodyRecord, FieldError, Header
from referee.replay._read import RawRecord
from referee.replay._records import BadRecord, LogReadError, MatchLogData


def header_record(raw: RawRecord, path: Path | None) -> Header:
    """The header of a log, read by :meth:`Header.from_json`.

    Raises:
        LogReadError: it is not a readable header.
    """
    assert raw.data is not None
    try:
        return Header.from_json(raw.data, raw.line)
    except (ValueError, TypeError) as error:
        raise LogReadError(BadRecord(raw.line, "header", str(error)), path) from None


def body_record(raw: RawRecord) -> BodyRecord | BadRecord:
    """One record after the header, or why it cannot be read."""
    if raw.data is None:
        return raw.problem
    kind = raw.data["type"]
    read = BODY_READERS.get(kind)
    if read is None:
        return BadRecord(raw.line, kind, f"unknown record type {kind!r}")
    try:
        return read(raw.data, raw.line)
    except FieldError as error:
        return BadRecord(raw.line, kind, str(error))


def read(path: Path | None, raws: Sequence[RawRecord]) -> MatchLogData:
    """Read records of formats 1 to 3; stop at the first that cannot be read.

    Raises:
        LogReadError: the header is not a readable header.
    """
    header = header_record(raws[0], path)
    records: list[BodyRecord] = []
    for raw in raws[1:]:
        record = body_record(raw)
        if isinstance(record, BadRecord):
            return MatchLogData(path, header, tuple(records), record, raw.cut)
        records.append(record)
    return MatchLogData(path, header, tuple(records))
