"""Layers that back others up, each tested alone: the layer in front of it is taken away (by
the student's own code, or by the test), and the one behind must still hold.

- The caps on a notebook's outputs kept by the grading process, when the cap inside the sandbox
  (which runs beside student code) has been raised by the student's cell.
- Every process of a sandbox's own host uid killed when the sandbox is closed, where no cgroup
  holds the sandbox and its pid namespace (which would take every process with it) is gone.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from attention_course.sandbox import cgroups, confined, jail
from attention_course.sandbox.confined import Confined, Died
from attention_course.sandbox.execute import execute_notebook
from attention_course.settings import DEFAULT, Limits

KiB = 1024

RAISE_THE_CAP = """
import gc
from IPython.display import display
for obj in gc.get_objects():  # the cell process's own record of this cell's outputs
    if type(obj).__name__ == "Outputs" and hasattr(obj, "budget"):
        obj.budget = 1 << 26
chunk = "x" * ({cap} - 1000)
for _ in range(6):
    display({{"text/plain": chunk}}, raw=True)
print("RAISED-" * 10)
"""


def _sizes(nb) -> list[int]:
    """The bytes of text of each code cell's outputs."""
    return [sum(len(json.dumps(o)) for o in c.outputs) for c in nb.cells if c.cell_type == "code"]


def test_a_notebooks_outputs_are_capped_here_when_the_cap_inside_is_raised():
    """Its first cell raises the cap inside and displays six outputs of nearly the cap each;
    then honest cells of nearly the cap each, past the notebook's cap."""
    limits = Limits(cell_output_bytes=256 * KiB, notebook_output_bytes=1024 * KiB)
    cells = [RAISE_THE_CAP.format(cap=limits.cell_output_bytes)]
    cells += [f"print('y' * {limits.cell_output_bytes - 1000})"] * 6
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    run = execute_notebook(nb, limits)
    assert run.died_at is None and run.processes == 1
    first = nb.cells[0].outputs
    assert first[0]["output_type"] == "display_data"  # what fits is kept
    assert "output truncated: a cell may show at most 262144 bytes" in json.dumps(first[-1])
    assert "RAISED" not in json.dumps(first)
    sizes = _sizes(nb)
    assert max(sizes) <= limits.cell_output_bytes + 16 * KiB, sizes
    assert sum(sizes) <= limits.notebook_output_bytes + limits.cell_output_bytes, sizes
    assert "outputs removed: the notebook's outputs passed" in json.dumps(nb.cells[-1].outputs)
    assert "yyyy" in json.dumps(nb.cells[1].outputs)  # honest cells before the cap: whole


DAEMON = """
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, {name!r}.encode(), 0, 0, 0)  # PR_SET_NAME: to be found
        time.sleep(120)
        os._exit(0)
    os._exit(0)
os.wait()
"""


def _named(name: str) -> list[int]:
    """Living processes (not zombies) that call themselves `name`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                comm, rest = Path(entry.path, "stat").read_text().split("(", 1)[1].rsplit(")", 1)
            except (OSError, ValueError):
                continue
            if comm == name and rest.split()[0] != "Z":
                found.append(int(entry.name))
    return found


def _owner(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("Uid:")).split()[1])


@pytest.mark.parametrize("program", ["running", "ended"])
def test_closing_a_sandbox_kills_its_users_processes_without_a_cgroup_or_pid_namespace(
    monkeypatch, program
):
    """A cell leaves a daemon behind (its own session, its parent gone). With no cgroup and no
    pid namespace of its own, only the sandbox's host uid tells it is the sandbox's: closing the
    sandbox kills it all the same, whether its program still runs or has ended on its own
    (nothing of the program is left to wait for: the daemon alone)."""
    status = confined.require()
    if status.mode != "root":
        pytest.skip("an ordinary account's sandboxes run as that account: no uid of their own")
    real = jail.command
    alone = ["--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"]

    def command(*args, **kwargs):
        cmd = real(*args, **kwargs)
        i = cmd.index("--unshare-all")  # everything but the pid namespace
        return cmd[:i] + [*alone, "--unshare-net"] + cmd[i + 1 :]

    monkeypatch.setattr(jail, "command", command)
    monkeypatch.setattr(cgroups.Cgroup, "create", staticmethod(lambda *a, **k: None))
    name = f"ac{uuid.uuid4().hex[:10]}"
    worker = Confined("worker.py", {}, DEFAULT)
    left: list[int] = []
    try:
        worker.start(time.monotonic() + 60)
        cell = {"op": "cell", "id": "d", "source": DAEMON.format(name=name), "timeout": 10.0}
        reply, _ = worker.request(cell, timeout=10.0)
        assert reply["error"] is None, reply
        deadline = time.monotonic() + 10
        while not (left := _named(name)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left, "the daemon did not start"
        assert {_owner(pid) for pid in left} == {worker.host_uid}
        assert worker.pid is not None and os.getsid(left[0]) != os.getsid(worker.pid)
        assert os.readlink(f"/proc/{left[0]}/ns/pid") == os.readlink("/proc/self/ns/pid")
        start = time.monotonic()
        if program == "ended":
            ends = {"op": "cell", "id": "e", "source": "import os\nos._exit(0)\n", "timeout": 10.0}
            with pytest.raises(Died, match="ended with exit code 0"):
                worker.request(ends, timeout=10.0)  # (the sandbox is closed as the step ends)
        worker.close()  # the daemon holds the sandbox's pipes: nothing may wait for them
        assert time.monotonic() - start < 10
        deadline = time.monotonic() + 5
        while _named(name) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _named(name) == []
    finally:
        worker.close()
        for pid in _named(name):
            os.kill(pid, signal.SIGKILL)
