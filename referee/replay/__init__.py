"""Replaying and verifying match logs.

:func:`verify_log` re-plays a log through the rules engine and names the first record that
disagrees; :func:`load_replay` turns a log into steps as the referee or either seat saw them.
Logs are read by a reader per format version (:func:`read_log`), so old logs stay readable.
"""

from referee.replay._find import RUNS_DIR, LogNotFound, find_log
from referee.replay._read import known_formats, read_log, read_records, read_text
from referee.replay._records import (
    ActionRecord,
    BadRecord,
    BodyRecord,
    FaultRecord,
    HandEndRecord,
    HandStart,
    Header,
    LogReadError,
    MatchLogData,
    Request,
    ResultRecord,
    SeatIdentity,
    VerifyStatus,
)
from referee.replay._verify import (
    Replay,
    VerifyReport,
    build_replay,
    load_replay,
    verify_log,
    verify_records,
)
from referee.replay._views import (
    VIEWERS,
    SeatHand,
    Showdown,
    Step,
    StepKind,
    Table,
    Viewer,
    viewer_index,
    viewer_name,
)

__all__ = [
    "RUNS_DIR",
    "VIEWERS",
    "ActionRecord",
    "BadRecord",
    "BodyRecord",
    "FaultRecord",
    "HandEndRecord",
    "HandStart",
    "Header",
    "LogNotFound",
    "LogReadError",
    "MatchLogData",
    "Replay",
    "Request",
    "ResultRecord",
    "SeatHand",
    "SeatIdentity",
    "Showdown",
    "Step",
    "StepKind",
    "Table",
    "VerifyReport",
    "VerifyStatus",
    "Viewer",
    "build_replay",
    "find_log",
    "known_formats",
    "load_replay",
    "read_log",
    "read_records",
    "read_text",
    "verify_log",
    "verify_records",
    "viewer_index",
    "viewer_name",
]
