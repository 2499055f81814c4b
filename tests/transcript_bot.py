"""A greedy SDK bot that records what it is told, for tests/test_events_in_requests.py.

Run as ``python transcript_bot.py <prefix>``: ``<prefix>.flag`` ("1" or "0") sets
``Hello.events_in_requests``; at the end the bot writes to ``<prefix>.json`` every call the SDK
made into it (``calls``, in order, arguments as ``repr``) and every message it read off the wire
(``wire``, serialized, hex).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.sdk import Bot, HandSummary, SeriesInfo, SeriesSummary, Session
from referee.rules import Action, GreedyPolicy, Observation, PublicEvent


class TranscriptBot(Bot):
    """Greedy play; records every callback."""

    name = "transcript"
    version = "1.0.0"

    def __init__(self, events_in_requests: bool) -> None:
        self.events_in_requests = events_in_requests
        self.policy = GreedyPolicy(knock_at=10)
        self.calls: list[list[str]] = []

    def on_series_start(self, info: SeriesInfo) -> None:
        self.calls.append(["on_series_start", repr(info)])

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        action = self.policy(view, legal)
        self.calls.append(["decide", repr(view), repr(list(legal)), repr(action)])
        return action

    def on_opponent_action(self, event: PublicEvent) -> None:
        self.calls.append(["on_opponent_action", repr(event)])

    def on_hand_end(self, summary: HandSummary) -> None:
        self.calls.append(["on_hand_end", repr(summary)])

    def on_series_end(self, summary: SeriesSummary) -> None:
        self.calls.append(["on_series_end", repr(summary)])


class WireSession(Session):
    """The SDK's session, keeping every message it reads."""

    wire: list[str]

    def handle(self, message: pb.RefereeMessage) -> bool:
        self.wire.append(message.SerializeToString(deterministic=True).hex())
        return super().handle(message)


def main() -> int:
    prefix = sys.argv[1]
    bot = TranscriptBot(events_in_requests=Path(f"{prefix}.flag").read_text().strip() == "1")
    session = WireSession(bot, os.environ["GIN_TOKEN"])
    session.wire = []
    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        status = session.play(pb_grpc.RefereeStub(channel))
    Path(f"{prefix}.json").write_text(json.dumps({"calls": bot.calls, "wire": session.wire}))
    return status


if __name__ == "__main__":
    sys.exit(main())
