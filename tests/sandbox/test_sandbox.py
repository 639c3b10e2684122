"""The sandbox's own parts: frames that cannot hurt the reader, deadlines the student cannot
move, and refusal where no sandbox can be made (the doctor's report: test_doctor.py)."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course.sandbox.confined import Confined, Died
from attention_course.sandbox.inside import wire
from attention_course.sandbox.program import Call, SandboxError, run_program
from attention_course.settings import DEFAULT, PACING, Limits
from tests.course import COURSE_ROOT
from tests.sandbox import bubblewraps

CAPS = wire.Caps(1 << 20, 1 << 20, 1000)


def _frame(header: dict, payload: bytes = b"") -> bytes:
    body = json.dumps(header).encode()
    return wire.MAGIC + struct.pack("<IQ", len(body), len(payload)) + body + payload


def _read(data: bytes):
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    try:
        return wire.read_frame(r, CAPS, time.monotonic() + 5)
    finally:
        os.close(r)


def test_frames_round_trip():
    arrays = [np.arange(6.0).reshape(2, 3), np.array([True, False]), np.array(3 + 4j)]
    header, got = _read(wire.pack({"op": "x", "n": 1}, arrays))
    assert header["op"] == "x" and header["n"] == 1
    for a, b in zip(arrays, got, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize(
    "data, words",
    [
        # 10**10 float64s declared in 8 bytes: refused before anything is allocated
        (
            _frame(
                {"arrays": [{"dtype": "<f8", "shape": [100000, 100000], "offset": 0}]}, b"\0" * 8
            ),
            "elements",
        ),
        # a pickled object where numbers should be
        (
            _frame({"arrays": [{"dtype": "|O", "shape": [1], "offset": 0}]}, b"\0" * 8),
            "not plain numbers",
        ),
        # bigger numbers than any reply needs (complex256), and text, bytes or records
        (_frame({"arrays": [{"dtype": "<c32", "shape": [1], "offset": 0}]}, b"\0" * 32), "plain"),
        (_frame({"arrays": [{"dtype": "<U2", "shape": [1], "offset": 0}]}, b"\0" * 8), "plain"),
        (_frame({"arrays": [{"dtype": "|V8", "shape": [1], "offset": 0}]}, b"\0" * 8), "plain"),
        (_frame({"arrays": [{"dtype": "nope", "shape": [1], "offset": 0}]}, b"\0" * 8), "dtype"),
        (_frame({"arrays": [{"shape": [1], "offset": 0}]}, b"\0" * 8), "malformed dtype"),
        (_frame({"arrays": [7]}), "malformed array entry"),
        # two arrays under the element cap each, over it together
        (
            _frame({"arrays": [{"dtype": "|u1", "shape": [600], "offset": 0}] * 2}, b"\0" * 600),
            "elements",
        ),
        (
            _frame({"arrays": [{"dtype": "<f8", "shape": [1] * 33, "offset": 0}]}, b"\0" * 8),
            "shape",
        ),
        (_frame({"arrays": [{"dtype": "<f8", "shape": [1.0], "offset": 0}]}, b"\0" * 8), "shape"),
        (_frame({"arrays": [{"dtype": "<f8", "shape": [1], "offset": "0"}]}, b"\0" * 8), "offset"),
        (_frame({"arrays": [{"dtype": "<f8", "shape": [1], "offset": -8}]}, b"\0" * 8), "outside"),
        (_frame({"arrays": [{"dtype": "<f8", "shape": [2], "offset": 0}]}, b"\0" * 8), "outside"),
        (_frame({"arrays": [{"dtype": "<f8", "shape": [-1], "offset": 0}]}, b"\0" * 8), "shape"),
        (_frame({"arrays": "no"}), "malformed"),
        (b"ACW0" + b"\0" * 12, "not a frame"),
        (wire.MAGIC + struct.pack("<IQ", 1 << 30, 0), "byte limit"),
        (wire.MAGIC + struct.pack("<IQ", 2, CAPS.payload_bytes + 1), "byte limit"),
        (wire.MAGIC + struct.pack("<IQ", 5, 0) + b"{nope", "malformed frame header"),
        (wire.MAGIC + struct.pack("<IQ", 2, 0) + b"[]", "malformed"),
    ],
)
def test_hostile_frames_are_refused(data, words):
    with pytest.raises(wire.WireError, match=words):
        _read(data)


def test_frames_at_the_caps_are_read():
    """What the caps allow is read whole (a cap refuses only what is over it)."""
    caps = wire.Caps(1 << 20, 8000, 1000)
    frame = wire.pack({"op": "x"}, [np.ones(1000)])
    r, w = os.pipe()
    os.write(w, frame)
    os.close(w)
    try:
        header, (got,) = wire.read_frame(r, caps, time.monotonic() + 5)
    finally:
        os.close(r)
    assert header["op"] == "x" and got.shape == (1000,) and got.sum() == 1000
    with pytest.raises(wire.WireError, match="cannot send"):
        wire.pack({}, [np.array(["text"])])


def test_a_cut_frame_is_a_closed_channel():
    with pytest.raises(wire.Closed):
        _read(_frame({"op": "x"})[:-3])


def _worker(limits: Limits = DEFAULT) -> Confined:
    worker = Confined("worker.py", {}, limits)
    worker.start(time.monotonic() + 60)
    return worker


def test_a_reply_trickled_byte_by_byte_does_not_move_the_deadline():
    """A frame's start, then one byte at a time (sleeping in between, so using no CPU time):
    the step's wall-clock backstop stays where it was."""
    trickle = (
        "import os, struct, time\n"
        "start = b'ACW1' + struct.pack('<IQ', 1000, 0)\n"
        "for fd in range(3, 20):\n"
        "    try:\n"
        "        os.write(fd, start)\n"
        "    except OSError:\n"
        "        continue\n"
        "    for _ in range(1000):\n"
        "        os.write(fd, b' '); time.sleep(0.02)\n"
    )
    with _worker() as worker:
        start = time.monotonic()
        backstop = DEFAULT.backstop(1)
        with pytest.raises(Died, match=f"stopped after {backstop:g} s of waiting"):
            worker.request({"op": "cell", "id": "x", "source": trickle, "timeout": 1}, timeout=1)
        assert time.monotonic() - start < backstop + DEFAULT.grace + 1


def test_a_forged_reply_kills_the_worker():
    forge = (
        "import json, os, struct\n"
        "body = json.dumps({'op': 'cell', 'error': None, 'seq': 99}).encode()\n"
        "frame = b'ACW1' + struct.pack('<IQ', len(body), 0) + body\n"
        "for fd in range(3, 20):\n"
        "    try:\n"
        "        os.write(fd, frame)\n"
        "    except OSError:\n"
        "        pass\n"
        "import time; time.sleep(30)\n"
    )
    with _worker() as worker:
        with pytest.raises(Died, match="no request"):
            worker.request({"op": "cell", "id": "x", "source": forge, "timeout": 5}, timeout=5)


# A cell that answers its own request before the worker does: it finds the request the worker
# is answering (a dict with "op" and "seq" in a frame up the stack) and writes the reply the
# worker would write, where the worker's replies go. The worker's own reply then waits, stale.
ANSWERS_ITSELF = """
import json, os, struct, sys
frame = sys._getframe()
while frame is not None:
    asked = [v for v in frame.f_locals.values()
             if isinstance(v, dict) and v.get("op") == "cell" and "seq" in v]
    if asked:
        break
    frame = frame.f_back
body = json.dumps({"op": "cell", "error": None, "seq": asked[0]["seq"]}).encode()
reply = b"ACW1" + struct.pack("<IQ", len(body), 0) + body
for fd in range(3, 20):
    try:
        os.write(fd, reply)
    except OSError:
        pass
"""


def test_a_stale_reply_is_never_the_answer_to_the_next_request():
    """The next request (a cell that raises) finds the first one's leftover reply, which says
    "no error": it is a reply to no request it was given, not the answer."""
    with _worker() as worker:
        first, _ = worker.request(
            {"op": "cell", "id": "a", "source": ANSWERS_ITSELF, "timeout": 5}, timeout=5
        )
        assert first["op"] == "cell" and first["error"] is None
        with pytest.raises(Died, match="no request"):
            worker.request(
                {"op": "cell", "id": "b", "source": "raise ValueError('b')", "timeout": 5},
                timeout=5,
            )


FORGED_RESULT = """
import json, os, pickle, struct

class Payload:
    def __reduce__(self):  # what unpickling in the grader would run
        return (os.system, ("touch {marker}",))

def f(x):
    data = pickle.dumps(Payload())
    spec = {{"dtype": "|O", "shape": [1], "offset": 0}}
    body = json.dumps({{"op": "call", "status": "ok", "value": {{"array": 0}},
                       "arrays": [spec], "seq": 1}}).encode()
    frame = b"ACW1" + struct.pack("<IQ", len(body), len(data)) + body + data
    for fd in range(1, 20):
        try:
            os.write(fd, frame)
        except OSError:
            pass
    return x
"""


def test_a_forged_result_frame_is_refused_and_runs_nothing(tmp_path):
    """A call that writes its own reply (an object array holding a pickle) where the worker's
    reply goes: refused before anything is built from it; the call counts as crashed."""
    marker = tmp_path / "unpickled"
    cells = [("f", FORGED_RESULT.format(marker=marker))]
    run = run_program(cells, [Call("f#0", "f", (1.0,)), Call("f#1", "f", (2.0,))])
    out = run.outcomes["f#0"]
    assert out.status == "crashed" and "could not be read" in out.detail, out
    assert "not plain numbers" in out.detail
    assert run.outcomes["f#1"].status == "skipped"
    assert not marker.exists()


MALFORMED = """
import json, os, struct
def _send(header):  # a frame of the right lengths, where the worker's replies go
    body = header.encode() if isinstance(header, str) else json.dumps(header).encode()
    frame = b"ACW1" + struct.pack("<IQ", len(body), 8) + body + bytes(8)
    for fd in range(3, 64):
        try:
            os.write(fd, frame)
        except OSError:
            pass
def spec(**fields):
    return {{"op": "call", "status": "ok", "value": {{"array": 0}}, "arrays": [
        dict({{"dtype": "<f8", "shape": [1], "offset": 0}}, **fields)]}}
{code}
"""


def test_a_malformed_reply_ends_its_step_and_grading_goes_on():
    """A cell and functions that write malformed replies (the dtypes, shapes and nesting that
    crashed the reader): each such step is recorded with the reason, in a fresh worker the rest
    is graded."""
    demo = MALFORMED.format(code='_send(spec(dtype=","))')  # a demo cell, graded or not
    functions = MALFORMED.format(
        code="def f(x):\n    return x\n"
        "def deep(x):\n    _send('[' * 100000 + ']' * 100000)\n"
        "def empty(x):\n    _send(spec(shape=[0, 2**40, 2**40, 2**40]))\n"
    )
    calls = [Call("deep", "deep", (1,)), Call("f", "f", (2.0,)), Call("empty", "empty", (1,))]
    run = run_program([("demo", demo), ("functions", functions)], calls)
    (error,) = run.cell_errors
    assert error.cell_id == "demo" and error.error_type == "WorkerDied"
    assert "could not be read (an array of dtype ',' is not plain numbers)" in error.error_message
    assert run.outcomes["f"].status == "ok" and run.outcomes["f"].value == 2.0
    for key, words in (("deep", "nested more than 64"), ("empty", "more than 4194304 elements")):
        out = run.outcomes[key]
        assert out.status == "crashed" and "could not be read" in out.detail, out
        assert words in out.detail
    assert run.workers == 3  # the demo cell's, deep's, and the one that ran f and empty


HANG = """
import signal, time
def f{i}(x):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # ignore the alarm: the worker is killed
    time.sleep(60)
"""


def test_a_submission_has_one_deadline_for_all_its_workers():
    """Each function kills its worker; fresh workers go on, never past the submission's time."""
    limits = Limits(submission_timeout=4.0, call_timeout=1.0, grace=1.0, max_restarts=100)
    cells = [(f"f{i}", HANG.format(i=i)) for i in range(10)]
    calls = [Call(f"f{i}#0", f"f{i}", (i,)) for i in range(10)]
    start = time.monotonic()
    run = run_program(cells, calls, limits)
    assert time.monotonic() - start < limits.submission_timeout + limits.grace + 2
    assert run.outcomes["f0#0"].status == "timeout"
    assert run.outcomes["f9#0"].detail == "not run: the submission used up its 4 s of grading time"


def test_a_result_too_large_to_grade_is_refused_in_the_worker():
    limits = Limits(result_elements=1000)
    cells = [("f", "import numpy as np\ndef f(n):\n    return np.zeros(n)\n")]
    run = run_program(cells, [Call("small", "f", (10,)), Call("large", "f", (10**6,))], limits)
    assert run.outcomes["small"].status == "ok"
    assert run.outcomes["large"].status == "unreadable"
    assert "too large to grade" in run.outcomes["large"].detail


def test_a_reply_over_the_default_frame_cap_is_refused_through_the_sandbox():
    """The default limits, a real sandbox: a function that writes a reply of its own whose
    payload is one byte over the default cap (64 MiB), then waits: refused from its lengths
    alone, before any of it is read or awaited, saying its size and the limit; the next call
    is graded in a fresh worker. (Values the worker sends itself never come near the cap:
    strings and lists are cut, arrays have an element cap.)"""
    over = 64 * 1024**2 + 1
    code = MALFORMED.format(
        code="import time\n"
        "def big(x):\n"
        "    body = json.dumps({'op': 'call', 'status': 'ok', 'value': 1}).encode()\n"
        f"    frame = b'ACW1' + struct.pack('<IQ', len(body), {over}) + body\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            os.write(fd, frame)\n"
        "        except OSError:\n"
        "            pass\n"
        "    time.sleep(60)\n"
        "def f(x):\n"
        "    return x\n"
    )
    run = run_program([("f", code)], [Call("big", "big", (1,)), Call("f", "f", (2.0,))], DEFAULT)
    big = run.outcomes["big"]
    assert big.status == "crashed" and "could not be read" in big.detail, big
    header = len(b'{"op": "call", "status": "ok", "value": 1}')
    assert f"a frame of {over + header} bytes is over the {128 * 1024**2} byte limit" in (
        big.detail
    ), big.detail
    assert run.outcomes["f"].status == "ok" and run.outcomes["f"].value == 2.0


def _check(path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(path), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=COURSE_ROOT,
    )


def test_no_sandbox_no_grading(tmp_path):
    notebook = COURSE_ROOT / "release" / "attention_basics" / "attention_basics.ipynb"
    env = dict(os.environ, PATH=str(tmp_path))  # no bwrap anywhere on it
    proc = _check(notebook, env=env)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "bubblewrap" in proc.stderr and "--unsandboxed" in proc.stderr
    proc = _check(notebook, "--unsandboxed", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "UNSANDBOXED" in proc.stdout


def test_check_refuses_a_notebook_that_claims_another_assignment(tmp_path):
    nb = nbformat.read(COURSE_ROOT / "release" / "masks_and_heads" / "masks_and_heads.ipynb", 4)
    nb.metadata["attention_course"] = {"assignment": "attention_basics"}
    path = tmp_path / "attention_basics.ipynb"
    nbformat.write(nb, path)
    proc = _check(path)
    assert proc.returncode == 2
    assert "masks_and_heads" in proc.stderr and "refused" in proc.stderr


WORKER_KINDS = """
import os, time
import numpy as np

def slow(x):
    time.sleep(4)
    return x

def quick(x):
    return x

def crash_a(x):
    os._exit(3)

crash_b = crash_c = crash_a

def spin(x):
    while True:
        pass

def generator(x):
    return (i for i in range(3))

def zeros(n):
    return np.zeros(n)
"""


def test_a_worker_is_stopped_at_its_own_deadline_and_a_fresh_one_goes_on():
    """The worker's CPU time runs out before the call's own time limit: the call is stopped
    there, not when the submission's time is up, and the next call runs in a fresh worker."""
    limits = Limits(
        worker_timeout=1.5, call_timeout=5.0, grace=1.0, submission_timeout=120.0, wall_factor=40
    )  # a backstop far away: the CPU time decides, however busy the machine
    start = time.monotonic()
    run = run_program(
        [("kinds", WORKER_KINDS)], [Call("s", "spin", (1,)), Call("q", "quick", (2,))], limits
    )
    assert time.monotonic() - start < 60  # two workers' start-up on a busy machine included
    assert run.outcomes["s"].status == "timeout"
    assert run.outcomes["s"].detail.startswith("was stopped after ")
    assert "of CPU time" in run.outcomes["s"].detail
    assert float(run.outcomes["s"].detail.split()[3]) <= 1.5  # the worker's own time
    assert run.outcomes["q"].status == "ok" and run.outcomes["q"].value == 2
    assert run.workers == 2


def test_a_worker_is_restarted_at_most_max_restarts_times():
    """Three functions crash their worker: 1 + max_restarts workers run, then the rest is
    skipped."""
    keys = ["a", "q0", "b", "c", "q1"]
    calls = [Call(k, "quick" if k.startswith("q") else f"crash_{k}", (1,)) for k in keys]
    run = run_program([("kinds", WORKER_KINDS)], calls, Limits(max_restarts=2))
    assert run.workers == 3
    assert [run.outcomes[k].status for k in keys] == [
        "crashed",
        "ok",
        "crashed",
        "crashed",
        "skipped",
    ]
    assert run.outcomes["q1"].detail == "not run: the worker crashed too many times"
    assert run.notes[-1] == "gave up after too many worker crashes"


def test_only_a_call_that_timed_out_skips_the_later_calls_of_its_function():
    """A call stopped by its own alarm (the worker lives on) skips the function's later calls;
    an unreadable result does not."""
    calls = [Call(f"spin{i}", "spin", (i,)) for i in range(2)]
    calls += [Call(f"gen{i}", "generator", (i,)) for i in range(2)]
    run = run_program([("kinds", WORKER_KINDS)], calls, Limits(call_timeout=0.3))
    assert run.workers == 1
    assert run.outcomes["spin0"].status == "timeout"
    assert run.outcomes["spin1"].status == "skipped"
    assert "ran longer than the time limit" in run.outcomes["spin1"].detail
    assert [run.outcomes[k].status for k in ("gen0", "gen1")] == ["unreadable", "unreadable"]
    assert "returned" in run.outcomes["gen1"].detail


def test_results_past_the_submissions_data_allowance_are_unreadable():
    limits = Limits(program_result_bytes=1000)
    calls = [Call("a", "zeros", (50,)), Call("b", "zeros", (100,)), Call("c", "zeros", (1,))]
    run = run_program([("kinds", WORKER_KINDS)], calls, limits)
    assert run.outcomes["a"].status == "ok"  # 400 bytes
    for key in ("b", "c"):  # 1200 bytes, then 1208
        assert run.outcomes[key].status == "unreadable"
        assert run.outcomes[key].detail == "returned more data than allowed"


def test_results_exactly_at_the_submissions_data_allowance_are_read():
    calls = [Call("a", "zeros", (50,))]  # 400 bytes
    run = run_program([("kinds", WORKER_KINDS)], calls, Limits(program_result_bytes=400))
    assert run.outcomes["a"].status == "ok"
    run = run_program([("kinds", WORKER_KINDS)], calls, Limits(program_result_bytes=399))
    assert run.outcomes["a"].status == "unreadable"


def test_a_submission_out_of_time_before_any_worker_ends_at_once():
    """No time left at the start: every call is skipped with the reason, once, and the run
    ends (it does not go round again)."""
    import threading

    done = {}

    def grade() -> None:
        calls = [Call("q", "quick", (1,)), Call("z", "zeros", (2,))]
        done["run"] = run_program([("kinds", WORKER_KINDS)], calls, Limits(submission_timeout=0))

    thread = threading.Thread(target=grade, daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert "run" in done, "the run did not end"
    run = done["run"]
    assert run.workers == 0
    assert run.notes == ["grading stopped: the submission used up its 0 s of grading time"]
    assert {k: o.detail for k, o in run.outcomes.items()} == dict.fromkeys(
        ("q", "z"), "not run: the submission used up its 0 s of grading time"
    )


def test_a_worker_that_cannot_start_in_time_left_is_a_fault_of_grading(tmp_path, monkeypatch):
    """bubblewrap slower to start than the start-up's own limit, with the submission's time
    far from used up: a fault of grading (SandboxError), which says why."""
    bubblewraps.put_on_path(bubblewraps.SLOW, tmp_path, monkeypatch)
    start = time.monotonic()
    with pytest.raises(SandboxError, match="the grading worker did not start: was stopped"):
        run_program(
            [("kinds", WORKER_KINDS)], [Call("q", "quick", (1,))], Limits(startup_timeout=0.5)
        )
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("words", ["almost ready", "something other than ready"])
def test_a_sandbox_whose_placeholder_says_other_than_ready_is_a_fault_of_grading(
    words, tmp_path, monkeypatch
):
    """bubblewrap's placeholder says something other than "ready" (text that sorts before it,
    or after) and goes on running, a process of its own beside it: no program is forked into
    it; grading waits for it only the time an ending process gets, and the fault is grading's
    (SandboxError), not the student's."""
    bubblewraps.put_on_path(bubblewraps.says_instead(words), tmp_path, monkeypatch)
    start = time.monotonic()
    with pytest.raises(SandboxError, match="the grading worker did not start: did not start"):
        run_program([("kinds", WORKER_KINDS)], [Call("q", "quick", (1,))], Limits())
    assert time.monotonic() - start < 10


def test_a_sandbox_bubblewrap_cannot_make_after_the_probe_says_bubblewraps_last_line(
    tmp_path, monkeypatch
):
    """The probe made its sandbox; later bubblewrap cannot (its namespaces refused): a fault
    of grading that quotes the last of bubblewrap's lines, the reason."""
    bubblewraps.put_on_path(bubblewraps.REFUSING, tmp_path, monkeypatch)
    with pytest.raises(SandboxError) as refused:
        run_program([("kinds", WORKER_KINDS)], [Call("q", "quick", (1,))], Limits())
    assert str(refused.value).startswith(
        "the grading worker did not start: did not start properly (bwrap: No permissions to "
        "create new namespace, likely because the kernel does not allow non-privileged user "
        "namespaces)\n"
    ), refused.value


@pytest.mark.parametrize("unsandboxed", [False, True], ids=["sandboxed", "unsandboxed"])
def test_a_start_with_no_time_left_is_stopped_at_once_and_leaves_nothing(unsandboxed):
    worker = Confined("worker.py", {}, Limits(), unsandboxed=unsandboxed)
    start = time.monotonic()
    with pytest.raises(Died, match="was stopped after"):
        worker.start(start - 1.0)
    assert time.monotonic() - start < 5 and worker.processes() == []


LEAVES_A_DAEMON = """
import os, time
def leaves(x):
    if os.fork() == 0:
        os.setsid()
        time.sleep(60)  # holds the worker's pipes, as its child
        os._exit(0)
    os._exit(0)
def after(x):
    return x
"""


def test_a_program_that_ends_leaving_a_process_behind_is_said_as_it_ended():
    """The call ends the worker (os._exit) and leaves a child that holds its pipes: no reply
    will come, and the call is a crash said as the program ended, not a wait that timed out."""
    start = time.monotonic()
    run = run_program(
        [("cell", LEAVES_A_DAEMON)], [Call("l", "leaves", (1,)), Call("a", "after", (2,))]
    )
    got = run.outcomes["l"]
    assert got.status == "crashed" and got.detail == "ended with exit code 0 (os._exit or a crash?)"
    assert run.outcomes["a"].value == 2 and run.workers == 2
    assert time.monotonic() - start < DEFAULT.call_timeout + 5


def test_a_sandbox_left_as_its_work_is_done_ends_its_program_on_its_own_else_kills_it():
    """Left with no error, the program is asked to end (its requests' pipe closed) and does so
    itself, as a process should; left on an error, it is killed at once. (The exit status is
    the zygote's report of the program, read where `Confined` keeps it.)"""
    with Confined("worker.py", {}, Limits()) as done:
        done.start(time.monotonic() + 60)
    assert done._started().poll() == 0
    with pytest.raises(KeyError), Confined("worker.py", {}, Limits()) as failed:
        failed.start(time.monotonic() + 60)
        raise KeyError("an error of the caller")
    assert failed._started().poll() == -signal.SIGKILL
    lingers = (  # it reads no more requests: it never sees their pipe closed
        "import sys, time\n"
        "sys.modules['__main__'].wire.read_frame = lambda *args, **kwargs: time.sleep(60)\n"
    )
    with Confined("worker.py", {}, Limits()) as kept:
        kept.start(time.monotonic() + 60)
        cell = {"op": "cell", "id": "t", "source": lingers, "timeout": 10.0}
        reply, _ = kept.request(cell, timeout=10.0)
        assert reply["error"] is None, reply
        start = time.monotonic()
    assert PACING.end_grace <= time.monotonic() - start < PACING.end_grace + 5
    assert kept._started().poll() == -signal.SIGKILL  # killed once its grace was over


def test_each_sandbox_that_ran_is_told_to_the_benchmarks_once():
    """trace.py counts the sandboxes a stage closed (the benchmarks' figures): each that
    started, once, however often it is closed; one never started is not a sandbox."""
    from attention_course import trace
    from attention_course.sandbox import confined

    confined.require()  # the machine's probe (a sandbox of its own) before counting
    before = trace.sandboxes_closed()
    run = run_program(
        [("kinds", WORKER_KINDS)], [Call("c", "crash_a", (1,)), Call("q", "quick", (2,))]
    )
    assert run.workers == 2 and trace.sandboxes_closed() - before == 2
    never = Confined("worker.py", {}, Limits())
    never.close()
    assert trace.sandboxes_closed() - before == 2
    with Confined("worker.py", {}, Limits()) as once:
        once.start(time.monotonic() + 60)
        once.close()
    assert trace.sandboxes_closed() - before == 3


@pytest.mark.parametrize("unsandboxed", [False, True], ids=["sandboxed", "unsandboxed"])
def test_a_sandboxs_processes_are_its_programs_never_its_first(unsandboxed):
    """What doctor looks at from the host: the program and every process of its sandbox but
    the first (bubblewrap, root, which lays it out): as root, all of them its own uid."""
    with Confined("worker.py", {}, Limits(), unsandboxed=unsandboxed) as worker:
        worker.start(time.monotonic() + 60)
        found = worker.processes()
        if unsandboxed:
            assert found == [worker.pid]  # the worker, which has started nothing
            return
        assert worker.pid in found and len(found) >= 3  # and the program, and the placeholder's
        uids = set()
        for pid in found:
            status = Path(f"/proc/{pid}/status").read_text()
            [uid] = [line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")]
            uids.add(tuple(uid))
    assert worker.host_uid is not None and uids == {(str(worker.host_uid),) * 4}


def test_a_worker_that_reads_no_more_requests_is_stopped_by_the_clock_as_a_wait():
    """A cell makes the worker read no more requests (its frame reader replaced by a sleep):
    the next cell's request, larger than a pipe holds, cannot be written; the wait for room is
    stopped at that cell's backstop (3 x 0.4321 s), said as a wait; the call goes on in a
    fresh worker that skips that cell (and runs the first again: its call is not read)."""
    sleeps = (
        "import sys, time\n"
        "sys.modules['__main__'].wire.read_frame = lambda *args, **kwargs: time.sleep(60)\n"
    )
    large = "padding = '" + "x" * 300_000 + "'\ndef f(x):\n    return x\n"
    limits = Limits(cell_timeout=0.4321, wall_factor=3.0, grace=0.5)
    run = run_program([("sleeps", sleeps), ("large", large)], [Call("f", "f", (2,))], limits)
    waited = "was stopped after 1.296 s of waiting (it slept, or waited for what never came)"
    assert [(e.cell_id, e.error_message) for e in run.cell_errors] == [
        ("large", f"the cell {waited}")
    ]
    assert run.outcomes["f"].status == "timeout" and run.workers == 2


def test_an_unsandboxed_worker_killed_by_sigkill_is_not_said_to_pass_a_memory_limit():
    """With no cgroup, nothing counts out-of-memory kills: a SIGKILL is said as such, with
    the likely cause a question."""
    cell = "import os, signal\ndef nine(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    run = run_program([("cell", cell)], [Call("n", "nine", (1,))], unsandboxed=True)
    got = run.outcomes["n"]
    assert (got.status, got.detail) == ("crashed", "was killed (signal 9: out of memory?)")


def test_a_worker_killed_by_a_signal_without_a_name_is_said_with_its_number():
    """A real-time signal (no name in Python's `signal.Signals`) ends the worker: the call is
    a crash saying the signal's number, and the next call runs in a fresh worker."""
    number = int(signal.SIGRTMIN) + 3
    cell = f"import os\ndef rt(x):\n    os.kill(os.getpid(), {number})\n    return x\n"
    cell += "def after(x):\n    return x\n"
    run = run_program([("cell", cell)], [Call("r", "rt", (1,)), Call("a", "after", (2,))])
    got = run.outcomes["r"]
    assert got.status == "crashed" and got.detail == f"was killed by signal {number}", got
    assert got.seconds == 0.0  # no reply: no time measured
    assert run.outcomes["a"].value == 2 and run.workers == 2


def test_a_worker_that_cannot_start_as_the_submission_runs_out_skips_the_calls():
    limits = Limits(submission_timeout=0.01)
    run = run_program([("kinds", WORKER_KINDS)], [Call("q", "quick", (1,))], limits)
    assert run.workers == 1
    assert run.outcomes["q"].detail == "not run: the submission used up its 0.01 s of grading time"
