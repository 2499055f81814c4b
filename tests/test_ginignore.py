""".ginignore at scale: the compiled rule means what the old glob-by-glob one meant, the walks
that skip left-out folders keep what the old filter kept, a file past a bound is refused by name,
and a file of 10^5 lines is checked in seconds (the time is printed, never asserted)."""

from __future__ import annotations

import fnmatch
import os
import shutil
import string
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.manifest import (
    ALWAYS_IGNORED,
    IGNORE_FILE,
    MAX_IGNORE_BYTES,
    MAX_IGNORE_GLOBS,
    MAX_IGNORE_LINES,
    MIB,
    IgnoreRule,
    ManifestError,
    folder_entries,
    ignore_rule,
    load_manifest,
)
from referee.local import bot_files, code_hash
from referee.sandbox._jail import copy_code

GOOD = 'name = "my-bot"\nversion = "1.0.0"\ncommand = ["python", "bot.py"]\n'


def old_rule(text: str) -> Callable[[PurePath], bool]:
    """The matcher as it was (globs times parts times passes, with ``fnmatch``): the reference."""
    globs: list[str] = list(ALWAYS_IGNORED)
    for line in text.splitlines():
        glob = line.strip().rstrip("/")
        if glob and not glob.startswith("#"):
            globs.append(glob)

    def ignored(relative: PurePath) -> bool:
        parts = relative.parts
        for glob in globs:
            if "/" in glob:
                if any(
                    fnmatch.fnmatchcase("/".join(parts[:n]), glob.lstrip("/"))
                    for n in range(1, len(parts) + 1)
                ):
                    return True
            elif any(fnmatch.fnmatchcase(part, glob) for part in parts):
                return True
        return False

    return ignored


def old_bot_files(folder: Path) -> list[Path]:
    """``referee.local.bot_files`` as it was: every path of ``rglob``, filtered."""
    ignored = old_rule(_text(folder))
    return [path for path in sorted(folder.rglob("*")) if not ignored(path.relative_to(folder))]


def _text(folder: Path) -> str:
    path = folder / IGNORE_FILE
    return path.read_text(encoding="utf-8") if path.exists() else ""


# Few letters, so that random globs and names meet; every character fnmatch treats specially.
NAME_CHARS = "ab.x" + "*?[]!-^\\"
GLOB_CHARS = NAME_CHARS + "/ #"
names = st.text(alphabet=NAME_CHARS.replace("/", ""), min_size=1, max_size=6).filter(
    lambda name: name not in (".", "..")
)
paths = st.lists(names, min_size=1, max_size=4).map(lambda parts: PurePath(*parts))
globs = st.one_of(
    st.text(alphabet=GLOB_CHARS, min_size=0, max_size=8),
    st.sampled_from(["*", "**", "/", "a*", "*a", "*a*", "a/*", "/a", "a/", "*.x", "a*b", "[a-b]*"]),
    names,
)
ignore_texts = st.lists(globs, max_size=8).map("\n".join)


@settings(max_examples=600, deadline=None)
@given(ignore_texts, st.lists(paths, min_size=1, max_size=8))
def test_the_compiled_rule_agrees_with_the_old_one(text: str, checked: list[PurePath]) -> None:
    old, new = old_rule(text), IgnoreRule.from_text(text)
    for path in checked:
        assert new(path) == old(path), (text, path)
        above = [PurePath(*path.parts[:n]) for n in range(1, len(path.parts))]
        if not any(old(folder) for folder in above):  # what a walk that skips folders asks
            assert new.leaves_out(path) == old(path), (text, path)


FILE_NAMES = st.text(alphabet=string.ascii_lowercase[:3] + ".x_", min_size=1, max_size=4).filter(
    lambda name: name not in (".", "..")
)
trees = st.lists(st.lists(FILE_NAMES, min_size=1, max_size=3), min_size=1, max_size=12)
tree_globs = st.lists(
    st.one_of(st.sampled_from(["*.x", "a*", "*b", "b/", "a/*", "/c", "*_*", "?", "[ab]x"]), names),
    max_size=5,
).map("\n".join)


def make_tree(folder: Path, tree: list[list[str]], text: str) -> None:
    for parts in tree:
        *above, name = parts
        parent = folder.joinpath(*above)
        if any(p.exists() and not p.is_dir() for p in [parent, *parent.parents]):
            continue
        parent.mkdir(parents=True, exist_ok=True)
        if not (parent / name).exists():
            (parent / name).write_text(name)
    (folder / "link").symlink_to("a")  # a symlink is listed, never entered
    (folder / IGNORE_FILE).write_text(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees, tree_globs)
def test_every_walk_keeps_what_the_old_filter_kept(tree: list[list[str]], text: str) -> None:
    with tempfile.TemporaryDirectory() as top:
        folder = Path(top) / "bot"
        folder.mkdir()
        make_tree(folder, tree, text)
        expected = old_bot_files(folder)
        assert list(bot_files(folder)) == expected
        assert [entry.path for entry in folder_entries(folder)] == expected
        copy = Path(top) / "copy"
        copy_code(folder, copy, None)
        copied = sorted(copy.rglob("*"))
        assert [path.relative_to(copy) for path in copied] == [
            path.relative_to(folder) for path in expected
        ]


def test_a_relative_folder_is_walked_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bot" / "src").mkdir(parents=True)
    (tmp_path / "bot" / "src" / "x.py").write_text("")
    (tmp_path / "bot" / "notes.log").write_text("")
    (tmp_path / "bot" / IGNORE_FILE).write_text("*.log\n")
    monkeypatch.chdir(tmp_path)
    assert list(bot_files(Path("bot"))) == [
        Path(p) for p in ("bot/.ginignore", "bot/src", "bot/src/x.py")
    ]


# --- the bounds --------------------------------------------------------------------------------


def bot_with_ignores(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "bot.toml").write_text(GOOD)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "big.log").write_text("")
    (folder / IGNORE_FILE).write_text(text)
    return folder


def refusal(folder: Path) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    return caught.value.problems


def test_a_ginignore_over_the_byte_bound_is_refused_by_name(tmp_path: Path) -> None:
    lines = MAX_IGNORE_BYTES // 64 + 1
    folder = bot_with_ignores(tmp_path / "b", ("x" * 63 + "\n") * lines)
    assert refusal(folder) == [f"{IGNORE_FILE} is over {MAX_IGNORE_BYTES // MIB} MiB, the limit"]
    assert not ignore_rule(folder)(PurePath("big.log"))  # counts as empty elsewhere


def test_a_ginignore_over_the_line_bound_is_refused_by_name(tmp_path: Path) -> None:
    folder = bot_with_ignores(tmp_path / "b", "*.log\n" + "\n" * MAX_IGNORE_LINES)
    assert refusal(folder) == [f"{IGNORE_FILE} has over {MAX_IGNORE_LINES} lines, the limit"]
    assert not ignore_rule(folder)(PurePath("big.log"))
    (folder / IGNORE_FILE).write_text("*.log\n" + "\n" * (MAX_IGNORE_LINES - 1))
    assert load_manifest(folder).files == 3  # at the bound: fine, and big.log left out


def test_too_many_real_globs_are_refused_and_simple_ones_are_not_counted(tmp_path: Path) -> None:
    simple = "".join(f"n{i}\n*.e{i}\np{i}*\nd/f{i}\n" for i in range(MAX_IGNORE_LINES // 5))
    real = "".join(f"t{i}_*.py\n" for i in range(MAX_IGNORE_GLOBS))
    folder = bot_with_ignores(tmp_path / "b", simple + real)
    assert load_manifest(folder).files == 4
    (folder / IGNORE_FILE).write_text(simple + real + "*x?*\n")
    [problem] = refusal(folder)
    assert problem.startswith(f"{IGNORE_FILE} has {MAX_IGNORE_GLOBS + 1} globs with wildcards")
    assert problem.endswith(f"over {MAX_IGNORE_GLOBS}, the limit")


def test_an_unreadable_ginignore_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    folder = bot_with_ignores(tmp_path / "b", "")
    (folder / IGNORE_FILE).write_bytes(b"\xff\xfe*.log\n")
    assert refusal(folder) == [f"cannot read {IGNORE_FILE}: it is not UTF-8 text"]


# --- at scale ------------------------------------------------------------------------------------


def big_ignore(lines: int) -> Iterator[str]:
    """A generated ``.ginignore``: plain names and paths, ``*.ext``, ``prefix*``, and the real
    globs the bound allows, none of which matches the folder's code."""
    for i in range(MAX_IGNORE_GLOBS):
        yield f"*gen{i}_*.py[co]" if i % 2 else f"data/r{i}/*/x?"
    for i in range(lines - MAX_IGNORE_GLOBS):
        yield (f"cache{i}", f"*.tmp{i}", f"scratch{i}*", f"out/run{i}/log.txt")[i % 4]


def test_a_ginignore_of_100000_lines_is_checked_in_seconds(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "pkg").mkdir(parents=True)
    (folder / "bot.toml").write_text(GOOD)
    (folder / "bot.py").write_text("print('hi')\n")
    for i in range(2000):
        (folder / "pkg" / f"module_{i}.py").write_text(f"X = {i}\n")
    (folder / "pkg" / "cache8").mkdir()
    (folder / "pkg" / "cache8" / "left-out.bin").write_text("")
    (folder / IGNORE_FILE).write_text("\n".join(big_ignore(100_000)) + "\n")
    started = time.perf_counter()
    manifest = load_manifest(folder)
    checked = time.perf_counter()
    digest = code_hash(folder)
    hashed = time.perf_counter()
    copy_code(folder, tmp_path / "copy", None)
    copied = time.perf_counter()
    print(
        f"\n.ginignore of 100000 lines, {manifest.files} files: check {checked - started:.2f} s, "
        f"hash {hashed - checked:.2f} s, copy {copied - hashed:.2f} s"
    )
    assert manifest.files == 2003  # bot.toml, bot.py, .ginignore and the modules
    assert len(digest) == 64
    assert not (tmp_path / "copy" / "pkg" / "cache8").exists()
    shutil.rmtree(tmp_path / "copy")
    assert os.path.isdir(folder)
