"""Grader for self_attention(X, W_q, W_k, W_v, causal=False): 10 points."""

import numpy as np

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    RELATION_ATOL,
    RELATION_RTOL,
    PairReader,
    cases,
    expect_array,
    expect_close,
    expect_pair_close,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_shape,
    expect_unmodified,
    expect_zero_where,
    explain_shape_errors,
    over,
    points,
    renormalised,
)

from . import reference as ref
from .pasted_helpers import checks, expect_same_with_pasted_helpers

FN = "self_attention"


def unmasked(case):
    """The same X and weights with causal=False."""
    return {"": case.replaced("unmasked", causal=False)}


def later_changed(case):
    """The same call with the tokens after the middle one changed."""
    X = case.arg("X").copy()
    last = (X.shape[-2] - 1) // 2
    X[..., last + 1 :, :] = X[..., last + 1 :, :] * -3.0 + 1.0
    return {"": case.replaced("later", what=f"the tokens after position {last} changed", X=X)}


def reordered(case):
    """The same call with the tokens in reverse order."""
    X = case.arg("X")[..., ::-1, :].copy()
    return {"": case.replaced("reordered", what="the same tokens in reverse order", X=X)}


@cases
def inputs(draw):
    """Sequences of every rank and width, causal or not, and the pasted helpers' checks."""
    causal = {"causal": True}
    return {
        "plain": draw(FN, 6, ranks=(0,)),
        # X and the three weight matrices of one shape: only the values tell them apart
        "equal": draw(FN, 3, ranks=(0,), ties=[("d_model", "d_k", "d_v")], sizes={"d_k": (2, 7)}),
        "causal": draw(
            FN, 6, values=causal, ranks=(0,), sizes={"seq": (2, 9)}, related={"unmasked": unmasked}
        ),
        "leak": draw(
            FN,
            4,
            values=causal,
            ranks=(0,),
            sizes={"seq": (2, 9)},
            related={"later": later_changed},
        ),
        "reorder": draw(FN, 4, ranks=(0,), sizes={"seq": (2, 9)}, related={"reordered": reordered}),
        "batched": draw(FN, 4, values=causal, ranks=(1, 2), related={"alone": alone}),
        "readonly": draw(
            FN, 3, values=causal, ranks=(0,), readonly=True, related={"writable": writable}
        ),
        "helpers": checks(draw),
    }


# attend: (output, weights) with their exact shapes; floats: only their ranks, for relational
# tests (see PairReader).
READER = PairReader(ref.self_attention, "")
attend, floats = READER.checked, READER.ranked


def within(a, b, what):
    expect_close(a, b, what, rtol=RELATION_RTOL, atol=RELATION_ATOL)


@points(2)
@over("plain", "equal")
def test_values_match_reference(case, student):
    """unmasked self-attention of any X: Q, K and V all from X, also when X and every W have
    one shape"""
    want = ref.self_attention(*case.args, **case.kwargs)
    expect_pair_close(attend(student, case, "the result"), want, "for this input", "")


def weights(student, case, what: str) -> np.ndarray:
    """The student's weights, of the exact shape (..., seq_len, seq_len)."""
    _, w = student.pair(case)
    want = ref.self_attention(*case.args, **case.kwargs)[1]
    return expect_array(expect_shape(w, want.shape, f"weights of {what}"), f"weights of {what}")


@points(2)
@over("causal")
def test_causal_masks_the_future(case, student):
    """causal=True: future weights are exactly 0, the rest renormalised over positions 0..i"""
    w = weights(student, case, "the result")
    future = np.broadcast_to(ref.causal_mask(w.shape[-1]), w.shape)
    expect_zero_where(w, future, "the weights above the diagonal (future positions)", "")
    w_full = weights(student, case.related["unmasked"], "the same call with causal=False")
    within(
        w,
        renormalised(w_full, future),
        "causal weights, against the unmasked weights renormalised over positions 0..i",
    )


@points(2)
@over("leak")
def test_causal_future_does_not_leak(case, student):
    """with causal=True, outputs up to position i stay the same when later tokens change"""
    out, w = floats(student, case, "the result")
    out2, w2 = floats(student, case.related["later"], "the result with later tokens changed")
    last = (case.arg("X").shape[-2] - 1) // 2
    within(w2[..., : last + 1, :], w[..., : last + 1, :], f"weights of positions 0..{last}")
    within(out2[..., : last + 1, :], out[..., : last + 1, :], f"outputs of positions 0..{last}")


@points(2)
@over("reorder")
def test_permutation_equivariance(case, student):
    """without a mask, reordering the tokens of X reorders the outputs the same way"""
    out, w = floats(student, case, "the result")
    out_p, w_p = floats(student, case.related["reordered"], "the result for reordered tokens")
    within(
        w_p, w[..., ::-1, ::-1], "weights of the reordered tokens, against the weights reordered"
    )
    within(
        out_p, out[..., ::-1, :], "outputs of the reordered tokens, against the outputs reordered"
    )


@points(1)
@over("batched")
def test_batched_input(case, student):
    """a causal batch (one or two leading axes) gives the same result as each sequence alone"""
    batch = floats(student, case, "the batch")
    for index, single in pieces(case):
        got = floats(student, single, f"sequence {index} on its own")
        expect_pair_slice(batch, batch[0].shape[: len(index)], index, got, f"sequence {index}", "")


@points(1)
@over("readonly")
def test_inputs_not_modified(case, student):
    """X and the weight matrices are left unchanged: read-only inputs give what writable ones
    give"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    expect_pair_readonly_twin(
        floats(student, twin, "the call with writable inputs"),
        floats(student, case, "the same call with read-only inputs"),
        "",
    )


@points(0)
def test_same_with_your_pasted_helpers(student, inputs, passed_only_with_course):
    """(0 points) your pasted helpers work here as the course's do"""
    expect_same_with_pasted_helpers(student, inputs, FN, passed_only_with_course)


def _shape_property(c, shapes) -> str:
    """What a shape mismatch inside self_attention breaks, with this call's sizes."""
    X, W_q, W_k, W_v = c.args[:4]
    return (
        f"Here X is {X.shape} (seq_len = {X.shape[-2]}, d_model = {X.shape[-1]}), W_q and W_k "
        f"are {W_q.shape} (d_k = {W_q.shape[-1]}) and W_v is {W_v.shape} (d_v = "
        f"{W_v.shape[-1]}): queries, keys and values are X times each, the scores (seq_len, "
        "seq_len) per batch element, and the causal mask (seq_len, seq_len) of that same length "
        "(exercise contract: self_attention, Conventions)."
    )


explain_shape_errors(FN, _shape_property)
