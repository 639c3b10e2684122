"""A class of independent correct implementations and disguised copies of some of them: every
copy is reported, no independent pair is; unreadable notebooks and cells are named."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from attention_course.settings import SIMILARITY
from attention_course.similarity.compare import compare_class
from tests.similarity.classes import (
    ASSIGNMENT,
    build_class,
    copy_course,
    variant,
    write_student,
)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("similar-class") / "course")
    origin = build_class(root)
    broken = root / "submitted" / "broken" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text('{"cells": [ not JSON')
    write_student(root, "huge", {"softmax": "x = 1\n" * SIMILARITY.cell_chars})
    write_student(root, "syntax", {"softmax": "def softmax(z, axis=-1):\n    return (z\n"})
    write_student(root, "deep", {"softmax": "x = " + "1 + " * 20_000 + "1\n"})
    weird = write_student(root, "weird", {})
    nb = json.loads(weird.read_text())
    nb["cells"] += [7, {"cell_type": "code", "source": 42}, {"cell_type": "code"}]
    weird.write_text(json.dumps(nb))
    outside = tmp_path_factory.mktemp("elsewhere")
    (root / "submitted" / "linked").mkdir()
    (root / "submitted" / "linked" / ASSIGNMENT).symlink_to(outside)
    return root, origin, compare_class(ASSIGNMENT, root)


def test_every_disguised_copy_is_reported_and_no_independent_pair(compared):
    _, origin, found = compared
    reported = {(f.function, p.a, p.b): p.score for f in found.functions for p in f.pairs}
    copies, independent = [], []
    for function in {f for _, f in origin}:
        students = sorted(s for s, f in origin if f == function)
        for a, b in itertools.combinations(students, 2):
            same = origin[(a, function)] == origin[(b, function)]
            (copies if same else independent).append((function, a, b))
    assert len(copies) == 4 and len(independent) > 20
    missed = [c for c in copies if c not in reported]
    assert missed == [], f"disguised copies not reported: {missed}"
    wrongly = {i: reported[i] for i in independent if i in reported}
    assert wrongly == {}, f"independent implementations reported: {wrongly}"
    assert all(score >= SIMILARITY.threshold for score in reported.values())


def test_the_matching_lines_are_named_on_both_sides(compared):
    _, _, found = compared
    (pair,) = [p for f in found.functions for p in f.pairs if p.a == "copier-reorder"]
    cell_a = found.cells[(pair.a, pair.function)].splitlines()
    # every line of the reordered copy's body matches; its comment-only lines do not exist
    assert set(range(2, len(cell_a) + 1)) <= set(pair.lines_a)
    assert pair.lines_b and max(pair.lines_b) <= len(
        found.cells[(pair.b, pair.function)].split("\n")
    )


def test_unreadable_notebooks_and_cells_are_named_not_compared(compared):
    _, _, found = compared
    assert "not valid notebook JSON" in found.unreadable["broken"]
    assert "is a symbolic link, not a folder" in found.unreadable["linked"]
    skipped = {(s, f): why for s, f, why in found.skipped}
    assert "more than the 100000 compared" in skipped[("huge", "softmax")]
    assert "not valid Python (line 2)" in skipped[("syntax", "softmax")]
    assert "nested too deeply" in skipped[("deep", "softmax")]
    assert "weird" in found.students and "weird" not in found.unreadable
    # the stub (what "weird" hands in) is compared with nobody
    assert all("weird" not in (p.a, p.b) for f in found.functions for p in f.pairs)


def test_the_command_writes_the_report_and_names_the_broken_notebook(compared, tmp_path):
    root, _, _ = compared
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "similarity", ASSIGNMENT]
        + ["--course", str(root), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "not compared: broken: attention_basics.ipynb: not valid notebook JSON" in proc.stdout
    assert "copier-reorder  indep-2" in proc.stdout
    n = sum((p / ASSIGNMENT).is_dir() for p in (root / "submitted").iterdir())
    assert f"{n}/{n} weird: read" in proc.stderr  # the progress, one line per submission
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SIMILARITY.files)
    assert "copier-rename" in (tmp_path / "similarity.csv").read_text()


def test_the_second_assignment_is_compared_too(compared):
    root, _, _ = compared
    assignment = "masks_and_heads"
    mine = variant("split_heads__list_stack")
    disguised = mine.replace("d_k", "width").replace("d_model", "cols").replace("# ", "# note: ")
    write_student(root, "mh-a", {"split_heads": mine}, assignment)
    write_student(root, "mh-b", {"split_heads": disguised}, assignment)
    write_student(root, "mh-c", {}, assignment)  # the stub
    found = compare_class(assignment, root)
    reported = [(f.function, p.a, p.b) for f in found.functions for p in f.pairs]
    assert reported == [("split_heads", "mh-a", "mh-b")]
