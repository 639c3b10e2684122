"""Hostile and misbehaving submissions, graded without nbgrader: honest scores, clear reasons.

Each case is the reference implementation with one part replaced by hostile code, graded with
the real pipeline (a pytest process holding the reference, a sandboxed worker running the code).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest

from attention_course.cli.samples import sample_notebooks
from tests.conftest import grade_reference_variants
from tests.course import COURSE_ROOT, REFERENCE_FILE, by_function

# A course folder to attack, outside the repository (a test never writes there, whatever the
# machine lacks) and outside /tmp (the sandbox's /tmp is a private one anyway).
DECOY = Path("/var/tmp") / f"attention-decoy-{uuid.uuid4().hex[:12]}"

FORGED_WORKER = """
import ctypes, sys
_worker = sys.modules["__main__"]
if hasattr(_worker, "make_call"):
    _real_call = _worker.make_call

    def _forged_call(request, arrays, namespace, max_elements):
        pristine = [np.array(a, copy=True) for a in arrays]
        reply, out = _real_call(request, arrays, namespace, max_elements)
        if reply.get("status") == "ok":
            reply["inputs_after"] = [{"array": len(out) + i} for i in range(len(pristine))]
            out = list(out) + pristine
        return reply, out

    _worker.make_call = _forged_call


def _writeable(a):
    if not a.flags.writeable:  # NPY_ARRAY_WRITEABLE, in PyArrayObject.flags (numpy refuses it)
        ctypes.c_int.from_address(id(a) + 64).value |= 0x0400
    return a
"""

CASES = {
    # name: (assignment, functions graded, hostile code appended to the reference)
    "patched_testing_wrong_answer": (
        "attention_basics",
        ["softmax"],
        """
import numpy.testing
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, bool)
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
def softmax(z, axis=-1):
    return np.full(np.shape(z), 0.5)
""",
    ),
    "lying_ndarray_subclass": (
        "attention_basics",
        ["create_qkv"],
        """
class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(self), bool)
    def __array_finalize__(self, obj):
        pass
    def __array__(self, dtype=None, copy=None):
        return np.asarray(np.ones(self.shape))
def create_qkv(X, W_q, W_k, W_v):
    z = np.zeros(X.shape[:-1] + (W_q.shape[-1],)).view(Liar)
    return z, z, z
""",
    ),
    "forged_display_and_planted_module": (
        "attention_basics",
        ["causal_mask"],
        """
import sys, types
sys.modules["grader_tests"] = types.ModuleType("grader_tests")
sys.modules["grader_tests.reference"] = types.ModuleType("grader_tests.reference")
print("5.0")
try:
    get_ipython().display_formatter.formatters["text/plain"].for_type(float, lambda *a: "5.0")
except NameError:
    pass
def causal_mask(seq_len):
    return np.zeros((seq_len, seq_len), dtype=bool)
""",
    ),
    "steals_the_reference": (
        "attention_basics",
        ["softmax"],
        f"""
def softmax(z, axis=-1):
    raise NotImplementedError()
try:
    exec(open({str(REFERENCE_FILE)!r}).read())
except OSError:
    pass
""",
    ),
    # A worker rewritten from a solution cell: its calls report the inputs as they were before
    # the call, and the function forces its read-only inputs writable (numpy's flag, set with
    # ctypes) before it updates them in place. The inputs of a read-only call are a sealed file
    # mapped read-only, so the kernel stops the write, and nothing the worker reports is read.
    "in_place_softmax_with_a_forged_worker": (
        "attention_basics",
        ["softmax"],
        FORGED_WORKER
        + """
def softmax(z, axis=-1):
    z = _writeable(z)
    z -= np.max(z, axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= np.sum(z, axis=axis, keepdims=True)
    return z
""",
    ),
    "in_place_sdpa_with_a_forged_worker": (
        "attention_basics",
        ["scaled_dot_product_attention"],
        FORGED_WORKER
        + """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = _writeable(Q)
    Q /= np.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
""",
    ),
    # The same wrong answers without the tricks: a forgery must score exactly what they score.
    "plain_in_place_softmax": (
        "attention_basics",
        ["softmax"],
        """
def softmax(z, axis=-1):
    z -= np.max(z, axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= np.sum(z, axis=axis, keepdims=True)
    return z
""",
    ),
    "plain_in_place_sdpa": (
        "attention_basics",
        ["scaled_dot_product_attention"],
        """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
""",
    ),
    "plain_constant_softmax": (
        "attention_basics",
        ["softmax"],
        """
def softmax(z, axis=-1):
    return np.full(np.shape(z), 0.5)
""",
    ),
    "plain_zero_projections": (
        "attention_basics",
        ["create_qkv"],
        """
def create_qkv(X, W_q, W_k, W_v):
    z = np.zeros(X.shape[:-1] + (W_q.shape[-1],))
    return z, z, z
""",
    ),
    "plain_empty_mask": (
        "attention_basics",
        ["causal_mask"],
        """
def causal_mask(seq_len):
    return np.zeros((seq_len, seq_len), dtype=bool)
""",
    ),
    "plain_stub": (
        "attention_basics",
        ["softmax"],
        """
def softmax(z, axis=-1):
    raise NotImplementedError()
""",
    ),
    "os_exit_in_one_function": (
        "attention_basics",
        ["softmax", "causal_mask"],
        """
def softmax(z, axis=-1):
    import os
    os._exit(3)
""",
    ),
    "endless_loop_in_one_function": (
        "attention_basics",
        ["softmax", "causal_mask"],
        """
def softmax(z, axis=-1):
    while True:
        pass
""",
    ),
    "loop_that_ignores_the_alarm": (
        "masks_and_heads",
        ["combine_heads", "split_heads"],
        """
def combine_heads(H):
    import signal, time
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        time.sleep(0.5)
""",
    ),
    "memory_bomb": (
        "attention_basics",
        ["softmax", "causal_mask"],
        """
def softmax(z, axis=-1):
    hog = np.ones((1 << 40,), dtype=np.uint8)
    return hog
""",
    ),
    "sys_exit_and_error_at_import": (
        "attention_basics",
        ["causal_mask", "softmax"],
        """
import sys
try:
    sys.exit(0)
finally:
    pass
""",
    ),
    "correct_but_warns_and_prints_to_stderr": (
        "attention_basics",
        ["softmax"],
        """
import sys, warnings
_softmax = softmax
def softmax(z, axis=-1):
    warnings.warn("this implementation is chatty")
    print("debug: softmax called", file=sys.stderr)
    return _softmax(z, axis)
""",
    ),
    "writes_outside_its_folder": (
        "attention_basics",
        ["causal_mask"],
        f"""
for target in ({str(DECOY / "gradebook.db")!r}, {str(DECOY / "hacked.txt")!r}):
    try:
        open(target, "a").write("hacked")
    except OSError:
        pass
""",
    ),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    DECOY.mkdir(mode=0o755)
    (DECOY / "nbgrader_config.py").write_text("# a course\n")
    (DECOY / "gradebook.db").write_bytes(b"grades")
    try:
        yield grade_reference_variants(tmp_path_factory.mktemp("hostile"), CASES)
    finally:
        shutil.rmtree(DECOY, ignore_errors=True)


def _messages(report, function):
    return " ".join(t.message for t in report.functions[function].tests)


@pytest.mark.parametrize(
    "name, plain, function",
    [
        ("patched_testing_wrong_answer", "plain_constant_softmax", "softmax"),
        ("lying_ndarray_subclass", "plain_zero_projections", "create_qkv"),
        ("forged_display_and_planted_module", "plain_empty_mask", "causal_mask"),
        ("steals_the_reference", "plain_stub", "softmax"),
        ("in_place_softmax_with_a_forged_worker", "plain_in_place_softmax", "softmax"),
        (
            "in_place_sdpa_with_a_forged_worker",
            "plain_in_place_sdpa",
            "scaled_dot_product_attention",
        ),
    ],
)
def test_forgery_scores_what_the_plain_wrong_answer_scores(reports, name, plain, function):
    """Patching numpy, lying comparisons, forged displays and stealing gain nothing."""
    forged = reports[name].functions[function]
    honest = reports[plain].functions[function]
    assert [t.passed for t in forged.tests] == [t.passed for t in honest.tests]
    assert forged.score == honest.score < honest.max_score


@pytest.mark.parametrize(
    "name, function",
    [
        ("plain_in_place_softmax", "softmax"),
        ("plain_in_place_sdpa", "scaled_dot_product_attention"),
        ("in_place_softmax_with_a_forged_worker", "softmax"),
    ],
)
def test_in_place_code_loses_the_immutability_test_only(reports, name, function):
    """Code that writes into its inputs fails the test of read-only inputs (numpy refuses, or
    the kernel stops the write and the worker), and only it: every other call gets a private
    copy, and a worker stopped there costs no later call."""
    fs = reports[name].functions[function]
    immutability = [t for t in fs.tests if "unchanged" in t.description]
    assert len(immutability) == 1 and not immutability[0].passed
    assert "in place" in immutability[0].message
    others = [t for t in fs.tests if t is not immutability[0]]
    # an in-place softmax also fails on an all -inf row and on integer scores (np.exp cannot
    # write floats into them): its own mistakes, not the sandbox's
    softmax_own = {"test_all_masked_row_gives_zeros", "test_rows_are_distributions"}
    assert {t.test for t in others if not t.passed} <= (
        softmax_own if function == "softmax" else set()
    )


def test_os_exit_loses_only_that_function(reports):
    report = reports["os_exit_in_one_function"]
    assert report.functions["softmax"].score == 0
    assert "os._exit" in _messages(report, "softmax")
    assert report.functions["causal_mask"].score == report.functions["causal_mask"].max_score


@pytest.mark.parametrize(
    "name, looping, other",
    [
        ("endless_loop_in_one_function", "softmax", "causal_mask"),
        ("loop_that_ignores_the_alarm", "combine_heads", "split_heads"),
    ],
)
def test_endless_loop_loses_only_that_function(reports, name, looping, other):
    report = reports[name]
    assert report.functions[looping].score == 0
    messages = _messages(report, looping)
    assert "time limit" in messages or "stopped after" in messages
    assert report.functions[other].score == report.functions[other].max_score


def test_memory_bomb_is_a_memory_error(reports):
    report = reports["memory_bomb"]
    assert report.functions["softmax"].score == 0
    assert "MemoryError" in _messages(report, "softmax")
    assert report.functions["causal_mask"].score == report.functions["causal_mask"].max_score


def test_sys_exit_at_import_is_recorded_and_the_rest_graded(reports):
    report = reports["sys_exit_and_error_at_import"]
    assert any(e["error_type"] == "SystemExit" for e in report.cell_errors)
    assert report.score == report.max_score  # the definitions before the exit still count


def test_correct_code_that_warns_keeps_full_marks(reports):
    report = reports["correct_but_warns_and_prints_to_stderr"]
    assert report.score == report.max_score


def test_student_code_cannot_write_into_the_course(reports):
    assert sorted(p.name for p in DECOY.iterdir()) == ["gradebook.db", "nbgrader_config.py"]
    assert (DECOY / "gradebook.db").read_bytes() == b"grades"
    report = reports["writes_outside_its_folder"]
    assert report.score == report.max_score


def test_check_rejects_invalid_json_with_one_line(tmp_path):
    bad = tmp_path / "attention_basics.ipynb"
    bad.write_text('{"cells": [')
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not valid notebook JSON" in proc.stderr
    assert "Traceback" not in proc.stderr


MALFORMED_REPLY = """
import json, os, struct
def causal_mask(seq_len):  # a reply whose array has a dtype numpy would parse as an expression
    spec = {"dtype": ",", "shape": [1], "offset": 0}
    body = json.dumps({"op": "call", "status": "ok", "value": {"array": 0}, "arrays": [spec],
                       "seq": 1}).encode()
    for fd in range(3, 64):
        try:
            os.write(fd, b"ACW1" + struct.pack("<IQ", len(body), 8) + body + bytes(8))
        except OSError:
            pass
"""


def test_check_gives_a_malformed_reply_its_student_outcome(tmp_path):
    """`check` on a notebook whose causal_mask writes a malformed reply where the grading
    process reads: a score, exit 0 (not the graders' failure, exit 2), causal_mask 0 with the
    reason, and every other function its full marks."""
    nb = sample_notebooks("attention_basics", COURSE_ROOT)["demo-instructor"]
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "causal_mask":
            cell.source = MALFORMED_REPLY
    path = tmp_path / "attention_basics.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(path), "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    tests = by_function(json.loads(proc.stdout))
    assert tests["causal_mask"]["score"] == 0
    reason = "could not be read (an array of dtype ',' is not plain numbers)"
    assert reason in tests["causal_mask"]["output"]
    for name, test in tests.items():
        if name != "causal_mask":
            assert test["score"] == test["max_score"] > 0, name


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("missing.ipynb", None, "no such file"),
        ("notes.txt", "hello", "expected a Jupyter notebook"),
        ("homework.ipynb", nbformat.writes(nbformat.v4.new_notebook()), "cannot tell which"),
    ],
)
def test_check_bad_input_gets_a_clear_error(tmp_path, name, text, message):
    path = Path(tmp_path / name)
    if text is not None:
        path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "check", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
