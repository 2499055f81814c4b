"""The arena's web app (interface written by the lead; a helper fills it in)."""

from __future__ import annotations

from starlette.applications import Starlette

from tournaments.arena.service import ArenaService


def create_app(service: ArenaService) -> Starlette:  # noqa: ARG001 - the stub
    """The ASGI app serving ``service``."""
    return Starlette()
