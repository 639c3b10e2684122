"""Each sandbox's identity and limits, observed where they take effect: from inside (what its
own process is allowed, a file written until the kernel refuses) and from the host (the uid and
groups of each of its processes in /proc, and the limits of the cgroup the kernel put each in).
Two grading workers run at once, as two grading threads start them; every expected value is the
settings' (a limit dropped, or 100 times what it should be, fails here)."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

import pytest

from attention_course.sandbox import confined
from attention_course.sandbox.confined import Confined
from attention_course.settings import DEFAULT

OBSERVE = """
import json, os, resource

def observe():
    written, error = 0, None
    fd = os.open("/tmp/big", os.O_WRONLY | os.O_CREAT, 0o600)
    chunk = b"\\0" * (1 << 20)
    try:
        while written < 4 * (1 << 30):  # far past any limit the settings may have
            written += os.write(fd, chunk)
    except OSError as exc:
        error = exc.errno
    finally:
        os.close(fd)
        os.unlink("/tmp/big")
    limits = {name: resource.getrlimit(getattr(resource, name))
              for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_CORE")}
    return json.dumps({"uid": os.getuid(), "groups": os.getgroups(), "limits": limits,
                       "written": written, "error": error})
"""


def _call(worker: Confined, function: str) -> str:
    header = {"op": "call", "function": function, "args": [], "kwargs": {}, "timeout": 20.0}
    reply, _ = worker.request(dict(header, wall=80.0, idle=0.0), timeout=20.0)
    assert reply["status"] == "ok", reply
    return reply["value"]["value"]


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, v in (line.split(":", 1) for line in lines)}


def _descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs (read here from /proc, not by the engine)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent[int(name)] = int(
                    Path(f"/proc/{name}/stat").read_text().rsplit(")")[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [pid]
    while todo:
        kids = [p for p, q in parent.items() if q == todo[0]]
        todo = todo[1:] + kids
        found += kids
    return found


def _cgroup_limits(pid: int) -> dict[str, object]:
    """The memory and process limits of the cgroup (v1 or v2) the kernel holds `pid` in."""
    paths = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path.lstrip("/")
    root = Path("/sys/fs/cgroup")
    if "memory" in paths and (root / "memory").is_dir():
        memory = root / "memory" / paths["memory"] / "memory.limit_in_bytes"
        pids = root / "pids" / paths["pids"] / "pids.max"
    else:
        memory = root / paths[""] / "memory.max"
        pids = root / paths[""] / "pids.max"

    def read(path: Path) -> str | None:
        return path.read_text().strip() if path.exists() else None

    return {"paths": paths, "memory": read(memory), "pids": read(pids)}


@pytest.fixture(scope="module")
def two_sandboxes():
    """Two workers started and asked at once by two threads; then, while both still run, the
    host's view of every process of each."""
    status = confined.require()
    workers: list[Confined] = []
    inside: dict[int, dict] = {}
    starters: dict[int, int] = {}  # worker -> the thread that started it (its native id)
    errors: list[BaseException] = []
    lock = threading.Lock()
    asked, done = threading.Semaphore(0), threading.Event()

    def one() -> None:
        try:
            worker = Confined("worker.py", {}, DEFAULT)
            with lock:
                workers.append(worker)
                starters[id(worker)] = threading.get_native_id()
            worker.start(time.monotonic() + 60)
            cell = {"op": "cell", "id": "observe", "source": OBSERVE, "timeout": 10.0}
            reply, _ = worker.request(cell, timeout=10.0)
            assert reply["error"] is None, reply
            inside[id(worker)] = json.loads(_call(worker, "observe"))
        except BaseException as exc:  # noqa: BLE001 - shown by the main thread
            errors.append(exc)
        finally:
            asked.release()
            done.wait(timeout=120)  # a sandbox dies with the thread that started it

    threads = [threading.Thread(target=one) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        for _ in threads:
            assert asked.acquire(timeout=120)
        assert not errors, errors
        assert len(inside) == 2
        seen = []
        for worker in workers:
            assert worker.pid is not None
            processes = _descendants(worker.pid)
            assert processes, "no process of the sandbox is running"
            host = {p: _status(p) for p in processes}
            seen.append(
                {
                    "inside": inside[id(worker)],
                    "starter": starters[id(worker)],
                    "uids": {p: set(s["Uid"].split()) for p, s in host.items()},
                    "groups": {p: s["Groups"].split() for p, s in host.items()},
                    "cgroups": [_cgroup_limits(p) for p in processes],
                }
            )
        yield status, seen
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=60)
        for worker in workers:
            worker.close()


def test_each_sandbox_runs_as_a_host_uid_of_its_own(two_sandboxes):
    status, (a, b) = two_sandboxes
    for sandbox in (a, b):
        assert sandbox["inside"]["uid"] == 1000  # the student's, as seen inside
    if status.mode != "root":  # an ordinary account: that account, in a user namespace
        for sandbox in (a, b):
            assert set().union(*sandbox["uids"].values()) == {str(os.getuid())}
        return
    uid_a, uid_b = (set().union(*s["uids"].values()) for s in (a, b))
    assert len(uid_a) == len(uid_b) == 1, (uid_a, uid_b)  # every process, all four uids
    assert uid_a != uid_b
    assert "0" not in uid_a | uid_b and str(os.getuid()) not in uid_a | uid_b
    # 2,000,000,000 and the id of the thread that made it: above any account's uid
    assert (uid_a, uid_b) == tuple({str(2_000_000_000 + s["starter"])} for s in (a, b))


def test_no_sandbox_keeps_a_supplementary_group(two_sandboxes):
    status, sandboxes = two_sandboxes
    for sandbox in sandboxes:
        groups = {g for gs in sandbox["groups"].values() for g in gs}
        assert "0" not in groups
        if status.mode == "root":
            assert groups == set() and sandbox["inside"]["groups"] == []


def test_a_file_is_cut_at_the_file_size_limit(two_sandboxes):
    _, sandboxes = two_sandboxes
    for sandbox in sandboxes:
        inside = sandbox["inside"]
        assert inside["written"] == DEFAULT.file_bytes and inside["error"] == errno.EFBIG
        assert inside["limits"]["RLIMIT_FSIZE"] == [DEFAULT.file_bytes] * 2


def test_each_process_has_the_memory_and_process_limits(two_sandboxes):
    _, sandboxes = two_sandboxes
    for sandbox in sandboxes:
        limits = sandbox["inside"]["limits"]
        assert limits["RLIMIT_AS"] == [DEFAULT.memory_bytes] * 2
        assert limits["RLIMIT_NPROC"] == [DEFAULT.processes] * 2
        assert limits["RLIMIT_CORE"] == [0, 0]  # a crash writes no core file of its memory


def test_each_sandbox_is_held_in_a_cgroup_of_its_own_with_the_limits(two_sandboxes):
    status, sandboxes = two_sandboxes
    if not status.cgroup:
        pytest.skip("no cgroup can be made for a sandbox on this machine")
    own = _cgroup_limits(os.getpid())["paths"]
    groups = []
    for sandbox in sandboxes:
        for seen in sandbox["cgroups"]:
            assert seen["memory"] == str(DEFAULT.memory_bytes), seen
            assert seen["pids"] == str(DEFAULT.processes), seen
        (paths,) = {json.dumps(s["paths"], sort_keys=True) for s in sandbox["cgroups"]}
        groups.append(json.loads(paths))
    a, b = groups
    for controller in ("memory", "pids") if "memory" in own else ("",):
        assert a[controller] != b[controller] and own[controller] not in (
            a[controller],
            b[controller],
        )
