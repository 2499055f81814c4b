"""The conformance kit behind ``gin bot check``: everything a bot must do before admission.

The bot plays real series, in its sandbox, against the sample greedy policy (in-process),
seats alternating, until it has made a few hundred decisions. Any fault stops the check (the
fault policy forfeits on the first), and each failed item says what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from protocol.manifest import ManifestError, load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult
from referee.remote import JailFactory, RemoteSeat
from referee.rules import GreedyPolicy
from referee.seats import InProcessSeat, Seat

DECISIONS: Final = 300
MAX_SERIES: Final = 12


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One line of the checklist."""

    name: str
    passed: bool
    detail: str = ""
    """For a failure: what happened and what to do."""


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The whole checklist for one bot folder."""

    folder: Path
    ident: str
    items: tuple[CheckItem, ...]
    decisions: int = 0
    series: int = 0
    startup_ms: float | None = None
    faults: tuple[Fault, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """Whether every item passed."""
        return all(item.passed for item in self.items)


_ADVICE: Final = {
    FaultKind.STARTUP_FAILURE: (
        "starts and says hello",
        "connect to GIN_REFEREE and send Hello with GIN_TOKEN, protocol_version 1 and the name "
        "and version of bot.toml within the start-up budget",
    ),
    FaultKind.TIMEOUT: ("answers every request in time", "answer within the move time"),
    FaultKind.ILLEGAL_ACTION: (
        "plays only legal actions",
        "answer with one of DecisionRequest.legal_actions",
    ),
    FaultKind.PROTOCOL_VIOLATION: (
        "follows the protocol",
        "echo each request_id, send only Actions after the Hello, one stream",
    ),
    FaultKind.CRASH: (
        "handles every event and plays to the end",
        "keep the stream open until the Goodbye; see the stderr tail",
    ),
}


def stderr_lines(fault: Fault, count: int = 3) -> list[str]:
    """The last ``count`` lines of the bot's stderr in a fault's evidence (raw bot text)."""
    return str(fault.evidence.get("stderr_tail", "")).strip().splitlines()[-count:]


def _fault_line(fault: Fault) -> str:
    _, advice = _ADVICE[fault.kind]
    where = f" on request {fault.request_id}" if fault.request_id else ""
    tail = stderr_lines(fault)
    stderr = f" (stderr: {' | '.join(tail)})" if tail else ""
    return f"{fault.detail}{where}: {advice}{stderr}"


def _fault_items(faults: list[Fault]) -> list[CheckItem]:
    items = []
    for kind, (name, _) in _ADVICE.items():
        found = [fault for fault in faults if fault.kind is kind]
        items.append(CheckItem(name, not found, _fault_line(found[0]) if found else ""))
    return items


def _exit_item(seat: RemoteSeat | None) -> CheckItem:
    name = "leaves cleanly after the goodbye"
    if seat is None:
        return CheckItem(name, False, "never ran")
    report: Any = seat.teardown_report
    leftover = tuple(getattr(report, "leftover", ()))
    if seat.exit_after_goodbye is None:
        return CheckItem(
            name, False, "still running a second after the Goodbye: exit when the stream ends"
        )
    if seat.exit_after_goodbye != 0:
        return CheckItem(
            name, False, f"exited with status {seat.exit_after_goodbye} after the Goodbye: exit 0"
        )
    if leftover:
        return CheckItem(
            name,
            False,
            f"{len(leftover)} process(es) outlived the bot: do not leave children behind",
        )
    return CheckItem(name, True)


async def check_bot(
    folder: Path,
    jails: JailFactory,
    *,
    decisions: int = DECISIONS,
    time_control: TimeControl | None = None,
    seed: int = 20261129,
    log_dir: Path | None = None,
) -> CheckReport:
    """Run the checklist on a bot folder (series against greedy until ``decisions``)."""
    try:
        manifest = load_manifest(folder)
    except ManifestError as error:
        return CheckReport(
            folder, "?", (CheckItem("manifest is valid", False, "; ".join(error.problems)),)
        )
    made = series = 0
    faults: list[Fault] = []
    last: RemoteSeat | None = None
    startup: float | None = None
    clean_exits: list[CheckItem] = []
    while made < decisions and series < MAX_SERIES and not faults:
        seat_index = series % 2
        bot = remote_seat(manifest, jails, f"check-{manifest.name}-{series}")
        other = InProcessSeat(GreedyPolicy(), "greedy", "sample")
        seats: tuple[Seat, Seat] = (bot, other) if seat_index == 0 else (other, bot)
        config = MatchConfig(
            f"check-{series}",
            seed + series,
            time_control=time_control or TimeControl(),
            fault_policy=FaultPolicy(strikes=1),
        )
        log_path = None if log_dir is None else log_dir / f"check-{series}.jsonl"
        result: MatchResult = await play_folders(seats, config, log_path)
        made += int(result.stats[seat_index]["decisions"])
        faults.extend(fault for fault in result.faults if fault.seat == seat_index)
        startup = startup if startup is not None else bot.startup_ms
        last = bot
        series += 1
        clean_exits.append(_exit_item(bot))
    items = [CheckItem("manifest is valid", True)]
    items += _fault_items(faults)
    items.append(
        CheckItem(
            f"made at least {decisions} decisions",
            made >= decisions or bool(faults),
            "" if made >= decisions or faults else f"only {made} decisions in {series} series",
        )
    )
    if not faults:
        items.append(next((item for item in clean_exits if not item.passed), _exit_item(last)))
    return CheckReport(folder, manifest.ident, tuple(items), made, series, startup, tuple(faults))
