"""Grading as an ordinary account (a JupyterHub instructor) gives the scores grading as root gives.

The account is made by the test; it grades the sample class's attention_basics in a copy of the
course it owns, with the engine installed from its wheel into a fresh virtual environment every
account can use (as on a shared machine: no checkout on its import path, which may sit in root's
0700 home). The sandbox then runs student code as that account inside a user namespace (no
root, no fresh uid).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores
from tests.course import COURSE_ROOT

ASSIGNMENT = "attention_basics"
GRADE = """
import json, sys
from pathlib import Path
from attention_course.sandbox import confined
from attention_course.classgrade.run import autograde_class
from attention_course.classgrade.nbgrader_api import gradebook_scores
from attention_course.cli.samples import write_submissions
root, assignment = Path(sys.argv[1]), sys.argv[2]
write_submissions(assignment, root)
autograde_class(assignment, root)
print(json.dumps({"mode": confined.probe().mode, "scores": gradebook_scores(assignment, root)}))
"""


def test_an_ordinary_account_grades_like_root(account, engine_venv, graded_class):
    course = copy_course(account.home / "course", COURSE_ROOT)
    for path in [course, *course.rglob("*")]:
        os.chown(path, account.uid, account.gid, follow_symlinks=False)
    python = engine_venv.command("python")
    proc = account.run([python, "-c", GRADE, course, ASSIGNMENT], timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["mode"] == "user"  # the sandbox ran as the account, not as root
    root_course, _ = graded_class
    assert found["scores"] == gradebook_scores(ASSIGNMENT, root_course)
    assert not str(Path(python).resolve()).startswith(str(COURSE_ROOT))
