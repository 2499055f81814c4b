"""The rules engine is pure: it imports only the standard library and itself."""

import ast
import sys
from pathlib import Path

import referee.rules

RULES_DIR = Path(referee.rules.__file__).parent
# Modules that do I/O, keep time or reach processes and the network.
FORBIDDEN = {
    "os",
    "io",
    "time",
    "datetime",
    "socket",
    "subprocess",
    "threading",
    "asyncio",
    "pathlib",
    "shutil",
    "tempfile",
    "logging",
    "signal",
    "select",
    "sys",
    "urllib",
    "http",
    "sqlite3",
    "multiprocessing",
    "builtins",
}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_rules_modules_import_only_pure_standard_library() -> None:
    files = sorted(RULES_DIR.glob("*.py"))
    assert len(files) >= 8
    for path in files:
        roots = imported_roots(path) - {"referee", "__future__"}
        outside = {root for root in roots if root not in sys.stdlib_module_names}
        assert not outside, f"{path.name} imports non-stdlib {outside}"
        assert not roots & FORBIDDEN, f"{path.name} imports I/O or clock {roots & FORBIDDEN}"


def test_rules_never_call_open_print_or_input() -> None:
    for path in RULES_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"open", "print", "input", "exec", "eval"}, path.name
