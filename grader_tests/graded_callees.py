"""A graded function's bug is charged to it alone, not also to the graded functions calling it.

course.toml declares, per assignment, the graded functions each one may call, as the reference
does or a correct variant may (`callees`: scaled_dot_product_attention calls softmax;
multi_head_attention calls split_heads and combine_heads; self_attention may be cross_attention
of X to itself). A grader test of a caller that fails with the student's callee is run again
with the course's, computed outside the sandbox (the engine's grading/session.py): if it passes
then, and the student's own callee gives other values on that test's calls of it, the caller
itself is right and the test counts as passed. The callee loses its points in its own tests.
Each caller's grader file ends with a 0-point test, `expect_same_with_graded_callees`, that names
the callee at fault and the tests it would have cost.
"""

from __future__ import annotations

from attention_course.grading.harness import Fail


def expect_same_with_graded_callees(
    function: str, passed_only_with_callees: dict, where: str = "graded above"
) -> None:
    """Fails, naming each graded callee at fault, when some tests of `function` passed only
    with the course's callee (callee -> their descriptions); `where` says where the callee is
    graded in the notebook."""
    if not passed_only_with_callees:
        return
    said = []
    for callee, tests in sorted(passed_only_with_callees.items()):
        said.append(
            f"These tests of {function} fail because {callee}, {where}, gives other "
            f"results than the course's on the inputs {function} gives it: {'; '.join(tests)}. "
            f"With the course's {callee} they pass, so they count as passed here: the bug is "
            f"{callee}'s and costs points in {callee}'s own tests only. Fix {callee}."
        )
    raise Fail(" ".join(said))
