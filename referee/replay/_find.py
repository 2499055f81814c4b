"""Finding a match log from what a user typed: a path, or a match id."""

from __future__ import annotations

from pathlib import Path

RUNS_DIR = Path("runs")
"""Where ``gin play`` writes its logs (``runs/<match id>.jsonl``)."""


class LogNotFound(LookupError):  # noqa: N818 - named for what happened
    """Neither a log file nor a known match id."""


def find_log(reference: str, runs: Path = RUNS_DIR) -> Path:
    """The log file of ``reference``: a path to a file, or a match id looked up under ``runs``.

    A match id is found as ``runs/<id>.jsonl`` (or anywhere below ``runs``). This is where the
    league store will hook in: once matches are stored, an id is looked up there first.

    >>> try:
    ...     find_log("no-such-match", Path("/nonexistent"))
    ... except LogNotFound as error:
    ...     print(error)
    no log file 'no-such-match', and no match 'no-such-match' under /nonexistent/

    Raises:
        LogNotFound: no such file, and no log of that id.
    """
    path = Path(reference)
    if path.is_file():
        return path
    name = f"{reference}.jsonl"
    direct = runs / name
    if direct.is_file():
        return direct
    if runs.is_dir() and "/" not in reference:
        found = sorted(runs.rglob(name))
        if found:
            return found[0]
    raise LogNotFound(f"no log file {reference!r}, and no match {reference!r} under {runs}/")
