"""The demo league (``make demo``, ``gin league demo``): the sample bots in a short round robin.
(``gin demo`` is another demo: one series between two built-in policies, no bot processes.)

It lives in its own home (``.gin-demo`` by default, emptied first), so it never touches a real
registry or store. Its deals are public: the league has ``public_deals`` on, so its secret, and
every deal and bot seed, follow from its name and ``--seed`` alone, not from the home's random
secret; every fresh run of the same demo deals the same and gives the same standings. A real
league's secret stays random, or keyed with its home's secret.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

import trio

from protocol.manifest import load_manifest
from tournaments.league import LeagueConfig, LeagueError, create_league
from tournaments.registry import Arena, submit
from tournaments.store import Store, StoreUnusable

__all__ = ["SAMPLES", "DemoHomeError", "demo_bots", "demo_note", "prepare_demo"]


SAMPLES: Final = Path(__file__).resolve().parents[2] / "sample_bots"
DEMO_BOTS: Final = ("random", "greedy", "strong", "node")
DEMO_NAME: Final = "demo"


def demo_note(seed: int) -> str:
    """What the demo league is, in one line: which demo, and that its deals are public."""
    return (
        f"the league demo (gin demo is the other: one series, no bot processes): seed {seed}, "
        "public deals (a published example: anyone can rebuild them, and every fresh run "
        "deals and scores the same; a league of yours keeps its deals secret)"
    )


def demo_bots() -> list[Path]:
    """The sample bot folders that can run here (the Node bot needs ``make node-bot``)."""
    folders = []
    for name in DEMO_BOTS:
        folder = SAMPLES / name
        if not (folder / "bot.toml").exists():
            continue
        if name == "node" and not (folder / "node_modules").is_dir():
            continue
        folders.append(folder)
    return folders


class DemoHomeError(ValueError):
    """A ``--home`` the demo may not empty."""


def _demo_home_only(home: Path) -> None:
    """Refuse an arena home that holds more than the demo's league and the sample bots.

    Raises:
        DemoHomeError: it holds other leagues or bots (or its store cannot be read).
    """
    try:
        store = Arena(home).open_store()
    except StoreUnusable as error:
        raise DemoHomeError(f"--home {home}: {error}") from None
    try:
        leagues = set(store.leagues()) - {DEMO_NAME}
        samples = {load_manifest(folder).name for folder in demo_bots()}
        bots = {bot.name for bot in store.bots()} - samples
    finally:
        store.close()
    if leagues or bots:
        held = ", ".join(sorted(leagues | bots))
        raise DemoHomeError(
            f"--home {home} is an arena home with more than the demo ({held}): the demo empties "
            "its home, so give a new or empty folder"
        )


def prepare_demo(
    home: Path, series_per_pairing: int, seed: int
) -> tuple[Arena, Store, LeagueConfig]:
    """A fresh home with the sample bots submitted and the demo league created.

    The sample bots are trusted, so their conformance check is skipped here
    (``gin bot submit`` runs it). Only a new folder, an empty one or an arena home (one that
    holds an ``arena.sqlite``) is emptied: a wrong ``--home`` never deletes anything else.

    Raises:
        DemoHomeError: ``home`` is a file, or a folder that is not an arena home; or the
            options make no league (checked before anything is emptied or written).
    """
    _demo_config(["check@0", "check@1"], series_per_pairing, seed)  # bad options: nothing made
    if home.is_symlink() or (home.exists() and not home.is_dir()):
        raise DemoHomeError(f"--home {home} is not a folder: give a new or empty folder")
    if home.exists() and any(home.iterdir()) and not (home / "arena.sqlite").is_file():
        raise DemoHomeError(
            f"--home {home} holds files and no arena.sqlite: the demo empties its home, so "
            "give a new or empty folder"
        )
    if (home / "arena.sqlite").is_file():
        _demo_home_only(home)
    if home.exists():
        shutil.rmtree(home)
    arena = Arena(home)
    store = arena.open_store()
    idents = [trio.run(submit, arena, store, folder, None).ident for folder in demo_bots()]
    config = _demo_config(idents, series_per_pairing, seed)
    create_league(store, config)
    return arena, store, config


def _demo_config(idents: list[str], series_per_pairing: int, seed: int) -> LeagueConfig:
    """The demo league's definition.

    Raises:
        DemoHomeError: ``--series`` or ``--seed`` is not one a league takes.
    """
    try:
        return LeagueConfig.from_dict(
            {
                "name": DEMO_NAME,
                "seed": seed,
                "public_deals": True,  # the same secret in every fresh home: reproducible
                "bots": idents,
                "series_per_pairing": series_per_pairing,
                "jobs": 2,
            }
        )
    except LeagueError as error:
        why = "; ".join(line.strip(" -") for line in str(error).splitlines()[1:]) or str(error)
        raise DemoHomeError(f"the demo league cannot be made: {why}") from None
