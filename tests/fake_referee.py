"""A scripted fake referee: a real gRPC server on a Unix socket that plays a script.

A script is a generator function taking the bot's incoming messages (an iterator) and yielding
the referee's messages; what the bot sent is recorded for the test to check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from types import TracebackType

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.convert import DECISION_KINDS, action_to_pb, observation_to_pb, params_to_pb
from referee.rules import HandState, RuleParams, SeriesState, observation

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
