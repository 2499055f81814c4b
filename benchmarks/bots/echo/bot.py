"""A trivial bot for benchmarks: answers each request with its first legal action at once.

It skips the SDK's conversions to rules types, so the time the referee measures per decision is
the referee's own cost plus the transport, with almost nothing spent in the bot. Like the SDK, it
sets ``events_in_requests``: the opponent's actions come inside its requests (and it ignores
them), one message per decision.
"""

from __future__ import annotations

import os
import queue
import sys
from collections.abc import Iterator

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc


def main() -> int:
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                token=os.environ["GIN_TOKEN"],
                name="echo",
                version="1.0.0",
                protocol_version=1,
                events_in_requests=True,
            )
        )
    )

    def messages() -> Iterator[pb.BotMessage]:
        while (item := outbox.get()) is not None:
            yield item

    with grpc.insecure_channel(os.environ["GIN_REFEREE"]) as channel:
        for message in pb_grpc.RefereeStub(channel).Play(messages()):
            if message.HasField("request"):
                answer = pb.Action()
                answer.CopyFrom(message.request.legal_actions[0])
                answer.request_id = message.request.request_id
                outbox.put(pb.BotMessage(action=answer))
            elif message.HasField("goodbye"):
                break
    outbox.put(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
