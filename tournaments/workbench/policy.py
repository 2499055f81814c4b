"""A policy made into a bot folder: ``gin bot new NAME --from-policy module:callable``.

The policy is what a bot's ``decide`` gets and returns through the SDK: a callable
``(view: Observation, legal: Sequence[Action]) -> Action``, the same that plays in
:func:`referee.rules.play_series` and in the training environment. It may be

* a function, or any callable object: every decision is ``policy(view, legal)``;
* a class whose instances are such callables and which takes no arguments (as
  ``sample_bots.strong.strategy:StrongPolicy``): a fresh instance plays each series;
* a :class:`protocol.sdk.Bot` subclass that takes no arguments: it is the bot.

A sandboxed bot sees only its own folder, the standard library, and the project's ``protocol``,
``referee`` and ``sample_bots`` packages (and the referee's installed packages). So the policy's
code is copied into the folder: a module that is a single file (``mymod:policy``, ``mymod.py``)
is copied as that file; a module inside a package, or a package (``mypkg.play:policy``), as the
whole top-level package folder (``mypkg/``: every file but caches and hidden ones). A module of
``protocol``, ``referee`` or ``sample_bots`` is imported from the sandbox's own copy and not
copied. Refused, each with one line and nothing written: a spec that is not ``module:name``; a
module that does not import, or a name it lacks; something not callable, or not callable with
``(view, legal)``; a class that needs arguments; a module of the standard library or an installed
package, or of another part of this project (``tournaments``, which no bot sees); a namespace
package, or a module that is not Python source; a package with a symbolic link in it, or too big
for a bot folder; a single-file module that imports a module beside it (which would not be
copied: make them a package); a module named ``bot`` or ``test_bot`` (the folder's own files);
code that imports ``tournaments``; a folder that exists already. Imports of other packages than
the standard library and the project's are not refused, but noted: a sandbox has only the
referee's Python environment, an arena's may have fewer, and ``gin bot check`` shows whether it
starts.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import importlib
import inspect
import re
import shutil
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Final

from protocol.manifest import MAX_FILES, MAX_FOLDER_BYTES, NAME_PATTERN, load_manifest
from protocol.sdk import Bot
from protocol.template import class_name

__all__ = [
    "SANDBOX_PACKAGES",
    "PolicyError",
    "PolicyFolder",
    "PolicyKind",
    "PolicySource",
    "find_policy",
    "policy_bot_folder",
]

SANDBOX_PACKAGES: Final = ("protocol", "referee", "sample_bots")
"""The project's packages a sandboxed bot can import (the sandbox mounts them read-only)."""
OWN_FILES: Final = frozenset({"bot", "test_bot"})
SPEC: Final = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
SKIPPED: Final = frozenset({"__pycache__"})


class PolicyError(ValueError):
    """The policy cannot be made into a bot folder; the message says why, in one line."""


class PolicyKind(enum.Enum):
    """What the named object is, and so how the bot plays it."""

    FUNCTION = "function"
    """A callable ``(view, legal) -> action``, called for every decision."""
    FACTORY = "factory"
    """A class of such callables, made afresh (no arguments) for each series."""
    BOT = "bot"
    """A :class:`protocol.sdk.Bot` subclass: the bot itself."""


@dataclass(frozen=True, slots=True)
class PolicySource:
    """A policy found: where it is, what it is, and what of it goes into the folder."""

    module: str
    attribute: str
    kind: PolicyKind
    copy: Path | None
    """The file or package folder copied into the bot folder (``None``: the sandbox has it)."""
    notes: tuple[str, ...] = ()
    """Imports of packages that a sandbox may lack."""

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.attribute}"


@dataclass(frozen=True, slots=True)
class PolicyFolder:
    """A bot folder written from a policy."""

    folder: Path
    source: PolicySource
    files: tuple[str, ...]
    """What was written at the folder's top, in order."""


# --- finding the policy ----------------------------------------------------------------------


@contextlib.contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    """``folder`` first on ``sys.path`` while the policy is imported (as ``python`` run there)."""
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def parse_spec(spec: str) -> tuple[str, str]:
    """``module:name`` -> ``(module, name)``.

    >>> parse_spec("mybots.play:Policy.choose")
    ('mybots.play', 'Policy.choose')

    Raises:
        PolicyError: not of that shape.
    """
    found = SPEC.fullmatch(spec)
    if found is None:
        raise PolicyError(
            f"--from-policy {spec!r}: give MODULE:NAME, e.g. mypolicy:choose or mypkg.play:Policy"
        )
    return found.group(1), found.group(2)


def _import(module: str) -> object:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and module.startswith(error.name):
            raise PolicyError(f"cannot import {module}: no module named {error.name!r}") from None
        raise PolicyError(f"importing {module} failed: {_said(error)}") from None
    except (Exception, SystemExit) as error:
        raise PolicyError(f"importing {module} failed: {_said(error)}") from None


def _said(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _attribute(found: object, module: str, path: str) -> object:
    for part in path.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise PolicyError(f"{module} has no attribute {path!r}") from None
    return found


def _binds(function: object, arguments: int) -> bool:
    """Whether ``function`` can be called with ``arguments`` positional arguments (True when
    its signature cannot be read)."""
    try:
        inspect.signature(function).bind(*([None] * arguments))  # type: ignore[arg-type]
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _class_calls(cls: type) -> bool:
    """Whether instances of ``cls`` are callable: a class of its own defines ``__call__``."""
    return any("__call__" in vars(klass) for klass in cls.__mro__[:-1])


def _kind(found: object, spec: str) -> PolicyKind:
    if isinstance(found, type):
        if not _binds(found, 0):
            raise PolicyError(f"{spec} is a class that needs arguments: it must take none")
        if issubclass(found, Bot):
            return PolicyKind.BOT
        if not _class_calls(found):
            raise PolicyError(f"{spec} is a class whose instances are not callable")
        if not _binds(found.__call__, 3):  # self, view, legal
            raise PolicyError(f"{spec}: its instances must be callable as policy(view, legal)")
        return PolicyKind.FACTORY
    if not callable(found):
        raise PolicyError(f"{spec} is a {type(found).__name__}, not a callable")
    if not _binds(found, 2):
        raise PolicyError(f"{spec} must be callable as policy(view, legal)")
    return PolicyKind.FUNCTION


def _installed_roots() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    return tuple(Path(paths[name]).resolve() for name in names if name in paths)


def _within(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _source_of(module: str) -> Path | None:
    """What to copy for ``module``: its file, or its top-level package's folder; ``None`` when
    the sandbox has it.

    Raises:
        PolicyError: a module that cannot or must not be copied.
    """
    top = module.split(".", maxsplit=1)[0]
    if top in SANDBOX_PACKAGES:
        return None
    if top in OWN_FILES:
        raise PolicyError(f"a module named {top!r} would clash with the folder's {top}.py")
    loaded = sys.modules[top]
    file = getattr(loaded, "__file__", None)
    if file is None:
        raise PolicyError(f"{top} is a namespace package or built in: no source to copy")
    path = Path(file).resolve()
    if top in sys.stdlib_module_names or _within(path, _installed_roots()):
        raise PolicyError(
            f"{top} is the standard library or an installed package, not code of yours to copy"
        )
    if top in ("tournaments", "benchmarks", "tests"):
        raise PolicyError(f"{module} is part of this project's {top}, which no bot can see")
    if path.suffix != ".py":
        raise PolicyError(f"{module} is {path.name}, not Python source: only .py files are copied")
    if path.name == "__init__.py":
        return path.parent
    if module != top:
        raise PolicyError(f"{module} is a submodule of {top}, which is not a package")
    return path


def _files(source: Path) -> list[Path]:
    """The files of a copied package, checked: no symbolic link, within a bot folder's limits.

    Raises:
        PolicyError: a link, or too many or too big files.
    """
    if source.is_file():
        return [source]
    found: list[Path] = []
    total = 0
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in SKIPPED or part.startswith(".") for part in relative.parts):
            continue
        if path.is_symlink():
            raise PolicyError(f"{source.name}/{relative} is a symbolic link: not copied")
        if path.is_file():
            found.append(path)
            total += path.stat().st_size
        if len(found) > MAX_FILES or total > MAX_FOLDER_BYTES:
            raise PolicyError(
                f"{source.name}/ is too big for a bot folder "
                f"(at most {MAX_FILES} files, {MAX_FOLDER_BYTES // (1024 * 1024)} MiB)"
            )
    return found


def _imported(path: Path) -> set[str]:
    """The top-level names a Python file imports (absolute imports only)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _check_imports(source: Path | None, top: str) -> tuple[str, ...]:
    """Refuse imports no sandbox can satisfy; note those a sandbox may lack.

    Raises:
        PolicyError: an import of ``tournaments``, or of a module beside a single-file policy.
    """
    if source is None:
        return ()
    others: set[str] = set()
    for path in _files(source):
        if path.suffix != ".py":
            continue
        for name in _imported(path) - {top, "__future__"}:
            if name == "tournaments":
                raise PolicyError(
                    f"{path.name} imports tournaments, which no bot can see: import the rules "
                    "from referee.rules and the SDK from protocol"
                )
            if source.is_file() and _beside(source, name):
                raise PolicyError(
                    f"{source.name} imports {name}, beside it but not copied: put both in a "
                    "package and name the policy as PACKAGE.MODULE:NAME"
                )
            if name not in sys.stdlib_module_names and name not in SANDBOX_PACKAGES:
                others.add(name)
    if not others:
        return ()
    listed = ", ".join(sorted(others))
    return (
        f"the policy imports {listed}: not the standard library; a sandbox has the referee's "
        "installed packages, an arena's may have fewer (gin bot check shows whether it starts)",
    )


def _beside(source: Path, name: str) -> bool:
    folder = source.parent
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def find_policy(spec: str, search: Path | None = None) -> PolicySource:
    """Import the policy ``module:name`` (with ``search``, default the current folder, first on
    the import path) and say what it is and what of it would be copied.

    Raises:
        PolicyError: any of the refusals listed in this module's docstring.
    """
    module, attribute = parse_spec(spec)
    with _importable_from((search or Path.cwd()).resolve()):
        loaded = _import(module)
        kind = _kind(_attribute(loaded, module, attribute), spec)
        source = _source_of(module)
    notes = _check_imports(source, module.split(".")[0])
    return PolicySource(module, attribute, kind, source, notes)


# --- writing the folder ----------------------------------------------------------------------

MANIFEST: Final = Template("""\
name = "$name"
version = "0.1.0"
command = ["python", "bot.py"]
author = ""
description = "The policy $spec as a bot."
""")

HEAD: Final = Template('''\
"""$name: a bot that plays the policy $spec
(written by gin bot new --from-policy).

The referee starts this file with GIN_REFEREE and GIN_TOKEN set; Bot.run() does the talking.
$how
$where
"""

from __future__ import annotations

import sys
$imports

''')

IMPORTS: Final = {
    PolicyKind.FUNCTION: """from collections.abc import Sequence

import $module as policy_module
from protocol.sdk import Bot
from referee.rules import Action, Observation
""",
    PolicyKind.BOT: """
import $module as policy_module
""",
}
IMPORTS[PolicyKind.FACTORY] = IMPORTS[PolicyKind.FUNCTION]

BODIES: Final = {
    PolicyKind.FUNCTION: Template('''\
POLICY = policy_module.$attribute


class $cls(Bot):
    """Every decision is the policy's."""

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return POLICY(view, legal)
'''),
    PolicyKind.FACTORY: Template('''\
class $cls(Bot):
    """Every decision is the policy's; a fresh policy for each series (Bot.next_series)."""

    def __init__(self) -> None:
        self.policy = policy_module.$attribute()

    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return self.policy(view, legal)
'''),
    PolicyKind.BOT: Template("""\
$cls = policy_module.$attribute
"""),
}

HOW: Final = {
    PolicyKind.FUNCTION: "decide() calls the policy with what the seat sees and the legal actions.",
    PolicyKind.FACTORY: "Each series is played by a fresh instance of the policy's class.",
    PolicyKind.BOT: "The policy is a Bot of the SDK: it plays as it is.",
}

TAIL: Final = Template("""

if __name__ == "__main__":
    sys.exit($cls().run())
""")

TEST: Final = Template('''\
"""Play the policy's bot in-process, as the referee would (run: pytest)."""

from referee.rules import RandomPolicy, greedy_policy, play_series

from bot import $cls


def test_plays_a_whole_series_of_legal_actions() -> None:
    for seed in range(2):
        result = play_series($cls().as_policy(), RandomPolicy(seed), seed=seed)
        assert result.end.value == "complete"
    assert play_series(greedy_policy, $cls().as_policy(), seed=2).end.value == "complete"
''')


def bot_program(name: str, source: PolicySource) -> str:
    """The folder's ``bot.py`` for ``source``."""
    fields = {
        "name": name,
        "spec": source.spec,
        "module": source.module,
        "attribute": source.attribute,
        "cls": class_name(name),
        "how": HOW[source.kind],
        "where": _where(source),
    }
    fields["imports"] = Template(IMPORTS[source.kind]).substitute(fields)
    return "".join(template.substitute(fields) for template in (HEAD, BODIES[source.kind], TAIL))


def _where(source: PolicySource) -> str:
    """The docstring's line on where the policy's code is."""
    if source.copy is None:
        return f"Its code is the project's {source.module}, which every sandbox has."
    copied = source.copy.name + ("/" if source.copy.is_dir() else "")
    return f"Its code is the copy in {copied}: edit it there; bot.py needs no change."


def _copy(source: Path, into: Path) -> str:
    """Copy the policy's file or package into ``into``; the name it has there."""
    if source.is_file():
        shutil.copyfile(source, into / source.name)
        return source.name
    for path in _files(source):
        target = into / source.name / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return f"{source.name}/"


def _target(name: str, parent: Path) -> Path:
    if not NAME_PATTERN.fullmatch(name):
        raise PolicyError(
            f"bad bot name {name!r}: lowercase letters, digits, '-' and '_', "
            "at most 40, e.g. 'my-bot'"
        )
    folder = parent / name
    if folder.exists() or folder.is_symlink():
        raise PolicyError(f"{folder} already exists; choose another name or folder")
    return folder


def policy_bot_folder(
    name: str, spec: str, parent: Path, search: Path | None = None
) -> PolicyFolder:
    """Write ``parent/name``: ``bot.toml``, a ``bot.py`` that plays the policy ``spec``
    (``module:name``, found from ``search``, default the current folder), a ``test_bot.py``, and
    the policy's code (see this module's docstring). Nothing is left behind if it fails.

    Raises:
        PolicyError: a bad name, an existing folder, or a policy that cannot be made a bot.
        OSError: the folder cannot be written.
    """
    folder = _target(name, parent)
    source = find_policy(spec, search)
    parent.mkdir(parents=True, exist_ok=True)
    partial = parent / f".{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        fields = {"name": name, "spec": spec, "cls": class_name(name)}
        (partial / "bot.toml").write_text(MANIFEST.substitute(fields))
        (partial / "bot.py").write_text(bot_program(name, source))
        (partial / "test_bot.py").write_text(TEST.substitute(fields))
        files = ["bot.toml", "bot.py", "test_bot.py"]
        if source.copy is not None:
            files.append(_copy(source.copy, partial))
        load_manifest(partial)
        partial.rename(folder)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return PolicyFolder(folder, source, tuple(files))
