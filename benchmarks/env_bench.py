"""Training-environment speed: steps a second of random legal play, side by side in one run.

    python -m benchmarks.env_bench [--seconds S] [--runs N] [--seed S] [--json FILE]

Each engine is driven the way a learner drives it, one decision at a time, each step choosing a
random legal action from what the environment itself says is legal:

* ``ours (PettingZoo AEC)``: ``tournaments.workbench.env.env()``, ``last()`` (the observation
  vector and the action mask), a random action of the mask, ``step()``; an episode is a
  Hollywood series.
* ``ours (Gymnasium, one seat)``: ``SoloGinEnv`` against the rules' random policy; a step is
  the learner's, and the opponent's moves between two of them are played inside it (its steps
  are counted too, so the figure is decisions a second).
* ``ours (rules engine)``: ``referee.rules.SeriesState``, ``legal_actions()`` and
  ``apply()``, no observation: what the wrappers cost on top of the engine.
* ``OpenSpiel (rl_environment)``: ``open_spiel.python.rl_environment.Environment("gin_rummy")``,
  whose time steps carry the observation tensor and legal actions; an episode is one hand (it
  has extra decisions: the knock and each meld laid are steps of their own).
* ``RLCard``: ``rlcard.make("gin-rummy")``, ``step()`` with a random key of its legal actions;
  an episode is one hand.

Engines are measured in turn, ``--runs`` rounds interleaved, for ``--seconds`` each; the table
gives each one's median steps a second and its ratio to our AEC environment. The machine is
shared: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.harness import environment, loadavg
from referee.rules import Action, Observation, SeriesState

Runner = Callable[[float, int], int]
"""Play for about this many seconds from this seed; the decision steps made."""


def ours_aec(seconds: float, seed: int) -> int:
    from tournaments.workbench.env import env  # noqa: PLC0415 - optional extra

    rng = random.Random(seed)
    game = env()
    game.reset(seed=seed)
    steps, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        observed, _, terminated, truncated, _ = game.last()
        if observed is None or terminated or truncated:
            game.step(None)
            if not game.agents:
                game.reset()
            continue
        legal = observed["action_mask"].nonzero()[0]
        game.step(int(legal[rng.randrange(len(legal))]))
        steps += 1
    return steps


def ours_solo(seconds: float, seed: int) -> int:
    from tournaments.workbench.env import SoloGinEnv  # noqa: PLC0415 - optional extra

    rng = random.Random(seed)
    counted = [0]

    def opponent(view: Observation, legal: Sequence[Action]) -> Action:  # noqa: ARG001
        counted[0] += 1
        return legal[rng.randrange(len(legal))]

    game = SoloGinEnv(opponent)
    observed, _ = game.reset(seed=seed)
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        legal = observed["action_mask"].nonzero()[0]
        observed, _, over, _, _ = game.step(int(legal[rng.randrange(len(legal))]))
        counted[0] += 1
        if over:
            observed, _ = game.reset()
    return counted[0]


def ours_rules(seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    series, steps, stop = SeriesState(seed), 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        if series.result is not None:
            series = SeriesState(rng.randrange(2**63))
            continue
        legal = series.legal_actions()
        series.apply(legal[rng.randrange(len(legal))])
        steps += 1
    return steps


def openspiel(seconds: float, seed: int) -> int:
    from open_spiel.python import rl_environment  # noqa: PLC0415 - a peer, if installed

    rng = random.Random(seed)
    np.random.seed(seed % 2**32)  # its chance outcomes are drawn from NumPy's generator
    game = rl_environment.Environment("gin_rummy")
    step = game.reset()
    steps, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        if step.last():
            step = game.reset()
            continue
        player = step.observations["current_player"]
        legal = step.observations["legal_actions"][player]
        step = game.step([legal[rng.randrange(len(legal))]])
        steps += 1
    return steps


def rlcard(seconds: float, seed: int) -> int:
    import rlcard as library  # noqa: PLC0415 - a peer, if installed

    rng = random.Random(seed)
    game = library.make("gin-rummy", config={"seed": seed})
    state, _ = game.reset()
    steps, stop = 0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        if game.is_over():
            state, _ = game.reset()
            continue
        legal = list(state["legal_actions"])
        state, _ = game.step(legal[rng.randrange(len(legal))])
        steps += 1
    return steps


ENGINES: dict[str, Runner] = {
    "ours (PettingZoo AEC)": ours_aec,
    "ours (Gymnasium, one seat)": ours_solo,
    "ours (rules engine)": ours_rules,
    "OpenSpiel (rl_environment)": openspiel,
    "RLCard": rlcard,
}
BASE = "ours (PettingZoo AEC)"


def measure(seconds: float, runs: int, seed: int) -> dict[str, list[float] | str]:
    """Each engine's steps a second per run (or why it could not run)."""
    found: dict[str, list[float] | str] = {}
    for run in range(runs):
        for name, runner in ENGINES.items():
            if isinstance(found.get(name), str):
                continue
            try:
                start = time.perf_counter()
                steps = runner(seconds, seed + run)
                rate = steps / (time.perf_counter() - start)
            except ImportError as error:
                found[name] = f"not installed ({error.name})"
                continue
            rates = found.setdefault(name, [])
            assert isinstance(rates, list)
            rates.append(rate)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per engine and run (3)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the peers' deprecation notices
    found = measure(args.seconds, args.runs, args.seed)
    base = found.get(BASE)
    base_rate = statistics.median(base) if isinstance(base, list) else None
    table = Table(title=f"Random legal play, steps a second (median of {args.runs} runs)")
    for heading in ("environment", "steps/s", "runs", "ratio to ours (AEC)"):
        table.add_column(heading, justify="left" if heading == "environment" else "right")
    report: dict[str, object] = {"environment": environment(), "load": loadavg(), "engines": {}}
    for name, rates in found.items():
        if isinstance(rates, str):
            table.add_row(name, "-", rates, "-")
            continue
        rate = statistics.median(rates)
        ratio = "-" if base_rate is None else f"{rate / base_rate:.2f}x"
        table.add_row(name, f"{rate:,.0f}", " ".join(f"{r:,.0f}" for r in rates), ratio)
        engines = report["engines"]
        assert isinstance(engines, dict)
        engines[name] = {"median": rate, "runs": rates}
    Console().print(table)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
