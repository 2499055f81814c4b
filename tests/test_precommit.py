"""The pre-commit hooks run what ``make check`` runs, in its order: the two cannot drift."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_check_commands(makefile: str) -> list[list[str]]:
    """The commands of the Makefile's ``check`` recipe, ``$(BIN)`` spelled out.

    >>> make_check_commands("check: $(STAMP)\\n\\t$(BIN)/ruff check .\\n\\nother:\\n\\tx\\n")
    [['.venv/bin/ruff', 'check', '.']]
    """
    recipe = re.search(r"^check:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.MULTILINE)
    assert recipe, "the Makefile has no check target"
    lines = recipe.group(1).splitlines()
    return [shlex.split(line.strip().replace("$(BIN)", ".venv/bin")) for line in lines]


def hook_commands(config: str) -> list[list[str]]:
    """The ``entry`` of every hook of the pre-commit configuration, in order.

    >>> hook_commands("      - id: a\\n        entry: .venv/bin/mypy\\n")
    [['.venv/bin/mypy']]
    """
    return [shlex.split(entry) for entry in re.findall(r"^\s+entry:\s*(.+)$", config, re.M)]


def test_the_hooks_run_what_make_check_runs() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    config = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    expected = make_check_commands(makefile)
    assert len(expected) >= 4  # ruff, ruff format, mypy, the fast tests
    assert hook_commands(config) == expected


def test_every_hook_is_local_and_sees_the_whole_tree() -> None:
    config = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    hooks = config.count("- id:")
    assert re.findall(r"^\s+- repo:\s*(\S+)", config, re.M) == ["local"]  # nothing downloaded
    assert config.count("language: system") == hooks
    assert config.count("pass_filenames: false") == hooks  # mypy and pytest check it all
