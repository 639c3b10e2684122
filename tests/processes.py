"""Servers the tests start: a free port on 127.0.0.1 to start one on, and stopping one."""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float) -> None:
    """Ask `process` to end (SIGTERM), kill it if it has not within `timeout` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# How long a server the tests start may take to be ready. A machine whose every core is busy
# (CI beside other work, `benchmarks/busy_machine.py`) starts a Python process many times more
# slowly than an idle one: these are deadlines against a server that will never be ready, not
# expectations of speed (pytest-timeout's 600 s per test still bounds a setup).
WORKERS_DEADLINE = 360.0  # Dask workers joining their scheduler
WORKERS_RETRY = 150.0  # ... and when a start still short of workers is tried again


def machine_load() -> str:
    """The load average beside the number of cores, for a message about waiting."""
    import os

    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load unknown"
    return f"load average {one:.1f} (5 min: {five:.1f}) on {os.cpu_count()} cores"


def wait_for_dask_workers(
    client,
    workers: int,
    what: str,
    deadline: float = WORKERS_DEADLINE,
    died=None,
    retry=None,
    log=None,
) -> None:
    """Wait until `workers` Dask workers are connected to `client`'s scheduler, or fail the
    test saying what it waited for, how long, how many arrived and how busy the machine was.
    `died()` returns why the servers can no longer become ready (a process that ended), or
    None: then the wait ends at once; `retry()` is called once, after WORKERS_RETRY seconds
    still short of workers (a worker process that never came back starts again); `log()`
    returns the end of the servers' log, for the message."""
    import time

    import pytest

    start = time.monotonic()
    retried = retry is None
    while True:
        try:
            client.wait_for_workers(workers, timeout=5)
            return
        except TimeoutError:
            pass
        waited = time.monotonic() - start
        arrived = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        why = died() if died is not None else None
        if why is None and not retried and waited >= WORKERS_RETRY:
            retried = True
            retry()
            continue
        if why is not None or waited >= deadline:
            said = why or f"not ready after {waited:.0f} s"
            tail = f"; its log ends:\n{log()}" if log is not None else ""
            pytest.fail(
                f"{what}: waited for {workers} Dask workers to join the scheduler at "
                f"{client.scheduler.address}: {arrived} arrived, {said} ({machine_load()}"
                f"{', after starting them again' if retry is not None and retried else ''})"
                f"{tail}",
                pytrace=False,
            )
