"""release/ is generated from source/ by nbgrader, committed fresh, and holds nothing secret."""

from __future__ import annotations

import ast
import json
import re

import pytest

from attention_course.classgrade.nbgrader_api import copy_course, release, source_assignments
from tests.course import COURSE_ROOT, REFERENCE_FILE

RELEASED = sorted(source_assignments(COURSE_ROOT))


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("release"), COURSE_ROOT)
    for path in (root / "release").iterdir():
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
    release(root=root)
    return root


def _files(root):
    base = root / "release"
    return {p.relative_to(base).as_posix(): p for p in base.rglob("*") if p.is_file()}


def test_committed_release_is_fresh(regenerated):
    """Fails when source/ changed and `attention-course release` was not run and committed."""
    fresh, committed = _files(regenerated), _files(COURSE_ROOT)
    assert sorted(committed) == sorted(fresh), "run `attention-course release` and commit"
    for name, path in fresh.items():
        if name.endswith(".ipynb"):
            same = json.loads(path.read_text()) == json.loads(committed[name].read_text())
        else:
            same = path.read_bytes() == committed[name].read_bytes()
        assert same, f"release/{name} is stale: run `attention-course release` and commit"


def _solution_lines(assignment):
    """Substantial lines found only between the solution markers of the source notebook."""
    text = (COURSE_ROOT / "source" / assignment / f"{assignment}.ipynb").read_text()
    sources = ["".join(cell["source"]) for cell in json.loads(text)["cells"]]
    solution = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
    outside = "\n".join(solution.sub("", src) for src in sources)
    lines = set()
    for src in sources:
        for block in solution.findall(src):
            for line in block.splitlines():
                line = line.strip()
                if len(line) > 25 and not line.startswith("#") and line not in outside:
                    lines.add(line)
    return lines


@pytest.mark.parametrize("assignment", RELEASED)
def test_release_holds_no_solution_hidden_test_or_grader(assignment):
    text = (COURSE_ROOT / "release" / assignment / f"{assignment}.ipynb").read_text()
    cells = "".join("".join(c["source"]) for c in json.loads(text)["cells"])
    for secret in (
        "BEGIN SOLUTION",
        "END SOLUTION",
        "BEGIN HIDDEN TESTS",
        "grader_tests",
        "# grader:",
        "reference",
    ):
        assert secret not in cells, secret
    for line in _solution_lines(assignment):
        assert line not in cells, f"solution line released: {line!r}"


def test_release_holds_no_reference_code():
    """No reference function body (or a copy of reference.py) is in release/."""
    reference = REFERENCE_FILE.read_text()
    tree = ast.parse(reference)
    bodies = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            body = [n for n in node.body if not isinstance(n, ast.Expr)]  # drop docstrings
            bodies.append(_squash("\n".join(ast.get_source_segment(reference, n) for n in body)))
    assert len(bodies) >= 10
    for path in (COURSE_ROOT / "release").rglob("*"):
        if path.is_file():
            text = _squash(path.read_text(errors="replace"))
            assert not [b for b in bodies if b in text], path
    assert not list((COURSE_ROOT / "release").rglob("*.py"))


def _squash(text: str) -> str:
    """Code without whitespace or comments, so re-indented copies are found too."""
    text = text.replace("\\n", "\n").replace('\\"', '"')
    text = re.sub(r"#[^\n]*", "", text)
    return re.sub(r"\s+", "", text)


def test_second_release_holds_no_first_assignment_solution():
    text = (COURSE_ROOT / "release" / "masks_and_heads" / "masks_and_heads.ipynb").read_text()
    cells = "".join("".join(c["source"]) for c in json.loads(text)["cells"])
    for line in _solution_lines("attention_basics"):
        assert line not in cells, line
