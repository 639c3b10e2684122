"""Timing marks for the benchmarks: how far a run is, written only when asked for.

With ATTENTION_COURSE_TRACE=FILE in the environment, `mark(name)` appends a line to FILE: the
mark's name, the seconds since this process started, and the CPU-seconds this process and the
processes it waited for have used (plus `extra_cpu`, e.g. a running sandbox's). Without it,
`mark` does nothing.
"""

from __future__ import annotations

import os
import resource
import time

ENV = "ATTENTION_COURSE_TRACE"


def _since_start() -> float:
    with open("/proc/self/stat") as f:
        started = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) - started


def mark(name: str, extra_cpu: float | None = None) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    cpu = sum(
        u.ru_utime + u.ru_stime
        for u in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )
    with open(path, "a") as f:
        f.write(
            f"{name}\t{_since_start():.3f}\t{cpu + (extra_cpu or 0.0):.3f}\t{time.time():.3f}\n"
        )
