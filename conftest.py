"""Collection settings: modules of the optional dask extra are left out when it is missing (their
tests in tests/test_cluster.py then skip, saying so)."""

from __future__ import annotations

import importlib.util
import os

import pytest

collect_ignore = (
    [
        "tournaments/executors/cluster.py",
        "tournaments/executors/cluster_task.py",
        "tournaments/executors/local_cluster.py",
        "tests/cluster_scenario.py",
    ]
    if importlib.util.find_spec("distributed") is None
    else []
)


@pytest.fixture(autouse=True, scope="session")
def _private_gin_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands that use the arena home (``gin play --seed`` keys its seed with the store's
    secret) write to a temporary one, not ``.gin`` in the checkout; a test may set its own."""
    os.environ.setdefault("GIN_HOME", str(tmp_path_factory.mktemp("gin-home")))
