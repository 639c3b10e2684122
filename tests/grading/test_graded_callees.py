"""A graded function's bug costs points in its own tests only, never also in a correct graded
function of the same notebook that calls it (any function of its notebook, by the exercise
contract: grading/session.py); and
a caller that is wrong with a correct callee keeps losing its points. The catalogue shows the
classic cases (its `# caller-keeps-points:` entries); here, a caller that tries to tell the
second run apart, and one that shows a difference of its own choosing there."""

from __future__ import annotations

import numpy as np
import pytest

from attention_course.grading import runner
from attention_course.grading.blame import Retried
from attention_course.grading.runs import replay_key
from attention_course.grading.session import CHARGED_ONCE, Session
from tests.conftest import grade_reference_variants
from tests.course import COURSE, REFERENCE_FILE
from tests.direct_grading import run_here

FN = "scaled_dot_product_attention"
RAISING = """
_right_sdpa = scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V, mask=None):
    if not _second_run():
        raise RuntimeError("wrong on purpose")
    return _right_sdpa(Q, K, V, mask)
"""
TRICKS = {
    # the course's softmax is a stand-in in the second run: the student's softmax is right, so
    # that run proves nothing about it, and the raising sdpa keeps its failures
    "detects_the_second_run": """
_own_softmax = softmax
def _second_run():
    return softmax is not _own_softmax
"""
    + RAISING,
    # as above, and in the second run it asks the course's softmax of an input of its own
    # choosing, on which its own softmax gives other values on purpose (right on every other):
    # a difference the student's code chose proves nothing about softmax either
    "shows_a_difference_of_its_choosing": """
_right_softmax = softmax
def softmax(z, axis=-1):
    if np.shape(z) == (1, 3) and z[0, 0] == 12345.0:  # the sentinel
        return np.zeros_like(z, dtype=float)
    return _right_softmax(z, axis)
_own_softmax = softmax
def _second_run():
    if softmax is _own_softmax:
        return False
    softmax(np.array([[12345.0, 0.0, 0.0]]))  # asked of the course's softmax, outside
    return True
"""
    + RAISING,
    "plain_raising": "def _second_run():\n    return False\n" + RAISING,
}


@pytest.fixture(scope="module")
def tricks(tmp_path_factory):
    variants = {k: ("attention_basics", [FN], code) for k, code in TRICKS.items()}
    return grade_reference_variants(tmp_path_factory.mktemp("callees"), variants)


@pytest.mark.parametrize("trick", ["detects_the_second_run", "shows_a_difference_of_its_choosing"])
def test_telling_the_second_run_apart_gains_nothing(tricks, trick):
    forged = tricks[trick].functions[FN]
    honest = tricks["plain_raising"].functions[FN]
    assert [t.passed for t in forged.tests] == [t.passed for t in honest.tests]
    assert forged.score == honest.score < honest.max_score
    charged = next(t for t in forged.tests if t.test == CHARGED_ONCE)
    assert charged.passed and not charged.charged_to  # softmax is right: not blamed
    assert not tricks[trick].cell_errors


def test_the_trick_works_in_the_second_run_and_still_gains_nothing():
    """Graded directly: in the second run, with softmax computed outside, the forged sdpa does
    give values (the trick works there), and yet none of its failures counts as passed."""
    program = [("variant", REFERENCE_FILE.read_text() + TRICKS["detects_the_second_run"])]
    tests, calls, faults, draw = runner.collect(COURSE, [FN], None)
    session = Session(program, calls, run_here, COURSE, draw)
    results = session.grade(tests, faults)
    assert not faults
    assert session.called_by(FN) == ("softmax",)  # what its code names of its notebook
    second = session.with_course_functions(("softmax",))
    ran = [second.outcomes[c.key].status for c in calls if c.key in second.outcomes]
    assert ran and set(ran) == {"ok"}
    assert second.outside_calls  # its softmax calls went out
    assert not session.passed_only_with_callees
    assert [r["test"] for r in results if r["passed"]] == [CHARGED_ONCE]  # nothing charged
    records = session.blame.records  # each failing test judged again: its failure stands
    assert records and {r.retried for r in records} == {Retried.STANDS}


WRONG_SOFTMAX = """
_right_softmax = softmax
def softmax(z, axis=-1):
    return _right_softmax(2 * np.asarray(z, dtype=float), axis)  # wrong on every input
"""


def test_a_callees_bug_is_recorded_and_its_replay_read_by_key():
    """Graded directly: a right sdpa calling a wrong softmax is spared on every failing test,
    each with a record naming softmax; the replay of softmax answers every call the second run
    asked of the course, each under its own key, with the student's own (other) values."""
    program = [("variant", REFERENCE_FILE.read_text() + WRONG_SOFTMAX)]
    tests, calls, faults, draw = runner.collect(COURSE, [FN], None)
    session = Session(program, calls, run_here, COURSE, draw, runner.cases_for(COURSE, None))
    results = session.grade(tests, faults)
    assert not faults
    graded = [r for r in results if r["points"] > 0]
    assert graded and all(r["passed"] for r in graded)  # sdpa keeps its points
    records = session.blame.records
    assert records and all(
        r.retried is Retried.SPARED and r.differing == ("softmax",) and not r.helpers
        for r in records
    )
    assert session.passed_only_with_callees[FN]["softmax"] == [r.test for r in records]
    second = session.with_course_functions(("softmax",))
    replay = session.runs.replay(("softmax",))
    asked = {
        replay_key(k, i): o for k, made in second.outside_calls.items() for i, o in enumerate(made)
    }
    assert asked and replay.keys() == asked.keys()
    assert all(
        replay[k].status == "ok" and replay[k].value.shape == o.value.shape
        for k, o in asked.items()
    )
    assert any(not np.allclose(replay[k].value, o.value) for k, o in asked.items())
