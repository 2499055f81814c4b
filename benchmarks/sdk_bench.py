"""What the Python SDK spends per decision, beside the bot's own policy.

    python -m benchmarks.sdk_bench [--runs N] [--seeds N]

Requests are recorded from greedy-vs-greedy series, written by the referee's own encoder
(:class:`protocol.wire.RequestEncoder`, opponent actions carried in requests as the SDK asks)
and parsed as the bot's gRPC stub parses them. Then, per request, interleaved over the runs (a
figure is the median over runs of the mean over the requests; a speed-up is the median of the
per-run ratios):

1. decoding: the plain conversion (``observation_from_pb`` and ``action_from_pb`` of each legal
   action) against the SDK's :class:`~protocol.convert.RequestDecoder`, on mid-hand requests
   (16 to 30 history entries) and on all requests, each request timed alone within its
   series' stream (one decoder per seat and series, as in a bot: its caches start cold);
2. a whole decision: the SDK's ``Session.handle`` of the request (events, decoding, the greedy
   bot's ``decide``, encoding the answer, queueing it) against the bare policy on the decoded
   view, and the same loop with the plain conversion, as the SDK did it before.

The gRPC transport (the stub's threads, the socket) is not timed here.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from protocol import hollywood_gin_pb2 as pb
from protocol.convert import (
    RequestDecoder,
    action_from_pb,
    action_to_pb,
    observation_from_pb,
    params_to_pb,
    public_event_from_pb,
)
from protocol.sdk import Session
from protocol.wire import RequestEncoder
from referee.rules import (
    Action,
    GreedyPolicy,
    Observation,
    PublicEvent,
    RuleParams,
    SeriesState,
    observation,
    public_view,
)
from sample_bots.greedy.bot import GreedyBot

Stream = list[pb.RefereeMessage]
"""One seat's decision requests of a series, in order."""


def record(seed: int) -> tuple[Stream, Stream]:
    """Both seats' requests of one greedy-vs-greedy series."""
    series = SeriesState(seed, RuleParams())
    policies = (GreedyPolicy(knock_at=10), GreedyPolicy(knock_at=10))
    encoders = (RequestEncoder(), RequestEncoder())
    held: tuple[list[PublicEvent], list[PublicEvent]] = ([], [])
    streams: tuple[Stream, Stream] = ([], [])
    request_id = 0
    while series.result is None:
        request_id += 1
        seat = series.to_move
        view = observation(series, seat)
        legal = series.legal_actions()
        data = encoders[seat].encode(
            request_id, view, legal, time_left_ms=950, bank_left_ms=9000, events=held[seat]
        )
        held[seat].clear()
        streams[seat].append(pb.RefereeMessage.FromString(data))
        event = series.apply(policies[seat](view, legal))
        held[1 - seat].append(public_view(event, 1 - seat))
    return streams


def welcome(seat: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(welcome=pb.Welcome(seat=seat, rules=params_to_pb(RuleParams())))


def plain_decode(message: pb.RefereeMessage, seat: int, params: RuleParams) -> object:
    request = message.request
    view = observation_from_pb(request.observation, request.kind, seat, params)
    return view, [action_from_pb(action) for action in request.legal_actions]


def timed(function: Callable[[], int | tuple[float, int]]) -> float:
    """Microseconds per unit of one batch (a batch that times itself says its own time)."""
    gc.collect()
    start = time.perf_counter()
    units = function()
    spent = time.perf_counter() - start
    if isinstance(units, tuple):
        spent, units = units
    return spent / units * 1e6


def is_mid_hand(message: pb.RefereeMessage) -> bool:
    """A realistic mid-hand request: 16 to 30 entries of history."""
    return 16 <= len(message.request.observation.history) <= 30


def decode_each(
    streams: Sequence[tuple[int, Stream]], fast: bool, only_mid: bool
) -> Callable[[], tuple[float, int]]:
    """Decode every request of every stream as a bot would, one decoder per seat and series
    (its caches start cold), timing each request; the total of the requests counted."""
    params = RuleParams()
    clock = time.perf_counter

    def run() -> tuple[float, int]:
        total, count = 0.0, 0
        for seat, stream in streams:
            decoder = RequestDecoder()
            for message in stream:
                request = message.request
                start = clock()
                if fast:
                    decoder.decode(request, seat, params)
                else:
                    plain_decode(message, seat, params)
                spent = clock() - start
                if not only_mid or is_mid_hand(message):
                    total += spent
                    count += 1
        return total, count

    return run


def session_loop(streams: Sequence[tuple[int, Stream]]) -> Callable[[], int]:
    """The SDK's own handling of each request, answer queued."""

    def run() -> int:
        for seat, stream in streams:
            session = Session(GreedyBot(), "token")
            session.handle(welcome(seat))
            for message in stream:
                session.handle(message)
        return sum(len(stream) for _, stream in streams)

    return run


def old_loop(streams: Sequence[tuple[int, Stream]]) -> Callable[[], int]:
    """What ``Session`` did per request before the decoder: plain conversions throughout."""
    params = RuleParams()

    def run() -> int:
        for seat, stream in streams:
            bot = GreedyBot()
            outbox: list[pb.BotMessage] = []
            for message in stream:
                request = message.request
                for event in request.events:
                    bot.on_opponent_action(public_event_from_pb(event.opponent_action))
                view = observation_from_pb(request.observation, request.kind, seat, params)
                legal = [action_from_pb(action) for action in request.legal_actions]
                action = bot.decide(view, legal)
                outbox.append(pb.BotMessage(action=action_to_pb(action, request.request_id)))
        return sum(len(stream) for _, stream in streams)

    return run


def bare_policy(views: Sequence[tuple[Observation, list[Action]]]) -> Callable[[], int]:
    def run() -> int:
        policy = GreedyPolicy(knock_at=10)
        for view, legal in views:
            policy(view, legal)
        return len(views)

    return run


def main(argv: Sequence[str] | None = None) -> None:
    """Record, time, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args(argv)
    streams = [
        (seat, stream) for seed in range(args.seeds) for seat, stream in enumerate(record(seed))
    ]
    mid = [m for _, stream in streams for m in stream if is_mid_hand(m)]
    params = RuleParams()
    views = [
        (view, legal)
        for seat, stream in streams
        for view, legal in (RequestDecoder().decode(m.request, seat, params) for m in stream)
    ]
    count = sum(len(stream) for _, stream in streams)
    history = statistics.median(len(m.request.observation.history) for m in mid)
    variants: dict[str, Callable[[], int | tuple[float, int]]] = {
        "decode mid plain": decode_each(streams, fast=False, only_mid=True),
        "decode mid fast": decode_each(streams, fast=True, only_mid=True),
        "decode all plain": decode_each(streams, fast=False, only_mid=False),
        "decode all fast": decode_each(streams, fast=True, only_mid=False),
        "decision old": old_loop(streams),
        "decision sdk": session_loop(streams),
        "bare policy": bare_policy(views),
    }
    for run in variants.values():  # warm the caches and the code
        run()
    figures: dict[str, list[float]] = {key: [] for key in variants}
    keys = list(variants)
    for number in range(args.runs):
        for key in keys[number % len(keys) :] + keys[: number % len(keys)]:
            figures[key].append(timed(variants[key]))
    median = {key: statistics.median(values) for key, values in figures.items()}
    ratio = {
        (old, new): statistics.median(
            a / b for a, b in zip(figures[old], figures[new], strict=True)
        )
        for old, new in (
            ("decode mid plain", "decode mid fast"),
            ("decode all plain", "decode all fast"),
            ("decision old", "decision sdk"),
        )
    }
    spread = {key: (min(values), max(values)) for key, values in figures.items()}

    console = Console()
    table = Table(
        title=f"Python SDK per request ({args.runs} runs, median; {count} requests of "
        f"{args.seeds} greedy series, {len(mid)} mid-hand with median {history:g} history)"
    )
    for column in ("what", "plain / old us", "SDK us", "speed-up", "SDK range us"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for label, old, new in (
        ("decode, mid-hand request", "decode mid plain", "decode mid fast"),
        ("decode, any request", "decode all plain", "decode all fast"),
        ("whole decision (decode+decide+encode)", "decision old", "decision sdk"),
    ):
        low, high = spread[new]
        table.add_row(
            label,
            f"{median[old]:.1f}",
            f"{median[new]:.1f}",
            f"{ratio[old, new]:.1f}x",
            f"{low:.1f}-{high:.1f}",
        )
    bare = median["bare policy"]
    table.add_row("bare greedy policy", "", f"{bare:.1f}", "", "")
    table.add_row(
        "SDK overhead beside the policy",
        f"{median['decision old'] - bare:.1f}",
        f"{median['decision sdk'] - bare:.1f}",
        f"{(median['decision old'] - bare) / (median['decision sdk'] - bare):.1f}x",
        "",
    )
    console.print(table)


if __name__ == "__main__":
    main()
