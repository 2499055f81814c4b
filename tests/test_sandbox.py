"""The bot sandbox, tested against the real kernel: every attack is run, every outcome checked.

Layers that cannot run here (not root, bubblewrap missing) make the tests that need them skip
with the exact reason the sandbox gives; nothing passes silently. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import selectors
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox import (
    REQUIRED_LAYERS,
    BotJail,
    Layer,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
    _sweep,
    detect_layers,
    sweep_jails,
)
from referee.sandbox._procs import all_pids, cmdline, is_alive, my_zombies, pids_of_uid, uids

BOT_TIMEOUT_S = 20.0
LAYERS = {status.layer: status for status in detect_layers()}


def need(*layers: Layer) -> None:
    """Skip, with the sandbox's own reason, unless every one of ``layers`` works here."""
    for layer in layers:
        status = LAYERS[layer]
        if not status.active:
            pytest.skip(f"layer {layer.name} unavailable: {status.detail}")


def bot_env(token: str = "") -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    return env | ({"GIN_TOKEN": token} if token else {})


def write_bot(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(textwrap.dedent(source))
    return folder


def run_bot(jail: BotJail, *args: str, token: str = "") -> tuple[int, str, str]:
    """Run ``python bot.py ARGS`` in the jail to its end (bounded); (status, stdout, stderr)."""
    process = jail.spawn([sys.executable, "bot.py", *args], bot_env(token))
    try:
        out, err = process.communicate(timeout=BOT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        jail.teardown()
        process.communicate(timeout=5)
        pytest.fail("the bot did not finish in time")
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def read_line(process: subprocess.Popen[bytes], timeout: float = BOT_TIMEOUT_S) -> str:
    """One line of the bot's stdout, or fail after ``timeout`` seconds."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            pytest.fail("no line from the bot in time")
    return process.stdout.readline().decode(errors="replace").strip()


def finish(jail: BotJail, process: subprocess.Popen[bytes]) -> str:
    """Teardown, then collect what is left of the output (closes the pipes)."""
    jail.teardown()
    _, err = process.communicate(timeout=5)
    return err.decode(errors="replace")


def killed(status: int) -> bool:
    """SIGKILL, as seen directly (-9) or through bwrap, which exits with 128 + signal."""
    return status in (-signal.SIGKILL, 128 + signal.SIGKILL)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox() as made:
        yield made


@contextlib.contextmanager
def jail_of(box: Sandbox, label: str, code: Path) -> Iterator[BotJail]:
    jail = box.prepare(label, code)
    try:
        yield jail
    finally:
        jail.teardown()


class Listeners:
    """What a jailed bot must not reach (loopback TCP, an abstract socket) and what it must
    reach (its own referee.sock); each answers b"hi" to whoever connects."""

    def __init__(self, socket_path: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.abstract_name = f"gin-test-{secrets.token_hex(6)}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen()
        self.referee = socket.socket(socket.AF_UNIX)
        self.referee.bind(str(socket_path))
        self.referee.listen()
        self.accepted: list[str] = []
        for name, server in (("tcp", self.tcp), ("abstract", self.abstract), ("ref", self.referee)):
            threading.Thread(target=self._serve, args=(name, server), daemon=True).start()

    def _serve(self, name: str, server: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                self.accepted.append(name)
                with connection:
                    connection.sendall(b"hi")

    def close(self) -> None:
        for server in (self.tcp, self.abstract, self.referee):
            server.close()


# --- detection -------------------------------------------------------------------------------


def test_every_layer_is_active_as_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("not root: USER and CGROUP need root (CI runs as root)")
    off = {s.layer.name: s.detail for s in detect_layers() if not s.active}
    assert off == {}, f"layers off (run `make sandbox-deps`): {off}"
    with Sandbox(strict=True) as box:
        assert box.warnings == ()


def test_strict_mode_refuses_exactly_when_a_required_layer_is_missing(tmp_path: Path) -> None:
    missing = [layer for layer in REQUIRED_LAYERS if not LAYERS[layer].active]
    if not missing:
        box = Sandbox(strict=True, root_dir=tmp_path)
        assert all(box.has(layer) for layer in REQUIRED_LAYERS)
        return
    with pytest.raises(SandboxUnavailable) as raised:
        Sandbox(strict=True, root_dir=tmp_path)
    for layer in missing:
        assert layer.name in str(raised.value)
    loose = Sandbox(root_dir=tmp_path)
    assert len(loose.warnings) >= len(missing)
    assert all(warning.startswith("WARNING: sandbox DEGRADED") for warning in loose.warnings)


# --- one jail, many attacks --------------------------------------------------------------------

PROBE = """
import ctypes, errno, json, os, socket, sys

args = json.loads(sys.argv[1])
out = {"uid": os.getuid(), "cwd": os.getcwd()}
out["open_fds"] = []
for fd in range(3, 64):
    try:
        os.fstat(fd)
        out["open_fds"].append(fd)
    except OSError:
        pass

def attempt(name, action):
    try:
        result = action()
        out[name] = ["ok", result if isinstance(result, (str, int, list)) else None]
    except OSError as error:
        out[name] = ["err", error.errno]

def connect_unix(address):
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(3)
        client.connect(address)
        return client.recv(2).decode()

def tcp():
    socket.create_connection(("127.0.0.1", args["tcp_port"]), timeout=3).close()

libc = ctypes.CDLL(None, use_errno=True)

def ptrace_seize():
    if libc.ptrace(0x4206, args["referee_pid"], None, None) != 0:
        raise OSError(ctypes.get_errno(), "ptrace")

def new_user_namespace():
    if libc.unshare(0x10000000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")

def tiocsti():
    import fcntl, termios
    fcntl.ioctl(0, termios.TIOCSTI, b"x")

attempt("tcp_connect", tcp)
attempt("inet_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("inet6_socket", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
attempt("netlink_socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW).close())
attempt("abstract", lambda: connect_unix("\\0" + args["abstract"]))
attempt("referee_socket", lambda: connect_unix(args["socket"]))
attempt("write_code_new", lambda: open(os.path.join(args["code"], "new.py"), "w").close())
attempt("write_code_old", lambda: open(os.path.join(args["code"], "bot.py"), "a").close())
attempt("write_run", lambda: open(os.path.join(args["run"], "dropped"), "w").close())
attempt("write_tmp", lambda: open("/tmp/scratch", "w").close())
attempt("secret", lambda: open(args["secret"]).read())
attempt("referee_environ", lambda: open(f"/proc/{args['referee_pid']}/environ").read())
attempt("ptrace_referee", ptrace_seize)
attempt("user_namespace", new_user_namespace)
attempt("tiocsti", tiocsti)
attempt("other_code", lambda: open(args["other_code"]).read())
attempt("match_folders", lambda: os.listdir(args["runs"]))
attempt("unlink_socket", lambda: os.unlink(args["socket"]))
attempt("rename_socket", lambda: os.rename(args["socket"], args["socket"] + ".old"))
attempt("symlink_in_run", lambda: os.symlink(args["socket"], os.path.join(args["run"], "x")))
attempt("list_root", lambda: sorted(os.listdir("/root")) if os.path.isdir("/root") else [])
attempt("list_project", lambda: sorted(os.listdir(args["project"])))
out["pids"] = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
status = open("/proc/self/status").read()
out["status"] = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe_run(
    sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, object]]:
    """Run the attack probe once in a jail next to a second jail; the tests read its report."""
    need(Layer.BWRAP)
    base = tmp_path_factory.mktemp("probe")
    code = write_bot(base / "bot", PROBE)
    other_code = write_bot(base / "other", "print('the other bot')\n")
    token = secrets.token_hex(16)
    with (
        jail_of(sandbox, "probe-seat0", code) as jail,
        jail_of(sandbox, "probe-seat1", other_code) as other,
    ):
        socket_path = jail.run_dir / "referee.sock"
        listeners = Listeners(socket_path)
        secret = jail.run_dir / "hidden_state"
        secret.write_text("DECK=As,2c,...\n")
        os.chmod(secret, 0o600)
        jail.secure_socket(socket_path)
        inside = jail.inside_run_dir
        args = {
            "tcp_port": listeners.tcp.getsockname()[1],
            "abstract": listeners.abstract_name,
            "socket": f"{inside}/referee.sock",
            "run": inside,
            "code": jail.inside_code_dir,
            "secret": f"{inside}/hidden_state",
            "referee_pid": os.getpid(),
            "other_code": str(other.code_dir / "bot.py"),
            "runs": str(Path(__file__).resolve().parents[1] / "runs"),
            "project": str(Path(__file__).resolve().parents[1]),
        }
        status, out, err = run_bot(jail, json.dumps(args), token=token)
        socket_info = os.lstat(socket_path)
        report = json.loads(out) if status == 0 else {}
        yield {
            "report": report, "status": status, "stderr": err, "jail": jail, "other": other,
            "socket_info": socket_info, "accepted": list(listeners.accepted),
        }  # fmt: skip
        listeners.close()


def report_of(probe_run: dict[str, object]) -> dict[str, object]:
    report = probe_run["report"]
    assert isinstance(report, dict)
    assert report, f"probe failed: status {probe_run['status']}, stderr {probe_run['stderr']}"
    return report


def denied(report: dict[str, object], name: str, *errnos: int) -> None:
    outcome = report[name]
    assert isinstance(outcome, list)
    assert outcome[0] == "err", f"{name} was allowed: {outcome}"
    assert outcome[1] in errnos, f"{name}: {errno.errorcode.get(outcome[1], outcome[1])}"


@pytest.mark.slow
def test_no_network_at_all(probe_run: dict[str, object]) -> None:
    report = report_of(probe_run)
    denied(report, "inet_socket", errno.EPERM)
    denied(report, "inet6_socket", errno.EPERM)
    denied(report, "netlink_socket", errno.EPERM)
    denied(report, "tcp_connect", errno.EPERM, errno.ENETUNREACH)
    denied(report, "abstract", errno.ECONNREFUSED)
    assert "tcp" not in probe_run["accepted"]  # type: ignore[operator]
    assert "abstract" not in probe_run["accepted"]  # type: ignore[operator]


@pytest.mark.slow
def test_reaches_its_referee_socket(probe_run: dict[str, object]) -> None:
    report = report_of(probe_run)
    assert report["referee_socket"] == ["ok", "hi"]
    assert "ref" in probe_run["accepted"]  # type: ignore[operator]


@pytest.mark.slow
def test_code_is_read_only_and_tmp_is_writable(probe_run: dict[str, object]) -> None:
    report = report_of(probe_run)
    denied(report, "write_code_new", errno.EROFS, errno.EACCES)
    denied(report, "write_code_old", errno.EROFS, errno.EACCES)
    denied(report, "write_run", errno.EROFS, errno.EACCES)
    assert report["write_tmp"] == ["ok", None]
    assert report["cwd"] == "/bot"


@pytest.mark.slow
def test_cannot_swap_or_delete_its_socket(probe_run: dict[str, object]) -> None:
    report = report_of(probe_run)
    for name in ("unlink_socket", "rename_socket", "symlink_in_run"):
        denied(report, name, errno.EROFS, errno.EACCES, errno.EPERM)
    jail = probe_run["jail"]
    info = probe_run["socket_info"]
    assert isinstance(jail, BotJail)
    assert isinstance(info, os.stat_result)
    assert stat.S_ISSOCK(info.st_mode)  # still the referee's socket, after the bot tried
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(jail.run_dir).st_mode) in (0o711, 0o700)
    if jail.lease is not None:
        assert info.st_uid == jail.lease.uid


@pytest.mark.slow
def test_cannot_read_secrets_or_touch_the_referee(probe_run: dict[str, object]) -> None:
    need(Layer.USER, Layer.SECCOMP)
    report = report_of(probe_run)
    denied(report, "secret", errno.EACCES)
    denied(report, "referee_environ", errno.ENOENT, errno.EACCES)
    denied(report, "ptrace_referee", errno.EPERM)
    denied(report, "user_namespace", errno.EPERM)
    denied(report, "tiocsti", errno.EPERM)
    pids = report["pids"]
    assert isinstance(pids, list)
    assert len(pids) <= 3, pids


@pytest.mark.slow
def test_sees_nothing_else_of_the_host(probe_run: dict[str, object]) -> None:
    report = report_of(probe_run)
    denied(report, "other_code", errno.ENOENT)
    denied(report, "match_folders", errno.ENOENT)
    root_listing = report["list_root"]
    assert isinstance(root_listing, list)
    assert set(root_listing[1] or []) <= {".pyenv"}  # only the runtime's mount point, if any
    project = report["list_project"]
    assert isinstance(project, list)
    assert set(project[1]) <= {".venv", "protocol", "referee", "sample_bots"}


@pytest.mark.slow
def test_runs_as_its_own_uid_with_no_privileges(probe_run: dict[str, object]) -> None:
    need(Layer.USER)
    report = report_of(probe_run)
    jail, other = probe_run["jail"], probe_run["other"]
    assert isinstance(jail, BotJail)
    assert isinstance(other, BotJail)
    assert jail.lease is not None
    assert other.lease is not None
    assert report["uid"] == jail.lease.uid != other.lease.uid
    status = report["status"]
    assert isinstance(status, dict)
    assert status["CapEff"] == status["CapBnd"] == "0000000000000000"
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    assert report["open_fds"] == [], "fds leaked into the bot"


@pytest.mark.slow
def test_two_jails_cannot_read_each_others_code(probe_run: dict[str, object]) -> None:
    """Even with no bwrap, the user layer alone keeps bot A out of bot B's code."""
    need(Layer.USER)
    jail, other = probe_run["jail"], probe_run["other"]
    assert isinstance(jail, BotJail)
    assert isinstance(other, BotJail)
    assert jail.lease is not None
    drop = ["setpriv", f"--reuid={jail.lease.uid}", f"--regid={jail.lease.gid}", "--clear-groups"]
    result = subprocess.run(
        [*drop, "--", "cat", str(other.code_dir / "bot.py")],
        capture_output=True,
        timeout=10,
        check=False,
    )
    assert result.returncode != 0
    assert b"Permission denied" in result.stderr


@pytest.mark.slow
def test_teardown_removes_folder_and_cgroup(sandbox: Sandbox, tmp_path: Path) -> None:
    code = write_bot(tmp_path / "bot", "import time; print('up', flush=True); time.sleep(60)\n")
    jail = sandbox.prepare("teardown-seat0", code)
    cgroup_paths = jail.cgroup.paths if jail.cgroup else ()
    process = jail.spawn([sys.executable, "bot.py"], bot_env())
    assert read_line(process) == "up"
    assert jail.processes()
    report = jail.teardown()
    finish(jail, process)
    assert report.clean, report
    assert not jail.jail_dir.exists()
    assert not any(path.exists() for path in cgroup_paths)
    assert jail.teardown() is report  # idempotent
    zombies = [z for z in my_zombies() if z.comm == "bwrap" or jail.uid in uids(z.pid)]
    assert zombies == []  # the sandbox's pid-1 process, orphaned to this subreaper, was reaped


@pytest.mark.slow
def test_token_is_in_no_command_line(sandbox: Sandbox, tmp_path: Path) -> None:
    token = secrets.token_hex(20)
    source = "import os, time; print(os.environ['GIN_TOKEN'][:4], flush=True); time.sleep(60)\n"
    code = write_bot(tmp_path / "bot", source)
    with jail_of(sandbox, "token-seat0", code) as jail:
        process = jail.spawn([sys.executable, "bot.py"], bot_env(token))
        assert read_line(process) == token[:4]  # the bot did get it, through its environment
        carriers = [pid for pid in all_pids() if token.encode() in cmdline(pid)]
        finish(jail, process)
    assert carriers == []


# --- limits ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_tmpfs_is_small(tmp_path: Path) -> None:
    need(Layer.BWRAP)
    source = """
    import errno
    try:
        with open("/tmp/fill", "wb") as sink:
            for _ in range(32):
                sink.write(b"x" * (1 << 20))
                sink.flush()
        print("wrote 32 MiB")
    except OSError as error:
        print(errno.errorcode[error.errno])
    """
    with (
        Sandbox(SandboxLimits(tmpfs_mb=8)) as box,
        jail_of(box, "tmpfs", write_bot(tmp_path, source)) as jail,
    ):
        status, out, err = run_bot(jail)
    assert (status, out.strip()) == (0, "ENOSPC"), err


@pytest.mark.slow
def test_memory_bomb_is_stopped(tmp_path: Path) -> None:
    source = """
    hoard = []
    for _ in range(128):  # at most 2 GiB, touched
        hoard.append(b"x" * (16 << 20))
    print("survived")
    """
    with Sandbox(SandboxLimits(memory_mb=128)) as box:
        with jail_of(box, "membomb", write_bot(tmp_path, source)) as jail:
            status, out, err = run_bot(jail)
            oom_kills = jail.oom_kills()
        if box.has(Layer.CGROUP):
            assert killed(status), (status, err[-500:])
            assert oom_kills >= 1
        else:
            assert status != 0
            assert "MemoryError" in err
    assert "survived" not in out


@pytest.mark.slow
def test_fork_bomb_is_capped(tmp_path: Path) -> None:
    need(Layer.CGROUP)
    source = """
    import os, time
    made, failure = 0, "none"
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError as error:
            failure = error.strerror
            break
        if pid == 0:
            time.sleep(10)
            os._exit(0)
        made += 1
    print(made, failure, flush=True)
    """
    limits = SandboxLimits(pids=16)
    with Sandbox(limits) as box, jail_of(box, "forkbomb", write_bot(tmp_path, source)) as jail:
        process = jail.spawn([sys.executable, "bot.py"], bot_env())
        made, _, failure = read_line(process).partition(" ")
        finish(jail, process)
    assert 0 < int(made) < limits.pids
    assert failure == "Resource temporarily unavailable"


@pytest.mark.slow
def test_cpu_spin_ignoring_sigxcpu_is_killed(tmp_path: Path) -> None:
    need(Layer.RLIMITS)
    source = """
    import signal
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    while True:
        pass
    """
    limits = SandboxLimits(cpu_seconds=1, cpu_grace_seconds=1)
    started = time.monotonic()
    with Sandbox(limits) as box, jail_of(box, "cpuspin", write_bot(tmp_path, source)) as jail:
        status, _, err = run_bot(jail)
    assert killed(status), (status, err[-500:])
    assert 1.5 < time.monotonic() - started < 15  # it did burn its 1 + 1 CPU seconds first


# --- cleanup -----------------------------------------------------------------------------------

ESCAPER = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
ready, told = os.pipe()
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.write(told, b"+")  # detached, and deaf to SIGTERM
            time.sleep(120)
        os._exit(0)
for _ in range(3):
    os.read(ready, 1)
print("escaped", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_escapers_and_sigterm_ignorers_are_all_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    with jail_of(sandbox, "escaper", write_bot(tmp_path, ESCAPER)) as jail:
        process = jail.spawn([sys.executable, "bot.py"], bot_env())
        assert read_line(process) == "escaped"
        before = jail.processes()
        assert len(before) >= 4, before  # the bot and its three detached grandchildren at least
        if jail.lease is not None:  # on the host, every one of them has the bot's uid, not 0
            assert all(jail.lease.uid in uids(pid) for pid in before if pid != process.pid)
        report = jail.teardown(grace=0.2)
        finish(jail, process)
    assert report.leftover == ()
    assert set(before) <= set(report.killed)
    assert jail.processes() == []
    assert not any(is_alive(pid) for pid in before)
    if jail.lease is not None:
        assert pids_of_uid(jail.lease.uid) == []


INTERMEDIATE = """
import json, os, sys, time
from pathlib import Path
from referee.sandbox import Sandbox
box = Sandbox(root_dir=Path(sys.argv[1]))
jail = box.prepare("orphan", Path(sys.argv[2]))
process = jail.spawn([sys.executable, "bot.py"], {"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
line = process.stdout.readline()
info = {"pid": process.pid, "uid": jail.uid, "line": line.decode().strip()}
info["cgroups"] = [str(path) for path in jail.cgroup.paths] if jail.cgroup else []
info["stage"] = str(jail.stage_dir)
print(json.dumps(info), flush=True)
os._exit(0)
"""


@pytest.mark.slow
def test_bot_dies_with_the_referee(tmp_path: Path) -> None:
    need(Layer.PDEATHSIG)
    code = write_bot(tmp_path / "bot", "import time; print('up', flush=True); time.sleep(60)\n")
    root = tmp_path / "jails"
    referee = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, str(root), str(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = referee.communicate(timeout=BOT_TIMEOUT_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            referee.kill()
    info = json.loads(out)
    assert info["line"] == "up", err
    pid, uid = int(info["pid"]), info["uid"]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (is_alive(pid) or (uid and pids_of_uid(uid))):
        time.sleep(0.05)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # this test process is a subreaper: it adopted the corpse
    assert not is_alive(pid)
    if uid is not None:
        assert pids_of_uid(uid) == []
    # The dead referee could not clean up: its jail is left, and a sweep takes it all.
    jail_dirs = list(root.iterdir())
    assert len(jail_dirs) == 1
    report = sweep_jails(root)
    assert report.jails == (jail_dirs[0].name,), report
    assert report.problems == ()
    assert report.cgroups == len(info["cgroups"])
    assert list(root.iterdir()) == []
    assert not any(Path(path).exists() for path in info["cgroups"])
    assert not Path(info["stage"]).exists()
    assert sweep_jails(root).empty  # nothing twice


@pytest.mark.slow
def test_a_sweep_leaves_live_jails_alone(sandbox: Sandbox, tmp_path: Path) -> None:
    """Jails of a running referee (this process) are never swept, in this process or another;
    a jail folder without its owner lock counts as being made until it is a minute old."""
    code = write_bot(tmp_path / "bot", "print('hi')\n")
    root = tmp_path / "jails"
    box = Sandbox(root_dir=root)
    with jail_of(box, "alive", code) as jail:
        assert sweep_jails(root).empty
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from referee.sandbox import sweep_jails; from pathlib import "
                f"Path; print(sweep_jails(Path({str(root)!r})).empty)",
            ],
            capture_output=True,
            text=True,
            timeout=BOT_TIMEOUT_S,
            check=True,
        )
        assert other.stdout.strip() == "True", other.stderr
        assert jail.jail_dir.is_dir()
        young = root / "being-made"
        young.mkdir()
        assert sweep_jails(root).empty
        os.utime(young, (time.time() - 120, time.time() - 120))
        assert sweep_jails(root).jails == ("being-made",)
    assert not jail.jail_dir.exists()


# --- degraded mode -----------------------------------------------------------------------------

BARE_PROBE = """
import json, os, resource, socket, subprocess, sys, time
out = {"cwd": os.getcwd()}
try:
    socket.socket(socket.AF_INET).close()
    out["inet"] = "allowed"
except OSError as error:
    out["inet"] = error.errno
out["nofile"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
out["address_space"] = resource.getrlimit(resource.RLIMIT_AS)[0]
out["no_new_privs"] = open("/proc/self/status").read().split("NoNewPrivs:")[1].split()[0]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
out["child"] = child.pid
print(json.dumps(out), flush=True)
time.sleep(60)
"""


@pytest.mark.slow
def test_degraded_mode_keeps_seccomp_rlimits_and_cleanup(tmp_path: Path) -> None:
    """Without user, bwrap and cgroup (switched off here), a bot still gets the seccomp filter
    (through the launcher), rlimits, NO_NEW_PRIVS, and a teardown that finds its children."""
    need(Layer.SECCOMP, Layer.RLIMITS, Layer.PDEATHSIG)
    limits = SandboxLimits(open_files=100)
    off = {Layer.USER, Layer.BWRAP, Layer.CGROUP}
    code = write_bot(tmp_path / "bot", BARE_PROBE)
    with Sandbox(limits, switched_off=off) as box, jail_of(box, "bare", code) as jail:
        assert {w.split("layer ")[1].split(" ")[0] for w in box.warnings} >= {"USER", "BWRAP"}
        assert jail.inside_code_dir == str(code.resolve())  # no copy, no folder but the run one
        assert sorted(os.listdir(jail.jail_dir)) == ["owner.lock", "run"]
        process = jail.spawn([sys.executable, "bot.py"], bot_env())
        report = json.loads(read_line(process))
        child = int(report["child"])
        assert child in jail.processes()
        teardown = jail.teardown(grace=0.1)
        finish(jail, process)
    assert report["cwd"] == str(code.resolve())
    assert report["inet"] == errno.EPERM
    assert report["nofile"] == 100
    assert report["address_space"] == limits.memory_mb * 4 << 20
    assert report["no_new_privs"] == "1"
    assert child in teardown.killed
    assert not is_alive(child)
    assert teardown.clean, teardown


HOLDER = """
import sys
from pathlib import Path
from referee.sandbox import Sandbox
with Sandbox(root_dir=Path(sys.argv[1])) as box:
    jail = box.prepare("holder", Path(sys.argv[2]))
    print(jail.uid, flush=True)
    sys.stdin.readline()  # hold the lease until told (or until the test's end closes stdin)
    print(jail.teardown().clean, flush=True)
"""


@pytest.mark.slow
def test_bot_users_are_exclusive_across_referee_processes(sandbox: Sandbox, tmp_path: Path) -> None:
    need(Layer.USER)
    code = write_bot(tmp_path / "bot", "pass\n")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "jails"), str(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        held = int(read_line(holder))
        with jail_of(sandbox, "mine", code) as jail:
            assert jail.uid is not None
            assert jail.uid != held
        out, err = holder.communicate(b"\n", timeout=BOT_TIMEOUT_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            holder.kill()
    assert out.split() == [b"True"], err


def test_a_sweep_never_takes_a_jail_while_its_lock_is_being_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep at the worst moment, just before the maker's flock, finds nothing to take."""
    root = tmp_path / "jails"
    root.mkdir(mode=0o700)
    folder = root / "being-locked"
    folder.mkdir()
    real_flock = fcntl.flock
    swept: list[str] = []

    def sweep_first(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX:  # the maker's blocking lock, not the sweep's
            swept.extend(sweep_jails(root).jails)
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", sweep_first)
    fd = _sweep.hold_owner_lock(folder)
    try:
        assert swept == []
        assert sorted(os.listdir(folder)) == ["owner.lock"]
        monkeypatch.setattr(fcntl, "flock", real_flock)
        assert sweep_jails(root).empty  # locked now
    finally:
        os.close(fd)
    assert sweep_jails(root).jails == ("being-locked",)  # and free once let go


def test_a_sweep_refuses_what_it_does_not_own(tmp_path: Path) -> None:
    """A jails' folder others may write is not swept at all; a recorded cgroup outside the
    cgroup filesystems (a planted record) is left alone, with its jail."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert sweep_jails(shared).problems
    root = tmp_path / "jails"
    root.mkdir(mode=0o700)
    planted = root / "planted"
    planted.mkdir()
    (planted / "owner.lock").touch()
    target = tmp_path / "gin-not-a-cgroup"
    target.mkdir()
    (target / "cgroup.kill").write_text("0")
    (planted / "cgroups.json").write_text(json.dumps({"version": 2, "dirs": {"": str(target)}}))
    report = sweep_jails(root)
    assert report.jails == ()
    assert "not bot cgroups" in report.problems[0]
    assert (target / "cgroup.kill").read_text() == "0"
    assert planted.is_dir()
