"""Grader for cross_attention(X, context, W_q, W_k, W_v, mask=None): 10 points."""

import numpy as np

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    RELATION_ATOL,
    RELATION_RTOL,
    PairReader,
    cases,
    expect_close,
    expect_pair_close,
    expect_pair_readonly_twin,
    expect_pair_slice,
    expect_unmodified,
    expect_zero_where,
    explain_shape_errors,
    over,
    points,
    renormalised,
)

from . import reference as ref
from .pasted_helpers import checks, expect_same_with_pasted_helpers

FN = "cross_attention"


def unmasked(case):
    """The same call without the mask."""
    return {"": case.replaced("unmasked", mask=None)}


def reordered(case):
    """The same call with the context's tokens in reverse order."""
    context = case.arg("context")[..., ::-1, :].copy()
    return {"": case.replaced("reordered", what="the context reversed", context=context)}


@cases
def inputs(draw):
    """Two sequences of any lengths and widths, masks in every broadcastable form."""
    return {
        "plain": draw(FN, 6, ranks=(0,)),
        # X and context of one shape, W_q, W_k, W_v of one shape: only the values show a mix-up
        "equal": draw(
            FN,
            3,
            ranks=(0,),
            ties=[("seq_q", "seq_k"), ("d_model", "d_k", "d_v")],
            sizes={"d_k": (2, 7)},
        ),
        "reorder": draw(
            FN, 4, ranks=(0,), sizes={"seq_k": (2, 9)}, related={"reordered": reordered}
        ),
        "masked": draw(FN, 6, ranks=(0,), given=("mask",), related={"unmasked": unmasked}),
        "batched": [
            *draw(FN, 3, ranks=(1, 2), related={"alone": alone}),
            *draw(FN, 6, ranks=(1, 2), given=("mask",), related={"alone": alone}),
        ],
        "readonly": [
            *draw(FN, 2, ranks=(0,), readonly=True, related={"writable": writable}),
            *draw(
                FN,
                2,
                ranks=(0,),
                given=("mask",),
                edges={"mask": "fully_masked_row"},
                readonly=True,
                related={"writable": writable},
            ),
        ],
        "helpers": checks(draw),
    }


def _shape_property(c, shapes) -> str:
    """What a shape mismatch inside cross_attention breaks: the two sequences' lengths."""
    X, context = c.args[0], c.args[1]
    n_q, n_k = X.shape[-2], context.shape[-2]
    text = (
        f"Here seq_len_q = {n_q} (the rows of X) and seq_len_k = {n_k} (the rows of context): "
        f"every array built from the keys has {n_k} rows, the scores and the weights are "
        f"({n_q}, {n_k}), and so is any mask."
    )
    return text + " (Exercise contract: Conventions, widths and lengths may differ.)"


explain_shape_errors(FN, _shape_property)

# attend: (output, weights) with their exact shapes; floats: only their ranks, for relational
# tests (see PairReader).
READER = PairReader(ref.cross_attention, "")
attend, floats = READER.checked, READER.ranked


def within(a, b, what):
    expect_close(a, b, what, rtol=RELATION_RTOL, atol=RELATION_ATOL)


@points(2)
@over("plain")
def test_queries_from_x_keys_from_context(case, student):
    """queries from X, keys from context: weights (..., seq_len_q, seq_len_k), output
    (..., seq_len_q, d_v)"""
    attend(student, case, "the result", varies=False)


@points(2)
@over("plain", "equal")
def test_values_match_reference(case, student):
    """output and weights match the reference, also when X and context have one shape"""
    want = ref.cross_attention(*case.args, **case.kwargs)
    expect_pair_close(attend(student, case, "the result"), want, "for this input", "")


@points(2)
@over("reorder")
def test_context_order_does_not_matter(case, student):
    """reordering the context rows leaves the outputs unchanged (weights' columns reorder)"""
    out, w = floats(student, case, "the result")
    out_p, w_p = floats(student, case.related["reordered"], "the result for the context reversed")
    within(
        w_p,
        w[..., ::-1],
        "weights with the context reversed, against the weights' columns reversed",
    )
    within(out_p, out, "outputs with the context reversed, against the outputs")


@points(2)
@over("masked")
def test_mask_is_applied(case, student):
    """a mask of any broadcastable shape: forbidden weights are exactly 0, the rest
    renormalised"""
    _, w = attend(student, case, "the result")
    mask = np.broadcast_to(case.arg("mask"), w.shape)
    expect_zero_where(w, mask, "the weights at forbidden (mask True) positions", "")
    _, w_full = attend(student, case.related["unmasked"], "the same call without a mask")
    within(
        w,
        renormalised(w_full, mask),
        "masked weights, against the unmasked weights renormalised over the allowed keys",
    )


@points(1)
@over("batched")
def test_batched_input(case, student):
    """a batch of X and context (one or two leading axes, with a mask or not) equals each pair
    on its own"""
    batch = floats(student, case, "the batch")
    for index, single in pieces(case):
        got = floats(student, single, f"batch element {index} on its own")
        expect_pair_slice(batch, batch[0].shape[: len(index)], index, got, f"element {index}", "")


@points(1)
@over("readonly")
def test_inputs_not_modified(case, student):
    """X, context, the weights and the mask are left unchanged: read-only inputs (a read-only
    mask with a fully masked row included) give what writable ones give"""
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
