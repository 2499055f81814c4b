"""The sandbox and its jails: a folder, a user, a cgroup, and an exec chain per bot.

The bot is started through command-line exec-wrappers only (never ``preexec_fn``, ``user=`` or
``group=``, which make ``subprocess`` fork a multithreaded, gRPC-running referee). As root the
chain is::

    [unshare --mount]  sh (join cgroup[, stage hidden runtime folders])  prlimit ...
    setpriv --reuid/--regid bot --clear-groups --pdeathsig KILL ...  bwrap ... --seccomp FD
    -- program args

and each link that is unavailable is left out (see ``Sandbox.warnings``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import resource
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final, TypeVar

from protocol.manifest import ignore_rule
from referee.sandbox import _seccomp
from referee.sandbox._base import (
    MIB,
    REQUIRED_LAYERS,
    Layer,
    LayerStatus,
    SandboxLimits,
    SandboxUnavailable,
    TeardownReport,
    safe_name,
)
from referee.sandbox._cgroup import BotCgroup, find_plan, group_name
from referee.sandbox._detect import SECCOMP_EXEC, detect_layers
from referee.sandbox._libc import harden_referee_process
from referee.sandbox._mounts import (
    INSIDE_CODE,
    INSIDE_RUN,
    bwrap_argv,
    proc_views,
    program_dirs,
    project_bytecode,
    reachable,
    runtime_dirs,
    staging_point,
)
from referee.sandbox._placement import place_spawner_thread
from referee.sandbox._procs import (
    descendants,
    forget,
    pids_of_uid,
    reap_orphans,
    started,
    table,
    wait_gone,
)
from referee.sandbox._sweep import (
    SweepReport,
    hold_owner_lock,
    record_cgroup,
    remove_tree,
    sweep_leftovers,
)
from referee.sandbox._tools import sweep_uid, tool
from referee.sandbox._users import STATE_DIR, UserLease, lease_bot_user, private_dir

TERM_GRACE_S: Final = 0.3
KILL_TIMEOUT_S: Final = 3.0
REAP_TIMEOUT_S: Final = 1.0
DEGRADED_ADDRESS_SPACE_FACTOR: Final = 4

# PR_SET_PDEATHSIG fires when the *thread* that forked the bot exits, so every bot is started
# from this one long-lived thread, never from a short-lived worker (trio's thread cache, say).
_SPAWNER: Final = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="gin-spawner")
T = TypeVar("T")


def on_spawner_thread(start: Callable[..., T], *args: Any, bot: bool = False) -> T:  # type: ignore[explicit-any]  # any callable and its arguments, handed to an executor
    """``start(*args)`` on the one long-lived thread every process of ours with a parent-death
    signal is started from, so that the signal comes when this process dies, not when some
    short-lived thread retires. Under a CPU placement (``pin_cpus``) what it starts runs on the
    bots' CPUs if ``bot``, else on the referee's."""
    return _SPAWNER.submit(_placed, bot, start, *args).result()


def _placed(bot: bool, start: Callable[..., T], *args: Any) -> T:  # type: ignore[explicit-any]  # any callable and its arguments, handed to an executor
    place_spawner_thread(bot=bot)
    return start(*args)


def _label_slug(label: str) -> str:
    return safe_name(label, 60) or "bot"


def _mode_for(source: Path, executable: int, plain: int) -> int:
    return executable if os.lstat(source).st_mode & stat.S_IXUSR else plain


def _skip_special(folder: str, names: list[str]) -> set[str]:
    """copytree filter: only regular files, folders and symlinks (no fifos, devices, sockets)."""
    skipped = set()
    for name in names:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skipped.add(name)
    return skipped


def _code_filter(source: Path) -> Callable[[str, list[str]], set[str]]:
    """copytree filter: :func:`_skip_special`, and what is not part of the bot (``.ginignore``)."""
    rule = ignore_rule(source)

    def skip(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).relative_to(source)  # never a left-out one: copytree skipped it
        return _skip_special(folder, names) | {
            name for name in names if rule.leaves_out(here / name)
        }

    return skip


def copy_code(source: Path, target: Path, gid: int | None) -> None:
    """Copy a bot's folder; the copy is owned by the referee, readable by the bot's group only.

    Modes are set, not copied (no setuid bits, nothing writable by the bot): folders and
    executables 0750, other files 0640 (0700/0600 without a bot group).
    """
    dir_mode, file_mode = (0o750, 0o640) if gid is not None else (0o700, 0o600)

    def copy_file(src: str, dst: str) -> None:
        shutil.copyfile(src, dst, follow_symlinks=False)
        os.chmod(dst, _mode_for(Path(src), dir_mode, file_mode))

    shutil.copytree(
        source, target, symlinks=True, ignore=_code_filter(source), copy_function=copy_file
    )
    for folder, subfolders, files in os.walk(target):
        os.chmod(folder, dir_mode)
        if gid is not None:
            for name in [".", *subfolders, *files]:
                os.chown(os.path.join(folder, name), 0, gid, follow_symlinks=False)


def _without(layers: tuple[LayerStatus, ...], off: frozenset[Layer]) -> tuple[LayerStatus, ...]:
    return tuple(
        LayerStatus(status.layer, False, "switched off for this sandbox")
        if status.layer in off and status.active
        else status
        for status in layers
    )


def default_jail_root() -> Path:
    """The jails' folder shared by this uid's referees (unless a sandbox is given its own)."""
    return Path(tempfile.gettempdir()) / f"gin-jails-{os.geteuid()}"


def sweep_jails(root_dir: Path | None = None) -> SweepReport:
    """Sweep what killed referees left in ``root_dir`` (default: the shared jails' folder)."""
    return sweep_leftovers(default_jail_root() if root_dir is None else root_dir)


class Sandbox:
    """Builds jails for bots with every layer that works here.

    ``strict=True`` refuses to build anything unless USER, BWRAP, SECCOMP, CGROUP and RLIMITS all
    work. Otherwise missing layers are skipped and each gets a loud line in ``warnings``.
    """

    def __init__(
        self,
        limits: SandboxLimits = SandboxLimits(),  # noqa: B008 - frozen, so sharing is safe
        *,
        strict: bool = False,
        root_dir: Path | None = None,
        switched_off: Iterable[Layer] = (),
    ) -> None:
        """``switched_off``: layers to leave out on purpose (to test or debug the degraded
        modes); they count as missing, for ``strict`` and ``warnings`` alike."""
        harden_referee_process()
        project_bytecode()  # the bots' imports of the SDK and the rules use the caches
        self.limits = limits
        self.layers: tuple[LayerStatus, ...] = _without(detect_layers(), frozenset(switched_off))
        self.active = frozenset(status.layer for status in self.layers if status.active)
        missing = [s for s in self.layers if s.layer in REQUIRED_LAYERS and not s.active]
        if strict and missing:
            names = "; ".join(f"{s.layer.name} ({s.detail})" for s in missing)
            raise SandboxUnavailable(f"strict sandbox: missing layers: {names}")
        self.warnings: tuple[str, ...] = tuple(s.warning() for s in self.layers if not s.active)
        self.root_dir, self._owns_root = self._make_root(root_dir)

    @staticmethod
    def _make_root(root_dir: Path | None) -> tuple[Path, bool]:
        """The jails' folder, and whether it is this sandbox's own (to remove on ``close``)."""
        if root_dir is not None:
            root_dir.mkdir(parents=True, exist_ok=True)
            return root_dir.resolve(), False
        # One shared folder per uid (bots may cross it to their own jail, not list it); a
        # private temporary one if the shared name is taken by someone else.
        shared = default_jail_root()
        with contextlib.suppress(SandboxUnavailable, OSError):
            return private_dir(shared, 0o711 if os.geteuid() == 0 else 0o700).resolve(), False
        made = Path(tempfile.mkdtemp(prefix="gin-jails-")).resolve()
        os.chmod(made, 0o711)
        return made, True

    def close(self) -> None:
        """Remove the jails' folder if it is a private one made by this sandbox and is empty."""
        if self._owns_root:
            with contextlib.suppress(OSError):
                self.root_dir.rmdir()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def has(self, layer: Layer) -> bool:
        """Whether ``layer`` is in force for the jails of this sandbox."""
        return layer in self.active

    def prepare(self, label: str, code_dir: Path) -> BotJail:
        """Make a fresh jail for the bot in ``code_dir``: folders, user and cgroup."""
        reap_orphans()  # stragglers of earlier jails (see reap_orphans)
        source = code_dir.resolve(strict=True)
        if not source.is_dir():
            raise SandboxUnavailable(f"bot code folder {source} is not a folder")
        jail_dir = self.root_dir / f"{_label_slug(label)}-{secrets.token_hex(4)}"
        jail_dir.mkdir(mode=0o711 if os.geteuid() == 0 else 0o700)
        owner_fd = hold_owner_lock(jail_dir)  # a sweep takes the jail only once we are gone
        lease: UserLease | None = None
        cgroup: BotCgroup | None = None
        try:
            lease = lease_bot_user() if self.has(Layer.USER) else None
            cgroup = self._make_cgroup(label)
            if cgroup is not None:
                record_cgroup(jail_dir, cgroup)
            code = self._place_code(source, jail_dir, lease)
            run_dir = jail_dir / "run"
            run_dir.mkdir(mode=0o711 if lease else 0o700)
            views = self._write_proc_views(jail_dir, lease) if self.has(Layer.BWRAP) else {}
            return BotJail(
                self,
                label=label,
                jail_dir=jail_dir,
                source_dir=source,
                code_dir=code,
                run_dir=run_dir,
                lease=lease,
                cgroup=cgroup,
                owner_fd=owner_fd,
                proc_views=views,
            )
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            remove_tree(jail_dir)
            os.close(owner_fd)
            if lease is not None:
                lease.release()
            raise

    def _write_proc_views(self, jail_dir: Path, lease: UserLease | None) -> dict[str, Path]:
        """The jail's files to cover ``/proc``'s machine-wide ones with (``proc_views``), owned
        by the referee and readable by the bot's group only: inside name -> file."""
        folder = jail_dir / "proc"
        folder.mkdir(mode=0o750 if lease else 0o700)
        written: dict[str, Path] = {}
        for name, text in proc_views(self.limits).items():
            path = folder / name.replace("/", "-")
            path.write_text(text, encoding="ascii")
            os.chmod(path, 0o640 if lease else 0o600)
            if lease is not None:
                os.chown(path, 0, lease.gid)
            written[name] = path
        if lease is not None:
            os.chown(folder, 0, lease.gid)
        return written

    def _make_cgroup(self, label: str) -> BotCgroup | None:
        plan = find_plan()
        if not self.has(Layer.CGROUP) or isinstance(plan, str):
            return None
        return BotCgroup(plan, group_name(label), self.limits)

    def _place_code(self, source: Path, jail_dir: Path, lease: UserLease | None) -> Path:
        if not (self.has(Layer.BWRAP) or lease):
            return source  # bare mode: the run folder is the only thing made
        target = jail_dir / "code"
        copy_code(source, target, lease.gid if lease else None)
        return target


def _cpu_seconds_used(pid: int) -> int | None:
    """The CPU seconds (user and system, rounded up) a process has used; None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, ValueError, IndexError):
        return None
    return -(-ticks // os.sysconf("SC_CLK_TCK"))


class BotJail:
    """One bot's jail. ``spawn`` starts it, ``teardown`` removes every trace (idempotent)."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        label: str,
        jail_dir: Path,
        source_dir: Path,
        code_dir: Path,
        run_dir: Path,
        lease: UserLease | None,
        cgroup: BotCgroup | None,
        owner_fd: int | None = None,
        proc_views: dict[str, Path] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.proc_views = dict(proc_views or {})
        """Inside ``/proc`` name -> the jail's file bound over it (``_write_proc_views``)."""
        self._owner_fd = owner_fd
        self.label = label
        self.jail_dir = jail_dir
        self.source_dir = source_dir
        self.code_dir = code_dir
        self.run_dir = run_dir
        self.lease = lease
        self.cgroup = cgroup
        self.bwrap = sandbox.has(Layer.BWRAP)
        self.inside_run_dir = INSIDE_RUN if self.bwrap else str(run_dir)
        self.inside_code_dir = INSIDE_CODE if self.bwrap else str(code_dir)
        self.uid = lease.uid if lease else None
        self.stage_dir = STATE_DIR / "stage" / jail_dir.name
        """Mount points for hidden sources (empty folders on the host), removed at teardown."""
        self.popens: list[subprocess.Popen[bytes]] = []
        self._lock = threading.RLock()
        self._report: TeardownReport | None = None

    # --- the socket ------------------------------------------------------------------------

    def hold(self, held: bool) -> bool:
        """Freeze the bot's processes where they are (``held``), or thaw them; whether it could
        (only with the cgroup layer)."""
        if self.cgroup is None:
            return False
        self.cgroup.freeze(held)
        return True

    def secure_socket(self, socket_path: Path) -> None:
        """After the referee bound its socket in the run folder: only the bot may connect.

        The socket is given to the bot's uid, mode 0600; the run folder stays root's, 0711, so
        the bot can neither list it nor delete, rename or replace the socket (under bwrap the
        folder is also mounted read-only).
        """
        if socket_path.parent.resolve() != self.run_dir.resolve():
            raise SandboxUnavailable(f"{socket_path} is not in the run folder {self.run_dir}")
        info = os.lstat(socket_path)
        if not stat.S_ISSOCK(info.st_mode):
            raise SandboxUnavailable(f"{socket_path} is not a socket")
        os.chmod(self.run_dir, 0o711 if self.lease else 0o700)
        if self.lease is not None:
            os.chown(self.run_dir, 0, 0, follow_symlinks=False)
            os.chown(socket_path, self.lease.uid, self.lease.gid, follow_symlinks=False)
        os.chmod(socket_path, 0o600)
        after = os.lstat(socket_path)
        if not stat.S_ISSOCK(after.st_mode) or after.st_ino != info.st_ino:
            raise SandboxUnavailable(f"{socket_path} changed while it was being secured")

    # --- starting the bot ----------------------------------------------------------------------

    def spawn(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start ``argv`` in the jail with exactly ``env`` as its environment.

        The environment reaches the bot through ``execve`` only (no ``--setenv``), so the token
        in it never shows in a command line. cwd is the code folder; stdin is /dev/null,
        stdout and stderr are pipes, and the bot leads a new session.
        """
        if not argv:
            raise ValueError("empty argv")
        with self._lock:
            if self._report is not None:
                raise SandboxUnavailable(f"jail {self.label} is torn down")
            program = [self._inside_path(arg) for arg in argv]
            fds: list[int] = []
            try:
                chain = self._chain(program, fds)
                cwd = "/" if self.bwrap else str(self.code_dir)
                popen = on_spawner_thread(_start, chain, env, cwd, fds, bot=True)
                started(popen.pid)
            finally:
                for fd in fds:
                    os.close(fd)
            self.popens.append(popen)
            return popen

    def _inside_path(self, arg: str) -> str:
        """Host paths into the bot's code folder become the paths the bot sees."""
        for host in (self.source_dir, self.code_dir):
            if os.path.isabs(arg) and Path(arg).is_relative_to(host):
                return os.path.join(self.inside_code_dir, Path(arg).relative_to(host))
        return arg

    def _chain(self, program: list[str], fds: list[int]) -> list[str]:
        seccomp_fd = _seccomp.filter_fd() if self.sandbox.has(Layer.SECCOMP) else None
        if seccomp_fd is not None:
            fds.append(seccomp_fd)
        stage: list[tuple[Path, Path]] = []
        if self.bwrap:
            binds = self._binds(program[0], stage)
            limits = self.sandbox.limits
            tmpfs, shm = limits.tmpfs_mb * MIB, limits.shm_mb * MIB
            jail = bwrap_argv(tool("bwrap") or "bwrap", binds, tmpfs, seccomp_fd, shm)
            middle = [*self._prlimit(), *self._setpriv(), *jail]
        else:  # no bwrap: the filter goes in through a launcher, before the uid drop
            launcher = (
                [] if seccomp_fd is None else [sys.executable, "-I", SECCOMP_EXEC, str(seccomp_fd)]
            )
            middle = [*self._prlimit(), *launcher, *self._setpriv()]
        return [*self._root_prelude(stage), *middle, *program]

    def _binds(self, program: str, stage: list[tuple[Path, Path]]) -> list[tuple[Path, str]]:
        """(source, destination) of every read-only bind; hidden sources go through staging
        (folders only: the views of ``/proc`` are bound from their folder, staged or not)."""
        runtime = list(runtime_dirs())
        if not Path(program).is_relative_to(INSIDE_CODE):  # the bot's own program is in /bot
            visible = [Path("/usr"), *runtime, self.source_dir, self.code_dir]
            runtime += program_dirs(program, visible)
        wanted = [(path, str(path)) for path in runtime]
        wanted += [(self.code_dir, INSIDE_CODE), (self.run_dir, INSIDE_RUN)]
        binds = [(self._visible(source, stage), destination) for source, destination in wanted]
        if self.proc_views:
            views = self._visible(next(iter(self.proc_views.values())).parent, stage)
            binds += [
                (views / path.name, f"/proc/{name}") for name, path in self.proc_views.items()
            ]
        return binds

    def _visible(self, source: Path, stage: list[tuple[Path, Path]]) -> Path:
        """Where bwrap, as the bot's uid, finds the folder ``source``: itself, or its staging
        point if the bot may not walk down to it (noted in ``stage``)."""
        if self.lease and not reachable(source, self.lease.uid, self.lease.gid):
            point = staging_point(self.stage_dir, source)
            stage.append((source, point))
            return point
        return source

    def _root_prelude(self, stage: list[tuple[Path, Path]]) -> list[str]:
        """The root-run head of the chain: join the cgroup, stage hidden folders, then exec."""
        lines = [
            f"echo $$ > {shlex.quote(str(procs))} || exit 111" for procs in self._cgroup_procs()
        ]
        mount = tool("mount") or "/usr/bin/mount"
        for source, point in stage:
            lines.append(f"{mount} --bind {shlex.quote(str(source))} {point} || exit 112")
        if not lines:
            return []
        shell = [tool("sh") or "/bin/sh", "-c", "\n".join([*lines, 'exec "$@"']), "gin-jail"]
        if not stage:
            return shell
        unshare = tool("unshare") or "/usr/bin/unshare"
        return [unshare, "--mount", "--propagation", "private", "--", *shell]

    def _cgroup_procs(self) -> list[Path]:
        return self.cgroup.procs_files if self.cgroup else []

    def _prlimit(self) -> list[str]:
        prlimit = tool("prlimit")
        if not self.sandbox.has(Layer.RLIMITS) or prlimit is None:
            return []
        limits = self.sandbox.limits
        cpu_hard = limits.cpu_seconds + limits.cpu_grace_seconds
        size = limits.file_size_mb * MIB
        argv = [prlimit, f"--cpu={limits.cpu_seconds}:{cpu_hard}", f"--fsize={size}:{size}"]
        argv += [f"--nofile={limits.open_files}:{limits.open_files}", "--core=0:0"]
        if self.lease:  # NPROC counts every process of the uid: only useful with a uid of its own
            argv.append(f"--nproc={limits.pids}:{limits.pids}")
        if self.cgroup is None:  # no memory cgroup: cap the address space instead (coarse)
            space = limits.memory_mb * MIB * DEGRADED_ADDRESS_SPACE_FACTOR
            argv.append(f"--as={space}:{space}")
        return [*argv, "--"]

    def _setpriv(self) -> list[str]:
        setpriv = tool("setpriv")
        if setpriv is None:
            return []
        argv = [setpriv, "--no-new-privs"]
        if self.sandbox.has(Layer.PDEATHSIG):
            argv += ["--pdeathsig", "KILL"]
        if self.lease is not None:
            argv += [f"--reuid={self.lease.uid}", f"--regid={self.lease.gid}", "--clear-groups"]
            argv += ["--bounding-set=-all", "--inh-caps=-all"]
        return [*argv, "--"]

    # --- looking and cleaning up ----------------------------------------------------------------

    def processes(self) -> list[int]:
        """Live pids of the jail: its cgroup, its uid, and the started processes' trees."""
        snapshot = table()
        living = {found.pid for found in snapshot if found.alive}
        found: set[int] = set(self.cgroup.pids()) if self.cgroup else set()
        if self.lease is not None:
            found.update(pids_of_uid(self.lease.uid, snapshot))
        roots = [popen.pid for popen in self.popens if popen.returncode is None]
        found.update(roots)
        found.update(descendants(roots, snapshot))
        return sorted(found & living)

    def renew_cpu_limit(self) -> bool:
        """Before a sitting's next series: give each of the jail's processes its CPU-seconds
        limit anew, counted from the CPU it has used so far, so that the series gets what a fresh
        process would. Where the kernel refuses that (raising another user's limit needs
        ``CAP_SYS_RESOURCE`` over it, which some hosts withhold even from root), whether every
        process still has at least half its limit left; a bot that has not is started afresh.
        """
        limits = self.sandbox.limits
        renewed = True
        for pid in self.processes():
            used = _cpu_seconds_used(pid)
            if used is None:
                continue  # gone meanwhile
            soft = used + limits.cpu_seconds
            try:
                resource.prlimit(pid, resource.RLIMIT_CPU, (soft, soft + limits.cpu_grace_seconds))
            except OSError:
                renewed = renewed and used <= limits.cpu_seconds / 2
        return renewed

    def oom_kills(self) -> int:
        """Processes of the jail taken by the OOM killer (0 without a memory cgroup)."""
        return self.cgroup.oom_kills() if self.cgroup else 0

    def teardown(self, grace: float = TERM_GRACE_S) -> TeardownReport:
        """SIGTERM, a short grace, then SIGKILL everything of the jail; remove its folders.

        Idempotent: later calls return the first report. The bot's uid is only given back
        when nothing of it is left alive.
        """
        with self._lock:
            if self._report is None:
                self._report = self._teardown(grace)
            return self._report

    def _teardown(self, grace: float) -> TeardownReport:
        seen = set(self.processes())
        self._terminate(seen, grace)
        self._kill_all(seen)
        leftover = tuple(self.processes())
        self._reap(seen)
        notes: list[str] = []
        cgroup_removed = self.cgroup.remove() if self.cgroup and not leftover else not self.cgroup
        folder_removed = False
        if not cgroup_removed:
            # Kept with its record of the cgroup and its lock: a sweep takes both once we are gone.
            notes.append("cgroup could not be removed")
        else:
            folder_removed = all([remove_tree(self.jail_dir), remove_tree(self.stage_dir)])
        if folder_removed and self._owner_fd is not None:
            os.close(self._owner_fd)  # what could not be removed stays locked for a later sweep
            self._owner_fd = None
        if self.lease is not None:
            if leftover:
                notes.append(f"uid {self.lease.uid} kept out of use: processes {list(leftover)}")
            else:
                self.lease.release()
        return TeardownReport(
            tuple(sorted(seen)), leftover, folder_removed, cgroup_removed, tuple(notes)
        )

    def _terminate(self, seen: set[int], grace: float) -> None:
        """SIGTERM to the bot's processes; wait up to ``grace`` for the started ones to end."""
        outer = {popen.pid for popen in self.popens} if self.bwrap else set()
        for pid in seen - outer:  # bwrap's outer process would SIGKILL the inside at once
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        if seen:
            wait_gone(seen, grace)

    def _kill_all(self, seen: set[int]) -> None:
        """SIGKILL by every handle there is, until nothing is left or time runs out."""
        deadline_left = KILL_TIMEOUT_S
        while deadline_left > 0:
            for popen in self.popens:
                if popen.poll() is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(popen.pid, signal.SIGKILL)
            if self.cgroup is not None:
                self.cgroup.kill()
            if self.lease is not None:
                sweep_uid(self.lease.uid, self.lease.gid)
            alive = self.processes()
            seen.update(alive)
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if not wait_gone(alive, 0.2):
                return
            deadline_left -= 0.2

    def _reap(self, seen: set[int]) -> None:
        for popen in self.popens:
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=REAP_TIMEOUT_S)
            if popen.returncode is not None:
                forget(popen.pid)
        jail_uids = [self.lease.uid] if self.lease else []
        reap_orphans(seen - {popen.pid for popen in self.popens}, jail_uids)


def _start(
    chain: list[str], env: dict[str, str], cwd: str, fds: list[int]
) -> subprocess.Popen[bytes]:
    """Popen on the spawner thread (see ``_SPAWNER``)."""
    return subprocess.Popen(
        chain,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        pass_fds=tuple(fds),
    )
