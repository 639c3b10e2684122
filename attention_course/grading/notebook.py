"""Reading submissions: which cells the grading worker runs, and which assignment a notebook is.

Where this stands on a submission's way (docs/life-of-a-submission.md): grade_file's runner
reads the submitted notebook here (`program_from_file`): the set-up cell and the solution cells
are the program every run of a Session runs in the sandbox.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path
from typing import Any

from attention_course.course import SETUP_CELL_ID, Course, grade_cell_id


class NotebookError(ValueError):
    """A submission that cannot be read; the message is one line for the user."""


def read_notebook(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise NotebookError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"{path}: not valid notebook JSON (line {exc.lineno}: {exc.msg})"
        ) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError(f"{path}: not a Jupyter notebook (no list of cells)")
    return nb


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


_MAGIC = re.compile(r"^(\s*)([%!].*)$", re.MULTILINE)


def _without_magics(source: str) -> str:
    """IPython magics and shell escapes are not Python: the worker skips them."""
    return _MAGIC.sub(r"\1pass  # \2", source)


def parse_source(source: str) -> ast.Module:
    """The syntax tree of a student's `source`, which is read, never run. Anything the parser
    cannot take is a SyntaxError, a tree too deep for it (RecursionError, MemoryError:
    `1+1+...+1` with thousands of terms) included; the parser's warnings about the student's
    code are not the grader's to print."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (RecursionError, MemoryError):
        raise SyntaxError("nested too deeply to be read") from None


def _defines(source: str) -> set[str]:
    try:
        tree = parse_source(_without_magics(source))
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def program_cells(nb: dict[str, Any]) -> list[tuple[str, str]]:
    """The cells the graded functions need: the set-up cell and every solution cell, in order.

    A notebook without nbgrader metadata falls back to the code cells that define functions or
    only import modules, so plots and timing experiments never run in the grading worker.
    """
    code = [c for c in nb["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]
    chosen = []
    for i, cell in enumerate(code):
        meta = _nbgrader(cell)
        if meta.get("grade_id") == SETUP_CELL_ID or meta.get("solution") is True:
            chosen.append((str(meta.get("grade_id", f"cell{i}")), _source(cell)))
    if chosen:
        return [(cid, _without_magics(src)) for cid, src in chosen]
    for i, cell in enumerate(code):
        src = _source(cell)
        try:
            body = parse_source(_without_magics(src)).body
        except SyntaxError:
            continue
        kinds = (ast.Import, ast.ImportFrom, ast.FunctionDef)
        if body and all(isinstance(n, kinds) for n in body):
            chosen.append((f"cell{i}", _without_magics(src)))
    return chosen


def program_from_file(path: Path) -> list[tuple[str, str]]:
    """A notebook's program cells, or a Python file as a single cell."""
    if path.suffix == ".py":
        try:
            return [(path.stem, path.read_text(encoding="utf-8"))]
        except OSError as exc:
            raise NotebookError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    return program_cells(read_notebook(path))


def _claimed(nb: dict[str, Any]) -> str | None:
    meta = nb.get("metadata", {})
    named = meta.get("attention_course", {}) if isinstance(meta, dict) else {}
    named = named.get("assignment") if isinstance(named, dict) else None
    return named if isinstance(named, str) else None


def _quiz_ids(course: Course) -> set[str]:
    """The grade ids of the graded quiz's cells (from its source notebook)."""
    if course.quiz is None:
        return set()
    try:
        nb = json.loads(course.source_notebook(course.quiz.assignment).read_text())
    except (OSError, ValueError):
        return set()
    return {gid for c in nb["cells"] if (gid := _nbgrader(c).get("grade_id")) is not None}


def _by_cells(nb: dict[str, Any], course: Course) -> str | None:
    """The assignment whose graded functions' cells (solution `f`, test `f_tests`), or whose
    quiz cells, the notebook holds most of; None when it holds none."""
    ids = {_nbgrader(c).get("grade_id") for c in nb["cells"] if isinstance(c, dict)}
    counts = {
        name: sum(f in ids or grade_cell_id(f) in ids for f in a.graded)
        for name, a in course.assignments.items()
    }
    if course.quiz is not None:
        counts[course.quiz.assignment] = len(ids & _quiz_ids(course))
    best = max(counts.values())
    winners = [name for name, n in counts.items() if n == best]
    return winners[0] if best and len(winners) == 1 else None


def _by_functions(nb: dict[str, Any], course: Course) -> str | None:
    """The assignment whose graded functions the notebook's code defines most of."""
    code = [_source(c) for c in nb["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]
    defined = set().union(*(_defines(src) for src in code)) if code else set()
    counts = {name: len(defined & set(a.graded)) for name, a in course.assignments.items()}
    best = max(counts.values())
    winners = [name for name, n in counts.items() if n == best]
    return winners[0] if best and len(winners) == 1 else None


def detect_assignment(nb: dict[str, Any], path: Path, course: Course) -> str:
    """The assignment a notebook's cells belong to; failing that, its metadata, its file name or
    the functions it defines. A notebook whose metadata names another assignment than its cells
    is refused (the metadata is the student's to edit; the cells decide)."""
    claimed = _claimed(nb)
    found = _by_cells(nb, course)
    if found is not None:
        if claimed is not None and claimed != found:
            raise NotebookError(
                f"{path}: its metadata names the assignment {claimed!r}, but its cells are "
                f"those of {found!r}: refused"
            )
        return found
    for guess in (claimed, path.stem):
        if guess in course.all_assignments:
            return guess
    by_functions = _by_functions(nb, course)  # (parses every code cell: only when needed)
    if by_functions in course.all_assignments:
        return by_functions
    known = ", ".join(course.all_assignments)
    raise NotebookError(
        f"{path}: cannot tell which assignment this notebook is (no nbgrader metadata naming "
        f"it and the file name is not one of: {known}); pass --assignment"
    )
