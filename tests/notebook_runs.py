"""Running the released notebooks as a student would, with chosen code in the solution cells."""

from __future__ import annotations

import re

import nbformat
from nbclient import NotebookClient

from tests.course import COURSE_ROOT

_SOLUTION = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.MULTILINE)


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def filled_release(assignment: str, replace: dict[str, str] | None = None, demos=()):
    """The released notebook with every solution cell filled in: the instructor's solution, or
    `replace[cell id]`. Code cells without nbgrader metadata (demos) are dropped unless their id
    is in `demos`."""
    replace = replace or {}
    source = nbformat.read(COURSE_ROOT / "source" / assignment / f"{assignment}.ipynb", 4)
    solutions = {
        _grade_id(c): _SOLUTION.sub("", c.source)
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = nbformat.read(COURSE_ROOT / "release" / assignment / f"{assignment}.ipynb", 4)
    kept = []
    for cell in nb.cells:
        cid = _grade_id(cell)
        if cell.cell_type == "code" and cid is None and cell.get("id") not in demos:
            continue
        if cid in solutions:
            cell.source = replace.get(cid, solutions[cid])
        kept.append(cell)
    nb.cells = kept
    return nb


def execute(nb, cwd) -> nbformat.NotebookNode:
    """Run every cell, going on after errors, as 'Restart & Run All' shows them."""
    NotebookClient(
        nb, timeout=120, allow_errors=True, resources={"metadata": {"path": str(cwd)}}
    ).execute()
    return nb


def errors(nb) -> dict[str, tuple[str, str]]:
    """Cell id (nbgrader id, else cell id) -> (exception name, message) of each failed cell."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                found[_grade_id(cell) or cell.get("id")] = (out.ename, out.evalue)
    return found
