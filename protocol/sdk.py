"""The Python bot SDK: subclass :class:`Bot`, write ``decide``, call ``run()``.

``run()`` reads ``GIN_REFEREE`` (the address) and ``GIN_TOKEN`` (the one-time secret) from the
environment, opens one ``Play`` stream, says hello, answers every decision request with the
action ``decide`` returns (echoing the request id), passes events to the callbacks, and returns
on goodbye or when the referee closes the stream. Before the first callback of a series it seeds
the bot's generator, :attr:`Bot.rng`, with the Welcome's ``bot_seed``: a bot that draws its
random choices from it plays the same series again when a league is run again with the same
secret.

A bot plays on (:attr:`Bot.plays_on`): the referee may keep its process for a sitting, several
series in a row on the same stream, each opened by its own Welcome. The SDK plays each series
after the first with the bot :meth:`Bot.next_series` gives, by default a fresh instance of the
same class, so nothing of one series reaches the next unless the bot says so.

The callbacks see rules types, not messages: an :class:`~referee.rules.Observation` and the
legal actions in, an :class:`~referee.rules.Action` out, so the same bot class plays in-process
through :func:`referee.rules.play_series` (see :meth:`Bot.as_policy`).

An error in the bot's own code is printed to stderr with the request it happened on and the
bot exits with status 1: the SDK never hides a bug behind a default action. The stream is driven
from the bot's own thread (see :mod:`protocol._stream`): ``decide`` and the callbacks run in the
main thread, with no thread of the SDK's beside them and no event loop.
"""

from __future__ import annotations

import os
import random
import sys
from _queue import SimpleQueue  # what queue.SimpleQueue is, without importing queue
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, ParamSpec, TypeVar

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol._stream import BrokenStreamError, CoreStream, NoCoreCallError, Stream, ThreadedStream
from protocol.convert import (
    PROTOCOL_VERSION,
    RequestDecoder,
    action_to_pb,
    hand_ended_from_pb,
    params_from_pb,
    score_from_pb,
)
from referee.rules import Action, HandOutcome, Observation, PublicEvent, RuleParams

MANIFEST_FILE: Final = "bot.toml"
_P = ParamSpec("_P")
_R = TypeVar("_R")

REFEREE_ENV: Final = "GIN_REFEREE"
TOKEN_ENV: Final = "GIN_TOKEN"
MAX_MESSAGE_BYTES: Final = 1 << 20


class SdkError(RuntimeError):
    """The SDK cannot go on: a missing environment variable, or the referee broke protocol."""


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """What the Welcome says: the bot's seat, the rules, the clock, the opponent and the seed."""

    seat: int
    params: RuleParams
    move_time_ms: int
    time_bank_ms: int
    opponent_name: str
    opponent_version: str
    match_id: str
    bot_seed: int = 0
    """The seed for the bot's own random choices in this series (0: the referee gave none); the
    SDK seeds :attr:`Bot.rng` with it."""


@dataclass(frozen=True, slots=True)
class HandSummary:
    """A finished hand: the outcome (showdown included) and the score after it."""

    hand_number: int
    outcome: HandOutcome
    games: tuple[int, ...]
    """The games (1-based) the winner's points went into."""
    totals: tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class SeriesSummary:
    """The end of the series."""

    winner: int | None
    end: str
    totals: tuple[tuple[int, ...], tuple[int, ...]]
    hands: int


def manifest_identity(folder: Path) -> tuple[str, str] | None:
    """The name and version in the ``bot.toml`` of ``folder`` or of a folder above it (a bot whose
    script sits in a subfolder), if one is there and readable."""
    import tomllib  # noqa: PLC0415 - only here: a bot reads bot.toml once, at start

    for candidate in (folder, *folder.parents):
        try:
            with (candidate / MANIFEST_FILE).open("rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError):
            return None
        name, version = data.get("name"), data.get("version")
        return (name, version) if isinstance(name, str) and isinstance(version, str) else None
    return None


class Bot:
    """Base class of a Python bot. Override :meth:`decide`; the other callbacks are optional."""

    name: str | None = None
    """Leave unset: :meth:`run` takes the name and version from the bot's ``bot.toml`` (the
    referee refuses a Hello that differs from it). A value set here must equal bot.toml's."""
    version: str | None = None
    events_in_requests: bool = True
    """Ask the referee for the opponent's actions inside the next decision request (one message
    per decision instead of two). The callbacks are called exactly as without it; there is no
    reason to turn it off but to test that."""
    plays_on: bool = True
    """Say in the hello that this bot can play a sitting: several series in a row on one process
    and stream, against the same opponent, each series after the first played by the bot
    :meth:`next_series` gives. Set it False to have a fresh process for every series."""
    seed: int = 0
    """The seed :attr:`rng` was last seeded with (:meth:`seed_random`); 0: none yet, the
    generator seeds itself from the OS."""
    _rng: random.Random | None = None

    @property
    def rng(self) -> random.Random:
        """The generator for every random choice the bot makes. :meth:`run` seeds it with the
        Welcome's ``bot_seed`` before ``on_series_start``, so a league run again with the same
        secret replays every hand; the random module's own generator, or one seeded from the OS
        or the clock, would not. Until a seed comes (in process, or from a referee that gives
        none) it is seeded from the OS."""
        if self._rng is None:
            self._rng = random.Random()
        return self._rng

    @rng.setter
    def rng(self, generator: random.Random) -> None:
        self._rng = generator

    def seed_random(self, seed: int) -> None:
        """Seed :attr:`rng` with ``seed`` (and set :attr:`seed`): what :meth:`run` does with the
        Welcome's seed; call it to replay a series in process."""
        self.seed = seed
        self._rng = random.Random(seed)

    def on_series_start(self, info: SeriesInfo) -> None:
        """Called once with the Welcome."""

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        """Return one of ``legal`` (or a Knock of a legal card with declared melds)."""
        raise NotImplementedError("a bot must override decide()")

    def on_opponent_action(self, event: PublicEvent) -> None:
        """Called for each public action of the opponent."""

    def on_hand_end(self, summary: HandSummary) -> None:
        """Called after each hand with its showdown and score."""

    def on_series_end(self, summary: SeriesSummary) -> None:
        """Called once when the series is over."""

    def next_series(self) -> Bot:
        """The bot that plays the next series of a sitting: called when that series' Welcome
        comes, on the bot that played the series before. By default a fresh instance of the
        same class (``type(self)()``), so nothing leaks from one series to the next by accident:
        a class whose constructor needs arguments must override this.

        Override it to carry something across (return ``self``, or a new bot holding what it
        wants). A bot may carry what it learnt of its opponent (how it plays: the opponent is
        the same all through a sitting) and caches of its own computations. It may not count on
        anything of the last series going on: each series' seat (which may change), rules,
        clock and seed come with its Welcome, to ``on_series_start``, and its hands start from
        the first. A deck it remembers never comes back: the referee never puts both legs of a
        duplicate pair (the same decks, seats swapped) in one sitting, and nothing of one
        sitting's process or files reaches another.

        Whatever it returns, the SDK gives that bot the hello's name and version, seeds its
        :attr:`rng` with the new Welcome's ``bot_seed`` (so a bot that returns ``self`` replays
        with the league's secret all the same) and calls its ``on_series_start``. An exception
        here is reported like any error in the bot's code: on stderr, and the bot exits with
        status 1.
        """
        return type(self)()

    def _take_identity(self, found: tuple[str, str] | None) -> None:
        """Name and version from bot.toml; a different one set in the class is reported."""
        if found is None:
            return
        for field, value in zip(("name", "version"), found, strict=True):
            mine = getattr(self, field)
            if mine is not None and mine != value:
                _report(f"the bot's {field} {mine!r} is not bot.toml's {value!r}: using bot.toml's")
            setattr(self, field, value)

    def as_policy(self) -> _BotPolicy:
        """This bot as an in-process policy for :func:`referee.rules.play_series`."""
        return _BotPolicy(self)

    def run(self, address: str | None = None, token: str | None = None) -> int:
        """Play against the referee, one series or a sitting's; returns the process exit status.

        Raises:
            SdkError: ``GIN_REFEREE`` or ``GIN_TOKEN`` is missing.
        """
        address = address or os.environ.get(REFEREE_ENV)
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        if not address or token is None:
            raise SdkError(f"{REFEREE_ENV} and {TOKEN_ENV} must be set (the referee sets them)")
        self._take_identity(manifest_identity(Path(sys.argv[0]).absolute().parent))
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        with grpc.insecure_channel(address, options=options) as channel:
            return Session(self, token).play_channel(channel)


class _BotPolicy:
    """Adapter: a :class:`Bot` called like a policy."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.bot.decide(view, legal)


class Session:
    """One stream: the hello, then a loop over the referee's messages, a series per Welcome."""

    def __init__(self, bot: Bot, token: str) -> None:
        self.bot = bot
        """The bot of the series being played (the next one's comes with its Welcome)."""
        self.token = token
        self.outbox: SimpleQueue[pb.BotMessage] = SimpleQueue()
        """What to send once the message being handled is done with: the answer to a request."""
        self.decoder = RequestDecoder()
        self.info: SeriesInfo | None = None
        """The Welcome of the series being played; ``None`` before it and after its end."""
        self.series = 0
        """Series begun on the stream."""
        self.plays_on = bot.plays_on
        """What the hello says: whether a Welcome may come after a series' end."""
        self.finished = False
        """Whether the goodbye came."""

    def hello(self) -> pb.BotMessage:
        """The first message: the token, the bot's identity and what it asks for."""
        return pb.BotMessage(
            hello=pb.Hello(
                token=self.token,
                name=self.bot.name or "",
                version=self.bot.version or "",
                protocol_version=PROTOCOL_VERSION,
                events_in_requests=self.bot.events_in_requests,
                plays_on=self.plays_on,
            )
        )

    def play_channel(self, channel: grpc.Channel) -> int:
        """Play the stream on ``channel``, driven from this thread (what :meth:`Bot.run` does);
        0 after a goodbye, 1 after an error. On a grpcio without the call this needs (see
        :mod:`protocol._stream`) it says so on stderr and plays on grpcio's threads."""
        try:
            stream: Stream = CoreStream(channel)
        except NoCoreCallError as error:
            _report(f"this grpcio cannot make the SDK's call ({error}): using grpcio's threads")
            stream = ThreadedStream(pb_grpc.RefereeStub(channel))
        return self._play_on(stream)

    def play(self, stub: pb_grpc.RefereeStub) -> int:
        """Play the stream on grpcio's threaded stub (its threads carry every message); 0 after a
        goodbye, 1 after an error. :meth:`play_channel` is the leaner way."""
        return self._play_on(ThreadedStream(stub))

    def _play_on(self, stream: Stream) -> int:
        try:
            return self._play(stream)
        finally:
            stream.close()

    def _play(self, stream: Stream) -> int:
        try:
            stream.send(self.hello())
            while (message := stream.receive()) is not None:
                if not self.handle(message):
                    return 0
                while not self.outbox.empty():
                    stream.send(self.outbox.get())
        except BrokenStreamError as error:
            _report(f"stream closed by the referee: {error.code} {error.details}")
            return 1
        except (SdkError, ValueError) as error:
            _report(f"the referee sent something this SDK cannot follow: {error}")
            return 1
        except _BotCodeError:
            return 1
        _report("the referee closed the stream without a goodbye")
        return 1

    def handle(self, message: pb.RefereeMessage) -> bool:
        """Act on one message; False when the stream is over.

        Raises:
            SdkError: the referee sent something out of order or malformed.
        """
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self._welcome(message.welcome)
        elif kind == "request":
            self._request(message.request)
        elif kind == "event":
            self._event(message.event)
        elif kind == "goodbye":
            self.finished = True
            if message.goodbye.reason != pb.GOODBYE_REASON_SERIES_OVER:
                reason = pb.GoodbyeReason.Name(message.goodbye.reason)
                raise SdkError(f"referee said goodbye: {reason} {message.goodbye.detail}")
            return False
        else:
            raise SdkError("referee sent an empty message")
        return True

    def _welcome(self, welcome: pb.Welcome) -> None:
        if self.info is not None:
            raise SdkError("referee sent a welcome in the middle of a series")
        if self.series:
            if not self.plays_on:
                raise SdkError("referee sent a second welcome, but the hello did not set plays_on")
            self.bot = self._next_bot()
            self.decoder = RequestDecoder()
        self.series += 1
        self.info = SeriesInfo(
            seat=welcome.seat,
            params=params_from_pb(welcome.rules),
            move_time_ms=welcome.time_control.move_time_ms,
            time_bank_ms=welcome.time_control.time_bank_ms,
            opponent_name=welcome.opponent_name,
            opponent_version=welcome.opponent_version,
            match_id=welcome.match_id,
            bot_seed=welcome.bot_seed,
        )
        if welcome.bot_seed:  # 0: none given; the generator stays as it is
            self.bot.seed_random(welcome.bot_seed)
        self._call("on_series_start", 0, self.bot.on_series_start, self.info)

    def _next_bot(self) -> Bot:
        """The bot for the next series (:meth:`Bot.next_series`), with the hello's identity."""
        previous = self.bot
        following = self._call("next_series", 0, previous.next_series)
        if not isinstance(following, Bot):
            _report(f"the bot's next_series() returned a {type(following).__name__}, not a Bot")
            raise _BotCodeError
        if following is not previous and previous.name is not None:
            following._take_identity((previous.name, previous.version or ""))
        return following

    def _request(self, request: pb.DecisionRequest) -> None:
        if self.info is None:
            raise SdkError("referee sent a decision request before the welcome of its series")
        info = self.info
        for event in request.events:  # held back by the referee: as if each had come alone
            self._event(event)
        view, legal = self.decoder.decode(request, info.seat, info.params)
        action = self._call("decide", request.request_id, self.bot.decide, view, legal)
        self.outbox.put(pb.BotMessage(action=action_to_pb(action, request.request_id)))

    def _event(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "opponent_action":
            public = self.decoder.public_event(event.opponent_action)
            self._call("on_opponent_action", 0, self.bot.on_opponent_action, public)
        elif kind == "hand_ended":
            ended = event.hand_ended
            totals, _ = score_from_pb(ended.score)
            summary = HandSummary(
                ended.hand_number, hand_ended_from_pb(ended), tuple(ended.games), totals
            )
            self._call("on_hand_end", 0, self.bot.on_hand_end, summary)
        elif kind == "series_ended":
            ended_series = event.series_ended
            totals, _ = score_from_pb(ended_series.score)
            series = SeriesSummary(
                winner=None if ended_series.winner < 0 else ended_series.winner,
                end=pb.SeriesEnd.Name(ended_series.end),
                totals=totals,
                hands=ended_series.hands,
            )
            self.info = None  # a Welcome (a sitting's next series) or the Goodbye comes next
            self._call("on_series_end", 0, self.bot.on_series_end, series)

    def _call(
        self,
        what: str,
        request_id: int,
        function: Callable[_P, _R],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> _R:
        try:
            return function(*args, **kwargs)
        except Exception:
            import traceback  # noqa: PLC0415 - only on the way out

            where = f" on request {request_id}" if request_id else ""
            _report(f"error in the bot's {what}(){where}:\n{traceback.format_exc()}")
            raise _BotCodeError from None


class _BotCodeError(Exception):
    """The bot's own code raised; already reported."""


def _report(text: str) -> None:
    print(f"[gin sdk] {text}", file=sys.stderr, flush=True)
