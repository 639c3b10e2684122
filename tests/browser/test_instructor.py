"""The instructor's formgrader, on the graded sample class: the assignments, the class, each
submission with its grader lines whole and the gradebook's scores."""

from __future__ import annotations

import re

import pytest
from nbgrader.api import Gradebook

from attention_course.classgrade.nbgrader_api import (
    gradebook_scores,
    source_assignments,
    submitted_students,
)
from attention_course.integrations.student_config import course_settings
from tests.browser.conftest import screenshot
from tests.browser.page_checks import LINES
from tests.course import ASSIGNMENTS

OUTPUT_LINES = "div.output_area pre"


def _submission_ids(graded_class, assignment: str) -> dict[str, str]:
    """student -> id of the notebook submission (formgrader's page address), for each student
    nbgrader graded (not the one whose notebook is not valid JSON)."""
    root, results = graded_class
    graded = {s for s, o in results[assignment].outcomes.items() if o.status == "graded"}
    course_id, _ = course_settings(root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id) as gb:
        return {
            sub.student_id: sub.notebooks[0].id
            for sub in gb.assignment_submissions(assignment)
            if sub.student_id in graded
        }


def _table(page) -> list[dict[str, str]]:
    """The rows of the page's table, each as {column heading: text}, and its first link."""
    page.wait_for_selector("table tbody tr td a")
    header = page.eval_on_selector_all("table thead th", "ths => ths.map(t => t.innerText)")
    header = [" ".join(h.split()) for h in header]
    rows = page.eval_on_selector_all(
        "table tbody tr",
        "rows => rows.map(r => [r.querySelector('a').href, ...[...r.cells].map(c => c.innerText)])",
    )
    return [dict(zip(["link", *header], row, strict=True)) for row in rows]


def test_formgrader_lists_the_assignments(instructor_lab, graded_class, page_factory):
    root, _ = graded_class
    page = page_factory(instructor_lab)
    page.goto(instructor_lab.url("/formgrader/manage_assignments"))
    rows = {row["Name"]: row for row in _table(page)}
    screenshot(page, "instructor-manage-assignments")
    assert sorted(rows) == source_assignments(root)
    for assignment in ASSIGNMENTS:
        assert int(rows[assignment]["# Submissions"]) == len(submitted_students(assignment, root))


def _score(text: str) -> float:
    return float(text.split("/")[0])


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_formgrader_shows_the_graded_class_with_the_gradebooks_totals(
    assignment, instructor_lab, graded_class, page_factory
):
    root, _ = graded_class
    ids = _submission_ids(graded_class, assignment)
    totals = gradebook_scores(assignment, root)
    expected = {ids[s]: totals[s]["total"] for s in ids}
    page = page_factory(instructor_lab)
    page.goto(instructor_lab.url(f"/formgrader/gradebook/{assignment}/{assignment}"))
    shown = {
        row["link"].rstrip("/").rsplit("/", 1)[1]: _score(row["Overall Score"])
        for row in _table(page)
    }
    screenshot(page, f"instructor-class-{assignment}")
    assert len(shown) >= 4, shown  # the sample class: solution, partial, stub, hostile
    assert shown == expected


# The first line of a grader cell's output: "<function>: <score> / <points> points (...)".
POINTS_LINE = re.compile(
    r"^(?P<function>\w+): (?P<score>\d+(?:\.\d+)?) / \d+(?:\.\d+)? points", re.M
)

WAIT_FOR_SCORES = """() => {
  const inputs = [...document.querySelectorAll('input.score')];
  return inputs.length && inputs.every(i => i.value !== '' || i.placeholder !== '');
}"""


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_submission_pages_show_whole_grader_lines_and_the_gradebooks_scores(
    assignment, instructor_lab, graded_class, page_factory
):
    root, _ = graded_class
    ids = _submission_ids(graded_class, assignment)
    scores = gradebook_scores(assignment, root)
    page = page_factory(instructor_lab)
    wrapped = 0
    for student, submission in sorted(ids.items()):
        page.goto(instructor_lab.url(f"/formgrader/submissions/{submission}/"))
        page.wait_for_function(WAIT_FOR_SCORES)
        shown = page.eval_on_selector_all(
            "input.score", "inputs => inputs.map(i => [i.id, i.value || i.placeholder])"
        )
        expected = {cell: score for cell, score in scores[student].items() if cell != "total"}
        assert {cell: float(v) for cell, v in shown} == expected, student
        lines = page.evaluate(LINES, OUTPUT_LINES)
        assert lines["cut"] == [], f"{student}: lines cut off at the right edge"
        outputs = page.locator(OUTPUT_LINES).all_inner_texts()
        assert any("PASS [" in t or "FAIL [" in t for t in outputs), f"{student}: no grader lines"
        # The score each grader output states in words ("softmax: 6 / 10 points") is the
        # gradebook's too, not only the score box.
        stated = {
            f"{m['function']}_tests": float(m["score"])
            for text in outputs
            for m in POINTS_LINE.finditer(text)
        }
        assert stated == expected, f"{student}: the outputs' stated points differ"
        wrapped += lines["wrapped"]
        if student == "demo-partial":
            page.locator(OUTPUT_LINES, has_text="FAIL [").last.scroll_into_view_if_needed()
            screenshot(page, f"instructor-submission-{student}-{assignment}")
    assert wrapped > 0, "no long line to wrap: the check saw nothing it could fail on"
