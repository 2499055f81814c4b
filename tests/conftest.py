"""The bot sandbox the hostile tests share: one per test module, warmed up first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.sandbox import Sandbox, SandboxLimits
from tests.test_hostile import warm_up


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """A sandbox with a 256 MiB and 48-process cap per bot (a module may define its own)."""
    box = Sandbox(SandboxLimits(memory_mb=256, pids=48), root_dir=tmp_path_factory.mktemp("jails"))
    warm_up(box)
    yield box
    box.close()
