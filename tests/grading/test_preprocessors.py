"""The course's nbgrader preprocessors, one at a time, without nbgrader around them: which cells
are graded, what a grade cell's outputs become, and what the notebook run tells grading."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.errors import SubmissionRefused
from attention_course.grading.feedback import RECORD_KEY
from attention_course.grading.preprocessors import (
    CheckSubmission,
    GradeOutOfKernel,
    RestoreMetadata,
    SandboxedExecute,
    grader_cells,
)
from tests.content.test_notebooks import cell_points
from tests.course import ASSIGNMENTS, COURSE_ROOT, grade_cell_id

ASSIGNMENT = "attention_basics"


def _source():
    return nbformat.read(COURSE_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)


def _resources(folder, student="someone"):
    return {
        "nbgrader": {"assignment": ASSIGNMENT, "notebook": ASSIGNMENT, "student": student},
        "metadata": {"path": str(folder)},
    }


def test_grader_cells_are_the_grade_cells_naming_a_grader():
    nb = _source()
    cells = grader_cells(nb)
    assert sorted(cells.values()) == sorted(ASSIGNMENTS[ASSIGNMENT].graded)
    for index, function in cells.items():
        assert nb.cells[index].metadata["nbgrader"]["grade_id"] == grade_cell_id(function)
    index = next(iter(cells))
    nb.cells[index].metadata["nbgrader"]["grade"] = False  # not a grade cell any more
    markdown = nbformat.v4.new_markdown_cell("# grader: grader_tests/test_softmax.py")
    markdown.metadata["nbgrader"] = {"grade": True, "grade_id": "x", "points": 1}
    nb.cells.append(markdown)
    assert set(grader_cells(nb)) == set(cells) - {index}
    assert grader_cells(nbformat.v4.new_notebook()) == {}


def test_graded_cells_get_feedback_and_a_plain_float(tmp_path):
    """Every grade cell's outputs are replaced: its PASS/FAIL lines, then the score alone."""
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    nb = _source()
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "causal_mask":
            cell.source = "def causal_mask(seq_len):\n    raise NotImplementedError()\n"
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="forged 5.0")]
            cell.execution_count = 7
    nb.metadata["attention_course"] = {"restored": ["softmax"]}
    resources = _resources(course / "autograded" / "someone" / ASSIGNMENT)
    resources["attention_course"] = {"kernel_died": "cell 3"}
    nb, _ = GradeOutOfKernel(in_process=True).preprocess(nb, resources)
    points = cell_points(ASSIGNMENT)
    for index, function in grader_cells(nb).items():
        cell = nb.cells[index]
        stream, result = cell.outputs
        assert stream.name == "stdout" and stream.text.startswith(f"{function}: ")
        assert "forged" not in stream.text
        assert "functions were found by name (none found for softmax)" in stream.text
        assert "the notebook's process died at cell 3" in stream.text
        assert result.execution_count == 7
        want = 0.0 if function == "causal_mask" else points[function]
        assert result.data["text/plain"] == repr(want), function
        tests = result.metadata[RECORD_KEY]["tests"]
        assert sum(t["points"] for t in tests) == points[function]
    # the seed of the graders' inputs is kept for the instructor, in the course, not the notebook
    recorded = json.loads((course / ".grading/seeds" / ASSIGNMENT / "someone.json").read_text())
    assert list(recorded) == [ASSIGNMENT] and len(recorded[ASSIGNMENT]) == 32
    assert recorded[ASSIGNMENT] not in json.dumps(nb)


def test_a_notebook_without_grader_cells_is_left_alone():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    same, resources = GradeOutOfKernel().preprocess(nb, {"nbgrader": {}})
    assert same is nb and resources == {"nbgrader": {}}


def test_the_notebook_run_reports_a_death_and_the_time_budget(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("print('first')"),
            nbformat.v4.new_code_cell("import os\nos._exit(3)"),
            *[nbformat.v4.new_code_cell("while True:\n    pass") for _ in range(4)],
            nbformat.v4.new_code_cell("print('never')"),
        ]
    )
    run = SandboxedExecute(timeout=1, total_timeout=3)
    nb, resources = run.preprocess(nb, _resources(tmp_path / "autograded" / "s" / ASSIGNMENT))
    state = resources["attention_course"]
    assert state["kernel_died"] == "cell 1" and state["out_of_time"] is True
    assert "first" in json.dumps(nb.cells[0].outputs)
    assert "never" not in json.dumps(nb.cells[-1].outputs)
    nb, resources = SandboxedExecute().preprocess(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), {}
    )
    assert resources["attention_course"] == {}


def test_check_submission_refuses_a_link(tmp_path):
    folder = tmp_path / "submitted" / "s" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    nb = nbformat.v4.new_notebook()
    assert CheckSubmission().preprocess(nb, {"metadata": {"path": str(folder)}})[0] is nb
    os.symlink(COURSE_ROOT / "nbgrader_config.py", folder / "notes.txt")
    with pytest.raises(SubmissionRefused, match="symbolic link"):
        CheckSubmission().preprocess(nb, {"metadata": {"path": str(folder)}})


def test_restore_metadata_by_function_name(tmp_path):
    course = copy_course(tmp_path / "course", COURSE_ROOT)
    folder = course / "submitted" / "s" / ASSIGNMENT
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    keep = nbformat.v4.new_notebook(cells=released.cells)
    assert RestoreMetadata().preprocess(keep, _resources(folder))[0] is keep  # has metadata

    lost = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("def causal_mask(seq_len):\n    return None\n")]
    )
    rebuilt, _ = RestoreMetadata().preprocess(lost, _resources(folder))
    restored = rebuilt.metadata["attention_course"]["restored"]
    assert "causal_mask" not in restored and "softmax" in restored
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in rebuilt.cells]
    assert "causal_mask" in ids and "causal_mask_tests" in ids

    nothing = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    with pytest.raises(SubmissionRefused, match="none of its cells could be matched"):
        RestoreMetadata().preprocess(nothing, _resources(folder))


def test_settings_come_from_the_course_configuration(tmp_path, monkeypatch):
    """nbgrader_config.py sets the notebook's time limits and how graders run; by default the
    graders run in a pytest process of their own (plain `nbgrader autograde`)."""
    from traitlets.config import Config

    from attention_course.grading import graders as grading

    config = Config()
    config.SandboxedExecute.timeout = 1.5
    config.SandboxedExecute.total_timeout = 7.0
    config.SandboxedExecute.unsandboxed = True
    config.GradeOutOfKernel.unsandboxed = True
    config.GradeOutOfKernel.in_process = True
    run = SandboxedExecute(config=config)
    assert (run.timeout, run.total_timeout, run.unsandboxed) == (1.5, 7.0, True)
    grade = GradeOutOfKernel(config=config)
    assert (grade.unsandboxed, grade.in_process) == (True, True)

    seen = []
    real = grading._run_graders
    monkeypatch.setattr(
        grading,
        "_run_graders",
        lambda course, args, *more: seen.append(args) or real(course, args, *more),
    )
    nb = _source()
    GradeOutOfKernel().preprocess(nb, _resources(tmp_path / "autograded" / "s" / ASSIGNMENT))
    assert len(seen) == 1 and "--unsandboxed" not in seen[0]


def test_the_graders_hide_the_course_of_the_notebook_not_of_the_working_directory(
    tmp_path, monkeypatch
):
    """The course hidden from student code is the one the notebook is graded in (nbgrader's
    resources say where), wherever the grading process was started."""
    from attention_course.grading import preprocessors

    course = copy_course(tmp_path / "course", COURSE_ROOT)
    seen = {}

    class Stop(Exception):
        pass

    def grade_file(path, assignment, unsandboxed, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(preprocessors, "grade_file", grade_file)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Stop):
        GradeOutOfKernel().preprocess(
            _source(), _resources(course / "autograded" / "someone" / ASSIGNMENT)
        )
    assert seen["hide"][0] == course.resolve()  # and the parts of it Course.hidden names
    assert all(p.is_relative_to(course.resolve()) for p in seen["hide"]), seen["hide"]
