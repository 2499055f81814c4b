"""The arrows of the design: which layer of the project may import which (docs/architecture.md).

Each module belongs to one layer; a layer imports only the layers listed for it, so data flows one
way: rules, then the protocol, the sandbox and the referee, then replays, then leagues, then the
command line, which nothing imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("referee", "protocol", "tournaments", "sample_bots")

_REFEREE: Final = frozenset(
    {"protocol", "referee", "referee.replay", "referee.rules", "referee.sandbox"}
)
"""Everything below the league machinery: the rules, the protocol, the referee, its sandbox and
replays."""
_BELOW_LEAGUES: Final = _REFEREE | {
    "tournaments.formats",
    "tournaments.store",
    "tournaments.stats",
    "tournaments.executors",
    "tournaments.views",
    "tournaments.events",
}
"""The league machinery's own layers under its runner: records, storage, statistics, execution,
the words and pages of a game, and the pairing of an event's rounds."""

ALLOWED: dict[str, frozenset[str]] = {
    "referee.rules": frozenset(),
    "protocol": frozenset({"referee.rules"}),
    "referee.sandbox": frozenset({"protocol", "referee.rules"}),
    # The referee knows a bot's jail by the ``Jail`` protocol alone (``referee.remote``): the
    # sandbox that makes jails is handed in by the league's worker, never imported.
    "referee": frozenset({"protocol", "referee.rules"}),
    "referee.replay": frozenset({"protocol", "referee", "referee.rules"}),
    "sample_bots": frozenset({"protocol", "referee.rules"}),
    # The records the runner, its executors and workers hand each other, and a match's hand
    # statistics: read by every layer above, they know nothing of storage or statistics.
    "tournaments.formats": _REFEREE,
    "tournaments.store": _REFEREE | {"tournaments.formats"},
    # The statistics read the store's rows (``STATS_READ_OF_THE_STORE``), never its database.
    "tournaments.stats": _REFEREE | {"tournaments.formats", "tournaments.store"},
    # Executors play a job and give back its outcome: they know no league, store or runner.
    "tournaments.executors": _REFEREE | {"tournaments.formats"},
    "tournaments.views": _REFEREE | {"tournaments.stats"},
    # An event's pairings are pure functions of its seeds and results: they import nothing.
    "tournaments.events": frozenset(),
    # The league machinery: league files, the registry, the runner, gin match, verify, restat.
    "tournaments": _BELOW_LEAGUES,
    "tournaments.workbench": _BELOW_LEAGUES | {"tournaments"},
    "tournaments.arena": _BELOW_LEAGUES | {"tournaments"},
    "tournaments.cli": _BELOW_LEAGUES
    | {"tournaments", "tournaments.arena", "tournaments.workbench"},
}
"""Each layer, and the layers it may import (besides itself)."""


def layer(module: str) -> str:
    """The layer of a dotted module name (its package, or its subpackage where that is a layer).

    >>> layer("referee.rules.hand"), layer("referee.match"), layer("tournaments.executors.local")
    ('referee.rules', 'referee', 'tournaments.executors')
    """
    parts = module.split(".")
    two = ".".join(parts[:2])
    return two if two in ALLOWED else parts[0]


def project_modules() -> Iterator[tuple[str, Path]]:
    """Every module of the project's packages (generated code aside), by dotted name."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "_pb2" in path.name or "node_modules" in path.parts:
                continue
            yield ".".join(path.relative_to(ROOT).with_suffix("").parts), path


def imports_of(path: Path) -> Iterator[str]:
    """The project modules a file imports (absolute imports; relative ones stay in a package)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        yield from (name for name in names if name.split(".")[0] in PACKAGES)


def violations(edges: list[tuple[str, str]]) -> list[str]:
    """The (importer, imported) module pairs that go against the arrows."""
    wrong = []
    for importer, imported in edges:
        source, target = layer(importer), layer(imported)
        if source != target and target not in ALLOWED[source]:
            wrong.append(f"{importer} ({source}) imports {imported} ({target})")
    return wrong


def test_every_import_follows_the_arrows() -> None:
    edges = [(name, imported) for name, path in project_modules() for imported in imports_of(path)]
    assert len(edges) > 100  # the walk found the project
    assert violations(edges) == []


def test_every_module_has_a_layer() -> None:
    layers = {layer(name) for name, _ in project_modules()}
    assert layers == set(ALLOWED)


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("referee.rules.hand", "referee.match"),  # the rules stay pure
        ("referee.match", "referee.replay"),  # the referee knows nothing of replays
        ("referee.match", "tournaments.store"),  # ... nor of leagues
        ("referee.remote", "referee.sandbox._jail"),  # ... nor of the sandbox's jails
        ("tournaments.runner", "tournaments.cli.render"),  # nothing imports the command line
        ("protocol.sdk", "referee.match"),  # bots see the protocol and the rules only
        ("sample_bots.strong.strategy", "referee.local"),
        ("tournaments.executors.local", "tournaments.runner"),  # executors know no league
        ("tournaments.executors.worker", "tournaments.store"),  # ... nor the store
        ("tournaments.store.results", "tournaments.stats.pairs"),  # storage knows no statistics
        ("tournaments.formats.records", "tournaments.store.rows"),  # records sit below the store
        ("tournaments.stats.sprt", "tournaments.runner"),  # statistics know no runner
        ("tournaments.store.leagues", "tournaments.arena.store"),  # the arena's tables are its own
    ],
)
def test_a_back_edge_is_caught(importer: str, imported: str) -> None:
    assert violations([(importer, imported)]) != []


STATS_READ_OF_THE_STORE: Final = frozenset({"tournaments.store.rows"})
"""What the statistics may import of the store: its row types, never its database or tables."""


def test_the_statistics_read_rows_not_the_database() -> None:
    store_imports = {
        imported
        for name, path in project_modules()
        if layer(name) == "tournaments.stats"
        for imported in imports_of(path)
        if layer(imported) == "tournaments.store"
    }
    assert store_imports <= STATS_READ_OF_THE_STORE
    assert store_imports  # the statistics do read rows: the walk saw them


TRAINING_LIBRARIES: Final = frozenset({"pettingzoo", "gymnasium"})
"""The workbench extra's libraries: only the workbench may import them, never the referee."""


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of every absolute import in a file, wherever it sits (lazy ones too)."""
    tops = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops


def test_only_the_workbench_imports_the_training_libraries() -> None:
    importers = {
        name for name, path in project_modules() if third_party_imports(path) & TRAINING_LIBRARIES
    }
    assert importers  # the walk saw the workbench's environment
    assert {layer(name) for name in importers} == {"tournaments.workbench"}
