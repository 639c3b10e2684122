"""Grader for create_qkv(X, W_q, W_k, W_v): 5 points."""

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    Fail,
    cases,
    expect_batch_slice,
    expect_close,
    expect_rank,
    expect_readonly_twin,
    expect_unmodified,
    over,
    points,
)

from . import reference as ref

FN = "create_qkv"


@cases
def inputs(draw):
    """X of every rank, weight matrices of any widths, and of one shape."""
    return {
        "plain": draw(FN, 6, ranks=(0,)),
        # W_q, W_k, W_v of one shape: taking one matrix for another changes values, not shapes
        "equal": draw(FN, 3, ranks=(0,), ties=[("d_k", "d_v")], sizes={"d_k": (2, 7)}),
        "batched": draw(FN, 4, ranks=(1, 2), related={"alone": alone}),
        "readonly": draw(FN, 3, ranks=(0,), readonly=True, related={"writable": writable}),
    }


def qkv(student, case) -> tuple:
    """The student's (Q, K, V), or a Fail of the call saying why it is not a triple."""
    got = student.value(case)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Fail(
            f"create_qkv must return a tuple (Q, K, V) of three arrays, got "
            f"{type(got).__name__}"
            + (f" of {len(got)} items" if isinstance(got, (tuple, list)) else ""),
            of_call=True,
            outcome=student.outcome(case),
        )
    return tuple(got)


def expect_projection(case, student, k: int) -> None:
    """Item k of the student's (Q, K, V) is X times its own weight matrix."""
    name, weight = "QKV"[k], ("W_q", "W_k", "W_v")[k]
    want = ref.create_qkv(*case.args)[k]
    expect_close(qkv(student, case)[k], want, f"{name}, against X @ {weight}")


@points(1)
@over("plain", "equal")
def test_query_projection(case, student):
    """Q is X @ W_q (also when W_q, W_k, W_v have one shape)"""
    expect_projection(case, student, 0)


@points(1)
@over("plain", "equal")
def test_key_projection(case, student):
    """K is X @ W_k (also when W_q, W_k, W_v have one shape)"""
    expect_projection(case, student, 1)


@points(1)
@over("plain", "equal")
def test_value_projection_may_be_narrower(case, student):
    """V is X @ W_v, also when W_v is narrower or wider than W_q (d_v != d_k)"""
    expect_projection(case, student, 2)


@points(1)
@over("batched")
def test_batched_input(case, student):
    """a batch X (one or two leading axes) gives, sequence by sequence, the Q, K, V of each
    alone"""
    got = qkv(student, case)
    lead = case.arg("X").shape[:-2]
    for index, single in pieces(case):
        got_i = qkv(student, single)
        for name, g, g_i, like in zip("QKV", got, got_i, ref.create_qkv(*single.args), strict=True):
            g_i = expect_rank(g_i, like, f"{name} for batch element {index} on its own")
            expect_batch_slice(g, lead, index, g_i, f"{name} of batch element {index}", "")


@points(1)
@over("readonly")
def test_inputs_not_modified(case, student):
    """X and the weight matrices are left unchanged: read-only inputs give what writable ones
    give"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    likes = ref.create_qkv(*case.args)
    for name, g_ro, g, like in zip(
        "QKV", qkv(student, case), qkv(student, twin), likes, strict=True
    ):
        expect_readonly_twin(expect_rank(g, like, f"{name} for writable inputs"), g_ro, name, "")
