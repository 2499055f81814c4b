"""A policy made into a bot folder (``gin bot new NAME --from-policy module:callable``,
``tournaments.workbench.policy``): what is written and copied, each refusal in one line with
nothing written, and the folder checked and played in the sandbox."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocol.manifest import load_manifest
from referee.rules import Action, Observation, RandomPolicy, greedy_policy, play_series
from tournaments.cli.app import app
from tournaments.workbench.policy import (
    PolicyError,
    PolicyKind,
    find_policy,
    policy_bot_folder,
)

runner = CliRunner()
_numbers = itertools.count()


def a_policy(view: Observation, legal: list[Action]) -> Action:
    """A policy of this test module: part of the project's tests, which no bot can see."""
    return greedy_policy(view, legal)


@pytest.fixture
def code(tmp_path: Path) -> Iterator[Path]:
    """A folder for the author's code; whatever it imported is forgotten afterwards."""
    folder = tmp_path / "code"
    folder.mkdir()
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        del sys.modules[name]


def unique(stem: str) -> str:
    """A module name no other test has imported."""
    return f"{stem}_{next(_numbers)}_{id(_numbers) % 9973}"


def write(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


GREEDY = """\
from referee.rules import greedy_policy


def choose(view, legal):
    return greedy_policy(view, legal)
"""


def load_bot(folder: Path) -> type:
    """The bot class of a written folder's bot.py, imported as the sandbox would (the folder
    first on the path)."""
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(unique("bot"), folder / "bot.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    found = [value for name, value in vars(module).items() if name[:1].isupper()]
    bots = [value for value in found if isinstance(value, type) and hasattr(value, "as_policy")]
    return bots[-1]


def nothing_written(parent: Path, name: str) -> bool:
    return not (parent / name).exists() and not list(parent.glob(f".{name}*"))


# --- what is written -----------------------------------------------------------------------------


def test_a_single_file_policy_is_copied_beside_a_bot_that_calls_it(
    code: Path, tmp_path: Path
) -> None:
    module = unique("mypolicy")
    write(code, f"{module}.py", GREEDY)
    made = policy_bot_folder("mine", f"{module}:choose", tmp_path / "bots", search=code)
    folder = tmp_path / "bots" / "mine"
    assert made.folder == folder
    assert made.files == ("bot.toml", "bot.py", "test_bot.py", f"{module}.py")
    assert sorted(path.name for path in folder.iterdir()) == sorted(made.files)
    assert (folder / f"{module}.py").read_text() == GREEDY
    assert made.source.kind is PolicyKind.FUNCTION
    assert made.source.notes == ()
    manifest = load_manifest(folder)
    assert manifest.ident == "mine@0.1.0"
    bot = load_bot(folder)
    result = play_series(bot().as_policy(), RandomPolicy(4), seed=4)
    assert result == play_series(greedy_policy, RandomPolicy(4), seed=4)


def test_a_module_of_a_package_brings_the_whole_package(code: Path, tmp_path: Path) -> None:
    package = unique("mypkg")
    write(code, f"{package}/__init__.py", "")
    write(code, f"{package}/helpers.py", GREEDY)
    write(
        code,
        f"{package}/play.py",
        """\
        from . import helpers


        class Policy:
            def __call__(self, view, legal):
                return helpers.choose(view, legal)
        """,
    )
    write(code, f"{package}/data/weights.txt", "1 2 3\n")
    write(code, f"{package}/.secret", "not copied\n")
    write(code, f"{package}/__pycache__/junk.pyc", "")
    made = policy_bot_folder("pkgbot", f"{package}.play:Policy", tmp_path, search=code)
    assert made.source.kind is PolicyKind.FACTORY
    assert made.files[-1] == f"{package}/"
    copied = sorted(
        str(path.relative_to(made.folder / package))
        for path in (made.folder / package).rglob("*")
        if path.is_file()
    )
    assert copied == ["__init__.py", "data/weights.txt", "helpers.py", "play.py"]
    bot = load_bot(made.folder)
    assert play_series(bot().as_policy(), greedy_policy, seed=2).end.value == "complete"


def test_a_bot_class_plays_as_it_is(code: Path, tmp_path: Path) -> None:
    module = unique("mybot")
    write(
        code,
        f"{module}.py",
        """\
        from protocol.sdk import Bot
        from referee.rules import greedy_policy


        class Greedy(Bot):
            def decide(self, view, legal):
                return greedy_policy(view, legal)
        """,
    )
    made = policy_bot_folder("classy", f"{module}:Greedy", tmp_path, search=code)
    assert made.source.kind is PolicyKind.BOT
    assert load_bot(made.folder).__name__ == "Greedy"


def test_a_policy_the_sandbox_has_is_imported_not_copied(tmp_path: Path) -> None:
    made = policy_bot_folder("strongish", "sample_bots.strong.strategy:StrongPolicy", tmp_path)
    assert made.files == ("bot.toml", "bot.py", "test_bot.py")
    assert made.source.copy is None
    assert (
        "import sample_bots.strong.strategy as policy_module"
        in (made.folder / "bot.py").read_text()
    )


def test_other_packages_are_noted_not_refused(code: Path) -> None:
    module = unique("heavy")
    write(
        code,
        f"{module}.py",
        """\
        import json
        try:
            import surely_not_installed_here
        except ImportError:
            pass
        from referee.rules import greedy_policy as choose
        """,
    )
    found = find_policy(f"{module}:choose", code)
    assert len(found.notes) == 1
    assert "surely_not_installed_here" in found.notes[0]
    assert "json" not in found.notes[0]


def test_the_generated_test_passes(code: Path, tmp_path: Path) -> None:
    module = unique("tested")
    write(code, f"{module}.py", GREEDY)
    made = policy_bot_folder("tested", f"{module}:choose", tmp_path, search=code)
    sys.path.insert(0, str(made.folder))
    try:
        spec = importlib.util.spec_from_file_location(unique("t"), made.folder / "test_bot.py")
        assert spec is not None
        assert spec.loader is not None
        sys.modules.pop("bot", None)
        tests = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tests)
        tests.test_plays_a_whole_series_of_legal_actions()
    finally:
        sys.path.remove(str(made.folder))
        sys.modules.pop("bot", None)


# --- what is refused -----------------------------------------------------------------------------

REFUSALS = [
    ("no-colon", "", "give MODULE:NAME"),
    ("nowhere_to_be_found:choose", "", "cannot import nowhere_to_be_found: no module named"),
    ("{m}:choose", "raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
    ("{m}:choose", "def choose(view, legal)\n", "SyntaxError"),
    ("{m}:choose", "import sys\nsys.exit(3)\n", "SystemExit"),
    ("{m}:choose", "from nowhere_at_all import x\n", "no module named 'nowhere_at_all'"),
    ("{m}:chose", GREEDY, "has no attribute 'chose'"),
    ("{m}:choose", "choose = 42\n", "is a int, not a callable"),
    ("{m}:choose", "def choose(view):\n    return None\n", "callable as policy(view, legal)"),
    ("{m}:P", "class P:\n    def __init__(self, x): pass\n", "needs arguments"),
    ("{m}:P", "class P:\n    pass\n", "instances are not callable"),
    ("{m}:P", "class P:\n    def __call__(self): pass\n", "callable as policy(view, legal)"),
    ("{m}:choose", "import tournaments\n" + GREEDY, "imports tournaments, which no bot can see"),
    ("operator:add", "", "standard library or an installed package"),
    ("tests.test_workbench_policy:a_policy", "", "project's tests, which no bot can see"),
]


@pytest.mark.parametrize(("spec", "text", "said"), REFUSALS)
def test_each_refusal_is_one_line_and_writes_nothing(
    code: Path, tmp_path: Path, spec: str, text: str, said: str
) -> None:
    module = unique("bad")
    if text:
        write(code, f"{module}.py", text)
    with pytest.raises(PolicyError) as raised:
        policy_bot_folder("refused", spec.format(m=module), tmp_path, search=code)
    message = str(raised.value)
    assert said.lower() in message.lower()
    assert "\n" not in message
    assert nothing_written(tmp_path, "refused")


def test_a_module_beside_a_single_file_is_refused(code: Path, tmp_path: Path) -> None:
    helper, module = unique("helper"), unique("uses")
    write(code, f"{helper}.py", GREEDY)
    write(code, f"{module}.py", f"from {helper} import choose\n")
    with pytest.raises(PolicyError, match=f"imports {helper}, beside it but not copied"):
        policy_bot_folder("beside", f"{module}:choose", tmp_path, search=code)
    assert nothing_written(tmp_path, "beside")


def test_a_package_with_a_link_is_refused(code: Path, tmp_path: Path) -> None:
    package = unique("linked")
    write(code, f"{package}/__init__.py", GREEDY)
    (code / package / "elsewhere").symlink_to("/etc")
    with pytest.raises(PolicyError, match="is a symbolic link"):
        policy_bot_folder("linked", f"{package}:choose", tmp_path, search=code)
    assert nothing_written(tmp_path, "linked")


def test_a_namespace_package_is_refused(code: Path, tmp_path: Path) -> None:
    package = unique("spaced")
    write(code, f"{package}/inner.py", GREEDY)  # no __init__.py
    with pytest.raises(PolicyError, match="namespace package"):
        policy_bot_folder("spaced", f"{package}.inner:choose", tmp_path, search=code)
    assert nothing_written(tmp_path, "spaced")


def test_a_module_named_like_the_folders_own_files_is_refused(code: Path, tmp_path: Path) -> None:
    sys.modules.pop("bot", None)
    write(code, "bot.py", GREEDY)
    with pytest.raises(PolicyError, match=r"clash with the folder's bot\.py"):
        policy_bot_folder("clash", "bot:choose", tmp_path, search=code)
    assert nothing_written(tmp_path, "clash")


def test_an_existing_folder_is_refused_before_any_import(code: Path, tmp_path: Path) -> None:
    module = unique("never")
    write(code, f"{module}.py", "raise RuntimeError('imported')\n")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep\n")
    with pytest.raises(PolicyError, match="already exists"):
        policy_bot_folder("taken", f"{module}:choose", tmp_path, search=code)
    assert module not in sys.modules
    assert [path.name for path in (tmp_path / "taken").iterdir()] == ["mine.txt"]


def test_a_bad_name_is_refused(code: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="bad bot name"):
        policy_bot_folder("Bad Name", "sample_bots.strong.strategy:StrongPolicy", tmp_path)
    assert list(tmp_path.iterdir()) == [code]


def test_a_failed_write_leaves_nothing(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = unique("halfway")
    write(code, f"{module}.py", GREEDY)

    def broken(source: Path, target: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("shutil.copyfile", broken)
    with pytest.raises(OSError, match="No space"):
        policy_bot_folder("halfway", f"{module}:choose", tmp_path, search=code)
    assert nothing_written(tmp_path, "halfway")


# --- the command ---------------------------------------------------------------------------------


def test_gin_bot_new_from_policy(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = unique("cli")
    write(code, f"{module}.py", GREEDY)
    monkeypatch.chdir(code)
    made = runner.invoke(
        app, ["bot", "new", "clibot", "--from-policy", f"{module}:choose", "--dir", "bots"]
    )
    assert made.exit_code == 0, made.output
    assert f"with bot.toml, bot.py, test_bot.py, {module}.py" in made.output
    assert "next: gin bot check bots/clibot" in made.output
    again = runner.invoke(
        app, ["bot", "new", "clibot", "--from-policy", f"{module}:choose", "--dir", "bots"]
    )
    assert again.exit_code == 2
    assert again.output.strip().splitlines() == [
        "error: bots/clibot already exists; choose another name or folder"
    ]
    missing = runner.invoke(app, ["bot", "new", "other", "--from-policy", f"{module}:nope"])
    assert missing.exit_code == 2
    assert len(missing.output.strip().splitlines()) == 1
    assert not (code / "other").exists()


# --- in the sandbox ------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_folder_passes_gin_bot_check_and_plays_a_match(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = unique("arena")
    write(code, f"{package}/__init__.py", "")
    write(code, f"{package}/helpers.py", GREEDY)
    write(code, f"{package}/play.py", "from .helpers import choose\n")
    policy_bot_folder("sandboxed", f"{package}.play:choose", tmp_path, search=code)
    monkeypatch.setenv("GIN_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    checked = runner.invoke(app, ["bot", "check", "sandboxed"])
    assert checked.exit_code == 0, checked.output
    assert "plays only legal actions" in checked.output
    played = runner.invoke(app, ["match", "sandboxed", "strong", "--pairs", "1", "--json"])
    assert played.exit_code == 0, played.output
    assert '"series": 2' in played.output
