"""The Python bot SDK: subclass :class:`Bot`, write ``decide``, call ``run()``.

``run()`` reads ``GIN_REFEREE`` (the address) and ``GIN_TOKEN`` (the one-time secret) from the
environment, opens one ``Play`` stream, says hello, answers every decision request with the
action ``decide`` returns (echoing the request id), passes events to the callbacks, and returns
on goodbye or when the referee closes the stream. Before the first callback it seeds the bot's
generator, :attr:`Bot.rng`, with the Welcome's ``bot_seed``: a bot that draws its random choices
from it plays the same series again when a league is run again with the same secret.

The callbacks see rules types, not messages: an :class:`~referee.rules.Observation` and the
legal actions in, an :class:`~referee.rules.Action` out, so the same bot class plays in-process
through :func:`referee.rules.play_series` (see :meth:`Bot.as_policy`).

An error in the bot's own code is printed to stderr with the request it happened on and the
bot exits with status 1: the SDK never hides a bug behind a default action.
"""

from __future__ import annotations

import os
import random
import sys
from _queue import SimpleQueue  # what queue.SimpleQueue is, without importing queue
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, ParamSpec, TypeVar

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
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
        """Play one series against the referee; returns the process exit status.

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
            stub = pb_grpc.RefereeStub(channel)
            return Session(self, token).play(stub)


class _BotPolicy:
    """Adapter: a :class:`Bot` called like a policy."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.bot.decide(view, legal)


_DONE: Final = object()


class Session:
    """One series on one stream: the hello, then a loop over the referee's messages."""

    def __init__(self, bot: Bot, token: str) -> None:
        self.bot = bot
        self.token = token
        self.outbox: SimpleQueue[pb.BotMessage | object] = SimpleQueue()
        self.decoder = RequestDecoder()
        self.info: SeriesInfo | None = None
        self.finished = False

    def _messages(self) -> Iterator[pb.BotMessage]:
        while True:
            item = self.outbox.get()
            if item is _DONE:
                return
            assert isinstance(item, pb.BotMessage)
            yield item

    def play(self, stub: pb_grpc.RefereeStub) -> int:
        """Run the series; 0 after a goodbye or a clean close, 1 after an error."""
        self.outbox.put(
            pb.BotMessage(
                hello=pb.Hello(
                    token=self.token,
                    name=self.bot.name or "",
                    version=self.bot.version or "",
                    protocol_version=PROTOCOL_VERSION,
                    events_in_requests=self.bot.events_in_requests,
                )
            )
        )
        responses = stub.Play(self._messages())
        try:
            for message in responses:
                if not self.handle(message):
                    return 0
        except grpc.RpcError as error:
            if self.finished:
                return 0
            _report(f"stream closed by the referee: {error.code()} {error.details()}")
            return 1
        except (SdkError, ValueError) as error:
            _report(f"the referee sent something this SDK cannot follow: {error}")
            responses.cancel()
            return 1
        except _BotCodeError:
            responses.cancel()
            return 1
        finally:
            self.outbox.put(_DONE)
        _report("the referee closed the stream without a goodbye")
        return 1

    def handle(self, message: pb.RefereeMessage) -> bool:
        """Act on one message; False when the series is over.

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

    def _request(self, request: pb.DecisionRequest) -> None:
        if self.info is None:
            raise SdkError("referee sent a decision request before the welcome")
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
