"""The match loop with in-process and scripted remote seats: results, faults, strikes, the log."""

import json
import math
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import action_from_pb, action_to_pb, observation_from_pb
from protocol.manifest import load_manifest
from referee.bridge import Arrival, Incoming
from referee.control import FaultPolicy, TimeControl
from referee.faults import BotCrashed, BotProtocolError, Fault, FaultKind
from referee.match import MatchConfig, MatchResult, play_match, safe_action
from referee.matchlog import MatchLog, record_line, seed_commitment
from referee.records import (
    ActionRecord,
    HandStart,
    LogRecord,
    Request,
    action_template,
    request_template,
)
from referee.remote import Jail, RemoteSeat
from referee.replay import read_records, verify_log
from referee.rules import (
    Action,
    Card,
    Discard,
    Knock,
    Observation,
    Phase,
    RandomPolicy,
    RuleParams,
    SeriesState,
    greedy_policy,
    parse_cards,
    patient_policy,
    play_series,
)
from referee.seats import (
    BotIdentity,
    Decision,
    HandEnded,
    InProcessSeat,
    OpponentActed,
    SeriesEnded,
)

GREEDY_BOT = Path(__file__).resolve().parent.parent / "sample_bots" / "greedy"


def run(seats: tuple[InProcessSeat, InProcessSeat], config: MatchConfig,
        log: MatchLog | None = None) -> MatchResult:  # fmt: skip
    async def main() -> MatchResult:
        return await play_match(seats, config, log)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_in_process_match_equals_play_series() -> None:
    config = MatchConfig("m1", seed=21)
    result = run((InProcessSeat(greedy_policy), InProcessSeat(patient_policy)), config)
    expected = play_series(greedy_policy, patient_policy, seed=21)
    assert result.end == expected.end.value
    assert result.winner == expected.winner
    assert result.totals == expected.totals
    assert result.faults == ()
    assert result.forfeited == ()


def test_seats_hear_events_and_only_the_public_ones() -> None:
    first, second = InProcessSeat(greedy_policy), InProcessSeat(greedy_policy)
    result = run((first, second), MatchConfig("m2", seed=3))
    ended = [event for event in first.events if isinstance(event, HandEnded)]
    assert len(ended) == result.hands
    assert isinstance(first.events[-1], SeriesEnded)
    for event in first.events:
        if isinstance(event, OpponentActed):
            assert event.event.seat == 1
            if type(event.event.action).__name__ == "DrawStock":
                assert event.event.card is None
    assert first.closed
    assert second.closed


class Illegal:
    """Discards a card it does not hold, every time."""

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        if view.phase is Phase.DISCARD:
            missing = next(card for card in range(52) if card not in view.hand)
            return Discard(missing)  # type: ignore[arg-type]
        return legal[0]


def test_illegal_actions_strike_then_forfeit(tmp_path: Path) -> None:
    config = MatchConfig("m3", seed=5, fault_policy=FaultPolicy(strikes=3))
    with MatchLog(tmp_path / "m3.jsonl") as log:
        result = run((InProcessSeat(Illegal()), InProcessSeat(greedy_policy)), config, log)
    assert result.end == "forfeit"
    assert result.forfeited == (0,)
    assert result.winner == 1
    assert [fault.kind for fault in result.faults] == [FaultKind.ILLEGAL_ACTION] * 3
    assert "is not in seat 0's hand" in result.faults[0].detail
    assert result.faults[0].evidence["answer"]["kind"] == "discard"
    records = read_records(tmp_path / "m3.jsonl")
    kinds = [record["type"] for record in records]
    assert kinds[0] == "header"
    assert kinds[-1] == "result"
    assert kinds.count("fault") == 3
    assert records[-1]["forfeited"] == [0]


class Slow:
    """Thinks for ``seconds`` (on the mock clock) before answering."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def decide(self, decision: Decision) -> Action:
        await trio.sleep(self.seconds)
        return greedy_policy(decision.view, decision.legal)


class SlowSeat(InProcessSeat):
    def __init__(self, seconds: float) -> None:
        super().__init__(greedy_policy, "slow")
        self.slow = Slow(seconds)

    async def decide(self, decision: Decision) -> Action:
        return await self.slow.decide(decision)


def test_time_bank_absorbs_then_timeouts_strike() -> None:
    control = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=300)
    config = MatchConfig("m4", seed=9, time_control=control, fault_policy=FaultPolicy(strikes=2))
    result = run((SlowSeat(0.25), InProcessSeat(greedy_policy)), config)
    # Each answer takes 250 ms: 150 over the move time. The bank (300) pays twice; then the
    # limit is 110 ms and the third and fourth answers time out: the second strike forfeits.
    assert [fault.kind for fault in result.faults] == [FaultKind.TIMEOUT, FaultKind.TIMEOUT]
    assert result.faults[0].elapsed_ms == pytest.approx(110, abs=1)
    assert result.forfeited == (0,)
    assert result.stats[0].decisions == 4


def test_answers_within_the_move_time_never_touch_the_bank() -> None:
    control = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=0)
    config = MatchConfig("m5", seed=9, time_control=control)
    result = run((SlowSeat(0.09), InProcessSeat(greedy_policy)), config)
    assert result.faults == ()
    assert result.end == "complete"


class EveryFifthHangs(InProcessSeat):
    """Answers at once, except that every fifth decision it asks for never comes."""

    def __init__(self) -> None:
        super().__init__(greedy_policy, "hangs")
        self.asked = 0

    async def decide(self, decision: Decision) -> Action:
        self.asked += 1
        if self.asked % 5 == 0:
            await trio.sleep_forever()
        return greedy_policy(decision.view, decision.legal)


def test_play_goes_on_after_each_timeout(tmp_path: Path) -> None:
    control = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=0)
    config = MatchConfig(
        "m8", seed=3, time_control=control, fault_policy=FaultPolicy(strikes=10**6)
    )
    seat = EveryFifthHangs()
    with MatchLog(tmp_path / "m8.jsonl") as log:
        result = run((seat, InProcessSeat(greedy_policy)), config, log)
    assert result.end == "complete"
    assert seat.asked >= 20
    assert len(result.faults) == seat.asked // 5
    assert all(fault.kind is FaultKind.TIMEOUT for fault in result.faults)
    assert all(fault.elapsed_ms == pytest.approx(110, abs=1) for fault in result.faults)
    actions = [
        record
        for record in read_records(tmp_path / "m8.jsonl")
        if record["type"] == "action" and record["seat"] == 0 and record["by"] != "forced"
    ]
    # The fifth, tenth, ... decisions were played by the referee, every other one by the bot.
    assert [record["by"] for record in actions] == [
        "referee" if number % 5 == 0 else "bot" for number in range(1, len(actions) + 1)
    ]
    assert [record["request"] for record in actions] == sorted(
        record["request"] for record in actions
    )


class AnswersAsTimeRunsOut(InProcessSeat):
    """Its first answer comes after the limit, from a shielded think: the clock has run out, but
    the answer is there before the match could stop waiting for it. Then it answers at once
    (after a checkpoint, where a spent clock would cancel it)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(greedy_policy, "borderline")
        self.seconds = seconds
        self.asked = 0

    async def decide(self, decision: Decision) -> Action:
        self.asked += 1
        if self.asked == 1:
            with trio.CancelScope(shield=True):
                await trio.sleep(self.seconds)
        else:
            await trio.lowlevel.checkpoint()
        return greedy_policy(decision.view, decision.legal)


def test_an_answer_past_the_limit_that_beats_the_cancellation_is_a_timeout(tmp_path: Path) -> None:
    # The answer is back before the match could stop waiting, but after the limit: the
    # referee's clock decides (a timeout, the answer not played) and the clock starts afresh.
    control = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=0)
    config = MatchConfig("m9", seed=3, time_control=control)
    seat = AnswersAsTimeRunsOut(0.2)
    path = tmp_path / "m9.jsonl"
    with MatchLog(path) as log:
        result = run((seat, InProcessSeat(greedy_policy)), config, log)
    assert seat.asked > 10
    assert [fault.kind for fault in result.faults] == [FaultKind.TIMEOUT]
    assert result.end == "complete"
    assert result.stats[0].max_ms == pytest.approx(200, abs=1)
    assert verify_log(path).ok


@pytest.mark.parametrize(
    "settings",
    [
        {"move_time_ms": -1},
        {"time_bank_ms": 2**32},
        {"move_time_ms": 2**31, "time_bank_ms": 2**31},
        {"startup_ms": 2**32},
    ],
)
def test_time_controls_bots_cannot_be_told_are_refused(settings: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="time control"):
        TimeControl(**settings)


class FaultySeat(InProcessSeat):
    def __init__(self, error: Exception) -> None:
        super().__init__(greedy_policy, "faulty")
        self.error = error

    async def decide(self, decision: Decision) -> Action:
        raise self.error


def test_crash_forfeits_at_once() -> None:
    result = run((InProcessSeat(greedy_policy), FaultySeat(BotCrashed("exit 3"))),
                 MatchConfig("m6", seed=1))  # fmt: skip
    assert result.forfeited == (1,)
    assert result.winner == 0
    assert [fault.kind for fault in result.faults] == [FaultKind.CRASH]


def test_protocol_violation_is_a_strike_with_a_substitute() -> None:
    policy = FaultPolicy(strikes=1000)
    result = run((InProcessSeat(greedy_policy), FaultySeat(BotProtocolError("wrong id"))),
                 MatchConfig("m7", seed=1, fault_policy=policy))  # fmt: skip
    assert result.forfeited == ()
    assert result.end == "complete"
    assert result.winner == 0
    assert all(fault.kind is FaultKind.PROTOCOL_VIOLATION for fault in result.faults)


def test_safe_action_is_legal_and_never_a_knock() -> None:
    series = SeriesState(seed=4)
    rng = RandomPolicy(2)
    for _ in range(300):
        if series.result is not None:
            break
        action = safe_action(series)
        assert not isinstance(action, Knock)
        series.hand.verify(action)
        series.apply(rng(None, series.legal_actions()))  # type: ignore[arg-type]


def test_log_never_holds_the_seed_or_a_live_deck_before_the_end(tmp_path: Path) -> None:
    path = tmp_path / "m8.jsonl"
    with MatchLog(path) as log:
        run((InProcessSeat(greedy_policy), InProcessSeat(greedy_policy)),
            MatchConfig("m8", seed=123456789), log)  # fmt: skip
    records = read_records(path)
    header = records[0]
    salt = bytes.fromhex(records[-1]["salt"])
    assert header["seed_commitment"] == seed_commitment(123456789, salt)
    assert "seed" not in header
    assert records[-1]["seed"] == 123456789
    text = path.read_text().splitlines()
    assert all("123456789" not in line and salt.hex() not in line for line in text[:-1])
    # Each deck is revealed only in its hand's end record, after the hand's start record.
    starts = {r["hand"]: i for i, r in enumerate(records) if r["type"] == "hand_start"}
    ends = {r["hand"]: i for i, r in enumerate(records) if r["type"] == "hand_end"}
    assert starts.keys() == ends.keys()
    assert all(starts[hand] < ends[hand] for hand in starts)
    for record in records:
        if record["type"] == "action" and record["action"]["kind"] == "draw_stock":
            assert "card" not in record["action"]


class Recorder:
    """A log writer that keeps each record as the match hands it over (``typed``), and as its
    type and fields (``records``)."""

    def __init__(self) -> None:
        self.typed: list[LogRecord] = []
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.flushes = 0

    def write(self, record: LogRecord, /) -> None:
        fields = record.to_json()
        self.typed.append(record)
        self.records.append((fields.pop("type"), fields))

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        pass


def encoder_line(record: LogRecord) -> str:
    return json.dumps(record.to_json(), separators=(",", ":"))


def test_log_lines_from_templates_equal_the_json_encoders() -> None:
    """Requests and actions are written from templates: the same text as ``json.dumps``, over
    whole matches (bot, referee and forced actions, knocks, faults) and odd field values."""
    recorder = Recorder()
    config = MatchConfig("lines", seed=11, fault_policy=FaultPolicy(strikes=50))
    faulty = (InProcessSeat(Illegal()), InProcessSeat(patient_policy))
    trio.run(play_match, faulty, config, recorder)
    randoms = (InProcessSeat(RandomPolicy(1)), InProcessSeat(RandomPolicy(2)))
    trio.run(play_match, randoms, MatchConfig("random", seed=3), recorder)
    by = {fields.get("by") for record_type, fields in recorder.records if record_type == "action"}
    assert by == {"bot", "referee", "forced"}
    templated = 0
    for record in recorder.typed:
        assert record.to_line() == encoder_line(record)
        if isinstance(record, Request):
            templated += request_template(record) is not None
        elif isinstance(record, ActionRecord):
            templated += action_template(record) is not None
    assert templated > 500
    king, seven = Card.parse("Kd"), Card.parse("7c")
    knock = Knock(king, (parse_cards("7c 7d 7h"), parse_cards("As 2s 3s")))
    odd: list[LogRecord] = [
        Request(0, 1, 0, "draw", 2, 1.5e300),
        Request(0, True, 0, "draw", 2, 1.0),
        Request(0, 1, 0, 'dr"aw', 2, 1.0),
        Request(0, 1, 0, "draw", 2, 5),
        Request(0, 1, 0, "draw", 2, math.nan),
        Request(0, 1, 0, ["draw"], 2, 1.0),  # type: ignore[arg-type]
        ActionRecord(0, 1, 9, knock, "bot", 0.25),
        ActionRecord(0, 1, 9, Knock(king), "bot", 0.0),
        ActionRecord(0, 1, 9, Discard(seven), "someone", 1.0),
        ActionRecord(0, 1, 9, Discard(seven), "bot", -0.0),
        ActionRecord(0, 1, 9, Discard(seven), "bot", math.inf),
        ActionRecord(0, 1, 9, Discard(seven), ["bot"], 1.0),  # type: ignore[arg-type]
        ActionRecord(0, True, 9, Discard(seven), "bot", 1.0),
    ]
    for record in odd:
        assert record.to_line() == encoder_line(record)
    hand_start = HandStart(0, 1, 0, "ab")
    assert hand_start.to_line() == record_line(
        "hand_start", {"hand": 1, "dealer": 0, "commitment": "ab"}
    )


def test_every_finished_hand_is_on_disk_while_a_seat_thinks(tmp_path: Path) -> None:
    """The log is flushed at the end of each hand (not at each decision): whenever a seat is
    asked, every record of every hand finished before is on disk, so a crash loses nothing of
    a finished hand."""
    path = tmp_path / "up-to-date.jsonl"
    seen: list[tuple[int, list[dict[str, Any]]]] = []

    def reading(view: Observation, legal: Sequence[Action]) -> Action:
        on_disk = [json.loads(line) for line in path.read_text().splitlines()]
        seen.append((view.hand_number, on_disk))
        return greedy_policy(view, legal)

    with MatchLog(path) as log:
        run((InProcessSeat(reading), InProcessSeat(greedy_policy)), MatchConfig("u", 4), log)
    whole = [json.loads(line) for line in path.read_text().splitlines()]
    assert len({hand for hand, _ in seen}) > 3
    for hand, on_disk in seen:
        ends = [record["hand"] for record in on_disk if record["type"] == "hand_end"]
        assert ends == list(range(hand)), (hand, ends)  # every finished hand, and no more
        last_end = (
            max(
                i
                for i, record in enumerate(whole)
                if record["type"] == "hand_end" and record["hand"] == hand - 1
            )
            if hand
            else -1
        )
        assert on_disk[: last_end + 1] == whole[: last_end + 1]


def test_the_log_is_flushed_once_a_hand() -> None:
    recorder = Recorder()
    result = run(
        (InProcessSeat(greedy_policy), InProcessSeat(greedy_policy)),
        MatchConfig("f", 4),
        recorder,  # type: ignore[arg-type]
    )
    assert result.hands > 3
    assert recorder.flushes == result.hands + 1  # each hand's end, and the match's


class Failing(Recorder):
    """A log whose disk fills up after ``room`` records."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, record: LogRecord, /) -> None:
        if len(self.records) >= self.room:
            raise OSError(28, "No space left on device")
        super().write(record)


@pytest.mark.parametrize("short", [-1, 0, 1, 40])
def test_a_log_that_cannot_be_written_stops_the_match_and_the_bots_still_go(short: int) -> None:
    """The disk fills ``short`` records into the match (-1: at its very last record, which is
    written as the match closes)."""
    whole = Recorder()
    greedy = (InProcessSeat(greedy_policy), InProcessSeat(greedy_policy))
    run(greedy, MatchConfig("d", 2), whole)  # type: ignore[arg-type]
    assert whole.records[-1][0] == "result"
    room = len(whole.records) - 1 if short < 0 else short
    seats = (InProcessSeat(greedy_policy), InProcessSeat(greedy_policy))
    with pytest.raises(OSError, match="No space left"):
        run(seats, MatchConfig("d", 2), Failing(room))  # type: ignore[arg-type]
    assert all(seat.closed for seat in seats)


class Stalling(Recorder):
    """A log on a slow disk: its fifth write (a request's, written while the bot thinks) takes
    0.3 s."""

    def write(self, record: LogRecord, /) -> None:
        super().write(record)
        if len(self.records) == 5:
            time.sleep(0.3)


class Thinking(InProcessSeat):
    """Says its request is out, then thinks for 10 ms (a checkpoint the clock can cut)."""

    async def decide(self, decision: Decision) -> Action:
        decision.sent()
        await trio.sleep(0.01)
        return self.policy(decision.view, decision.legal)


def test_time_spent_writing_the_log_is_not_the_bots() -> None:
    """A disk that stalls 0.3 s, against a 100 ms move time and a 50 ms grace: no timeout, and
    the stall is not in the bot's decision time."""
    log = Stalling()
    seats = (Thinking(greedy_policy), Thinking(greedy_policy))
    config = MatchConfig("slow-disk", 6, RuleParams(hand_cap=1), TimeControl(100, 50, 0))
    result = trio.run(play_match, seats, config, log)
    assert len(log.records) > 10
    assert result.faults == ()
    times = [
        fields["ms"] for kind, fields in log.records if kind == "action" and fields["by"] == "bot"
    ]
    assert times
    assert max(times) < 100, times[:3]


def test_an_answer_past_its_deadline_is_never_accepted(tmp_path: Path) -> None:
    # A host so loaded that the match clock cannot fire in time: the seat's answer comes back
    # (here: the policy holds the trio thread while the clock jumps 1 s) after its limit. The
    # referee's own clock decides: a timeout, not the late answer, and the log verifies.
    clock = trio.testing.MockClock()
    calls = 0

    def stalled(view: Any, legal: Sequence[Any]) -> Any:
        nonlocal calls
        calls += 1
        if calls == 3:
            clock.jump(1.0)
        return greedy_policy(view, legal)

    config = MatchConfig(
        "late",
        seed=5,
        time_control=TimeControl(move_time_ms=100, grace_ms=50, time_bank_ms=0),
        fault_policy=FaultPolicy(strikes=3),
    )
    path = tmp_path / "late.jsonl"

    async def main() -> MatchResult:
        with MatchLog(path) as log:
            return await play_match(
                (InProcessSeat(stalled), InProcessSeat(greedy_policy)), config, log
            )

    result = trio.run(main, clock=clock)
    assert [fault.kind for fault in result.faults] == [FaultKind.TIMEOUT]
    assert "over the limit of 150 ms" in result.faults[0].detail
    actions = [r for r in read_records(path) if r["type"] == "action" and r["by"] == "bot"]
    assert all(r["ms"] <= 150 for r in actions)
    assert verify_log(path).ok


# --- resynchronising after a protocol violation (a remote seat over a scripted channel) --------


def _no_jail(label: str, code_dir: Path) -> Jail:
    raise AssertionError("a scripted remote seat starts no process")


class ScriptedRemote(RemoteSeat):
    """The referee's remote seat over a scripted channel: a greedy bot answers each request, and
    ``script`` says what arrives for each of the seat's decisions (1-based; 0: before the first)::

        "answer"  this decision's answer        "again"          the previous decision's answer
        "echo:N"  an answer echoing id N        "second_stream"  a second Play stream
        "garbage" an empty message

    A decision not in the script gets its answer; one whose script has no "answer" gets none
    (it times out)."""

    def __init__(self, script: Mapping[int, tuple[str, ...]]) -> None:
        super().__init__(load_manifest(GREEDY_BOT), _no_jail, "scripted")
        self.script = script
        self.inbox: deque[Incoming] = deque()
        self.answers: list[pb.BotMessage] = []

    async def prepare(self) -> None:
        """No jail: nothing runs."""

    async def connect(self, seat: int) -> BotIdentity:
        self.seat = seat
        self._arrive(0)
        return BotIdentity("scripted", "1")

    def _send(self, message: pb.RefereeMessage | bytes, *, hand_over: bool = False) -> None:
        if not isinstance(message, bytes):
            return  # only decision requests go as bytes
        request = pb.RefereeMessage.FromString(message).request
        view = observation_from_pb(request.observation, request.kind, self.seat, RuleParams())
        action = greedy_policy(view, [action_from_pb(item) for item in request.legal_actions])
        self.answers.append(pb.BotMessage(action=action_to_pb(action, request.request_id)))
        self._arrive(len(self.answers))

    def _arrive(self, number: int) -> None:
        for item in self.script.get(number, ("answer",) if number else ()):
            if item == "answer":
                message: pb.BotMessage | None = self.answers[-1]
            elif item == "again":
                message = self.answers[-2]
            elif item.startswith("echo:"):
                message = pb.BotMessage(action=pb.Action(request_id=int(item[5:])))
            elif item == "garbage":
                message = pb.BotMessage()
            else:
                self.inbox.append(Incoming(Arrival.SECOND_STREAM, 0.0))
                continue
            self.inbox.append(Incoming(Arrival.MESSAGE, 0.0, message))

    async def _next(self) -> Incoming:
        if not self.inbox:
            await trio.sleep_forever()
        return self.inbox.popleft()


def play_scripted(
    script: Mapping[int, tuple[str, ...]], path: Path, strikes: int = 3
) -> tuple[MatchResult, list[dict[str, Any]]]:
    """A series of a scripted remote seat (seat 0) against greedy, under a 100 ms move time."""
    seats = (ScriptedRemote(script), InProcessSeat(greedy_policy))
    control = TimeControl(move_time_ms=100, grace_ms=10, time_bank_ms=0)
    config = MatchConfig("resync", 7, time_control=control, fault_policy=FaultPolicy(strikes))

    async def main() -> MatchResult:
        with MatchLog(path) as log:
            return await play_match(seats, config, log)

    result = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    report = verify_log(path)
    assert report.ok, report.summary()
    return result, read_records(path)


def seat_requests(records: list[dict[str, Any]]) -> list[int]:
    return [
        record["id"] for record in records if record["type"] == "request" and record["seat"] == 0
    ]


def one_stray_strike(result: MatchResult, records: list[dict[str, Any]]) -> Fault:
    """The one fault is a stray strike; the bot chose every action of its seat."""
    assert [fault.kind for fault in result.faults] == [FaultKind.PROTOCOL_VIOLATION]
    assert result.end == "complete"
    assert not any(r["type"] == "action" and r["by"] == "referee" for r in records)
    fault = result.faults[0]
    assert fault.stray
    return fault


def test_an_answer_sent_twice_is_one_strike_at_the_next_decision(tmp_path: Path) -> None:
    result, records = play_scripted({5: ("answer", "answer")}, tmp_path / "twice.jsonl")
    fault = one_stray_strike(result, records)
    asked = seat_requests(records)
    assert fault.request_id == asked[5]
    assert fault.evidence["echoed_request_id"] == asked[4]
    assert "a request settled already" in fault.detail
    fault_record = next(r for r in records if r["type"] == "fault")
    assert fault_record["stray"] is True
    assert fault_record["request_id"] == asked[5]


def test_copies_of_a_settled_answer_cost_one_strike(tmp_path: Path) -> None:
    result, records = play_scripted({5: ("answer",) * 4}, tmp_path / "copies.jsonl")
    one_stray_strike(result, records)


def one_settling_strike(result: MatchResult, records: list[dict[str, Any]]) -> Fault:
    """The one fault settled its decision (the referee played for the bot, once), the bot's
    own answer to it was dropped unstruck, and the bot chose every later action of its seat."""
    assert [fault.kind for fault in result.faults] == [FaultKind.PROTOCOL_VIOLATION]
    assert result.end == "complete"
    fault = result.faults[0]
    assert not fault.stray
    by_referee = [r for r in records if r["type"] == "action" and r["by"] == "referee"]
    assert [r["request"] for r in by_referee] == [fault.request_id]
    return fault


def test_an_answer_before_any_request_is_one_strike(tmp_path: Path) -> None:
    # It is taken as the seat's answer to its first request, gone wrong: that decision is
    # settled by the fault, and the bot's real answer to it, coming next, is dropped.
    result, records = play_scripted({0: ("echo:999",)}, tmp_path / "early.jsonl")
    fault = one_settling_strike(result, records)
    assert fault.request_id == seat_requests(records)[0]
    assert fault.evidence["echoed_request_id"] == 999
    assert "answer echoes request id 999, expected" in fault.detail


def test_a_second_stream_or_a_stray_message_is_one_strike_and_play_goes_on(
    tmp_path: Path,
) -> None:
    for item, detail in (("second_stream", "opened a second stream"), ("garbage", "expected an")):
        result, records = play_scripted({5: (item, "answer")}, tmp_path / f"{item}.jsonl")
        fault = one_settling_strike(result, records)
        assert fault.detail.startswith(detail)


def test_an_answer_with_a_wrong_id_is_one_strike_not_also_a_timeout(tmp_path: Path) -> None:
    # The bot's only answer echoes an id never issued: one strike, the referee plays for it at
    # once (no waiting out the clock, no time charged beyond the answer's own).
    result, records = play_scripted({5: ("echo:999",)}, tmp_path / "wrong.jsonl")
    fault = one_settling_strike(result, records)
    assert fault.request_id == seat_requests(records)[4]
    assert fault.elapsed_ms < 1


def test_late_answers_to_a_timed_out_request_are_dropped_unstruck(tmp_path: Path) -> None:
    script = {5: (), 6: ("again", "again", "answer")}
    result, records = play_scripted(script, tmp_path / "late.jsonl")
    assert [fault.kind for fault in result.faults] == [FaultKind.TIMEOUT]
    assert result.end == "complete"
    choosers = [r["by"] for r in records if r["type"] == "action" and r["by"] != "forced"]
    assert choosers.count("referee") == 1


def test_a_stray_strike_then_no_answer_is_also_a_timeout(tmp_path: Path) -> None:
    result, records = play_scripted({5: ("again",)}, tmp_path / "stray-then-none.jsonl")
    assert [fault.kind for fault in result.faults] == [
        FaultKind.PROTOCOL_VIOLATION,
        FaultKind.TIMEOUT,
    ]
    assert [fault.request_id for fault in result.faults] == [seat_requests(records)[4]] * 2
    assert result.end == "complete"


def test_three_stray_strikes_forfeit(tmp_path: Path) -> None:
    script = dict.fromkeys((3, 5, 7), ("answer", "answer"))
    result, records = play_scripted(script, tmp_path / "three.jsonl")
    assert [fault.kind for fault in result.faults] == [FaultKind.PROTOCOL_VIOLATION] * 3
    assert [fault.stray for fault in result.faults] == [True, True, False]
    assert result.forfeited == (0,)
    assert result.end == "forfeit"
    assert not any(r["type"] == "action" and r["by"] == "referee" for r in records)


def test_the_verifier_tells_a_stray_fault_from_one_that_settles(tmp_path: Path) -> None:
    path = tmp_path / "twice.jsonl"
    play_scripted({5: ("answer", "answer")}, path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(line.replace(',"stray":true', "") for line in lines) + "\n")
    report = verify_log(path)
    assert not report.ok
    assert report.problem is not None
    assert "the bot's answer was a fault" in report.problem.reason
