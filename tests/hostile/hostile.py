"""A hostile bot for the referee's tests: plays greedy, misbehaving as its first argument says.

Probes print one line each to stderr, ``PROBE <name> <ALLOWED|BLOCKED> <detail>``, so a test can
read what the sandbox let through from the fault evidence or the stderr tail.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from protocol import hollywood_gin_pb2 as pb
from protocol import hollywood_gin_pb2_grpc as pb_grpc
from protocol.sdk import Bot, Session
from referee.rules import Action, Discard, GreedyPolicy, Observation, Phase
from referee.rules.cards import CARDS

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
TRIGGER = 5
"""The decision on which the bot turns hostile (so it starts and plays a little first)."""


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
    name = "hostile"
    version = MODE

    def __init__(self) -> None:
        self.greedy = GreedyPolicy()
        self.decisions = 0
        self.turned = False
        if MODE == "ignore_sigterm":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if MODE == "probes":
            run_probes()
        if MODE == "escape":
            escape()

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        self.decisions += 1
        action = self.greedy(view, legal)
        if self.decisions < TRIGGER or self.turned:
            return action
        if MODE == "illegal" and view.phase is not Phase.DISCARD:
            return action  # wait for a discard to get wrong
        self.turned = True
        return self.turn_hostile(view, action)

    def turn_hostile(self, view: Observation, action: Action) -> Action:
        if MODE == "crash":
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


class HostileSession(Session):
    """Protocol-level misbehaviour, below the SDK's usual care."""

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
        super()._request(request)


def main() -> int:
    if MODE == "never_connect":
        time.sleep(3600)
    if MODE == "wrong_token":
        os.environ["GIN_TOKEN"] = "not-the-token"
    bot = HostileBot()
    address, token = os.environ["GIN_REFEREE"], os.environ["GIN_TOKEN"]
    status = 1
    with grpc.insecure_channel(address) as channel, contextlib.suppress(Exception):
        status = HostileSession(bot, token).play(pb_grpc.RefereeStub(channel))
    if MODE == "ignore_sigterm":
        time.sleep(600)  # stay after the goodbye: the teardown must kill us
    return status


if __name__ == "__main__":
    sys.exit(main())
