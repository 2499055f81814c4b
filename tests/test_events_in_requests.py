"""Hello.events_in_requests: opponent actions inside the next request, and nothing else changes.

A seat whose bot sets the flag gets its opponent's actions in the next ``DecisionRequest.events``
instead of as separate Event messages. Spread back out in front of their request, its messages
are exactly those of a seat without the flag; a Python bot sees the same calls, in the same
order, either way; and the match log does not change.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import action_from_pb, action_to_pb, observation_from_pb
from protocol.manifest import load_manifest
from referee.bridge import Arrival, Incoming
from referee.conformance import CheckReport, check_bot
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig, MatchResult, play_match
from referee.matchlog import MatchLog
from referee.remote import Jail, RemoteSeat
from referee.replay import read_records
from referee.rules import GreedyPolicy, RuleParams
from referee.sandbox import Layer, Sandbox
from referee.seats import BotIdentity, Seat

ROOT = Path(__file__).resolve().parent.parent
GREEDY = ROOT / "sample_bots" / "greedy"
FLAGS = [(True, False), (False, True)]
SALT = bytes(16)
"""One match salt for every run, so two runs of a seed send the same bytes (commitments too)."""


def _no_jail(label: str, code_dir: Path) -> Jail:
    raise AssertionError("a wire seat starts no process")


class WireSeat(RemoteSeat):
    """The referee's remote seat over a fake channel: a greedy bot answers, every message is kept.

    The hello goes through the seat's own check, so the flag is read as from a real bot.
    """

    def __init__(self, events_in_requests: bool) -> None:
        super().__init__(load_manifest(GREEDY), _no_jail, "wire")
        self.flag = events_in_requests
        self.sent: list[pb.RefereeMessage] = []
        self.inbox: deque[Incoming] = deque()
        self.policy = GreedyPolicy()

    async def prepare(self) -> None:
        """No jail: nothing runs."""

    async def connect(self, seat: int) -> BotIdentity:
        self.seat = seat
        hello = pb.Hello(token=self.token, name="greedy", version="1.0.0", protocol_version=1)
        hello.events_in_requests = self.flag
        return self._check_hello(Incoming(Arrival.MESSAGE, 0.0, pb.BotMessage(hello=hello)))

    def _send(self, message: pb.RefereeMessage | bytes, *, hand_over: bool = False) -> None:
        if isinstance(message, bytes):
            message = pb.RefereeMessage.FromString(message)
        self.sent.append(message)
        if message.WhichOneof("kind") == "request":
            request = message.request
            view = observation_from_pb(request.observation, request.kind, self.seat, RuleParams())
            action = self.policy(view, [action_from_pb(a) for a in request.legal_actions])
            answer = pb.BotMessage(action=action_to_pb(action, request.request_id))
            self.inbox.append(Incoming(Arrival.MESSAGE, 0.0, answer))

    async def _next(self) -> Incoming:
        return self.inbox.popleft()


def spread(messages: list[pb.RefereeMessage]) -> list[pb.RefereeMessage]:
    """The messages with each request's ``events`` sent as separate events just before it."""
    out = []
    for message in messages:
        if message.WhichOneof("kind") == "request" and message.request.events:
            out += [pb.RefereeMessage(event=event) for event in message.request.events]
            bare = pb.RefereeMessage(request=message.request)
            bare.request.ClearField("events")
            out.append(bare)
        else:
            out.append(message)
    return out


def kind(message: pb.RefereeMessage) -> str:
    """The message's kind, and the event's kind for an event."""
    name = message.WhichOneof("kind") or ""
    return f"event.{message.event.WhichOneof('kind')}" if name == "event" else name


def log_records(path: Path) -> list[dict[str, Any]]:
    """The log's records without their timings (wall-clock times and milliseconds)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: strip(item)
                for key, item in value.items()
                if not (key in ("started_at", "ms", "startup_ms") or key.endswith("_ms"))
            }
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return [strip(record) for record in read_records(path)]


def play_wire(flags: tuple[bool, bool], seed: int, log_path: Path) -> tuple[WireSeat, WireSeat]:
    seats = (WireSeat(flags[0]), WireSeat(flags[1]))

    async def main() -> MatchResult:
        with MatchLog(log_path) as log:
            return await play_match(seats, MatchConfig("wire", seed, salt=SALT), log)

    result = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert result.faults == ()
    return seats


@pytest.mark.parametrize("seed", [3, 77, 2024])
def test_the_flag_only_moves_opponent_actions_into_the_next_request(
    seed: int, tmp_path: Path
) -> None:
    runs = {flags: play_wire(flags, seed, tmp_path / f"{flags}.jsonl") for flags in FLAGS}
    for seat in (0, 1):
        flagged = runs[FLAGS[seat]][seat].sent
        plain = runs[FLAGS[1 - seat]][seat].sent
        assert spread(flagged) == plain
        assert len(flagged) < len(plain)
        # Without the flag: every opponent action a separate event, no request carries events.
        assert not any(m.request.events for m in plain if m.WhichOneof("kind") == "request")
        assert "event.opponent_action" in map(kind, plain)
        # With it: only opponent actions ride in requests; one still sent alone is flushed by
        # some other event or the goodbye, never followed by a request.
        kinds = list(map(kind, flagged))
        assert kinds[-1] == "goodbye"
        for index, name in enumerate(kinds):
            if name == "request":
                events = flagged[index].request.events
                assert all(event.WhichOneof("kind") == "opponent_action" for event in events)
            if name == "event.opponent_action":
                after = next(k for k in kinds[index + 1 :] if k != "event.opponent_action")
                assert after != "request"
        assert any(m.request.events for m in flagged if m.WhichOneof("kind") == "request")
    assert log_records(tmp_path / f"{FLAGS[0]}.jsonl") == log_records(
        tmp_path / f"{FLAGS[1]}.jsonl"
    )


def transcript_folder(parent: Path, seat: int) -> Path:
    """A folder running tests/transcript_bot.py with its flag and transcript at ``parent/seat<n>``.

    The same folder plays both runs (so its code hash, in the log, is the same): the test writes
    the flag file before each run and reads the transcript after it.
    """
    folder = parent / f"transcript-{seat}"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "transcript_bot.py", folder / "bot.py")
    prefix = parent / f"seat{seat}"
    (folder / "bot.toml").write_text(
        f'name = "transcript"\nversion = "1.0.0"\ncommand = ["python", "bot.py", "{prefix}"]\n'
    )
    return folder


@pytest.mark.slow
def test_a_python_bot_sees_the_same_calls_with_and_without_the_flag(tmp_path: Path) -> None:
    """Real bot processes (no sandbox layer, so they can write their transcripts out)."""
    transcripts: dict[tuple[bool, int], dict[str, Any]] = {}
    folders = [transcript_folder(tmp_path, seat) for seat in (0, 1)]
    jails = tempfile.TemporaryDirectory(prefix="gin-")  # short: a socket path has 107 bytes
    with jails, Sandbox(root_dir=Path(jails.name), switched_off=tuple(Layer)) as sandbox:
        for flags in FLAGS:
            for seat in (0, 1):
                (tmp_path / f"seat{seat}.flag").write_text(str(int(flags[seat])))
            seats: tuple[Seat, Seat] = (
                remote_seat(load_manifest(folders[0]), sandbox.prepare, "transcript-0"),
                remote_seat(load_manifest(folders[1]), sandbox.prepare, "transcript-1"),
            )
            log = tmp_path / f"match-{int(flags[0])}.jsonl"
            result = trio.run(play_folders, seats, MatchConfig("transcript", 1234, salt=SALT), log)
            assert result.faults == ()
            assert result.end == "complete"
            for seat in (0, 1):
                transcript = tmp_path / f"seat{seat}.json"
                transcripts[flags[seat], seat] = json.loads(transcript.read_text())
                transcript.unlink()
    for seat in (0, 1):
        flagged, plain = transcripts[True, seat], transcripts[False, seat]
        assert flagged["calls"] == plain["calls"]
        names = [call[0] for call in plain["calls"]]
        assert names[0] == "on_series_start"
        assert names[-1] == "on_series_end"
        assert {"decide", "on_opponent_action", "on_hand_end"} <= set(names)
        flagged_wire = [pb.RefereeMessage.FromString(bytes.fromhex(m)) for m in flagged["wire"]]
        plain_wire = [pb.RefereeMessage.FromString(bytes.fromhex(m)) for m in plain["wire"]]
        assert spread(flagged_wire) == plain_wire
        assert not any(m.request.events for m in plain_wire if m.WhichOneof("kind") == "request")
        assert any(m.request.events for m in flagged_wire if m.WhichOneof("kind") == "request")
    assert log_records(tmp_path / "match-1.jsonl") == log_records(tmp_path / "match-0.jsonl")


FLAGLESS_BOT = """
import sys

from sample_bots.greedy.bot import GreedyBot


class Flagless(GreedyBot):
    events_in_requests = False


sys.exit(Flagless().run())
"""


@pytest.mark.slow
@pytest.mark.parametrize("flag", [True, False])
def test_the_conformance_kit_passes_bots_with_and_without_the_flag(
    flag: bool, tmp_path: Path
) -> None:
    folder = GREEDY
    if not flag:
        folder = tmp_path / "flagless"
        folder.mkdir()
        (folder / "bot.py").write_text(FLAGLESS_BOT)
        shutil.copy(GREEDY / "bot.toml", folder / "bot.toml")

    async def main() -> CheckReport:
        return await check_bot(folder, sandbox.prepare, decisions=60)

    jails = tempfile.TemporaryDirectory(prefix="gin-")
    with jails, Sandbox(root_dir=Path(jails.name)) as sandbox:
        report = trio.run(main)
    assert report.passed, [item for item in report.items if not item.passed]
    assert report.decisions >= 60
