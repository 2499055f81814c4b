"""A recorded match's replay pages rendered in a process of the server's own
(:class:`ReplayProcess`, ``python -m tournaments.arena.replays``): walking a log through the
rules and rendering its three views is some 200 ms of pure Python a match, which in the
publishing thread held the web's interpreter for most of the time of a busy ladder (79% of it,
measured with py-spy under ``benchmarks/arena_readers.py``)."""

from __future__ import annotations

from pathlib import Path

from tournaments.arena.child import Child, serve
from tournaments.arena.privacy import redacted_replay
from tournaments.views.replay_html import replay_html

__all__ = ["VIEWS", "ReplayProcess", "replay_views"]


VIEWS: tuple[int | None, ...] = (None, 0, 1)
"""A replay's views: the referee's, then each seat's."""


def replay_views(log_path: Path) -> dict[int | None, bytes]:
    """The replay page of the log at ``log_path`` from each of :data:`VIEWS`, from one walk of
    it through the rules.

    Raises:
        OSError, UnicodeDecodeError, referee.replay.LogReadError: the log cannot be read.
    """
    replay = redacted_replay(log_path, ())
    return {seat: replay_html(replay, seat).encode() for seat in VIEWS}


class ReplayProcess(Child):
    """:func:`replay_views` in a process of its own (a :class:`Child`)."""

    def __init__(self) -> None:
        super().__init__("the replays' process", "tournaments.arena.replays")

    def views(self, log_path: Path) -> dict[int | None, bytes]:
        """:func:`replay_views` of ``log_path``, there.

        Raises:
            RuntimeError: the log cannot be read (its one-line reason), or the process ended.
        """
        value = self.ask(str(log_path))
        if not isinstance(value, dict) or set(value) != set(VIEWS):
            raise RuntimeError("the replays' process answered no replay")
        return {seat: bytes(page) for seat, page in value.items()}


def _views(request: object) -> dict[int | None, bytes]:
    return replay_views(Path(str(request)))


if __name__ == "__main__":  # pragma: no cover - the process itself
    serve(_views)
