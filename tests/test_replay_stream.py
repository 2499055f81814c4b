"""``gin replay LOG --verify`` reads a log as a stream: a log of any size is verified in bounded
memory and the first bad line is named (a 1 GiB log used to be parsed whole, then fail with a
``MemoryError``); a line longer than the line cap is a bad record, not a line held whole."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.replay import VerifyStatus, verify_log

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "format3-bank.jsonl"
HEADROOM_MIB = 256
"""The address space the verifier may use above what the interpreter holds once the replay
code is imported: well under what reading the whole log would need (its bytes twice over, then
its records)."""


def big_log(path: Path, size: int) -> int:
    """The golden log with ``size`` bytes of stray faults after its first request (a fault
    policy of a billion strikes lets them all be readable and checkable); returns the line of
    the golden log's own first fault, which now disagrees (its strike count is off)."""
    lines = GOLDEN.read_text().splitlines()
    header = json.loads(lines[0])
    header["fault_policy"] = {"strikes": 10**9}
    detail = "x" * 900
    strays = 0
    with path.open("w") as out:
        out.write(json.dumps(header) + "\n" + lines[1] + "\n" + lines[2] + "\n")
        while out.tell() < size:
            strays += 1
            stray = {
                "type": "fault", "seat": 0, "kind": "timeout", "detail": detail,
                "request_id": 1, "elapsed_ms": 1.0, "evidence": {}, "strikes": strays,
                "forfeited": False, "stray": True,
            }  # fmt: skip
            out.write(json.dumps(stray) + "\n")
        out.write("\n".join(lines[3:]) + "\n")
    first_fault = next(i for i, line in enumerate(lines) if '"type":"fault"' in line)
    return first_fault + 1 + strays


CAPPED = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from referee.replay import verify_log
    status = Path("/proc/self/status").read_text().split("VmSize:")[1]
    held = int(status.split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (held + {headroom} * 2**20, resource.RLIM_INFINITY))
    report = verify_log(Path(sys.argv[1]))
    print(json.dumps({{"status": report.status.value, "line": report.problem.line,
                      "records": report.records}}))
    """
).format(headroom=HEADROOM_MIB)


@pytest.mark.slow
def test_a_log_of_hundreds_of_mb_is_verified_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    bad_line = big_log(path, 300 * 2**20)
    assert path.stat().st_size > HEADROOM_MIB * 2**20  # the whole file alone would not fit
    done = subprocess.run(
        [sys.executable, "-c", CAPPED, str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found["status"] == "failed"
    assert found["line"] == bad_line  # near the end: every line before it was walked
    assert found["records"] > bad_line  # every line was scanned, to the last


def test_a_line_over_the_cap_is_a_bad_record_named_by_its_line(tmp_path: Path) -> None:
    lines = GOLDEN.read_text().splitlines()
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join([*lines[:3], '{"type": "x", "pad": "' + "y" * (2 << 20)]) + "\n")
    report = verify_log(path)
    assert report.status is VerifyStatus.FAILED
    assert report.problem is not None
    assert report.problem.line == 4
    assert "a line longer than 1 MiB" in report.problem.reason


def test_a_log_over_the_whole_read_cap_is_refused_for_display_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--print`` and ``--html`` need the whole match: over the cap they refuse in one line;
    ``--verify`` streams it."""
    from typer.testing import CliRunner  # noqa: PLC0415

    from tournaments.cli.app import app  # noqa: PLC0415

    path = tmp_path / "log.jsonl"
    path.write_text(GOLDEN.read_text())
    monkeypatch.setattr("referee.replay._read.MAX_WHOLE_LOG_BYTES", 1000)
    result = CliRunner().invoke(app, ["replay", str(path), "--print"])
    assert result.exit_code == 1, result.output
    assert "over the 1,000 a replay reads whole" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert verify_log(path).ok
