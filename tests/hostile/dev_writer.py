"""A hostile bot that writes where the guide says it may not: ``/dev``, and ``/dev/shm`` past its
cap. It reports each attempt on stderr as ``PROBE <name> <ALLOWED|BLOCKED> <detail>`` (as
``hostile.py`` does), then plays greedy. ARG: the size in MiB to try in ``/dev/shm``."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from protocol.sdk import Bot
from referee.rules import Action, GreedyPolicy, Observation


def probe(name: str, attempt: Callable[[], object]) -> None:
    try:
        detail = attempt()
    except Exception as error:  # any refusal counts as blocked
        print(f"PROBE {name} BLOCKED {type(error).__name__}: {error}", file=sys.stderr)
    else:
        print(f"PROBE {name} ALLOWED {str(detail)[:200]}", file=sys.stderr)
    sys.stderr.flush()


def write(path: str, size: int = 16) -> str:
    chunk = b"x" * (1 << 20)
    with open(path, "wb") as handle:
        left = size
        while left > 0:
            handle.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    return f"wrote {size} bytes to {path}"


def replace_null() -> str:
    write("/dev/shm/fake-null")
    os.rename("/dev/shm/fake-null", "/dev/null")
    return "replaced /dev/null"


def run_probes(shm_try_mb: int) -> None:
    probe("dev_create", lambda: write("/dev/gin-hostile"))
    probe("dev_mkdir", lambda: os.mkdir("/dev/gin-hostile-dir"))
    probe("dev_symlink", lambda: os.symlink("/tmp", "/dev/gin-hostile-link"))
    probe("dev_replace_null", replace_null)
    probe("dev_null", lambda: write("/dev/null"))  # a device node: writing to it is fine
    probe("shm_small", lambda: write("/dev/shm/gin-small", 4096))
    probe("shm_over_cap", lambda: write("/dev/shm/gin-big", shm_try_mb << 20))
    for name in ("gin-small", "gin-big"):
        if os.path.exists(f"/dev/shm/{name}"):
            os.unlink(f"/dev/shm/{name}")


class DevWriter(Bot):
    def decide(self, view: Observation, legal: Sequence[Action]) -> Action:
        return GreedyPolicy()(view, legal)


if __name__ == "__main__":
    run_probes(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
    sys.exit(DevWriter().run())
