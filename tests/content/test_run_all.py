"""Restart & Run All of a correct notebook, demo cells included, runs to the end in every order
of calls the contract allows (a graded function may call any other function of its notebook,
also one defined further down): a demo cell whose function needs a later one waits for it, as
the visible checks do, instead of stopping the run at a NameError."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.course import ASSIGNMENTS, COURSE_ROOT
from tests.notebook_runs import errors, execute, filled_release

CORRECT = Path(__file__).resolve().parent.parent / "catalogue" / "correct"


def _demos(assignment: str) -> tuple[str, ...]:
    """The ids of the released notebook's demo cells (code cells nbgrader does not grade)."""
    nb = nbformat.read(COURSE_ROOT / "release" / assignment / f"{assignment}.ipynb", 4)
    return tuple(
        c.get("id") for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata
    )


def _order(assignment: str) -> list[str]:
    nb = nbformat.read(COURSE_ROOT / "release" / assignment / f"{assignment}.ipynb", 4)
    found = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    return [f for f in found if f and f in ASSIGNMENTS[assignment].graded]


def _calls_later(assignment: str) -> dict[str, str]:
    """Correct variants (tests/catalogue/correct) of a function that call one defined further
    down in `assignment`: function -> its code."""
    order = _order(assignment)
    found = {}
    for path in sorted(CORRECT.glob("*.py")):
        function = path.stem.split("__")[0]
        if function not in order:
            continue
        code = path.read_text()
        later = order[order.index(function) + 1 :]
        if any(re.search(rf"\b{name}\(", code) for name in later):
            found[path.stem] = code
    return found


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def _run(assignment: str, replace: dict[str, str], folder: Path) -> nbformat.NotebookNode:
    nb = execute(filled_release(assignment, replace, demos=_demos(assignment)), folder)
    assert errors(nb) == {}, errors(nb)
    # every function's visible checks passed: in their own cell, or in the one they waited for
    tests = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "")[-6:] == "_tests"
    ]
    printed = "".join(_printed(c) for c in tests)
    assert printed.count("visible checks passed") == len(tests), printed
    return nb


def test_run_all_with_demos_when_self_attention_calls_cross_attention(tmp_path):
    """The case a student met: a self_attention that calls cross_attention (60/60 from the
    graders) stopped Restart & Run All at the self_attention demo's NameError."""
    code = (CORRECT / "self_attention__via_cross_attention.py").read_text()
    nb = _run("masks_and_heads", {"self_attention": code}, tmp_path)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    demo = next(c for c in nb.cells if c.source.startswith("# Demo: self-attention"))
    assert "This demo needs cross_attention, which is defined further down" in _printed(demo)
    later = cells["cross_attention_tests"]
    assert "The demo that waited for cross_attention:" in _printed(later)
    drawn = [o for o in later.outputs if "image/png" in o.get("data", {})]
    assert drawn, "the demo that waited draws its figure under cross_attention's checks"


@pytest.mark.long
@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_run_all_with_demos_in_every_calling_pattern(assignment, tmp_path):
    """The instructor's solution, each correct variant that calls a later function alone, and
    all of them at once."""
    patterns = _calls_later(assignment)
    cases = {"instructor": {}}
    for name, code in patterns.items():
        cases[name] = {name.split("__")[0]: code}
    together: dict[str, str] = {}
    for name, code in patterns.items():
        together.setdefault(name.split("__")[0], code)
    if len(together) > 1:
        cases["together"] = together
    for case, replace in cases.items():
        folder = tmp_path / case
        folder.mkdir()
        _run(assignment, replace, folder)
