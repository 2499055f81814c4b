"""The download of a finished arena event: its results and logs as a home of their own, which
``gin league verify`` checks offline.

The archive (``NAME.tar.gz``) holds one folder, ``NAME/``: an ``arena.sqlite`` with the event's
league alone (its definition and secret, its rounds, its matches and results, and its bots'
registry rows: names, versions, hashes), and ``logs/NAME/``, each match's log with the fault
evidence emptied (a seat's stderr is its author's alone, as on the pages). Nothing else of the
arena is in it: no other league, no author, token or session, not the ladder's secret. The
event's own secret is in it: the event is over, and its logs reveal its deals already.

``tar xzf NAME.tar.gz && GIN_HOME=NAME gin league verify NAME``.
"""

from __future__ import annotations

import dataclasses
import os
import tarfile
import tempfile
from pathlib import Path

from tournaments.arena.privacy import redacted_log
from tournaments.league import stored_league
from tournaments.registry import Arena, parse_spec
from tournaments.store import Store

__all__ = ["bundle_path", "write_bundle"]


def bundle_path(arena: Arena, name: str) -> Path:
    """Where a finished event's download is kept."""
    return arena.home / "events" / f"{name}.tar.gz"


def write_bundle(store: Store, arena: Arena, name: str) -> Path:
    """Write the download of event ``name`` (its league in ``store``); returns its path. Written
    aside and renamed into place, so a reader never sees half of one.

    Raises:
        ValueError: no such league.
    """
    league = stored_league(store, name)
    if league is None:
        raise ValueError(f"no league {name!r}")
    target = bundle_path(arena, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as folder:
        home = Arena(Path(folder) / name)
        copy = Store(home.store_path)
        try:
            for ident in league.resolved:
                row = store.bot(*parse_spec(ident), removed=True)
                if row is not None:
                    copy.add_bot(dataclasses.replace(row, path=home.home / "bots" / ident))
            copy.save_league(name, league.to_json(), store.matches(name), store.league_secret(name))
            for number, pairing in enumerate(store.event_rounds(name)):
                copy.save_round(name, number, pairing, [])
            logs = home.logs_dir(name)
            logs.mkdir(parents=True, exist_ok=True)
            for result in store.results(name):
                log = logs / Path(result.log_path).name
                log.write_text(redacted_log(Path(result.log_path), ()), encoding="utf-8")
                copy.record_result(dataclasses.replace(result, log_path=str(log)))
        finally:
            copy.close()
        for leftover in home.home.glob("arena.sqlite-*"):  # WAL files, empty once closed
            leftover.unlink()
        partial = target.with_name(target.name + ".partial")
        with tarfile.open(partial, "w:gz") as archive:
            archive.add(home.home, arcname=name)
        os.replace(partial, target)
    return target
