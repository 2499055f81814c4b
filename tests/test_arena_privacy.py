"""The arena's public logs and replays: a seat's fault evidence (its stderr tail, what it sent)
is its owner's alone, and a redacted log still verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.replay import load_replay, read_text, verify_records
from tournaments.arena.privacy import redact_text, redacted_log, redacted_replay
from tournaments.views.replay_html import replay_html

GOLDEN = Path(__file__).resolve().parent / "golden"
SECRET = "PRIVATE-STDERR my_password=hunter2"


def with_stderr(tmp_path: Path) -> Path:
    """A real log whose seat-0 faults carry a stderr tail in their evidence (in the fault
    records and in the result's faults alike, as the referee writes them)."""
    lines = []
    for line in (GOLDEN / "format3-strikes.jsonl").read_text().splitlines():
        record = json.loads(line)
        faults = [record] if record["type"] == "fault" else record.get("faults", [])
        if record["type"] in ("fault", "result"):
            for fault in faults:
                fault["evidence"] = {**fault["evidence"], "stderr_tail": SECRET}
        lines.append(json.dumps(record, separators=(",", ":")))
    path = tmp_path / "match.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_evidence_is_in_the_log_as_written(tmp_path: Path) -> None:
    path = with_stderr(tmp_path)
    assert SECRET in path.read_text()
    assert verify_records(read_text(path.read_text(), path)).ok


@pytest.mark.parametrize("visible", [(), (1,)])
def test_a_viewer_who_does_not_own_the_seat_sees_no_evidence(
    tmp_path: Path, visible: tuple[int, ...]
) -> None:
    path = with_stderr(tmp_path)
    text = redacted_log(path, visible)
    assert SECRET not in text
    assert "in-process" not in text  # the whole evidence, not just the stderr
    assert "2c is not in seat 0's hand" in text  # the fault itself stays public
    report = verify_records(read_text(text, path))
    assert report.ok, report.summary()  # the redacted log still verifies
    page = replay_html(redacted_replay(path, visible), None)
    assert SECRET not in page
    assert SECRET in replay_html(load_replay(path), None)  # what the redaction took out


def test_the_owner_of_the_seat_sees_its_evidence(tmp_path: Path) -> None:
    path = with_stderr(tmp_path)
    text = redacted_log(path, (0,))
    assert text.count(SECRET) == path.read_text().count(SECRET)
    assert SECRET in replay_html(redacted_replay(path, (0, 1)), None)


def test_a_torn_line_holding_evidence_is_left_out() -> None:
    text = '{"type":"header"}\n{"type":"fault","seat":0,"evidence":{"stderr_tail":"sec'
    assert "sec" not in redact_text(text, ())
    assert redact_text(text, ()).startswith('{"type":"header"}')
