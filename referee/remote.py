"""A remote seat: a bot process in its sandbox, on one gRPC stream.

The referee owns the socket: it binds ``referee.sock`` in the seat's run folder, hands the bot
the address and a one-time token in its environment, and takes the bot's hello within the
start-up budget. Each decision is one request on the stream; the answer must echo its id (an
answer gone wrong settles the decision as one fault; a duplicate of a settled answer is a strike
beside it, and the seat waits on for the right one). A bot whose hello
sets ``events_in_requests`` gets the opponent's actions inside its next request rather than as
separate events (any other event or the goodbye sends the held ones first). The bot's stdout and
stderr are drained by threads that keep only a capped head and tail, so a flooding bot cannot
fill the referee's memory.

A bot whose hello sets ``plays_on`` may play a sitting: several series in a row on the same
process and stream. Whoever runs the sitting sets :attr:`RemoteSeat.play_on_after` before a
series; the seat's close then only rests it (frozen, nothing torn down) when the bot is still
sound (its process alive, its stream unbroken, no forfeit), and the next series' ``connect``
takes it up again: a fresh request encoder, its stdout and stderr counted anew, and its request
ids on the stream going on after the last one issued (the match numbers its requests from 1 in
every series; the seat adds the sitting's offset on the wire and takes it off the answers, so
the log of a series played in a sitting reads as that of a fresh process). An answer to a request
of an earlier series of the sitting is dropped unseen: that series is over.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import IO, Final, Protocol

import trio

from protocol import hollywood_gin_pb2 as pb
from protocol.bounded import JsonObject
from protocol.convert import (
    PROTOCOL_VERSION,
    action_from_pb,
    cards_to_pb,
    hand_ended_to_pb,
    params_to_pb,
    public_event_to_pb,
    score_to_pb,
)
from protocol.manifest import SANDBOX_PATH, Manifest
from protocol.wire import RequestEncoder
from referee.bookkeeping import MatchEnd
from referee.bot_text import shown
from referee.bridge import MAX_MESSAGE_BYTES, Arrival, Incoming, SeatChannel
from referee.faults import BotCrashed, BotProtocolError, FaultKind, StartupFailure
from referee.rules import Action, PublicEvent
from referee.seats import (
    BotIdentity,
    Decision,
    FaultNoticed,
    HandEnded,
    HandStarted,
    OpponentActed,
    SeatEvent,
    SeriesEnded,
    Welcome,
)

SOCKET_NAME: Final = "referee.sock"
TAIL_BYTES: Final = 8 * 1024
HEAD_BYTES: Final = 2 * 1024
EXIT_WAIT_S: Final = 1.0
SETTLE_S: Final = 0.02
"""How long a resting bot runs before it is taken up for its sitting's next series."""


class Jail(Protocol):
    """What the sandbox gives a seat (see ``referee.sandbox``)."""

    run_dir: Path
    inside_run_dir: str

    def secure_socket(self, socket_path: Path) -> None:
        """Make the socket reachable by the bot alone, and not replaceable by it."""
        ...

    def hold(self, held: bool) -> bool:
        """Freeze (``held``) or thaw the bot's processes; whether it could."""
        ...

    def spawn(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start the bot inside the jail."""
        ...

    def renew_cpu_limit(self) -> bool:
        """Give the bot's processes their CPU-seconds limit anew (a sitting's next series);
        whether it could."""
        ...

    def teardown(self) -> object:
        """Kill everything of the bot and remove its folders."""
        ...


class JailFactory(Protocol):
    """Makes a jail for a bot folder (``Sandbox.prepare``)."""

    def __call__(self, label: str, code_dir: Path) -> Jail: ...


class OutputDrain:
    """Reads a pipe to its end in a thread, keeping the first and last few KiB only."""

    def __init__(self, pipe: IO[bytes] | None, name: str) -> None:
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.lock = threading.Lock()
        """Held to keep a chunk or to start anew (:meth:`restart`, from another thread)."""
        self.thread = threading.Thread(target=self._drain, args=(pipe,), name=name, daemon=True)
        self.thread.start()

    def _drain(self, pipe: IO[bytes] | None) -> None:
        if pipe is None:
            return
        with pipe:
            while chunk := pipe.read1(65536):  # type: ignore[attr-defined]
                self._keep(chunk)

    def restart(self) -> None:
        """Keep from here on as if the output began now (the next series of a sitting)."""
        with self.lock:
            self.head = bytearray()
            self.tail.clear()
            self.tail_size = self.total = 0

    def _keep(self, chunk: bytes) -> None:
        with self.lock:
            self._keep_locked(chunk)

    def _keep_locked(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self.head) < HEAD_BYTES:
            self.head += chunk[: HEAD_BYTES - len(self.head)]
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
            self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        """The kept tail as text (the head too if the output was short)."""
        with self.lock:
            tail: bytes = b"".join(self.tail)[-TAIL_BYTES:]
        return tail.decode("utf-8", errors="replace")

    def kept(self) -> str:
        """All that is kept, as text: the whole output if it fitted, else its head, a line
        ``[N bytes not kept]`` and its tail (raw bot text: escape it before showing it)."""
        with self.lock:
            head, total = bytes(self.head), self.total
            tail: bytes = b"".join(self.tail)[-TAIL_BYTES:]
        dropped = total - len(tail) - len(head)
        if dropped <= 0:
            data = head[: total - len(tail)] + tail
        else:
            data = head + f"\n[{dropped} bytes not kept]\n".encode() + tail
        return data.decode("utf-8", errors="replace")


class RemoteSeat:
    """A sandboxed bot process playing one seat over gRPC."""

    def __init__(
        self, manifest: Manifest, jails: JailFactory, label: str, code_hash: str = ""
    ) -> None:
        self.manifest = manifest
        self.jails = jails
        self.label = label
        self.code_hash = code_hash
        self.token = secrets.token_urlsafe(24)
        self.jail: Jail | None = None
        self.channel: SeatChannel | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.stdout: OutputDrain | None = None
        self.stderr: OutputDrain | None = None
        self.stale: set[int] = set()
        """Request ids whose answers are dropped unseen: timed out or settled by a fault (that
        was the strike), or answered and struck once already for a duplicate."""
        self.encoder = RequestEncoder()
        self.seat = -1
        self.events_in_requests = False
        """Whether the bot's hello asked for opponent actions inside its requests."""
        self.held: list[PublicEvent] = []
        """Opponent actions held back for the next request (only with ``events_in_requests``)."""
        self.closed = False
        self.started_at = 0.0
        self.startup_ms: float | None = None
        self.exit_after_goodbye: int | None = None
        """The bot's exit status if it left by itself within :attr:`exit_wait_s` of the
        goodbye."""
        self.exit_wait_s = EXIT_WAIT_S
        """How long the bot has to exit after its goodbye before the sandbox is torn down (the
        conformance kit gives more, so that a loaded machine does not fail a bot that exits)."""
        self.teardown_report: object = None
        self.frozen = False
        """Whether the bot is frozen (see :meth:`hold`)."""
        self.identity: BotIdentity | None = None
        """Who the bot said it is, once its hello was right."""
        self.plays_on = False
        """Whether the bot's hello said it can play a sitting (``Hello.plays_on``)."""
        self.play_on_after = False
        """Set by whoever runs a sitting: after this series, rest the bot for the next one
        rather than close it (if it is still sound: see :meth:`can_play_on`)."""
        self.resting = False
        """Between two series of a sitting: frozen, its process and stream kept."""
        self.spent = False
        """The bot forfeited, or its process or stream ended: it plays no further series."""
        self.base = 0
        """The offset of this series' request ids on the stream (the ids issued before it)."""
        self.issued = 0
        """The last request id sent on the stream."""

    # --- start ---------------------------------------------------------------------------------

    async def connect(self, seat: int) -> BotIdentity:
        """Start the bot in its jail and take its hello.

        Raises:
            StartupFailure: the jail, the socket or the process could not be set up, or the
                bot's first message was not a correct hello (its token, its protocol version,
                and the name and version of its bot.toml).
        """
        if self.resting:
            return self._take_up(seat)
        self.seat = seat
        await self.prepare()
        assert self.jail is not None
        try:
            self.channel = SeatChannel(self.jail.run_dir / SOCKET_NAME)  # in trio: its token
            await trio.to_thread.run_sync(self._launch)
        except (OSError, RuntimeError, ValueError) as error:
            raise StartupFailure(
                f"could not start the bot: {error}", seat=seat, evidence=self.diagnostics()
            ) from None
        self.started_at = trio.current_time()
        item = await self._next()
        try:
            identity = self._check_hello(item)
        except StartupFailure as failure:
            await self._stop_now()  # a bot that failed its start-up has nothing more to do
            evidence = {**failure.fault.evidence, **self.diagnostics()}  # its whole stderr now
            raise StartupFailure(failure.fault.detail, seat=seat, evidence=evidence) from None
        self.startup_ms = (trio.current_time() - self.started_at) * 1000
        self._close_the_door()
        self.identity = identity
        return identity

    async def prepare(self) -> None:
        """Make the bot's jail (once; nothing for a resting bot): the match does it before the
        start-up budget runs, which is the bot's own, from its process start to its hello.

        Raises:
            StartupFailure: the jail could not be made.
        """
        if self.jail is not None:
            return
        try:
            # In a thread: making a jail copies the bot's code (up to the registry's limits),
            # and this loop may be playing another match's series meanwhile.
            self.jail = await trio.to_thread.run_sync(self.jails, self.label, self.manifest.folder)
        except (OSError, RuntimeError, ValueError) as error:
            raise StartupFailure(
                f"could not start the bot: {error}", seat=self.seat, evidence=self.diagnostics()
            ) from None

    def can_play_on(self) -> bool:
        """Whether the bot may play another series of its sitting: it said it can, it is in,
        it did not forfeit, and its process and stream are still there."""
        process = self.process
        sound = process is not None and process.poll() is None and not self.spent
        return self.plays_on and self.identity is not None and not self.closed and sound

    async def ready_to_go_on(self) -> bool:
        """Between two series of its sitting, once rested: whether the bot plays the next one.
        It must still be sound (:meth:`can_play_on`), its stream open both ways with no close or
        break left unread (what the ended series left waiting is dropped), and its processes
        given their CPU-seconds limit anew, so that a sitting's series each get what a fresh
        process would. It is thawed a moment first (:data:`SETTLE_S`): what a bot frozen as its
        series ended was about to do (close its stream, say) is seen before, not in, the next
        series."""
        if not (self.resting and self.can_play_on()):
            return False
        self.hold(False)
        await trio.sleep(SETTLE_S)
        if not self.can_play_on():
            return False
        if self.channel is None or not self.channel.ready_to_go_on():
            return False
        return self.jail is not None and self.jail.renew_cpu_limit()

    def _take_up(self, seat: int) -> BotIdentity:
        """The next series of a sitting, on the resting bot: thawed, counted anew."""
        assert self.identity is not None
        if seat != self.seat:
            raise StartupFailure(
                f"a sitting keeps its seats: seat {self.seat}, not {seat}", seat=seat
            )
        self.resting = False
        self.hold(False)
        self.base = self.issued
        self.encoder = RequestEncoder()
        self.held = []
        for drain in (self.stdout, self.stderr):
            if drain is not None:
                drain.restart()
        return self.identity

    async def _stop_now(self) -> None:
        """Tear the bot down at once, without a goodbye's wait (``close`` does nothing after)."""
        self.closed = True
        await trio.to_thread.run_sync(self._teardown)

    def _close_the_door(self) -> None:
        """Once the bot is in, its socket's path goes: a further connection fails in the bot's
        own ``connect`` (no such file), at no cost to the referee, whose gRPC would otherwise
        accept each one only to close it (a loop of those cost the referee seconds of CPU)."""
        if self.jail is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.jail.run_dir / SOCKET_NAME).unlink()

    def _launch(self) -> None:
        """Open the seat's socket and start the bot in its jail (made already)."""
        assert self.jail is not None
        assert self.channel is not None
        socket_path = self.jail.run_dir / SOCKET_NAME
        self.channel.start()
        self.jail.secure_socket(socket_path)
        env = {
            "GIN_REFEREE": f"unix://{self.jail.inside_run_dir}/{SOCKET_NAME}",
            "GIN_TOKEN": self.token,
            "PATH": SANDBOX_PATH,
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.process = self.jail.spawn(self.manifest.argv(), env)
        self.stdout = OutputDrain(self.process.stdout, f"{self.label}-stdout")
        self.stderr = OutputDrain(self.process.stderr, f"{self.label}-stderr")
        threading.Thread(target=self._watch, name=f"{self.label}-wait", daemon=True).start()

    def _watch(self) -> None:
        process, channel = self.process, self.channel
        assert process is not None
        assert channel is not None
        status = process.wait()
        channel.deliver(Incoming(Arrival.EXITED, 0.0, detail=f"exit status {status}"))

    def _check_hello(self, item: Incoming) -> BotIdentity:
        if item.arrival is not Arrival.MESSAGE or item.message is None:
            raise StartupFailure(
                f"no hello: {self._describe(item)}", seat=self.seat, evidence=self.diagnostics()
            )
        message = item.message
        if message.WhichOneof("kind") != "hello":
            self._goodbye(pb.GOODBYE_REASON_REMOVED, "the first message must be a Hello")
            raise StartupFailure("the first message was not a hello", seat=self.seat)
        hello = message.hello
        if not hmac.compare_digest(hello.token.encode(), self.token.encode()):
            self._goodbye(pb.GOODBYE_REASON_BAD_TOKEN, "wrong token")
            raise StartupFailure("wrong token in hello", seat=self.seat)
        if hello.protocol_version != PROTOCOL_VERSION:
            detail = (
                f"protocol version {hello.protocol_version} is not spoken here; "
                f"this referee speaks {PROTOCOL_VERSION}"
            )
            self._goodbye(pb.GOODBYE_REASON_PROTOCOL_MISMATCH, detail)
            raise StartupFailure(detail, seat=self.seat)
        self._check_identity(hello)
        self.events_in_requests = hello.events_in_requests
        self.plays_on = hello.plays_on
        return BotIdentity(self.manifest.name, self.manifest.version, self.code_hash)

    def _check_identity(self, hello: pb.Hello) -> None:
        """The hello must name the bot as its bot.toml does: no bot passes for another."""
        manifest = self.manifest
        if (hello.name, hello.version) == (manifest.name, manifest.version):
            return
        detail = (
            f"the hello says name '{shown(hello.name, 64)}' version "
            f"'{shown(hello.version, 32)}', but bot.toml says name '{manifest.name}' version "
            f"'{manifest.version}': send the name and version of bot.toml"
        )
        self._goodbye(pb.GOODBYE_REASON_REMOVED, detail)
        raise StartupFailure(detail, seat=self.seat, evidence=self.diagnostics())

    async def welcome(self, welcome: Welcome) -> None:
        """Send the Welcome."""
        self._send(
            pb.RefereeMessage(
                welcome=pb.Welcome(
                    seat=welcome.seat,
                    protocol_version=PROTOCOL_VERSION,
                    rules=params_to_pb(welcome.params),
                    time_control=pb.TimeControl(
                        move_time_ms=welcome.time_control.move_time_ms,
                        grace_ms=welcome.time_control.grace_ms,
                        time_bank_ms=welcome.time_control.time_bank_ms,
                        startup_ms=welcome.time_control.startup_ms,
                    ),
                    opponent_name=welcome.opponent.name,
                    opponent_version=welcome.opponent.version,
                    match_id=welcome.match_id,
                    bot_seed=welcome.bot_seed,
                )
            )
        )

    # --- play ----------------------------------------------------------------------------------

    async def decide(self, decision: Decision) -> Action:
        """Ask for one action: the answer that echoes the request's id.

        A message that is this seat's answer gone wrong (another kind of message, an oversized
        one, an id never issued, a malformed action) settles the decision as one fault: the
        referee plays for the bot, and the bot's own answer to the request, if it still comes,
        is dropped. An answer echoing a request settled already (a duplicate) is a fault beside
        the decision, struck once however many copies come (``decision.noticed``), and the seat
        waits on within the same limit. Answers to a request that timed out or was settled by a
        fault are dropped unseen.

        Raises:
            BotCrashed: the process exited or the stream closed.
            BotProtocolError: the seat's answer gone wrong, a broken stream, or a duplicate whose
                strike forfeits the series.
        """
        request_id = self.base + decision.request_id  # as the stream numbers it
        self._send(self._request(decision), hand_over=True)
        decision.sent()
        try:
            while True:
                item = await self._next()
                action = self._answer(item, decision)
                if action is not None:
                    return action
        except (trio.Cancelled, BotProtocolError):
            self.stale.add(request_id)  # its answer, should it come, is dropped unseen
            raise
        except BotCrashed as crash:
            self.spent = True
            await self._wait_exit(EXIT_WAIT_S)  # so the evidence has the exit status
            detail = crash.fault.detail
            status = None if self.process is None else self.process.poll()
            if status is not None and not detail.startswith(_EXITED):
                detail = _closed_then_exited(status)
            raise BotCrashed(detail, evidence=self.diagnostics()) from None

    def _request(self, decision: Decision) -> bytes:
        self.issued = self.base + decision.request_id
        data = self.encoder.encode(
            self.issued,
            decision.view,
            decision.legal,
            time_left_ms=int(decision.time_left_ms),
            bank_left_ms=int(decision.bank_left_ms),
            events=self.held,
        )
        self.held = []
        return data

    async def _wait_exit(self, seconds: float) -> None:
        process = self.process
        if process is None:
            return
        with trio.move_on_after(seconds):
            while process.poll() is None:
                await trio.sleep(0.01)

    def _answer(self, item: Incoming, decision: Decision) -> Action | None:
        """The action ``item`` answers the decision with; None for a message to drop or to
        notice beside it.

        Raises:
            BotProtocolError: the seat's answer gone wrong (it settles the decision).
            BotCrashed: the process exited or the stream closed or broke.
        """
        message = item.message
        if item.arrival is not Arrival.MESSAGE or message is None:
            raise self._arrival(item)
        kind = message.WhichOneof("kind")
        if kind != "action":
            raise BotProtocolError(
                f"expected an action, got {kind or 'an empty message'}",
                evidence={"message": str(message)[:500]},
            )
        answered = message.action.request_id
        if answered != self.base + decision.request_id:
            self._stray(answered, decision, message)
            return None
        try:
            return action_from_pb(message.action)
        except ValueError as error:
            raise BotProtocolError(
                f"malformed action: {error}", evidence={"message": str(message)[:500]}
            ) from None

    def _arrival(self, item: Incoming) -> BotProtocolError | BotCrashed:
        """What an arrival other than a message means: the fault to raise (the bot plays no
        further series of its sitting after one that ended its stream)."""
        if item.arrival not in (Arrival.OVERSIZED, Arrival.UNKNOWN_METHOD):
            self.spent = True
        if item.arrival is Arrival.SECOND_STREAM:
            return BotProtocolError("opened a second stream", evidence=self.diagnostics())
        if item.arrival is Arrival.ABUSE:
            return BotProtocolError(f"abused its connection: {item.detail}")
        if item.arrival is Arrival.UNKNOWN_METHOD:
            return BotProtocolError(self._describe(item))
        if item.arrival is Arrival.OVERSIZED:
            return BotProtocolError(
                f"oversized message: {item.detail} bytes, the limit is "
                f"{MAX_MESSAGE_BYTES // 1024} KiB"
            )
        fault = BotProtocolError if "RESOURCE_EXHAUSTED" in item.detail else BotCrashed
        return fault(self._describe(item), evidence=self.diagnostics())

    def _stray(self, answered: int, decision: Decision, message: pb.BotMessage) -> None:
        """An answer that echoes another request's id. One settled already (a duplicate) is a
        strike beside the decision, once however many copies come; one the referee already
        dropped (timed out, or settled by a fault) goes unseen.

        Raises:
            BotProtocolError: an id never issued: the seat's answer gone wrong (it settles the
                decision); or a duplicate whose strike forfeits the series.
        """
        if answered in self.stale or 0 < answered <= self.base:
            return  # dropped already, or of an earlier series of the sitting (it is over)
        pending = self.base + decision.request_id
        evidence = {"echoed_request_id": answered, "message": str(message)[:500]}
        echoed = self._as_logged(answered)
        if not self.base < answered < pending:
            raise BotProtocolError(
                f"answer echoes request id {echoed}, expected {decision.request_id}",
                evidence=evidence,
            )
        self.stale.add(answered)
        detail = (
            f"answer echoes request id {echoed}, a request settled already; "
            f"the pending request is {decision.request_id}"
        )
        _notice(decision, BotProtocolError(detail, evidence=evidence))

    def _as_logged(self, answered: int) -> str:
        """A request id the bot echoed, as the series' log numbers requests (from 1); in a
        sitting's later series, with the id it had on the stream."""
        if self.base == 0 or answered <= self.base:
            return str(answered)
        return f"{answered - self.base} (id {answered} on the stream)"

    def notify(self, event: SeatEvent) -> None:
        """Send an event (nothing waits for it).

        For a bot that asked for ``events_in_requests``, an opponent action is held back for the
        next request instead; any other event first sends the held ones, in order.
        """
        if self.events_in_requests and isinstance(event, OpponentActed):
            self.held.append(event.event)
            return
        self._flush()
        message = _event_to_pb(event)
        if message is None:
            return
        if isinstance(event, FaultNoticed):
            if event.fault.seat == self.seat and event.forfeited:
                self.spent = True  # a forfeit ends the bot's sitting: the next series starts anew
            if message.fault.request_id:
                message.fault.request_id += self.base  # as the stream numbers it
        self._send(pb.RefereeMessage(event=message))

    def _flush(self) -> None:
        """Send the held-back opponent actions as separate events, in order."""
        if not self.held:
            return
        held, self.held = self.held, []
        for event in held:
            self._send(pb.RefereeMessage(event=pb.Event(opponent_action=public_event_to_pb(event))))

    # --- end -----------------------------------------------------------------------------------

    def hold(self, held: bool) -> None:
        """Freeze the bot while it waits for its series (``held``), or let it run again: a bot
        started early (a worker's next match) gets no CPU beside the match playing."""
        if self.jail is not None and not self.closed:
            self.frozen = self.jail.hold(held) and held

    async def close(self, detail: str) -> None:
        """Goodbye, a moment to exit, then the sandbox teardown (idempotent). A bot that is to
        play on (:attr:`play_on_after`) and still sound is only rested: frozen, kept for its
        sitting's next series."""
        if self.closed:
            return
        if self.play_on_after and self.can_play_on():
            self.resting = True
            self.hold(True)  # no CPU while it waits: another series may play meanwhile
            return
        self.resting = False
        if self.frozen:
            self.hold(False)  # a frozen bot cannot hear its goodbye, nor exit
        self.closed = True
        self._goodbye(pb.GOODBYE_REASON_SERIES_OVER, detail)
        if self.channel is not None:
            self.channel.end_stream()
        if self.process is not None:
            await self._wait_exit(self.exit_wait_s)
            self.exit_after_goodbye = self.process.poll()
        await trio.to_thread.run_sync(self._teardown)

    def _teardown(self) -> None:
        if self.channel is not None:
            self.channel.stop()
        if self.jail is not None:
            self.teardown_report = self.jail.teardown()
        for drain in (self.stdout, self.stderr):
            if drain is not None:
                drain.thread.join(timeout=1.0)

    def stderr_kept(self) -> str | None:
        """The bot's stderr as kept (:meth:`OutputDrain.kept`); None if it never ran. Complete
        once the seat is closed."""
        return None if self.stderr is None else self.stderr.kept()

    def diagnostics(self) -> JsonObject:
        """Evidence: exit status, stderr tail, output volume."""
        evidence: JsonObject = {"bot": self.manifest.ident}
        if self.process is not None:
            evidence["exit_status"] = self.process.poll()
        if self.stderr is not None:
            evidence["stderr_tail"] = self.stderr.text()[-2000:]
            evidence["stderr_bytes"] = self.stderr.total
        if self.stdout is not None:
            evidence["stdout_bytes"] = self.stdout.total
        return evidence

    # --- helpers -------------------------------------------------------------------------------

    async def _next(self) -> Incoming:
        assert self.channel is not None
        return await self.channel.receive()

    def _send(self, message: pb.RefereeMessage | bytes, *, hand_over: bool = False) -> None:
        if self.channel is not None:
            self.channel.send(message, hand_over=hand_over)

    def _goodbye(self, reason: pb.GoodbyeReason.ValueType, detail: str) -> None:
        self._flush()
        self._send(pb.RefereeMessage(goodbye=pb.Goodbye(reason=reason, detail=detail)))

    def _describe(self, item: Incoming) -> str:
        if item.arrival is Arrival.EXITED:
            return f"{_EXITED} ({item.detail})"
        if item.arrival is Arrival.CLOSED:
            return "the bot's stream ended (closed, or a message over 1 MiB)"
        if item.arrival is Arrival.BROKEN:
            if "RESOURCE_EXHAUSTED" in item.detail:
                return f"oversized message ({item.detail})"
            return f"the stream broke ({item.detail})"
        if item.arrival is Arrival.UNKNOWN_METHOD:
            return f"called {item.detail!r}: this socket serves Referee.Play only"
        return str(item.arrival.value)


_EXITED: Final = "the bot's process ended"


def _closed_then_exited(status: int) -> str:
    """A crash's detail when the bot's stream closed or broke and its process then ended: what
    an error the bot's code did not catch looks like (the SDK prints it and exits 1), which was
    shown as the stream's end ("closed, or a message over 1 MiB"). Its stderr, which may hold
    anything, stays in the log for its author; this sentence is what anyone may read."""
    how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
    cause = ": an error its code did not catch, say" if status > 0 else ""
    return f"{_EXITED} ({how}) as its stream closed{cause}"


_SERIES_ENDS: Final = {
    MatchEnd.COMPLETE: pb.SERIES_END_COMPLETE,
    MatchEnd.DECIDED: pb.SERIES_END_DECIDED,
    MatchEnd.HAND_CAP: pb.SERIES_END_HAND_CAP,
    MatchEnd.FORFEIT: pb.SERIES_END_FORFEIT,
}
_FAULT_KINDS: Final = {
    FaultKind.TIMEOUT: pb.FAULT_KIND_TIMEOUT,
    FaultKind.CRASH: pb.FAULT_KIND_CRASH,
    FaultKind.ILLEGAL_ACTION: pb.FAULT_KIND_ILLEGAL_ACTION,
    FaultKind.PROTOCOL_VIOLATION: pb.FAULT_KIND_PROTOCOL_VIOLATION,
    FaultKind.STARTUP_FAILURE: pb.FAULT_KIND_STARTUP_FAILURE,
}


def _notice(decision: Decision, fault: BotProtocolError) -> None:
    """Report a fault beside the decision; the seat waits on unless its strike forfeits.

    Raises:
        BotProtocolError: ``fault``, when its strike forfeits the series.
    """
    if decision.noticed(fault):
        raise fault


def _event_to_pb(event: SeatEvent) -> pb.Event | None:
    if isinstance(event, OpponentActed):
        return pb.Event(opponent_action=public_event_to_pb(event.event))
    if isinstance(event, HandStarted):
        return pb.Event(
            hand_started=pb.HandStarted(
                hand_number=event.hand_number,
                dealer=event.dealer,
                hand=cards_to_pb(event.hand),
                upcard=str(event.upcard),
                deck_commitment=event.commitment,
            )
        )
    if isinstance(event, HandEnded):
        record = event.record
        ended = hand_ended_to_pb(record.outcome, record.number, event.discard, record.games)
        ended.score.CopyFrom(score_to_pb(event.totals, event.game_winners))
        return pb.Event(hand_ended=ended)
    if isinstance(event, SeriesEnded):
        return pb.Event(
            series_ended=pb.SeriesEnded(
                end=_SERIES_ENDS[event.end],
                winner=-1 if event.winner is None else event.winner,
                score=score_to_pb(event.totals, event.game_winners),
                hands=event.hands,
            )
        )
    if isinstance(event, FaultNoticed):
        fault = event.fault
        return pb.Event(
            fault=pb.FaultNotice(
                seat=fault.seat,
                kind=_FAULT_KINDS[fault.kind],
                detail=fault.detail[:500],
                request_id=fault.request_id,
                forfeited=event.forfeited,
            )
        )
    return None
