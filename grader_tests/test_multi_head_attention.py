"""Grader for multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
20 points."""

import numpy as np

from attention_course.grading.draws import alone, pieces, writable
from attention_course.grading.harness import (
    Fail,
    cases,
    expect_array,
    expect_batch_slice,
    expect_close,
    expect_not_constant,
    expect_pair_readonly_twin,
    expect_rank,
    expect_shape,
    expect_unmodified,
    expect_zero_where,
    explain_shape_errors,
    over,
    points,
)

from . import reference as ref
from .pasted_helpers import checks, expect_same_with_pasted_helpers

FN = "multi_head_attention"


def _pattern(draw):
    """Head pattern: tokens one-hot (scaled by 4) in the first 4 columns. Head 0 (columns 0:4
    of W_q, W_k) matches each token with itself; head 1 (columns 4:8) each token with the one
    before it (cyclically). Mixing or averaging heads blurs or moves these clear patterns."""
    r = draw.random("pattern")
    X = np.zeros((4, 8))
    X[:, :4] = 4 * np.eye(4)
    X[:, 4:] = r.normal(size=(4, 4))
    W_q, W_k = np.zeros((8, 8)), np.zeros((8, 8))
    W_q[:4, :4] = np.eye(4)
    W_q[:4, 4:] = np.eye(4)
    W_k[:4, :4] = np.eye(4)
    W_k[:4, 4:] = np.roll(np.eye(4), 1, axis=1)
    what = "4 one-hot tokens; head 0 built to attend to each token, head 1 to the previous one"
    return draw.case(FN, X, W_q, W_k, r.normal(size=(8, 8)), r.normal(size=(8, 8)), 2, what=what)


@cases
def inputs(draw):
    """Any number of heads, masks in every broadcastable form, a context, and both at once."""
    mask, context = ("mask",), ("context",)
    # Batches of two axes stay small: the arrays this function hands scaled_dot_product_attention
    # hold at most 4096 numbers, what the course's own may be asked to compute for the student's
    # code (settings.py, outside_call_elements) where a test is run again with it.
    small = {"seq_q": (1, 5), "seq_k": (1, 5), "d_k": (1, 3)}
    return {
        "plain": draw(FN, 6, ranks=(0,)),
        # as many heads as tokens: the head axis and the query axis have one size
        "heads_equal": draw(FN, 3, ranks=(0,), ties=[("seq_q", "heads")], sizes={"heads": (2, 4)}),
        "pattern": [_pattern(draw)],
        "scale": draw(FN, 4, ranks=(0,), sizes={"heads": (2, 4), "d_k": (2, 5)}),
        "masked": [
            *draw(FN, 6, ranks=(0,), given=mask),
            *draw(
                FN,
                8,
                ranks=(1, 2),
                given=mask,
                forms=("full", "lead_ones", "inner_lead"),
                sizes=small,
            ),
            *draw(FN, 2, ranks=(0,), given=mask, edges={"mask": "fully_masked_row"}),
        ],
        "context": [
            *draw(FN, 4, ranks=(0,), given=context),
            # X and context of one shape: only the values show which was used for what
            *draw(FN, 2, ranks=(0,), given=context, ties=[("seq_q", "seq_k")]),
            # a context and a mask together
            *draw(FN, 6, ranks=(0,), given=(*mask, *context)),
        ],
        "batched": [
            *draw(FN, 3, ranks=(1, 2), sizes=small, related={"alone": alone}),
            *draw(
                FN, 3, ranks=(1, 2), sizes=small, given=(*mask, *context), related={"alone": alone}
            ),
        ],
        "readonly": draw(
            FN,
            3,
            ranks=(0,),
            given=(*mask, *context),
            readonly=True,
            related={"writable": writable},
        ),
        "helpers": checks(draw),
    }


def want(case):
    return ref.multi_head_attention(*case.args, **case.kwargs)


def output(student, case) -> np.ndarray:
    """The student's output, of the exact shape (the weights are judged where they are)."""
    out, _ = student.pair(case)
    got = expect_shape(out, want(case)[0].shape, "the output")
    return expect_not_constant(expect_array(got, "the output"), "the output", want(case)[0])


def per_head(student, case) -> np.ndarray:
    """The student's weights, which must have the per-head shape."""
    _, w = student.pair(case)
    got = expect_shape(w, want(case)[1].shape, "the weights (one matrix per head)")
    return expect_array(got, "the weights")


@points(3)
@over("plain")
def test_values_match_reference(case, student):
    """project, split, attend per head, combine, @ W_o: the output matches the reference"""
    expect_close(output(student, case), want(case)[0], "the output")


@points(2)
@over("plain", "heads_equal")
def test_weights_per_head(case, student):
    """weights are per head (..., num_heads, seq_len_q, seq_len_k), also with as many heads as
    tokens"""
    expect_close(per_head(student, case), want(case)[1], "the weights of every head")


@points(3)
@over("pattern")
def test_heads_attend_independently(case, student):
    """head-pattern test: head 0 attends to each token itself, head 1 to the previous token"""
    w = per_head(student, case)
    want_w = want(case)[1]
    for h in range(2):
        if np.isnan(w[h]).any() or not np.array_equal(
            np.argmax(w[h], axis=-1), np.argmax(want_w[h], axis=-1)
        ):
            raise Fail(
                f"head {h} does not attend where its own columns of W_q and W_k point (they "
                "were built so that each head has a clear, different pattern)"
            )


@points(3)
@over("scale")
def test_scaled_by_head_d_k(case, student):
    """2 to 4 heads: each head's scores are divided by sqrt of its own d_k, not sqrt(d_model)"""
    _, w = student.pair(case)
    want_out, want_w = want(case)
    if np.shape(w) == want_w.shape:
        expect_close(expect_array(w, "the weights"), want_w, "the weights of every head")
    else:  # weights not per head (test_weights_per_head): judge the scaling on the output
        expect_close(output(student, case), want_out, "the output")


@points(3)
@over("plain")
def test_output_projected_by_w_o(case, student):
    """the output is the heads' results, concatenated in order, times W_o"""
    out = output(student, case)
    X, _, _, W_v, W_o, num_heads = case.args
    _, w = student.pair(case)
    want_w = want(case)[1]
    # Judge the projection on the student's own weights when they are usable, so a weights
    # mistake (tested elsewhere) does not also cost these points.
    usable = np.shape(w) == want_w.shape and np.isfinite(w).all()
    heads = (np.asarray(w) if usable else want_w) @ ref.split_heads(X @ W_v, num_heads)
    expect_close(
        out,
        ref.combine_heads(heads) @ W_o,
        "the output, against the heads combined and projected by W_o",
    )


@points(2)
@over("masked")
def test_mask_applies_to_every_head(case, student):
    """a mask of any broadcastable shape (a key mask, one per sequence, ...) reaches every head"""
    out = output(student, case)
    _, w = student.pair(case)
    want_out, want_w = want(case)
    if np.shape(w) == want_w.shape:  # (weights not per head cost test_weights_per_head only)
        w = expect_array(w, "the weights")
        mask = case.arg("mask")
        full = np.broadcast_to(np.expand_dims(mask, -3) if mask.ndim >= 2 else mask, w.shape)
        expect_zero_where(w, full, "every head's weights at forbidden (mask True) positions", "")
    expect_close(out, want_out, "the output of the masked call")


@points(2)
@over("context")
def test_context_gives_cross_attention(case, student):
    """context=: queries from X, keys and values from context (also with a mask, and when X and
    context have one shape)"""
    out = output(student, case)
    _, w = student.pair(case)
    want_out, want_w = want(case)
    if np.shape(w)[-1:] != want_w.shape[-1:]:
        raise Fail(
            f"the weights have shape {np.shape(w)}: one column per token of context, "
            f"{want_w.shape[-1]}, where the last axis is the keys'"
        )
    if np.shape(w) == want_w.shape:  # (weights not per head cost test_weights_per_head only)
        expect_close(expect_array(w, "the weights"), want_w, "the weights of every head")
    expect_close(out, want_out, "the output")


@points(1)
@over("batched")
def test_batched_input(case, student):
    """a batch (one or two leading axes, with a mask and a context or not) gives, sequence by
    sequence, the result of each sequence alone"""
    out, w = student.pair(case)
    want_out, want_w = want(case)
    out = expect_rank(out, want_out, "the output")
    per_head = np.ndim(w) == want_w.ndim  # (weights not per head cost test_weights_per_head)
    lead = out.shape[: len(want_out.shape) - 2]
    for index, single in pieces(case):
        out_i, w_i = student.pair(single)
        expect_batch_slice(out, lead, index, out_i, f"output of sequence {index}", "")
        if per_head:
            expect_batch_slice(w, lead, index, w_i, f"weights of sequence {index}", "")


@points(1)
@over("readonly")
def test_inputs_not_modified(case, student):
    """X, context, the weight matrices and the mask are left unchanged: read-only inputs give
    what writable ones give"""
    twin = case.related["writable"]
    expect_unmodified(student, case, like=twin)
    expect_pair_readonly_twin(student.pair(twin), student.pair(case), "")


@points(0)
def test_same_with_your_pasted_helpers(student, inputs, passed_only_with_course):
    """(0 points) your pasted helpers work here as the course's do"""
    expect_same_with_pasted_helpers(student, inputs, FN, passed_only_with_course)


def _shape_property(c, shapes) -> str:
    """What a shape mismatch inside multi_head_attention breaks, with this call's sizes."""
    X, W_q = c.args[0], c.args[1]
    num_heads = c.args[5]
    source = c.kwargs.get("context")
    d_model = W_q.shape[0]
    keys = source.shape[-2] if source is not None else X.shape[-2]
    return (
        f"Here X is {X.shape} (seq_len_q = {X.shape[-2]}, d_model = {d_model}), "
        f"{num_heads} heads of d_k = {d_model // num_heads}, and {keys} keys: each projection is "
        f"split into (..., {num_heads}, seq_len, {d_model // num_heads}), the scores of every head "
        f"are ({X.shape[-2]}, {keys}), a mask reaches every head (a head axis of 1 before its "
        "last two when it has batch axes), and the heads combine back to d_model columns "
        "(exercise contract: multi_head_attention)."
    )


explain_shape_errors(FN, _shape_property)
