"""The zygote: a program forked from a pre-imported Python into a fresh sandbox holds nothing of
the grading process or of the zygote, and is contained as a program started there would be.

Every fact is observed, never reported by the child: the kernel's own /proc/self/status and
/proc/self/fd read from inside by student code, its own memory searched for a secret the
grading process holds, the zygote's pid signalled from inside, and, from the host, what is left
of a sandbox once it is closed. A zygote that dies or hangs is a fault of grading, and the next
sandbox gets a fresh one; a child that would not be contained refuses to run.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from attention_course.sandbox import confined, jail, zygotes
from attention_course.sandbox.confined import Confined, Died
from attention_course.sandbox.program import Call, SandboxError, run_program
from attention_course.settings import DEFAULT, GRADING_KEY_ENV, Limits
from tests.sandbox import weakened

SENTINEL = "5e7e" * 12  # a grading key no other test uses, and an environment variable's value

OBSERVE = """
import json, os, re, signal
import numpy as np

def _out(value):  # as bytes (a reply's strings are cut at 500 characters)
    return np.frombuffer(json.dumps(value).encode(), np.uint8)

def status():
    with open("/proc/self/status") as f:
        return _out(dict(line.rstrip("\\n").split(":\\t", 1) for line in f if ":\\t" in line))

def descriptors():
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return _out(found)

def environment():
    return _out(dict(os.environ))

def memory(masked):
    # every readable mapping of this process, searched for the bytes whose XOR with 0x5a is
    # `masked` (so that what is searched for is not itself in this process's memory; each
    # chunk's XOR is large enough to be a mapping of its own, gone once it is freed)
    import numpy as np
    wanted = bytes.fromhex(masked)
    hits = []
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    with open("/proc/self/mem", "rb", 0) as mem:
        for fields in regions:
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else ""
            if not fields[1].startswith("r") or name in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
                continue
            for at in range(start, end, 1 << 22):
                try:
                    mem.seek(max(at - len(wanted), start))
                    chunk = mem.read(min(1 << 22, end - at) + (at - max(at - len(wanted), start)))
                except OSError:
                    break
                if wanted in (np.frombuffer(chunk, np.uint8) ^ 0x5A).tobytes():
                    hits.append(name or hex(start))
                    break
    return _out(hits)

def processes():
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    found[pid] = f.read().replace(b"\\0", b" ").decode(errors="replace")
            except OSError:
                pass
    return _out(found)

def signal_zygote(pid):
    try:
        os.kill(pid, 0)
        return _out("exists")
    except OSError as exc:
        seen = exc.errno
    try:
        os.kill(pid, signal.SIGKILL)
        return _out("killed")
    except OSError as exc:
        return _out([seen, exc.errno])
"""


def _call(worker: Confined, function: str, *args: object) -> object:
    """What the function returned (JSON, as an array of its bytes)."""
    header = {"op": "call", "function": function, "kwargs": {}, "timeout": 20.0}
    header["args"] = [{"value": a} for a in args]
    reply, arrays = worker.request(dict(header, wall=80.0, idle=0.0), timeout=20.0)
    assert reply["status"] == "ok", reply
    return json.loads(arrays[reply["value"]["array"]].tobytes())


def _cell(worker: Confined, source: str) -> None:
    request = {"op": "cell", "id": "c", "source": source, "timeout": 20.0, "wall": 80.0}
    reply, _ = worker.request(dict(request, idle=0.0), timeout=20.0)
    assert reply["error"] is None, reply


@pytest.fixture(scope="module")
def seen():
    """What student code finds inside one worker, forked from a zygote that started while the
    grading process held SENTINEL as its grading key (in its environment and its memory)."""
    status = confined.require()
    key = os.environ.get(GRADING_KEY_ENV)
    os.environ[GRADING_KEY_ENV] = SENTINEL
    os.environ["ATTENTION_COURSE_TEST_SENTINEL"] = SENTINEL
    held = bytes.fromhex(SENTINEL)  # noqa: F841 (in this process's memory, as a key would be)
    zygotes.stop_all()  # a zygote started now, with the secret held here
    try:
        with Confined("worker.py", {}, DEFAULT) as worker:
            worker.start(time.monotonic() + 60)
            _cell(worker, OBSERVE)
            zygote = zygotes.zygote("worker")
            found = {
                name: _call(worker, name)
                for name in ("status", "descriptors", "environment", "processes")
            }
            masked = bytes(b ^ 0x5A for b in SENTINEL.encode()).hex()
            found["memory"] = _call(worker, "memory", masked)
            found["signal"] = _call(worker, "signal_zygote", zygote.pid)
            found["zygote"] = zygote.pid
            found["mode"] = status.mode
    finally:
        del os.environ["ATTENTION_COURSE_TEST_SENTINEL"]
        if key is None:
            del os.environ[GRADING_KEY_ENV]
        else:
            os.environ[GRADING_KEY_ENV] = key
    return found


def test_no_capability_no_new_privileges_and_the_filter(seen):
    status = seen["status"]
    for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
        assert int(status[name], 16) == 0, (name, status[name])
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    assert status["Uid"].split() == ["1000"] * 4  # the student's uid inside, all four
    assert status["Groups"].strip() == ""


def test_no_descriptor_of_the_grading_process_or_the_zygote(seen):
    """Only the program's pipes and /dev/null: no socket (the zygote's), no file or pipe of the
    grading process's."""
    kinds = {fd: target.split(":")[0] for fd, target in seen["descriptors"].items()}
    assert "socket" not in kinds.values(), seen["descriptors"]
    pipes = sorted(int(fd) for fd, kind in kinds.items() if kind == "pipe")
    assert pipes == [2, 3, 4], seen["descriptors"]  # stderr, requests, replies
    others = {t for fd, t in seen["descriptors"].items() if kinds[fd] != "pipe"}
    assert others <= {"/dev/null", "/proc/self/fd", *(f"/proc/{p}/fd" for p in range(1, 9))}


def test_nothing_of_the_grading_process_environment(seen):
    assert seen["environment"].keys() == jail.environment().keys()
    assert SENTINEL not in json.dumps(seen["environment"])


def test_the_grading_key_is_nowhere_in_its_memory(seen):
    """The zygote was exec'ed with the sandbox's environment, not forked from the grading
    process: the key it held is in no page the program can read."""
    assert seen["memory"] == []


def test_the_zygote_is_invisible_and_cannot_be_signalled(seen):
    """The sandbox's /proc shows its own processes only, and the zygote's pid is no process
    there (ESRCH, not EPERM: it is not even named); the zygote lives on."""
    assert seen["signal"] == [3, 3]
    commands = seen["processes"]  # its own pid namespace: bubblewrap's, the placeholder, itself
    assert sorted(commands) == ["1", "2", "3"], commands
    assert commands["2"] == "cat ", commands
    assert not any(str(jail.INSIDE_DIR) in cmd for cmd in commands.values()), commands
    os.kill(seen["zygote"], 0)  # still there


DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.1)
    os._exit(0)
"""

KILL_PLACEHOLDER = """
import os, signal, time

def kill_placeholder():
    for pid in os.listdir("/proc"):
        if pid.isdigit() and open(f"/proc/{pid}/comm").read().strip() == "cat":
            os.kill(int(pid), signal.SIGKILL)
    time.sleep(10)  # its pid namespace ends with the placeholder: this process too
"""


def _alive(pids: list[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            left.append(pid)
    return left


def _leaves_nothing(seen: list[int]) -> None:
    deadline = time.monotonic() + 5
    while _alive(seen) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(seen) == []


def test_a_daemon_is_gone_once_its_sandbox_is_closed():
    """A daemon of its own session, its parent gone: once the sandbox is closed, no process of
    it is alive on the host (its placeholder, the zygote's child, the program, the daemon)."""
    confined.require()
    worker = Confined("worker.py", {}, DEFAULT)
    try:
        worker.start(time.monotonic() + 60)
        _cell(worker, DAEMON)
        time.sleep(0.3)
        seen = worker.processes()
        assert len(seen) >= 5, seen  # the placeholder's, the program's and the daemon
    finally:
        worker.close()
    _leaves_nothing(seen)


def test_a_program_that_kills_its_placeholder_ends_its_whole_sandbox():
    """The sandbox's placeholder killed from inside: the sandbox's pid namespace ends with it,
    the program and its daemon too (the program's death is its own), and nothing is left."""
    confined.require()
    worker = Confined("worker.py", {}, DEFAULT)
    try:
        worker.start(time.monotonic() + 60)
        _cell(worker, DAEMON + KILL_PLACEHOLDER)
        time.sleep(0.3)
        seen = worker.processes()
        start = time.monotonic()
        with pytest.raises(Died, match="was killed"):
            _call(worker, "kill_placeholder")
        assert time.monotonic() - start < 5
        _leaves_nothing(seen)
    finally:
        worker.close()


def _sleeper_run(limits: Limits | None = None):
    code = "import time\ndef nap(x):\n    time.sleep(x)\n    return x\n"
    return run_program([("c", code)], [Call("n", "nap", (3,))], limits)


FRESH = """
import json, os, matplotlib, matplotlib.style, numpy as np
print(json.dumps({
    "draw": int(np.random.randint(0, 2**62)),
    "mine": os.environ["MPLCONFIGDIR"],
    "folders": [matplotlib.get_configdir(), matplotlib.get_cachedir()],
    "styles": list(matplotlib.style.USER_LIBRARY_PATHS),
}))
"""


def test_each_program_starts_with_its_own_random_state_and_matplotlib_folders():
    """Two notebook runs forked from one zygote: each draws its own random numbers (not the
    zygote's state, copied), and matplotlib's folders are the program's own (in its /tmp),
    not those the zygote imported it with."""
    import nbformat

    from attention_course.sandbox.execute import execute_notebook

    confined.require()
    said = []
    for _ in range(2):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(FRESH)]
        execute_notebook(nb)
        said.append(json.loads(nb.cells[0].outputs[0]["text"]))
    assert said[0]["draw"] != said[1]["draw"], said
    for seen in said:
        mine = seen["mine"]
        assert mine.startswith("/tmp/"), seen
        assert seen["folders"] == [mine, mine], seen
        assert seen["styles"] == [f"{mine}/stylelib"], seen


def test_the_last_8192_bytes_of_a_programs_stderr_are_kept():
    """What a program writes to stderr is kept for the messages that quote it: its last 8192
    bytes, whatever it writes."""
    confined.require()
    with Confined("worker.py", {}, DEFAULT) as worker:
        worker.start(time.monotonic() + 60)
        _cell(worker, "import sys\nsys.stderr.write('x' * 20000 + 'end')\nsys.stderr.flush()")
        until = time.monotonic() + 20
        while not worker.stderr_tail(1).endswith("end") and time.monotonic() < until:
            time.sleep(0.05)
        tail = worker.stderr_tail(1)
    assert tail == "x" * (8192 - 3) + "end", (len(tail), tail[-10:])


def test_a_zygote_killed_mid_grading_is_a_fault_of_grading_then_a_fresh_one_goes_on():
    confined.require()
    killed = zygotes.zygote("worker")
    killed.wait_ready(time.monotonic() + 60)
    assert killed.pid is not None
    timer = threading.Timer(1.0, os.kill, (killed.pid, signal.SIGKILL))
    timer.start()
    try:
        with pytest.raises(zygotes.ZygoteLost):
            _sleeper_run()
    finally:
        timer.cancel()
    run = _sleeper_run()
    assert run.outcomes["n"].value == 3
    assert zygotes.zygote("worker").pid not in (None, killed.pid)


HANGS = {"    gc.collect()\n": "    import time\n    time.sleep(600)\n"}


def test_a_zygote_that_hangs_never_holds_grading_past_the_submissions_time(tmp_path, monkeypatch):
    """A zygote that never becomes ready: grading gives up by the clock at the submission's
    deadline (far before the start-up's own limit) with a fault of grading, not a score."""
    confined.require()
    limits = Limits(submission_timeout=2.0, startup_timeout=60.0, grace=0.5)
    with weakened.weakened_zygote(monkeypatch, tmp_path, HANGS):
        start = time.monotonic()
        with pytest.raises(zygotes.ZygoteLost, match="did not start in time"):
            _sleeper_run(limits)
        elapsed = time.monotonic() - start
    assert elapsed < limits.submission_timeout + 3, elapsed


LONG_LAST_WORDS = {
    "    gc.collect()\n": "    sys.stderr.write('x' * 70000 + 'end\\n')\n    sys.exit(3)\n"
}


def test_a_zygote_that_ends_as_it_starts_is_quoted_from_its_last_64_kb(tmp_path, monkeypatch):
    """A zygote that ends before it is ready, its last line of errors longer than 64 KB: the
    fault of grading says it ended and quotes that line's last 65536 bytes, no more."""
    with weakened.weakened_zygote(monkeypatch, tmp_path, LONG_LAST_WORDS):
        with pytest.raises(zygotes.ZygoteLost) as lost:
            zygotes.zygote("worker").wait_ready(time.monotonic() + 60)
    said = str(lost.value)
    assert said.startswith("the sandbox's zygote (worker): it ended x"), said[:80]
    assert said.split()[-1] == "x" * (65536 - 4) + "end"  # its last 65536 bytes, "\n" the last


def test_a_killed_zygote_holds_no_descriptor_of_grading_open():
    """Its socket and the file of its stderr are closed as it is killed (not left to the
    garbage collector: a long grading run replaces zygotes that die)."""
    gc.collect()
    gc.disable()
    try:
        before = sorted(os.listdir("/proc/self/fd"))
        zygote = zygotes.Zygote("worker")
        zygote.wait_ready(time.monotonic() + 60)
        zygote.kill("a test")
        assert sorted(os.listdir("/proc/self/fd")) == before
    finally:
        gc.enable()


def test_a_zygote_leads_a_session_of_its_own():
    """No signal to the grading process's group or session (a Ctrl-C at its terminal) reaches
    a zygote: it is the leader of a session and a process group of its own."""
    zygote = zygotes.zygote("worker")
    zygote.wait_ready(time.monotonic() + 60)
    assert zygote.pid is not None
    assert os.getsid(zygote.pid) == os.getpgid(zygote.pid) == zygote.pid
    assert os.getsid(zygote.pid) != os.getsid(0)


def test_a_zygote_not_ready_by_the_time_given_is_killed_then_by_the_clock(tmp_path, monkeypatch):
    with weakened.weakened_zygote(monkeypatch, tmp_path, HANGS):
        hangs = zygotes.zygote("worker")
        start = time.monotonic()
        with pytest.raises(zygotes.ZygoteLost, match=r"\(worker\) did not start in time"):
            hangs.wait_ready(start + 0.3)
        elapsed = time.monotonic() - start
        assert not hangs.alive()
    assert 0.3 <= elapsed < 1.0, elapsed


@pytest.mark.parametrize(
    "layer, missing",
    [
        ({"        _drop_capabilities()\n": ""}, "CapEff"),
        ({'            _load_filter(state["filter"])\n': "            pass\n"}, "Seccomp"),
    ],
    ids=["capabilities", "filter"],
)
def test_a_child_that_is_not_contained_refuses_to_run(layer, missing, tmp_path, monkeypatch):
    """Its layer gone (the check of it kept): the program never runs, and the grading worker's
    start is a fault of grading that says why."""
    confined.require()
    with weakened.weakened_zygote(monkeypatch, tmp_path, layer):
        with pytest.raises(SandboxError, match=f"not contained, refused to run: .*{missing}"):
            _sleeper_run()


def test_a_child_whose_parent_is_not_its_zygote_runs_nothing(tmp_path, monkeypatch):
    """The child checks, once it will die with its parent, that its parent is still the
    zygote (else the zygote died before that, and nothing would kill the child): a zygote
    that takes itself for another process makes children that end at once, the program never
    run, the worker's start a fault of grading that says how the child ended."""
    confined.require()
    other = {'        "zygote": os.getpid(),\n': '        "zygote": -1,\n'}
    with weakened.weakened_zygote(monkeypatch, tmp_path, other):
        with pytest.raises(SandboxError, match="did not start: ended with exit code 122"):
            _sleeper_run()


SAYS_A_LOT_AND_ENDS = {
    "        _fresh_state(request)\n": "        for i in range(40):\n"
    "            os.write(2, f'line {i}\\n'.encode())\n"
    "        os._exit(3)\n"
}


def test_a_worker_that_ends_before_it_is_ready_is_quoted_from_its_last_15_lines(
    tmp_path, monkeypatch
):
    """Its program writes 40 lines to stderr and ends before it says it is ready: a fault of
    grading that says how it ended and quotes the last 15 lines it wrote, all of them there."""
    confined.require()
    with weakened.weakened_zygote(monkeypatch, tmp_path, SAYS_A_LOT_AND_ENDS):
        with pytest.raises(SandboxError) as failed:
            _sleeper_run()
    first, *quoted = str(failed.value).splitlines()
    assert (
        first == "the grading worker did not start: ended with exit code 3 (os._exit or a crash?)"
    )
    assert quoted == [f"line {i}" for i in range(25, 40)]


@pytest.mark.parametrize(("raised", "status"), [("7", 7), ("'no more'", 1)])
def test_a_program_that_raises_system_exit_ends_with_its_code(raised, status):
    """The worker's own loop made to raise SystemExit by student code (its frame reader
    replaced): the program ends with the status a program started anew would (the exit code;
    1 for a message), said as such.
    The cell also closes its end of the requests' pipe, a moment before the program ends, so
    the call cannot be written to it: a crash with its status, never a wait that timed out."""
    cell = (
        "import os, sys, time\n"
        "_worker = sys.modules['__main__']\n"
        "def leave(*args, **kwargs):\n"
        "    time.sleep(0.3)\n"
        f"    raise SystemExit({raised})\n"
        "_worker.wire.read_frame = leave\n"
        "os.close(_worker._link['requests'])\n"
        "def f():\n"
        "    return 1\n"
    )
    ended = run_program([("cell", cell)], [Call("f#0", "f")]).outcomes["f#0"]
    assert ended.status == "crashed", ended
    assert ended.detail == f"ended with exit code {status} (os._exit or a crash?)"


def test_a_descriptor_passed_at_a_higher_number_comes_alone():
    """The sealed inputs reach the worker at their own number, past a gap (as grading passes
    them): the numbers in between hold nothing either (the zygote's socket and the pipes it
    was sent are closed there too; the worker's own /dev/null may be there), and the inputs
    are the file they were."""
    import numpy as np

    from attention_course.sandbox.program import SharedInputs

    shared = SharedInputs()
    shared.add(np.arange(4.0))
    sealed = shared.open()
    assert sealed is not None
    high = 40
    os.dup2(sealed, high, inheritable=False)
    os.close(sealed)
    try:
        with Confined("worker.py", {}, DEFAULT, pass_fds=(high,)) as worker:
            worker.start(time.monotonic() + 60)
            _cell(worker, OBSERVE)
            found = _call(worker, "descriptors")
    finally:
        os.close(high)
    kinds = {int(fd): target.split(":")[0] for fd, target in found.items()}
    assert "socket" not in kinds.values(), found
    assert sorted(fd for fd, kind in kinds.items() if kind == "pipe") == [2, 3, 4], found
    assert found[str(high)].startswith("/memfd:grading-inputs"), found
    between = {fd: found[str(fd)] for fd in kinds if 4 < fd < high}
    assert all(t == "/dev/null" or t.startswith("/proc/") for t in between.values()), between


@pytest.mark.parametrize("given", [1.0, -1.0], ids=["a second", "a time already past"])
def test_a_zygote_that_reads_no_requests_until_its_socket_is_full_is_lost_by_the_time_given(
    given,
):
    """A ready zygote that stops reading (stopped: SIGSTOP) until its socket takes no more: a
    fork waits for room no longer than it was given (not at all once that time is past), and
    is a fault of grading (ZygoteLost: the request was never taken), not a fork late, and the
    zygote is killed."""
    import socket

    confined.require()
    stuck = zygotes.Zygote("worker")  # this test's own: the process's zygote is left alone
    try:
        stuck.wait_ready(time.monotonic() + 60)
        os.kill(stuck._proc.pid, signal.SIGSTOP)
        sent = 0
        while True:  # requests it never reads, until its socket is full
            try:
                stuck._sock.send(b'{"op": "fork"}', socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            sent += 1
        assert sent > 0
        with open(os.devnull) as null:
            start = time.monotonic()
            with pytest.raises(zygotes.ZygoteLost, match=r"took no request \(TimeoutError") as lost:
                stuck.fork({"script": "worker.py"}, [null.fileno()] * 3, start + given)
            waited = time.monotonic() - start
        assert max(given, 0.0) - 0.1 < waited < max(given, 0.0) + 0.5, waited
        assert not isinstance(lost.value, zygotes.ForkLate), lost.value
        assert stuck._proc.poll() == -signal.SIGKILL
    finally:
        stuck.kill("the test is over")


SLOW_FORK = {
    "                request = json.loads(data)\n": (
        "                request = json.loads(data)\n                select.select([], [], [], 3)\n"
    )
}


def test_a_fork_the_submissions_time_runs_out_before_is_the_submissions(tmp_path, monkeypatch):
    """A ready zygote that has not forked when the submission's time is up (a loaded machine):
    the submission used up its time, a reason the student reads, not a fault of grading; the
    same wait with the start-up's own limit the nearer one is a fault of grading."""
    confined.require()
    with weakened.weakened_zygote(monkeypatch, tmp_path, SLOW_FORK):
        zygotes.zygote("worker").wait_ready(time.monotonic() + 60)
        start = time.monotonic()
        run = _sleeper_run(Limits(submission_timeout=1.0, startup_timeout=60.0))
        assert time.monotonic() - start < 3, "waited past the submission's time"
        assert run.outcomes["n"].status == "skipped"
        assert "used up its 1 s of grading time" in run.outcomes["n"].detail
        zygotes.zygote("worker").wait_ready(time.monotonic() + 60)
        with pytest.raises(zygotes.ZygoteLost, match="did not fork in time"):
            _sleeper_run(Limits(submission_timeout=30.0, startup_timeout=1.0))


def test_a_zygote_that_dies_as_it_forks_is_a_fault_of_grading_whatever_time_is_left(
    tmp_path, monkeypatch
):
    """A zygote that ends on a request (it crashed) before the submission's time is up: a
    fault of grading, never the submission's time used up, even with that time the nearer;
    the pipes made for the program are closed (grading holds no descriptor more than before)."""
    confined.require()
    dies = {"                request = json.loads(data)\n": "                os._exit(1)\n"}
    with weakened.weakened_zygote(monkeypatch, tmp_path, dies):
        zygotes.zygote("worker").wait_ready(time.monotonic() + 60)
        gc.collect()  # (earlier tests' garbage closes its descriptors now, not meanwhile)
        held = sorted(os.listdir("/proc/self/fd"))
        with pytest.raises(zygotes.ZygoteLost) as lost:
            _sleeper_run(Limits(submission_timeout=20.0, startup_timeout=60.0))
        gc.collect()  # (a pipe left open is a bare number: no garbage closes it)
        assert sorted(os.listdir("/proc/self/fd")) == held
    assert not isinstance(lost.value, zygotes.ForkLate), lost.value
