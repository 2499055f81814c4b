"""The conformance kit behind ``gin bot check``: everything a bot must do before admission.

The bot plays real series, in its sandbox, against the sample greedy policy (in-process),
seats alternating, until it has made a few hundred decisions. Any fault stops the check (the
fault policy forfeits on the first), and each failed item says what to fix. An item passes only
on evidence: what the bot did not get far enough to show is unproven, not passed. The report
keeps the last lines of the bot's stderr, for its author to read as the bot wrote them. A
compiled bot that cannot start for want of a shared library (or of its ELF interpreter) in the
sandbox is told so in one line, with what to do.
"""

from __future__ import annotations

import enum
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from protocol.bounded import JsonObject, JsonValue
from protocol.manifest import CODE_MOUNT, SYSTEM_PATHS, Manifest, ManifestError, load_manifest
from referee.control import FaultPolicy, TimeControl
from referee.faults import Fault, FaultKind
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult, SeatStats
from referee.remote import JailFactory, RemoteSeat
from referee.rules import GreedyPolicy
from referee.seats import InProcessSeat, Seat

DECISIONS: Final = 300
MAX_SERIES: Final = 12
STDERR_LINES: Final = 20
"""How many of the last lines of the bot's stderr a report keeps."""
CHECK_EXIT_WAIT_S: Final = 3.0
"""How long a checked bot has to exit after its goodbye (a match gives it a second: a loaded
machine must not fail a bot that does exit)."""
ELF_HEAD_BYTES: Final = 64 * 1024
"""How much of a bot's program is read to find its ELF interpreter (its program headers)."""
_LOADER_ERROR: Final = re.compile(r"error while loading shared libraries: ([\w.+/@-]{1,200}):")
"""The dynamic loader's error, naming the library (a file name or path of plain characters: the
name goes into the one-line verdict, so no control character or markup may come with it)."""
_NO_SUCH_FILE: Final = "No such file or directory"
_SANDBOX_SHOWS: Final = "shows only the machine's /usr and the bot's folder"
_PT_INTERP: Final = 3
_PHDR_MIN_BYTES: Final = 32
"""The smallest ELF program header (32-bit); a file that claims less is not read further."""
_SEEN_SYSTEM: Final = (*SYSTEM_PATHS, "/lib32", "/libx32")
"""The machine's folders a sandboxed bot sees (its own folder aside)."""


class NoBotFolder(FileNotFoundError):  # noqa: N818 - named for what happened
    """The folder to check does not exist (or is not a folder)."""


class Verdict(enum.Enum):
    """What the check found for one item."""

    PASSED = "passed"
    FAILED = "failed"
    UNPROVEN = "unproven"
    """The bot did not get far enough to show it, either way."""


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One line of the checklist."""

    name: str
    verdict: Verdict
    detail: str = ""
    """For a failure: what happened and what to do; for an unproven item: why."""

    @property
    def passed(self) -> bool:
        """Whether the item passed (on evidence)."""
        return self.verdict is Verdict.PASSED


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
    never_started: str = ""
    """Why the bot never said hello, in one sentence with what to do; empty once it did."""
    stderr: tuple[str, ...] = ()
    """The last lines of the stderr of the bot's last series (raw bot text)."""

    @property
    def passed(self) -> bool:
        """Whether every item passed."""
        return not self.never_started and all(item.passed for item in self.items)

    def to_dict(self) -> JsonObject:
        """The JSON-ready checklist (``gin bot check --json``; docs/cli.md has the schema)."""
        return {
            "bot": self.ident,
            "folder": str(self.folder),
            "passed": self.passed,
            "never_started": self.never_started or None,
            "items": [
                {"name": item.name, "verdict": item.verdict.value, "detail": item.detail or None}
                for item in self.items
            ],
            "decisions": self.decisions,
            "series": self.series,
            "startup_ms": self.startup_ms,
            "faults": [
                {"seat": fault.seat, "kind": fault.kind.value, "detail": fault.detail}
                for fault in self.faults
            ],
            "stderr": list(self.stderr),
        }

    @classmethod
    def from_dict(cls, document: JsonValue) -> CheckReport:
        """The report a :meth:`to_dict` document describes (faults keep seat, kind, detail).

        Raises:
            ValueError: the document is not such a checklist.
        """
        try:
            items = tuple(
                CheckItem(str(item["name"]), Verdict(item["verdict"]), str(item["detail"] or ""))
                for item in document["items"]
            )
            faults = tuple(
                Fault(int(fault["seat"]), FaultKind(fault["kind"]), str(fault["detail"]))
                for fault in document["faults"]
            )
            startup = document["startup_ms"]
            return cls(
                Path(str(document["folder"])),
                str(document["bot"]),
                items,
                int(document["decisions"]),
                int(document["series"]),
                None if startup is None else float(startup),
                faults,
                never_started=str(document["never_started"] or ""),
                stderr=tuple(str(line) for line in document["stderr"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a conformance checklist: {error!r}") from None


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
        "handle every message without an error and keep the stream open until the Goodbye "
        "(the bot's stderr is below)",
    ),
}


def tail_lines(text: str, count: int = STDERR_LINES) -> tuple[str, ...]:
    """The last ``count`` lines of ``text`` (trailing blank lines left out), as written.

    >>> tail_lines("a\\nb\\n\\nc\\n\\n", 2)
    ('', 'c')
    """
    kept = text.rstrip()
    return tuple(kept.split("\n")[-count:]) if kept else ()


def _fault_line(fault: Fault) -> str:
    _, advice = _ADVICE[fault.kind]
    where = f" on request {fault.request_id}" if fault.request_id else ""
    return f"{fault.detail}{where}: {advice}"


@dataclass(frozen=True, slots=True)
class _Evidence:
    """What the series showed of the bot."""

    made: int
    """Decisions answered without a fault."""
    wanted: int
    said_hello: bool
    faults: tuple[Fault, ...]


def _fault_item(kind: FaultKind, evidence: _Evidence) -> CheckItem:
    name, _ = _ADVICE[kind]
    found = [fault for fault in evidence.faults if fault.kind is kind]
    if found:
        return CheckItem(name, Verdict.FAILED, _fault_line(found[0]))
    shown = evidence.said_hello if kind is FaultKind.STARTUP_FAILURE else _enough(evidence)
    if shown:
        return CheckItem(name, Verdict.PASSED)
    return CheckItem(name, Verdict.UNPROVEN, _short(evidence))


def _enough(evidence: _Evidence) -> bool:
    return evidence.made >= evidence.wanted


def _short(evidence: _Evidence) -> str:
    why = "the check stops at the first fault" if evidence.faults else "too few decisions"
    return f"not shown: {evidence.made} of {evidence.wanted} decisions made ({why})"


def _decisions_item(evidence: _Evidence, series: int) -> CheckItem:
    name = f"made at least {evidence.wanted} decisions"
    if _enough(evidence):
        return CheckItem(name, Verdict.PASSED)
    why = "stopped at the fault above" if evidence.faults else f"in {series} series"
    return CheckItem(name, Verdict.FAILED, f"{evidence.made} of {evidence.wanted} ({why})")


def _exit_item(seat: RemoteSeat | None) -> CheckItem:
    name = "leaves cleanly after the goodbye"
    if seat is None:
        return CheckItem(name, Verdict.FAILED, "never ran")
    report: Any = seat.teardown_report  # type: ignore[explicit-any]  # the sandbox's report, duck-typed: the referee never imports it
    leftover = tuple(getattr(report, "leftover", ()))
    if seat.exit_after_goodbye is None:
        detail = (
            f"still running {seat.exit_wait_s:g} s after the Goodbye: exit when the stream ends"
        )
        return CheckItem(name, Verdict.FAILED, detail)
    if seat.exit_after_goodbye != 0:
        detail = f"exited with status {seat.exit_after_goodbye} after the Goodbye: exit 0"
        return CheckItem(name, Verdict.FAILED, detail)
    if leftover:
        detail = f"{len(leftover)} process(es) outlived the bot: do not leave children behind"
        return CheckItem(name, Verdict.FAILED, detail)
    return CheckItem(name, Verdict.PASSED)


def _answered(stats: SeatStats, faults: list[Fault]) -> int:
    """Decisions a seat answered without a fault (the match counts those that ended in one)."""
    faulted = sum(1 for fault in faults if fault.request_id and not fault.stray)
    return stats.decisions - faulted


def require_folder(folder: Path) -> None:
    """Check that there is a folder to check (before setting anything up for it).

    Raises:
        NoBotFolder: ``folder`` is not a folder.
    """
    if not folder.is_dir():
        raise NoBotFolder(f"no bot folder at {folder}")


async def check_bot(
    folder: Path,
    jails: JailFactory,
    *,
    decisions: int = DECISIONS,
    time_control: TimeControl | None = None,
    seed: int = 20261129,
    log_dir: Path | None = None,
) -> CheckReport:
    """Run the checklist on a bot folder (series against greedy until ``decisions``).

    Raises:
        NoBotFolder: there is no such folder.
    """
    require_folder(folder)
    try:
        manifest = load_manifest(folder)
    except ManifestError as error:
        problems = "; ".join(error.problems)
        return CheckReport(folder, "", (CheckItem("manifest is valid", Verdict.FAILED, problems),))
    made = series = 0
    faults: list[Fault] = []
    last: RemoteSeat | None = None
    startup: float | None = None
    clean_exits: list[CheckItem] = []
    while made < decisions and series < MAX_SERIES and not faults:
        seat_index = series % 2
        bot = remote_seat(manifest, jails, f"check-{manifest.name}-{series}")
        bot.exit_wait_s = CHECK_EXIT_WAIT_S
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
        own = [fault for fault in result.faults if fault.seat == seat_index]
        made += _answered(result.stats[seat_index], own)
        faults.extend(own)
        startup = startup if startup is not None else bot.startup_ms
        last = bot
        series += 1
        clean_exits.append(_exit_item(bot))
    evidence = _Evidence(made, decisions, startup is not None, tuple(faults))
    items = [CheckItem("manifest is valid", Verdict.PASSED)]
    items += [_fault_item(kind, evidence) for kind in _ADVICE]
    items.append(_decisions_item(evidence, series))
    if faults:
        items.append(
            CheckItem(clean_exits[0].name, Verdict.UNPROVEN, "not shown: stopped at the fault")
        )
    else:
        items.append(next((item for item in clean_exits if not item.passed), _exit_item(last)))
    stderr = (last.stderr_kept() if last else None) or ""
    return CheckReport(
        folder,
        manifest.ident,
        tuple(items),
        made,
        series,
        startup,
        tuple(faults),
        never_started=_never_started(evidence, manifest, stderr),
        stderr=tail_lines(stderr),
    )


def _never_started(evidence: _Evidence, manifest: Manifest, stderr: str) -> str:
    """Why the bot never said hello, and what to do; empty if it did."""
    if evidence.said_hello:
        return ""
    if trouble := library_trouble(manifest, stderr):
        return f"never started: {trouble}"
    first = next((f for f in evidence.faults if f.kind is FaultKind.STARTUP_FAILURE), None)
    why = "no hello" if first is None else first.detail
    return f"never started: {why}; {_ADVICE[FaultKind.STARTUP_FAILURE][1]}"


def library_trouble(manifest: Manifest, stderr: str) -> str:
    """Why the bot's program could not be loaded in the sandbox, with what to do: a shared
    library the dynamic loader did not find there, or an ELF interpreter that is not there (the
    exec then fails with "No such file or directory" though the program is in the folder).
    Empty when its stderr says neither, or when the interpreter is one the sandbox shows (a
    Python bot's "No such file or directory" is its own)."""
    program = manifest.command[0]
    if library := missing_library(stderr):
        return (
            f"{program} cannot load the shared library {library}: the sandbox {_SANDBOX_SHOWS}; "
            "link it statically, or put it in the bot folder and link with -Wl,-rpath,'$ORIGIN'"
        )
    loader = elf_interpreter(Path(manifest.argv()[0])) if _NO_SUCH_FILE in stderr else ""
    if loader and not _seen_in_sandbox(Path(loader), manifest.folder):
        return (
            f"{program} cannot start: its ELF interpreter {loader} is not in the sandbox, which "
            f"{_SANDBOX_SHOWS}; link it statically, or against the machine's own C library"
        )
    return ""


def _seen_in_sandbox(path: Path, folder: Path) -> bool:
    """Whether a sandboxed bot whose folder is ``folder`` sees the absolute ``path``."""
    seen = (*_SEEN_SYSTEM, CODE_MOUNT, str(folder))
    return any(path.is_relative_to(place) for place in seen)


def missing_library(stderr: str) -> str:
    """The shared library the dynamic loader could not find, as its error in ``stderr`` names
    it; empty if there is no such error.

    >>> missing_library("/bot/x: error while loading shared libraries: libgreet.so.1: "
    ...                 "cannot open shared object file: No such file or directory")
    'libgreet.so.1'
    >>> missing_library("Traceback (most recent call last):")
    ''
    """
    found = _LOADER_ERROR.search(stderr)
    return found.group(1).strip() if found else ""


def elf_interpreter(program: Path) -> str:
    """The ELF interpreter (``PT_INTERP``: the dynamic loader) that ``program`` names; empty for
    a static binary, a file that is not ELF, or one that cannot be read.

    >>> elf_interpreter(Path("/no/such/program"))
    ''
    """
    try:
        with program.open("rb") as handle:
            head = handle.read(ELF_HEAD_BYTES)
        return _interpreter_in(head)
    except (OSError, struct.error, UnicodeDecodeError):
        return ""


def _interpreter_in(head: bytes) -> str:
    """The ``PT_INTERP`` path in the first bytes of an ELF file ("" if none).

    >>> _interpreter_in(b"#!/bin/sh")
    ''

    Raises:
        struct.error: the headers are cut short.
    """
    if head[:4] != b"\x7fELF" or head[4] not in (1, 2):
        return ""
    wide = head[4] == 2
    order = "<" if head[5] == 1 else ">"
    word = "Q" if wide else "I"
    (table,) = struct.unpack_from(order + word, head, 0x20 if wide else 0x1C)
    size, count = struct.unpack_from(order + "HH", head, 0x36 if wide else 0x2A)
    if size < _PHDR_MIN_BYTES:
        return ""
    for entry in range(table, table + size * count, size):
        if struct.unpack_from(order + "I", head, entry)[0] != _PT_INTERP:
            continue
        # p_offset, then (past p_vaddr and p_paddr) p_filesz.
        span = order + ("Q16xQ" if wide else "I8xI")
        offset, length = struct.unpack_from(span, head, entry + (8 if wide else 4))
        return head[offset : offset + length].rstrip(b"\0").decode()
    return ""
