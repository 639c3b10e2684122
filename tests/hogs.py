"""CPU hogs: more busy processes than the machine has cores, for as long as a `with` lasts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def hog_count() -> int:
    """More busy processes than cores: twice the cores, and two more."""
    return 2 * (os.cpu_count() or 1) + 2


@contextmanager
def cpu_hogs(count: int | None = None) -> Iterator[list[subprocess.Popen]]:
    """`count` processes that spin (default: `hog_count()`), killed when the block ends. Each
    is a session of its own, as independent jobs are: the scheduler's autogroups would
    otherwise share one core's worth among them all, beside each sandbox (a session too)."""
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while 1: pass"], start_new_session=True)
        for _ in range(count if count is not None else hog_count())
    ]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
