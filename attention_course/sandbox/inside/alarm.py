"""A step's alarm, inside the sandbox: a wall-clock one (a CPU timer would make the process's
own CPU clock coarse, and a notebook may time its code with it) that, when it rings, reads the
step's CPU time to decide whether the step is over or only slowed down by a busy machine.

A step is over once it has used its CPU time, reached its wall-clock backstop, or is asleep:
past its limit by the clock, it used less than the idle share of a core over a short look, the
time it spent waiting for a core (the scheduler's run delay) not counted. Standard library only.
"""

import os
import time

_monotonic = time.monotonic
_process_time = time.process_time
_listdir, _open, _read, _close, _RDONLY = os.listdir, os.open, os.read, os.close, os.O_RDONLY

LOOK = 0.2  # seconds: how long a step that seems asleep is watched before it is stopped


def queued_seconds() -> float:
    """Seconds this process's threads have spent ready to run but waiting for a core (the
    second field of /proc/self/task/<tid>/schedstat, in nanoseconds; 0 where not counted)."""
    total = 0
    try:
        tasks = _listdir("/proc/self/task")
    except OSError:
        return 0.0
    for tid in tasks:
        try:
            fd = _open(f"/proc/self/task/{tid}/schedstat", _RDONLY)
            try:
                total += int(_read(fd, 128).split()[1])
            finally:
                _close(fd)
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


class Step:
    """The running step: its CPU time at the start, its CPU limit, when its wall-clock
    backstop ends, the idle share of a core, and the last look at a step that seemed asleep."""

    def __init__(self) -> None:
        self.arm(0.0, 0.0, 0.0)

    def arm(self, limit: float, wall: float, idle: float) -> float:
        """Start a step; the seconds until its alarm first rings."""
        now = _monotonic()
        self.cpu, self.limit, self.idle = _process_time(), limit, idle
        self.start, self.wall_end = now, now + wall
        self.look: tuple[float, float, float] | None = None  # (clock, CPU time, queued)
        return max(min(limit, wall), 0.001)

    def next_ring(self) -> float:
        """0 if the step is over now; else the seconds until the alarm rings again."""
        now = _monotonic()
        used = _process_time() - self.cpu
        cpu_left, wall_left = self.limit - used, self.wall_end - now
        if cpu_left <= 0.005 or wall_left <= 0.005:
            return 0.0
        if used >= self.idle * (now - self.start):  # it computes: only slowed down
            return max(min(cpu_left, wall_left), 0.01)
        queued = queued_seconds()  # asleep, or kept waiting for a core: a look decides
        if self.look is not None:
            since, used_then, queued_then = self.look
            if used - used_then < self.idle * (now - since - (queued - queued_then)):
                return 0.0  # asleep past its limit: over now, not at the backstop
        self.look = (now, used, queued)
        return max(min(cpu_left, wall_left, LOOK), 0.01)
