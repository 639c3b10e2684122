"""The graders' shared checks on hand-made outcomes (no sandbox): each passes what it must,
fails with the student's message what it must not, and the value tolerances are those stated."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention_course.grading import harness
from attention_course.grading.harness import Fail, Student
from attention_course.sandbox.program import Call, Outcome

C = Call("f#x", "f", (np.arange(4.0).reshape(2, 2),))


def _student(value=None, status="ok", **kw) -> Student:
    return Student({C.key: Outcome(status, value=value, **kw)})


def test_a_grader_files_cases_and_properties_are_marked_in_the_open():
    """`@cases` marks the function the engine calls with a submission's seeded source, `@over`
    the families a property is checked on, `@points` its worth: plain attributes of the
    functions, no registry anywhere."""

    @harness.cases
    def inputs(draw):
        return {}

    @harness.points(2)
    @harness.over("plain", "masked")
    def test_property(case, got):
        """a property"""

    assert getattr(inputs, harness.CASES) is True
    assert getattr(test_property, harness.OVER) == ("plain", "masked")
    assert harness.points_of(test_property) == 2.0
    assert not hasattr(harness, "REGISTRY") and not hasattr(harness, "rng")


def test_student_values_and_pairs():
    assert _student(3).value(C) == 3
    with pytest.raises(Fail, match="^f raised ValueError: bad$"):
        _student(status="error", error_type="ValueError", error_message="bad").value(C)
    for status in ("timeout", "skipped", "unreadable", "crashed", "missing"):
        with pytest.raises(Fail, match="^f "):
            _student(1, status=status, detail="why").value(C)
    pair = (np.ones(2), np.ones(3))
    assert _student(pair).pair(C) == pair
    assert _student(list(pair)).pair(C) == pair
    for wrong, kind in (
        ((np.ones(2),), "a tuple of 1 items"),
        (np.ones(2), "an array of shape (2,)"),
        ((1, 2, 3), "a tuple of 3 items"),
        (5, "a int"),
    ):
        with pytest.raises(
            Fail, match=re.escape(f"must return a tuple (output, weights), got {kind}")
        ):
            _student(wrong).pair(C)


def test_hinting_adds_the_hint_once():
    with pytest.raises(Fail, match=r"^broken\. advice$"):
        with harness.hinting("advice"):
            raise Fail("broken")
    with pytest.raises(Fail, match="^has advice already$"):
        with harness.hinting("advice"):
            raise Fail("has advice already")
    with harness.hinting("advice"):
        pass


def test_arrays_shapes_and_dtypes():
    a = np.zeros((2, 3))
    assert harness.expect_array(a, "w") is a
    with pytest.raises(Fail, match="w: expected a numpy array, got a list"):
        harness.expect_array([1.0], "w")
    with pytest.raises(Fail, match="w: expected a float array, got dtype int64"):
        harness.expect_array(np.zeros(2, dtype=np.int64), "w")
    assert harness.expect_array(np.zeros(2, dtype=np.int64), "w", float_dtype=False) is not None
    assert harness.expect_shape(a, [2, 3], "w") is a
    with pytest.raises(Fail, match=r"^w: shape \(2, 3\), expected \(3, 2\)\. hint$"):
        harness.expect_shape(a, (3, 2), "w", "hint")
    with pytest.raises(Fail, match=r"^w: shape \(2, 3\), expected \(3, 2\)\.$"):
        harness.expect_shape(a, (3, 2), "w")


def test_the_value_tolerances():
    """Relative 1e-6 and absolute 1e-9: a near miss just outside either fails."""
    assert (harness.RTOL, harness.ATOL) == (1e-6, 1e-9)
    want = np.array([1.0, 2.0, 0.0])
    harness.expect_close(want * (1 + 0.9e-6), want, "w")
    harness.expect_close(want + np.array([0, 0, 0.9e-9]), want, "w")
    for got in (want * (1 + 1.2e-6), want + np.array([0, 0, 1.2e-9])):
        with pytest.raises(Fail, match="^w: wrong values. h$"):
            harness.expect_close(got, want, "w", "h")
    harness.expect_close(want * 1.01, want, "w", rtol=0.02)
    with pytest.raises(Fail, match="contains NaN"):
        harness.expect_close(np.array([1.0, np.nan, 0.0]), want, "w")
    with pytest.raises(Fail, match="shape"):
        harness.expect_close(want[:2], want, "w")
    with pytest.raises(Fail, match="expected a float array"):
        harness.expect_close(np.array([1, 2, 0]), want, "w")
    harness.expect_close(np.array([1, 2, 0]), np.array([1, 2, 0]), "w")  # ints compare too


def test_exact_equality_and_constants():
    mask = np.array([[False, True], [False, False]])
    harness.expect_equal(mask.copy(), mask, "m")
    with pytest.raises(Fail, match="m: dtype float64, expected bool. h"):
        harness.expect_equal(mask.astype(float), mask, "m", "h")
    with pytest.raises(Fail, match="m: wrong values"):
        harness.expect_equal(~mask, mask, "m")
    with pytest.raises(Fail, match="m: dtype bool, expected float64"):
        harness.expect_equal(np.array([True, False]), np.array([1.0, 0.0]), "m")
    with pytest.raises(Fail, match="^w: every entry is 1, where the values must vary"):
        harness.expect_not_constant(np.ones((2, 2)), "w")
    with pytest.raises(Fail, match="every entry is 0.5"):
        harness.expect_not_constant(np.full(2, 0.5), "w", like=np.arange(2.0))
    zeros = np.zeros((2, 2))  # where the contract's result is one value too (a masked row)
    assert harness.expect_not_constant(zeros, "w", like=np.zeros((2, 2))) is zeros
    for few in (np.ones(1), np.ones(0)):  # nothing to compare
        assert harness.expect_not_constant(few, "w") is few
    varied = np.arange(3.0)
    assert harness.expect_rank(varied, np.zeros(5), "w") is varied
    with pytest.raises(Fail, match=r"shape \(3,\), expected 2 dimensions like \(1, 1\)"):
        harness.expect_rank(varied, np.zeros((1, 1)), "w")
    with pytest.raises(Fail, match=r"shape \(1, 3\), expected 1 dimensions like \(5,\)"):
        harness.expect_rank(varied[None], np.zeros(5), "w")


def test_readers_against_the_reference():
    reader = harness.ArrayReader(lambda x: x * 2, "the hint")
    assert reader.checked(_student(C.args[0] * 3), C, "w") is not None
    with pytest.raises(Fail, match="the hint"):
        reader.checked(_student(np.ones(3)), C, "w")
    with pytest.raises(Fail, match="other"):
        reader.checked(_student(np.ones(3)), C, "w", hint="other")
    with pytest.raises(Fail, match="^w: shape \\(3,\\), expected \\(2, 2\\).$"):
        reader.checked(_student(np.ones(3)), C, "w", hint="")
    ones = np.ones((2, 2))  # relational readers read the rank only
    assert reader.ranked(_student(ones), C, "w") is ones

    pairs = harness.PairReader(lambda x: (x, x.T), "pair hint")
    out = C.args[0]
    got = pairs.checked(_student((out, out)), C, "call")
    assert got[0] is out
    with pytest.raises(Fail, match="output of call: every entry is 1"):
        pairs.checked(_student((np.ones((2, 2)), out)), C, "call")
    assert pairs.checked(_student((np.ones((2, 2)), out)), C, "call", varies=False)
    with pytest.raises(
        Fail, match=r"^weights of call: shape \(3,\), expected \(2, 2\). pair hint$"
    ):
        pairs.checked(_student((out, np.ones(3))), C, "call")
    assert pairs.ranked(_student((out, np.ones((2, 2)))), C, "call")[1].shape == (2, 2)
    with pytest.raises(Fail, match=r"weights of call: shape \(3,\), expected 2 dimensions"):
        pairs.ranked(_student((out, np.ones(3))), C, "call")


def test_batches_slices_twins_and_masks():
    single = np.arange(4.0).reshape(2, 2)
    batch = np.stack([single + 1, single])
    harness.expect_batch_slice(batch, (2,), (1,), single, "w", "h")
    with pytest.raises(Fail, match="wrong values"):
        harness.expect_batch_slice(batch, (2,), (0,), single, "w", "h")
    harness.expect_batch_slice(batch, (2,), (1,), single * (1 + 5e-5), "w", "h")  # relations:
    with pytest.raises(Fail, match="wrong values"):  # 1e-4, their structure, not precision
        harness.expect_batch_slice(batch, (2,), (1,), single * (1 + 2e-4) + 1e-6, "w", "h")
    with pytest.raises(Fail, match=r"^B: shape \(2, 2, 2\), expected the batch dimensions \(3,\)"):
        harness.expect_batch_slice(batch, (3,), (0,), single, "w", "h", batch_what="B")
    with pytest.raises(Fail, match="expected the batch dimensions"):  # more slices than said
        harness.expect_batch_slice(batch, (1,), (0,), single + 1, "w", "h")
    harness.expect_pair_slice((batch, batch), (2,), (1,), (single, single), "s", "h")
    with pytest.raises(Fail, match=r"^weights of B: shape \(2, 2, 2\), expected"):
        harness.expect_pair_slice((batch, batch), (3,), (1,), (single, single), "s", "h", "B")
    with pytest.raises(Fail, match=r"^weights of s, against it alone: shape \(2, 2, 2\)"):
        harness.expect_pair_slice((batch, batch), (3,), (1,), (single, single), "s", "h")
    with pytest.raises(Fail, match="^weights of s, against it alone: wrong values"):
        harness.expect_pair_slice((batch, batch + 9), (2,), (1,), (single, single), "s", "h")
    harness.expect_readonly_twin(single, single.copy(), "X", "h")
    with pytest.raises(Fail, match="X for read-only inputs, against writable ones"):
        harness.expect_readonly_twin(single, single + 1, "X", "h")
    harness.expect_pair_readonly_twin((single, single), (single, single), "h")
    with pytest.raises(Fail, match="^output for read-only inputs"):
        harness.expect_pair_readonly_twin((single, single), (single + 1, single), "h")
    mask = np.array([[False, True], [False, False]])
    harness.expect_zero_where(np.where(mask, 0.0, 1.0), mask, "w", "h")
    with pytest.raises(Fail, match="w: wrong values. h"):
        harness.expect_zero_where(np.where(mask, 1e-300, 1.0), mask, "w", "h")
    w = np.array([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]])
    kept = harness.renormalised(w, np.array([[False, False, True], [True, True, True]]))
    assert np.allclose(kept[0], [2 / 3, 1 / 3, 0.0]) and np.isnan(kept[1]).all()
    batch = harness.renormalised(np.stack([w, w]), np.zeros((2, 2, 3), dtype=bool))
    assert np.allclose(batch, np.stack([w, w]))  # along the last axis of a batch too


def test_read_only_inputs_are_judged_by_the_calls_outcome_only():
    """The inputs of a read-only call cannot change (the kernel's), so the check reads only
    whether that call ran: a write into them (numpy's error, or a worker the kernel stopped) is
    a modification; a function failing on writable inputs too is told its own failure."""
    x = np.arange(3.0)
    c = Call("g#w", "g", (x, 2))
    ro = Call("g#r", "g", (x, 2), readonly=True)
    ok = Outcome("ok", value=1)
    harness.expect_unmodified(Student({c.key: ok, ro.key: ok}), ro, "h", like=c)
    harness.expect_unmodified(Student({ro.key: ok}), ro)
    wrote = Outcome("error", error_type="ValueError", error_message="output array is read-only")
    stopped = Outcome("crashed", detail="was killed by signal SIGSEGV")
    for out in (wrote, stopped):
        with pytest.raises(Fail, match="modified an input array in place: with read-only"):
            harness.expect_unmodified(Student({c.key: ok, ro.key: out}), ro, "h", like=c)
    broken = Outcome("error", error_type="NotImplementedError")
    with pytest.raises(Fail, match="is not implemented yet") as failed:
        harness.expect_unmodified(Student({c.key: broken, ro.key: broken}), ro, like=c)
    assert "in place" not in str(failed.value)
    with pytest.raises(TypeError, match="reads a read-only call"):
        harness.expect_unmodified(Student({c.key: ok}), c)


def test_warnings():
    c = Call("g#x", "g", (np.arange(3.0), 2, np.ones(2)))
    quiet = Student({c.key: Outcome("ok", warnings=["UserWarning: chatty"])})
    harness.expect_no_warnings(quiet, c)
    noisy = Student(
        {
            c.key: Outcome(
                "ok", warnings=["UserWarning: x", "RuntimeWarning: overflow", "RuntimeWarning: y"]
            )
        }
    )
    with pytest.raises(Fail, match=r"^g emitted a warning \(RuntimeWarning: overflow\). h$"):
        harness.expect_no_warnings(noisy, c, "h")


def test_a_stub_is_not_implemented_yet_and_gets_no_hint():
    stub = _student(status="error", error_type="NotImplementedError", error_message="")
    with pytest.raises(Fail) as caught, harness.hinting("np.exp(1000) overflows."):
        stub.value(C)
    assert str(caught.value) == "f is not implemented yet"


def test_numpy_shape_errors_become_the_property_they_break():
    broadcast = "operands could not be broadcast together with shapes (3,3) (3,5) ()"
    failing = _student(status="error", error_type="ValueError", error_message=broadcast)
    with pytest.raises(Fail) as caught:
        failing.value(C)
    message = str(caught.value)
    assert message.startswith("f stopped for inputs of shapes (2, 2): two of its arrays")
    assert "(shapes (3, 3) and (3, 5))" in message and "broadcast together" not in message
    assert harness.SHAPE_CONTRACT in message  # no property declared for f: the contract's
    harness.explain_shape_errors("f", lambda c, shapes: f"{len(shapes)} shapes named.")
    try:
        with pytest.raises(Fail, match=r"\(shapes \(3, 3\) and \(3, 5\)\)\. 2 shapes named\.$"):
            failing.value(C)
    finally:
        del harness.SHAPE_PROPERTIES["f"]
    other = _student(status="error", error_type="ValueError", error_message="math domain error")
    with pytest.raises(Fail, match="^f raised ValueError: math domain error$"):
        other.value(C)
    matmul = (
        "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
        "(n?,k),(k,m?)->(n?,m?) (size 5 is different from 4)"
    )
    with pytest.raises(Fail, match="a matrix product's inner sizes differ"):
        _student(status="error", error_type="ValueError", error_message=matmul).value(C)
