"""Reading a league's rows in bulk: the store reads hundreds of thousands of them, and the
statistics make as many objects of them, none of which hold cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a league's rows are read: each of the hundreds of
    thousands of objects made would count towards a collection that walks all that were made
    before (a third of a league's read time), and rows hold no cycles to collect."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
