"""nbgrader end to end: sample and hostile submissions autograded into a real gradebook."""

from __future__ import annotations

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.cli.samples import hostile_demo_cell
from attention_course.grading.graders import grade_file
from tests.course import (
    ASSIGNMENTS,
    BANK_DIR,
    COURSE_ROOT,
    HOSTILE,
    PARTIAL,
    PARTIAL_UNAFFECTED,
    QUIZ_ASSIGNMENT,
    grade_cell_id,
)

NAMES = sorted(ASSIGNMENTS)


def _cells(root, assignment, student):
    return gradebook_scores(assignment, root)[student]


def _points(assignment):
    from tests.content.test_notebooks import cell_points

    return cell_points(assignment)


@pytest.mark.parametrize("assignment", NAMES)
def test_instructor_solution_scores_full_marks(graded_class, assignment):
    root, results = graded_class
    assert results[assignment].outcomes["demo-instructor"].status == "graded"
    cells = _cells(root, assignment, "demo-instructor")
    points = _points(assignment)
    for function in ASSIGNMENTS[assignment].graded:
        assert cells[grade_cell_id(function)] == points[function], function
    assert cells["total"] == sum(points.values())


@pytest.mark.parametrize("assignment", NAMES)
def test_untouched_stub_scores_zero(graded_class, assignment):
    root, results = graded_class
    assert results[assignment].outcomes["demo-stub"].status == "graded"
    assert _cells(root, assignment, "demo-stub")["total"] == 0


@pytest.mark.parametrize("assignment", NAMES)
def test_partly_correct_student_loses_points_only_on_mistakes(graded_class, assignment):
    root, _ = graded_class
    cells = _cells(root, assignment, "demo-partial")
    points = _points(assignment)
    for function in PARTIAL[assignment]:
        assert cells[grade_cell_id(function)] < points[function], function
    for function in PARTIAL_UNAFFECTED[assignment]:
        assert cells[grade_cell_id(function)] == points[function], function
    assert 0 < cells["total"] < sum(points.values())


@pytest.mark.parametrize("assignment", NAMES)
def test_hostile_student_gains_nothing(graded_class, assignment):
    """Patched numpy, a lying subclass, forged displays, os._exit and endless loops earn no
    value test: at most the 1 point of leaving the inputs unchanged, which a wrong answer that
    writes nothing into its inputs earns honestly (the sample's softmax writes into them;
    tests/sandbox/test_hostile.py shows each forgery scores what its plain answer scores)."""
    root, results = graded_class
    assert results[assignment].outcomes["demo-hostile"].status == "graded"
    cells = _cells(root, assignment, "demo-hostile")
    for function in ASSIGNMENTS[assignment].graded:
        if function in HOSTILE:
            assert cells[grade_cell_id(function)] <= 1, function


@pytest.mark.parametrize("assignment", NAMES)
def test_hostile_student_cannot_change_other_grades(graded_class, assignment):
    """The hostile notebook, graded last, tries to zero every grade in the gradebook."""
    root, _ = graded_class
    assert _cells(root, assignment, "demo-instructor")["total"] == sum(_points(assignment).values())


@pytest.mark.parametrize("assignment", NAMES)
def test_invalid_json_fails_alone(graded_class, assignment):
    """nbgrader reports the broken notebook as failed and stores 0; the rest are graded."""
    root, results = graded_class
    assert results[assignment].outcomes["demo-broken"].status == "not graded"
    assert not (root / "autograded" / "demo-broken" / assignment).exists()
    scores = gradebook_scores(assignment, root)
    assert scores.get("demo-broken", {"total": 0})["total"] == 0
    assert scores["demo-instructor"]["total"] > 0


def test_kernel_death_is_recorded_and_grading_goes_on(graded_class):
    """masks_and_heads' hostile self_attention calls os._exit when the notebook runs it."""
    root, results = graded_class
    assert results["masks_and_heads"].outcomes["demo-hostile"].status == "graded"
    nb = root / "autograded" / "demo-hostile" / "masks_and_heads" / "masks_and_heads.ipynb"
    assert "the notebook's process died at cell" in nb.read_text()
    cells = _cells(root, "masks_and_heads", "demo-hostile")
    assert cells[grade_cell_id("split_heads")] == _points("masks_and_heads")["split_heads"]


@pytest.mark.parametrize("assignment", NAMES)
def test_a_malformed_reply_from_a_plain_cell_costs_no_points(graded_class, assignment):
    """The hostile notebook's plain demo cell (samples/hostile/_demo_cell.py) writes a malformed
    reply where the grading process reads: that cell's error says why, the notebook is graded,
    and the functions the hostile student left correct keep their full marks."""
    root, results = graded_class
    assert results[assignment].outcomes["demo-hostile"].status == "graded"
    path = root / "autograded" / "demo-hostile" / assignment / f"{assignment}.ipynb"
    demo = hostile_demo_cell(COURSE_ROOT)
    (cell,) = [c for c in nbformat.read(path, 4).cells if c.source == demo]
    assert "could not be read (an array of dtype ',' is not plain numbers)" in (
        cell.outputs[0].evalue
    )
    cells, points = _cells(root, assignment, "demo-hostile"), _points(assignment)
    for function in ASSIGNMENTS[assignment].graded:
        if function not in HOSTILE:
            assert cells[grade_cell_id(function)] == points[function], function


def test_endless_loops_use_up_the_notebook_budget_not_the_grade(graded_class):
    """attention_basics' hostile attention loops forever in every demo cell that calls it."""
    root, results = graded_class
    assert results["attention_basics"].outcomes["demo-hostile"].status == "graded"
    nb = root / "autograded" / "demo-hostile" / "attention_basics" / "attention_basics.ipynb"
    assert "not run: the notebook used up its" in nb.read_text()


@pytest.mark.parametrize("assignment", NAMES)
def test_feedback_has_results_but_no_hidden_tests(graded_class, assignment):
    root, _ = graded_class
    for student in ("demo-instructor", "demo-partial", "demo-hostile"):
        html = (root / "feedback" / student / assignment / f"{assignment}.html").read_text()
        assert "BEGIN HIDDEN TESTS" not in html
        assert "# grader: grader_tests/" not in html
        assert "graded outside your kernel" in html


@pytest.mark.parametrize("assignment", NAMES)
@pytest.mark.parametrize(
    "student",
    [
        "demo-instructor",
        "demo-partial",
        "demo-stub",
        # its endless loops waited out again by `check`: scripts/test.sh --long
        pytest.param("demo-hostile", marks=pytest.mark.long),
    ],
)
def test_check_scores_equal_autograde_scores(graded_class, assignment, student):
    """`attention-course check` on the submitted notebook gives what nbgrader stored, and both
    are the cell's points times the share of the grader's points passed (worked out here from
    each test's points, not with the code that grading uses)."""
    root, _ = graded_class
    path = root / "submitted" / student / assignment / f"{assignment}.ipynb"
    report = grade_file(path, assignment, in_process=True)
    stored = _cells(root, assignment, student)
    points = _points(assignment)
    partial = []
    for function in ASSIGNMENTS[assignment].graded:
        tests = report.functions[function].tests
        passed = sum(t.points for t in tests if t.passed)
        expected = points[function] * passed / sum(t.points for t in tests)
        assert stored[grade_cell_id(function)] == pytest.approx(expected, abs=1e-6), function
        assert report.functions[function].score == pytest.approx(passed), function
        partial += [function] if 0 < expected < points[function] else []
    if student == "demo-partial":
        assert partial, "no partial credit to compare"


def _quiz_expected(answered) -> dict[str, float]:
    """Grade cell -> points, worked out from the banks: full points where the sample student
    answered right (`answered(index)`), none elsewhere; free text waits for the instructor."""
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.notebooks import grade_cell_id as quiz_cell
    from tests.course import GRADED_QUIZZES

    expected = {}
    for quiz in GRADED_QUIZZES:
        for i, q in enumerate(load_bank(quiz, BANK_DIR).questions):
            right = answered(i) and q.type != "free_text"
            expected[quiz_cell(quiz, q.id)] = q.points if right else 0.0
    return expected


@pytest.mark.parametrize(
    "student, answered",
    [
        ("demo-stub", lambda i: False),  # nothing answered
        ("demo-partial", lambda i: i % 2 == 0),  # every other answer right, the rest wrong
        ("demo-instructor", lambda i: True),
    ],
)
def test_quiz_scores_through_the_course_configuration(graded_class, student, answered):
    """The graded quiz, autograded with the course's own nbgrader_config.py: an unanswered
    quiz scores 0, a half-right one the points of its right answers, and nothing else."""
    from attention_course.quiz.loading import load_bank
    from tests.course import GRADED_QUIZZES

    root, results = graded_class
    assert results[QUIZ_ASSIGNMENT].outcomes[student].status == "graded"
    stored = gradebook_scores(QUIZ_ASSIGNMENT, root)[student]
    expected = _quiz_expected(answered)
    assert {c: stored[c] for c in expected} == pytest.approx(expected)
    assert stored["total"] == pytest.approx(sum(expected.values()))
    full = sum(q.points for quiz in GRADED_QUIZZES for q in load_bank(quiz, BANK_DIR).questions)
    assert 0 <= stored["total"] < full


def test_an_unanswered_and_a_half_answered_quiz(tmp_path):
    """Autograded as every day (`autograde_class`, the course's nbgrader_config.py): a quiz left
    as released scores 0, one with every other question answered (right) and the rest left
    blank scores the points of those answers."""
    from attention_course.classgrade.nbgrader_api import copy_course
    from attention_course.classgrade.run import autograde_class
    from attention_course.cli.samples import fill_quiz
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.samples import correct_answer
    from attention_course.quiz.variants import for_student
    from tests.course import GRADED_QUIZZES

    root = copy_course(tmp_path / "course", COURSE_ROOT)
    released = root / "release" / QUIZ_ASSIGNMENT / f"{QUIZ_ASSIGNMENT}.ipynb"
    half = {}
    for quiz in GRADED_QUIZZES:
        bank = load_bank(quiz, BANK_DIR)
        for i, q in enumerate(bank.questions):
            if i % 2 == 0:
                half[(quiz, q.id)] = correct_answer(for_student(bank, q, "half"))
    for student, nb in (("blank", fill_quiz(released, {})), ("half", fill_quiz(released, half))):
        folder = root / "submitted" / student / QUIZ_ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{QUIZ_ASSIGNMENT}.ipynb")
    run = autograde_class(QUIZ_ASSIGNMENT, root, jobs=1, feedback=False)
    assert run.ok and {o.status for o in run.outcomes.values()} == {"graded"}
    stored = gradebook_scores(QUIZ_ASSIGNMENT, root)
    for student, answered in (("blank", lambda i: False), ("half", lambda i: i % 2 == 0)):
        expected = _quiz_expected(answered)
        assert {c: stored[student][c] for c in expected} == pytest.approx(expected), student
        assert stored[student]["total"] == pytest.approx(sum(expected.values())), student
    assert stored["half"]["total"] > 0
