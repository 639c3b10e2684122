"""`attention-course report`: the class report agrees with the gradebook of the demo class."""

from __future__ import annotations

import csv
import json
import re
import shutil
import statistics
import subprocess
import sys
from collections import Counter

import pytest

from attention_course.classgrade.nbgrader_api import _gradebook, gradebook_scores
from attention_course.grading.diagnosis import LEAD
from attention_course.grading.feedback import RECORD_KEY
from attention_course.quiz.checking import grade
from attention_course.quiz.loading import load_bank
from attention_course.quiz.notebooks import grade_cell_id as quiz_cell_id
from attention_course.quiz.samples import wrong_answer
from attention_course.quiz.variants import for_student
from attention_course.reports.class_report import class_report, read_class
from attention_course.reports.files import histogram
from tests.course import (
    ASSIGNMENTS,
    BANK_DIR,
    GRADED_QUIZZES,
    PARTIAL,
    QUIZ_ASSIGNMENT,
    grade_cell_id,
)

CODE = sorted(ASSIGNMENTS)
ALL = [*CODE, QUIZ_ASSIGNMENT]
AUTOGRADED = ["demo-hostile", "demo-instructor", "demo-partial", "demo-stub"]
PASS_LINE = re.compile(r"^PASS \[[\d.]+ pt\] (.*)$", re.MULTILINE)


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("assignment", ALL)
def test_totals_and_mean_are_the_gradebooks(graded_class, assignment):
    root, _ = graded_class
    report = class_report(assignment, root)
    stored = gradebook_scores(assignment, root)
    assert report.totals == {s: cells["total"] for s, cells in stored.items()}
    with _gradebook(root) as gb:  # nbgrader's own average over every submission
        assert report.mean == pytest.approx(gb.average_assignment_score(assignment))
    assert report.not_autograded == ["demo-broken"]


@pytest.mark.parametrize("assignment", CODE)
def test_function_means_are_the_gradebooks(graded_class, assignment):
    root, _ = graded_class
    report = class_report(assignment, root)
    stored = gradebook_scores(assignment, root)
    assert [g.name for g in report.groups] == list(ASSIGNMENTS[assignment].graded)
    for group in report.groups:
        column = [cells[grade_cell_id(group.name)] for cells in stored.values()]
        assert group.mean == pytest.approx(statistics.fmean(column)), group.name
        assert group.sd == pytest.approx(statistics.pstdev(column)), group.name
        assert group.full_marks == sum(v == group.points for v in column)


@pytest.mark.parametrize("assignment", CODE)
def test_pass_rates_rebuild_the_gradebooks_function_means(graded_class, assignment):
    """Each test's pass rate times its points, scaled to the cell, adds up to the gradebook's
    mean of that function over the autograded students: nothing lost, nothing counted twice."""
    root, _ = graded_class
    report = class_report(assignment, root)
    assert report.notes == []  # every record agrees with the gradebook
    stored = gradebook_scores(assignment, root)
    for group in report.groups:
        tests = [t for t in report.items if t.group == group.name]
        assert tests and all(t.graded == len(AUTOGRADED) for t in tests)
        raw = sum(t.points for t in tests)
        rebuilt = sum(t.points * t.pass_rate for t in tests) * group.points / raw
        column = [stored[s][grade_cell_id(group.name)] for s in AUTOGRADED]
        assert rebuilt == pytest.approx(statistics.fmean(column)), group.name


@pytest.mark.parametrize("assignment", CODE)
def test_pass_rates_match_the_feedback_students_read(graded_class, assignment):
    """Counted independently: the PASS lines in the autograded notebooks' test cells."""
    root, _ = graded_class
    report = class_report(assignment, root)
    passes: Counter = Counter()
    for student in AUTOGRADED:
        path = root / "autograded" / student / assignment / f"{assignment}.ipynb"
        for cell in json.loads(path.read_text())["cells"]:
            cid = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
            if cid.endswith("_tests") and cell["metadata"]["nbgrader"].get("grade"):
                text = "".join(
                    "".join(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream"
                )
                for description in PASS_LINE.findall(text):
                    passes[(cid.removesuffix("_tests"), description)] += 1
    assert sum(passes.values()) == sum(t.passed for t in report.items) > 0
    for item in report.items:
        assert item.passed == passes[(item.group, item.description)], item.item


@pytest.mark.parametrize("assignment", CODE)
def test_most_failed_first_with_the_hint_of_the_mistake(graded_class, assignment):
    root, _ = graded_class
    report = class_report(assignment, root)
    rates = [t.pass_rate for t in report.items]
    assert rates == sorted(rates)
    # The partly correct student's mistakes are failed with a hint; the stub's failures count
    # as not attempted, not as a misconception; the instructor passes everything.
    for function in PARTIAL[assignment]:
        failed = [t for t in report.items if t.group == function and t.hints]
        assert failed, function
        for item in failed:
            assert item.not_attempted == 1 and item.passed >= 1, item.item
    if assignment == "attention_basics":  # the partial student's np.tril mask, named as such
        mask = [t for t in report.items if t.group == "causal_mask" and t.hints]
        assert mask and all(
            any(h.startswith(LEAD) and "forbids the past" in h for h in t.hints) for t in mask
        )


def test_quiz_report_means_and_item_analysis(graded_class):
    root, _ = graded_class
    report = class_report(QUIZ_ASSIGNMENT, root)
    stored = gradebook_scores(QUIZ_ASSIGNMENT, root)
    assert [g.name for g in report.groups] == list(GRADED_QUIZZES)
    for group, quiz in zip(report.groups, GRADED_QUIZZES, strict=True):
        bank = load_bank(quiz, BANK_DIR)
        ids = [quiz_cell_id(quiz, q.id) for q in bank.questions]
        sums = [sum(cells[c] for c in ids) for cells in stored.values()]
        assert group.mean == pytest.approx(statistics.fmean(sums)), quiz
        assert f"Item analysis: {quiz}" in report.item_analysis
        for i, question in enumerate(bank.questions):
            item = next(t for t in report.items if (t.group, t.item) == (quiz, question.id))
            full = [s for s in AUTOGRADED if stored[s][ids[i]] == question.points]
            assert item.passed == len(full), question.id
            if question.type == "free_text":  # hand-graded: pending, not failed
                assert item.pending == 3 and item.not_attempted == 1
                continue
            assert item.graded == len(AUTOGRADED) and item.not_attempted == 1, question.id
            if i % 2 == 1:  # the partly correct student's wrong answer, graded again here
                inst = for_student(bank, question, "demo-partial")
                labels = grade(inst, wrong_answer(inst)).misconceptions
                for label in labels:
                    assert any(h.startswith(label) for h in item.hints), (question.id, label)


def test_cli_writes_markdown_csv_and_png(graded_class, tmp_path):
    root, _ = graded_class
    proc = cli("report", "attention_basics", "--course", root, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "# Class report: attention_basics" in proc.stdout
    assert "## Every grader test, most failed first" in proc.stdout
    report = class_report("attention_basics", root)
    with (tmp_path / "pass_rates.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["function"], r["test"]) for r in rows] == [(t.group, t.item) for t in report.items]
    assert [int(r["passed"]) for r in rows] == [t.passed for t in report.items]
    with (tmp_path / "scores.csv").open() as handle:
        scores = {r["function"]: r for r in csv.DictReader(handle)}
    assert float(scores["total"]["mean"]) == pytest.approx(report.mean)
    png = (tmp_path / "report.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 20_000
    from matplotlib.image import imread

    height, width, _ = imread(tmp_path / "report.png").shape
    assert width >= 1000 and height > 800  # three panels, a bar per grader test
    text = (tmp_path / "report.md").read_text()
    assert text == proc.stdout.split("\nWrote ")[0]


def test_records_that_disagree_with_the_gradebook_are_left_out(graded_class, tmp_path):
    root, _ = graded_class
    copy = tmp_path / "course"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("feedback", "submitted"))
    with _gradebook(copy) as gb:
        grade_ = gb.find_grade("softmax_tests", "attention_basics", "attention_basics", "demo-stub")
        grade_.manual_score = 4.0
        gb.db.commit()
    # and a record that is not what grading writes (say, edited by hand) is not read
    path = copy / "autograded" / "demo-partial" / "attention_basics" / "attention_basics.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "create_qkv_tests":
            result = next(o for o in cell["outputs"] if o["output_type"] == "execute_result")
            result["metadata"][RECORD_KEY]["tests"] = [{"test": "forged", "passed": True}]
    path.write_text(json.dumps(nb))
    report = class_report("attention_basics", copy)
    assert report.totals["demo-stub"] == 4.0
    assert len(report.notes) == 2
    assert any("demo-stub" in note and "softmax" in note for note in report.notes)
    assert any("demo-partial: no recorded tests for create_qkv" in n for n in report.notes)
    for item in report.items:
        left_out = item.group in ("softmax", "create_qkv")
        assert item.graded == len(AUTOGRADED) - left_out, item.item


def test_bad_input_is_one_line(graded_class, tmp_path):
    root, _ = graded_class
    for args, message in (
        (["report", "attention_basics", "--course", tmp_path], "not a course folder"),
        (["report", "nope", "--course", root], "unknown assignment 'nope'"),
    ):
        proc = cli(*args)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    shutil.copy(root / "nbgrader_config.py", tmp_path)
    shutil.copy(root / "course.toml", tmp_path)
    proc = cli("report", "attention_basics", "--course", tmp_path)
    assert proc.returncode == 2 and "no gradebook at" in proc.stderr
    assert not (tmp_path / "gradebook.db").exists()  # not created by looking


def test_read_class_of_an_assignment_without_submissions(graded_class):
    root, _ = graded_class
    assert read_class("no_such_assignment", root) == []


def test_histogram_bins():
    assert histogram([0, 3.4, 3.5, 34.9, 35], 35) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert sum(histogram([1.0] * 7, 20.5)) == 7
