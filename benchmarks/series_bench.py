"""A sandboxed series beside its floor and its peers: ``python -m benchmarks.series_bench``.

On the same deals, side by side, the variants interleaved over ``--runs`` runs (the order
rotates each run; a figure is the median of its runs, a ratio the median of the per-run ratios):

* **floor**: the series in this process, ``referee.rules.play_series`` with the sample bots'
  own classes (``as_policy()``), one after the other. CPU is ``time.process_time`` around the
  series, wall ``perf_counter``; the policies' CPU is timed around each call of theirs.
* **now -j J** / **base -j J**: the league of the two bots played by ``benchmarks/league_driver.py``
  (``LeagueRunner``, warm workers, every sandbox layer, logs) with this checkout's code, and with
  the code of ``--base`` (``bf2593a``; its own virtual environment under ``build/bench-base/``,
  made once by ``benchmarks.throughput_bench.base_checkout``).
* **pipe -j J**: ``benchmarks/pipe_referee.py``, a plain referee over JSON lines on the bots'
  stdin and stdout (``benchmarks/bots/pipe_bot.py`` around the same bot classes), two fresh bot
  processes per series, J series at once, no sandbox, no gRPC, no log.

The deals: the league file has a fixed ``seed`` and ``public_deals``, so its secret is the seed
alone and every series' deal seed is ``tournaments.league.schedule``'s (``derive_seed`` of that
secret, the pairing and the index); the floor and the pipe peer are given the same schedule.
Every variant's series results (winner, totals, hands) are compared, series by series: for
deterministic bots (greedy, strong) they must agree, and the report says where they do not.

How the CPU is measured. Each league and pipe run is a child process started inside fresh
cgroups of its own (``series-bench-*``, in every cgroup v1 hierarchy the sandbox uses, and
``cpuacct``): the sandbox makes each bot's cgroup below its referee's, so the bots' jails
nest in ours, and ``cpuacct.usage`` is the CPU of the driver, its workers and every bot
process, reaped or not. ``getrusage(RUSAGE_CHILDREN)`` around the same child is shown beside it
(``rusage sees``): a bot's time reaches it only if every process between the bot and the
driver waits for its children. Without the ``cpuacct`` hierarchy (cgroup v2, not root) the CPU
is rusage's alone, and the report says so. The driver's own CPU before the league starts (its
imports, the bots' submission, the schedule) is left out of every figure; so are the pipe
referee's imports. What is left: the series, the workers' start and exit, the runner.

The breakdown (one league's series, medians over runs) splits that CPU:

* **bot start-ups and closes**: bot processes started (the jails seen in our cgroup, polled
  every 20 ms) times the CPU of one start and close, from ``league_driver.py --startups``
  (greedy, to the hello and back out: the jail made and removed by the referee, and the bot's
  processes, which it reaps). Measured apart, on an idle referee: it cannot see what a start
  costs beside a running series, nor a Node or Go bot's start.
* **bot side, per decision**: the bots' CPU less their starts and the policies. The bots' CPU is
  the cgroup's total less the driver (its ``RUSAGE_SELF``) and the workers (each one's own
  ``RUSAGE_SELF``, all its threads, written as it exits: the driver starts its workers through a
  few lines that run ``tournaments.executors.worker`` and write it at exit; a worker killed writes
  none and is counted at the CPU of a bare worker start). The workers' ``RUSAGE_CHILDREN`` (the
  bots' processes they reaped, and the orphans they adopted as subreapers) is shown beside it as a
  check. What it holds: the SDK, gRPC's threads and the interpreter of the bot processes.
* **referee, per decision**: the workers' CPU less their own start (a bare ``python -m
  tournaments.executors.worker`` with no jobs) and the referee's side of the bot starts: the match
  loop, the bridge, grpc core, protobuf, the bookkeeping, the log, and the kernel's scheduling of
  it.
* **the policies themselves**: from the floor (the same deals, the same decisions).
* **the rest**: the runner (the driver after its setup) and the workers' own starts.

It cannot see: a split inside a process (the referee's transport against its bookkeeping, the
SDK against gRPC: ``benchmarks.sdk_bench`` and ``benchmarks.referee_bench`` time those), the
time a process waits (wall, not CPU), nor the machine's other load, which inflates every
figure alike: compare the variants of one run, as ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.bots.pipe_bot import make_bot
from benchmarks.harness import environment, write_report
from benchmarks.pipe_referee import Planned, Played
from protocol.manifest import load_manifest
from referee.rules import Action, Observation, Policy, RuleParams, play_series
from tournaments.league import LeagueConfig, league_secret, schedule

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benchmarks" / "league_driver.py"
SAMPLES = ROOT / "sample_bots"
BASE = "bf2593a"
LEAGUE_NAME = "speed"
"""The league driver's league name: part of the league secret, so of every deal seed."""
MATCHUPS: dict[str, tuple[str, str]] = {
    "greedy:strong": ("greedy", "strong"),
    "greedy:greedy": ("greedy", "greedy"),
    "node:greedy": ("node", "greedy"),
    "go:greedy": ("go", "greedy"),
}
IN_PROCESS = frozenset({"greedy", "strong", "random"})
"""The sample bots the floor and the pipe peer can play (Python classes)."""
HIERARCHIES = ("cpuacct", "memory", "pids", "freezer", "cpu")
"""The cgroup v1 hierarchies a measured run is put in: cpuacct to count, the sandbox's so that
the bots' own groups nest in ours (and can be counted)."""
console = Console(width=max(shutil.get_terminal_size().columns, 132))


class BenchError(Exception):
    """The benchmark cannot go on (a variant failed): said in one line."""


# --- the deals ------------------------------------------------------------------------------


def idents(bots: Sequence[str]) -> list[str]:
    """The bots' ``name@version`` as the league driver submits them (a bot twice: copies named
    ``NAME-INDEX``)."""
    found = []
    for index, bot in enumerate(bots):
        manifest = load_manifest(SAMPLES / bot)
        name = f"{manifest.name}-{index}" if bots.count(bot) > 1 else manifest.name
        found.append(f"{name}@{manifest.version}")
    return found


def league_plan(bots: tuple[str, str], series: int, seed: int) -> list[Planned]:
    """The series of the driver's league of ``bots`` with ``--seed seed --public-deals``: each
    one's index, the bot (sample folder name) in each seat, its deal seed."""
    names = idents(bots)
    config = LeagueConfig.from_dict(
        {
            "name": LEAGUE_NAME,
            "seed": seed,
            "public_deals": True,
            "bots": names,
            "series_per_pairing": series,
        }
    )
    kind = dict(zip(names, bots, strict=True))
    rows = schedule(config, names, league_secret(config, b""))
    return [Planned(row.series_index, (kind[row.seat0], kind[row.seat1]), row.seed) for row in rows]


# --- measuring a child process --------------------------------------------------------------


def _own_paths() -> dict[str, str]:
    """This process's cgroup path in each v1 hierarchy, by controller."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


def _mounts() -> dict[str, Path]:
    """The mount point of each cgroup v1 controller."""
    found: dict[str, Path] = {}
    for line in Path("/proc/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[2] == "cgroup":
            for option in fields[3].split(","):
                found.setdefault(option, Path(fields[1]))
    return found


class CpuGroup:
    """Fresh cgroups for one child process: its CPU (``cpuacct``) and the bots' jails in it."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self.jails: set[str] = set()
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)

    @classmethod
    def make(cls, label: str) -> CpuGroup | None:
        """The groups, or None where there is no cpuacct hierarchy or they cannot be made."""
        mounts, own = _mounts(), _own_paths()
        if os.geteuid() != 0 or "cpuacct" not in mounts:
            return None
        dirs: dict[str, Path] = {}
        for controller in HIERARCHIES:
            if controller in mounts and mounts[controller] not in dirs.values():
                folder = mounts[controller] / own.get(controller, "/").lstrip("/") / label
                try:
                    folder.mkdir()
                except OSError:
                    continue
                dirs[controller] = folder
        group = cls(dirs)
        if "cpuacct" not in dirs:
            group.remove()
            return None
        return group

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run by a shell that first moves itself into every group."""
        joins = "; ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self)
        return ["sh", "-c", f'{joins}; exec "$@"', "sh", *argv]

    def __iter__(self) -> Iterator[Path]:
        return iter(self.dirs.values())

    def usage_s(self) -> float:
        """The CPU of every process that ran in the group (its subgroups' too), seconds."""
        return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    def _poll(self) -> None:
        where = self.dirs.get("memory") or self.dirs.get("pids")
        while where is not None and not self._stop.wait(0.02):
            with contextlib.suppress(OSError):
                self.jails.update(p.name for p in where.iterdir() if _is_jail(p.name))

    def __enter__(self) -> CpuGroup:
        self._poller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._poller.join()
        self.remove()

    def remove(self) -> None:
        """rmdir the groups (and any jail group left in them)."""
        for folder in self:
            for leftover in (p for p in folder.iterdir() if p.is_dir()):
                with contextlib.suppress(OSError):
                    leftover.rmdir()
            with contextlib.suppress(OSError):
                folder.rmdir()


def _is_jail(name: str) -> bool:
    """A bot's cgroup (``gin-LABEL-HEX``), not the sandbox's probe of its cgroup layer."""
    return name.startswith("gin-") and not name.startswith("gin-probe-")


@dataclass(frozen=True)
class Child:
    """One measured child process: what it wrote, its wall time, and its CPU."""

    document: dict[str, Any]
    rusage_s: float
    """Its and its reaped descendants' CPU, as ``getrusage(RUSAGE_CHILDREN)`` saw it."""
    group_s: float | None
    """Every process of its cgroup, as ``cpuacct`` saw it (None: no cgroup here)."""
    jails: int
    """Bot cgroups seen in its group (None-like 0 without one)."""


def children_cpu() -> float:
    """CPU of this process's reaped children so far, seconds."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_labels = iter(range(1 << 30))


def measure(argv: list[str], cwd: Path, out: Path) -> Child:
    """Run ``argv`` (which writes JSON to ``out``) in fresh cgroups and measure it.

    Raises:
        BenchError: it failed.
    """
    group = CpuGroup.make(f"series-bench-{os.getpid()}-{next(_labels)}")
    with group or contextlib.nullcontext():
        before = children_cpu()
        done = subprocess.run(
            group.wrap(argv) if group else argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        rusage = children_cpu() - before
        used = group.usage_s() if group else None
        jails = len(group.jails) if group else 0
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BenchError(f"{' '.join(argv[:3])} ... failed (exit {done.returncode}): {tail}")
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return Child(document, rusage, used, jails)


# --- the variants ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """A version of the code: where it is and its Python."""

    name: str
    root: Path
    python: Path


@dataclass(frozen=True)
class Sample:
    """One variant's run: per-series figures and the series' results."""

    wall_s: float
    """Wall time of all the series (setup excluded)."""
    cpu_s: float
    """CPU of all the series (setup excluded): the cgroup's where there is one, else rusage's."""
    series: int
    results: tuple[tuple[Any, ...], ...]
    """(index, seats, seed, winner, totals, hands) per series, in index order."""
    decisions: int
    rusage_share: float | None = None
    """How much of the cgroup's CPU rusage saw (None: one of them is missing)."""
    parts: dict[str, float] = field(default_factory=dict)
    """Where the CPU went, seconds (leagues: driver, workers, bots, jails; floor: policies)."""


def result_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What two variants must agree on for one series (of a result row written as JSON): its
    index, seats, deal seed, winner, totals and hands."""
    totals = tuple(tuple(seat) for seat in row["totals"])
    return (row["index"], tuple(row["seats"]), row["seed"], row["winner"], totals, row["hands"])


class TimedPolicy:
    """A policy whose calls are counted and timed (CPU)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.cpu_s = 0.0
        self.calls = 0

    def __call__(self, view: Observation, legal: Sequence[Action]) -> Action:
        started = time.process_time()
        action = self.policy(view, legal)
        self.cpu_s += time.process_time() - started
        self.calls += 1
        return action


def floor_results(plan: list[Planned]) -> tuple[list[Played], float]:
    """Every series of the plan in this process (fresh bots each), and the policies' CPU."""
    played, policies = [], 0.0
    for series in plan:
        seats = [TimedPolicy(make_bot(kind).as_policy()) for kind in series.seats]
        result = play_series(seats[0], seats[1], series.seed, RuleParams())
        calls = sum(seat.calls for seat in seats)
        policies += sum(seat.cpu_s for seat in seats)
        played.append(
            Played(
                series.index,
                series.seats,
                series.seed,
                result.winner,
                result.totals,
                len(result.hands),
                calls,
            )
        )
    return played, policies


def run_floor(plan: list[Planned]) -> Sample:
    """The in-process floor."""
    cpu, wall = time.process_time(), time.perf_counter()
    played, policies = floor_results(plan)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Sample(
        wall,
        cpu,
        len(plan),
        _keys(played),
        sum(p.decisions for p in played),
        parts={"policies": policies},
    )


def _keys(played: Sequence[Played]) -> tuple[tuple[Any, ...], ...]:
    return tuple(result_key(asdict(p)) for p in played)


def _share(child: Child) -> float | None:
    return child.rusage_s / child.group_s if child.group_s else None


def run_pipe(plan: list[Planned], jobs: int) -> Sample:
    """The pipe peer, as a child process."""
    with tempfile.TemporaryDirectory() as folder:
        plan_file, out = Path(folder) / "plan.json", Path(folder) / "out.json"
        plan_file.write_text(json.dumps({"series": [asdict(series) for series in plan]}))
        argv = [sys.executable, "-m", "benchmarks.pipe_referee", str(plan_file), str(out)]
        child = measure([*argv, "--jobs", str(jobs)], ROOT, out)
    doc = child.document
    total = (child.group_s if child.group_s is not None else child.rusage_s) - doc["setup_cpu_s"]
    played = [Played(**{**row, "seats": tuple(row["seats"])}) for row in doc["results"]]
    return Sample(
        doc["wall_s"],
        total,
        len(plan),
        _keys(played),
        sum(p.decisions for p in played),
        _share(child),
    )


def run_league(code: Code, bots: tuple[str, str], series: int, jobs: int, seed: int) -> Sample:
    """The sandboxed league by ``code``, as a child process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.json"
        argv = [str(code.python), str(DRIVER), str(out), "--series", str(series)]
        argv += ["--jobs", str(jobs), "--bots", ",".join(bots), "--seed", str(seed)]
        child = measure([*argv, "--public-deals"], code.root, out)
    doc = child.document
    setup = doc["setup_cpu_s"]["self"] + doc["setup_cpu_s"]["children"]
    total = (child.group_s if child.group_s is not None else child.rusage_s) - setup
    kind = dict(zip(idents(bots), bots, strict=True))
    rows = sorted(doc["results"], key=lambda row: row["index"])
    faulted = sum(1 for row in rows if row["faults"])
    if faulted:
        raise BenchError(f"{code.name}: {faulted} of {len(rows)} series of {bots} had faults")
    keys = tuple(result_key({**r, "seats": [kind[seat] for seat in r["seats"]]}) for r in rows)
    workers = doc.get("worker_cpu_s", [])
    parts = {
        "driver": doc["end_cpu_s"]["self"] - doc["setup_cpu_s"]["self"],
        "workers": sum(w["self"] for w in workers),
        "workers_children": sum(w["children"] for w in workers),
        "workers_seen": float(len(workers)),
        "workers_started": float(doc.get("workers_started") or len(workers)),
        "jails": float(child.jails),
        "group": float(child.group_s is not None),
    }
    decisions = sum(row["decisions"] for row in rows)
    return Sample(doc["wall_s"], total, series, keys, decisions, _share(child), parts)


def startup_cpu(code: Code, count: int) -> dict[str, float]:
    """One greedy bot start and close by ``code`` (medians): CPU of the referee's side
    (``self``) and of the bot's processes (``children``), seconds; and the start's wall, ms."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out.json"
        argv = [str(code.python), str(DRIVER), str(out), "--startups", str(count)]
        child = measure(argv, code.root, out)
    cpu = child.document["startup_cpu_s"]
    return {
        "self": statistics.median(c["self"] for c in cpu),
        "children": statistics.median(c["children"] for c in cpu),
        "wall_ms": statistics.median(child.document["startup_ms"]),
    }


def worker_start_cpu(code: Code) -> float:
    """CPU of a bare worker process of ``code``: started, given no job, gone (seconds)."""
    before = children_cpu()
    done = subprocess.run(
        [str(code.python), "-m", "tournaments.executors.worker"],
        cwd=code.root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise BenchError(f"{code.name}: a bare worker failed (exit {done.returncode})")
    return children_cpu() - before


# --- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One variant of one matchup: a timed call per run."""

    matchup: str
    variant: str
    jobs: int
    run: Callable[[], Sample]


def missing(bot: str, root: Path = ROOT) -> str | None:
    """Why a sample bot of the code in ``root`` cannot play here (None: it can)."""
    samples = root / "sample_bots"
    if bot == "node" and shutil.which("node") is None:
        return "node is not installed"
    if bot == "node" and not (samples / "node" / "node_modules").is_dir():
        return f"the Node bot of {root} is not built (make node-bot)"
    if bot == "go" and not (samples / "go" / "gin-go-bot").is_file():
        return f"the Go bot of {root} is not built (make go-bot)"
    return None


def build_bots(code: Code, bots: Sequence[str]) -> str | None:
    """Build the Node and Go bots of ``code`` where they are missing (``make``, once); why
    one still cannot play, or None."""
    targets = sorted({f"{bot}-bot" for bot in bots if missing(bot, code.root)})
    if targets:
        console.log(f"building {', '.join(targets)} in {code.root} (once)")
        subprocess.run(["make", "-C", str(code.root), *targets], capture_output=True, check=False)
    return next((why for bot in bots if (why := missing(bot, code.root))), None)


def tasks_of(
    matchup: str, jobs: Sequence[int], codes: Sequence[Code], series: int, seed: int
) -> list[Task]:
    """Every variant of one matchup: the floor and the pipe peer where the bots are Python
    classes, and each code's league, at each ``-j``."""
    bots = MATCHUPS[matchup]
    plan = league_plan(bots, series, seed)
    found = []
    in_process = set(bots) <= IN_PROCESS
    if in_process:
        found.append(Task(matchup, "floor", 1, lambda: run_floor(plan)))
    for j in jobs:
        for code in codes:
            found.append(
                Task(matchup, f"{code.name} -j {j}", j, _league_call(code, bots, series, j, seed))
            )
        if in_process:
            found.append(Task(matchup, f"pipe -j {j}", j, _pipe_call(plan, j)))
    return found


def _league_call(
    code: Code, bots: tuple[str, str], series: int, jobs: int, seed: int
) -> Callable[[], Sample]:
    return lambda: run_league(code, bots, series, jobs, seed)


def _pipe_call(plan: list[Planned], jobs: int) -> Callable[[], Sample]:
    return lambda: run_pipe(plan, jobs)


def play_runs(tasks: list[Task], codes: Sequence[Code], runs: int, starts: int) -> Measured:
    """Every task once per run, the order rotating; each run also times each code's bot
    start-ups and bare worker."""
    measured = Measured()
    for run in range(runs):
        shift = run % len(tasks)
        for task in tasks[shift:] + tasks[:shift]:
            if (task.matchup, task.variant) in measured.failed:
                continue
            try:
                measured.samples[task.matchup, task.variant].append(task.run())
            except BenchError as error:  # left out of every run, and said
                console.print(f"[red]{task.matchup} {task.variant} left out: {error}[/]")
                measured.failed[task.matchup, task.variant] = str(error)
                measured.samples.pop((task.matchup, task.variant), None)
        for code in codes if run % 2 == 0 else list(reversed(codes)):
            measured.startups[code.name].append(startup_cpu(code, starts))
            measured.worker_starts[code.name].append(worker_start_cpu(code))
        console.log(f"run {run + 1}/{runs} done")
    return measured


@dataclass
class Measured:
    """Every run's samples, by (matchup, variant), and each code's start-up figures."""

    samples: dict[tuple[str, str], list[Sample]] = field(default_factory=lambda: defaultdict(list))
    startups: dict[str, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    worker_starts: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    """Variants that failed once, and why (left out of every run)."""


def per_series_ms(samples: Sequence[Sample], of: Callable[[Sample], float]) -> float:
    """Median over runs of ``of`` per series, in ms."""
    return statistics.median(of(sample) / sample.series * 1000 for sample in samples)


def ratio(mine: Sequence[Sample], theirs: Sequence[Sample], of: Callable[[Sample], float]) -> float:
    """Median of the per-run ratios of ``of`` (per series)."""
    return statistics.median(
        (of(a) / a.series) / (of(b) / b.series) for a, b in zip(mine, theirs, strict=True)
    )


def agreement(measured: Measured, matchup: str) -> dict[str, Any]:
    """Whether every variant of a matchup played the same series (results), run by run."""
    variants = {v: s for (m, v), s in measured.samples.items() if m == matchup}
    reference = "floor" if "floor" in variants else next(iter(variants))
    expected = variants[reference][0].results
    differing: dict[str, list[Any]] = {}
    for variant, samples in variants.items():
        for sample in samples:
            wrong = [(a, b) for a, b in zip(expected, sample.results, strict=True) if a != b]
            if wrong:
                differing.setdefault(variant, []).extend(wrong)
    return {"reference": reference, "series": len(expected), "differing": differing}


def breakdown_run(
    sample: Sample, start: dict[str, float], worker_start: float, policies: float
) -> dict[str, float]:
    """One league's CPU split into the parts of the module docstring (seconds, all series)."""
    p = sample.parts
    unseen = max(0.0, p["workers_started"] - p["workers_seen"])
    bots = sample.cpu_s - p["driver"] - p["workers"] - unseen * worker_start
    referee = p["workers"] - p["workers_seen"] * worker_start
    starts = p["jails"] if p["group"] else 2.0 * sample.series
    return {
        "bot start-ups and closes": starts * (start["self"] + start["children"]),
        "bot side, per decision": bots - starts * start["children"] - policies,
        "referee, per decision": referee - starts * start["self"],
        "the policies themselves": policies,
        "the rest (runner, worker starts)": p["driver"] + p["workers_started"] * worker_start,
        "bot processes started (count)": starts,
        "bots' CPU: reaped by workers": p["workers_children"],
        "bots' CPU: cgroup less the rest": bots,
    }


PARTS = 5
"""The first rows of :func:`breakdown_run` that add up to the whole."""


def breakdown(measured: Measured, matchup: str, code: str, jobs: int) -> dict[str, Any] | None:
    """Medians over runs of one code's league split (None without a floor for the policies)."""
    leagues = measured.samples.get((matchup, f"{code} -j {jobs}"))
    floors = measured.samples.get((matchup, "floor"))
    if not leagues or not floors:
        return None
    split = [
        breakdown_run(league, start, worker, floor.parts["policies"])
        for league, floor, start, worker in zip(
            leagues, floors, measured.startups[code], measured.worker_starts[code], strict=True
        )
    ]
    rows = {
        name: statistics.median(
            run[name] / league.series for run, league in zip(split, leagues, strict=True)
        )
        for name in split[0]
    }
    decisions = statistics.median(league.decisions / league.series for league in leagues)
    total = statistics.median(league.cpu_s / league.series for league in leagues)
    return {"per_series_s": rows, "decisions_per_series": decisions, "total_s": total}


def main_table(measured: Measured, matchups: Sequence[str]) -> Table:
    """Per series, every variant, with its ratios to the floor and the pipe peer."""
    table = Table(
        title="one series: wall and CPU (ms, medians of runs; ratios: medians of per-run)"
    )
    for column in (
        "matchup",
        "variant",
        "wall",
        "CPU",
        "wall ÷ floor",
        "CPU ÷ floor",
        "CPU ÷ pipe",
        "rusage sees",
    ):
        table.add_column(column, justify="left" if column in ("matchup", "variant") else "right")
    for matchup in matchups:
        variants = {v: s for (m, v), s in measured.samples.items() if m == matchup}
        floor = variants.get("floor")
        for variant, samples in variants.items():
            jobs = variant.rpartition(" ")[2]
            pipe = variants.get(f"pipe -j {jobs}")
            shares = [s.rusage_share for s in samples if s.rusage_share is not None]
            table.add_row(
                matchup,
                variant,
                f"{per_series_ms(samples, wall):.0f}",
                f"{per_series_ms(samples, cpu):.0f}",
                _times(samples, floor, wall),
                _times(samples, floor, cpu),
                _times(samples, pipe if variant != "floor" else None, cpu),
                f"{statistics.median(shares):.0%}" if shares else "",
            )
    return table


def wall(sample: Sample) -> float:
    """A sample's wall time."""
    return sample.wall_s


def cpu(sample: Sample) -> float:
    """A sample's CPU."""
    return sample.cpu_s


def _times(
    mine: Sequence[Sample], theirs: Sequence[Sample] | None, of: Callable[[Sample], float]
) -> str:
    return f"{ratio(mine, theirs, of):.2f}x" if theirs else ""


def breakdown_table(splits: dict[str, dict[str, Any]], title: str) -> Table:
    """The breakdown of each code side by side: ms per series, share, ms per decision."""
    table = Table(title=title)
    table.add_column("part")
    for code in splits:
        for column in ("ms / series", "share", "ms / decision"):
            table.add_column(f"{code}: {column}", justify="right")
    names = list(next(iter(splits.values()))["per_series_s"])
    for index, name in enumerate(names):
        cells = []
        for split in splits.values():
            value, total = split["per_series_s"][name], split["total_s"]
            if index < PARTS:
                per = value / split["decisions_per_series"] * 1000 if "decision" in name else None
                cells += [
                    f"{value * 1000:.0f}",
                    f"{value / total:.0%}",
                    f"{per:.2f}" if per is not None else "",
                ]
            elif name == "bot processes started (count)":
                cells += [f"{value:.1f}", "", ""]
            else:
                cells += [f"{value * 1000:.0f}", "", ""]
        table.add_row(name, *cells)
    table.add_row(
        "total", *[c for s in splits.values() for c in (f"{s['total_s'] * 1000:.0f}", "100%", "")]
    )
    return table


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--series", type=int, default=8, help="series per league (even)")
    parser.add_argument("--jobs", default="2,1", help="the -j values of the first matchup")
    parser.add_argument(
        "--matchups", default=",".join(MATCHUPS), help="A:B,... (the first: the headline)"
    )
    parser.add_argument("--seed", type=int, default=2026, help="the league file's seed")
    parser.add_argument("--base", default=BASE, help=f"the commit to compare with ({BASE})")
    parser.add_argument("--no-base", action="store_true", help="leave the base commit out")
    parser.add_argument("--starts", type=int, default=5, help="bot start-ups timed per run")
    parser.add_argument("--quick", action="store_true", help="2 series, 1 run, -j 2, two matchups")
    parser.add_argument("--json", type=Path, default=Path("series_bench.json"))
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.series, args.jobs, args.starts = 1, 2, "2", 2
        args.matchups = "greedy:strong,greedy:greedy"
    try:
        args.jobs = [int(j) for j in args.jobs.split(",")]
    except ValueError:
        parser.error(f"--jobs is a list of numbers like 2,1, not {args.jobs!r}")
    args.matchups = args.matchups.split(",")
    unknown = [m for m in args.matchups if m not in MATCHUPS]
    if unknown:
        parser.error(f"unknown matchup {unknown[0]!r}: one of {', '.join(MATCHUPS)}")
    if args.runs < 1 or args.series < 2 or args.series % 2 or min(args.jobs) < 1:
        parser.error("--runs and --jobs at least 1, --series even and at least 2")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    codes = [Code("now", ROOT, Path(sys.executable))]
    if not args.no_base:
        from benchmarks.throughput_bench import base_checkout  # noqa: PLC0415 - only with a base

        base = base_checkout(args.base)
        codes.append(Code("base", base, base / ".venv" / "bin" / "python"))
    skipped = {}
    tasks: list[Task] = []
    for position, matchup in enumerate(args.matchups):
        reasons = [why for bot in MATCHUPS[matchup] if (why := missing(bot))]
        if reasons:
            skipped[matchup] = reasons[0]
            console.print(f"[yellow]{matchup} left out: {reasons[0]}[/]")
            continue
        jobs = args.jobs if position == 0 else args.jobs[:1]
        usable = []
        for code in codes:
            why = None if code.root == ROOT else build_bots(code, MATCHUPS[matchup])
            if why is None:
                usable.append(code)
            else:
                skipped[f"{matchup} {code.name}"] = why
                console.print(f"[yellow]{matchup} by {code.name} left out: {why}[/]")
        tasks += tasks_of(matchup, jobs, usable, args.series, args.seed)
    console.print(
        f"{len(tasks)} variants, {args.series} series each, {args.runs} runs; "
        f"{os.cpu_count()} CPUs, loadavg {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    env = environment()
    try:
        measured = play_runs(tasks, codes, args.runs, args.starts)
    except BenchError as error:
        console.print(f"[red]series_bench: {error}[/]")
        return 1
    played = [m for m in args.matchups if m not in skipped]
    console.print(main_table(measured, played))
    agreements = {matchup: agreement(measured, matchup) for matchup in played}
    for matchup, agreed in agreements.items():
        differing = agreed["differing"]
        said = "all alike" if not differing else f"differ from it: {', '.join(differing)}"
        console.print(
            f"{matchup}: {agreed['series']} series, compared with {agreed['reference']}: {said}"
        )
    headline, jobs = played[0], args.jobs[0]
    splits = {c.name: b for c in codes if (b := breakdown(measured, headline, c.name, jobs))}
    if splits:
        console.print(breakdown_table(splits, f"{headline}, -j {jobs}: where one series' CPU goes"))
    config = {
        key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()
    }
    write_report(
        args.json,
        env,
        config,
        skipped=skipped,
        failed={f"{m} | {v}": why for (m, v), why in measured.failed.items()},
        samples={
            f"{matchup} | {variant}": [
                {k: v for k, v in asdict(sample).items() if k != "results"} for sample in samples
            ]
            for (matchup, variant), samples in measured.samples.items()
        },
        startups=measured.startups,
        worker_starts=measured.worker_starts,
        agreement={
            m: {**a, "differing": {v: repr(d) for v, d in a["differing"].items()}}
            for m, a in agreements.items()
        },
        breakdown=splits,
    )
    console.print(f"report: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
