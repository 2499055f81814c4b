"""Collection settings: modules of the optional dask extra are left out when it is missing (their
tests in tests/test_cluster.py then skip, saying so)."""

from __future__ import annotations

import importlib.util

collect_ignore = (
    ["tournaments/cluster.py", "tests/cluster_scenario.py"]
    if importlib.util.find_spec("distributed") is None
    else []
)
