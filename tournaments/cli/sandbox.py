"""``gin sandbox doctor|sweep``: the bot sandbox on this machine."""

from __future__ import annotations

import typer

from referee.sandbox import describe_layers, detect_layers, sweep_jails
from tournaments.cli.common import console, sandbox_app

__all__: list[str] = []


@sandbox_app.command("doctor")
def sandbox_doctor() -> None:
    """Say which sandbox layers work on this machine, and why the others do not."""
    layers = detect_layers()
    console.print(describe_layers(layers))
    if not all(layer.active for layer in layers):
        raise typer.Exit(1)


@sandbox_app.command("sweep")
def sandbox_sweep() -> None:
    """Remove the jails (folders, cgroups, stray bot processes) of referees that were killed."""
    report = sweep_jails()
    if report.empty:
        console.print("nothing to sweep")
    for name in report.jails:
        console.print(f"removed jail {name}")
    if report.cgroups:
        console.print(f"removed {report.cgroups} cgroup(s)")
    for user in report.users:
        console.print(f"killed leftover processes of {user}")
    for problem in report.problems:
        console.print(f"[red]could not sweep[/red] {problem}")
    if report.problems:
        raise typer.Exit(1)
