"""A scripted fake referee: a real gRPC server on a Unix socket that plays a script.

A script is a generator function taking the bot's incoming messages (an iterator) and yielding
the referee's messages; what the bot sent is recorded for the test to check.
:func:`series_script` scripts a whole series against a real :class:`SeriesState`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.convert import (
    DECISION_KINDS,
    action_from_pb,
    action_to_pb,
    hand_ended_to_pb,
    observation_to_pb,
    params_to_pb,
    public_event_to_pb,
    score_to_pb,
)
from referee.rules import (
    HandRecord,
    HandState,
    RandomPolicy,
    RuleParams,
    SeriesResult,
    SeriesState,
    observation,
)

Script = Callable[[Iterator[pb.BotMessage]], Iterator[pb.RefereeMessage]]


class _Servicer(pb_grpc.RefereeServicer):
    def __init__(self, script: Script, received: list[pb.BotMessage]) -> None:
        self.script = script
        self.received = received

    def Play(  # noqa: N802 - the gRPC method name
        self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[pb.RefereeMessage]:
        def recorded() -> Iterator[pb.BotMessage]:
            for message in request_iterator:
                self.received.append(message)
                yield message

        yield from self.script(recorded())


class FakeReferee:
    """Serve ``script`` on ``unix://<folder>/referee.sock`` for one test."""

    def __init__(self, folder: Path, script: Script) -> None:
        self.address = f"unix://{folder / 'referee.sock'}"
        self.received: list[pb.BotMessage] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        pb_grpc.add_RefereeServicer_to_server(_Servicer(script, self.received), self.server)
        self.server.add_insecure_port(self.address)

    def __enter__(self) -> FakeReferee:
        self.server.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.stop(grace=None).wait()


def welcome(seat: int = 0, params: RuleParams | None = None) -> pb.RefereeMessage:
    """A Welcome for ``seat``."""
    return pb.RefereeMessage(
        welcome=pb.Welcome(
            seat=seat,
            protocol_version=1,
            rules=params_to_pb(params or RuleParams()),
            time_control=pb.TimeControl(move_time_ms=1000, grace_ms=100, startup_ms=5000),
            opponent_name="fake",
            opponent_version="0",
            match_id="test",
        )
    )


def request(state: SeriesState | HandState, request_id: int) -> pb.RefereeMessage:
    """A DecisionRequest for the seat to move in ``state``."""
    seat = state.to_move
    view = observation(state, seat)
    return pb.RefereeMessage(
        request=pb.DecisionRequest(
            request_id=request_id,
            kind=DECISION_KINDS[view.phase],
            observation=observation_to_pb(view),
            legal_actions=[action_to_pb(action) for action in state.legal_actions()],
            time_left_ms=1000,
        )
    )


def goodbye(
    reason: pb.GoodbyeReason.ValueType = pb.GOODBYE_REASON_SERIES_OVER,
) -> pb.RefereeMessage:
    """A Goodbye."""
    return pb.RefereeMessage(goodbye=pb.Goodbye(reason=reason))


@dataclass
class SeriesLog:
    """What a :func:`series_script` saw, for the test to check once the bot is done."""

    sent_ids: list[int] = field(default_factory=list)
    """The request ids the referee sent, in order."""
    echoed_ids: list[int] = field(default_factory=list)
    """The request ids of the bot's answers, in order."""
    hands: list[HandRecord] = field(default_factory=list)
    """Every finished hand."""
    result: SeriesResult | None = None
    """The series result, once the script has played the series to its end."""
    said_goodbye: bool = False
    """Whether the script got as far as its Goodbye."""


def series_script(seed: int, request_ids: Iterable[int] | None = None) -> tuple[SeriesLog, Script]:
    """A referee that plays a whole series: the bot in seat 0, a random policy in seat 1.

    Every action of the bot goes through :meth:`SeriesState.apply`, so an illegal one raises
    :class:`~referee.rules.IllegalActionError` in the script (and the series never finishes).
    Requests are numbered from ``request_ids`` (by default 1007, 1014, 1021, ...).
    """
    log = SeriesLog()
    ids = iter(request_ids if request_ids is not None else itertools.count(1007, 7))

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        next(incoming)  # hello
        yield from _one_series(seed, 0, "test", ids, incoming, log=log)
        log.said_goodbye = True
        yield goodbye()

    return log, script


@dataclass
class SittingLog:
    """What a :func:`sitting_script` saw: the hello, then each series it played."""

    hello: pb.Hello | None = None
    series: list[SeriesLog] = field(default_factory=list)
    said_goodbye: bool = False


def sitting_script(
    seeds: Iterable[int],
    seats: Iterable[int] | None = None,
    rules: Iterable[RuleParams] | None = None,
) -> tuple[SittingLog, Script]:
    """A referee that plays a sitting: one series per seed on one stream (the bot in the seat
    ``seats`` gives, by default seat 0 then 1 in turn; under the rules ``rules`` gives, by
    default the standard ones), each opened by its own Welcome and closed by its SeriesEnded,
    then one Goodbye. A bot whose hello does not set ``plays_on`` gets the first series only,
    then the Goodbye. Request ids go on increasing across series."""
    log = SittingLog()
    ids = itertools.count(1007, 7)
    chosen = list(seats) if seats is not None else None
    chosen_rules = list(rules) if rules is not None else None

    def script(incoming: Iterator[pb.BotMessage]) -> Iterator[pb.RefereeMessage]:
        log.hello = next(incoming).hello
        for index, seed in enumerate(seeds):
            if index > 0 and not log.hello.plays_on:
                break
            seat = chosen[index] if chosen is not None else index % 2
            params = chosen_rules[index] if chosen_rules is not None else RuleParams()
            series_log = SeriesLog()
            log.series.append(series_log)
            yield from _one_series(
                seed, seat, f"test-{index}", ids, incoming, log=series_log, params=params
            )
        log.said_goodbye = True
        yield goodbye()

    return log, script


def _one_series(
    seed: int,
    bot_seat: int,
    match_id: str,
    ids: Iterator[int],
    incoming: Iterator[pb.BotMessage],
    *,
    log: SeriesLog,
    params: RuleParams | None = None,
) -> Iterator[pb.RefereeMessage]:
    """One series on the stream under ``params`` (by default the standard rules): the Welcome,
    the bot in ``bot_seat`` against a random policy, its events, and the SeriesEnded."""
    other = 1 - bot_seat
    params = params or RuleParams()
    first = welcome(seat=bot_seat, params=params)
    first.welcome.match_id = match_id
    first.welcome.bot_seed = seed + 1
    yield first
    series = SeriesState(seed, params)
    opponent = RandomPolicy(seed)
    while series.result is None:
        seat = series.to_move
        hands_before = len(series.finished)
        if seat == bot_seat:
            request_id = next(ids)
            log.sent_ids.append(request_id)
            yield request(series, request_id)
            answer = next(incoming)
            log.echoed_ids.append(answer.action.request_id)
            action = action_from_pb(answer.action)
        else:
            action = opponent(observation(series, other), series.legal_actions())
        series.apply(action)
        if seat == other and series.hand.history:  # (a hand-ending action is in HandEnded)
            event = public_event_to_pb(observation(series, bot_seat).history[-1])
            yield pb.RefereeMessage(event=pb.Event(opponent_action=event))
        if len(series.finished) > hands_before:
            record = series.finished[-1]
            log.hands.append(record)
            ended = hand_ended_to_pb(record.outcome, record.number, None, record.games)
            ended.score.CopyFrom(
                score_to_pb(
                    (series.score.totals(0), series.score.totals(1)), series.score.game_winners
                )
            )
            yield pb.RefereeMessage(event=pb.Event(hand_ended=ended))
    result = series.result
    log.result = result
    yield pb.RefereeMessage(
        event=pb.Event(
            series_ended=pb.SeriesEnded(
                end=pb.SERIES_END_COMPLETE,
                winner=-1 if result.winner is None else result.winner,
                score=score_to_pb(result.totals, result.game_winners),
                hands=len(result.hands),
            )
        )
    )


def run_bot_process(
    argv: list[str], cwd: Path, environment: dict[str, str], timeout_s: float = 120.0
) -> tuple[int, str, str]:
    """Run a bot program until it exits; ``(exit code, stdout, stderr)``.

    It gets its own process group (session), killed whatever happens.
    """
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout_s)
    finally:
        with contextlib.suppress(ProcessLookupError):  # (already gone, the whole group)
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    return process.returncode, out, err


def assert_plays_a_scripted_series(
    tmp_path: Path,
    run_bot: Callable[[dict[str, str]], tuple[int, str, str]],
    identity: tuple[str, str],
    big_ids: tuple[int, int],
    label: str,
) -> None:
    """A bot program (``run_bot`` starts it with an environment) plays a whole scripted series
    against the fake referee: it says hello as ``identity`` (name, version), echoes every
    request id (the first two are ``big_ids``: uint64 beyond 2**53), knocks at least once,
    writes nothing to stdout and leaves after the goodbye with status 0."""
    request_ids = iter((*big_ids, *range(1007, 1_000_000, 7)))
    log, script = series_script(seed=5, request_ids=request_ids)
    with FakeReferee(tmp_path, script) as referee:
        started = time.monotonic()
        code, out, err = run_bot({"GIN_REFEREE": referee.address, "GIN_TOKEN": "secret-token"})
        elapsed = time.monotonic() - started
        hello = referee.received[0].hello if referee.received else None
    assert code == 0, f"the {label} bot exited {code}:\n{err}"
    assert out == ""
    assert log.result is not None, f"the series did not finish:\n{err}"
    assert log.said_goodbye
    assert hello is not None
    assert (hello.token, hello.name, hello.version, hello.protocol_version) == (
        "secret-token",
        *identity,
        1,
    )
    assert log.sent_ids[:2] == list(big_ids)
    assert log.echoed_ids == log.sent_ids
    assert len(log.hands) == len(log.result.hands) > 0
    knocks = [hand for hand in log.hands if hand.outcome.knocker == 0]
    assert knocks, f"the {label} bot never knocked"
    print(f"{label} series: {len(log.hands)} hands, {len(log.sent_ids)} decisions, {elapsed:.2f}s")


def assert_plays_a_scripted_sitting(
    tmp_path: Path,
    run_bot: Callable[[dict[str, str]], tuple[int, str, str]],
    label: str,
    series: int = 3,
) -> SittingLog:
    """A bot program that sets ``Hello.plays_on`` plays ``series`` whole series on one stream
    (seats 0, 1, 0, ...), each answered in full and each echoing its ids, then leaves after the
    goodbye with status 0 and nothing on stdout."""
    log, script = sitting_script(range(11, 11 + series))
    with FakeReferee(tmp_path, script) as referee:
        code, out, err = run_bot({"GIN_REFEREE": referee.address, "GIN_TOKEN": "secret-token"})
        assert referee.received
    assert code == 0, f"the {label} bot exited {code}:\n{err}"
    assert out == ""
    assert log.hello is not None
    assert log.hello.plays_on, f"the {label} bot does not play on"
    assert log.said_goodbye
    assert len(log.series) == series
    for played in log.series:
        assert played.result is not None, f"a series of the sitting did not finish:\n{err}"
        assert played.echoed_ids == played.sent_ids
        assert len(played.hands) == len(played.result.hands) > 0
    return log
