"""The cells to compare: each student's solution cells, the release's stubs and visible checks,
and the instructor's solutions, read as untrusted files (never run)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_course.course import Course
from attention_course.errors import SubmissionRefused
from attention_course.grading.notebook import NotebookError, parse_source, read_notebook
from attention_course.sandbox.safety import check_submission_folder
from attention_course.settings import SIMILARITY


@dataclass
class Handed:
    """What one student handed in: function -> solution cell source; `reason` when the
    notebook cannot be read at all; `skipped`: function -> why that cell is not compared."""

    student: str
    cells: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Given:
    """What the course gives every student of an assignment, or keeps as its own solution."""

    functions: tuple[str, ...]
    stubs: dict[str, str]  # function -> the released solution cell
    checks: tuple[str, ...]  # the released visible checks and other locked cells
    solutions: dict[str, str]  # function -> the instructor's solution cell


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def _grade_id(cell: dict[str, Any]) -> object:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta.get("grade_id") if isinstance(meta, dict) else None


def _code_cells(nb: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in nb["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]


def _defines(source: str) -> set[str]:
    try:
        body = parse_source(source).body
    except SyntaxError:
        return set()
    return {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def solution_cells(nb: dict[str, Any], functions: tuple[str, ...]) -> dict[str, str]:
    """function -> its solution cell: the cell whose grade id is its name, else (metadata
    lost) the first code cell that defines it."""
    cells = _code_cells(nb)
    found = {f: _source(c) for c in cells for f in functions if _grade_id(c) == f}
    for f in functions:
        if f not in found:
            defining = (
                src
                for c in cells
                if len(src := _source(c)) <= SIMILARITY.cell_chars and f in _defines(src)
            )
            if (first := next(defining, None)) is not None:
                found[f] = first
    return {f: found[f] for f in functions if f in found}


def given(course: Course, assignment: str) -> Given:
    functions = course.assignment(assignment).graded
    try:
        released = read_notebook(course.release_notebook(assignment))
        source = read_notebook(course.source_notebook(assignment))
    except NotebookError as exc:
        raise NotebookError(f"the course's own notebook: {exc}") from None
    stubs = solution_cells(released, functions)
    checks = tuple(_source(c) for c in _code_cells(released) if _grade_id(c) not in set(functions))
    return Given(functions, stubs, checks, solution_cells(source, functions))


def submitted(root: Path, assignment: str) -> list[str]:
    """The students with a folder submitted/<student>/<assignment>/."""
    base = root / "submitted"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / assignment).is_dir())


def read_handed(root: Path, assignment: str, student: str, functions: tuple[str, ...]) -> Handed:
    """A student's solution cells; the reason instead when the folder or notebook is refused
    or cannot be read."""
    folder = root / "submitted" / student / assignment
    handed = Handed(student)
    try:
        check_submission_folder(folder, Course.load(root).limits.submission_bytes)
        nb = read_notebook(folder / f"{assignment}.ipynb")
    except (SubmissionRefused, NotebookError) as exc:
        handed.reason = str(exc).replace(str(folder) + "/", "").replace(str(folder), "the folder")
        return handed
    for function, source in solution_cells(nb, functions).items():
        if len(source) > SIMILARITY.cell_chars:
            handed.skipped[function] = (
                f"{len(source)} characters, more than the {SIMILARITY.cell_chars} compared"
            )
        else:
            handed.cells[function] = source
    return handed
