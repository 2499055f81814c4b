"""``gin arena serve``: the web app on Hypercorn, under trio, in one process with the ladder and
the intake of uploads.

SIGINT or SIGTERM stops it cleanly: the server stops taking requests (open ones get a few
seconds), then the ladder stops, putting its running matches back to pending for the next start.
A server killed outright (SIGKILL) leaves them running in the store; the next start puts them
back first, as ``gin league run`` does, so nothing is lost or counted twice.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable
from functools import partial
from typing import Any, Final, cast

import trio
from hypercorn.config import Config
from hypercorn.middleware import ProxyFixMiddleware

from tournaments.arena.service import ArenaService
from tournaments.arena.web import Front, create_app, serve_door

__all__ = ["GRACE_S", "serve", "server_config"]


GRACE_S: Final = 3.0
"""How long open requests (a live page's stream, say) get once the server is told to stop."""


def server_config(host: str, port: int, *, access_log: bool = False) -> Config:
    """Hypercorn's settings for the arena."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.graceful_timeout = GRACE_S
    config.include_server_header = False
    config.accesslog = logging.getLogger("gin.arena.access") if access_log else None
    config.keep_alive_timeout = 30
    config.h11_max_incomplete_size = 64 * 1024  # a request's head
    return config


async def serve(
    service: ArenaService,
    host: str,
    port: int,
    *,
    on_ready: Callable[[list[str]], None] | None = None,
    access_log: bool = False,
    behind_proxy: bool = False,
) -> None:
    """Serve until SIGINT or SIGTERM (or until cancelled); ``on_ready`` gets the addresses bound
    (the real port when ``port`` is 0). ``behind_proxy``: trust one reverse proxy's
    ``X-Forwarded-For``, ``-Proto`` and ``-Host`` (the client's address for the rate limits, https
    for the cookies); never without a proxy in front, or any client could claim any address.
    A visitor's published pages are answered at the door (:func:`serve_door`), unless every
    request is to be in the access log (``access_log``: all through Hypercorn)."""
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_signals, stop)
        await nursery.start(service.run)
        front = create_app(service)
        app = cast(Any, front)  # type: ignore[explicit-any]  # Starlette's ASGI types are not Hypercorn's
        if behind_proxy:
            app = ProxyFixMiddleware(app, mode="legacy", trusted_hops=1)
        door = front if isinstance(front, Front) and not access_log else None
        async with trio.open_nursery() as web:
            binds = await web.start(
                partial(
                    serve_door,
                    app,
                    door,
                    server_config(host, port, access_log=access_log),
                    shutdown_trigger=stop.wait,
                )
            )
            if on_ready is not None:
                on_ready(binds)
        nursery.cancel_scope.cancel()  # the ladder and the intake stop; the runner puts back


async def _stop_on_signals(stop: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            stop.set()
            return
