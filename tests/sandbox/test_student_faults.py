"""Faults a student's own process causes are the student's: a reply frame written by the
student's code with numbers the worker never sends (10**400, a float given as text, a
giant "seconds") is read as that call's unreadable result, never handed to a grader whose
float() would raise and make the submission a fault of grading."""

from __future__ import annotations

import pytest

from attention_course.sandbox.program import Call, run_program


def _forges_reply(fields: str) -> list[tuple[str, str]]:
    """A cell whose `forged()` writes the reply to its own call (numbered as the request it
    was given), with the reply's other `fields`, then ends its process."""
    return [
        (
            "cell",
            "import os, sys\n"
            "_worker = sys.modules['__main__']\n"
            "def forged():\n"
            "    link = _worker._link\n"
            f"    reply = {{'op': 'call', 'status': 'ok', 'seq': link['seq'], {fields}}}\n"
            "    _worker.wire.write_frame(link['replies'], reply)\n"
            "    os._exit(0)\n"
            "def fine():\n"
            "    return 2\n",
        )
    ]


@pytest.mark.parametrize(
    "fields",
    [
        "'value': {'value': 10**400}",  # JSON takes it; float() of it raises OverflowError
        "'value': {'value': -(2**70)}",
        "'value': {'tuple': [{'value': 1}, {'value': 10**400}]}",
        "'value': {'float': '1e999'}",  # the worker sends a float, never text
        "'value': {'float': 10**400}",
        "'value': {'value': 1}, 'seconds': 10**400",
    ],
)
def test_a_number_the_worker_never_sends_is_the_calls_unreadable_result(fields):
    run = run_program(_forges_reply(fields), [Call("g#0", "fine"), Call("f#0", "forged")])
    got = run.outcomes["f#0"]
    assert got.status == "unreadable" and got.value is None, got
    assert "could not be read back" in got.describe()
    assert run.outcomes["g#0"].value == 2


def test_the_numbers_the_worker_does_send_are_read():
    run = run_program(
        [("c", "def big():\n    return 10**30, 2**62, float('inf')\n")], [Call("b#0", "big")]
    )
    assert run.outcomes["b#0"].value == (1e30, 2**62, float("inf"))


# attention_cost's own reply, its counts 10**400: JSON takes it, its grader's float() cannot.
OVERFLOWING_COST = """import os, sys

def attention_cost(*args, **kwargs):
    worker = sys.modules["__main__"]
    link = worker._link
    huge = {"value": 10**400}
    counts = {"score_flops": huge, "mix_flops": huge, "weights_bytes": huge}
    reply = {"op": "call", "status": "ok", "seq": link["seq"], "value": {"dict": counts}}
    worker.wire.write_frame(link["replies"], reply)
    os._exit(0)
"""


def test_an_overflowing_reply_is_the_students_score_and_a_counted_check(tmp_path):
    """Graded as the check service grades (check_grading.grade_check, in this process): the
    check is graded, not failed (so it counts), attention_cost gets 0 points with the reason,
    and the other functions keep theirs."""
    import nbformat

    from attention_course.cli.samples import sample_notebooks
    from attention_course.integrations.check_grading import grade_check
    from tests.course import COURSE_ROOT

    nb = sample_notebooks("masks_and_heads", COURSE_ROOT)["demo-instructor"]
    (cell,) = [c for c in nb.cells if c.get("id") == "attention_cost"]
    cell.source = OVERFLOWING_COST
    path = tmp_path / "masks_and_heads.ipynb"
    nbformat.write(nb, path)
    graded = grade_check(str(COURSE_ROOT), "masks_and_heads", str(path), "")
    assert graded.fault is None, graded.detail
    assert "attention_cost: 0 / " in graded.feedback, graded.feedback
    assert "could not be read back" in graded.feedback
    assert graded.max_score is not None and graded.score is not None
    assert 0 < graded.score < graded.max_score
