"""The honest opponent's decision times and the referee's memory under each flood, beside a run
without the flooder (``python -m benchmarks.flood_bench [--runs N]``).

Each run plays one sandboxed series of the hostile bot (``tests/hostile/hostile.py``) in a mode
against the sample greedy bot, with a 0.2 s move time, and reports the greedy seat's worst and
mean decision time, any fault, and the referee's resident memory at the start and at its peak
(sampled every 50 ms). Modes: ``none`` (plays greedy: the baseline), ``h2_flood`` (from its
first decision, 4 extra connections streaming to an unknown method, each stream reset at once),
``raw_flood`` (the same streams on its own Play connection, spoken by hand, while the opponent
thinks: a rapid reset), ``raw_ping`` (batches of pings on its own connection),
``connect_loop`` (from its first decision, 4 children connecting and closing, over and over),
``connections`` (16 children holding 250 connections each before the hello). The modes run
interleaved, run after run; the referee's CPU time per series is reported too. With
``--grpc-bridge``, the seats use the transport before this one (``benchmarks.grpc_bridge``).

At the end, each mode's referee CPU and the honest seat's worst decision, as ratios to the calm
series (``none``) of the same run (medians over runs). A seat admits one connection, and on it
one stream and a budget of control frames (``referee.bridge``): a flood on the bot's own
connection ends that connection, and its bot forfeits. Before the budget, a rapid reset on the
bot's own connection cost the referee's gRPC threads 1.1-2.2 s of CPU per series (0.24 s
without it) and pushed the honest seat's worst decision to about 30 ms; before the limits, one
flooded series took the referee from 50 to 730 MiB and timed the honest opponent out.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import threading
from pathlib import Path

import trio

from benchmarks import grpc_bridge
from protocol.manifest import load_manifest
from referee import remote
from referee.control import FaultPolicy, TimeControl
from referee.local import play_folders, remote_seat
from referee.match import MatchConfig
from referee.replay import read_records
from referee.sandbox import Sandbox, SandboxLimits
from tests.hostile_bots import hostile_folder

GREEDY = Path(__file__).resolve().parent.parent / "sample_bots" / "greedy"
MODES = {
    "none": "",
    "h2_flood": "4",
    "raw_flood": "",
    "raw_ping": "",
    "connect_loop": "4",
    "connections": "250x16",
}
CONTROL = TimeControl(move_time_ms=200, grace_ms=50, time_bank_ms=0, startup_ms=8000)


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def one_run(box: Sandbox, folder: Path, log: Path) -> dict[str, float | str]:
    seats = (
        remote_seat(load_manifest(folder), box.prepare, f"{folder.name}-0"),
        remote_seat(load_manifest(GREEDY), box.prepare, f"{folder.name}-1"),
    )
    config = MatchConfig("flood", 11, time_control=CONTROL, fault_policy=FaultPolicy(10**6))
    start, peak, done = rss_mib(), [rss_mib()], threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = trio.run(play_folders, seats, config, log)
    after = resource.getrusage(resource.RUSAGE_SELF)
    done.set()
    sampler.join()
    times = [
        record["ms"]
        for record in read_records(log)
        if record["type"] == "action" and record["seat"] == 1 and record["by"] == "bot"
    ]
    faults = ", ".join(f"seat {f.seat} {f.kind.value}" for f in result.faults) or "none"
    return {
        "max_ms": max(times, default=0.0),
        "mean_ms": statistics.fmean(times) if times else 0.0,
        "decisions": len(times),
        "rss_start": start,
        "rss_peak": peak[0],
        "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "faults": faults,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--grpc-bridge", action="store_true", help="the transport before")
    args = parser.parse_args()
    runs = args.runs
    if args.grpc_bridge:
        setattr(remote, "SeatChannel", grpc_bridge.SeatChannel)  # noqa: B010
    work = Path(tempfile.mkdtemp(prefix="gin-flood-bench-"))
    box = Sandbox(SandboxLimits(memory_mb=256, pids=48), root_dir=work / "jails")
    print(f"sandbox layers: {', '.join(sorted(layer.value for layer in box.active))}")
    print(
        "mode          run  honest max ms  honest mean ms  decisions  referee RSS MiB"
        "  referee CPU s  faults"
    )
    rows: dict[str, list[dict[str, float | str]]] = {mode: [] for mode in MODES}
    try:
        for run in range(runs):
            modes = list(MODES)
            modes = modes[run % len(modes) :] + modes[: run % len(modes)]
            for mode in modes:
                parent = work / f"{mode}-{run}"
                parent.mkdir()
                folder = hostile_folder(parent, mode, MODES[mode])
                row = one_run(box, folder, work / f"{mode}-{run}.jsonl")
                rows[mode].append(row)
                print(
                    f"{mode:<13} {run:>3}  {row['max_ms']:>13.1f}  {row['mean_ms']:>14.2f}  "
                    f"{row['decisions']:>9}  {row['rss_start']:>6.1f} -> {row['rss_peak']:>6.1f}"
                    f"  {row['cpu_s']:>13.2f}  {row['faults']}"
                )
    finally:
        box.close()
    ratios(rows)


def ratios(rows: dict[str, list[dict[str, float | str]]]) -> None:
    """Each mode's referee CPU and honest worst decision ÷ the calm series of the same run."""
    calm = rows["none"]
    print("mode          referee CPU ÷ calm   honest max ÷ calm   (medians of per-run ratios)")
    for mode, runs in rows.items():
        pairs = list(zip(runs, calm, strict=False))
        if not pairs:
            continue
        cpu = statistics.median(float(a["cpu_s"]) / float(b["cpu_s"]) for a, b in pairs)
        worst = statistics.median(float(a["max_ms"]) / float(b["max_ms"]) for a, b in pairs)
        print(f"{mode:<13} {cpu:>18.2f}   {worst:>17.2f}")


if __name__ == "__main__":
    main()
