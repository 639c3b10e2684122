"""The course on a real JupyterHub, deployed as the README's "JupyterHub" section says
(tests/deploy/hub.py): configurable-http-proxy on 127.0.0.1, local accounts made with useradd
and logged in through PAM, the instructor's course released into the shared exchange. Chromium
goes through the hub's login page as a student (fetch in the Assignments tab, fill in, Validate,
submit) and as the instructor (formgrader collects and lists the submission). One hub for the
module. Screenshots go to the browser tests' folder, under hub/.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator

import pytest

from attention_course.settings import EXCHANGE_ENV
from tests.deploy.hub import (
    HubDeployment,
    deploy_hub,
    log_in,
    logged_in,
)

pytestmark = pytest.mark.deploy  # one venv for tests/deploy/ (tests/conftest.py GROUPS)

ASSIGNMENT = "attention_basics"


@pytest.fixture(scope="module")
def hub(engine_venv) -> Iterator[HubDeployment]:
    """The course's hub, running, with the assignment released by the instructor."""
    with deploy_hub(engine_venv) as deployment:
        instructor = deployment.instructor
        env = instructor.env(
            PATH=f"{deployment.venv.path / 'bin'}:/usr/bin:/bin",
            **{EXCHANGE_ENV: str(deployment.exchange)},  # as the hub sets it for the instructor
        )
        for argv in (
            ["attention-course", "release", ASSIGNMENT],
            ["nbgrader", "release_assignment", ASSIGNMENT],
        ):
            argv[0] = str(deployment.venv.bin(argv[0]))
            done = instructor.run(argv, cwd=deployment.course, env=env, timeout=300)
            assert done.returncode == 0, f"{argv}:\n{done.stdout}\n{done.stderr}"
        yield deployment


def test_only_the_right_password_logs_in(hub):
    student = hub.students[0]
    assert logged_in(log_in(hub.hub, student, password="not-" + student.password)) is None
    assert logged_in(log_in(hub.hub, student)) == student.name


def test_students_cannot_read_the_course_nor_write_their_configuration(hub):
    student = hub.students[0]
    for path in (hub.course / "grader_tests" / "test_softmax.py", hub.plan.config_file):
        assert student.run(["cat", path]).returncode != 0, f"a student read {path}"
    wrote = student.run(["touch", hub.plan.student_config / "x"])
    assert wrote.returncode != 0, "a student wrote into their configuration folder"
    mode = stat.S_IMODE(hub.plan.venv.stat().st_mode)
    assert mode & 0o005 == 0o005, f"the environment is closed to students ({mode:o})"
