"""Grader for split_heads(X, num_heads): 8 points."""

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    ArrayReader,
    Fail,
    cases,
    expect_batch_slice,
    expect_close,
    expect_readonly_twin,
    expect_unmodified,
    over,
    points,
)

from . import reference as ref

FN = "split_heads"


@cases
def inputs(draw):
    """Any number of heads and widths, from one head to more than any fixed count."""
    return {
        "plain": [*draw(FN, 6, ranks=(0,)), *draw(FN, 2, ranks=(0,), large=("heads",))],
        # seq_len = num_heads = d_k: heads and positions swapped keep the shape
        "equal": draw(FN, 3, ranks=(0,), ties=[("seq", "heads", "d_k")], sizes={"heads": (2, 4)}),
        "batched": draw(FN, 4, ranks=(1, 2), related={"alone": alone}),
        # d_model % num_heads != 0, the remainder below and above half a head
        "indivisible": draw(FN, 4, edges={"num_heads": "indivisible"}),
        "readonly": draw(FN, 3, ranks=(0,), readonly=True, related={"writable": writable}),
    }


READER = ArrayReader(ref.split_heads, "")
heads = READER.checked  # the result with its exact shape


@points(2)
@over("plain")
def test_shape(case, student):
    """(seq_len, d_model) into num_heads heads gives (num_heads, seq_len, d_k), for 1 to 12
    heads"""
    heads(student, case, "the result")


@points(2)
@over("plain", "equal")
def test_head_is_column_block(case, student):
    """head h is exactly columns h*d_k:(h+1)*d_k of X, also when seq_len = num_heads = d_k"""
    got = heads(student, case, "the result")
    X, num_heads = case.args
    d_k = X.shape[-1] // num_heads
    for h in range(num_heads):
        expect_close(
            got[..., h, :, :],
            X[..., h * d_k : (h + 1) * d_k],
            f"head {h}, against columns {h * d_k}:{(h + 1) * d_k} of X",
        )


@points(2)
@over("batched")
def test_batched_input(case, student):
    """a batch (one or two leading axes) gives each sequence's heads as it alone would"""
    got = student.value(case)
    lead = case.arg("X").shape[:-2]
    for index, single in pieces(case):
        got_i = READER.ranked(student, single, f"sequence {index} alone")
        expect_batch_slice(got, lead, index, got_i, f"the heads of sequence {index}", "")


@points(1)
@over("indivisible")
def test_raises_value_error(case, outcome):
    """raises ValueError when d_model is not divisible by num_heads"""
    d_model, num_heads = case.arg("X").shape[-1], case.arg("num_heads")
    if outcome.status == "error" and outcome.error_type == "ValueError":
        return
    if outcome.status == "ok":
        raise Fail(
            f"d_model = {d_model} is not divisible by num_heads = {num_heads}, and "
            "split_heads returned a value instead of raising ValueError"
        )
    raise Fail(
        f"split_heads {outcome.describe()}, where d_model = {d_model} not divisible by "
        f"num_heads = {num_heads} must raise ValueError",
        of_call=True,
        outcome=outcome,
    )


@points(1)
@over("readonly")
def test_input_not_modified(case, student):
    """X is left unchanged: a read-only X gives what a writable one gives"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    got = READER.ranked(student, twin, "the heads of a writable X")
    expect_readonly_twin(got, student.value(case), "the heads", "")
