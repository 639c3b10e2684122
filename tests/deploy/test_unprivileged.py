"""Grading as an ordinary account (a JupyterHub instructor) gives the scores grading as root gives.

The test creates a system account, copies the course into a folder it owns, and grades the
sample class's attention_basics there as that account: the sandbox then runs student code as
that account inside a user namespace (no root, no fresh uid). Python lives in root's home on
some machines, so the account runs in a mount namespace where only the Python installation of
root's home is visible.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores
from tests.course import COURSE_ROOT

ACCOUNT = "attention-grader"

ASSIGNMENT = "attention_basics"
GRADE = """
import json, sys
from pathlib import Path
from attention_course.sandbox import jail
from attention_course.classgrade.run import autograde_class
from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.cli.samples import write_submissions
root, assignment = Path(sys.argv[1]), sys.argv[2]
write_submissions(assignment, root)
autograde_class(assignment, root)
print(json.dumps({"mode": jail.probe().mode, "scores": gradebook_scores(assignment, root)}))
"""


@pytest.fixture(scope="module")
def account():
    if os.geteuid() != 0:
        pytest.skip("creating an account needs root")
    created = False
    try:
        pwd.getpwnam(ACCOUNT)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", ACCOUNT], check=True)
        created = True
    yield pwd.getpwnam(ACCOUNT)
    if created:
        subprocess.run(["userdel", ACCOUNT], check=False)


def _as_account(account, argv: list[str], home: Path) -> subprocess.CompletedProcess:
    """Run `argv` as the account, seeing root's home only where Python is installed."""
    python = Path(os.path.realpath(sys.executable)).parents[1]
    view = ["bwrap", "--dev-bind", "/", "/", "--perms", "0755", "--tmpfs", "/root"]
    if python.is_relative_to("/root"):
        for folder in reversed(python.parents):
            if folder.is_relative_to("/root") and folder != Path("/root"):
                view += ["--perms", "0755", "--dir", str(folder)]
        view += ["--ro-bind", str(python), str(python)]
    uid, gid = str(account.pw_uid), str(account.pw_gid)
    switch = ["setpriv", "--reuid", uid, "--regid", gid, "--clear-groups", "--"]
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "USER": ACCOUNT,
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    return subprocess.run(
        [*view, "--", *switch, *argv], env=env, capture_output=True, text=True, timeout=900
    )


def test_an_ordinary_account_grades_like_root(account, graded_class):
    base = Path(tempfile.mkdtemp(prefix="attention-account-", dir="/var/tmp"))
    try:
        base.chmod(0o755)
        course = copy_course(base / "course", COURSE_ROOT)
        home = base / "home"
        home.mkdir()
        for path in [base / "course", home, *base.rglob("*")]:
            os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
        argv = [sys.executable, "-c", GRADE, str(course), ASSIGNMENT]
        proc = _as_account(account, argv, home)
        assert proc.returncode == 0, proc.stderr[-3000:]
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        assert found["mode"] == "user"  # the sandbox ran as the account, not as root
        root_course, _ = graded_class
        assert found["scores"] == gradebook_scores(ASSIGNMENT, root_course)
    finally:
        shutil.rmtree(base, ignore_errors=True)
