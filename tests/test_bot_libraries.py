"""A compiled bot that cannot be loaded in the sandbox is told why, in one line, with what to do.

The sandbox shows a bot only the machine's /usr (and the links into it: /bin, /lib, /lib64) and
its own folder. A dynamically linked program whose shared library, or whose ELF interpreter (the
dynamic loader), lives anywhere else runs on its author's machine and dies in the sandbox before
it can say hello. These tests build such programs with gcc into ``tmp_path`` (outside /usr, so
the sandbox cannot see them), run ``gin bot check`` on them, and read its verdict; the unit tests
read the loader's error and ELF program headers directly.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.manifest import load_manifest
from referee.conformance import elf_interpreter, library_trouble, missing_library
from referee.sandbox import Layer, Sandbox

ROOT = Path(__file__).resolve().parent.parent
CHECK_TIMEOUT_S = 120.0
BUILD_TIMEOUT_S = 60.0
LIBRARY = "libgreet.so.1"
GREET_C = 'const char *greet(void) { return "greeted"; }\n'
MAIN_C = """#include <stdio.h>
const char *greet(void);
int main(void) { fprintf(stderr, "%s\\n", greet()); return 3; }
"""
LOADER_ERROR = (
    "/bot/prog: error while loading shared libraries: libgreet.so.1: cannot open shared object "
    "file: No such file or directory\n"
)


def gcc() -> str:
    """The C compiler; missing, it fails the test (``make cpp-bot`` installs g++ and gcc)."""
    found = shutil.which("gcc")
    if found is None:
        pytest.fail("gcc is missing: run make cpp-bot (as root it installs g++ and gcc)")
    return found


def compile_c(tmp_path: Path, out: Path, main: str, *flags: str) -> Path:
    """Compile the C source ``main`` with ``flags`` into ``out``."""
    source = tmp_path / f"{out.name}.c"
    source.write_text(main)
    done = subprocess.run(
        [gcc(), "-o", str(out), str(source), *flags],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def greet_library(folder: Path, tmp_path: Path) -> Path:
    """``libgreet.so.1`` (soname included) built into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / LIBRARY
    compile_c(tmp_path, library, GREET_C, "-shared", "-fPIC", f"-Wl,-soname,{LIBRARY}")
    return library


def bot_folder(folder: Path, program: str) -> Path:
    """A bot folder whose command is ``./program``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(
        f'name = "libtest"\nversion = "0.1.0"\ncommand = ["./{program}"]\n'
    )
    return folder


def runs_outside_the_sandbox(program: Path) -> None:
    """The program loads and runs on the machine itself: what fails in the sandbox is the
    sandbox's view of the machine, not the program."""
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=10, check=False)
    assert (done.returncode, done.stderr) == (3, "greeted\n"), done.stderr


def needs_bwrap() -> None:
    missing = [s.detail for s in Sandbox().layers if s.layer is Layer.BWRAP and not s.active]
    if missing:
        pytest.skip(
            f"sandbox layer BWRAP unavailable (the bot would see all of /tmp): {missing[0]}"
        )


def bot_check(folder: Path) -> tuple[int, list[str]]:
    """``gin bot check folder``: its exit status and the lines it printed."""
    gin = Path(sys.executable).parent / "gin"
    command = [str(gin)] if gin.exists() else [shutil.which("gin") or "gin"]
    done = subprocess.run(
        [*command, "bot", "check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT_S,
        check=False,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert "Traceback" not in done.stdout + done.stderr
    return done.returncode, done.stdout.splitlines()


# --- the loader's error and the ELF interpreter, read directly ----------------------------------


@pytest.mark.parametrize(
    ("stderr", "library"),
    [
        (LOADER_ERROR, "libgreet.so.1"),
        (
            "./gin-cpp-bot: error while loading shared libraries: libgrpc++.so.1.51: cannot open "
            "shared object file: No such file or directory",
            "libgrpc++.so.1.51",
        ),
        ("some output\n" + LOADER_ERROR + "more output\n", "libgreet.so.1"),
        ("x: error while loading shared libraries: /opt/x/libq.so: cannot open", "/opt/x/libq.so"),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'data.bin'", ""),
        ("error while loading shared libraries: \x1b[2Jlib.so: cannot open", ""),
        ("", ""),
    ],
)
def test_missing_library_names_what_the_loader_did_not_find(stderr: str, library: str) -> None:
    assert missing_library(stderr) == library


@pytest.mark.slow  # (it needs gcc, which make check does not)
def test_elf_interpreter_reads_the_program_headers(tmp_path: Path) -> None:
    loader = str(tmp_path / "lib" / "ld-test.so")
    program = compile_c(
        tmp_path,
        tmp_path / "prog",
        "int main(void) { return 0; }\n",
        f"-Wl,--dynamic-linker={loader}",
    )
    assert elf_interpreter(program) == loader
    static = compile_c(tmp_path, tmp_path / "static", "int main(void) { return 0; }\n", "-static")
    assert elf_interpreter(static) == ""
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    assert elf_interpreter(script) == ""
    assert elf_interpreter(tmp_path / "missing") == ""
    assert elf_interpreter(tmp_path) == ""  # a folder: cannot be read


@pytest.mark.slow  # (it needs gcc, which make check does not)
def test_elf_interpreter_survives_damaged_headers(tmp_path: Path) -> None:
    program = compile_c(tmp_path, tmp_path / "prog", "int main(void) { return 0; }\n")
    head = program.read_bytes()[:4096]
    assert elf_interpreter(program) != ""  # (undamaged, it has one)
    damaged = tmp_path / "damaged"
    for name, data in [
        ("cut", head[:40]),
        ("no program headers", head[:0x36] + struct.pack("<HH", 0, 0) + head[0x3A:]),
        ("zero-sized entries", head[:0x36] + struct.pack("<HH", 0, 9) + head[0x3A:]),
        ("table past the end", head[:0x20] + struct.pack("<Q", 2**40) + head[0x28:]),
        ("bad class", head[:4] + b"\x07" + head[5:]),
    ]:
        damaged.write_bytes(data)
        assert elf_interpreter(damaged) == "", name


def test_a_python_bots_missing_file_is_not_blamed_on_its_loader() -> None:
    # A Python bot runs the machine's interpreter, whose loader (/lib64/...) the sandbox shows.
    manifest = load_manifest(ROOT / "sample_bots" / "greedy")
    assert elf_interpreter(Path(manifest.argv()[0])) != ""
    stderr = "FileNotFoundError: [Errno 2] No such file or directory: 'weights.bin'\n"
    assert library_trouble(manifest, stderr) == ""


# --- gin bot check on programs the sandbox cannot load -------------------------------------------


@pytest.mark.slow
def test_bot_check_names_a_shared_library_the_sandbox_lacks(tmp_path: Path) -> None:
    needs_bwrap()
    libraries = tmp_path / "lib"  # outside /usr and outside the bot folder
    greet_library(libraries, tmp_path)
    folder = bot_folder(tmp_path / "bot", "prog")
    program = compile_c(
        tmp_path,
        folder / "prog",
        MAIN_C,
        f"-L{libraries}",
        "-l:" + LIBRARY,
        f"-Wl,-rpath,{libraries}",
    )
    runs_outside_the_sandbox(program)
    code, lines = bot_check(folder)
    assert code == 1
    verdict = lines[0]
    assert verdict.startswith(
        "libtest@0.1.0 never started: ./prog cannot load the shared library "
        f"{LIBRARY}: the sandbox shows only"
    )
    assert "link it statically" in verdict
    assert "put it in the bot folder and link with -Wl,-rpath,'$ORIGIN'" in verdict
    assert any("error while loading shared libraries" in line for line in lines[1:])


@pytest.mark.slow
def test_the_advice_works_a_library_in_the_folder_loads(tmp_path: Path) -> None:
    # The self-contained folder the verdict advises: the library copied in, rpath $ORIGIN. The
    # program loads in the sandbox (it prints, then ends without a hello: it is no bot).
    needs_bwrap()
    folder = bot_folder(tmp_path / "bot", "prog")
    greet_library(folder, tmp_path)
    compile_c(
        tmp_path, folder / "prog", MAIN_C, f"-L{folder}", "-l:" + LIBRARY, "-Wl,-rpath,$ORIGIN"
    )
    code, lines = bot_check(folder)
    assert code == 1
    assert "no hello: the bot's process ended (exit status 3)" in lines[0]
    assert "shared library" not in lines[0]
    assert "greeted" in lines


@pytest.mark.slow
def test_bot_check_names_an_elf_interpreter_the_sandbox_lacks(tmp_path: Path) -> None:
    needs_bwrap()
    system_loader = elf_interpreter(Path(sys.executable).resolve())
    assert system_loader, "the Python interpreter has no ELF interpreter to copy"
    loader = tmp_path / "lib" / "ld-test.so"  # a working loader, but where the sandbox cannot see
    loader.parent.mkdir()
    shutil.copy(system_loader, loader)
    folder = bot_folder(tmp_path / "bot", "prog")
    greet_library(folder, tmp_path)  # its library is in the folder: only the loader is missing
    program = compile_c(
        tmp_path,
        folder / "prog",
        MAIN_C,
        f"-L{folder}",
        "-l:" + LIBRARY,
        "-Wl,-rpath,$ORIGIN",
        f"-Wl,--dynamic-linker={loader}",
    )
    runs_outside_the_sandbox(program)
    code, lines = bot_check(folder)
    assert code == 1
    assert lines[0] == (
        f"libtest@0.1.0 never started: ./prog cannot start: its ELF interpreter {loader} is not "
        "in the sandbox, which shows only the machine's /usr and the bot's folder; link it "
        "statically, or against the machine's own C library"
    )
