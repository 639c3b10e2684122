"""Timing marks and CPU stages for the benchmarks (how far a run is, where its CPU goes), if asked.

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


# ---------------------------------------------------------------------------------- stages
# With ATTENTION_COURSE_STAGES=FILE, a grading process splits each submission's CPU time into
# stages (`stage(name)`, nested: time goes to the innermost) and `flush` appends one JSON line
# per submission to FILE: per stage, the CPU-seconds of this process (all its threads) plus
# those of the sandboxes it closed meanwhile, read from each sandbox's own cgroup
# (`sandbox_done`), and the wall seconds.

STAGES_ENV = "ATTENTION_COURSE_STAGES"

_sandbox = {"cpu": 0.0, "peak": 0, "count": 0}  # sandboxes closed so far by this process
_stack: list[str] = []
_since: list[float] = [0.0, 0.0, 0.0]  # (own CPU, sandboxes' CPU, wall) at the last switch
_totals: dict[str, list[float]] = {}  # stage -> [CPU-s, wall s]


def stages_on() -> bool:
    return bool(os.environ.get(STAGES_ENV))


def sandbox_done(cpu: float | None, peak: int | None) -> None:
    """A sandbox ended: its CPU-seconds (from its cgroup) and peak memory (bytes)."""
    _sandbox["cpu"] += cpu or 0.0
    _sandbox["peak"] = max(int(_sandbox["peak"]), peak or 0)
    _sandbox["count"] += 1


def sandboxes_closed() -> int:
    """How many sandboxes this process has closed since the last `flush`."""
    return int(_sandbox["count"])


def _switch() -> None:
    """Charge the time since the last switch to the innermost running stage."""
    now = [time.process_time(), float(_sandbox["cpu"]), time.perf_counter()]
    if _stack:
        spent = _totals.setdefault(_stack[-1], [0.0, 0.0])
        spent[0] += (now[0] - _since[0]) + (now[1] - _since[1])
        spent[1] += now[2] - _since[2]
    _since[:] = now


class stage:
    """`with stage(name):` charges what runs inside to `name` (not to the enclosing stage); a
    stage inside one of the same name is part of it. Does nothing unless stages are on."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entered = False

    def __enter__(self) -> None:
        if stages_on() and (not _stack or _stack[-1] != self.name):
            _switch()
            _stack.append(self.name)
            self.entered = True

    def __exit__(self, *exc: object) -> None:
        if self.entered:
            _switch()
            _stack.pop()


def flush(**fields: object) -> None:
    """Append the stages since the last flush (and `fields`) as one line; start afresh."""
    path = os.environ.get(STAGES_ENV)
    if not path:
        return
    import json

    _switch()
    line = dict(fields, stages={k: [round(v[0], 4), round(v[1], 4)] for k, v in _totals.items()})
    line.update(sandboxes=_sandbox["count"], sandbox_peak=_sandbox["peak"])
    _totals.clear()
    _sandbox.update(count=0, peak=0)
    with open(path, "a") as f:  # one short write per line: lines of several jobs do not mix
        f.write(json.dumps(line) + "\n")
