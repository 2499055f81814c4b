"""The ``gin`` executable: harden the process first, then run the command line.

``GRPC_ENABLE_FORK_SUPPORT=0`` only counts if it is set before grpc is imported, so the imports
that pull grpc in come after :func:`harden_referee_process`.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Any, TextIO, cast

__all__ = ["main"]


class _PipeEnd:
    """Standard output that ends the process as any Unix tool ends when the reader of its
    output has gone (``gin ... | head``): by SIGPIPE, silently (the shell sees 141), rather
    than with a traceback or click's exit 1. Only a write to standard output does this: the
    referee's own pipes and sockets keep SIGPIPE ignored, as Python sets it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _end_by_sigpipe()
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _end_by_sigpipe()
            raise

    def __getattr__(self, name: str) -> Any:  # type: ignore[explicit-any]  # the wrapped stream's attributes
        return getattr(self._stream, name)


def _end_by_sigpipe() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def _stop_as_ctrl_c(_signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops a command as Ctrl-C does: the running matches are put back, the command
    says how to resume, and exits 130. It goes through whatever handles SIGINT: trio's handler
    inside a run (which raises at a point where trio can clean up), Python's outside one."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        signal.default_int_handler(signal.SIGINT, frame)


def _stop_on_sigterm() -> None:
    """Let SIGTERM stop a command cleanly (:func:`_stop_as_ctrl_c`). A shell starts a command
    in the background with SIGINT ignored, and trio handles Ctrl-C only where SIGINT has
    Python's own handler: there SIGINT is blocked instead (still never delivered, and blocked
    for the processes started from here as it was ignored for them), and given Python's
    handler, so that SIGTERM, the way such a run is stopped, goes through trio too."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop_as_ctrl_c)


def main() -> None:
    """Entry point of the ``gin`` console script."""
    _stop_on_sigterm()
    from referee.sandbox import harden_referee_process  # noqa: PLC0415 - must precede grpc

    harden_referee_process()
    from tournaments.cli.app import app  # noqa: PLC0415 - imports grpc
    from tournaments.cli.common import fail  # noqa: PLC0415 - after the hardening too
    from tournaments.executors import ExecutorError  # noqa: PLC0415
    from tournaments.store import StoreDamaged  # noqa: PLC0415

    sys.stdout = cast(TextIO, _PipeEnd(sys.stdout))
    try:
        app()
    except StoreDamaged as error:  # found in any command, wherever the damaged row was read
        raise SystemExit(fail(f"{error}; restore the store from a backup").exit_code) from None
    except ExecutorError as error:  # a full disk, a lost cluster: in a command that runs matches
        raise SystemExit(fail(str(error), 1).exit_code) from None


if __name__ == "__main__":
    main()
