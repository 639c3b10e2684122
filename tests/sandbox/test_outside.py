"""What the grading process keeps outside the sandbox: read-only inputs and outside functions.

A call with read-only inputs gets them as a sealed memory file mapped read-only: a write fails
in numpy, or in the kernel (the worker is stopped), whatever the student's code does first. A
function given from outside (`run_program(outside=...)`) is computed by the grading process: the
student's code sees a stand-in that sends its arguments over the wire, and no code or source of
it is compiled, opened or readable inside.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_course.sandbox.program import Call, run_program
from tests.course import REFERENCE_FILE

FORCE_AND_WRITE = """
import ctypes, sys

def forced(a):
    # numpy refuses to make the array writable: set its NPY_ARRAY_WRITEABLE flag by hand
    ctypes.c_int.from_address(id(a) + 64).value |= 0x0400
    a[...] = 0.0
    return a

def raw(a):
    ctypes.memset(a.ctypes.data, 0, a.nbytes)
    return a

def numpy_write(a):
    a += 1.0
    return a

def total(a):
    return a.sum()
"""


@pytest.fixture(scope="module")
def read_only_run():
    x = np.arange(6.0).reshape(2, 3)
    calls = [
        Call("forced#ro", "forced", (x,), readonly=True),
        Call("raw#ro", "raw", (x,), readonly=True),
        Call("numpy#ro", "numpy_write", (x,), readonly=True),
        Call("total#ro", "total", (x,), readonly=True),
        Call("forced#w", "forced", (x,)),
        Call("total#w", "total", (x,)),
    ]
    return x, run_program([("cell", FORCE_AND_WRITE)], calls)


def test_read_only_inputs_cannot_be_written_even_with_ctypes(read_only_run):
    x, run = read_only_run
    got = run.outcomes
    assert np.array_equal(x, np.arange(6.0).reshape(2, 3))  # this side's copy, of course
    for key in ("forced#ro", "raw#ro"):  # the kernel stops the write: the worker dies there
        assert got[key].status == "crashed", (key, got[key])
        assert "SIGSEGV" in got[key].detail or "SIGBUS" in got[key].detail, got[key].detail
    assert got["numpy#ro"].status == "error" and "read-only" in got["numpy#ro"].error_message
    assert got["total#ro"].status == "ok" and got["total#ro"].value == 15.0
    # writable inputs are a private copy, and a crash of a read-only call costs no other call
    assert got["forced#w"].status == "ok" and not got["forced#w"].value.any()
    assert got["total#w"].status == "ok" and got["total#w"].value == 15.0


def test_shape_changed_in_place_shows_in_the_second_call():
    x = np.ones((2, 3))
    cells = [("cell", "def f(a):\n    a.shape = (a.shape[0] * 3, -1)\n    return a.sum(axis=1)\n")]
    run = run_program(cells, [Call("f#ro", "f", (x,), readonly=True), Call("f#w", "f", (x,))])
    assert run.outcomes["f#w"].status == "ok" and run.outcomes["f#w"].value.shape == (6,)
    ro = run.outcomes["f#ro"]  # (2, 3) -> (6, 1) -> (18, -1): numpy refuses
    assert ro.status == "error" or ro.value.shape != (6,), ro


SPY = """
import sys
SEEN = []

def _hook(event, args):
    if event in ("compile", "exec", "open", "import"):
        what = args[0] if args else ""
        if isinstance(what, bytes):
            what = what.decode(errors="replace")
        if not isinstance(what, str):
            what = getattr(what, "co_filename", type(what).__name__)
        SEEN.append(f"{event}: {what}")

sys.addaudithook(_hook)

def softmax(z, axis=-1):  # the student's own, replaced by a stand-in in the run with outside
    return np.zeros_like(z)

def uses_softmax(z):
    compile("x = 1  # the student's own code", "<own>", "exec")  # the spy sees compiles
    return softmax(z, axis=-1), type(softmax).__name__, softmax.__code__.co_filename

def seen():
    return "\\n".join(SEEN)[-20000:]
"""


def test_a_function_from_outside_runs_here_and_no_code_of_it_goes_in():
    reference_text = REFERENCE_FILE.read_text()
    asked = []

    def course_softmax(z, axis=-1):
        asked.append((z.copy(), axis))
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    z = np.array([[1.0, 2.0, 3.0]])
    calls = [Call("u#0", "uses_softmax", (z,)), Call("s#0", "seen")]
    cells = [("setup", "import numpy as np"), ("spy", SPY)]
    run = run_program(cells, calls, outside={"softmax": course_softmax})
    value, kind, filename = run.outcomes["u#0"].value
    assert np.allclose(value, course_softmax(z)) and kind == "function"
    assert "worker" in filename  # the stand-in, not any code of the course's
    assert len(asked) == 2 and asked[1][1] == -1  # computed here, on what the student passed
    [recorded] = run.outside_calls["u#0"]
    assert recorded.function == "softmax" and np.array_equal(recorded.args[0], z)
    assert recorded.kwargs == {"axis": -1} and np.allclose(recorded.value, value)
    seen = run.outcomes["s#0"].value
    assert isinstance(seen, str)
    for line in reference_text.splitlines():
        if len(line.strip()) > 12:
            assert line.strip() not in seen, line
    assert "the student's own code" in seen  # the hook works
    assert "np.exp" not in seen and "def " not in seen
    # the same program without outside: the student's own softmax, and no call goes out
    own = run_program(cells, calls[:1])
    assert not own.outcomes["u#0"].value[0].any() and not own.outside_calls


def test_an_outside_function_refuses_big_or_strange_arguments():
    cells = [
        (
            "cell",
            "import numpy as np\n"
            "def big():\n    return helper(np.ones(1 << 13))\n"
            "def huge_number():\n    return helper(10**9)\n"
            "def strange():\n    return helper({'a': 1})\n"
            "def unknown():\n    return other(1)\n"
            "def fine():\n    return helper(3)\n",
        )
    ]
    names = ("big", "huge_number", "strange", "fine")
    calls = [Call(f"{n}#0", n) for n in names]
    run = run_program(cells, calls, outside={"helper": lambda n: np.ones((n, n))})
    for n in names[:3]:
        out = run.outcomes[f"{n}#0"]
        assert out.status == "error" and out.error_type == "OutsideError", (n, out)
    assert np.array_equal(run.outcomes["fine#0"].value, np.ones((3, 3)))
    assert list(run.outside_calls) == ["fine#0"]


def _forges_outside(seq: str, function: str, args: str, then: str, rest: str = ""):
    """Cells whose `asks()` writes an "outside" request of its own on the worker's replies (as
    the stand-in of a function given from outside writes one): numbered `seq` (an expression
    of the worker's `link`), for `function` with `args`; then its lines `then`; `rest`: more
    of the cell."""
    request = f"{{'op': 'outside', 'seq': {seq}, 'function': {function!r}, 'args': {args}, "
    return [
        (
            "cell",
            "import sys\n"
            "_worker = sys.modules['__main__']\n"
            "def asks():\n"
            "    link = _worker._link\n"
            f"    forged = {request}'kwargs': {{}}}}\n"
            "    _worker.wire.write_frame(link['replies'], forged)\n" + then + rest,
        )
    ]


def test_asking_for_an_outside_function_where_none_is_given_is_a_forged_reply():
    fine = "def fine():\n    return 2\n"
    cells = _forges_outside("link['seq']", "softmax", "[]", "    return 1\n", fine)
    run = run_program(cells, [Call("a#0", "asks"), Call("f#0", "fine")])
    asked = run.outcomes["a#0"]
    assert asked.status == "crashed" and "no request it was given" in asked.detail
    assert run.outcomes["f#0"].value == 2 and not run.outside_calls  # a fresh worker goes on


@pytest.mark.timeout(120)
def test_an_outside_request_with_another_requests_number_is_a_forged_reply_and_is_not_served():
    """Student code that writes its own "outside" request, numbered as no request it was given,
    is stopped there: the function outside is not called for it and the grading goes on."""
    asked = []

    def helper(n):
        asked.append(n)
        return np.ones((n, n))

    fine = "def fine():\n    return helper(4)\n"
    cells = _forges_outside("link['seq'] + 1", "helper", "[2]", "    return helper(3)\n", fine)
    run = run_program(cells, [Call("s#0", "asks"), Call("f#0", "fine")], outside={"helper": helper})
    stale = run.outcomes["s#0"]
    assert stale.status == "crashed" and "no request it was given" in stale.detail, stale
    assert np.array_equal(run.outcomes["f#0"].value, np.ones((4, 4)))  # a fresh worker goes on
    assert asked == [4] and list(run.outside_calls) == ["f#0"]


def test_an_outside_function_takes_plain_values_and_gives_numpy_scalars_and_sequences_back():
    """Text, booleans, None, numbers and lists or tuples of them go out as they are; what the
    course's function returns comes back as plain values, a numpy scalar as a 0-d array."""
    seen = []

    def described(n, items, pair, label="", flag=False, nothing=0):
        seen.append((n, items, pair, label, flag, nothing))
        return np.float64(n) * 2, (np.int32(len(items)), [label, flag])

    cells = [
        (
            "cell",
            "def asks():\n"
            "    return described(3, [1, 2.5, True], (None, 'x'), label='softmax', flag=True,"
            " nothing=None)\n",
        )
    ]
    run = run_program(cells, [Call("a#0", "asks")], outside={"described": described})
    got = run.outcomes["a#0"]
    assert got.status == "ok", got
    assert seen == [(3, [1, 2.5, True], (None, "x"), "softmax", True, None)]
    twice, (count, listed) = got.value
    assert float(twice) == 6.0 and int(count) == 3 and listed == ["softmax", True]
    [call] = run.outside_calls["a#0"]
    assert call.kwargs == {"label": "softmax", "flag": True, "nothing": None}


def test_an_outside_function_that_fails_on_the_arguments_given_is_refused_in_the_students_call():
    def picky(n):
        raise ValueError(f"no {n}")

    cells = [("cell", "def asks():\n    return picky(4)\ndef after():\n    return 2\n")]
    run = run_program(cells, [Call("a#0", "asks"), Call("b#0", "after")], outside={"picky": picky})
    refused = run.outcomes["a#0"]
    assert refused.status == "error" and refused.error_type == "OutsideError", refused
    assert refused.error_message == "the course's picky could not take these arguments"
    assert run.outcomes["b#0"].value == 2 and not run.outside_calls


def test_an_outside_request_for_a_function_not_given_is_refused_by_name():
    """Student code asks, over the wire, for a function the grading did not give from outside
    (the course's reference, say): refused as no such function, never looked up."""
    answer = (
        "    reply, _ = _worker.wire.read_frame(link['requests'], _worker.REQUEST_CAPS)\n"
        "    return reply['error']\n"
    )
    cells = _forges_outside("link['seq']", "reference", "[]", answer)
    run = run_program(cells, [Call("a#0", "asks")], outside={"helper": lambda n: n})
    assert run.outcomes["a#0"].value == "no such function is given from outside"
    assert not run.outside_calls


@pytest.mark.timeout(120)
def test_answers_the_students_code_never_reads_stop_it_by_the_clock_as_a_wait():
    """Student code that writes "outside" requests (for a function not given) faster than it
    reads their answers, and then sleeps: the answers fill its pipe, and the wait for room is
    stopped at the call's backstop, said as a wait (it is still running: not a crash)."""
    from attention_course.settings import Limits

    limits = Limits(call_timeout=0.4321, wall_factor=3.0, grace=0.5)  # backstop: 1.2963 s
    floods = "    for _ in range(20000):\n"
    floods += "        _worker.wire.write_frame(link['replies'], forged)\n"
    cells = _forges_outside("link['seq']", "nothing", "[]", floods + "    return 1\n")
    run = run_program(cells, [Call("a#0", "asks")], limits, outside={"helper": lambda n: n})
    flooded = run.outcomes["a#0"]
    assert flooded.status == "timeout", flooded
    assert flooded.detail == (
        "was stopped after 1.296 s of waiting (it slept, or waited for what never came)"
    )
    assert not run.outside_calls


def test_outside_arguments_at_the_limit_are_taken_and_one_element_more_refused():
    """The limits of an outside call: arrays of as many elements as allowed in all, numbers
    and lists as large as allowed, are taken; one more element, or one more, is refused."""
    from attention_course.settings import Limits

    def total(*args):
        return float(sum(np.sum(a) for a in args))

    cells = [
        (
            "cell",
            "import numpy as np\n"
            "def at():\n    return total(np.ones(10), np.ones(6))\n"
            "def past():\n    return total(np.ones(10), np.ones(7))\n"
            "def number_at():\n    return total(16, [1] * 16)\n"
            "def number_past():\n    return total(17)\n"
            "def list_past():\n    return total([1] * 17)\n",
        )
    ]
    keys = ["at", "past", "number_at", "number_past", "list_past"]
    calls = [Call(f"{k}#0", k) for k in keys]
    run = run_program(cells, calls, Limits(outside_call_elements=16), outside={"total": total})
    got = {k: run.outcomes[f"{k}#0"] for k in keys}
    assert got["at"].value == 16.0 and got["number_at"].value == 32.0, got
    assert got["past"].error_message == "arguments of more than 16 elements", got["past"]
    for k in ("number_past", "list_past"):
        assert got[k].error_message == "an argument larger than 16", got[k]
