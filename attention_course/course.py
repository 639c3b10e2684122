"""A course is a folder: `course.toml` declares its assignments, graded functions and quiz.

The engine holds no course: every command reads one folder by path (`--course DIR`, else
$ATTENTION_COURSE_DIR, else the folder holding course.toml at or above the current one), and
from it the graders, the reference, the notebooks and the quiz's banks.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from attention_course import course_schema
from attention_course.errors import UserError
from attention_course.settings import COURSE_ENV, COURSE_FILE, DEFAULT, FORMULAS_FILE, Limits

# Cell ids: the solution cell of function f is "f", its locked test cell is "f_tests",
# the locked set-up cell that the grading worker also runs is "imports".
SETUP_CELL_ID = "imports"


def grade_cell_id(function: str) -> str:
    return f"{function}_tests"


@dataclass(frozen=True)
class Assignment:
    name: str
    graded: tuple[str, ...]  # graded functions, in notebook order
    helpers: tuple[str, ...] = ()  # functions the student brings from an earlier assignment
    grader_dir: Path = Path("grader_tests")

    def grader_file(self, function: str) -> Path:
        return self.grader_dir / f"test_{function}.py"

    def grader_files(self) -> list[Path]:
        return [self.grader_file(f) for f in self.graded]


@dataclass(frozen=True)
class QuizSettings:
    assignment: str  # the nbgrader assignment of the graded quiz
    quizzes: tuple[str, ...]  # the banks it holds, in order
    banks: Path  # folder of the banks (answer keys: never released)
    formulas: Path  # the course's named formulas (computed answers)


@dataclass(frozen=True)
class Course:
    root: Path
    id: str
    grader_dir: Path
    reference_file: Path
    assignments: dict[str, Assignment] = field(default_factory=dict)
    quiz: QuizSettings | None = None
    contract_file: Path | None = None  # the exercise contract as data (grading/contract.py)
    misconceptions_file: Path | None = None  # the misconception models (grading/diagnosis.py)
    # [similarity] base: the known sources students may share code from (name, path), such
    # as the course text's code; `attention-course similarity` takes their code as common.
    similarity_base: tuple[tuple[str, Path], ...] = ()
    # [limits]: the limits on student code wherever this course is graded (settings.Limits,
    # with the course's own values).
    limits: Limits = DEFAULT

    @classmethod
    def load(cls, root: Path | str) -> Course:
        """The course in folder `root` (UserError when it is not one)."""
        root = Path(root).resolve()
        return _load(root, _stamp(root / COURSE_FILE))

    @property
    def all_assignments(self) -> tuple[str, ...]:
        """Every nbgrader assignment: the graded functions' and the quiz's."""
        quiz = (self.quiz.assignment,) if self.quiz else ()
        return (*self.assignments, *quiz)

    @property
    def quiz_assignment(self) -> str | None:
        return self.quiz.assignment if self.quiz else None

    def assignment(self, name: str) -> Assignment:
        try:
            return self.assignments[name]
        except KeyError:
            known = ", ".join(self.assignments)
            raise UserError(f"unknown assignment {name!r} (known: {known})") from None

    def assignment_grader(self, function: str) -> Path:
        """The grader file of `function`, whichever assignment grades it."""
        return self.grader_dir / f"test_{function}.py"

    def helpers_of(self, function: str) -> tuple[str, ...]:
        """The helpers pasted into the assignment that grades `function`."""
        return next((a.helpers for a in self.assignments.values() if function in a.graded), ())

    def graded_with(self, function: str) -> tuple[str, ...]:
        """The graded functions of the assignment that grades `function`, in notebook order."""
        return next((a.graded for a in self.assignments.values() if function in a.graded), ())

    def notebook_of(self, function: str) -> tuple[str, ...]:
        """Every other function of `function`'s notebook: the helpers pasted into it and the
        functions graded there (what the exercise contract lets it call)."""
        found = (*self.helpers_of(function), *self.graded_with(function))
        return tuple(f for f in dict.fromkeys(found) if f != function)

    def source_notebook(self, assignment: str) -> Path:
        return self.root / "source" / assignment / f"{assignment}.ipynb"

    def release_notebook(self, assignment: str) -> Path:
        return self.root / "release" / assignment / f"{assignment}.ipynb"

    def parts(self) -> list[Path]:
        """What makes the course (no student data, no gradebook): course.toml,
        nbgrader_config.py, source/ and release/, the graders, the quiz's banks and formulas,
        and samples/ where there is one. What a copy of the course needs."""
        found = [self.root / COURSE_FILE, self.root / "nbgrader_config.py", self.grader_dir]
        found += [self.root / "source", self.root / "release", self.root / "samples"]
        if self.quiz:
            found += [self.quiz.banks, self.quiz.formulas]
        found.append(self.reference_file)
        found += [path for _, path in self.similarity_base]
        inside = [p for p in found if p.exists() and p.resolve().is_relative_to(self.root)]
        return [
            p
            for p in dict.fromkeys(inside)
            if not any(p != q and p.is_relative_to(q) for q in inside)
        ]

    def hidden(self) -> list[Path]:
        """What student code must never see: the whole course folder (graders, reference,
        solutions, banks), and the banks and graders where they lie outside it."""
        found = [self.root, self.grader_dir]
        if self.quiz:
            found.append(self.quiz.banks)
        return list(dict.fromkeys(found))


_loaded: dict[tuple, Course] = {}


def _stamp(path: Path) -> tuple:
    try:
        st = path.stat()
    except OSError:
        raise UserError(
            f"{path.parent} is not a course folder (no {COURSE_FILE}); "
            f"give one with --course DIR or ${COURSE_ENV}"
        ) from None
    return (str(path), st.st_size, st.st_mtime_ns)


def _load(root: Path, stamp: tuple) -> Course:
    if stamp in _loaded:
        return _loaded[stamp]
    path = root / COURSE_FILE
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not a readable course file ({exc})") from None
    course_schema.check(path, text, data)  # UserError: the line, and what is wrong there
    course = _loaded[stamp] = _parse(root, data)
    return course


def _parse(root: Path, data: dict) -> Course:
    """The course of a course.toml that keeps its schema (course_schema.py)."""
    meta = data["course"]
    grader_dir = root / meta.get("graders", "grader_tests")
    reference = root / meta.get("reference", f"{grader_dir.name}/reference.py")
    assignments = {
        name: Assignment(name, tuple(spec["functions"]), tuple(spec.get("helpers", ())), grader_dir)
        for name, spec in data["assignments"].items()
    }
    quiz = None
    if "quiz" in data:
        q = data["quiz"]
        banks = root / q.get("banks", "quiz/banks")
        formulas = q.get("formulas")
        quiz = QuizSettings(
            q["assignment"],
            tuple(q["quizzes"]),
            banks,
            root / formulas if formulas else banks.parent / FORMULAS_FILE,
        )
    # [similarity] base: the known sources, `{ "name" = "path" }`, paths in the course folder
    base = data.get("similarity", {}).get("base", {})
    return Course(
        root,
        meta["id"],
        grader_dir,
        reference,
        assignments,
        quiz,
        contract_file=root / meta.get("contract", f"{grader_dir.name}/contract.toml"),
        misconceptions_file=root
        / meta.get("misconceptions", f"{grader_dir.name}/misconceptions.py"),
        similarity_base=tuple((name, root / path) for name, path in base.items()),
        limits=course_schema.limits(data),
    )


def find_course(folder: Path | str | None = None) -> Course:
    """The course to work on: `folder` when given, else $ATTENTION_COURSE_DIR, else the
    nearest folder at or above the current one that holds course.toml."""
    if folder is not None:
        return Course.load(folder)
    if os.environ.get(COURSE_ENV):
        return Course.load(os.environ[COURSE_ENV])
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / COURSE_FILE).is_file():
            return Course.load(candidate)
    raise UserError(
        f"no course here: no {COURSE_FILE} in {here} or above; "
        f"give the course folder with --course DIR or ${COURSE_ENV}"
    )


def graded_course(working_folder: Path) -> list[Path]:
    """The course a kernel or grader works for, from its working folder
    <root>/autograded/<student>/<assignment>/ (empty when it is not such a folder)."""
    folder = working_folder.resolve()
    return [p for p in folder.parents[2:3] if (p / "nbgrader_config.py").exists()]
