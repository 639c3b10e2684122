"""Grader for create_qkv(X, W_q, W_k, W_v): 5 points."""

from attention_course.grading.harness import (
    Fail,
    call,
    expect_batch_slice,
    expect_close,
    expect_rank,
    expect_readonly_twin,
    expect_unmodified,
    hinting,
    points,
    rng,
)

from . import reference as ref

r = rng(201)
# d_model 6, d_k 3, d_v 2: W_v is narrower than W_q and W_k.
X = r.normal(size=(4, 6))
W_Q, W_K, W_V = r.normal(size=(6, 3)), r.normal(size=(6, 3)), r.normal(size=(6, 2))
BASIC = call("create_qkv", X, W_Q, W_K, W_V)
# W_q, W_k, W_v of one shape: taking one weight matrix for another changes values, not shapes.
EQUAL = call("create_qkv", X, *(r.normal(size=(6, 3)) for _ in range(3)))
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


HINT_EQUAL = (
    "Here W_q, W_k and W_v have the same shape, so only the values show which matrix was used. "
)


def expect_projection(student, k: int, what: str, hint: str) -> None:
    """Item k of the student's (Q, K, V) is the reference's, for the basic call and for weight
    matrices of one shape."""
    expect_close(qkv(student, BASIC)[k], ref.create_qkv(*BASIC.args)[k], what, hint)
    name = "QKV"[k]
    expect_close(
        qkv(student, EQUAL)[k],
        ref.create_qkv(*EQUAL.args)[k],
        f"{name} for W_q, W_k, W_v all of shape (6, 3)",
        HINT_EQUAL + hint,
    )


@points(1)
def test_query_projection(student):
    """Q is X @ W_q (also when W_q, W_k, W_v have one shape)"""
    expect_projection(
        student, 0, "Q for a (4, 6) X and (6, 3) W_q", "The queries come from W_q. " + HINT_ROLES
    )


@points(1)
def test_key_projection(student):
    """K is X @ W_k (also when W_q, W_k, W_v have one shape)"""
    expect_projection(
        student, 1, "K for a (4, 6) X and (6, 3) W_k", "The keys come from W_k. " + HINT_ROLES
    )


@points(1)
def test_value_projection_may_be_narrower(student):
    """V is X @ W_v, also when W_v is narrower than W_q (d_v != d_k)"""
    expect_projection(
        student,
        2,
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
                g_i = expect_rank(g_i, like, f"{name} for sequence {i} of the batch on its own")
                what = f"{name} of sequence {i} of the batch, alone"
                expect_batch_slice(g, (2,), (i,), g_i, what, hint)


@points(1)
def test_inputs_not_modified(student):
    """X and the weight matrices are left unchanged, and read-only inputs give the same result"""
    hint = "Compute new arrays; do not update X or the weights in place."
    expect_unmodified(student, READONLY, hint, like=BASIC)
    likes = ref.create_qkv(*BASIC.args)
    for name, g_ro, g, like in zip(
        "QKV", qkv(student, READONLY), qkv(student, BASIC), likes, strict=True
    ):
        expect_readonly_twin(expect_rank(g, like, f"{name} for writable inputs"), g_ro, name, hint)
