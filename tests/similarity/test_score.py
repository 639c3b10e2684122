"""Pair scores: shared code weighed by rarity over all functions; containment that padding
cannot lower; students who hand in the same code count once, so a ring does not hide itself."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from attention_course.settings import SIMILARITY
from attention_course.similarity.score import components, find_units, score_class, weights

F, G = "softmax", "scaled_dot_product_attention"


def own(student: int, n: int = 20, base: int = 0) -> set[int]:
    """Fingerprints nobody else holds."""
    return {base + 1000 * (student + 1) + i for i in range(n)}


def pair(scores, a: str, b: str) -> tuple[float, float, float]:
    i, j = scores.index()[a], scores.index()[b]
    return (
        float(scores.score[i, j]),
        float(scores.containment[i, j]),
        float(scores.similarity[i, j]),
    )


def test_two_identical_solutions_nobody_else_wrote_score_one():
    copied = set(range(100, 130))
    prints = {F: {"a": copied, "b": copied} | {f"s{i}": own(i) for i in range(20)}}
    scores = score_class(sorted(prints[F]), prints, {})
    assert pair(scores, "a", "b") == pytest.approx((1.0, 1.0, 1.0))
    assert max(pair(scores, "a", f"s{i}")[0] for i in range(20)) == 0.0


def test_code_the_whole_class_wrote_alike_scores_low():
    natural = set(range(100, 120))  # 30 students write the same, each with their own rest
    prints = {F: {f"s{i}": natural | own(i) for i in range(30)}}
    scores = score_class(sorted(prints[F]), prints, {})
    top = max(pair(scores, a, b)[0] for a, b in itertools.combinations(sorted(prints[F]), 2))
    assert top < 0.2


def test_padding_a_copy_does_not_lower_its_containment():
    original = set(range(100, 130))
    padded = original | set(range(5000, 5090))  # three times the code of one's own added
    prints = {F: {"a": original, "b": padded} | {f"s{i}": own(i) for i in range(20)}}
    score, containment, similarity = pair(score_class(sorted(prints[F]), prints, {}), "a", "b")
    assert containment == pytest.approx(1.0)
    assert similarity == pytest.approx(0.25)  # 30 of the 120 either holds
    assert score == pytest.approx((1.0 + 0.25) / 2)


def test_the_instructors_solution_counts_as_common():
    shared = set(range(100, 120))
    prints = {F: {"a": shared | own(1), "b": shared | own(2), "c": own(3), "d": own(4)}}
    plain, _ = weights(prints[F], set())
    given, _ = weights(prints[F], shared)
    # shared by two of four units: log(T / 2) / log(T / 2) = 1; as the solution, 2 + c units
    total = 4 + SIMILARITY.common_weight + 1
    assert plain[100] == pytest.approx(1.0)
    expected = math.log(total / (2 + SIMILARITY.common_weight)) / math.log(total / 2)
    assert given[100] == pytest.approx(expected)
    assert all(given[h] < plain[h] for h in shared)


def test_short_code_needs_more_than_one_match():
    prints = {F: {"a": {1, 2}, "b": {1, 2}} | {f"s{i}": own(i) for i in range(10)}}
    score, containment, _ = pair(score_class(sorted(prints[F]), prints, {}), "a", "b")
    assert containment == pytest.approx(2 / SIMILARITY.min_pair_fingerprints)
    assert score < SIMILARITY.threshold


def test_a_pair_is_scored_over_all_its_functions():
    """Copied in one function of two, their own in the other: half the pair's code."""
    copied = set(range(100, 130))
    prints = {
        F: {"a": copied, "b": copied} | {f"s{i}": own(i) for i in range(20)},
        G: {"a": own(50, n=30, base=7), "b": own(51, n=30, base=7)}
        | {f"s{i}": own(i, base=7) for i in range(20)},
    }
    scores = score_class(sorted(prints[F]), prints, {})
    assert pair(scores, "a", "b")[1] == pytest.approx(0.5)
    by_function = {fs.function: fs for fs in scores.functions}
    i, j = scores.index()["a"], scores.index()["b"]
    assert by_function[F].containment[i, j] == pytest.approx(1.0)
    assert by_function[G].containment[i, j] == 0.0


@pytest.mark.parametrize("size", [2, 4, 9, 15, 30])
def test_a_ring_of_any_size_scores_as_a_pair_does(size):
    """Every member hands in the same rare code: the ring is one unit of the class, so its code
    stays rare however many share it."""
    ring = set(range(100, 130))
    prints = {
        F: {f"r{i}": ring for i in range(size)} | {f"s{i}": own(i) for i in range(40)},
    }
    scores = score_class(sorted(prints[F]), prints, {})
    inside = [pair(scores, f"r{i}", f"r{j}")[0] for i, j in itertools.combinations(range(size), 2)]
    assert min(inside) == pytest.approx(1.0)
    assert [sorted(u) for u in scores.units] == [sorted(f"r{i}" for i in range(size))]


def test_without_units_a_large_ring_would_hide_itself():
    """What the units prevent: the same ring of 30 weighed student by student."""
    ring = set(range(100, 130))
    prints = {F: {f"r{i}": ring for i in range(30)} | {f"s{i}": own(i) for i in range(40)}}
    held, _ = weights(prints[F], set(), units=[])
    assert held[100] < 0.3
    counted_once, _ = weights(prints[F], set(), units=[[f"r{i}" for i in range(30)]])
    assert counted_once[100] == pytest.approx(1.0)
    student_by_student = replace(SIMILARITY, unit_share=2.0, unit_rounds=0)  # no units
    scores = score_class(sorted(prints[F]), prints, {}, student_by_student)
    assert pair(scores, "r0", "r1")[0] < 0.7
    assert pair(score_class(sorted(prints[F]), prints, {}), "r0", "r1")[0] == pytest.approx(1.0)


def test_independent_students_who_share_a_function_are_not_one_unit():
    """The natural code of one function, their own in the others: not near-identical."""
    natural = set(range(100, 120))
    prints = {
        F: {f"s{i}": natural for i in range(10)},
        G: {f"s{i}": own(i) for i in range(10)},
    }
    assert find_units(sorted(prints[F]), prints) == []


def test_students_joined_by_a_reported_pair_count_once_at_the_second_scoring():
    """A ring whose members each disguised their copy a little: not near-identical, but
    reported pairs at the first scoring, so one unit at the second."""
    core = set(range(100, 124))
    prints = {F: {f"r{i}": core | own(i, n=6, base=500) for i in range(12)}}
    prints[F] |= {f"s{i}": own(i, n=30) for i in range(30)}
    scores = score_class(sorted(prints[F]), prints, {})
    assert any(len(u) == 12 for u in scores.units)
    inside = [pair(scores, f"r{i}", f"r{j}")[0] for i, j in itertools.combinations(range(12), 2)]
    assert min(inside) >= 0.7


def test_components_join_linked_students():
    found = components(list("abcxyz"), [("a", "b"), ("b", "c"), ("x", "y")])
    assert found == [["a", "b", "c"], ["x", "y"]]


def test_scores_are_symmetric_and_zero_on_the_diagonal():
    prints = {F: {f"s{i}": own(i) | {1, 2, 3, 4, 5, 6, 7, 8} for i in range(6)}}
    scores = score_class(sorted(prints[F]), prints, {})
    for m in (scores.score, scores.containment, scores.similarity):
        assert np.allclose(m, m.T) and not np.any(np.diag(m))


def test_a_chain_of_pairs_is_no_ring():
    """a like b, b like c, c like d, but a unlike c and d: no group of three (complete
    linkage); b, c, d, e all alike pairwise: one ring, whatever order the pairs come in."""
    from attention_course.similarity.score import rings

    def matrix(names, alike):
        score = np.zeros((len(names), len(names)))
        for (x, y), value in alike.items():
            i, j = names.index(x), names.index(y)
            score[i, j] = score[j, i] = value
        return score

    chain = list("abcd")
    found = rings(
        chain, [], matrix(chain, {("a", "b"): 0.9, ("b", "c"): 0.8, ("c", "d"): 0.7}), 0.5
    )
    assert all(len(group) == 2 for group in found), found
    names = list("bcdexy")
    alike = {pair: 0.6 + 0.05 * k for k, pair in enumerate(itertools.combinations("bcde", 2))}
    alike[("x", "y")] = 0.55
    assert rings(names, [], matrix(names, alike), 0.5) == [["b", "c", "d", "e"], ["x", "y"]]
    # a near-identical group is a ring from the start, even with nothing reported
    assert rings(names, [["b", "x"]], np.zeros((6, 6)), 0.5) == [["b", "x"]]
