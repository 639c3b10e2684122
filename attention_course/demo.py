"""The main job: release the assignments, grade a sample class, show the results."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from attention_course.assignments import ASSIGNMENTS, COURSE_ROOT, grade_cell_id
from attention_course.course import autograde, generate_feedback, gradebook_scores, release
from attention_course.report import class_table
from attention_course.samples import is_notebook_json, write_submissions


def _clear_demo_students(root: Path) -> None:
    for folder in ("submitted", "autograded", "feedback"):
        for path in (root / folder).glob("demo-*"):
            shutil.rmtree(path)


def _failure_reason(result: dict, path: Path) -> str:
    if not is_notebook_json(path):
        return "not graded: the notebook is not valid JSON"
    log = (result.get("log") or "") + (result.get("error") or "")
    errors = [line for line in log.splitlines() if re.search(r"error|fail", line, re.I)]
    return "not graded: " + (errors[-1].strip()[:200] if errors else "nbgrader failed")


def run_demo(root: Path = COURSE_ROOT) -> int:
    start = time.monotonic()
    print("1. releasing every assignment in source/ into release/ ...")
    for name in release(root=root):
        print(f"   release/{name}/")
    _clear_demo_students(root)
    problems: dict[str, dict[str, str]] = {}
    for assignment in ASSIGNMENTS:
        students = write_submissions(assignment, root)
        print(f"2. {assignment}: sample submissions from {', '.join(students)}")
        print(f"3. {assignment}: autograding with nbgrader (graders run outside the kernel) ...")
        for student in students:
            result = autograde(assignment, student, root)
            if not result.get("success"):
                path = root / "submitted" / student / assignment / f"{assignment}.ipynb"
                problems.setdefault(assignment, {})[student] = _failure_reason(result, path)
        print(f"4. {assignment}: feedback (hidden tests cleared) in feedback/<student>/")
        generate_feedback(assignment, "*", root)
    print()
    for assignment, spec in ASSIGNMENTS.items():
        columns = [grade_cell_id(f) for f in spec.graded]
        rows = {
            s: v for s, v in gradebook_scores(assignment, root).items() if s.startswith("demo-")
        }
        print(class_table(rows, columns, f"{assignment}: scores stored in the gradebook"))
        for student, reason in sorted(problems.get(assignment, {}).items()):
            print(f"  {student}: {reason}")
        print()
    print(f"Feedback: {root / 'feedback'}   Gradebook: {root / 'gradebook.db'}")
    print(f"Done in {time.monotonic() - start:.0f} s.")
    return 0
