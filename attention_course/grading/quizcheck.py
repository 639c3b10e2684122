"""`check` for the graded quiz: a submitted quiz notebook graded with the key, no gradebook.

The released quiz notebook lacks what grades it (the hidden `# quiz-grader:` lines of its locked
cells); they come back from the course's source notebook by cell id, as nbgrader's autograde
restores them from the gradebook. Then the same `GradeQuizAnswers` that autograde uses reads
each answer cell as a literal (never running it) and grades it for the given student, whose id
decides the numbers of templated questions.

Where this stands on a submission's way (docs/life-of-a-submission.md): `check` of a quiz
notebook: the quiz's own short way, beside grade_file's (the graded functions' way).
"""

from __future__ import annotations

from pathlib import Path

from attention_course.course import Course
from attention_course.grading.graders import FunctionScore, GradeReport, TestResult
from attention_course.grading.notebook import NotebookError


def check_quiz(path: Path, student: str, root: Path) -> GradeReport:
    """Each question as a 'function' of one test, its score possibly partial."""
    import nbformat

    from attention_course import settings
    from attention_course.grading.quiz_answers import MARKER, GradeQuizAnswers

    if not student.strip():
        raise NotebookError(f"{path}: the quiz's numbers depend on the student: pass --student ID")
    course = Course.load(root)
    if course.quiz is None:
        raise NotebookError(f"{course.root}: this course declares no quiz ([quiz] in course.toml)")
    quiz_assignment = course.quiz.assignment
    source = course.source_notebook(quiz_assignment)
    try:
        nb = nbformat.read(path, as_version=4)
        locked = {
            c.metadata["nbgrader"]["grade_id"]: c
            for c in nbformat.read(source, as_version=4).cells
            if c.metadata.get("nbgrader", {}).get("locked")
        }
    except (OSError, ValueError) as exc:
        raise NotebookError(f"{path}: cannot be read as a notebook ({exc})") from None
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in locked:
            cell.source = locked[grade_id].source
    resources = {"nbgrader": {"student": student, "assignment": quiz_assignment}}
    GradeQuizAnswers(course_root=str(course.root)).preprocess(nb, resources)
    functions: dict[str, FunctionScore] = {}
    for cell in nb.cells:
        found = MARKER.search(cell.source) if cell.cell_type == "code" else None
        if not found or found["kind"] != settings.GRADER_MARKER:  # a review cell: by hand
            continue
        points = float(cell.metadata.get("nbgrader", {}).get("points", 0))
        outputs = cell.get("outputs", [])
        lines = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        # the score as nbgrader reads it: the plain float of the cell's execute_result
        scores = [
            float(o["data"]["text/plain"])
            for o in outputs
            if o.get("output_type") == "execute_result"
        ]
        earned = scores[0] if scores else 0.0
        name = found["question"]
        functions[name] = FunctionScore(
            name,
            [
                TestResult(
                    name,
                    f"{found['quiz']}/{name}",
                    points,
                    earned >= points,
                    "" if earned >= points else lines.strip(),
                    partial=earned,
                )
            ],
        )
    return GradeReport(quiz_assignment, functions, [], [])
