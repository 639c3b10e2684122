"""The Gradescope runner in this process (`gradescope_run.run` and `main`), against a stand-in
/autograder with this repository's course: which notebook it grades, what each failure
writes, and that results.json is always written whole.

test_gradescope.py runs the built zip's run_autograder end to end; these are the quick ones
(one notebook graded), so that each rule of the runner is observed by a test of its own.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

import attention_course
from attention_course.cli.samples import sample_notebooks
from attention_course.course import Course
from attention_course.integrations import gradescope_run
from attention_course.settings import GRADESCOPE, GRADESCOPE_VISIBILITY, Gradescope
from tests.content.test_notebooks import cell_points
from tests.course import COURSE_ROOT

ASSIGNMENT = "attention_basics"
POINTS = cell_points(ASSIGNMENT)  # from the source notebook's test cells
# What a student reads when grading itself failed: not their notebook's fault.
GRADING_SIDE = "Your notebook could not be graded because of a problem on the grading side"


@pytest.fixture(scope="module")
def notebooks() -> dict:
    return sample_notebooks(ASSIGNMENT, COURSE_ROOT)


def grader_tests() -> dict[str, list[str]]:
    """Each graded function's grader tests, as their descriptions, in the graders' order
    (from a grading of the reference: the graders say them, not this test)."""
    from attention_course.grading.graders import grade_file

    report = grade_file(
        sample_path("demo-instructor"), ASSIGNMENT, in_process=True, course=Course.load(COURSE_ROOT)
    )
    return {f: [t.description for t in score.tests] for f, score in report.functions.items()}


_PATHS: dict[str, Path] = {}


def sample_path(kind: str) -> Path:
    """A sample notebook of the assignment as a file (written once per session)."""
    if kind not in _PATHS:
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="attention-gradescope-samples-"))
        _PATHS[kind] = folder / f"{ASSIGNMENT}.ipynb"
        nbformat.write(sample_notebooks(ASSIGNMENT, COURSE_ROOT)[kind], _PATHS[kind])
    return _PATHS[kind]


def stand_in(folder: Path, config: dict | None = None, **files) -> Path:
    """/autograder as Gradescope lays it out: source/autograder.json and submission/."""
    root = folder / "autograder"
    (root / "source").mkdir(parents=True)
    if config is not False:
        config = config or {"assignment": ASSIGNMENT, "points": POINTS}
        (root / "source" / gradescope_run.CONFIG).write_text(json.dumps(config))
    (root / "submission").mkdir()
    for name, content in files.items():
        path = root / "submission" / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content)
        else:
            nbformat.write(content, path)
    return root


def results(root: Path) -> dict:
    assert not list((root / "results").glob("*.part")), "results.json written in two steps"
    return json.loads((root / "results" / "results.json").read_text())


def test_a_notebook_is_graded_with_each_grader_test_an_entry(tmp_path, notebooks, capsys):
    root = stand_in(tmp_path, **{f"{ASSIGNMENT}.ipynb": notebooks["demo-instructor"]})
    start = time.monotonic()
    assert gradescope_run.run(root, COURSE_ROOT) == 0
    took = time.monotonic() - start
    got = results(root)
    assert got["score"] == sum(POINTS.values())
    graders = grader_tests()
    assert [t["tags"] for t in got["tests"]] == [[f] for f in graders for _ in graders[f]]
    for function, described in graders.items():
        mine = [t for t in got["tests"] if t["tags"] == [function]]
        assert [t["name"] for t in mine] == [f"{function}: {d}" for d in described]
        assert sum(t["max_score"] for t in mine) == POINTS[function]
        assert [t["number"] for t in mine] == [
            f"{list(graders).index(function) + 1}.{j}" for j in range(1, len(mine) + 1)
        ]
        assert f"{function}: {POINTS[function]:g} / {POINTS[function]:g} points" in got["output"]
    assert all(t["score"] == t["max_score"] for t in got["tests"])
    assert {t["status"] for t in got["tests"]} == {"passed"}
    assert {t["visibility"] for t in got["tests"]} == {got["visibility"]} == {"visible"}
    assert all(t["output"].startswith("PASS [") for t in got["tests"])
    assert got["extra_data"] == {
        "assignment": ASSIGNMENT,
        "max_score": sum(POINTS.values()),
        "engine": attention_course.__version__,
        "raw_score": sum(POINTS.values()),
        "late_penalty": 0.0,
    }
    assert got["output_format"] == "text" and got["stdout_visibility"] == "hidden"
    assert isinstance(got["execution_time"], int) and abs(got["execution_time"] - took) <= 0.6
    out = capsys.readouterr().out
    assert f"graded by attention-course {attention_course.__version__}" in out
    assert "sandbox: bubblewrap" in out and "graders' inputs: seed " in out


def test_no_notebook_is_zero_for_every_function_saying_what_to_upload(tmp_path):
    root = stand_in(tmp_path, **{"notes.txt": "my answers are in my head"})
    (root / "source" / "course").symlink_to(COURSE_ROOT)  # the course part, where the zip has it
    start = time.monotonic()
    assert gradescope_run.run(root) == 0
    took = time.monotonic() - start
    got = results(root)
    assert abs(got["execution_time"] - took) <= 0.6  # whole seconds
    why = f"No notebook (.ipynb) in your submission: upload {ASSIGNMENT}.ipynb."
    assert got["score"] == 0.0
    assert got["output"] == f"{ASSIGNMENT}: not graded. {why}"
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in got["tests"]] == [
        (f, 0.0, p, "failed") for f, p in POINTS.items()
    ]
    assert {t["output"] for t in got["tests"]} == {f"Not graded: {why}"}
    assert got["extra_data"]["max_score"] == sum(POINTS.values())
    # what to upload is read at once, whatever the course shows of graded results
    assert got["visibility"] == "visible"
    assert {t["visibility"] for t in got["tests"]} == {"visible"}


def test_a_notebook_that_is_not_json_is_zero_and_named_as_submitted(tmp_path):
    root = stand_in(tmp_path, **{f"work__{ASSIGNMENT}.ipynb": '{"cells": [ not json'})
    assert gradescope_run.run(root, COURSE_ROOT) == 0
    got = results(root)
    assert got["score"] == 0.0
    assert f"work/{ASSIGNMENT}.ipynb" in got["output"]
    assert str(root) not in got["output"]  # the student's own path, not the grader's
    assert got["output"].endswith("Download the notebook again and resubmit.")


def test_a_grading_that_fails_is_an_internal_error_for_every_function(tmp_path, notebooks):
    root = stand_in(tmp_path, **{f"{ASSIGNMENT}.ipynb": notebooks["demo-instructor"]})
    assert gradescope_run.run(root, tmp_path / "no course here") == 1
    got = results(root)
    assert got["score"] == 0.0 and len(got["tests"]) == len(POINTS)
    (said,) = {t["output"] for t in got["tests"]}
    assert said.startswith(f"Not graded: {GRADING_SIDE}")


def test_a_missing_configuration_still_writes_a_result(tmp_path):
    root = stand_in(tmp_path, config=False)
    assert gradescope_run.run(root, COURSE_ROOT) == 1
    got = results(root)
    assert got["score"] == 0.0 and got["output"].startswith(GRADING_SIDE)
    assert got["output_format"] == "text" and got["stdout_visibility"] == "hidden"
    assert "tests" not in got


def test_which_notebook_is_graded(tmp_path, notebooks):
    course = Course.load(COURSE_ROOT)
    find = gradescope_run.find_notebook
    folder = tmp_path / "submission"
    folder.mkdir()
    assert find(folder, ASSIGNMENT, course)[0] is None

    nbformat.write(notebooks["demo-stub"], folder / "mine.ipynb")
    assert find(folder, ASSIGNMENT, course) == (
        folder / "mine.ipynb",
        f"Graded mine.ipynb (this assignment's notebook is {ASSIGNMENT}.ipynb).",
    )
    (folder / "a-copy.ipynb").write_text("{ not json")
    (folder / "b-scratch.ipynb").write_text(json.dumps({"cells": [], "metadata": {}}))
    assert find(folder, ASSIGNMENT, course) == (
        folder / "mine.ipynb",
        f"Graded mine.ipynb: of 3 notebooks, the one of {ASSIGNMENT}.",
    )
    (folder / "mine.ipynb").unlink()
    assert find(folder, ASSIGNMENT, course) == (
        folder / "a-copy.ipynb",
        "Graded a-copy.ipynb, the first of 2 notebooks.",
    )
    nbformat.write(notebooks["demo-stub"], folder / f"{ASSIGNMENT}.ipynb")
    assert find(folder, ASSIGNMENT, course) == (folder / f"{ASSIGNMENT}.ipynb", "")


def test_links_and_checkpoints_are_never_graded(tmp_path, notebooks):
    course = Course.load(COURSE_ROOT)
    folder = tmp_path / "submission"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.ipynb"
    nbformat.write(notebooks["demo-instructor"], elsewhere)
    (folder / f"{ASSIGNMENT}.ipynb").symlink_to(elsewhere)
    shutil.copy(elsewhere, folder / ".ipynb_checkpoints" / f"{ASSIGNMENT}-checkpoint.ipynb")
    (folder / "linked").symlink_to(tmp_path, target_is_directory=True)
    path, note = gradescope_run.find_notebook(folder, ASSIGNMENT, course)
    assert path is None and note.startswith("No notebook (.ipynb) in your submission")


def test_the_setup_check_names_what_the_engine_grades(capsys, tmp_path):
    assert gradescope_run.main(["--check", "--course", str(COURSE_ROOT)]) == 0
    out = capsys.readouterr().out
    names = ", ".join(Course.load(COURSE_ROOT).assignments)
    assert out.strip() == f"setup: attention-course {attention_course.__version__} grades {names}"
    root = stand_in(tmp_path)  # the course part where the zip puts it: <root>/source/course
    (root / "source" / "course").symlink_to(COURSE_ROOT)
    assert gradescope_run.main(["--check", "--root", str(root)]) == 0
    assert capsys.readouterr().out == out
    assert gradescope_run.main(["--check", "--course", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("setup: ") and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def partial_report():
    """The partial sample graded once: some tests pass, some fail with a hint."""
    from attention_course.grading.graders import grade_file

    return grade_file(
        sample_path("demo-partial"), ASSIGNMENT, in_process=True, course=Course.load(COURSE_ROOT)
    )


@pytest.mark.parametrize("when", GRADESCOPE_VISIBILITY)
def test_each_visibility_is_gradescopes_own_value_where_declared(partial_report, when):
    """Gradescope's spec: a test's and the result's `visibility` is one of its four values;
    hints false keeps a failed test's name and points and withholds its hint."""
    from attention_course.reports.tables import gradescope_results

    shown = Gradescope(result=when, tests=when, hints=False)
    got = gradescope_results(partial_report, shown)
    assert got["visibility"] == when and {t["visibility"] for t in got["tests"]} == {when}
    failed = [t for t in got["tests"] if t["status"] == "failed"]
    assert failed and all(t["score"] == 0 for t in failed)
    assert all("\n" not in t["output"] and t["output"].startswith("FAIL [") for t in failed)
    with_hints = gradescope_results(partial_report, Gradescope(tests=when))
    assert with_hints["visibility"] == "visible"
    hinted = [t for t in with_hints["tests"] if t["status"] == "failed"]
    assert any("\n" in t["output"] for t in hinted)  # the hints the default shows
    assert [(t["name"], t["score"]) for t in hinted] == [(t["name"], t["score"]) for t in failed]
    assert got["score"] == sum(t["score"] for t in got["tests"]) == partial_report.score
    # a test passes in Gradescope where it passed here: its PASS line, its full points
    for t in got["tests"]:
        assert (t["status"] == "passed") == t["output"].startswith("PASS ["), t
        assert t["score"] == (t["max_score"] if t["status"] == "passed" else 0), t


@pytest.mark.parametrize(
    ("status", "score", "max_score", "shown"),
    [
        ("failed", 0, 0, "failed"),  # a 0-point test that failed: failed, as its FAIL line
        ("passed", 0, 0, "passed"),
        ("passed", 5, 5, "passed"),
        ("failed", 5, 5, "failed"),
        ("passed", 2, 5, "failed"),  # short of its points: never shown as passed
    ],
)
def test_a_tests_status_is_its_pass_or_fail_at_full_points_only(status, score, max_score, shown):
    from attention_course.integrations.gradescope_run import gradescope_status

    assert gradescope_status({"status": status, "score": score, "max_score": max_score}) == shown


def test_course_toml_declares_what_students_see(tmp_path):
    from attention_course.integrations.gradescope import AutograderError, shown

    (tmp_path / "course.toml").write_text(
        '[gradescope]\nresult = "after_published"\ntests = "after_due_date"\nhints = false\n'
    )
    assert shown(tmp_path) == Gradescope("after_published", "after_due_date", False, "hidden")
    (tmp_path / "course.toml").write_text("[course]\n")
    assert shown(tmp_path) == GRADESCOPE
    for bad, said in (
        ('tests = "later"', "course.toml:2: [gradescope] tests must be one of visible, after_due"),
        (
            'result = "sometimes"',
            "[gradescope] result must be one of visible, after_due_date, "
            'after_published, hidden, not "sometimes"',
        ),
        ("hints = 1", "[gradescope] hints must be true or false, not 1"),
        ('shown = "visible"', "[gradescope] shown: not a setting (known: hints, result, stdout"),
    ):
        (tmp_path / "course.toml").write_text(f"[gradescope]\n{bad}\n")
        with pytest.raises(AutograderError, match=re.escape(said)):
            shown(tmp_path)


def metadata(root: Path, created: str, due: str | None, own: str | None = None) -> None:
    users = [{"name": "A Student", "assignment": {"due_date": own}}] if own else [{"name": "B"}]
    meta = {"created_at": created, "assignment": {"due_date": due}, "users": users}
    (root / gradescope_run.METADATA).write_text(json.dumps(meta))


def test_lateness_is_read_from_gradescopes_metadata(tmp_path):
    late = gradescope_run.lateness
    assert late(tmp_path) == (0.0, None)  # no metadata: on time
    due = "2026-12-01T12:00:00.000000-08:00"
    metadata(tmp_path, "2026-12-01T11:59:00.000000-08:00", due)
    assert late(tmp_path)[0] == 0.0
    metadata(tmp_path, "2026-12-01T22:30:00+00:00", due)  # 2 h 30 min after 20:00 UTC
    seconds, when = late(tmp_path)
    assert seconds == 2.5 * 3600 and when is not None and when.utcoffset().total_seconds() < 0
    metadata(tmp_path, "2026-12-01T22:30:00+00:00", due, own="2026-12-03T12:00:00-08:00")
    assert late(tmp_path)[0] == 0.0  # the student's own due date: an extension
    metadata(tmp_path, "2026-12-01T22:30:00+00:00", None)
    assert late(tmp_path)[0] == 0.0  # no due date
    (tmp_path / gradescope_run.METADATA).write_text("[not what Gradescope writes")
    assert late(tmp_path) == (0.0, None)


@pytest.mark.parametrize("method, expected", [("none", 0.0), ("zero", 7.5)])
def test_the_penalty_is_nbgraders(method, expected):
    assert gradescope_run.late_penalty(method, 7.5, 3600.0) == expected
    assert gradescope_run.late_penalty(method, 7.5, 0.0) == 0.0
