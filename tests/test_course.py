"""A course is a folder: course.toml read by path, found from --course, the environment or the
current folder, and refused in one line when it is not one."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

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


BASE = '[course]\nid = "x"\n[assignments.a]\nfunctions = ["f"]\n'


BROKEN = [
    ("[course\nid = 1", "course.toml: not a readable course file"),
    ('[course]\nid = "x"\n', "course.toml: no [assignments.<name>] declared"),
    (
        '[course]\nid = "x"\n[assignments.a]\nfunctions = "softmax"\n',
        'course.toml:4: [assignments.a] functions must be a list of names, not "softmax"',
    ),
    (
        '[course]\nid = "x"\n[assignments.a]\nfunctions = ["f", 3]\n',
        "course.toml:4: [assignments.a] functions must be a list of names (3 is not one)",
    ),
    ('[assignments.a]\nfunctions = ["f"]\n', "course.toml: no [course] table"),
    ('[course]\n[assignments.a]\nfunctions = ["f"]\n', "course.toml:1: [course] needs id"),
    (BASE + "[quiz]\nquizzes = []\n", "course.toml:5: [quiz] needs assignment"),
    (
        BASE + 'callees = { f = ["g"] }\n',
        "course.toml:5: [assignments.a] callees: no longer listed: a graded function may "
        "call any function of its notebook",
    ),
    # a mistyped key: its line, and the known key nearest to it
    (
        BASE + "[limits]\ncall_timeout = 2\ncal_timeout = 3\n",
        "course.toml:7: [limits] cal_timeout: not a setting (did you mean call_timeout?)",
    ),
    (
        BASE + "[limit]\ncall_timeout = 2\n",
        "course.toml:5: [limit]: not a table of course.toml (did you mean limits?)",
    ),
    (
        BASE + "[assignments.b]\nfunctoins = []\n",
        "course.toml:6: [assignments.b] functoins: not a setting (did you mean functions?)",
    ),
    (
        '[course]\nid = "x"\ngrader = "g"\n[assignments.a]\nfunctions = ["f"]\n',
        "course.toml:3: [course] grader: not a setting (did you mean graders?)",
    ),
    (
        BASE + "[hub_check]\nper_dya = 3\n",
        "course.toml:6: [hub_check] per_dya: not a setting (did you mean per_day?)",
    ),
    # wrong types, at the top level and in a table
    (
        'course = "x"\n[assignments.a]\nfunctions = ["f"]\n',
        'course.toml:1: [course] must be a table, not "x"',
    ),
    (
        'assignments = 3\n[course]\nid = "x"\n',
        "course.toml:1: [assignments] must be a table, not 3",
    ),
    (
        '[course]\nid = "x"\n[assignments]\na = 1\n',
        "course.toml:4: [assignments.a] must be a table, not 1",
    ),
    (
        BASE + '[limits]\ncall_timeout = "5 s"\n',
        'course.toml:6: [limits] call_timeout must be a number (more than 0), not "5 s"',
    ),
    (
        BASE + "[limits]\nmemory_bytes = 1.5\n",
        "course.toml:6: [limits] memory_bytes must be a whole number (at least 1), not",
    ),
    (
        BASE + "[limits]\nprocesses = true\n",
        "course.toml:6: [limits] processes must be a whole number (at least 1), not true",
    ),
    (
        BASE + "[limits]\nidle_share = 1\n",
        "course.toml:6: [limits] idle_share must be a number (at least 0, less than 1), not 1",
    ),
    (
        BASE + '[gradescope]\nresult = "always"\n',
        "course.toml:6: [gradescope] result must be one of visible, after_due_date,",
    ),
    (
        BASE + "[similarity]\nbases = {}\n",
        "course.toml:6: [similarity] bases: not a setting (did you mean base?)",
    ),
    # of several mistakes, the first in the file
    (
        BASE + "[limits]\ncell_timeot = 1\n[quiz]\n",
        "course.toml:6: [limits] cell_timeot: not a setting (did you mean cell_timeout?)",
    ),
]


@pytest.mark.parametrize("text, message", BROKEN)
def test_a_broken_course_file_is_one_line(tmp_path, text, message):
    (tmp_path / "course.toml").write_text(text)
    with pytest.raises(UserError) as found:
        Course.load(tmp_path)
    assert f"{tmp_path}/{message}" in str(found.value) and "\n" not in str(found.value)


def test_a_broken_course_file_is_one_line_from_every_command(tmp_path, capsys):
    """Through the command line's own entry: exit 2 and the one line, never a traceback."""
    from attention_course.cli.main import main

    (tmp_path / "course.toml").write_text(BASE + "[limits]\nsubmision_timeout = 60\n")
    for args in (["quiz", "list"], ["scores", "a"], ["check", "nb.ipynb"]):
        assert main([*args, "--course", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1] == (
            f"attention-course: error: {tmp_path}/course.toml:6: [limits] submision_timeout: "
            "not a setting (did you mean submission_timeout?)"
        )
        assert "Traceback" not in err


def test_the_course_sets_every_limit_and_keeps_the_defaults_of_the_others(tmp_path):
    from attention_course.settings import DEFAULT, Limits

    (tmp_path / "course.toml").write_text(
        BASE + "[limits]\ncall_timeout = 7\nmemory_bytes = 1_000_000_000\nmax_restarts = 0\n"
    )
    limits = Course.load(tmp_path).limits
    assert (limits.call_timeout, limits.memory_bytes, limits.max_restarts) == (7.0, 10**9, 0)
    assert isinstance(limits.call_timeout, float) and isinstance(limits.memory_bytes, int)
    assert limits.cell_timeout == DEFAULT.cell_timeout
    assert Course.load(COURSE_ROOT).limits == DEFAULT
    # every field of settings.Limits is a key of [limits], and may be set
    every = "\n".join(
        f"{f} = {getattr(DEFAULT, f) * 2 if f != 'idle_share' else 0.5!r}"
        for f in Limits.__dataclass_fields__
    )
    (tmp_path / "course.toml").write_text(BASE + "[limits]\n" + every + "\n")
    limits = Course.load(tmp_path).limits
    for name in Limits.__dataclass_fields__:
        assert getattr(limits, name) != getattr(DEFAULT, name), name


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


def test_the_course_limits_reach_every_place_it_is_graded(tmp_path, monkeypatch):
    """course.toml's [limits] is what each grading path uses: the graders' program runs and
    the submission's deadline (check, a grading job, Gradescope and the hub's checks all grade
    through grade_file), the notebook run and the submission's size (nbgrader's preprocessors,
    class grading's look at a submission), a Dask task's patience, and the Gradescope zip's
    own course.toml."""
    from dataclasses import replace

    from attention_course.classgrade import nbgrader_api
    from attention_course.classgrade.cluster import make_tasks
    from attention_course.classgrade.jobs import ClassRun
    from attention_course.grading import graders, preprocessors, runner, submissions
    from attention_course.integrations import gradescope
    from attention_course.sandbox.program import SandboxError
    from attention_course.settings import MiB

    root = nbgrader_api.copy_course(tmp_path / "course", COURSE_ROOT)
    toml = root / "course.toml"
    toml.write_text(
        toml.read_text()
        + "\n[limits]\ncall_timeout = 1.25\nsubmission_bytes = 1_048_576\nclaim_patience = 7\n"
        + "notebook_cell_timeout = 0.75\ngraders_slack = 9\n"
    )
    course = Course.load(root)
    assert (course.limits.call_timeout, course.limits.submission_bytes) == (1.25, MiB)

    used = []  # the limits of each program run and each submission's deadline

    def no_sandbox(cells, calls, limits, **kwargs):
        used.append(limits)
        raise SandboxError("not run here")

    monkeypatch.setattr(runner, "run_program", no_sandbox)
    real_deadline = graders.submission_deadline
    monkeypatch.setattr(
        graders, "submission_deadline", lambda limits: used.append(limits) or real_deadline(limits)
    )
    solution = tmp_path / "solution.py"
    solution.write_text(Course.load(COURSE_ROOT).reference_file.read_text())
    try:
        graders.grade_file(
            solution, "attention_basics", functions=["softmax"], in_process=True, course=course
        )
    except graders.GradingError:
        pass  # every test a fault of grading: nothing ran
    assert used and all(limits is course.limits for limits in used)

    # nbgrader's preprocessors: the submission's size, the notebook run's limits
    folder = root / "submitted" / "s" / "attention_basics"
    folder.mkdir(parents=True)
    (folder / "attention_basics.ipynb").write_bytes(b" " * (MiB + 1))
    resources = {"metadata": {"path": str(folder)}}
    with pytest.raises(preprocessors.SubmissionRefused, match="more than the 1 MB"):
        preprocessors.CheckSubmission().preprocess(None, resources)
    assert "more than the 1 MB" in submissions.inspect(root, "attention_basics", "s").reason
    said = nbgrader_api.autograde("attention_basics", "s", root, nb_api=object())
    assert "more than the 1 MB" in said["error"]
    runs = []
    ran = SimpleNamespace(died_at=None, out_of_time=False)
    monkeypatch.setattr(
        preprocessors, "execute_notebook", lambda nb, limits, *a, **k: runs.append(limits) or ran
    )
    preprocessors.SandboxedExecute().preprocess(None, resources)
    # nbgrader_config.py's value wins over course.toml's
    preprocessors.SandboxedExecute(timeout=2.0).preprocess(None, resources)
    assert runs == [course.limits, replace(course.limits, notebook_cell_timeout=2.0)]

    # a Dask task, and the Gradescope zip's course.toml
    task = make_tasks(root, ClassRun("attention_basics", {}), True, False, 60.0)("s", "x")
    assert task["patience"] == 7.0
    zipped = tmp_path / "zipped"
    zipped.mkdir()
    (zipped / "course.toml").write_text(gradescope.course_toml(course, "attention_basics"))
    assert Course.load(zipped).limits == course.limits
