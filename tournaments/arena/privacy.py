"""What of a match log the arena shows to whom.

A log is public in the arena (its download, its replay) but for the fault evidence: a fault's
``evidence`` holds the bot's stderr tail, its exit status and what it sent, which only the
owner of that seat's bot may read (as its kept stderr). :func:`redacted_log` is the log with the
evidence of every other seat emptied, in the fault records and in the result's list of faults
alike, so the redacted log still verifies (the result's faults agree with the fault records). A
line that cannot be read as a record, and holds evidence, is left out (a log cut off mid-line).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, Final

from protocol.bounded import loads_json
from referee.replay import Replay, build_replay, read_text

__all__ = ["redact_text", "redacted_log", "redacted_replay"]


_ENCODE: Final = json.JSONEncoder(separators=(",", ":")).encode
_MARK: Final = '"evidence"'


def _hide(fault: Any, visible: Collection[int]) -> None:  # type: ignore[explicit-any]  # a fault as decoded JSON, of any shape
    if isinstance(fault, dict) and fault.get("seat") not in visible and fault.get("evidence"):
        fault["evidence"] = {}


def redact_text(text: str, visible: Collection[int]) -> str:
    """A log's text with the fault evidence of the seats not in ``visible`` emptied."""
    kept = []
    for line in text.splitlines(keepends=True):
        if _MARK not in line:
            kept.append(line)
            continue
        try:
            record = loads_json(line)
        except ValueError:  # TooComplex too
            continue  # a torn line that may hold evidence: left out
        if not isinstance(record, dict):
            continue
        if record.get("type") == "fault":
            _hide(record, visible)
        elif record.get("type") == "result" and isinstance(record.get("faults"), list):
            for fault in record["faults"]:
                _hide(fault, visible)
        kept.append(_ENCODE(record) + "\n")
    return "".join(kept)


def redacted_log(path: Path, visible: Collection[int]) -> str:
    """The log at ``path`` as a viewer who owns the seats ``visible`` may read it.

    Raises:
        OSError: it cannot be read.
        UnicodeDecodeError: it is not UTF-8.
    """
    return redact_text(path.read_text(encoding="utf-8"), visible)


def redacted_replay(path: Path, visible: Collection[int]) -> Replay:
    """The replay of the log at ``path`` as :func:`redacted_log` shows it.

    Raises:
        OSError, UnicodeDecodeError: it cannot be read.
        LogReadError: it is not a log.
    """
    return build_replay(read_text(redacted_log(path, visible), path))
