"""A bot that plays greedy over hand-made HTTP/2 and abuses its own connection, as its first
argument says: after each answer, and for as long as the opponent thinks, batches of 64

* ``settings``: SETTINGS frames (each must be acknowledged),
* ``window``: WINDOW_UPDATE frames for its connection,
* ``priority``: PRIORITY frames for streams never opened,
* ``reset``: RST_STREAM frames for streams never opened,
* ``empty_data``: empty DATA frames on its Play stream,
* ``continuation``: one header block for a new stream that never ends, CONTINUATION after
  CONTINUATION (then nothing else can be sent: the bot only waits).

Its stderr says how many frames it sent (``PROBE h2_abuse MODE N``). The referee's budget of
control frames (``referee.http2``) ends the connection; the bot then exits.
"""

from __future__ import annotations

import os
import select
import socket
import sys
from collections.abc import Iterator, Sequence

from protocol import hollywood_gin_pb2 as pb
from protocol.sdk import Bot, Session
from referee.rules import Action, GreedyPolicy, Observation

MODE = sys.argv[1] if len(sys.argv) > 1 else "settings"
PLAY = b"/hollywood_gin.v1.Referee/Play"


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload
    )


def literal(name: bytes, value: bytes) -> bytes:
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def headers(path: bytes) -> bytes:
    fields = (
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", path),
        (b":authority", b"localhost"),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    )
    return b"".join(literal(name, value) for name, value in fields)


class Greedy(Bot):
    name, version = "h2_abuse", MODE

    def __init__(self) -> None:
        self.greedy = GreedyPolicy()

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.greedy(view, legal)


class Abuser:
    """The Play stream on stream 1, and the abuse beside it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.environ["GIN_REFEREE"].removeprefix("unix://"))
        self.inbox = bytearray()
        self.data = bytearray()
        self.sent = 0
        self.open_block = False
        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)
        self.sock.sendall(preface + frame(1, 0x4, 1, headers(PLAY)))

    def batch(self) -> bytes:
        if MODE == "continuation":
            first = b"" if self.open_block else frame(1, 0, 3, headers(b"/x.Y/Z")[:8])
            self.open_block = True
            return first + frame(9, 0, 3) * 64
        one = {
            "settings": frame(4, 0, 0, b"\x00\x03\x00\x00\x00\x01"),
            "window": frame(8, 0, 0, b"\x00\x00\x00\x01"),
            "priority": frame(2, 0, 5, b"\x00\x00\x00\x00\x10"),
            "reset": frame(3, 0, 5, b"\x00\x00\x00\x08"),
            "empty_data": frame(0, 0, 1),
        }[MODE]
        return one * 64

    def misbehave(self) -> None:
        try:
            self.sock.sendall(self.batch())
        except OSError:
            return
        self.sent += 64

    def frames(self) -> Iterator[tuple[int, int, int, bytes]]:
        while True:
            while len(self.inbox) < 9 or len(self.inbox) < 9 + int.from_bytes(self.inbox[:3]):
                try:
                    chunk = self.sock.recv(65536)
                except OSError:
                    return
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
        hello = pb.Hello(
            token=self.session.token, name=Greedy.name, version=Greedy.version, protocol_version=1
        )
        self.send(pb.BotMessage(hello=hello))
        for kind, flags, stream, payload in self.frames():
            if kind == 4 and not flags & 1:
                self.sock.sendall(frame(4, 1, 0))
            elif kind == 6 and not flags & 1:
                self.sock.sendall(frame(6, 1, 0, payload))
            elif kind == 0 and stream == 1:
                self.data += payload
                if not self.messages():
                    break
            elif kind in (3, 7) and stream in (0, 1):
                break
        print(f"PROBE h2_abuse {MODE} {self.sent}", file=sys.stderr, flush=True)
        return 0

    def send(self, message: pb.BotMessage) -> None:
        if self.open_block:
            return  # a header block is open: nothing else may go
        body = message.SerializeToString()
        self.sock.sendall(frame(0, 0, 1, b"\0" + len(body).to_bytes(4, "big") + body))

    def messages(self) -> bool:
        while len(self.data) >= 5 and len(self.data) >= 5 + int.from_bytes(self.data[1:5]):
            size = int.from_bytes(self.data[1:5])
            message = pb.RefereeMessage.FromString(bytes(self.data[5 : 5 + size]))
            del self.data[: 5 + size]
            if not self.session.handle(message):
                return False
            answered = False
            while not self.session.outbox.empty():
                item = self.session.outbox.get()
                if isinstance(item, pb.BotMessage):
                    self.send(item)
                    answered = answered or item.WhichOneof("kind") == "action"
            while answered and not self.data and not self.readable():
                self.misbehave()  # on and on while the opponent thinks
        return True

    def readable(self) -> bool:
        return bool(select.select([self.sock], [], [], 0)[0])


if __name__ == "__main__":
    sys.exit(Abuser(Session(Greedy(), os.environ["GIN_TOKEN"])).play())
