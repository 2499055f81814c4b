"""The bot sandbox: layers of isolation around each untrusted bot process.

The referee is the gRPC server; each bot is a client that may reach one Unix socket, the
``referee.sock`` in its own run folder, and nothing else. ``Sandbox`` finds out which layers
work on this machine (``detect_layers``), and ``Sandbox.prepare`` builds a ``BotJail`` per bot:

* USER: its own system user and group (``ginbot<N>``), leased exclusively across referees;
* BWRAP: bubblewrap, with no network, its own pid/ipc/uts/user namespaces, read-only code at
  ``/bot``, its run folder at ``/run/bot``, a small ``/tmp`` and nothing else of the host;
* SECCOMP: a deny-list (only Unix sockets; no ptrace, namespaces, bpf, io_uring, TIOCSTI...);
* CGROUP: memory, pids and CPU caps and a kill switch for everything the bot started
  (no CPU cap where the ``cpu`` controller is missing: the layer's detail says);
* RLIMITS: CPU time, file size, open files, no core dumps;
* PDEATHSIG: the kernel kills the bot when the referee dies;
* NON_DUMPABLE: the referee cannot be ptraced or read through /proc, and adopts orphans.

Apart from the layers, ``pin_cpus(CpuPlacement.split())`` puts the referee and its bots on
separate CPUs (opt-in, for speed and steadier timing; see ``_placement``).

Each jail folder holds an owner lock for the life of its referee; ``sweep_jails`` removes the
jails (cgroups, stage folders, straggling bot-user processes) of referees that were killed.

Call ``harden_referee_process()`` first thing at start-up (the CLI does): it sets
``GRPC_ENABLE_FORK_SUPPORT=0``, which only counts before ``grpc`` is imported. See
``docs``/DESIGN decision 5 and ``research/sandbox.md`` for the reasoning and measurements.
"""

from referee.sandbox._base import (
    REQUIRED_LAYERS,
    Layer,
    LayerStatus,
    SandboxLimits,
    SandboxUnavailable,
    TeardownReport,
    safe_name,
)
from referee.sandbox._detect import describe_layers, detect_layers
from referee.sandbox._jail import (
    BotJail,
    Sandbox,
    default_jail_root,
    on_spawner_thread,
    sweep_jails,
)
from referee.sandbox._libc import harden_referee_process, hardening_state
from referee.sandbox._placement import CpuPlacement, current_placement, pin_cpus
from referee.sandbox._sweep import SweepReport, hold_owner_lock, remove_tree
from referee.sandbox._users import private_dir

__all__ = [
    "REQUIRED_LAYERS",
    "BotJail",
    "CpuPlacement",
    "Layer",
    "LayerStatus",
    "Sandbox",
    "SandboxLimits",
    "SandboxUnavailable",
    "SweepReport",
    "TeardownReport",
    "current_placement",
    "default_jail_root",
    "describe_layers",
    "detect_layers",
    "harden_referee_process",
    "hardening_state",
    "hold_owner_lock",
    "on_spawner_thread",
    "pin_cpus",
    "private_dir",
    "remove_tree",
    "safe_name",
    "sweep_jails",
]
