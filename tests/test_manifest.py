"""Bot folder and manifest validation: every problem named, never a traceback."""

import os
from pathlib import Path

import pytest

from protocol.manifest import MAX_FOLDER_BYTES, ManifestError, load_manifest

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"


def write_bot(folder: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(manifest)
    for name, text in (files or {"bot.py": "print('hi')\n"}).items():
        (folder / name).write_text(text)
    return folder


def problems(folder: Path) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    return caught.value.problems


GOOD = 'name = "my-bot"\nversion = "1.0.0"\ncommand = ["python", "bot.py"]\n'


@pytest.mark.parametrize("name", ["random", "greedy"])
def test_sample_bots_are_valid(name: str) -> None:
    manifest = load_manifest(SAMPLES / name)
    assert manifest.name == name
    assert manifest.argv()[1] == "bot.py"
    assert os.path.isabs(manifest.argv()[0])


def test_good_folder(tmp_path: Path) -> None:
    manifest = load_manifest(write_bot(tmp_path / "b", GOOD + 'author = "Ada"\n'))
    assert (manifest.ident, manifest.author, manifest.files) == ("my-bot@1.0.0", "Ada", 2)


def test_command_as_a_string_is_split(tmp_path: Path) -> None:
    manifest = load_manifest(
        write_bot(tmp_path / "b", 'name = "b"\nversion = "1"\ncommand = "python bot.py --fast"\n')
    )
    assert manifest.command == ("python", "bot.py", "--fast")


def test_missing_folder_and_manifest(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope") == [f"no such folder: {tmp_path / 'nope'}"]
    (tmp_path / "empty").mkdir()
    assert problems(tmp_path / "empty") == [f"no bot.toml in {tmp_path / 'empty'}"]


def test_invalid_toml(tmp_path: Path) -> None:
    [problem] = problems(write_bot(tmp_path / "b", 'name = "unterminated\n'))
    assert problem.startswith("bot.toml is not valid TOML")


def test_every_problem_is_listed_once(tmp_path: Path) -> None:
    folder = write_bot(
        tmp_path / "b",
        'name = "Bad Name!"\ncommand = ["python", "main.py"]\ncolour = "red"\nauthor = 3\n',
    )
    found = problems(folder)
    assert len(found) == 5
    assert found[0].startswith("bad name 'Bad Name!'")
    assert found[1].startswith("missing field 'version'")
    assert found[2] == "command not found: main.py is not a file in the bot folder"
    assert found[3] == "bad author: must be text"
    assert found[4].startswith("unknown field 'colour'")


def test_command_must_exist_and_be_runnable(tmp_path: Path) -> None:
    folder = write_bot(
        tmp_path / "a", 'name = "a"\nversion = "1"\ncommand = ["no-such-program-xyz"]\n'
    )
    assert problems(folder) == [
        "command not found: no-such-program-xyz is neither in the folder nor on the sandbox's "
        "PATH (/usr/local/bin:/usr/bin:/bin)"
    ]
    folder = write_bot(
        tmp_path / "b",
        'name = "b"\nversion = "1"\ncommand = ["./run.sh"]\n',
        {"run.sh": "#!/bin/sh\n"},
    )
    assert problems(folder) == ["command not executable: ./run.sh (chmod +x it)"]
    folder = write_bot(tmp_path / "c", 'name = "c"\nversion = "1"\ncommand = []\n')
    assert problems(folder)[0].startswith("bad command")


def test_symlinks_pointing_outside_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("referee key")
    folder = write_bot(tmp_path / "b", GOOD)
    (folder / "leak").symlink_to(secret)
    (folder / "relative").symlink_to("bot.py")
    (folder / "up").symlink_to("../secret.txt")
    # An absolute link into the folder breaks too: the bot sees its folder at /bot.
    (folder / "absolute").symlink_to(folder / "bot.py")
    found = problems(folder)
    assert len(found) == 3, found
    assert found[0].startswith(f"symlink absolute points to {folder / 'bot.py'}, which a bot")
    assert found[1].startswith(f"symlink leak points to {secret}, which a bot does not see")
    assert found[2] == "symlink up points outside the bot folder (to ../secret.txt)"


def test_folder_too_large(tmp_path: Path) -> None:
    folder = write_bot(tmp_path / "b", GOOD)
    with (folder / "weights.bin").open("wb") as handle:
        handle.truncate(MAX_FOLDER_BYTES + 1)
    [problem] = problems(folder)
    assert problem.startswith("folder too large")


def test_error_message_lists_problems(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="is not a valid bot folder:\n  - missing field 'name'"):
        load_manifest(write_bot(tmp_path / "b", 'version = "1"\ncommand = ["python", "bot.py"]\n'))


def test_a_command_too_long_for_the_file_system_is_a_problem_not_a_traceback(
    tmp_path: Path,
) -> None:
    folder = write_bot(
        tmp_path / "long", f'name = "long"\nversion = "1"\ncommand = ["{"x" * 300}"]\n'
    )
    assert problems(folder) == [
        f"command not found: {'x' * 300} is neither in the folder nor on the sandbox's PATH "
        "(/usr/local/bin:/usr/bin:/bin)"
    ]
