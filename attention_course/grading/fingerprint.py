"""What decides an assignment's grades, as one digest: a submission is graded again only when
its own files or this digest change.

The digest covers the engine's grading code (the base modules, the sandbox and grading wings,
and the quiz engine for the graded quiz), and the assignment's own part of the course: its
declaration in course.toml, its graders with the modules and files they share (the reference,
pasted helpers, the contract, the misconception models), its source and released notebooks and
nbgrader_config.py; for the quiz, its banks and
formulas. Reports, the command line and the integrations are not in it: editing them regrades
nothing, and editing one grader regrades only its assignment.

Where this stands on a submission's way (docs/life-of-a-submission.md): before a class run
grades a submission, classgrade/run.py compares this digest (and the submission's files) with
the one recorded at its last grading: unchanged, it is not graded again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from attention_course.course import Course
from attention_course.settings import BANK_SUFFIXES, DEFAULT

ENGINE = Path(__file__).resolve().parent.parent
BASE_MODULES = ("__init__.py", "course.py", "errors.py", "settings.py", "startup.py", "trace.py")
GRADING_WINGS = ("sandbox", "grading")
QUIZ_WING = "quiz"

_codes: dict[tuple, str] = {}  # what the files were (path, size, mtime) -> their digest


def engine_files(quiz: bool) -> list[Path]:
    """The engine's modules that decide a grade (the quiz engine's only for the quiz)."""
    files = [ENGINE / name for name in BASE_MODULES]
    for wing in (*GRADING_WINGS, *((QUIZ_WING,) if quiz else ())):
        files += sorted((ENGINE / wing).rglob("*.py"))
    return files


def assignment_files(course: Course, assignment: str) -> list[Path]:
    """The course's files that decide `assignment`'s grades."""
    files = [course.root / "nbgrader_config.py"]
    files += sorted(course.source_notebook(assignment).parent.glob("*.ipynb"))
    files += sorted(course.release_notebook(assignment).parent.glob("*.ipynb"))
    if course.quiz is not None and assignment == course.quiz.assignment:
        banks = [course.quiz.banks / f"{q}{s}" for q in course.quiz.quizzes for s in BANK_SUFFIXES]
        files += [p for p in banks if p.exists()]
        files += [course.quiz.formulas] if course.quiz.formulas.exists() else []
        return files
    graded = set(course.assignment(assignment).graded)
    for path in sorted(course.grader_dir.glob("*.py")):
        function = path.stem.removeprefix("test_")
        if not path.stem.startswith("test_") or function in graded:
            files.append(path)  # its graders, and what graders share (reference, helpers)
    for shared in (course.reference_file, course.contract_file, course.misconceptions_file):
        if shared is not None and shared not in files and shared.exists():
            files.append(shared)  # the contract the graders draw from, the mistakes they name
    return files


def declaration(course: Course, assignment: str) -> bytes:
    """The assignment's part of course.toml, in a stable form: its declaration, and the
    course's [limits] where it sets any (a time limit decides what a slow solution gets)."""
    if course.quiz is not None and assignment == course.quiz.assignment:
        return repr(("quiz", assignment, course.quiz.quizzes)).encode()
    a = course.assignment(assignment)
    limits = (course.limits,) if course.limits != DEFAULT else ()
    return repr((a.name, a.graded, a.helpers, *limits)).encode()


def grading_code(assignment: str, root: Path) -> str:
    """The digest of everything that decides `assignment`'s grades in the course at `root`.
    (Hashed again only when one of the files changed: a Dask worker asks for every
    submission it grades.)"""
    course = Course.load(root)
    quiz = course.quiz is not None and assignment == course.quiz.assignment
    engine = engine_files(quiz)
    mine = assignment_files(course, assignment)
    parts = [(p, p.relative_to(ENGINE).as_posix()) for p in engine]
    parts += [(p, "course/" + p.relative_to(course.root).as_posix()) for p in mine]
    key = declaration(course, assignment)
    seen = (key, *((str(p), st.st_size, st.st_mtime_ns) for p, _ in parts for st in [p.stat()]))
    if seen not in _codes:
        digest = hashlib.sha256(key + b"\0")
        for path, name in parts:
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        if len(_codes) > 64:
            _codes.clear()
        _codes[seen] = digest.hexdigest()
    return _codes[seen]
