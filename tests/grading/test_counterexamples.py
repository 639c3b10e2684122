"""A failing student sees a small input that fails, shrunk from the graders' random draws, and
the property it breaks: never an expected value."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attention_course.grading.graders import grade_file
from tests.course import REFERENCE_FILE

GLOBAL_MAX = """
def softmax(z, axis=-1):
    e = np.exp(z - np.max(z))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
FIXED_BLOCK = """
_BLOCK = np.triu(np.ones((1000, 1000), dtype=bool), k=1)
def causal_mask(seq_len):
    return _BLOCK[:seq_len, :seq_len]
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("counterexamples")
    found = {}
    for name, code, function in (
        ("global_max", GLOBAL_MAX, "softmax"),
        ("block", FIXED_BLOCK, "causal_mask"),
    ):
        path = folder / f"{name}.py"
        path.write_text(REFERENCE_FILE.read_text() + "\n" + code)
        found[name] = grade_file(path, "attention_basics", functions=[function], in_process=True)
    return found


def _shown_arrays(text: str) -> list[np.ndarray]:
    """The arrays a message shows, as numpy reads them back."""
    arrays = re.findall(r"np\.array\((\[.*?\])\)(?:;|$)", text, flags=re.M)
    return [np.array(eval(a, {"np": np})) for a in arrays]  # noqa: S307 (our own message)


def test_a_failing_draw_is_shrunk_to_a_small_input_shown_with_its_size(graded):
    fs = graded["global_max"].functions["softmax"]
    failed = [t for t in fs.tests if not t.passed]
    assert failed
    shrunk = [t for t in failed if t.counterexample and t.counterexample["shrunk"]]
    assert shrunk, [t.message for t in failed]
    for t in shrunk:
        example = t.counterexample
        assert "Smallest failing input found: " in t.message
        assert example["input"] in t.message
        arrays = _shown_arrays(example["input"])
        assert arrays and sum(a.size for a in arrays) == example["size"] <= 6, example
        # small integers (or a value on the edge it was drawn on), a student can type them in
        assert all(np.all(np.isinf(a) | (a == np.round(a)) | (np.abs(a) > 100)) for a in arrays)


def test_a_size_past_a_fixed_block_is_shrunk_to_the_least_that_fails(graded):
    """A mask cut from a block of 1000 fails for 1025 tokens and more: the input shown is the
    smallest size of its family the shrinking reached, with its size."""
    fs = graded["block"].functions["causal_mask"]
    shape_test = next(t for t in fs.tests if t.test == "test_shape_for_several_sizes")
    assert not shape_test.passed and shape_test.counterexample is not None
    n = int(re.search(r"seq_len = (\d+)", shape_test.message).group(1))
    assert 1000 < n <= 2000 and shape_test.counterexample["size"] == n
    assert "fixed_size_block" == shape_test.diagnosis
    assert "block of 1000 rows" in shape_test.message


def test_the_message_never_holds_an_expected_value(graded):
    """What the reference gives on the shown input appears nowhere in the message: only the
    input, the property and the mistake."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference", REFERENCE_FILE)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    for t in graded["global_max"].functions["softmax"].tests:
        if t.passed or not t.counterexample:
            continue
        (z, *rest) = _shown_arrays(t.counterexample["input"])
        axis = (
            int(re.search(r"axis = (-?\d+)", t.message).group(1)) if "axis =" in t.message else -1
        )
        want = reference.softmax(z, axis)
        for value in np.ravel(want):
            if np.isfinite(value) and value not in (0.0, 1.0) and value not in np.ravel(z):
                for digits in (3, 4):
                    assert f"{value:.{digits}f}" not in t.message, (value, t.message)
