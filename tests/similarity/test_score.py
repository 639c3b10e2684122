"""Scores weigh what a pair shares by how rare it is in the class."""

from __future__ import annotations

import math

from attention_course.settings import SIMILARITY
from attention_course.similarity.score import clusters, score_pairs, weights

UNIQUE = set(range(100, 120))  # 20 fingerprints


def test_two_identical_solutions_nobody_else_wrote_score_one():
    prints = {"a": UNIQUE, "b": UNIQUE} | {f"s{i}": {1000 + i} for i in range(20)}
    pairs, below = score_pairs(prints, set())
    assert [(p.a, p.b) for p in pairs] == [("a", "b")]
    assert abs(pairs[0].score - 1.0) < 1e-6 and below == 0.0


def test_the_same_code_the_whole_class_wrote_is_not_reported():
    prints = {f"s{i}": UNIQUE for i in range(30)}
    pairs, below = score_pairs(prints, set())
    assert pairs == [] and below < 0.05


def test_the_instructors_solution_counts_as_common():
    prints = {"a": UNIQUE, "b": UNIQUE, "c": {1}, "d": {2}}
    plain, given = weights(prints, set()), weights(prints, UNIQUE)
    assert all(given[h] < plain[h] for h in UNIQUE)
    # shared by two: log((N + c + 1) / 2) / log((N + c + 1) / 2); given, d = 2 + c
    total = 4 + SIMILARITY.common_weight + 1
    assert abs(plain[100] - 1.0) < 1e-9
    expected = math.log(total / (2 + SIMILARITY.common_weight)) / math.log(total / 2)
    assert abs(given[100] - expected) < 1e-9


def test_short_solutions_need_more_than_one_match():
    prints = {"a": {1, 2}, "b": {1, 2}} | {f"s{i}": {100 + i} for i in range(10)}
    pairs, below = score_pairs(prints, set())
    assert pairs == [] and abs(below - 2 / SIMILARITY.min_fingerprints) < 1e-6


def test_clusters_join_pairs_that_share_a_student():
    from attention_course.similarity.score import Scored

    found = clusters([Scored("a", "b", 1), Scored("b", "c", 1), Scored("x", "y", 1)])
    assert found == [["a", "b", "c"], ["x", "y"]]
