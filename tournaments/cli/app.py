"""The ``gin`` command line, put together: each module registers its commands on the apps of
:mod:`tournaments.cli.common`."""

from __future__ import annotations

from tournaments.cli import arena, arena_event, bot, league, play, sandbox
from tournaments.cli.common import app, league_app
from tournaments.cli.league_new import league_new
from tournaments.cli.match import match
from tournaments.cli.replay import replay

app.command()(replay)
app.command()(match)
league_app.command("new")(league_new)

__all__ = ["app", "arena", "arena_event", "bot", "league", "play", "sandbox"]
