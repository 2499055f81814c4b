"""The package installs whole, the ordinary way (issue 14).

The wheel is built as ``pip install .`` builds it (an isolated build, from a copy of the
checkout), checked for warnings and for every file the packages hold, and installed with the
``dask`` extra into a fresh virtual environment outside the checkout (its dependencies from the
package index). From there, with no ``PYTHONPATH`` and the working directory outside the checkout,
the installed ``gin`` plays a sandboxed series between two installed sample bots and verifies its
log, and a Dask scheduler and worker start the way the README starts them on cluster machines,
bound to 127.0.0.1, and the worker registers with the installed code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from referee.sandbox import detect_layers

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("referee", "protocol", "sample_bots", "tournaments")
# What never goes into the wheel: the Node bot's installed dependencies, caches, build output.
NOT_SHIPPED = ("node_modules", "__pycache__", "gin-go-bot", "gin-cpp-bot")
"""(The Go and C++ bots' binaries are build output too: `make go-bot` and `make cpp-bot` make them
where the sources are.)"""
COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    *NOT_SHIPPED,
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".gin",
    "runs",
    "artifacts",
)
INSTALL_TIMEOUT_S = 600
START_TIMEOUT_S = 60.0

pytestmark = pytest.mark.slow


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    """Run ``argv``; its output (stdout and stderr), failing the test if it fails."""
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}"
    return done.stdout


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without what would let the checkout or the main venv leak in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))]
    env["PATH"] = os.pathsep.join(path)
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def shipped_files() -> set[str]:
    """Every file of the packages in the checkout, as the wheel should name it."""
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            relative = path.relative_to(ROOT)
            if path.is_file() and not set(relative.parts) & set(NOT_SHIPPED):
                found.add(relative.as_posix())
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the fresh venv's bin folder, a working directory outside the checkout)."""
    tmp = tmp_path_factory.mktemp("install")
    assert not tmp.is_relative_to(ROOT)
    source, wheels, venv, work = tmp / "source", tmp / "wheels", tmp / "venv", tmp / "work"
    shutil.copytree(ROOT, source, ignore=COPY_IGNORE, symlinks=True)
    work.mkdir()
    env = clean_env()
    pip = [sys.executable, "-m", "pip"]
    build = run([*pip, "wheel", "--no-deps", "-v", "-w", str(wheels), str(source)], work, env)
    # setuptools' warnings ("...Warning: ...", "warning: ..."), not pip's notes ("WARNING: ...").
    warnings = [line for line in build.splitlines() if re.search(r"[Ww]arning\b", line)]
    assert warnings == [], "the build warns:\n" + "\n".join(warnings)
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert not [n for n in names if "node_modules" in n or "__pycache__" in n]
    assert "referee/sandbox/__init__.py" in names
    assert "referee/sandbox/seccomp_exec.py" in names
    assert {f"tournaments/views/replay_assets/page.{x}" for x in ("html", "css", "js")} <= names
    missing = sorted(shipped_files() - names)
    assert missing == [], f"the wheel leaves out {missing}"

    run([sys.executable, "-m", "venv", str(venv)], work, env)
    bin_dir = venv / "bin"
    install = [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", f"{wheel}[dask]"]
    run(install, work, env, timeout=INSTALL_TIMEOUT_S)
    return bin_dir, work


def test_the_installed_gin_plays_a_sandboxed_series(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    env = clean_env(GIN_HOME=str(work / "home"), COLUMNS="120")
    where = "import sample_bots, referee.sandbox as s; print(sample_bots.__file__, s.__file__)"
    files = run([str(bin_dir / "python"), "-c", where], work, env).split()
    samples = Path(files[0]).parent
    for file in files:
        assert Path(file).is_relative_to(bin_dir.parent), f"{file} is not the installed copy"
    log = work / "series.jsonl"
    gin = str(bin_dir / "gin")
    bots = [str(samples / "random"), str(samples / "greedy")]
    run([gin, "play", *bots, "--seed", "7", "--log", str(log)], work, env)
    assert "verified" in run([gin, "replay", str(log), "--verify"], work, env)
    header = json.loads(log.read_text().splitlines()[0])
    active = [status.layer.value for status in detect_layers() if status.active]
    assert active, "no sandbox layer works on this machine"
    assert header["sandbox"] == active  # the installed referee jails the bots as this one does


def start(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the process group this process leads (a nanny and its worker), by its id."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


PROBE = """
import sys
from distributed import Client
from tournaments.executors.cluster_task import arena_code, worker_probe
with Client(sys.argv[1], timeout=30) as client:
    client.wait_for_workers(1, timeout=60)
    (probe,) = client.run(worker_probe).values()
    assert probe["code"] == arena_code(), "the worker runs other code"
    print("registered", len(client.nthreads()), probe["layers"])
"""


def test_a_dask_worker_starts_as_the_readme_says(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    env = clean_env(GIN_CLUSTER_DIR=str(work / "cluster"))
    address_file = work / "scheduler.json"
    started: list[subprocess.Popen[bytes]] = []
    try:
        scheduler = [str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0"]
        scheduler += ["--no-dashboard", "--scheduler-file", str(address_file)]
        started.append(start(scheduler, work, env, work / "scheduler.log"))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (address_file.exists() and address_file.stat().st_size > 0):
            assert started[0].poll() is None, (work / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(address_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = [str(bin_dir / "dask"), "worker", address, "--nthreads", "2", "--nworkers", "1"]
        worker += [
            "--preload",
            "tournaments.executors.cluster_task",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
        ]
        worker += ["--local-directory", str(work / "dask-worker")]
        started.append(start(worker, work, env, work / "worker.log"))
        probed = run([str(bin_dir / "python"), "-c", PROBE, address], work, env, timeout=120)
        assert probed.startswith("registered 1 "), probed
    finally:
        for process in started[::-1]:
            stop(process)
    assert (
        "Run preload setup: tournaments.executors.cluster_task" in (work / "worker.log").read_text()
    )
