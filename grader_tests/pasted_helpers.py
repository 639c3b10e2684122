"""The helpers a student pastes into masks_and_heads, checked on small inputs, and named.

masks_and_heads' functions call the student's own `softmax`, `scaled_dot_product_attention` and
`causal_mask`, graded in attention_basics. A grader test of masks_and_heads that fails with the
student's helpers is run again with the course's, computed outside the sandbox (the engine's
grading/session.py): if it passes then, and the student's own helpers give other values on
that test's helper calls, the function itself is right and the test counts as passed. Each
grader file that uses the helpers ends with a 0-point test, `expect_same_with_pasted_helpers`,
that names the helper at fault and the tests it would have cost, so the bug is reported once,
as the helper's, and costs no points twice.
"""

from __future__ import annotations

import numpy as np

from attention_course.grading.harness import Fail, Student, call, rng, same_value

from . import reference as ref

HELPERS = ("softmax", "scaled_dot_product_attention", "causal_mask")


def _sdpa_inputs() -> tuple:
    """One query, two keys, d_k = 4: the scaled scores are (0, ln 3), so the weights are
    (1/4, 3/4); without the scaling they would be (1/10, 9/10)."""
    Q = np.ones((1, 4))
    K = np.vstack([np.zeros(4), np.full(4, np.log(3) / 2)])
    V = np.array([[0.0], [4.0]])
    return Q, K, V


_Q, _K, _V = _sdpa_inputs()
_R = rng(1001)
_QB, _KB, _VB = _R.normal(size=(2, 3, 4)), _R.normal(size=(2, 5, 4)), _R.normal(size=(2, 5, 2))
_MASK_B = np.zeros((3, 5), dtype=bool)
_MASK_B[0, 1:] = True
_MASK_B[2] = True  # query 2 sees no key

# (call, what it checks, advice when it fails)
CHECKS = [
    (
        call("softmax", np.array([1000.0, 1001.0])),
        "softmax([1000, 1001])",
        "np.exp(1000) overflows: subtract the maximum before np.exp",
    ),
    (
        call("softmax", np.array([[1000.0, 1001.0], [1.0, 2.0]])),
        "softmax of rows near 1000 and near 1",
        "shift each row by its own maximum (keepdims=True), not by the whole array's",
    ),
    (
        call("softmax", np.array([[-np.inf, -np.inf], [0.0, np.log(3)]])),
        "softmax of an all -inf row",
        "an all -inf row (a query whose every key is forbidden) must give zeros, not NaN",
    ),
    (
        call("softmax", np.array([[0.0, 1.0], [np.log(3), 2.0]]), axis=0),
        "softmax(z, axis=0)",
        "normalise along `axis`, not always along the last one",
    ),
    (
        call("scaled_dot_product_attention", _Q, _K, _V),
        "scaled_dot_product_attention of one query and two keys, d_k = 4",
        "divide the scores Q @ K^T by np.sqrt(d_k), d_k = Q.shape[-1] (the weights here are "
        "(1/4, 3/4) with the scaling, (1/10, 9/10) without)",
    ),
    (
        call("scaled_dot_product_attention", _Q, _K, _V, mask=np.array([[False, True]])),
        "scaled_dot_product_attention with mask [[False, True]]",
        "True means FORBIDDEN: the second key must get weight exactly 0",
    ),
    (
        call("scaled_dot_product_attention", _QB, _KB, _VB, mask=_MASK_B),
        "scaled_dot_product_attention of a (2, 3, 4) batch with a mask and a fully masked query",
        "a fully masked query gets zero weights and output; transpose K with "
        "np.swapaxes(K, -1, -2) so batches work",
    ),
    (call("causal_mask", 4), "causal_mask(4)", "True (forbidden) strictly above the diagonal"),
]

REFERENCE = {
    "softmax": ref.softmax,
    "scaled_dot_product_attention": ref.scaled_dot_product_attention,
    "causal_mask": ref.causal_mask,
}


def _agrees(student: Student, c) -> bool:
    out = student.outcome(c)
    if out.status != "ok" or any(w.startswith("RuntimeWarning") for w in out.warnings):
        return False
    want = REFERENCE[c.function](*c.args, **c.kwargs)
    return same_value(out.value, want)


def diagnosis(student: Student) -> list[str]:
    """One line per pasted helper that gets a small check wrong: what, and what to do."""
    lines, named = [], set()
    for c, what, advice in CHECKS:
        if c.function in named or _agrees(student, c):
            continue
        if c.function == "scaled_dot_product_attention" and "softmax" in named:
            continue  # it calls softmax: the softmax line says it all
        named.add(c.function)
        out = student.outcome(c)
        how = "is not right" if out.status == "ok" else out.describe()
        lines.append(f"your pasted {c.function}: {what} {how} ({advice})")
    return lines


def expect_same_with_pasted_helpers(student: Student, function: str, passed_only_with_course: list):
    """Fails, naming the pasted helper at fault, when a pasted helper gets a small check wrong
    or some tests of `function` passed only with the course's helpers (their descriptions)."""
    found = diagnosis(student)
    if not found and not passed_only_with_course:
        return
    culprit = "; ".join(found) or (
        "your pasted helpers (softmax, scaled_dot_product_attention, causal_mask) give other "
        "results than the course's on the inputs of these tests"
    )
    if passed_only_with_course:
        effect = (
            f"With the course's helpers {function} passes these tests, so they count as passed "
            "(the bug is the helper's, graded in attention_basics, and costs no points here); "
            f"with yours they fail: {'; '.join(passed_only_with_course)}."
        )
    else:
        effect = f"It changes none of {function}'s graded results."
    raise Fail(f"{culprit}. {effect} Fix the pasted copy in section 0 of this notebook.")
