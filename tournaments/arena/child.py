"""A process of the server's own for pure-Python work that would hold the web's interpreter in
a thread: the board's fit of a big ladder (:class:`tournaments.arena.board.BoardProcess`), a
recorded match's replay pages (:class:`tournaments.arena.replays.ReplayProcess`).

:class:`Child` is the server's side: ``python -m MODULE ARGS...`` started on first use and kept,
one request at a time, blocking (so called in a thread). A request and its answer are pickles,
each after its length; the child answers ``(True, value)`` or ``(False, its one-line reason)``.
The child ends when its input does (its server gone, even killed) or when :meth:`Child.stop`
kills it. :func:`serve` is the child's side.
"""

from __future__ import annotations

import contextlib
import pickle
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import IO, Final

__all__ = ["Child", "serve"]


_HEAD: Final = struct.Struct(">Q")
"""The length before each request and each answer."""


class Child:
    """The server's side of one child process (see the module); ``what`` names it in errors
    ("the board's process")."""

    def __init__(self, what: str, module: str, *args: str) -> None:
        self.what = what
        self.command = [sys.executable, "-m", module, *args]
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0
        """Processes started so far."""

    def ask(self, request: object) -> object:
        """The child's answer to ``request``.

        Raises:
            RuntimeError: the child failed (its one-line reason) or ended.
        """
        process = self.process or self._start()
        assert process.stdin is not None
        assert process.stdout is not None
        data = pickle.dumps(request)
        try:
            process.stdin.write(_HEAD.pack(len(data)) + data)
            process.stdin.flush()
            answer = _read_exactly(
                process.stdout, _HEAD.unpack(_read_exactly(process.stdout, 8))[0]
            )
        except (OSError, EOFError) as error:
            self.stop()
            raise RuntimeError(f"{self.what} ended ({error or 'no answer'})") from None
        try:
            ok, value = pickle.loads(answer)  # our own child's answer
        except Exception as error:
            raise RuntimeError(f"{self.what} answered nothing readable ({error})") from None
        if not ok:
            raise RuntimeError(str(value))
        return value

    def _start(self) -> subprocess.Popen[bytes]:
        self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.started += 1
        return self.process

    def stop(self) -> None:
        """End the process (a request in flight ends with it)."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _read(stream: IO[bytes]) -> bytes:
    """One request or answer (its length, then its bytes)."""
    return _read_exactly(stream, _HEAD.unpack(_read_exactly(stream, _HEAD.size))[0])


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("the process ended")
    return data


def serve(handle: Callable[[object], object]) -> None:
    """The child's loop: ``handle`` each request read, until the input ends. An exception of
    ``handle`` is answered as its one line (the server says it, and the child lives on). Ctrl-C
    at the terminal is the server's to handle (the server stops the child)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out, given = sys.stdout.buffer, sys.stdin.buffer
    sys.stdout = sys.stderr  # nothing else may write where the answers go
    while True:
        try:
            request = pickle.loads(_read(given))
        except EOFError:  # the server is gone, or stopped us
            return
        try:
            answer = pickle.dumps((True, handle(request)))
        except Exception as error:  # said in one line by the server
            answer = pickle.dumps((False, f"{type(error).__name__}: {error}"))
        try:
            out.write(_HEAD.pack(len(answer)) + answer)
            out.flush()
        except BrokenPipeError:  # the server is gone
            return
