"""Comparing a class read from its notebooks: per pair of students, every function both handed
in with its matching lines and how many students share them; unreadable notebooks and cells
named, not compared; the command's output and files; the second assignment too."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.settings import SIMILARITY
from attention_course.similarity.compare import compare_class
from tests.course import COURSE_ROOT
from tests.similarity import realistic
from tests.similarity.realistic import ASSIGNMENT, FUNCTIONS

CATALOGUE = COURSE_ROOT / "tests" / "catalogue" / "correct"
# Copies (sami of lena: wrapped helpers; xavier of victor: padding; the ring), the two
# course-text students, and others who wrote their own (aiko to tariq: the same natural
# causal mask as lena's).
STUDENTS = ["lena", "sami", "victor", "xavier", "sven", "jonas", "kemal", "leila"]
STUDENTS += ["tomas", "ugne", "amara", "bilal", "chen", "kofi", "priya"]
STUDENTS += ["aiko", "dev", "emeka", "lucia", "mateo", "milan", "tariq"]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("similar-class") / "course", COURSE_ROOT)
    realistic.write_class(root, STUDENTS)
    broken = root / "submitted" / "broken" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text('{"cells": [ not JSON')
    realistic.write_cells(root, {"huge": {"softmax": "x = 1\n" * SIMILARITY.cell_chars}})
    realistic.write_cells(
        root, {"syntax": {"softmax": "def softmax(z, axis=-1):\n    return (z\n"}}
    )
    realistic.write_cells(root, {"deep": {"softmax": "x = " + "1 + " * 20_000 + "1\n"}})
    realistic.write_cells(root, {"weird": {}})
    weird = root / "submitted" / "weird" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = json.loads(weird.read_text())
    nb["cells"] += [7, {"cell_type": "code", "source": 42}, {"cell_type": "code"}]
    weird.write_text(json.dumps(nb))
    outside = tmp_path_factory.mktemp("elsewhere")
    (root / "submitted" / "linked").mkdir()
    (root / "submitted" / "linked" / ASSIGNMENT).symlink_to(outside)
    return root, compare_class(ASSIGNMENT, root)


def test_the_copies_are_reported_as_pairs_and_the_ring_as_a_group(compared):
    _, found = compared
    reported = {(p.a, p.b) for p in found.pairs}
    assert {("lena", "sami"), ("victor", "xavier")} <= reported
    ring = sorted(realistic.RING)
    assert ring in [list(g.members) for g in found.groups]
    assert ("tomas", "ugne") not in reported
    scores = [p.score for p in found.pairs]
    assert scores == sorted(scores, reverse=True)


def test_a_pair_lists_every_function_with_its_matching_lines(compared):
    _, found = compared
    (pair,) = [p for p in found.pairs if (p.a, p.b) == ("victor", "xavier")]
    assert [m.function for m in pair.matches] == list(FUNCTIONS)
    softmax = pair.match("softmax")
    assert softmax is not None and softmax.identical
    cell = found.cells[("xavier", "softmax")].splitlines()
    # the padding (asserts, an unused flag, a dead debug print, a helper nobody calls) is
    # never a matching line; the copied code is
    padding = [i for i, line in enumerate(cell, 1) if line.strip().startswith(("assert", "debug"))]
    assert padding and not set(padding) & set(softmax.lines_b)
    copied = [i for i, line in enumerate(cell, 1) if "np.exp(z - max_vals)" in line]
    assert copied and set(copied) <= set(softmax.lines_b)
    # each matching line says how many students share its code: here, the two of them
    assert softmax.shared_b[copied[0]] == 2
    assert set(softmax.shared_a) == set(softmax.lines_a)


def test_common_code_is_matched_but_marked_common(compared):
    _, found = compared
    (pair,) = [p for p in found.pairs if (p.a, p.b) == ("lena", "sami")]
    mask = pair.match("causal_mask")
    assert mask is not None and mask.lines_a  # np.triu of ones, k=1: what many write
    assert set(mask.common_a) == set(mask.lines_a)
    assert min(mask.shared_a.values()) > 2
    assert mask.containment < SIMILARITY.threshold


def test_unreadable_notebooks_and_cells_are_named_not_compared(compared):
    _, found = compared
    assert "not valid notebook JSON" in found.unreadable["broken"]
    assert "is a symbolic link, not a folder" in found.unreadable["linked"]
    skipped = {(s, f): why for s, f, why in found.skipped}
    assert "more than the 100000 compared" in skipped[("huge", "softmax")]
    assert "not valid Python (line 2)" in skipped[("syntax", "softmax")]
    assert "nested too deeply" in skipped[("deep", "softmax")]
    assert "weird" in found.students and "weird" not in found.unreadable
    # the stub (what "weird" hands in) is compared with nobody
    assert all("weird" not in (p.a, p.b) for p in found.pairs)
    assert found.score("weird", "amara") == 0.0


def test_the_command_writes_the_report_and_names_the_broken_notebook(compared, tmp_path):
    root, _ = compared
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "similarity", ASSIGNMENT]
        + ["--course", str(root), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "not compared: broken: attention_basics.ipynb: not valid notebook JSON" in proc.stdout
    assert "  victor  xavier  identical: softmax" in proc.stdout
    assert "group 1: 4 students: jonas, kemal, leila, sven" in proc.stdout
    n = sum((p / ASSIGNMENT).is_dir() for p in (root / "submitted").iterdir())
    progress = proc.stderr.strip().splitlines()  # one line per submission
    assert len(progress) == n and progress[-1].strip().startswith(f"{n}/{n} ")
    assert any(line.endswith("weird: read") for line in progress)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SIMILARITY.files)
    assert "xavier" in (tmp_path / "similarity.csv").read_text()


def test_the_second_assignment_is_compared_too(compared):
    root, _ = compared
    assignment = "masks_and_heads"
    mine = (CATALOGUE / "split_heads__list_stack.py").read_text()
    disguised = mine.replace("d_k", "width").replace("d_model", "cols").replace("# ", "# note: ")
    cells = {"mh-a": {"split_heads": mine}, "mh-b": {"split_heads": disguised}, "mh-c": {}}
    realistic.write_cells(root, cells, assignment)
    found = compare_class(assignment, root)
    assert [(p.a, p.b) for p in found.pairs] == [("mh-a", "mh-b")]
    match = found.pairs[0].match("split_heads")
    assert match is not None and match.identical


def test_normalising_in_several_processes_gives_the_same_result(compared):
    """A large class is normalised in worker processes: the same pairs, scores and lines."""
    from dataclasses import replace

    root, serial = compared
    parallel = compare_class(ASSIGNMENT, root, settings=replace(SIMILARITY, parallel_cells=1))
    alone = compare_class(ASSIGNMENT, root, settings=replace(SIMILARITY, workers=1))
    for other in (parallel, alone):
        assert other.pairs == serial.pairs and other.groups == serial.groups
        assert other.skipped == serial.skipped and other.known_lines == serial.known_lines
