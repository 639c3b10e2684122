"""Late work and an extension, graded as an instructor grades them: one grade everywhere.

A fresh course with nbgrader's late policy "zero", a due date set with nbgrader's own command and
one student's extension given with `attention-course extension`; two submissions (late, and late
but within the extension: on time for that student) autograded by the command. The grade of
each must be the same in `autograde`'s line, `scores`, the class report, the feedback page,
`nbgrader export` and Gradescope's results (the runner given the same times in Gradescope's
submission_metadata.json). Expected totals come from the graders (`expected_total`), never typed.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from attention_course.cli.samples import sample_notebooks
from attention_course.course import Course
from attention_course.integrations import gradescope, gradescope_run
from attention_course.reports.class_report import class_report
from tests.classgrade.test_class_grading import (
    ASSIGNMENT,
    _write,
    expected_total,
    fresh_course,
    run_cli,
)

DUE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EXTENSION = timedelta(days=2)
SUBMITTED = {  # student -> (sample, submission time)
    "late": ("demo-instructor", DUE + timedelta(hours=5)),
    "extended": ("demo-partial", DUE + timedelta(days=1)),
}
NBGRADER = [str(Path(sys.executable).parent / "nbgrader")]


def stamp(moment: datetime) -> str:
    """A time as nbgrader writes timestamp.txt."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f %Z")


@pytest.fixture(scope="module")
def graded_class():
    course = fresh_course("attention-late-")
    with (course / "nbgrader_config.py").open("a") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    samples = sample_notebooks(ASSIGNMENT, course)
    paths = {}
    for student, (sample, moment) in SUBMITTED.items():
        paths[student] = _write(course, student, samples[sample])
        (paths[student].parent / "timestamp.txt").write_text(stamp(moment))
    assert run_cli("release", ASSIGNMENT, "--course", str(course)).returncode == 0
    added = subprocess.run(
        [*NBGRADER, "db", "assignment", "add", ASSIGNMENT, f"--duedate={stamp(DUE)}"],
        cwd=course,
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr
    given = run_cli("extension", ASSIGNMENT, "extended", "--days", "2", "--course", str(course))
    assert given.returncode == 0, given.stderr
    assert "their due date: Thu 3 Dec 2026, 12:00 UTC" in given.stdout
    graded = run_cli("autograde", ASSIGNMENT, "--course", str(course))
    assert graded.returncode == 0, graded.stdout + graded.stderr
    yield course, paths, graded.stdout + graded.stderr
    shutil.rmtree(course.parent, ignore_errors=True)


def expected(paths: dict[str, Path]) -> dict[str, float]:
    """Each student's grade: the graders' total, 0 for the late one (policy "zero")."""
    return {s: 0.0 if s == "late" else expected_total(p) for s, p in paths.items()}


def test_a_late_and_an_extended_submission_have_one_grade_everywhere(graded_class, tmp_path):
    course, paths, said = graded_class
    grades = expected(paths)
    raw = expected_total(paths["late"])
    assert raw > 0 and 0 < grades["extended"] < raw  # a partial answer, kept whole

    # autograde's own line says the late penalty as such
    assert f"late: {raw:g} less nbgrader's late penalty {raw:g}" in said, said

    # scores: the late column and the total after it
    listed = run_cli("scores", ASSIGNMENT, "--course", str(course))
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines() if line}
    for student, grade in grades.items():
        assert float(rows[student][-1]) == pytest.approx(grade), listed.stdout
    assert float(rows["late"][-2]) == -raw and rows["extended"][-2] == "-"
    assert "late: nbgrader's late penalty" in listed.stdout

    # the class report: totals after the penalty, the late one named
    report = class_report(ASSIGNMENT, course)
    assert report.totals == pytest.approx(grades)
    assert report.late == {"late": raw}

    # the feedback nbgrader wrote: its score line
    for student, grade in grades.items():
        page = (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        found = re.search(r"Score: ([0-9.]+) / ([0-9.]+)", page)
        assert found and float(found.group(1)) == pytest.approx(grade), student
        assert ("Late submission penalty" in page) == (student == "late")

    # nbgrader export, as an instructor runs it in the course folder
    out = tmp_path / "grades.csv"
    exported = subprocess.run(
        [*NBGRADER, "export", f"--to={out}"], cwd=course, capture_output=True, text=True
    )
    assert exported.returncode == 0, exported.stderr
    table = {row["student_id"]: row for row in csv.DictReader(out.open())}
    for student, grade in grades.items():
        assert float(table[student]["score"]) == pytest.approx(grade), table[student]
    assert float(table["late"]["late_submission_penalty"]) == pytest.approx(raw)


def test_gradescope_gives_the_same_grade_with_its_own_due_dates(graded_class, tmp_path):
    """The autograder's configuration as the zip has it; Gradescope's metadata carries the same
    due date, the extension as the student's own due date."""
    course, paths, _ = graded_class
    grades = expected(paths)
    config = gradescope.autograder_config(Course.load(course), ASSIGNMENT)
    assert config["late_penalty"] == "zero"
    for student in ("late", "extended"):
        root = tmp_path / student
        (root / "source").mkdir(parents=True)
        (root / "source" / gradescope_run.CONFIG).write_text(json.dumps(config))
        (root / "submission").mkdir()
        shutil.copy(paths[student], root / "submission" / f"{ASSIGNMENT}.ipynb")
        own = DUE + (EXTENSION if student == "extended" else timedelta(0))
        metadata = {
            "created_at": SUBMITTED[student][1].isoformat(),
            "assignment": {"due_date": DUE.isoformat(), "late_due_date": None},
            "users": [{"name": student, "assignment": {"due_date": own.isoformat()}}],
        }
        (root / gradescope_run.METADATA).write_text(json.dumps(metadata))
        assert gradescope_run.run(root, course) == 0
        got = json.loads((root / "results" / "results.json").read_text())
        assert got["score"] == pytest.approx(grades[student])
        assert got["extra_data"]["raw_score"] == pytest.approx(expected_total(paths[student]))
        assert ("Late submission: 5.0 hours after" in got["output"]) == (student == "late")
