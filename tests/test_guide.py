"""The bot guide (docs/bot-guide.md) against the code: its "Inside the sandbox" cannot drift.

The limits table is read row by row: a row whose first cell starts with a backticked name
(`` `memory_mb` ``, `` `MAX_MESSAGE_BYTES` ``) must give, in its second cell, exactly the value
of that setting in the code (``512 MiB``, ``64 KiB``, ``10000 ms``). Every field of
``SandboxLimits`` and ``TimeControl`` must have its row. The clock table must name every time
field of the protocol, the environment block must be the one ``RemoteSeat._launch`` builds, the
runtime table must give the installed and pinned versions, and the refused system calls must be
those of the seccomp filter. Then a real sandboxed bot reports what it sees (environment,
mounts, user, working folder, rlimits, ``/tmp``, versions), and that must match the guide too.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import json
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol import hollywood_gin_pb2 as pb
from protocol.manifest import (
    MAX_FILES,
    MAX_FOLDER_BYTES,
    MAX_IGNORE_BYTES,
    MAX_IGNORE_GLOBS,
    MAX_IGNORE_LINES,
    SYSTEM_PATHS,
    load_manifest,
)
from referee.bridge import ARRIVALS_CAP, MAX_MESSAGE_BYTES, TRANSPORT_LIMIT_BYTES
from referee.control import FaultPolicy, TimeControl
from referee.local import remote_seat
from referee.remote import HEAD_BYTES, SOCKET_NAME, TAIL_BYTES
from referee.sandbox import Layer, Sandbox, SandboxLimits
from referee.sandbox._base import MIB
from referee.sandbox._jail import DEGRADED_ADDRESS_SPACE_FACTOR
from referee.sandbox._mounts import (
    ETC_FILES,
    INSIDE_CODE,
    INSIDE_RUN,
    MASKED_PROC,
    NAMESPACE_FLAGS,
    PROJECT_PACKAGES,
    ROOT_LINKS,
    runtime_dirs,
)
from referee.sandbox._seccomp import DENIED
from referee.sandbox._users import USER_PREFIX

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "bot-guide.md"
PYPROJECT = ROOT / "pyproject.toml"


def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def section(heading: str) -> str:
    """The guide's text under ``heading`` (``## X`` or ``### X``), up to the next heading of
    that level or above."""
    level = len(heading.split(" ", 1)[0])
    lines = guide().splitlines(keepends=True)
    assert f"{heading}\n" in lines, f"no section {heading!r} in {GUIDE.name}"
    kept: list[str] = []
    fenced = False
    for line in lines[lines.index(f"{heading}\n") + 1 :]:
        fenced ^= line.lstrip().startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", line):
            break
        kept.append(line)
    return "".join(kept)


def table(heading: str) -> dict[str, list[str]]:
    """The rows of the section's tables whose first cell starts with a backticked name: that
    name, and the row's other cells."""
    rows: dict[str, list[str]] = {}
    for line in section(heading).splitlines():
        row = re.fullmatch(r"\| `([\w.]+)`[^|]*\|(.*)\|", line.strip())
        if row is None:
            continue
        name = row.group(1)
        assert name not in rows, f"two rows for {name} under {heading!r}"
        rows[name] = [cell.strip() for cell in row.group(2).split("|")]
    return rows


def size(value: int) -> str:
    """Bytes as the guide writes them: ``64 KiB``, ``1 MiB``."""
    for unit, factor in (("MiB", MIB), ("KiB", 1024)):
        if value % factor == 0:
            return f"{value // factor} {unit}"
    return f"{value} bytes"


def limits_in_code() -> dict[str, str]:
    """Every limit the guide's table must give, as it must give it."""
    expected: dict[str, str] = {}
    limits = SandboxLimits()
    for field in dataclasses.fields(SandboxLimits):
        value = getattr(limits, field.name)
        if field.name.endswith("_mb"):
            expected[field.name] = f"{value} MiB"
        elif field.name.endswith("_seconds"):
            expected[field.name] = f"{value} s"
        elif field.name == "cpus":
            expected[field.name] = f"{value:g} CPU"
        else:
            expected[field.name] = str(value)
    control = TimeControl()
    for field in dataclasses.fields(TimeControl):
        assert field.name.endswith("_ms"), f"TimeControl.{field.name}: say its unit here"
        expected[field.name] = f"{getattr(control, field.name)} ms"
    expected["strikes"] = str(FaultPolicy().strikes)
    for name, value in [
        ("MAX_MESSAGE_BYTES", MAX_MESSAGE_BYTES),
        ("TRANSPORT_LIMIT_BYTES", TRANSPORT_LIMIT_BYTES),
        ("MAX_FOLDER_BYTES", MAX_FOLDER_BYTES),
        ("HEAD_BYTES", HEAD_BYTES),
        ("TAIL_BYTES", TAIL_BYTES),
    ]:
        expected[name] = size(value)
    expected["ARRIVALS_CAP"] = str(ARRIVALS_CAP)
    expected["MAX_FILES"] = str(MAX_FILES)
    return expected


@pytest.mark.parametrize(("name", "value"), sorted(limits_in_code().items()))
def test_the_limits_table_gives_each_limit_of_the_code(name: str, value: str) -> None:
    rows = table("### Limits")
    assert name in rows, f"no row for `{name}` in the guide's limits table"
    assert rows[name][0] == value, f"the guide says `{name}` is {rows[name][0]}; the code: {value}"
    assert len(rows[name]) == 2, f"the row of `{name}` needs a 'past it' cell"


def test_the_prose_says_the_same_numbers_as_the_code() -> None:
    control, text = TimeControl(), " ".join(guide().split())
    phrases = [
        f"start-up budget ({control.startup_ms // 1000} s by default",
        f"`move_time_ms` ({control.move_time_ms // 1000} s by default)",
        f"time bank ({control.time_bank_ms // 1000} s at the start)",
        f"a grace of {control.grace_ms} ms",
        f"a message over {size(MAX_MESSAGE_BYTES)}",
        f"under {size(MAX_FOLDER_BYTES)} and {MAX_FILES} files",
        f"within {size(MAX_FOLDER_BYTES)}",
        f"the first {size(HEAD_BYTES)} and the last {size(TAIL_BYTES)}",
        f"address space is capped at {DEGRADED_ADDRESS_SPACE_FACTOR} times `memory_mb`",
    ]
    missing = [phrase for phrase in phrases if phrase not in text]
    assert not missing, f"the guide does not say: {missing}"


def test_the_clock_table_names_every_time_field_of_the_protocol() -> None:
    fields = {f"TimeControl.{field.name}" for field in pb.TimeControl.DESCRIPTOR.fields}
    fields |= {
        f"DecisionRequest.{field.name}"
        for field in pb.DecisionRequest.DESCRIPTOR.fields
        if field.name.endswith("_ms")
    }
    assert set(table("### The clock")) == fields


def test_the_clock_example_is_what_the_referee_computes() -> None:
    text = " ".join(section("### The clock").split())
    found = re.search(
        r"the first request says `time_left_ms: (\d+)` and the referee gives up at (\d+) ms; an "
        r"answer after (\d+) ms leaves `time_bank_left_ms: (\d+)`, and the next request says "
        r"`time_left_ms: (\d+)`",
        text,
    )
    assert found, "the clock's worked example is not where it was"
    first, gives_up, taken, bank_after, second = map(int, found.groups())
    control = TimeControl()
    bank = control.time_bank_ms
    assert first == control.move_time_ms + bank  # Match._ask: time_left_ms
    assert gives_up == control.limit_ms(bank)
    assert bank_after == bank - (taken - control.move_time_ms)  # Match._charge
    assert second == control.move_time_ms + bank_after


def guide_environment() -> dict[str, str]:
    found = re.search(r"```text\n(.*?)```", section("### What the bot sees"), re.S)
    assert found, "no environment block under 'What the bot sees'"
    return dict(line.split("=", 1) for line in found.group(1).splitlines())


def launch_environment() -> dict[str, str | None]:
    """The environment ``RemoteSeat._launch`` gives a bot, read from its source: each name, with
    its value where it is a constant (``None`` where it is computed)."""
    tree = ast.parse((ROOT / "referee" / "remote.py").read_text(encoding="utf-8"))
    launch = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "_launch"
    )
    literal = next(
        node.value
        for node in ast.walk(launch)
        if isinstance(node, ast.Assign)
        and [ast.unparse(target) for target in node.targets] == ["env"]
        and isinstance(node.value, ast.Dict)
    )
    env: dict[str, str | None] = {}
    for key, value in zip(literal.keys, literal.values, strict=True):
        assert isinstance(key, ast.Constant), "an environment name that is not a constant"
        assert isinstance(key.value, str)
        constant = value.value if isinstance(value, ast.Constant) else None
        env[key.value] = constant if isinstance(constant, str) else None
    return env


def test_the_environment_is_the_one_the_referee_sets() -> None:
    shown, launched = guide_environment(), launch_environment()
    assert set(shown) - {"PWD"} == set(launched)
    for name, value in launched.items():
        if value is not None:
            assert shown[name] == value, name
    assert shown["GIN_REFEREE"] == f"unix://{INSIDE_RUN}/{SOCKET_NAME}"
    assert shown["PWD"] == INSIDE_CODE


def test_the_guide_names_every_mount_and_the_user() -> None:
    seen = section("### What the bot sees")
    paths = ["/usr", "/tmp", "/proc", "/dev", INSIDE_CODE, INSIDE_RUN, *ROOT_LINKS, *ETC_FILES]
    assert [path for path in paths if f"`{path}`" not in seen] == []
    assert [name for name in PROJECT_PACKAGES if f"`{name}`" not in seen] == []
    assert f"**Its working folder** is `{INSIDE_CODE}`" in seen
    assert f"`{USER_PREFIX}0`, `{USER_PREFIX}1`" in seen
    hostname = NAMESPACE_FLAGS[NAMESPACE_FLAGS.index("--hostname") + 1]
    assert f"the host name `{hostname}`" in seen
    folder = section("## The bot folder")
    assert [path for path in SYSTEM_PATHS if f"`{path}`" not in folder] == []


def test_the_refused_system_calls_are_the_filters() -> None:
    refused = section("### What is refused")
    named = set(re.findall(r"`(\w+)`", refused.split("**These system calls**", 1)[1]))
    assert set(DENIED) <= named, set(DENIED) - named
    assert {"clone", "clone3", "ioctl", "TIOCSTI", "TIOCLINUX"} <= named
    others = {"clone", "clone3", "ioctl", "TIOCSTI", "TIOCLINUX", "EPERM", "ENOSYS"}
    assert named - set(DENIED) <= others, named - set(DENIED) - others


def pinned(package: str) -> str:
    with PYPROJECT.open("rb") as handle:
        dependencies = tomllib.load(handle)["project"]["dependencies"]
    return next(
        str(pin).split("==", 1)[1] for pin in dependencies if str(pin).startswith(f"{package}==")
    )


def minimum_python() -> str:
    with PYPROJECT.open("rb") as handle:
        required: str = tomllib.load(handle)["project"]["requires-python"]
    return required.removeprefix(">=")


@pytest.mark.parametrize("package", ["grpcio", "protobuf"])
def test_the_runtime_versions_are_the_installed_and_pinned_ones(package: str) -> None:
    shown = table("### The runtime")[package][0]
    assert shown == importlib.metadata.version(package) == pinned(package)


def test_the_python_version_is_the_required_one_and_this_one_meets_it() -> None:
    shown = table("### The runtime")["python"][0]
    minimum = minimum_python()
    assert shown.startswith(f"{minimum} or newer"), shown
    assert sys.version_info >= tuple(int(part) for part in minimum.split("."))


# --- what a real sandboxed bot sees -----------------------------------------------------------

PROBE = """\
import json, os, resource, shutil, sys
import grpc
from google import protobuf

names = ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")
seen = {
    "env": dict(os.environ), "uid": os.getuid(), "groups": os.getgroups(), "cwd": os.getcwd(),
    "executable": sys.executable, "version": list(sys.version_info[:3]),
    "grpcio": grpc.__version__, "protobuf": protobuf.__version__,
    "rlimits": {name: resource.getrlimit(getattr(resource, name)) for name in names},
    "tmp_bytes": shutil.disk_usage("/tmp").total, "hostname": os.uname().nodename,
    "mounts": [line.split()[4] for line in open("/proc/self/mountinfo")],
}
print("SEEN " + json.dumps(seen), file=sys.stderr, flush=True)

from protocol.sdk import Bot
from referee.rules import GreedyPolicy


class Probe(Bot):
    def decide(self, view, legal):
        return GreedyPolicy()(view, legal)


sys.exit(Probe().run())
"""
NEEDED = (Layer.USER, Layer.BWRAP, Layer.SECCOMP, Layer.RLIMITS)


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What a bot reports from inside a sandbox with the default limits."""
    box = Sandbox(root_dir=tmp_path_factory.mktemp("jails"))
    try:
        missing = [s for s in box.layers if s.layer in NEEDED and not s.active]
        if missing:
            pytest.skip("; ".join(f"sandbox layer {s.layer.name}: {s.detail}" for s in missing))
        folder = tmp_path_factory.mktemp("probe")
        (folder / "bot.py").write_text(PROBE)
        (folder / "bot.toml").write_text(
            'name = "probe"\nversion = "1"\ncommand = ["python", "bot.py"]\n'
        )
        seat = remote_seat(load_manifest(folder), box.prepare, "guide-probe")

        async def main() -> None:
            await seat.connect(0)
            await seat.close("seen")

        trio.run(main)
    finally:
        box.close()
    assert seat.stderr is not None
    text = seat.stderr.text()
    line = next((line for line in text.splitlines() if line.startswith("SEEN ")), None)
    assert line is not None, text
    report: dict[str, Any] = json.loads(line.removeprefix("SEEN "))
    return report


def test_a_sandboxed_bot_sees_exactly_the_guides_environment(seen: dict[str, Any]) -> None:
    shown, actual = guide_environment(), dict(seen["env"])
    assert len(actual.pop("GIN_TOKEN")) >= 16
    shown.pop("GIN_TOKEN")
    assert actual == shown


def test_a_sandboxed_bot_sees_only_the_guides_mounts(seen: dict[str, Any]) -> None:
    listed = set(re.findall(r"`(/[\w./-]*)`", section("### What the bot sees")))
    runtime = {str(path) for path in runtime_dirs()}
    unlisted = [
        point
        for point in seen["mounts"]
        if point not in listed | runtime | {"/"} and not point.startswith("/dev/")
    ]
    assert unlisted == []
    assert seen["cwd"] == INSIDE_CODE


def test_a_sandboxed_bot_has_its_own_user_and_the_guides_limits(seen: dict[str, Any]) -> None:
    assert seen["uid"] not in (0, os.getuid())
    assert seen["groups"] == []
    limits = SandboxLimits()
    cpu_hard = limits.cpu_seconds + limits.cpu_grace_seconds
    assert seen["rlimits"] == {
        "RLIMIT_CPU": [limits.cpu_seconds, cpu_hard],
        "RLIMIT_FSIZE": [limits.file_size_mb * MIB] * 2,
        "RLIMIT_NOFILE": [limits.open_files] * 2,
        "RLIMIT_NPROC": [limits.pids] * 2,
        "RLIMIT_CORE": [0, 0],
    }
    assert seen["tmp_bytes"] == limits.tmpfs_mb * MIB
    hostname = NAMESPACE_FLAGS[NAMESPACE_FLAGS.index("--hostname") + 1]
    assert seen["hostname"] == hostname


def test_python_in_bot_toml_is_the_referees_interpreter_with_the_guides_versions(
    seen: dict[str, Any],
) -> None:
    assert seen["executable"] == sys.executable
    assert seen["version"] == list(sys.version_info[:3])
    runtime = table("### The runtime")
    assert seen["grpcio"] == runtime["grpcio"][0]
    assert seen["protobuf"] == runtime["protobuf"][0]


def test_the_guide_gives_the_ginignore_bounds_of_the_code() -> None:
    text = " ".join(section("## The bot folder").split())
    bounds = (
        f"at most {MAX_IGNORE_LINES} lines and {size(MAX_IGNORE_BYTES)}, and at most "
        f"{MAX_IGNORE_GLOBS} of its globs"
    )
    assert bounds in text


def test_the_guide_names_each_machine_counter_the_jail_covers() -> None:
    seen = " ".join(section("### What the bot sees").split())
    assert [name for name in MASKED_PROC if f"`/proc/{name}`" not in seen] == []
    assert "a read-only `/dev`" in seen
    assert "a private `/dev/shm`" in seen
