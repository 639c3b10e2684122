"""Grader for create_qkv(X, W_q, W_k, W_v): 5 points."""

from contextlib import contextmanager

import numpy as np

from grader_tests import reference as ref
from grader_tests.harness import (
    Fail,
    call,
    expect_array,
    expect_close,
    expect_unmodified,
    points,
    rng,
)

r = rng(201)
# d_model 6, d_k 3, d_v 2: W_v is narrower than W_q and W_k.
X = r.normal(size=(4, 6))
W_Q, W_K, W_V = r.normal(size=(6, 3)), r.normal(size=(6, 3)), r.normal(size=(6, 2))
BASIC = call("create_qkv", X, W_Q, W_K, W_V)
X_BATCH = r.normal(size=(2, 4, 6))
BATCH = call("create_qkv", X_BATCH, W_Q, W_K, W_V)
SLICES = [call("create_qkv", x, W_Q, W_K, W_V) for x in X_BATCH]
READONLY = call("create_qkv", X, W_Q, W_K, W_V, readonly=True)  # BASIC, read-only

HINT_ROLES = "Q = X @ W_q, K = X @ W_k, V = X @ W_v, returned in the order (Q, K, V)."


def qkv(student, c) -> tuple:
    """The student's (Q, K, V), or a Fail saying why it is not a triple."""
    got = student.value(c)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Fail(
            f"create_qkv must return a tuple (Q, K, V) of three arrays, got "
            f"{type(got).__name__}"
            + (f" of {len(got)} items" if isinstance(got, (tuple, list)) else "")
        )
    return tuple(got)


def ranked(got, like: np.ndarray, what: str) -> np.ndarray:
    """A float array with as many dimensions as the contract's result `like` (the exact shape
    has a test of its own, so relational tests only need the rank)."""
    got = expect_array(got, what)
    if got.ndim != like.ndim:
        raise Fail(f"{what}: shape {got.shape}, expected {like.ndim} dimensions like {like.shape}")
    if got.size > 1 and np.all(got == got.flat[0]):
        raise Fail(f"{what}: every entry is the same value, whatever the input: is it finished?")
    return got


def expect_slice(batch, lead: tuple, i: tuple, single: np.ndarray, what: str, hint: str) -> None:
    """Slice i of a batched result equals the result for that slice alone."""
    batch = expect_array(batch, what)
    if batch.shape != (*lead, *single.shape):
        raise Fail(
            f"{what}: shape {batch.shape}, expected the batch dimensions {lead} followed by "
            f"the shape {single.shape} of the result for one sequence. {hint}"
        )
    expect_close(batch[i], single, what, hint)


@contextmanager
def hinting(hint: str):
    """Add the hint to a failure inside, e.g. to "raised ValueError: ..." from the call itself."""
    try:
        yield
    except Fail as exc:
        if hint in str(exc):
            raise
        raise Fail(f"{exc} {hint}") from None


@points(1)
def test_query_projection(student):
    """Q is X @ W_q"""
    Q, _, _ = qkv(student, BASIC)
    expect_close(
        Q,
        ref.create_qkv(*BASIC.args)[0],
        "Q for a (4, 6) X and (6, 3) W_q",
        "The queries come from W_q. " + HINT_ROLES,
    )


@points(1)
def test_key_projection(student):
    """K is X @ W_k"""
    _, K, _ = qkv(student, BASIC)
    expect_close(
        K,
        ref.create_qkv(*BASIC.args)[1],
        "K for a (4, 6) X and (6, 3) W_k",
        "The keys come from W_k. " + HINT_ROLES,
    )


@points(1)
def test_value_projection_may_be_narrower(student):
    """V is X @ W_v, also when W_v is narrower than W_q (d_v != d_k)"""
    _, _, V = qkv(student, BASIC)
    expect_close(
        V,
        ref.create_qkv(*BASIC.args)[2],
        "V for a (4, 6) X and a (6, 2) W_v",
        "The values come from W_v, whose width d_v may differ from d_k. " + HINT_ROLES,
    )


@points(1)
def test_batched_input(student):
    """a batch X of shape (2, 4, 6) gives, sequence by sequence, the Q, K, V of each alone"""
    hint = (
        "X @ W works for any number of leading dimensions; avoid X.T, np.dot tricks or "
        "2-D-only einsum strings."
    )
    with hinting(hint):
        got = qkv(student, BATCH)
        for i, c in enumerate(SLICES):
            got_i = qkv(student, c)
            for name, g, g_i, like in zip("QKV", got, got_i, ref.create_qkv(*c.args), strict=True):
                g_i = ranked(g_i, like, f"{name} for sequence {i} of the batch on its own")
                expect_slice(
                    g, (2,), (i,), g_i, f"{name} of sequence {i} of the batch, alone", hint
                )


@points(1)
def test_inputs_not_modified(student):
    """X and the weight matrices are left unchanged, and read-only inputs give the same result"""
    hint = "Compute new arrays; do not update X or the weights in place."
    expect_unmodified(student, BASIC, hint)
    likes = ref.create_qkv(*BASIC.args)
    for name, g_ro, g, like in zip(
        "QKV", qkv(student, READONLY), qkv(student, BASIC), likes, strict=True
    ):
        g = ranked(g, like, f"{name} for writable inputs")
        expect_close(g_ro, g, f"{name} for read-only inputs, against writable ones", hint)
