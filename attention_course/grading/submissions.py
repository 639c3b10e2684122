"""A submission before it is graded: is it there, is it a notebook, and what does it hold?

`inspect` looks at submitted/<student>/<assignment>/ and says, in words an instructor can act
on, why a submission cannot be graded (refused folder, notebook missing or renamed, invalid
JSON, a notebook format nbgrader cannot read), or that its nbgrader metadata was lost.
`restore_metadata` rebuilds such a notebook from the released one: each solution cell gets the
student's definition of its function, so it is graded by function name.

Where this stands on a submission's way (docs/life-of-a-submission.md): before nbgrader reads a
submission: a class run's look at every submission (classgrade/run.py) calls `inspect`, and
RestoreMetadata (preprocessors.py) `restore_metadata`.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from nbformat.notebooknode import NotebookNode

from attention_course.course import Course
from attention_course.errors import SubmissionRefused
from attention_course.grading.notebook import parse_source
from attention_course.sandbox.safety import check_submission_folder


@dataclass
class Inspection:
    """What a submission folder holds. `reason` is set when it cannot be graded at all."""

    student: str
    folder: Path
    files: list[Path] = field(default_factory=list)
    reason: str = ""
    stripped: bool = False  # its nbgrader metadata was lost: graded by function name
    fingerprint: str = ""


def _has_metadata(nb: dict) -> bool:
    cells = nb.get("cells", [])
    return any(
        isinstance(c, dict) and isinstance(c.get("metadata"), dict) and "nbgrader" in c["metadata"]
        for c in cells
    )


def notebook_names(root: Path, assignment: str) -> list[str]:
    """The notebooks of an assignment, as released."""
    return sorted(p.name for p in (root / "release" / assignment).glob("*.ipynb"))


def fingerprint(files: list[Path], folder: Path, extra: str = "") -> str:
    """Changes when any file of the submission changes (or `extra`, the grading code)."""
    digest = hashlib.sha256(extra.encode())
    for path in sorted(files):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def inspect(root: Path, assignment: str, student: str, grading_code: str = "") -> Inspection:
    """Why submitted/<student>/<assignment>/ cannot be graded, if it cannot."""
    folder = root / "submitted" / student / assignment
    found = Inspection(student, folder)
    try:
        found.files = check_submission_folder(folder, Course.load(root).limits.submission_bytes)
    except SubmissionRefused as exc:
        found.reason = str(exc)
        return found
    found.fingerprint = fingerprint(found.files, folder, grading_code)
    expected = notebook_names(root, assignment)
    present = sorted(p.name for p in found.files if p.suffix == ".ipynb" and p.parent == folder)
    missing = [name for name in expected if name not in present]
    if missing:
        seen = f"found: {', '.join(present)}" if present else "no notebook at all"
        found.reason = (
            f"no {', '.join(missing)} in submitted/{student}/{assignment}/ ({seen}); "
            "a renamed notebook must get its released name back"
        )
        return found
    for name in expected:
        reason, stripped = _read(folder / name)
        if reason:
            found.reason = f"{name} {reason}"
            return found
        found.stripped = found.stripped or stripped
    return found


def _read(path: Path) -> tuple[str, bool]:
    """(why the notebook cannot be graded, or "", whether its nbgrader metadata is lost)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return "is not text (not a notebook)", False
    except json.JSONDecodeError as exc:
        return f"is not valid JSON (line {exc.lineno}: {exc.msg})", False
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "is not a Jupyter notebook (no list of cells)", False
    major = nb.get("nbformat")
    if major != 4:
        return (
            f"is in notebook format {major}, which nbgrader cannot grade "
            "(open it in Jupyter and save it again)",
            False,
        )
    return "", not _has_metadata(nb)


def _functions_defined(source: str) -> set[str]:
    try:
        tree = parse_source(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def restore_metadata(nb: NotebookNode, released: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """The released notebook with each solution cell replaced by the student's cell that
    defines its function (matched by cell id first, then by the function's name). Returns the
    notebook and the solution cells for which nothing was found."""
    by_id = {c.get("id"): c for c in nb.cells if c.get("id")}
    defining: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for name in _functions_defined(cell.source):
                defining.setdefault(name, cell.source)
    rebuilt = copy.deepcopy(released)
    missing = []
    for cell in rebuilt.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        grade_id = meta.get("grade_id")
        same = by_id.get(cell.get("id"))
        if same is not None and same.cell_type == cell.cell_type:
            cell.source = same.source
        elif grade_id in defining:
            cell.source = defining[grade_id]
        else:
            missing.append(grade_id)
    return rebuilt, missing
