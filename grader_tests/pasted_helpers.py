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

from attention_course.grading.harness import Fail, Student, same_value

from . import reference as ref

HELPERS = ("softmax", "scaled_dot_product_attention", "causal_mask")
REFERENCE = {
    "softmax": ref.softmax,
    "scaled_dot_product_attention": ref.scaled_dot_product_attention,
    "causal_mask": ref.causal_mask,
}


def checks(draw) -> list:
    """Small checks of the pasted helpers: cases written by hand, each saying what it checks."""
    r = draw.random("pasted helpers")
    Q, K = np.ones((1, 4)), np.vstack([np.zeros(4), np.full(4, np.log(3) / 2)])
    V = np.array([[0.0], [4.0]])
    QB, KB, VB = r.normal(size=(2, 3, 4)), r.normal(size=(2, 5, 4)), r.normal(size=(2, 5, 2))
    mask_b = np.zeros((3, 5), dtype=bool)
    mask_b[0, 1:] = True
    mask_b[2] = True  # query 2 sees no key
    sdpa = "scaled_dot_product_attention"
    return [
        draw.case("softmax", np.array([1000.0, 1001.0]), what="softmax([1000, 1001])"),
        draw.case(
            "softmax",
            np.array([[1000.0, 1001.0], [1.0, 2.0]]),
            what="softmax of rows near 1000 and near 1",
        ),
        draw.case(
            "softmax",
            np.array([[-np.inf, -np.inf], [0.0, np.log(3)]]),
            what="softmax of an all -inf row",
        ),
        draw.case(
            "softmax", np.array([[0.0, 1.0], [np.log(3), 2.0]]), axis=0, what="softmax(z, axis=0)"
        ),
        draw.case(
            sdpa, Q, K, V, what="scaled_dot_product_attention of one query and two keys, d_k = 4"
        ),
        draw.case(
            sdpa,
            Q,
            K,
            V,
            mask=np.array([[False, True]]),
            what="scaled_dot_product_attention with mask [[False, True]]",
        ),
        draw.case(
            sdpa,
            QB,
            KB,
            VB,
            mask=mask_b,
            what="scaled_dot_product_attention of a (2, 3, 4) batch with a mask and a fully "
            "masked query",
        ),
        draw.case("causal_mask", 4, what="causal_mask(4)"),
    ]


def _agrees(student: Student, c) -> bool:
    out = student.outcome(c)
    if out.status != "ok" or any(w.startswith("RuntimeWarning") for w in out.warnings):
        return False
    want = REFERENCE[c.function](*c.args, **c.kwargs)
    return same_value(out.value, want)


def diagnosis(student: Student, cases: list) -> tuple[list[str], list]:
    """One line per pasted helper that gets a small check wrong, and the cases it failed."""
    lines, named, failed = [], set(), []
    for c in cases:
        if c.function in named or _agrees(student, c):
            continue
        if c.function == "scaled_dot_product_attention" and "softmax" in named:
            continue  # it calls softmax: the softmax line says it all
        named.add(c.function)
        failed.append(c)
        out = student.outcome(c)
        how = "is not right" if out.status == "ok" else out.describe()
        lines.append(f"your pasted {c.function}: {c.what} {how}")
    return lines, failed


def expect_same_with_pasted_helpers(
    student: Student, inputs: dict, function: str, passed_only_with_course: list
) -> None:
    """Fails, naming the pasted helper at fault, when a pasted helper gets a small check wrong
    or some tests of `function` passed only with the course's helpers (their descriptions)."""
    found, failed = diagnosis(student, inputs["helpers"])
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
    named = {c.function for c in failed}
    raise Fail(
        f"{culprit}. {effect} Fix the pasted copy in section 0 of this notebook.",
        # the first failing check is shown; every check of a helper at fault is evidence
        cases=(*failed[:1], *(c for c in inputs["helpers"] if c.function in named)),
    )
