"""The answer an endpoint raises to refuse a request: an error status and a sentence saying why.

The app's handlers turn it into an error page, or a JSON error under ``/api/``.
"""

from __future__ import annotations

__all__ = ["Refused"]


class Refused(Exception):  # noqa: N818 - an answer, not an error
    """A request answered with an error status (and ``retry_after`` for 429)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
