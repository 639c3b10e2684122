"""What Gradescope's run_autograder runs for every submission: grade it, always write results.

`main` grades `<root>/submission/*.ipynb` with the same graders and sandbox as `attention-course
check`, hiding all of `<root>` from student code, and always writes `<root>/results/results.json`
in Gradescope's documented format (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
one test per function with its feedback lines; a notebook that is missing, misnamed or not JSON,
and a crash of the grading itself, each get a result that says so. `<root>` is /autograder on
Gradescope; the assignment and its points come from `<root>/source/autograder.json`, the
graders from the course part beside it (`--course`, `<root>/source/course`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

import attention_course
from attention_course.course import Course, grade_cell_id
from attention_course.inert import GRADESCOPE_PLAIN_TEXT
from attention_course.settings import Gradescope

GRADESCOPE_ROOT = Path("/autograder")
ROOT_ENV = "AUTOGRADER_ROOT"  # run_autograder's root, for a stand-in folder in tests
CONFIG = "autograder.json"  # the assignment and its functions' points, in the zip
TEST_KEYS = {"score", "max_score", "status", "name", "number", "output", "tags", "visibility"}
TIMED_OUT = (
    "Grading your notebook took too long and was stopped: does some code loop forever or run "
    "far too long when the notebook is run from the top?"
)
INTERNAL_ERROR = (
    "Your notebook could not be graded because of a problem on the grading side, not in your "
    "notebook. Your instructor can see the details; please tell them."
)


def failure_result(config: dict, why: str) -> dict:
    """Zero points for every function, each test saying why (no notebook, not JSON, ...)."""
    tests = [
        {
            "name": function,
            "score": 0.0,
            "max_score": most,
            "status": "failed",
            "output": f"Not graded: {why}",
            "visibility": "visible",
        }
        for function, most in config["points"].items()
    ]
    return {
        "score": 0.0,
        "output": f"{config['assignment']}: not graded. {why}",
        **GRADESCOPE_PLAIN_TEXT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "assignment": config["assignment"],
            "max_score": sum(config["points"].values()),
            "engine": config.get("engine", attention_course.__version__),
        },
        "tests": tests,
    }


METADATA = "submission_metadata.json"  # Gradescope's: when submitted, the due dates


def _when(text: object) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def lateness(root: Path) -> tuple[float, datetime | None]:
    """How many seconds after its due date the submission came, and that due date, from
    Gradescope's `<root>/submission_metadata.json`: its `created_at` against the submitters'
    own due date (`users[].assignment.due_date`, where Gradescope gives one: an extension),
    else the assignment's (`assignment.due_date`). (0, None) without a due date."""
    try:
        meta = json.loads((root / METADATA).read_text())
    except (OSError, ValueError):
        return 0.0, None
    if not isinstance(meta, dict):
        return 0.0, None
    submitted = _when(meta.get("created_at"))
    own = [
        _when(user["assignment"].get("due_date"))
        for user in meta.get("users") or []
        if isinstance(user, dict) and isinstance(user.get("assignment"), dict)
    ]
    dues = [due for due in own if due is not None]
    assignment = meta.get("assignment") if isinstance(meta.get("assignment"), dict) else {}
    due = max(dues) if dues else _when((assignment or {}).get("due_date"))
    if submitted is None or due is None:
        return 0.0, due
    return max(0.0, (submitted - due).total_seconds()), due


def late_penalty(method: str, score: float, seconds_late: float) -> float:
    """nbgrader's late penalty (its LateSubmissionPlugin with `method`, kept between 0 and
    the score as nbgrader's AssignLatePenalties keeps it); 0 when on time."""
    if seconds_late <= 0:
        return 0.0
    from nbgrader.plugins import LateSubmissionPlugin

    penalty = LateSubmissionPlugin(penalty_method=method).late_submission_penalty(
        "", score, seconds_late
    )
    return min(max(float(penalty or 0.0), 0.0), score)


def _late_line(seconds: float, due: datetime, penalty: float, score: float, most: float) -> str:
    hours = seconds / 3600
    late = f"{hours:.1f} hours" if hours >= 1 else f"{max(1, round(seconds / 60))} minutes"
    return (
        f"Late submission: {late} after the due date ({due.astimezone(UTC):%Y-%m-%d %H:%M} "
        f"UTC); the course's late policy takes {penalty:g} points off: "
        f"{score - penalty:g} / {most:g}."
    )


def find_notebook(folder: Path, assignment: str, course: Course) -> tuple[Path | None, str]:
    """The submitted notebook and a note for the student: `<assignment>.ipynb`, else the only
    notebook, else the one holding this assignment's test cells. Links are never followed."""
    from attention_course.grading.notebook import NotebookError, read_notebook

    expected = f"{assignment}.ipynb"
    found = sorted(
        p
        for p in folder.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and p.is_file() and not p.is_symlink()
    )
    if not found:
        return None, f"No notebook (.ipynb) in your submission: upload {expected}."
    for path in found:
        if path.name == expected:
            return path, ""
    if len(found) == 1:
        return found[0], f"Graded {found[0].name} (this assignment's notebook is {expected})."
    ids = {grade_cell_id(f) for f in course.assignment(assignment).graded}
    for path in found:
        try:
            cells = read_notebook(path)["cells"]
        except NotebookError:
            continue
        names = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in cells}
        if ids <= names:
            return path, f"Graded {path.name}: of {len(found)} notebooks, the one of {assignment}."
    return found[0], f"Graded {found[0].name}, the first of {len(found)} notebooks."


def grade_submission(root: Path, config: dict, course: Course) -> dict:
    """results.json for the submission in `<root>/submission/`."""
    from attention_course.grading.graders import grade_file
    from attention_course.grading.notebook import NotebookError, read_notebook
    from attention_course.reports.tables import function_table, gradescope_results

    assignment = config["assignment"]
    path, note = find_notebook(root / "submission", assignment, course)
    if path is None:
        return failure_result(config, note)
    shown = path.relative_to(root / "submission")
    try:
        read_notebook(path)
    except NotebookError as exc:
        why = str(exc).replace(str(path), str(shown))
        return failure_result(config, f"{why}. Download the notebook again and resubmit.")
    unsandboxed = bool(config.get("unsandboxed"))
    report = grade_file(path, assignment, unsandboxed, hide=[root], course=course)
    print(function_table(report))  # stdout: for the instructor only
    print(f"graders' inputs: seed {report.seed} (echo SEED | attention-course check --seed -)")
    raw = gradescope_results(report, Gradescope(**config.get("shown", {})))
    notes = [note] if note else []
    notes += [f"Note: {n}" for n in report.notes]
    seconds, due = lateness(root)
    penalty = late_penalty(config.get("late_penalty", "none"), raw["score"], seconds)
    if seconds > 0 and due is not None:
        notes.append(_late_line(seconds, due, penalty, raw["score"], raw["max_score"]))
    return {
        "score": raw["score"] - penalty,
        "output": "\n".join([raw["output"], *notes]),
        **GRADESCOPE_PLAIN_TEXT,
        "visibility": raw["visibility"],
        "stdout_visibility": raw["stdout_visibility"],
        "extra_data": {
            "assignment": assignment,
            "max_score": raw["max_score"],
            "engine": attention_course.__version__,
            "raw_score": raw["score"],
            "late_penalty": penalty,
        },
        "tests": [
            {
                **{k: v for k, v in test.items() if k in TEST_KEYS},
                "status": gradescope_status(test),
            }
            for test in raw["tests"]
        ],
    }


def gradescope_status(test: dict) -> str:
    """A test's Gradescope status: the engine's PASS/FAIL, and never "passed" short of its full
    points (a failing test of 0 points, a callee's bug said at its caller, is "failed", as its
    line reads)."""
    full = test["score"] >= test["max_score"]
    return "passed" if test.get("status") == "passed" and full else "failed"


def run(root: Path, course_dir: Path | None = None) -> int:
    """Grade and write `<root>/results/results.json`, whatever happens. Returns an exit code."""
    from attention_course.sandbox import confined

    start = time.monotonic()
    code, config = 0, None
    try:
        config = json.loads((root / "source" / CONFIG).read_text())
        course = Course.load(course_dir or root / "source" / "course")
        print(f"graded by attention-course {attention_course.__version__}; course: {course.root}")
        status = confined.probe()
        sandbox = status.detail if status.ok else f"NONE ({status.detail})"
        if not status.ok and config.get("unsandboxed"):
            sandbox += "; grading UNSANDBOXED as the autograder was built to"
        print("sandbox:", sandbox)
        sys.stdout.flush()  # before grading's own processes write beside it
        results = grade_submission(root, config, course)
    except BaseException:  # noqa: BLE001 - whatever goes wrong, Gradescope gets a result
        traceback.print_exc(file=sys.stdout)  # the details stay in the instructor's stdout
        if isinstance(config, dict) and "points" in config:
            results = failure_result(config, INTERNAL_ERROR)
        else:
            results = {"score": 0.0, "output": INTERNAL_ERROR, "stdout_visibility": "hidden"}
            results.update(GRADESCOPE_PLAIN_TEXT)
        code = 1
    results["execution_time"] = round(time.monotonic() - start)
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_suffix(".json.part")
    part.write_text(json.dumps(results, indent=" "))
    os.replace(part, out)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attention_course.integrations.gradescope_run",
        description="Grade <root>/submission/*.ipynb and write <root>/results/results.json "
        "(what run_autograder calls on Gradescope).",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(os.environ.get(ROOT_ENV, GRADESCOPE_ROOT)),
        help=f"the autograder folder (default: ${ROOT_ENV} or {GRADESCOPE_ROOT})",
    )
    parser.add_argument(
        "--course",
        type=Path,
        default=None,
        help="the course part of the autograder (default: <root>/source/course)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check that the engine imports and reads the course (setup.sh runs this)",
    )
    args = parser.parse_args(argv)
    if args.check:
        return check(args.course or args.root / "source" / "course")
    return run(args.root.resolve(), args.course.resolve() if args.course else None)


def check(course_dir: Path) -> int:
    """Can this engine grade with the course part at `course_dir`? (Exit 0, or 1 and why.)"""
    from attention_course.errors import UserError
    from attention_course.grading import graders  # noqa: F401 - what grading imports
    from attention_course.reports import tables  # noqa: F401

    try:
        course = Course.load(course_dir)
    except UserError as exc:
        print(f"setup: {exc}", file=sys.stderr)
        return 1
    names = ", ".join(course.assignments)
    print(f"setup: attention-course {attention_course.__version__} grades {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
