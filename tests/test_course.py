"""A course is a folder: course.toml read by path, found from --course, the environment or the
current folder, and refused in one line when it is not one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from attention_course.course import Course, find_course
from attention_course.errors import UserError
from attention_course.settings import COURSE_ENV
from tests.course import COURSE_ROOT


def test_this_repository_is_a_course_declared_in_its_course_toml():
    course = Course.load(COURSE_ROOT)
    assert course.root == COURSE_ROOT
    assert course.assignments["attention_basics"].graded[0] == "softmax"
    assert course.assignments["masks_and_heads"].helpers == (
        "softmax",
        "scaled_dot_product_attention",
        "causal_mask",
    )
    # what each may call, by the exercise contract: every other function of its notebook
    assert course.notebook_of("scaled_dot_product_attention") == (
        "softmax",
        "create_qkv",
        "causal_mask",
    )
    assert course.notebook_of("self_attention") == (
        "softmax",
        "scaled_dot_product_attention",
        "causal_mask",
        "cross_attention",
        "split_heads",
        "combine_heads",
        "multi_head_attention",
        "attention_cost",
    )
    assert course.contract_file == COURSE_ROOT / "grader_tests" / "contract.toml"
    assert course.misconceptions_file == COURSE_ROOT / "grader_tests" / "misconceptions.py"
    assert course.quiz is not None and course.quiz.banks == COURSE_ROOT / "quiz" / "banks"
    assert course.all_assignments[-1] == course.quiz.assignment
    for a in course.assignments.values():
        assert all(a.grader_file(f).is_file() for f in a.graded)
    assert course.reference_file.is_file()
    assert COURSE_ROOT in course.hidden()


def test_the_course_is_found_from_the_environment_or_the_folders_above(tmp_path, monkeypatch):
    monkeypatch.delenv(COURSE_ENV, raising=False)
    monkeypatch.chdir(COURSE_ROOT / "grader_tests")
    assert find_course().root == COURSE_ROOT
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="no course here"):
        find_course()
    monkeypatch.setenv(COURSE_ENV, str(COURSE_ROOT))
    assert find_course().root == COURSE_ROOT
    other = tmp_path / "other"
    other.mkdir()
    (other / "course.toml").write_text(
        '[course]\nid = "other"\n[assignments.one]\nfunctions = ["f"]\n'
    )
    assert find_course(other).id == "other"  # --course wins over the environment


@pytest.mark.parametrize(
    "text, message",
    [
        ("[course\nid = 1", "not a readable course file"),
        ('[course]\nid = "x"\n', "no [assignments.<name>] declared"),
        ('[course]\nid = "x"\n[assignments.a]\nfunctions = "softmax"\n', "must be a list"),
        ('[assignments.a]\nfunctions = ["f"]\n', "[course] needs an id"),
        (
            '[course]\nid = "x"\n[assignments.a]\nfunctions = ["f"]\n[quiz]\nquizzes = []\n',
            "[quiz] needs an",
        ),
        (
            '[course]\nid = "x"\n[assignments.a]\nfunctions = ["f"]\ncallees = { f = ["g"] }\n',
            "callees: no longer listed: a graded function may call any function of its notebook",
        ),
    ],
)
def test_a_broken_course_file_is_one_line(tmp_path, text, message):
    (tmp_path / "course.toml").write_text(text)
    with pytest.raises(UserError) as found:
        Course.load(tmp_path)
    assert message in str(found.value) and "\n" not in str(found.value)


def test_an_edited_course_file_is_read_again(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text('[course]\nid = "x"\n[assignments.a]\nfunctions = ["f"]\n')
    assert Course.load(tmp_path).assignments["a"].graded == ("f",)
    path.write_text('[course]\nid = "x"\n[assignments.a]\nfunctions = ["f", "g2"]\n')
    assert Course.load(tmp_path).assignments["a"].graded == ("f", "g2")


def test_commands_without_a_course_say_how_to_name_one(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in (["scores", "attention_basics"], ["quiz", "list"], ["doctor"]):
        proc = subprocess.run(
            [sys.executable, "-m", "attention_course.cli.main", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2, proc.stderr
        assert "no course here" in proc.stderr and "--course DIR" in proc.stderr
        assert "Traceback" not in proc.stderr
