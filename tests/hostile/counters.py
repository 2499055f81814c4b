"""A hostile bot that watches the machine-wide counters of ``/proc`` for the referee's and the
other bot's activity: it reads each, sleeps while they work, reads again, and says whether any
moved. ``PROBE counter_<file> ALLOWED moved`` means it saw the machine change (the jail's own
figures never do); it also reports what the files say of the machine. Then it plays greedy."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

from protocol.sdk import Bot
from referee.rules import Action, GreedyPolicy, Observation

COUNTERS = (
    "stat", "loadavg", "meminfo", "uptime", "pressure/cpu", "pressure/io", "pressure/memory",
    "vmstat", "schedstat", "interrupts", "softirqs", "diskstats",
)  # fmt: skip


def read(name: str) -> str | None:
    try:
        with open(f"/proc/{name}") as handle:
            return handle.read()
    except OSError:
        return None


def machine(first: dict[str, str | None]) -> dict[str, object]:
    """What the files say of the machine: CPUs counted, memory, load."""
    stat, meminfo, loadavg = first["stat"] or "", first["meminfo"] or "", first["loadavg"] or ""
    cpus = sum(1 for line in stat.splitlines() if line[:3] == "cpu" and line[3:4].isdigit())
    total = next((line.split()[1] for line in meminfo.splitlines() if line.startswith("MemT")), "")
    return {
        "cpus": cpus,
        "mem_total_kb": total,
        "loadavg": loadavg.strip(),
        "os_cpus": os.cpu_count(),
    }


def watch(seconds: float) -> None:
    first = {name: read(name) for name in COUNTERS}
    time.sleep(seconds)  # the referee and the other bot are busy meanwhile
    for name in COUNTERS:
        again = read(name)
        if first[name] is None:
            verdict = "BLOCKED absent"
        elif again != first[name]:
            verdict = "ALLOWED moved"
        else:
            verdict = "BLOCKED still"
        print(f"PROBE counter_{name.replace('/', '_')} {verdict}", file=sys.stderr)
    print(f"MACHINE {json.dumps(machine(first))}", file=sys.stderr, flush=True)


class Counters(Bot):
    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return GreedyPolicy()(view, legal)


if __name__ == "__main__":
    watch(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    sys.exit(Counters().run())
