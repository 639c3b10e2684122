"""Reading submissions: which cells the grading worker runs, and which assignment a notebook is."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from attention_course.assignments import ASSIGNMENTS, SETUP_CELL_ID, grade_cell_id


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


def _defines(source: str) -> set[str]:
    try:
        tree = ast.parse(_without_magics(source))
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
            body = ast.parse(_without_magics(src)).body
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


def detect_assignment(nb: dict[str, Any], path: Path) -> str:
    """The assignment a notebook belongs to: its metadata, its test cells, or its file name."""
    meta = nb.get("metadata", {})
    named = meta.get("attention_course", {}).get("assignment") if isinstance(meta, dict) else None
    if isinstance(named, dict):
        named = None
    if named in ASSIGNMENTS:
        return named
    ids = {_nbgrader(c).get("grade_id") for c in nb["cells"] if isinstance(c, dict)}
    for name, assignment in ASSIGNMENTS.items():
        if all(grade_cell_id(f) in ids for f in assignment.graded):
            return name
    stem = path.stem
    if stem in ASSIGNMENTS:
        return stem
    known = ", ".join(ASSIGNMENTS)
    raise NotebookError(
        f"{path}: cannot tell which assignment this notebook is (no nbgrader metadata naming "
        f"it and the file name is not one of: {known}); pass --assignment"
    )
