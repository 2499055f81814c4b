"""A hostile bot that speaks HTTP/2 by hand (no grpcio), to misbehave where a gRPC library would
not let it. It plays greedy through the SDK's Session; its mode (first argument) says what else:
dupflood   : after each answer, while the opponent thinks, floods copies of its first answer
             (a duplicate: struck once, then every copy is dropped unseen).
hdrflood   : after its first answer, half-closes Play, then floods Huffman HEADERS on stream 1
             (trailers after END_STREAM) while the opponent thinks.
endclose   : half-closes Play right after a series' SeriesEnded (it says so on stderr), then
             plays on if asked.
calm       : plays greedy, nothing else.
"""

import os
import select
import socket
import sys
import time
from collections.abc import Iterator, Sequence

from protocol import hollywood_gin_pb2 as pb
from protocol.sdk import Bot, Session
from referee.rules import Action, GreedyPolicy, Observation

MODE = sys.argv[1] if len(sys.argv) > 1 else "calm"
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
    return b"".join(literal(n, v) for n, v in fields)


def huff_block() -> bytes:
    # a literal header with a Huffman-coded value of 'e' * n (5 bits each): ~7.5 KiB
    n = 12000
    bits = "00101" * n
    bits += "1" * (-len(bits) % 8)
    data = int(bits, 2).to_bytes(len(bits) // 8, "big")

    def integer(value: int, prefix: int, first: int) -> bytes:
        limit = (1 << prefix) - 1
        if value < limit:
            return bytes((first | value,))
        out, value = bytearray((first | limit,)), value - limit
        while value >= 128:
            out.append(value % 128 + 128)
            value //= 128
        out.append(value)
        return bytes(out)

    return b"\x00" + integer(3, 7, 0) + b"x-a" + integer(len(data), 7, 0x80) + data


class Greedy(Bot):
    name, version = "attack", MODE

    def __init__(self) -> None:
        self.greedy = GreedyPolicy()

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.greedy(view, legal)


class Attacker:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.setsockopt(
            socket.SOL_SOCKET, socket.SO_SNDBUF, int(os.environ.get("SNDBUF", "20000"))
        )
        self.sock.connect(os.environ["GIN_REFEREE"].removeprefix("unix://"))
        self.inbox = bytearray()
        self.data = bytearray()
        self.sent = 0
        self.first_answer: pb.BotMessage | None = None
        self.halfclosed = False
        self.hblock = frame(1, 0x5, 1, huff_block())
        self.sock.sendall(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(1, 0x4, 1, headers(PLAY))
        )

    def frames(self) -> Iterator[tuple[int, int, int, bytes]]:
        while True:
            while len(self.inbox) < 9 or len(self.inbox) < 9 + int.from_bytes(
                self.inbox[:3], "big"
            ):
                try:
                    chunk = self.sock.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                self.inbox += chunk
            size = int.from_bytes(self.inbox[:3], "big")
            kind, flags = self.inbox[3], self.inbox[4]
            stream = int.from_bytes(self.inbox[5:9], "big") & 0x7FFFFFFF
            payload = bytes(self.inbox[9 : 9 + size])
            del self.inbox[: 9 + size]
            yield kind, flags, stream, payload

    def play(self) -> int:
        self.send(
            pb.BotMessage(
                hello=pb.Hello(
                    token=self.session.token,
                    name=Greedy.name,
                    version=Greedy.version,
                    protocol_version=1,
                    plays_on=True,
                )
            )
        )
        for kind, flags, stream, payload in self.frames():
            if kind == 4 and not flags & 1:
                self.sock.sendall(frame(4, 1, 0))
            elif kind == 6 and not flags & 1:
                self.sock.sendall(frame(6, 1, 0, payload))
            elif kind == 0 and stream == 1:
                self.data += payload
                if payload:
                    inc = len(payload).to_bytes(4, "big")
                    self.sock.sendall(frame(8, 0, 0, inc) + frame(8, 0, 1, inc))
                if not self.messages():
                    break
            elif kind in (3, 7) and stream in (0, 1):
                break
        print(f"PROBE attack {MODE} {self.sent}", file=sys.stderr, flush=True)
        return 0

    def body(self, message: pb.BotMessage) -> bytes:
        b = message.SerializeToString()
        return b"\0" + len(b).to_bytes(4, "big") + b

    def send(self, message: pb.BotMessage) -> None:
        if self.halfclosed:
            return
        self.sock.sendall(frame(0, 0, 1, self.body(message)))

    def misbehave(self) -> None:
        try:
            if MODE == "dupflood" and self.first_answer is not None:
                one = self.body(self.first_answer)
                per = 16000 // len(one)
                if select.select([], [self.sock], [], 0.001)[1]:
                    self.sock.sendall(frame(0, 0, 1, one * per))
                    self.sent += per
            elif MODE == "hdrflood":
                if not self.halfclosed:
                    self.sock.sendall(frame(0, 1, 1))
                    self.halfclosed = True
                if select.select([], [self.sock], [], 0.001)[1]:
                    self.sock.sendall(self.hblock)
                    self.sent += 1
            else:
                time.sleep(0.001)
        except OSError:
            time.sleep(0.01)

    def messages(self) -> bool:
        while len(self.data) >= 5 and len(self.data) >= 5 + int.from_bytes(self.data[1:5], "big"):
            size = int.from_bytes(self.data[1:5], "big")
            message = pb.RefereeMessage.FromString(bytes(self.data[5 : 5 + size]))
            del self.data[: 5 + size]
            if not self.session.handle(message):
                return False
            if (
                MODE == "endclose"
                and message.WhichOneof("kind") == "event"
                and message.event.WhichOneof("kind") == "series_ended"
                and not self.halfclosed
            ):
                self.sock.sendall(frame(0, 1, 1))
                self.halfclosed = True
                print("ATTACK half-closed after series end", file=sys.stderr, flush=True)
            answered = False
            while not self.session.outbox.empty():
                item = self.session.outbox.get()
                if isinstance(item, pb.BotMessage):
                    self.send(item)
                    if item.WhichOneof("kind") == "action":
                        answered = True
                        if self.first_answer is None:
                            self.first_answer = item
            while answered and MODE != "calm" and not self.data and not self.readable():
                self.misbehave()
        return True

    def readable(self) -> bool:
        return bool(select.select([self.sock], [], [], 0)[0])


if __name__ == "__main__":
    sys.exit(Attacker(Session(Greedy(), os.environ["GIN_TOKEN"])).play())
