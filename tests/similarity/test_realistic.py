"""The realistic class (tests/similarity/realistic/): every disguise family ranks among the
top k pairs, the students who handed in the course text rank below every copy, identical
uncommon code is flagged whatever the threshold, and a ring of 15 is one group that scores as
a ring of 4 does. benchmarks/similarity_accuracy.py runs Dolos on the same cells."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.settings import SIMILARITY
from attention_course.similarity.compare import Similarities, compare_class
from tests.course import COURSE_ROOT
from tests.similarity import realistic
from tests.similarity.realistic import ASSIGNMENT


def ranking(found: Similarities, students: list[str], truth: set[tuple[str, str]]):
    """(precision at k, ROC AUC, pair -> rank): ties ranked against the copies."""
    pairs = list(itertools.combinations(sorted(students), 2))
    score = {p: found.score(*p) for p in pairs}
    ordered = sorted(pairs, key=lambda p: (-score[p], p in truth))
    rank = {p: i + 1 for i, p in enumerate(ordered)}
    k = len(truth)
    copies = [score[p] for p in pairs if p in truth]
    innocent = [score[p] for p in pairs if p not in truth]
    wins = sum((x > y) + 0.5 * (x == y) for x in copies for y in innocent)
    precision = sum(p in truth for p in ordered[:k]) / k
    return precision, wins / (len(copies) * len(innocent)), rank


def compared(tmp_path_factory, name: str, students: list[str], **options) -> Similarities:
    root = copy_course(tmp_path_factory.mktemp(name) / "course", COURSE_ROOT)
    realistic.write_class(root, students)
    return compare_class(ASSIGNMENT, root, **options)


@pytest.fixture(scope="module")
def issue_class(tmp_path_factory) -> Similarities:
    """The class with the copies of the issue's disguise families (no fresh cases)."""
    return compared(tmp_path_factory, "issue-class", realistic.student_ids(fresh=False))


def test_every_disguise_family_ranks_among_the_top_k(issue_class):
    truth = realistic.copy_pairs(fresh=False)
    precision, auc, rank = ranking(issue_class, realistic.student_ids(fresh=False), truth)
    k = len(truth)
    late = {
        f"{copier} ({family})": rank[tuple(sorted((copier, original)))]
        for copier, (original, family) in realistic.COPIES.items()
        if rank[tuple(sorted((copier, original)))] > k
    }
    assert late == {}, f"copies ranked below the top {k}: {late}"
    assert precision == 1.0 and auc == 1.0


def test_students_who_handed_in_the_course_text_rank_below_every_copy(issue_class):
    """The two who handed in the course text's code, and two who built on it."""
    lowest_copy = min(issue_class.score(a, b) for a, b in realistic.copy_pairs(fresh=False))
    text_users = (*realistic.COURSE_TEXT, "quentin", "kai")
    for a, b in itertools.combinations(text_users, 2):
        assert issue_class.score(a, b) < lowest_copy, (a, b)
        assert not any({p.a, p.b} == {a, b} for p in issue_class.pairs)


def test_their_code_is_shown_as_from_the_course_text(issue_class):
    lines = issue_class.known_lines[("tomas", "softmax")]
    cell = issue_class.cells[("tomas", "softmax")].splitlines()
    assert set(lines.values()) == {"the course text"}
    assert any("np.exp(x - np.max(x" in cell[n - 1] for n in lines)


def test_without_the_course_text_as_known_source_they_are_the_top_pair(tmp_path_factory):
    found = compared(
        tmp_path_factory, "no-base", realistic.student_ids(fresh=False), course_base=False
    )
    students = realistic.student_ids(fresh=False)
    top = max(itertools.combinations(students, 2), key=lambda p: found.score(*p))
    assert found.score(*realistic.COURSE_TEXT) == pytest.approx(found.score(*top))
    assert found.known == []


def test_identical_uncommon_code_is_flagged_whatever_the_threshold(tmp_path_factory):
    strict = replace(SIMILARITY, threshold=1.01)  # no score reaches it
    found = compared(
        tmp_path_factory, "strict", realistic.student_ids(fresh=False), settings=strict
    )
    flagged = {(p.a, p.b): p for p in found.pairs}
    assert ("dmitri", "paolo") in flagged  # renamed and reformatted: the same code
    pair = flagged[("dmitri", "paolo")]
    assert pair.match("softmax").identical and "identical" in pair.why[0]
    # the natural attention that many wrote alike is identical too, but common: not flagged
    assert ("aiko", "milan") not in flagged
    assert found.scores is not None


def test_with_the_fresh_cases_precision_and_auc_stay_high(tmp_path_factory):
    """The eleven copies written after the scorer (benchmarks/similarity_accuracy.py prints
    their ranks). Measured when they were added: precision at k 0.929, AUC 0.9994; these
    floors catch a regression, they are not the goal."""
    students = realistic.student_ids()
    found = compared(tmp_path_factory, "fresh", students)
    precision, auc, _ = ranking(found, students, realistic.copy_pairs())
    assert precision >= 0.9 and auc >= 0.995, (precision, auc)


@pytest.fixture(scope="module")
def rings(tmp_path_factory) -> dict[int, tuple[Similarities, list[str]]]:
    """The class without its ring, plus a ring of 4 and, apart, of 15."""
    others = [s for s in realistic.independent() if s not in realistic.RING]
    found = {}
    for size in (4, 15):
        root = copy_course(tmp_path_factory.mktemp(f"ring-{size}") / "course", COURSE_ROOT)
        realistic.write_class(root, others)
        members = realistic.ring(size, seed=size)
        realistic.write_cells(root, members)
        found[size] = (compare_class(ASSIGNMENT, root), sorted(members))
    return found


def test_a_ring_of_15_is_one_group(rings):
    found, members = rings[15]
    (group,) = [g for g in found.groups if set(g.members) & set(members)]
    assert list(group.members) == members
    reported = {(p.a, p.b) for p in found.pairs}
    inside = set(itertools.combinations(members, 2))
    assert inside <= reported and len(inside) == 105
    assert all(p.group == found.groups.index(group) + 1 for p in found.pairs if p.a in members)


def test_a_larger_ring_does_not_hide_itself(rings):
    lowest = {}
    for size, (found, members) in rings.items():
        lowest[size] = min(found.score(a, b) for a, b in itertools.combinations(members, 2))
    assert lowest[15] >= lowest[4] - 0.02, lowest
    assert lowest[15] >= SIMILARITY.threshold


def test_identical_one_line_functions_are_no_evidence(issue_class):
    """Many wrote create_qkv as the same one line (or three): identical, but common, so never
    flagged nor scored as a copy on its own."""
    from attention_course.similarity.normalise import normalise

    cells = {
        s: normalise(issue_class.cells[(s, "create_qkv")], "create_qkv").labels
        for s in realistic.independent()
        if (s, "create_qkv") in issue_class.cells
    }
    alike = [(a, b) for a, b in itertools.combinations(sorted(cells), 2) if cells[a] == cells[b]]
    assert len(alike) > 100  # the one-liners and three-liners many independent students wrote
    index = issue_class.scores.index()
    create_qkv = next(f for f in issue_class.scores.functions if f.function == "create_qkv")
    for a, b in alike:
        assert create_qkv.containment[index[a], index[b]] < SIMILARITY.threshold, (a, b)
    reported = {(p.a, p.b): p for p in issue_class.pairs}
    assert not any(
        reported[pair].match("create_qkv").identical for pair in alike if pair in reported
    )
