"""What regrades: the fingerprint of an assignment covers the engine's grading code and that
assignment's own part of the course, nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.grading import fingerprint
from tests.course import COURSE_ROOT, QUIZ_ASSIGNMENT

ASSIGNMENTS = ("attention_basics", "masks_and_heads", QUIZ_ASSIGNMENT)


@pytest.fixture
def course(tmp_path) -> Path:
    return copy_course(tmp_path / "course", COURSE_ROOT)


@pytest.fixture
def engine(tmp_path, monkeypatch) -> Path:
    """A copy of the engine's files that the fingerprint reads instead of the installed ones."""
    copy = tmp_path / "engine"
    shutil.copytree(fingerprint.ENGINE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "ENGINE", copy)
    return copy


def digests(root: Path) -> dict[str, str]:
    return {a: fingerprint.grading_code(a, root) for a in ASSIGNMENTS}


def edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {a for a in before if before[a] != after[a]}


def test_editing_one_grader_regrades_only_its_assignment(course):
    before = digests(course)
    edit(course / "grader_tests" / "test_softmax.py")
    assert changed(before, digests(course)) == {"attention_basics"}
    again = digests(course)
    edit(course / "grader_tests" / "test_split_heads.py")
    assert changed(again, digests(course)) == {"masks_and_heads"}


def test_the_reference_and_shared_grader_modules_regrade_both_assignments(course):
    before = digests(course)
    edit(course / "grader_tests" / "reference.py")
    assert changed(before, digests(course)) == {"attention_basics", "masks_and_heads"}


def test_a_quiz_bank_regrades_only_the_quiz(course):
    before = digests(course)
    edit(course / "quiz" / "banks" / "knowledge_check.yaml")
    assert changed(before, digests(course)) == {QUIZ_ASSIGNMENT}
    again = digests(course)
    edit(course / "quiz" / "formulas.py")
    assert changed(again, digests(course)) == {QUIZ_ASSIGNMENT}


def test_an_assignments_notebooks_regrade_only_it(course):
    before = digests(course)
    edit(course / "release" / "masks_and_heads" / "masks_and_heads.ipynb")
    assert changed(before, digests(course)) == {"masks_and_heads"}


def test_editing_a_report_or_the_command_line_regrades_nothing(course, engine):
    before = digests(course)
    for module in ("reports/figure.py", "reports/class_report.py", "cli/autograde_command.py"):
        edit(engine / module)
    edit(engine / "integrations" / "gradescope.py")
    edit(engine / "classgrade" / "cluster.py")
    assert changed(before, digests(course)) == set()


def test_editing_the_grading_code_regrades_everything(course, engine):
    before = digests(course)
    edit(engine / "grading" / "harness.py")
    assert changed(before, digests(course)) == set(ASSIGNMENTS)
    again = digests(course)
    edit(engine / "sandbox" / "jail.py")
    assert changed(again, digests(course)) == set(ASSIGNMENTS)


def test_the_quiz_engine_regrades_only_the_quiz(course, engine):
    before = digests(course)
    edit(engine / "quiz" / "checking.py")
    assert changed(before, digests(course)) == {QUIZ_ASSIGNMENT}


def test_another_course_has_its_own_digests(course, tmp_path):
    other = copy_course(tmp_path / "other", COURSE_ROOT)
    edit(other / "grader_tests" / "test_causal_mask.py")
    assert digests(course)["masks_and_heads"] == digests(other)["masks_and_heads"]
    assert digests(course)["attention_basics"] != digests(other)["attention_basics"]


def test_the_settings_module_regrades_everything(course, engine):
    """settings.py holds the limits and tolerances grading runs under."""
    before = digests(course)
    edit(engine / "settings.py")
    assert changed(before, digests(course)) == set(ASSIGNMENTS)


def test_nbgrader_config_regrades_everything(course):
    before = digests(course)
    edit(course / "nbgrader_config.py")
    assert changed(before, digests(course)) == set(ASSIGNMENTS)


def test_an_assignments_declaration_in_course_toml_regrades_only_it(course):
    """Its functions and the helpers pasted into it decide who is charged for a callee's bug
    and what the notebook holds: changing masks_and_heads's helpers regrades it alone."""
    toml = course / "course.toml"
    text = toml.read_text()
    listed = 'helpers = ["softmax", "scaled_dot_product_attention", "causal_mask"]'
    assert listed in text
    before = digests(course)
    toml.unlink()  # a file of the copy's own (the copy may share the repository's)
    toml.write_text(text.replace(listed, 'helpers = ["softmax", "scaled_dot_product_attention"]'))
    assert changed(before, digests(course)) == {"masks_and_heads"}


def test_an_edit_that_keeps_a_files_size_is_seen(course):
    """The digest is made again when a file changes, whatever its size: an edit of the same
    length (a Dask worker asks for the digest of every submission it grades) is seen."""
    grader = course / "grader_tests" / "test_softmax.py"
    before = digests(course)
    text = grader.read_text()
    grader.unlink()
    grader.write_text(text.replace("1", "2", 1))
    assert len(grader.read_text()) == len(text)
    assert changed(before, digests(course)) == {"attention_basics"}
