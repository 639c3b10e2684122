"""The main job: release the assignments, grade a sample class, show the results.

The demo builds its class in a copy of the course of its own (a new temporary folder unless one
is given), so it never touches the course's gradebook, student folders, exports or reports.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from attention_course.classgrade.nbgrader_api import (
    copy_course,
    gradebook_scores,
    release,
)
from attention_course.classgrade.run import ClassRun, autograde_class
from attention_course.cli.samples import SAMPLE_STUDENTS, write_quiz_responses, write_submissions
from attention_course.course import Course
from attention_course.quiz.grading import format_item_analysis, grade_response_files, item_analysis
from attention_course.quiz.loading import load_bank
from attention_course.reports.class_report import class_report
from attention_course.reports.files import write_report
from attention_course.reports.tables import class_run_lines, class_table, score_columns
from attention_course.sandbox import confined
from attention_course.settings import DEFAULT_JOBS


def grade_sample_class(root: Path, jobs: int = DEFAULT_JOBS) -> dict[str, ClassRun]:
    """Write every sample student's submissions (both assignments and the graded quiz),
    autograde them and write their feedback, in the course folder `root`."""
    runs = {}
    for assignment in Course.load(root).all_assignments:
        write_submissions(assignment, root)
        runs[assignment] = autograde_class(assignment, root, jobs=jobs)
    return runs


def _new_course(source: Course, where: Path | None) -> Path:
    if where is None:
        where = Path(tempfile.mkdtemp(prefix="attention-course-demo-")) / "course"
    elif where.exists() and any(where.iterdir()):
        raise FileExistsError(f"{where} is not empty: give a new folder for the demo's course")
    return copy_course(where, source.root)


def run_demo(source: Course, where: Path | None = None) -> int:
    start = time.monotonic()
    status = confined.require()  # no sandbox, no grading: say so before anything else
    root = _new_course(source, where)
    course = Course.load(root)
    print(f"0. student code runs in a sandbox: {status.detail}")
    print(f"   the demo's own course folder (the course at {source.root} stays untouched): {root}")
    print("1. releasing every assignment of source/ (nbgrader generate_assignment) ...")
    for name in release(root):
        print(f"   {root / 'release' / name}/")
    print(f"2. a sample class in submitted/: {', '.join(SAMPLE_STUDENTS)}")
    print(f"3. autograding it with nbgrader, {DEFAULT_JOBS} at a time, student code in the")
    print("   sandbox, graders outside it; 4. feedback with hidden tests cleared ...")
    runs = grade_sample_class(root)
    print()
    for assignment in course.all_assignments:
        rows = gradebook_scores(assignment, root)
        columns = score_columns(assignment, root)
        print(class_table(rows, columns, f"{assignment}: scores stored in the gradebook"))
        for line in class_run_lines(runs[assignment], graded=False):
            print(line)
        print()
    quiz_dir = root / "exports" / "demo_quiz"
    has_quiz = course.quiz is not None and "knowledge_check" in course.quiz.quizzes
    if course.quiz is not None and has_quiz:
        print("5. the knowledge-check quiz: the same students' response files, graded with the")
        print(f"   key ({quiz_dir}/), and the item analysis:")
        bank = load_bank("knowledge_check", course.quiz.banks, course.quiz.formulas)
        paths = write_quiz_responses(root, quiz_dir)
        graded, errors = grade_response_files(bank, paths, quiz_dir / "grades.csv")
        print(format_item_analysis(bank, item_analysis(bank, graded), 5))
        for error in errors:
            print(f"   not graded: {error}")
    else:
        print(
            "5. the quiz: skipped, this course has no knowledge_check quiz ([quiz] in course.toml)"
        )
    print()
    print("6. class reports from the gradebook (Markdown, CSV and a figure in reports/); the")
    print("   three most failed grader tests or questions of each:")
    for assignment in course.all_assignments:
        report = class_report(assignment, root)
        written = write_report(report, root / "reports" / assignment)
        print(f"   {written[0]}: mean {report.mean:.3g} / {report.max_score:g}")
        for item in report.items[:3]:
            pending = f" ({item.pending} to grade by hand)" if item.pending else ""
            print(f"     {item.passed}/{item.graded} passed{pending}  {item.group}: {item.item}")
    print()
    print(f"Done in {time.monotonic() - start:.0f} s. Where the results are:")
    print(f"  feedback for each student:   {root / 'feedback'}/<student>/<assignment>/")
    print(f"  the gradebook (nbgrader):     {root / 'gradebook.db'}")
    print(f"  class reports:                {root / 'reports'}/<assignment>/report.md")
    if has_quiz:
        print(f"  the quiz's grades:            {quiz_dir / 'grades.csv'}")
    print("What to try next:")
    first = next(iter(course.assignments))
    released = course.release_notebook(first)
    print(f"  attention-course check --course {root} {released}")
    print("      (an untouched stub scores 0; fill in a function and check again)")
    print(f"  attention-course doctor --course {source.root}   (what the sandbox guarantees here)")
    print("  docs/instructors.md in the course repository: release, grade, Gradescope, JupyterHub")
    return 0
