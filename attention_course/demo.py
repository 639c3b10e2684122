"""The main job: release the assignments, grade a sample class, show the results."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from attention_course import jail
from attention_course.assignments import ASSIGNMENTS, COURSE_ROOT, grade_cell_id
from attention_course.class_report import class_report
from attention_course.cli import main as cli_main
from attention_course.course import (
    DEFAULT_JOBS,
    autograde_pairs,
    failure_reason,
    generate_feedback,
    gradebook_scores,
    release,
)
from attention_course.report import class_table
from attention_course.report_files import write_report
from attention_course.samples import (
    QUIZ_ASSIGNMENT,
    SAMPLE_STUDENTS,
    write_quiz_responses,
    write_submissions,
)


def _clear_demo_students(root: Path) -> None:
    for folder in ("submitted", "autograded", "feedback"):
        for path in (root / folder).glob("demo-*"):
            shutil.rmtree(path)


def grade_sample_class(
    root: Path = COURSE_ROOT, jobs: int = DEFAULT_JOBS
) -> dict[str, dict[str, dict]]:
    """Write every sample student's submissions (both assignments and the graded quiz),
    autograde them and write their feedback.

    Returns nbgrader's result per assignment and student. The hostile students, who try to
    rewrite everybody's grades, are graded after all the others.
    """
    assignments = [*ASSIGNMENTS, QUIZ_ASSIGNMENT]
    pairs = [(a, s) for a in assignments for s in write_submissions(a, root)]
    hostile = [p for p in pairs if p[1] == "demo-hostile"]
    graded = autograde_pairs([p for p in pairs if p not in hostile], root, jobs)
    graded.update(autograde_pairs(hostile, root, jobs))
    results: dict[str, dict[str, dict]] = {a: {} for a in assignments}
    for (assignment, student), result in graded.items():
        results[assignment][student] = result
    for assignment in assignments:
        generate_feedback(assignment, "*", root)
    return results


def run_demo(root: Path = COURSE_ROOT) -> int:
    start = time.monotonic()
    status = jail.require()  # no sandbox, no grading: say so before anything else
    print(f"0. student code runs in a sandbox: {status.detail}")
    print("1. releasing every assignment in source/ into release/ ...")
    for name in release(root=root):
        print(f"   release/{name}/")
    _clear_demo_students(root)
    print(f"2. sample submissions in submitted/: {', '.join(SAMPLE_STUDENTS)}")
    print(f"3. autograding them with nbgrader, {DEFAULT_JOBS} at a time (graders run outside the")
    print("   students' kernels), then 4. feedback with hidden tests cleared into feedback/ ...")
    results = grade_sample_class(root)
    print()
    for assignment, spec in ASSIGNMENTS.items():
        columns = [grade_cell_id(f) for f in spec.graded]
        rows = {
            s: v for s, v in gradebook_scores(assignment, root).items() if s.startswith("demo-")
        }
        print(class_table(rows, columns, f"{assignment}: scores stored in the gradebook"))
        for student, result in sorted(results[assignment].items()):
            if not result.get("success"):
                print(f"  {student}: {failure_reason(result)}")
        print()
    quiz_dir = root / "exports" / "demo_quiz"
    print("5. the knowledge-check quiz: the same students' response files, graded with the key")
    print(f"   ({quiz_dir}/), and the item analysis:")
    paths = write_quiz_responses(quiz_dir)
    cli_main(
        [
            "quiz",
            "grade",
            "knowledge_check",
            *map(str, paths),
            "--out",
            str(quiz_dir / "grades.csv"),
        ]
    )
    print()
    print("6. class reports from the gradebook (Markdown, CSV and a figure in reports/); the")
    print("   three most failed grader tests or questions of each:")
    for assignment in [*ASSIGNMENTS, QUIZ_ASSIGNMENT]:
        report = class_report(assignment, root)
        written = write_report(report, root / "reports" / assignment)
        print(f"   {written[0]}: mean {report.mean:.3g} / {report.max_score:g}")
        for item in report.items[:3]:
            pending = f" ({item.pending} to grade by hand)" if item.pending else ""
            print(f"     {item.passed}/{item.graded} passed{pending}  {item.group}: {item.item}")
    print()
    print(f"Feedback: {root / 'feedback'}   Gradebook: {root / 'gradebook.db'}")
    print(f"Done in {time.monotonic() - start:.0f} s.")
    return 0
