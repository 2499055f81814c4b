"""Bot folders of the hostile bot (``tests/hostile/hostile.py``), one per misbehaviour."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent


def hostile_folder(parent: Path, mode: str, arg: str = "") -> Path:
    """A bot folder named ``hostile-<mode>`` running the hostile bot in that mode."""
    folder = parent / f"hostile-{mode}"
    folder.mkdir()
    shutil.copy(HERE / "hostile" / "hostile.py", folder / "hostile.py")
    command = ["python", "hostile.py", mode] + ([arg] if arg else [])
    quoted = ", ".join(json.dumps(part) for part in command)  # a JSON string is a TOML string
    (folder / "bot.toml").write_text(
        f'name = "hostile"\nversion = "{mode}"\ncommand = [{quoted}]\n'
    )
    return folder
