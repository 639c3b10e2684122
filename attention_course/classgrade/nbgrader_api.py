"""A course folder's nbgrader steps, driven through nbgrader's Python API.

One process runs every step (release, autograde, feedback), which saves nbgrader's start-up
time per step. The course folder is always passed explicitly, never taken from the working
directory, so no stray gradebook appears elsewhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

from attention_course.classgrade import gradebook
from attention_course.classgrade.outcomes import last_exception
from attention_course.course import Course


class CourseError(RuntimeError):
    """An nbgrader step failed; the message carries the end of nbgrader's log."""


def _config(root: Path):
    from traitlets.config.loader import PyFileConfigLoader

    path = root / "nbgrader_config.py"
    if not path.exists():
        raise CourseError(f"{root}: no nbgrader_config.py here (not a course folder)")
    config = PyFileConfigLoader(path.name, path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    # --db / $ATTENTION_COURSE_DB win over the file's URL; postgresql:// means psycopg 3
    config.CourseDirectory.db_url = gradebook.url(root, config.CourseDirectory.get("db_url"))
    return config


@contextlib.contextmanager
def _in(root: Path):
    before = os.getcwd()
    os.chdir(root)
    try:
        yield
    finally:
        os.chdir(before)


def api(
    root: Path,
    unsandboxed: bool = False,
    release_to: Path | None = None,
    in_process: bool = False,
):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from sqlalchemy.exc import SAWarning

    # nbgrader 0.9's own gradebook code triggers these on every autograde; they are not ours.
    warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader")

    gradebook.find_alembic()  # a new gradebook is stamped without an `alembic` process
    config = _config(root)
    if release_to is not None:  # release elsewhere than release/ (registration only)
        config.CourseDirectory.release_directory = str(release_to)
    if in_process:  # a grading job: graders loaded once, reused for every submission
        config.GradeOutOfKernel.in_process = True
    if unsandboxed:
        config.SandboxedExecute.unsandboxed = True
        config.GradeOutOfKernel.unsandboxed = True
    coursedir = CourseDirectory(config=config)
    coursedir.root = str(root)
    nb_api = NbGraderAPI(coursedir=coursedir, config=config)
    nb_api.log.setLevel(logging.WARNING)
    return nb_api


def _error_lines(result: dict) -> list[str]:
    """The lines of an nbgrader result's log that say what went wrong."""
    log = (result.get("log") or "") + (result.get("error") or "")
    lines = [ln.strip() for ln in log.splitlines() if re.search(r"error|fail", ln, re.I)]
    return [ln for ln in lines if "see the the above traceback" not in ln]


def gradebook_settings(root: Path) -> tuple[str, str]:
    """The gradebook's URL and the course id, as nbgrader_config.py (or --db) gives them."""
    config = _config(root)
    return config.CourseDirectory.db_url, config.CourseDirectory.get("course_id") or ""


def _gradebook(root: Path, db_url: str | None = None):
    """The course's gradebook, as nbgrader_config.py names it, or `db_url` (a Dask task's,
    whatever its worker's environment says) (use it in a `with`)."""
    from nbgrader.api import Gradebook

    config = _config(root)
    gradebook.find_alembic()  # a new PostgreSQL gradebook gets its tables here
    url = gradebook.normalize(db_url) if db_url else config.CourseDirectory.db_url
    return Gradebook(url, config.CourseDirectory.course_id)


def gradebook_exists(root: Path) -> bool:
    """False for a SQLite gradebook whose file is not there yet (opening it would make it)."""
    url = _config(root).CourseDirectory.db_url
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///").split("?")[0]).exists()
    return True


def _check(result: dict, step: str) -> None:
    """CourseError for a step nbgrader could not do: its error lines, ending with the last
    exception of its log (the cause)."""
    if not result.get("success"):
        lines = _error_lines(result)[-12:]
        cause = last_exception((result.get("log") or "") + (result.get("error") or ""))
        if cause and cause not in lines:
            lines.append(cause)
        raise CourseError(f"{step} failed:\n" + "\n".join(lines))


def source_assignments(root: Path) -> list[str]:
    """Every assignment in source/, in name order."""
    source = root / "source"
    return sorted(p.name for p in source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def release(root: Path, assignments: list[str] | None = None) -> list[str]:
    """Regenerate release/<assignment>/ from source/ with nbgrader (solutions and hidden tests
    stripped) and record the assignments in the gradebook."""
    names = assignments or source_assignments(root)
    known = source_assignments(root)
    for name in names:
        if name not in known:
            raise CourseError(f"no assignment {name!r} in {root / 'source'}")
    nb_api = api(root)
    with _in(root):
        for name in names:
            _check(nb_api.generate_assignment(name, force=True, create=True), f"releasing {name}")
    return names


def registered(assignment: str, root: Path) -> bool:
    """Whether the gradebook knows the assignment and its notebooks (autograde needs both)."""
    from nbgrader.api import MissingEntry

    if not gradebook_exists(root):
        return False
    with _gradebook(root) as gb:
        try:
            return bool(gb.find_assignment(assignment).notebooks)
        except MissingEntry:
            return False


def register(assignment: str, root: Path) -> None:
    """Record an assignment of source/ in the gradebook (its notebooks and locked cells), as
    `release` does, without touching release/: nbgrader writes its student version into a
    temporary folder that is thrown away."""
    if assignment not in source_assignments(root):
        raise CourseError(f"no assignment {assignment!r} in {root / 'source'}")
    with tempfile.TemporaryDirectory(prefix="attention-register-") as tmp:
        nb_api = api(root, release_to=Path(tmp))
        with _in(root):
            result = nb_api.generate_assignment(assignment, force=True, create=True)
        _check(result, f"recording {assignment} in the gradebook")


def copy_course(dest: Path, source: Path) -> Path:
    """A course folder of its own at `dest`: what makes the course at `source` (course.toml,
    nbgrader_config.py, the notebooks, graders and quiz banks; see Course.parts), no student
    data and no gradebook."""
    dest.mkdir(parents=True, exist_ok=True)
    course = Course.load(source)
    for part in course.parts():
        target = dest / part.relative_to(course.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if part.is_dir():
            shutil.copytree(part, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(part, target)
    return dest


def autograde(
    assignment: str,
    student: str,
    root: Path,
    unsandboxed: bool = False,
    nb_api=None,
) -> dict:
    """Autograde submitted/<student>/<assignment>/ into autograded/ and the gradebook.

    A submission folder holding a link, a special file or an oversized notebook is refused
    before nbgrader reads anything in it (the result says why).
    """
    from attention_course.errors import SubmissionRefused
    from attention_course.sandbox.safety import check_submission_folder

    if student != "*":
        limit = Course.load(root).limits.submission_bytes  # course.toml's [limits]
        try:
            check_submission_folder(root / "submitted" / student / assignment, limit)
        except SubmissionRefused as exc:
            return {"success": False, "error": f"SubmissionRefused: {exc}\n", "log": ""}
    nb_api = nb_api or api(root, unsandboxed)
    with _in(root):
        result = nb_api.autograde(assignment, student, force=True, create=True)
    return result


def add_students(students: list[str], root: Path) -> None:
    """Make sure every student is in the gradebook (before jobs grade them side by side, so
    two never create the same student)."""
    with _gradebook(root) as gb:
        for student in students:
            gb.update_or_create_student(student)


def record_ungraded(
    assignment: str, students: list[str], root: Path, db_url: str | None = None
) -> dict[str, float]:
    """Submissions that cannot be graded stand in the gradebook with no score (0 in totals and
    means): the student, the submission, and none of the grades, comments or late penalty an
    earlier version earned (an invalid resubmission replaces the score of the valid one, manual
    grades included: they were given to the earlier version), in one transaction; then no
    autograded copy of an earlier version that would no longer match. Returns the total each
    student's submission had before, for those that had one. `db_url`: the gradebook, if not
    the course's own."""
    before: dict[str, float] = {}
    with _gradebook(root, db_url) as gb:
        for student in students:
            gb.update_or_create_student(student)
            submission = gb.update_or_create_submission(assignment, student)
            total = float(submission.score)  # (read before any grade is taken back)
            grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
            if any(g.auto_score is not None or g.manual_score is not None for g in grades):
                before[student] = total
            for grade in grades:
                grade.auto_score = grade.manual_score = grade.extra_credit = None
                grade.needs_manual_grade = False
            for notebook in submission.notebooks:
                notebook.late_submission_penalty = None
                for comment in notebook.comments:
                    comment.auto_comment = comment.manual_comment = None
        gb.db.commit()
    for student in students:
        shutil.rmtree(root / "autograded" / student / assignment, ignore_errors=True)
    return before


def failure_reason(result: dict) -> str:
    """One line saying why nbgrader could not grade a submission: in our words where they are
    in its log, else the last exception of its log (the cause, not nbgrader's line that there
    was an error), else its last error line."""
    log = (result.get("log") or "") + (result.get("error") or "")
    if "JSONDecodeError" in log or "NotJSONError" in log or "not valid JSON" in log:
        return "not graded: the notebook is not valid JSON"
    for marker in ("SubmissionRefused: ", "SandboxUnavailable: ", "GradingError: "):
        if marker in log:
            return "not graded: " + log.split(marker)[-1].splitlines()[0][:300]
    cause = last_exception(log)
    if cause:
        return "not graded: " + cause[:300]
    errors = _error_lines(result)
    return "not graded: " + (errors[-1][:200] if errors else "nbgrader failed")


def submitted_students(assignment: str, root: Path) -> list[str]:
    """Students with a submitted/<student>/<assignment>/ folder."""
    return sorted(p.parent.name for p in (root / "submitted").glob(f"*/{assignment}") if p.is_dir())


def generate_feedback(assignment: str, student: str, root: Path, nb_api=None) -> None:
    """Feedback HTML for the autograded submissions (nbgrader copies their folders into
    feedback/: each is checked first to hold nothing but regular files)."""
    from attention_course.errors import SubmissionRefused
    from attention_course.sandbox.safety import check_tree

    for folder in sorted((root / "autograded").glob(f"{student}/{assignment}")):
        try:
            check_tree(folder, f"autograded/{folder.parent.name}/{assignment}")
        except SubmissionRefused as exc:
            raise CourseError(f"feedback for {assignment} refused: {exc}") from None
    nb_api = nb_api or api(root)
    with _in(root):
        _check(
            nb_api.generate_feedback(assignment, student, force=True), f"feedback for {assignment}"
        )


def gradebook_scores(
    assignment: str, root: Path, student: str | None = None
) -> dict[str, dict[str, float]]:
    """Per student (or only `student`), per grade cell: the score nbgrader stored, and the
    total. Nothing when there is no gradebook yet (looking does not make one)."""
    from nbgrader.api import MissingEntry

    out: dict[str, dict[str, float]] = {}
    if not gradebook_exists(root):
        return out
    with _gradebook(root) as gb:
        try:
            if student is None:
                submissions = gb.assignment_submissions(assignment)
            else:
                submissions = [gb.find_submission(assignment, student)]
        except MissingEntry:
            return out
        for sub in submissions:
            if not sub.notebooks:  # an extension given before anything was handed in
                continue
            cells: dict[str, float] = {}
            for nb in sub.notebooks:
                for grade in nb.grades:
                    cells[grade.name] = float(grade.score)
            cells["total"] = float(sub.score)
            penalty = float(sub.late_submission_penalty or 0.0)
            if penalty:
                cells[LATE_PENALTY] = penalty
            out[sub.student_id] = cells
    return out


# gradebook_scores: nbgrader's late penalty of a submission, where it has one (taken off its
# total once: `grade`).
LATE_PENALTY = "late_penalty"


def grade(cells: dict[str, float]) -> float:
    """A submission's grade from its gradebook_scores row: nbgrader's total less its late
    penalty, never below 0, as nbgrader's export and feedback give it."""
    return max(0.0, cells.get("total", 0.0) - cells.get(LATE_PENALTY, 0.0))


def gradebook_records(assignment: str, root: Path) -> dict[str, dict]:
    """What the gradebook keeps of each submission's last grading (gradebook.Records: its
    status, reason, total), per student; nothing when there is no gradebook yet (looking does
    not make one)."""
    if not gradebook_exists(root):
        return {}
    records = gradebook.Records(*gradebook_settings(root), assignment)
    try:
        return records.all()
    finally:
        records.close()


def due_date(assignment: str, root: Path, student: str | None = None) -> float | None:
    """The assignment's due date as nbgrader keeps it (the gradebook's, set with
    `nbgrader db assignment add --duedate`, naive UTC), in epoch seconds, with `student`'s
    extension added where they have one (`attention-course extension`); None when it has
    none or the gradebook does not know it (looking does not make a gradebook)."""
    import calendar

    from nbgrader.api import MissingEntry

    if not gradebook_exists(root):
        return None
    with _gradebook(root) as gb:
        try:
            due = gb.find_assignment(assignment).duedate
        except MissingEntry:
            return None
        if due is not None and student is not None:
            try:
                extension = gb.find_submission(assignment, student).extension
            except MissingEntry:
                extension = None
            if extension is not None:
                due = due + extension
    return None if due is None else float(calendar.timegm(due.utctimetuple()))


def grant_extension(assignment: str, student: str, root: Path, hours: float) -> float | None:
    """Give `student` `hours` more than the assignment's due date (0: take any extension
    back), as nbgrader keeps an extension: on the student's submission in the gradebook (made
    now, empty, if they have not submitted yet; autograde keeps it). Extensions do not add up:
    the last one given stands. Returns the student's due date (epoch seconds), None if the
    assignment has no due date. CourseError when the gradebook does not know the assignment."""
    import datetime

    from nbgrader.api import MissingEntry

    with _gradebook(root) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise CourseError(
                f"{assignment}: not in the gradebook yet (release it, or "
                f"`nbgrader db assignment add {assignment} --duedate=...`)"
            ) from None
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment, student)
        submission.extension = datetime.timedelta(hours=hours) if hours else None
        gb.db.commit()
    return due_date(assignment, root, student)


def late_penalty(root: Path) -> str:
    """nbgrader's late policy for the course (`c.LateSubmissionPlugin.penalty_method`:
    "none" or "zero")."""
    return str(_config(root).LateSubmissionPlugin.get("penalty_method", "none"))


def open_gradebook(root: Path) -> None:
    """Make the course's gradebook if it is not there yet, as nbgrader makes it (its tables
    and alembic's version stamp, which nbgrader writes only into an empty database: before
    any table of ours goes in)."""
    with _gradebook(root):
        pass
