"""What the Python SDK spends per decision, beside the bot's own policy, and over its transport.

    python -m benchmarks.sdk_bench [--runs N] [--seeds N]
    python -m benchmarks.sdk_bench --transport [--runs N] [--seeds N]

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

The gRPC transport (the stub's threads, the socket) is not timed there. ``--transport`` times it:

3. the bot process's CPU per decision over a real stream, for each client of
   :mod:`benchmarks.sdk_clients` (the SDK, on its own stream and on grpcio's threaded stub, and
   bare clients using grpcio each way it can be used, ``h2`` for scale) against the same server:
   a threaded grpcio server in this process that plays one sitting per run (every recorded
   series of both seats, each opened by its Welcome and closed by its SeriesEnded, request ids
   increasing across it), sending each request as bytes and waiting for its answer. Each run
   starts a fresh client process; its CPU is the sum of its threads' time on a CPU
   (``/proc/PID/task/*/schedstat``, nanoseconds), read when its hello arrives (its start-up, from
   exec to hello) and after its last answer. The SDK's bot plays the first legal action, so the
   SDK's figure is its own work and its transport's, not a policy's. The ratios are the SDK's
   CPU per decision over each client's, median of the per-run ratios (clients interleaved,
   each run starting with the next one).
"""

from __future__ import annotations

import argparse
import gc
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from pathlib import Path

import grpc
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
    score_to_pb,
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
    parser.add_argument("--transport", action="store_true", help="part 3: over a real stream")
    parser.add_argument("--runs", type=int, default=None, help="15 (8 with --transport)")
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args(argv)
    if args.transport:
        transport_main(args.runs or 8, args.seeds)
        return
    args.runs = args.runs or 15
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


# --- 3. over a real stream: the bot process's CPU ----------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = {
    "sdk": "SDK, its own stream",
    "sdk-threads": "SDK on the stub's threads",
    "stub-threads": "bare: stub, queue",
    "stub-inline": "bare: stub, inline",
    "aio": "bare: grpc.aio",
    "core": "bare: core call",
    "h2": "bare: h2, no grpcio",
}
"""The clients of :mod:`benchmarks.sdk_clients` (its docstring says what each does), the SDK
first."""
SERVICE = "hollywood_gin.v1.Referee"
WAIT_S = 30.0


class ReplayReferee:
    """A threaded grpcio server on a Unix socket: sends the bytes put in :attr:`outbox`, puts
    each message of the bot in :attr:`inbox` (``None`` when the stream is over)."""

    def __init__(self, folder: str) -> None:
        self.address = f"unix://{folder}/referee.sock"
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.inbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
        handler: grpc.RpcMethodHandler[pb.BotMessage, bytes] = (
            grpc.stream_stream_rpc_method_handler(
                self.play, request_deserializer=pb.BotMessage.FromString
            )
        )
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=3))
        generic = grpc.method_handlers_generic_handler(SERVICE, {"Play": handler})
        self.server.add_generic_rpc_handlers((generic,))
        self.server.add_insecure_port(self.address)
        self.server.start()

    def play(
        self,
        incoming: Iterator[pb.BotMessage],
        context: grpc.ServicerContext,  # noqa: ARG002
    ) -> Iterator[bytes]:
        def read() -> None:
            try:
                for message in incoming:
                    self.inbox.put(message)
            except grpc.RpcError:
                pass  # the stream ended under it
            self.inbox.put(None)

        threading.Thread(target=read, daemon=True).start()
        while (data := self.outbox.get()) is not None:
            yield data

    def answer(self) -> pb.BotMessage:
        """The bot's next message.

        Raises:
            RuntimeError: the bot ended its stream.
        """
        message = self.inbox.get(timeout=WAIT_S)
        if message is None:
            raise RuntimeError("the client ended its stream (see its stderr above)")
        return message


Step = tuple[bytes, int]
"""A message to send, and the request id its answer must echo (0: no answer)."""


def sitting(seeds: int) -> list[Step]:
    """One sitting: both seats' series of each recorded seed, request ids going on across it."""
    steps: list[Step] = []
    score = score_to_pb(((0, 0, 0), (0, 0, 0)), (None, None, None))
    ended = pb.RefereeMessage(
        event=pb.Event(series_ended=pb.SeriesEnded(end=pb.SERIES_END_COMPLETE, winner=-1))
    )
    ended.event.series_ended.score.CopyFrom(score)
    request_id = 0
    for seed in range(seeds):
        for seat, stream in enumerate(record(seed)):
            opening = welcome(seat)
            opening.welcome.bot_seed = seed * 2 + seat + 1
            steps.append((opening.SerializeToString(), 0))
            for message in stream:
                request_id += 1
                message.request.request_id = request_id
                steps.append((message.SerializeToString(), request_id))
            steps.append((ended.SerializeToString(), 0))
    return steps


def cpu_s(pid: int) -> float:
    """The CPU time of ``pid``'s threads so far (those alive), in seconds."""
    total = 0
    task_dir = Path(f"/proc/{pid}/task")
    for task in task_dir.iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # (a thread that just ended)
    return total / 1e9


def play_client(variant: str, steps: Sequence[Step]) -> tuple[float, float]:
    """One sitting against a fresh ``variant`` client: its start-up CPU (s, exec to hello) and
    its CPU per decision (µs)."""
    with tempfile.TemporaryDirectory() as folder:
        referee = ReplayReferee(folder)
        environment = {**os.environ, "GIN_REFEREE": referee.address, "GIN_TOKEN": "bench"}
        argv = [sys.executable, "-m", "benchmarks.sdk_clients", variant]
        with subprocess.Popen(argv, cwd=ROOT, env=environment) as client:
            try:
                if referee.answer().WhichOneof("kind") != "hello":
                    raise RuntimeError(f"{variant}: the first message is not a hello")
                start = cpu_s(client.pid)
                decisions = 0
                for data, request_id in steps:
                    referee.outbox.put(data)
                    if request_id:
                        echoed = referee.answer().action.request_id
                        if echoed != request_id:
                            raise RuntimeError(f"{variant}: answered {echoed}, not {request_id}")
                        decisions += 1
                spent = cpu_s(client.pid) - start
                referee.outbox.put(
                    pb.RefereeMessage(
                        goodbye=pb.Goodbye(reason=pb.GOODBYE_REASON_SERIES_OVER)
                    ).SerializeToString()
                )
                referee.outbox.put(None)
                if client.wait(timeout=WAIT_S) != 0:
                    raise RuntimeError(f"{variant}: exit status {client.returncode}")
            finally:
                client.kill()
                referee.server.stop(grace=None)
    return start, spent / decisions * 1e6


def transport_main(runs: int, seeds: int) -> None:
    """Part 3: every client, interleaved run by run; a table of medians and ratios."""
    steps = sitting(seeds)
    decisions = sum(1 for _, request_id in steps if request_id)
    keys = list(CLIENTS)
    per_decision: dict[str, list[float]] = {key: [] for key in keys}
    startup: dict[str, list[float]] = {key: [] for key in keys}
    for number in range(runs):
        for key in keys[number % len(keys) :] + keys[: number % len(keys)]:
            started, spent = play_client(key, steps)
            startup[key].append(started)
            per_decision[key].append(spent)
    table = Table(
        title=f"Bot process CPU per decision over a real stream ({runs} runs, median; a sitting "
        f"of {2 * seeds} series, {decisions} decisions, per run)"
    )
    for column in ("bot side", "µs/decision", "range µs", "SDK ÷ this", "start-up CPU ms"):
        table.add_column(column, justify="left" if column == "bot side" else "right")
    sdk = per_decision["sdk"]
    for key, label in CLIENTS.items():
        figures = per_decision[key]
        ratio = statistics.median(a / b for a, b in zip(sdk, figures, strict=True))
        table.add_row(
            label,
            f"{statistics.median(figures):.0f}",
            f"{min(figures):.0f}-{max(figures):.0f}",
            f"{ratio:.2f}x",
            f"{statistics.median(startup[key]) * 1000:.0f}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
