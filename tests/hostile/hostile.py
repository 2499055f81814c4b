"""A hostile bot for the referee's tests: plays greedy, misbehaving as its first argument says.

Probes print one line each to stderr, ``PROBE <name> <ALLOWED|BLOCKED> <detail>``, so a test can
read what the sandbox let through from the fault evidence or the stderr tail. The ``evil_*`` modes
carry text meant to break a terminal or a page, ARG: both write it to stderr; ``evil_name`` says
hello with it as its name (``NAME`` or ``NAME@VERSION``), ``evil_stderr`` crashes a little later.
``raise_after`` answers ARG decisions (12 if not given), then raises in the next one: the SDK
prints the traceback to stderr and the bot exits 1.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import functools
import hashlib
import hmac
import json
import os
import re
import select
import signal
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.convert import action_to_pb
from protocol.sdk import Bot, Session
from referee.rules import CARDS, Action, Discard, GreedyPolicy, Observation, Phase

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
TRIGGER = 5
"""The decision on which the bot turns hostile (so it starts and plays a little first)."""


def hello_identity() -> tuple[str, str]:
    """The name and version the hello gives: those of bot.toml, except in mode ``evil_name``,
    which gives ARG's (``NAME`` or ``NAME@VERSION``)."""
    if MODE != "evil_name":
        return "hostile", MODE
    name, _, version = ARG.partition("@")
    return name, version or MODE


def probe(name: str, attempt: Callable[[], Any]) -> None:
    """Run one attempt and report whether it worked."""
    try:
        detail = attempt()
    except Exception as error:  # any refusal counts as blocked
        print(f"PROBE {name} BLOCKED {type(error).__name__}: {error}", file=sys.stderr)
    else:
        print(f"PROBE {name} ALLOWED {str(detail)[:200]}", file=sys.stderr)
    sys.stderr.flush()


def tcp(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=1.0):
        return f"connected to {host}:{port}"


def abstract(name: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        sock.connect("\0" + name)
        return "connected"


def read(path: str) -> str:
    with open(path, "rb") as handle:
        return repr(handle.read(64))


def ptrace_seize(pid: int) -> str:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(0x4206, pid, None, None) != 0:  # PTRACE_SEIZE
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return f"seized {pid}"


def tamper(run_dir: str) -> str:
    socket_path = os.path.join(run_dir, "referee.sock")
    os.rename(socket_path, socket_path + ".moved")
    return "moved the referee's socket"


LEFTOVER_PLACES = {"tmp": "/tmp", "shm": "/dev/shm", "code": "/bot", "run": "/run/bot"}
"""Where the ``leftover`` bot looks for, then leaves, a file for its next series (and $HOME)."""


def leave(path: str) -> str:
    with open(path, "w") as handle:
        handle.write(f"seen by pid {os.getpid()}")
    return f"left {path}"


def leftovers() -> None:
    """Look for the file ARG an earlier series of this bot left in each place, then leave it
    for the next: ``PROBE leftover_<place>`` ALLOWED means something survived a series."""
    name = ARG or "gin-leftover"
    places = {**LEFTOVER_PLACES, "home": os.environ.get("HOME", "/nonexistent")}
    for place, folder in places.items():
        probe(f"leftover_{place}", functools.partial(read, os.path.join(folder, name)))
    for place, folder in places.items():
        probe(f"leave_{place}", functools.partial(leave, os.path.join(folder, name)))


def run_probes() -> None:
    """Everything a cheating bot would try, reported line by line."""
    targets = dict(item.split("=", 1) for item in ARG.split(",") if "=" in item)
    if "tcp" in targets:
        host, port = targets["tcp"].rsplit(":", 1)
        probe("tcp_loopback", lambda: tcp(host, int(port)))
    probe("tcp_out", lambda: tcp("192.0.2.1", 80))  # TEST-NET-1: never routed anywhere
    probe("inet_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
    if "abstract" in targets:
        probe("abstract_socket", lambda: abstract(targets["abstract"]))
    for key in ("secret", "other_code"):
        if key in targets:
            probe(f"read_{key}", functools.partial(read, targets[key]))
    if "referee_pid" in targets:
        pid = int(targets["referee_pid"])
        probe("referee_environ", lambda: read(f"/proc/{pid}/environ"))
        probe("referee_mem", lambda: read(f"/proc/{pid}/mem"))
        probe("ptrace_referee", lambda: ptrace_seize(pid))
    probe("visible_pids", lambda: [p for p in os.listdir("/proc") if p.isdigit()])
    run_dir = os.environ["GIN_REFEREE"].removeprefix("unix://").rsplit("/", 1)[0]
    probe("tamper_socket", lambda: tamper(run_dir))
    probe("write_run_dir", lambda: open(os.path.join(run_dir, "x"), "w").close())


def fork_bomb() -> None:
    children = 0
    for _ in range(500):
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
        except OSError:
            break
    print(f"PROBE forks {children}", file=sys.stderr, flush=True)
    time.sleep(60)


def escape() -> None:
    """Double-fork into a new session, then keep playing: the child must not survive."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open("/tmp/escaper.pid", "w") as handle:
                handle.write(str(os.getpid()))
            time.sleep(600)
        os._exit(0)
    print("PROBE escaper started", file=sys.stderr, flush=True)


def spin() -> None:
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    while True:
        pass


def spin_children(count: int) -> None:
    """Fork ``count`` children that spin on the CPU for ever (ignoring SIGXCPU), and go on."""
    for _ in range(count):
        if os.fork() == 0:
            spin()
    print(f"PROBE spinners {count}", file=sys.stderr, flush=True)


def deliberate_crash(made: int) -> None:
    """Raise, one frame down, so the traceback the SDK prints has frames of the bot's own."""
    raise RuntimeError(f"deliberate crash after {made} decisions")


def memory_bomb() -> None:
    hoard = []
    while True:
        hoard.append(bytearray(16 * 1024 * 1024))


def flood() -> None:
    block = b"x" * (1024 * 1024)
    for _ in range(100):
        sys.stdout.buffer.write(block)
    sys.stdout.buffer.flush()


class HostileBot(Bot):
    name, version = hello_identity()

    def __init__(self) -> None:
        self.greedy = GreedyPolicy()
        self.decisions = 0
        self.turned = False
        if MODE == "ignore_sigterm":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if MODE == "probes":
            run_probes()
        if MODE == "leftover":
            leftovers()
        if MODE == "escape":
            escape()
        if MODE in ("evil_name", "evil_stderr"):
            print(ARG, file=sys.stderr, flush=True)

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        self.decisions += 1
        if MODE == "connect_loop" and self.decisions == 1:
            connect_loop(int(ARG or "4"))
        if MODE == "h2_flood" and self.decisions == 1:  # once its own stream is up
            threading.Thread(target=h2_flood, args=(int(ARG or "1"),), daemon=True).start()
        if MODE == "spin_children" and self.decisions == 1:  # ARG children, then greedy play
            spin_children(int(ARG or "6"))
        if MODE == "raise_after" and self.decisions > int(ARG or "12"):
            deliberate_crash(self.decisions - 1)
        action = self.greedy(view, legal)
        if self.decisions < TRIGGER or self.turned:
            return action
        if MODE == "illegal" and view.phase is not Phase.DISCARD:
            return action  # wait for a discard to get wrong
        self.turned = True
        return self.turn_hostile(view, action)

    def turn_hostile(self, view: Observation, action: Action) -> Action:
        if MODE in ("crash", "evil_stderr"):
            os._exit(3)
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "slow":
            time.sleep(float(ARG))
        if MODE == "illegal":
            return Discard(next(card for card in CARDS if card not in view.hand))
        if MODE == "memory":
            memory_bomb()
        if MODE == "forks":
            fork_bomb()
        if MODE == "spin":
            spin()
        if MODE == "flood":
            flood()
        return action


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


def _literal(name: bytes, value: bytes) -> bytes:
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


_JUNK_HEADERS = b"".join(
    _literal(name, value)
    for name, value in (
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", b"/nothing.Here/Flood"),
        (b":authority", b"localhost"),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    )
)


def h2_flood(connections: int = 1, seconds: float = 3600.0) -> None:
    """Raw HTTP/2 on fresh connections to the seat's own socket: streams to an unknown method,
    each opened and reset at once (a rapid reset), in batches, as fast as the socket takes them."""
    path = os.environ["GIN_REFEREE"].removeprefix("unix://")
    socks = []
    for _ in range(connections):
        with contextlib.suppress(OSError):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0))
            socks.append(sock)
    print(f"PROBE flood_connections {len(socks)}", file=sys.stderr, flush=True)
    stream, sent, end = 1, 0, time.monotonic() + seconds
    while socks and time.monotonic() < end:
        for sock in list(socks):
            batch = bytearray()
            for _ in range(64):
                batch += _frame(1, 0x4, stream, _JUNK_HEADERS) + _frame(3, 0, stream, b"\0\0\0\x08")
                stream += 2
            try:
                sock.sendall(batch)
                sent += 64
            except OSError:
                socks.remove(sock)
        if stream > 2**31 - 200:
            break
    print(f"PROBE flood_streams {sent}", file=sys.stderr, flush=True)


def connection_flood(count: int) -> None:
    """Open (and hold) as many connections to the seat's socket as the bot's limits allow."""
    path = os.environ["GIN_REFEREE"].removeprefix("unix://")
    held = []
    for _ in range(count):
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sock.connect(path)
            held.append(sock)
        except OSError:
            break
    CONNECTIONS.extend(held)
    print(f"PROBE held_connections {len(held)}", file=sys.stderr, flush=True)


CONNECTIONS: list[socket.socket] = []


def connect_loop(children: int) -> None:
    """Children that connect to the seat's socket and close at once, over and over (after the
    bot's own hello); each reports how many connections got through."""
    path = os.environ["GIN_REFEREE"].removeprefix("unix://")
    for _ in range(children):
        if os.fork() == 0:
            made = tried = 0
            end = time.monotonic() + 3600
            while time.monotonic() < end:
                tried += 1
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                        sock.connect(path)
                        made += 1
                except OSError:
                    pass
                if tried % 2000 == 0:
                    print(f"PROBE loop_connections {made} of {tried}", file=sys.stderr, flush=True)


class RawPlay:
    """The Play stream over hand-made HTTP/2 frames on one connection (no gRPC library), so the
    bot can also misbehave on that very connection: after each answer it sends a batch of new
    streams to an unknown method, each reset at once (``raw_flood``), or of pings (``raw_ping``).
    """

    PLAY = b"/hollywood_gin.v1.Referee/Play"

    def __init__(self, session: Session) -> None:
        self.session = session
        path = os.environ["GIN_REFEREE"].removeprefix("unix://")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.inbox = bytearray()
        self.data = bytearray()
        self.junk = 3
        self.sent = 0
        headers = b"".join(
            _literal(name, value)
            for name, value in (
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", self.PLAY),
                (b":authority", b"localhost"),
                (b"content-type", b"application/grpc"),
                (b"te", b"trailers"),
            )
        )
        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0)
        self.sock.sendall(preface + _frame(1, 0x4, 1, headers))

    def send(self, message: pb.BotMessage) -> None:
        body = message.SerializeToString()
        self.sock.sendall(_frame(0, 0, 1, b"\0" + len(body).to_bytes(4, "big") + body))

    def misbehave(self) -> None:
        batch = bytearray()
        for _ in range(64):
            if MODE == "raw_flood":
                batch += _frame(1, 0x4, self.junk, _JUNK_HEADERS)
                batch += _frame(3, 0, self.junk, b"\0\0\0\x08")
                self.junk += 2
            else:
                batch += _frame(6, 0, 0, b"pingpong")
        self.sock.sendall(batch)
        self.sent += 64

    def frames(self) -> Iterator[tuple[int, int, int, bytes]]:
        while True:
            while len(self.inbox) < 9 or len(self.inbox) < 9 + int.from_bytes(self.inbox[:3]):
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                self.inbox += chunk
            size = int.from_bytes(self.inbox[:3])
            kind, flags = self.inbox[3], self.inbox[4]
            stream = int.from_bytes(self.inbox[5:9]) & 0x7FFFFFFF
            payload = bytes(self.inbox[9 : 9 + size])
            del self.inbox[: 9 + size]
            yield kind, flags, stream, payload

    def play(self) -> int:
        outbox = self.session.outbox
        outbox.put(pb.BotMessage(hello=pb.Hello(
            token=self.session.token, name=self.session.bot.name or "",
            version=self.session.bot.version or "", protocol_version=1,
        )))  # fmt: skip
        self.flush(outbox)
        for kind, flags, stream, payload in self.frames():
            if kind == 4 and not flags & 1:
                self.sock.sendall(_frame(4, 1, 0))  # SETTINGS ack
            elif kind == 6 and not flags & 1:
                self.sock.sendall(_frame(6, 1, 0, payload))  # PING ack
            elif kind == 0 and stream == 1:
                if payload:
                    update = len(payload).to_bytes(4, "big")
                    self.sock.sendall(_frame(8, 0, 0, update) + _frame(8, 0, 1, update))
                self.data += payload
                if not self.messages():
                    break
            elif kind in (3, 7) and stream in (0, 1):
                break
        print(f"PROBE raw_misbehaviour {MODE} {self.sent}", file=sys.stderr, flush=True)
        return 0

    def messages(self) -> bool:
        while len(self.data) >= 5 and len(self.data) >= 5 + int.from_bytes(self.data[1:5]):
            size = int.from_bytes(self.data[1:5])
            message = pb.RefereeMessage.FromString(bytes(self.data[5 : 5 + size]))
            del self.data[: 5 + size]
            if not self.session.handle(message):
                return False
            if self.flush(self.session.outbox):
                self.misbehave()
                while MODE == "raw_flood" and not self.data and not self.readable():
                    self.misbehave()  # on and on while the opponent thinks
        return True

    def readable(self) -> bool:
        return bool(select.select([self.sock], [], [], 0)[0])

    def flush(self, outbox: Any) -> bool:
        sent = False
        while not outbox.empty():
            item = outbox.get()
            if isinstance(item, pb.BotMessage):
                self.send(item)
                sent = sent or item.WhichOneof("kind") == "action"
        return sent


SURVEY: dict[str, Any] = {}
"""What the ``survey`` bot could see, dumped to stderr (compressed) as it goes."""


def listing(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return [f"{type(error).__name__}"]


def text_of(path: str, limit: int = 4096) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError as error:
        return type(error).__name__


def file_texts(top: str, limit: int = 200) -> dict[str, str]:
    """The contents of (up to ``limit``) files below ``top``."""
    found: dict[str, str] = {}
    for folder, _, names in os.walk(top):
        for name in names:
            if len(found) < limit:
                path = os.path.join(folder, name)
                found[path] = text_of(path, 65536)
    return found


def survey_start() -> None:
    """Everything of its own world a bot can look at before the first deal."""
    pids = [pid for pid in os.listdir("/proc") if pid.isdigit()]
    processes = {
        f"{pid}/{part}": text_of(f"/proc/{pid}/{part}", 4096)
        for pid in pids
        for part in ("cmdline", "comm", "environ", "status", "cgroup")
    }
    SURVEY.update(
        env=dict(os.environ),
        argv=sys.argv,
        cwd=os.getcwd(),
        hostname=socket.gethostname(),
        mountinfo=text_of("/proc/self/mountinfo", 65536),
        processes=processes,
        files={**file_texts("/run/bot"), **file_texts("/tmp"), **file_texts("/bot")},
        messages=[],
    )


def public_seeds(user_seed: int, names: list[str], league: str) -> list[int]:
    """Every deal seed a bot could compute from a known seed with the public formulas: the seed
    itself (``gin play``), the old league formula, and today's with public deals."""
    candidates = [user_seed]
    pairing = "|".join(sorted(names))
    public = hashlib.sha256(f"hollywood-gin/league-seed/v2/{league}/{user_seed}".encode())
    for index in range(8):
        text = f"hollywood-gin/league/v1/{user_seed}/{pairing}/{index}".encode()
        candidates.append(int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1)
        message = f"hollywood-gin/league/v2/{pairing}/{index}".encode()
        keyed = hmac.new(public.digest(), message, hashlib.sha256).digest()
        candidates.append(int.from_bytes(keyed[:8], "big") >> 1)
    return candidates


def rebuild(hand_started: pb.HandStarted) -> None:
    """Try to rebuild the deck from a known seed: test each guess against the cards dealt and
    against the deck commitment shown."""
    from referee.rules import shuffled_deck  # noqa: PLC0415 - the survey mode only

    names = [SURVEY.get("name", ""), SURVEY.get("opponent", "")]
    dealt = set(hand_started.hand) | {hand_started.upcard}
    league = SURVEY.get("match_id", "").split("~")[0]
    for guess in public_seeds(int(ARG), names, league):
        deck = shuffled_deck(guess, hand_started.hand_number)
        unsalted = hashlib.sha256(bytes(deck)).hexdigest()
        if dealt <= {str(card) for card in deck[:21]} or unsalted == hand_started.deck_commitment:
            SURVEY["rebuilt"] = f"seed {guess} deals hand {hand_started.hand_number}"
    SURVEY.setdefault("rebuilt", "")


def survey_dump() -> None:
    """Every run of 8 or more hex digits (decimal digits too) in everything surveyed, each
    once: every form a seed, salt or commitment would take, and small enough for the stderr
    tail that is kept beside the log."""
    text = json.dumps({key: value for key, value in SURVEY.items() if key != "rebuilt"})
    tokens = sorted(set(re.findall(r"[0-9A-Fa-f]{8,}", text)))  # every seed or salt is hex
    packed = base64.b64encode(zlib.compress("\n".join(tokens).encode(), 9)).decode()
    print(f"SURVEY {packed}", file=sys.stderr, flush=True)
    if "rebuilt" in SURVEY:
        verdict = "ALLOWED " + SURVEY["rebuilt"] if SURVEY["rebuilt"] else "BLOCKED"
        print(f"PROBE rebuild_deck {verdict}", file=sys.stderr, flush=True)


P = ParamSpec("P")
R = TypeVar("R")
EARLY_ID = 999_999
"""The request id of ``early_answer``'s answer: never issued in a series."""


class HostileSession(Session):
    """Protocol-level misbehaviour, below the SDK's usual care.

    Each violation of the resynchronisation modes happens ARG times (default once), on the
    hostile seat's requests after ``TRIGGER``, which are otherwise answered right: ``answer_twice``
    sends an answer twice; ``stale_resend`` sends its previous answer again before the right one;
    ``second_stream`` tries a second Play stream, then answers on the first; ``early_answer``
    answers an id never issued, once, before any request.
    """

    def __init__(self, bot: Bot, token: str) -> None:
        super().__init__(bot, token)
        self.stub: pb_grpc.RefereeStub | None = None
        self.answers: list[pb.BotMessage] = []
        """Every answer sent so far, for the modes that send one again."""
        self.violations_left = int(ARG) if ARG.isdigit() else 1

    def play(self, stub: pb_grpc.RefereeStub) -> int:
        self.stub = stub
        return super().play(stub)

    def _welcome(self, welcome: pb.Welcome) -> None:
        super()._welcome(welcome)
        if MODE == "early_answer":
            early = pb.Action(request_id=EARLY_ID, upcard=pb.UpcardChoice(take=False))
            self.outbox.put(pb.BotMessage(action=early))

    def _call(
        self,
        what: str,
        request_id: int,
        function: Callable[P, R],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> R:
        result = super()._call(what, request_id, function, *args, **kwargs)
        if what == "decide" and isinstance(result, Action):
            self.answers.append(pb.BotMessage(action=action_to_pb(result, request_id)))
        return result

    def _violates(self, request: pb.DecisionRequest) -> bool:
        """Whether a resynchronisation mode misbehaves on this request (counted once)."""
        if request.request_id <= TRIGGER or not self.answers or self.violations_left <= 0:
            return False
        self.violations_left -= 1
        return True

    def _second_stream(self) -> None:
        """Try another Play stream and leave it: the referee refuses it (``ALREADY_EXISTS``), or
        the transport holds it back past a short deadline. The probe line on stderr says which."""
        stub = self.stub
        assert stub is not None
        probe("second_stream", lambda: list(stub.Play(iter(()), timeout=0.1)))

    def handle(self, message: pb.RefereeMessage) -> bool:
        if MODE == "survey":
            kind = message.WhichOneof("kind")
            event = message.event.WhichOneof("kind") if kind == "event" else None
            if kind == "welcome":
                welcome = message.welcome
                SURVEY["opponent"] = f"{welcome.opponent_name}@{welcome.opponent_version}"
                SURVEY["name"] = f"hostile@{MODE}"
                SURVEY["match_id"] = welcome.match_id
            SURVEY["messages"].append(str(message))  # every message, requests too
            if event == "hand_started":
                rebuild(message.event.hand_started)
            if event in ("hand_started", "series_ended"):
                survey_dump()
        return super().handle(message)

    def _request(self, request: pb.DecisionRequest) -> None:
        if MODE == "wrong_id":
            request.request_id += 1000
        if MODE == "garbage" and request.request_id > TRIGGER:
            self.outbox.put(pb.BotMessage())
            return
        if MODE == "oversized" and request.request_id > TRIGGER:
            self.outbox.put(
                pb.BotMessage(
                    action=pb.Action(
                        request_id=request.request_id, discard=pb.Discard(card="x" * 200_000)
                    )
                )
            )
            return
        if MODE == "stale_resend" and self._violates(request):
            self.outbox.put(self.answers[-1])
        if MODE == "second_stream" and self._violates(request):
            self._second_stream()
        super()._request(request)
        if MODE == "answer_twice" and self._violates(request):
            self.outbox.put(self.answers[-1])


def main() -> int:
    if MODE == "never_connect":
        time.sleep(3600)
    if MODE == "wrong_token":
        os.environ["GIN_TOKEN"] = "not-the-token"
    if MODE == "survey":
        survey_start()
    if MODE == "connections":  # ARG: connections per child, x children; then play
        per_child, _, children = (ARG or "240").partition("x")
        ready = []
        for _ in range(int(children or "1")):
            reader, writer = os.pipe()
            if os.fork() == 0:
                connection_flood(int(per_child))
                os.write(writer, b".")
                time.sleep(3600)
            ready.append(reader)
        for reader in ready:
            os.read(reader, 1)
            os.close(reader)

    bot = HostileBot()
    address, token = os.environ["GIN_REFEREE"], os.environ["GIN_TOKEN"]
    status = 1
    if MODE in ("raw_flood", "raw_ping"):
        return RawPlay(HostileSession(bot, token)).play()
    with grpc.insecure_channel(address) as channel, contextlib.suppress(Exception):
        if MODE == "unknown_method":  # before its hello: calls to a method the referee lacks
            junk: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
                "/nothing.Here/Flood"
            )
            for number in range(int(ARG or "200")):
                with contextlib.suppress(grpc.RpcError):
                    junk(b"")
                if number % 100 == 0:
                    print(f"PROBE unknown_calls {number + 1}", file=sys.stderr, flush=True)
        status = HostileSession(bot, token).play(pb_grpc.RefereeStub(channel))
    if MODE == "ignore_sigterm":
        time.sleep(600)  # stay after the goodbye: the teardown must kill us
    if MODE == "slow_exit":
        time.sleep(float(ARG or "1.5"))  # leave, but slowly (as on a loaded machine)
    if MODE == "spin_children":
        time.sleep(600)  # stay, spinners and all, so the teardown finds every process alive
    return status


if __name__ == "__main__":
    sys.exit(main())
