"""The graders' inputs, drawn over the contract under a submission's seed (grading/draws.py):
the same seed the same inputs, every form of a family whatever the seed, sizes apart, and a
failing draw made smaller within its family."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from attention_course.grading import course_graders
from attention_course.grading.draws import MASK_FORMS, Draw, alone, pieces, show, writable

CONTRACT = None
SEEDS = [hashlib.sha256(f"draws {i}".encode()).hexdigest()[:32] for i in range(8)]
SDPA = "scaled_dot_product_attention"


@pytest.fixture(scope="module")
def contract():
    from tests.course import COURSE

    return course_graders.contract(COURSE)


def _arrays(case):
    return [a for a in (*case.args, *case.kwargs.values()) if isinstance(a, np.ndarray)]


def test_the_same_seed_draws_the_same_inputs_and_another_seed_others(contract):
    one = Draw(contract, SEEDS[0])(SDPA, 6, given=("mask",))
    again = Draw(contract, SEEDS[0])(SDPA, 6, given=("mask",))
    other = Draw(contract, SEEDS[1])(SDPA, 6, given=("mask",))
    for a, b in zip(one, again, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(_arrays(a), _arrays(b), strict=True))
    assert not all(
        np.shape(x) == np.shape(y) and np.array_equal(x, y)
        for a, b in zip(one, other, strict=True)
        for x, y in zip(_arrays(a), _arrays(b), strict=True)
    )
    assert len({c.key for c in one}) == 6  # a key of its own each


@pytest.mark.parametrize("seed", SEEDS)
def test_every_mask_form_and_rank_comes_whatever_the_seed(contract, seed):
    """A family of 13 masked draws holds each broadcastable form at each number of batch axes
    where it differs from the others."""
    cases = Draw(contract, seed)(SDPA, 13, given=("mask",))
    seen = {(c.point.form, len(c.point.lead)) for c in cases}
    assert {f for f, _ in seen} == set(MASK_FORMS)
    assert {r for _, r in seen} == {0, 1, 2}
    for c in cases:
        q, k = c.arg("Q").shape[-2], c.arg("K").shape[-2]
        scores = (*c.point.lead, q, k)
        assert np.broadcast_shapes(c.arg("mask").shape, scores) == scores
        rows = np.broadcast_to(c.arg("mask"), scores).reshape(-1, k)
        assert not rows.all(axis=-1).any()  # every query keeps a key it may see


@pytest.mark.parametrize("seed", SEEDS)
def test_sizes_lie_apart_within_their_ranges_and_large_ones_past_any_block(contract, seed):
    draw = Draw(contract, seed)
    for c in draw(SDPA, 6, ranks=(0,))[1:]:  # (the first of a family is a small one)
        sizes = [c.dims[s] for s in ("seq_q", "seq_k", "d_k", "d_v")]
        assert len(set(sizes)) == 4 and min(sizes) >= 2 and max(sizes) <= 9
    small = draw(SDPA, 3, ranks=(0,))[0]
    assert min(small.dims.values()) == 1 or max(small.dims.values()) <= 6
    for c in draw("causal_mask", 3, large=("n",)):
        assert 1025 <= c.args[0] <= 2000


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_an_indivisible_head_count_leaves_a_remainder_below_and_above_half_a_head(contract, seed):
    cases = Draw(contract, seed)("split_heads", 4, edges={"num_heads": "indivisible"})
    remainders = []
    for c in cases:
        d_model, heads = c.arg("X").shape[-1], c.arg("num_heads")
        assert d_model % heads and heads >= 3
        remainders.append((d_model % heads) / heads)
    assert min(remainders) < 0.5 < max(remainders)


def test_a_failing_draw_is_made_smaller_within_its_family(contract):
    draw = Draw(contract, SEEDS[2])
    case = draw(SDPA, 4, given=("mask",), ranks=(2,), related={"alone": alone})[3]
    smaller = draw.smaller(case, "k")
    assert smaller
    for s in smaller:
        assert s.point.size < case.point.size or s.point.simple
        assert s.point.form == case.point.form and len(s.point.lead) == 2  # its family still
        assert s.point.simple and all(
            np.all(a == np.round(a)) for a in _arrays(s) if a.dtype != bool
        )
        assert len(pieces(s)) == min(2, int(np.prod(s.point.lead)))  # its relations made again
    first = smaller[0]
    assert first.point.lead == (1, 1) and max(dict(first.point.dims).values()) == 1


def test_relations_slice_a_batch_and_twin_read_only_calls(contract):
    draw = Draw(contract, SEEDS[3])
    case = draw(
        SDPA, 2, given=("mask",), ranks=(2,), forms=("lead_ones",), related={"alone": alone}
    )[1]
    lead = case.point.lead
    for index, single in pieces(case):
        assert np.array_equal(single.arg("Q"), case.arg("Q")[index])
        q, k = single.arg("Q").shape[0], single.arg("K").shape[0]
        full = np.broadcast_to(case.arg("mask"), (*lead, q, k))
        assert np.array_equal(single.arg("mask"), full[index])
    ro = draw(SDPA, 1, readonly=True, related={"writable": writable})[0]
    twin = ro.related["writable"]
    assert ro.call.readonly and not twin.call.readonly and twin.args[0] is ro.args[0]


def test_a_case_is_shown_with_the_values_a_student_can_type_and_big_arrays_by_shape(contract):
    draw = Draw(contract, SEEDS[4])
    z = np.array([[1.0, -np.inf], [0.25, 3.0]])
    shown = show(draw.case("softmax", z, axis=0, what="z"))
    assert shown == "z = np.array([[1.0, -np.inf], [0.25, 3.0]]); axis = 0"
    big = show(draw.case("softmax", np.zeros((5, 7)), what="z"))
    assert big == "z: shape (5, 7)"
    assert re.fullmatch(r"seq_len = 3", show(draw.case("causal_mask", 3, what="n")))
