"""What crosses the sandbox's wall, value by value: arguments going in, replies coming out (a
reply is written by a process that runs student code, so every field is checked), and the one
line a student reads when a call has no usable value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attention_course.sandbox.program import (
    Call,
    Outcome,
    SharedInputs,
    UnsupportedValue,
    _cell_error,
    _decode_output,
    _encode_input,
    _outcome,
    run_program,
)

A, B = np.arange(3.0), np.ones((2, 2))


def test_arguments_are_arrays_tuples_and_plain_values():
    arrays: list = []
    spec = [_encode_input(v, arrays) for v in (A, (B, 2, "x"), None, True, 1.5)]
    assert spec == [
        {"array": 0},
        {"tuple": [{"array": 1}, {"value": 2}, {"value": "x"}]},
        {"value": None},
        {"value": True},
        {"value": 1.5},
    ]
    assert arrays[0] is A and arrays[1] is B
    assert _encode_input([1, A], arrays) == {"list": [{"value": 1}, {"array": 2}]}
    for other in ({"a": 1}, object(), np.float64(1.0).view(np.ndarray).dtype):
        with pytest.raises(TypeError, match="cannot pass"):
            _encode_input(other, [])


def test_values_coming_back():
    arrays = [A, np.array(2.5)]
    assert _decode_output({"value": 3}, arrays) == 3
    assert _decode_output({"value": None}, arrays) is None
    assert _decode_output({"value": float("nan")}, arrays) != 0  # NaN: a JSON number here
    assert _decode_output({"float": 2.0**70}, arrays) == 2.0**70  # an int past 2**62, as sent
    for forged in ({"float": "nan"}, {"float": 1}, {"value": 10**400}):  # never sent so
        with pytest.raises(ValueError, match="malformed value"):
            _decode_output(forged, arrays)
    assert _decode_output({"array": 0}, arrays) is A
    assert _decode_output({"array": 1, "scalar": True}, arrays) == 2.5
    assert isinstance(_decode_output({"array": 1, "scalar": 1}, arrays), np.ndarray)
    got = _decode_output(
        {"tuple": [{"array": 0}, {"list": [{"value": 1}]}, {"dict": {"k": {"value": "v"}}}]},
        arrays,
    )
    assert isinstance(got, tuple) and got[0] is A and got[1] == [1] and got[2] == {"k": "v"}
    assert _decode_output({"tuple": []}, arrays) == ()


@pytest.mark.parametrize(
    "spec",
    [
        {},
        [],
        "value",
        {"value": [1]},
        {"value": {"a": 1}},
        {"array": 2},
        {"array": 3},
        {"array": -1},
        {"array": 0.0},
        {"array": True},
        {"something": 1},
    ],
)
def test_malformed_values_are_refused(spec):
    with pytest.raises(ValueError, match="malformed"):
        _decode_output(spec, [A, B])


def test_an_unsupported_value_says_what_it_was():
    with pytest.raises(UnsupportedValue, match="returned a generator, not arrays"):
        _decode_output({"unsupported": "a generator"}, [])
    with pytest.raises(UnsupportedValue) as found:
        _decode_output({"unsupported": "x" * 200}, [])
    assert str(found.value).count("x") == 80


def test_read_only_inputs_are_laid_out_one_after_another_each_on_64_bytes():
    """Each array of the sealed file starts at the first multiple of 64 bytes after the one
    before it ends, the first at 0; the file holds at least one byte (an empty one too)."""
    shared = SharedInputs()
    assert shared.bytes == 1
    placed = [
        shared.add(np.zeros(size, np.uint8))["shared"]["offset"] for size in (3, 70, 0, 64, 1)
    ]
    assert placed == [0, 64, 192, 192, 256]
    assert shared.bytes == 257
    empty = SharedInputs()
    assert empty.add(np.zeros(0))["shared"] == {"dtype": "<f8", "shape": [0], "offset": 0}
    assert empty.bytes == 1


def test_every_array_argument_gets_its_own_index():
    arrays: list = []
    spec = _encode_input((A, B, A), arrays)
    assert spec == {"tuple": [{"array": 0}, {"array": 1}, {"array": 2}]}
    assert [a is b for a, b in zip(arrays, (A, B, A), strict=True)] == [True, True, True]


def test_a_name_error_read_from_the_wire_says_where_helpers_belong():
    """Replies arrive as JSON text: their strings are new objects, compared by value."""
    error = {"type": "NameError", "message": "name 'h' is not defined"}
    reply = json.loads(json.dumps({"status": "error", "error": error}))
    text = _outcome(reply, []).describe()
    assert text.startswith("raised NameError: name 'h' is not defined"), text
    assert "define helpers and imports inside the function's own cell" in text


def test_a_reply_is_read_field_by_field():
    ok = _outcome(
        {
            "status": "ok",
            "value": {"array": 0},
            "seconds": 0.25,
            "warnings": [f"RuntimeWarning {i}" + "w" * 600 for i in range(12)],
            "inputs_after": [{"array": 1}],  # what a worker says of its inputs: not read
        },
        [A, B],
    )
    assert ok.status == "ok" and ok.value is A and ok.seconds == 0.25
    assert len(ok.warnings) == 10 and all(len(w) == 500 for w in ok.warnings)
    assert not hasattr(ok, "inputs_after")
    error = _outcome({"status": "error", "error": {"type": "E" * 150, "message": "m" * 900}}, [])
    assert error.status == "error" and len(error.error_type) == 100
    assert len(error.error_message) == 500
    assert _outcome({"status": "timeout"}, []).status == "timeout"
    assert _outcome({"status": "missing"}, []).status == "missing"
    assert _outcome({"status": "ok", "value": {"value": 1}}, []).seconds == 0.0


@pytest.mark.parametrize(
    "reply, detail",
    [
        ({"status": "forged"}, "could not be read back"),
        ({"value": {"value": 1}}, "could not be read back"),  # no status
        ({"status": "ok"}, "could not be read back"),  # no value
        ({"status": "ok", "value": {"array": 5}}, "could not be read back"),
        ({"status": "error", "error": "oops"}, "could not be read back"),
        ({"status": "ok", "value": {"unsupported": "a set"}}, "returned a set, not arrays"),
        ({"status": "ok", "value": {"value": 1}, "seconds": "soon"}, "could not be read back"),
    ],
)
def test_a_reply_that_cannot_be_read_is_unreadable(reply, detail):
    out = _outcome(reply, [])
    assert out.status == "unreadable" and detail in out.detail


@pytest.mark.parametrize(
    "outcome, words",
    [
        (Outcome("error", error_type="ValueError", error_message="bad"), "raised ValueError: bad"),
        (Outcome("error", error_type="KeyError"), "raised KeyError"),
        (Outcome("missing"), "is not defined (did its cell run without errors?)"),
        (Outcome("timeout"), "ran longer than the time limit (an endless loop?)"),
        (Outcome("crashed", detail="was killed by signal SIGSEGV"), "was killed by signal"),
        (Outcome("skipped"), "skipped"),
        (Outcome("unreadable", detail="its result could not be read back"), "its result could"),
    ],
)
def test_what_a_student_reads(outcome, words):
    text = outcome.describe()
    assert text.startswith(words) or text == words
    assert ("only the set-up cell" in text) is False


def test_a_name_error_says_where_helpers_belong():
    text = Outcome("error", error_type="NameError", error_message="name 'np' is not defined")
    assert text.describe().endswith(
        "(only the set-up cell and the solution cells are graded: define helpers and imports "
        "inside the function's own cell)"
    )
    assert Outcome("error", error_type="ValueError").describe() == "raised ValueError"


def test_cell_errors():
    assert _cell_error({"error": None}) is None
    assert _cell_error({}) is None
    assert _cell_error({"error": "boom"}) == ("Error", "the cell failed")
    got = _cell_error({"error": {"type": "T" * 150, "message": "m" * 900}})
    assert got == ("T" * 100, "m" * 500)


def test_call_keys_must_be_unique():
    with pytest.raises(ValueError, match="unique"):
        run_program([], [Call("f#0", "f"), Call("f#0", "f")])
