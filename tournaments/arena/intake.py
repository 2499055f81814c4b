"""Uploads: received, kept, unpacked safely, checked by the conformance kit, registered.

(Interface written by the lead; a helper fills it in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tournaments.registry import Checker

if TYPE_CHECKING:
    from tournaments.arena.service import ArenaService

MAX_UPLOAD_BYTES: Final = 8 * 1024 * 1024
"""The most an upload may weigh (gzip'd tar); a bigger one is refused before it is kept."""


class UploadRefused(ValueError):  # noqa: N818 - named for what is so, as LeagueBusy
    """An upload refused at once (too big, not a gzip'd tar); ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Intake:
    """Takes uploads and checks them one at a time, in the order they came."""

    def __init__(self, service: ArenaService, checker: Checker | None) -> None:
        self.service = service
        self.checker = checker

    def receive(self, author: str, data: bytes) -> str:
        """Keep an upload of ``author`` and queue it for its check; returns its submission id.

        Raises:
            UploadRefused: refused before it was kept (too big, not a gzip'd tar).
        """
        raise NotImplementedError

    async def run(self) -> None:
        """Check queued uploads for ever (those a killed server was checking first)."""
        await __import__("trio").sleep_forever()
