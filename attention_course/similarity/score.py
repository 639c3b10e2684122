"""Pair scores: what two students share, weighed by how rare it is, over all their functions.

Each student's solution cell of each function is a set of fingerprints (fingerprint.py), those
of the known sources (the release, the course text, `--base`) taken out. A fingerprint that d
of the class's independent units hold (the instructor's solution counting as `common_weight`
more units) weighs

    w(h) = clip(log(T / d) / log(T / 2), 0, 1),  T = units + common_weight + 1

(inverse document frequency, as in information retrieval): 1 when at most two units hold it,
near 0 when the whole class does. A *unit* is one student, or a group of
students whose submissions are near-identical (of all the fingerprints either holds, over all
their functions, both hold at least `unit_share`) or whose every pair is reported at the first
scoring (a ring: the scores are then computed again, `unit_rounds` times at most; a chain of
pairs is no ring): however many students hand in the same code, it is one piece of code, and
counts once. So a ring of
fifteen copies does not make its own code look common, while what fifteen students wrote
independently alike (their cells differ elsewhere) does.

For two students A and B, per function f and over all functions pooled (sums over functions):

    shared(A, B)  = sum of w(h) over h in A & B
    containment   = shared / max(min(W(A), W(B)), floor)     W(X) = sum of w(h) over h in X
    similarity    = shared / max(W(A) + W(B) - shared, floor)

Containment is what the smaller of the two shares: padding a copy with code of one's own
cannot lower it. Similarity is the symmetric share. The floor (`min_fingerprints` for one
function, `min_pair_fingerprints` for the pair) keeps short code, which independent students
write alike, from scoring high. A pair's score is their mean: a padded copy keeps its
containment, a long copy of a long solution scores high on both.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from attention_course.settings import SIMILARITY, Similarity


@dataclass
class FunctionScores:
    """One function's scores for every pair (square matrices over `Scores.students`)."""

    function: str
    containment: np.ndarray
    similarity: np.ndarray
    shared: np.ndarray  # the shared weight
    weights: dict[int, float]  # fingerprint -> its weight (those at least two students hold)
    holders: Counter[int]  # fingerprint -> how many students hold it


@dataclass
class Scores:
    students: list[str]
    functions: list[FunctionScores] = field(default_factory=list)
    score: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    containment: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    similarity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    units: list[list[str]] = field(default_factory=list)  # groups counted as one (2 or more)

    def index(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self.students)}


def _matrix(
    students: list[str], prints: dict[str, set[int]], columns: dict[int, int]
) -> np.ndarray:
    held = np.zeros((len(students), max(1, len(columns))), dtype=np.float32)
    for i, s in enumerate(students):
        cols = [columns[h] for h in prints.get(s, ()) if h in columns]
        held[i, cols] = 1.0
    return held


def find_units(
    students: list[str], prints: dict[str, dict[str, set[int]]], settings: Similarity = SIMILARITY
) -> list[list[str]]:
    """Groups of students whose submissions are near-identical over all their functions (of
    the fingerprints either holds, both hold at least `unit_share`; connected components of
    such pairs), 2 or more students each."""
    n = len(students)
    if n < 2:
        return []
    both = np.zeros((n, n), dtype=np.float32)
    union = np.zeros((n, n), dtype=np.float32)
    for held_by in prints.values():
        counts = Counter(h for held in held_by.values() for h in held)
        columns = {h: i for i, h in enumerate(sorted(h for h, c in counts.items() if c >= 2))}
        held = _matrix(students, held_by, columns)
        sizes = np.array([len(held_by.get(s, ())) for s in students], dtype=np.float32)
        shared = held @ held.T
        both += shared
        union += sizes[:, None] + sizes[None, :] - shared
    near = both >= settings.unit_share * np.maximum(union, settings.min_pair_fingerprints)
    np.fill_diagonal(near, False)
    return components(students, [(students[i], students[j]) for i, j in np.argwhere(near)])


def components(students: list[str], links: list[tuple[str, str]]) -> list[list[str]]:
    """The groups of students joined by links (connected components with 2 or more),
    largest first."""
    parent = {s: s for s in students}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in links:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for s in students:
        groups.setdefault(root(s), []).append(s)
    found = [sorted(g) for g in groups.values() if len(g) > 1]
    return sorted(found, key=lambda g: (-len(g), g))


def weights(
    prints: dict[str, set[int]],
    common: set[int],
    units: list[list[str]] = (),  # type: ignore[assignment]
    settings: Similarity = SIMILARITY,
) -> tuple[dict[int, float], Counter[int]]:
    """fingerprint -> its weight in [0, 1] (see the module's doc), and how many students
    hold it."""
    unit_of = {s: min(group) for group in units for s in group}
    holders: Counter[int] = Counter(h for held in prints.values() for h in held)
    owners: dict[int, set[str]] = {}
    for s, held in prints.items():
        for h in held:
            owners.setdefault(h, set()).add(unit_of.get(s, s))
    n_units = len({unit_of.get(s, s) for s, held in prints.items() if held})
    total = n_units + settings.common_weight + 1
    top = math.log(total / 2)
    out = {}
    for h, owned in owners.items():
        count = len(owned) + (settings.common_weight if h in common else 0.0)
        out[h] = min(1.0, max(0.0, math.log(total / max(count, 1.0)) / top)) if top > 0 else 1.0
    return out, holders


def score_class(
    students: list[str],
    prints: dict[str, dict[str, set[int]]],
    common: dict[str, set[int]],
    settings: Similarity = SIMILARITY,
) -> Scores:
    """Every pair's scores, per function and pooled. `prints`: function -> student -> the
    fingerprints of their cell (known sources taken out); `common`: function -> the
    instructor's solution's fingerprints."""
    near = find_units(students, prints, settings)
    units = near
    result = _scores(students, prints, common, units, settings)
    for _ in range(settings.unit_rounds):  # students in a reported pair are not independent
        merged = rings(students, near, result.score, settings.threshold)
        if merged == units:
            break
        units = merged
        result = _scores(students, prints, common, units, settings)
    return result


def rings(
    students: list[str], near: list[list[str]], score: np.ndarray, threshold: float
) -> list[list[str]]:
    """The near-identical groups, merged with one another and with students where every pair
    across them scores at least `threshold` (complete linkage, the highest pairs first): a
    ring is alike pair by pair, and a chain of pairs (a like b, b like c, a unlike c) is no
    ring, so one pair reported by chance does not join two groups."""
    index = {s: i for i, s in enumerate(students)}
    linked = score >= threshold
    for group in near:
        ids = [index[s] for s in group]
        linked[np.ix_(ids, ids)] = True
    owner = list(range(len(students)))
    members: dict[int, list[int]] = {i: [i] for i in range(len(students))}
    for group in near:
        ids = [index[s] for s in group]
        for i in ids[1:]:
            owner[i] = ids[0]
        members[ids[0]] = ids
        for i in ids[1:]:
            del members[i]
    pairs = np.argwhere(np.triu(score >= threshold, k=1))
    for i, j in sorted(pairs.tolist(), key=lambda ij: -float(score[ij[0], ij[1]])):
        a, b = owner[i], owner[j]
        if a == b or not linked[np.ix_(members[a], members[b])].all():
            continue
        members[a] += members.pop(b)
        for k in members[a]:
            owner[k] = a
    found = [sorted(students[i] for i in group) for group in members.values() if len(group) > 1]
    return sorted(found, key=lambda g: (-len(g), g))


def _scores(
    students: list[str],
    prints: dict[str, dict[str, set[int]]],
    common: dict[str, set[int]],
    units: list[list[str]],
    settings: Similarity,
) -> Scores:
    n = len(students)
    result = Scores(students, units=units)
    shared_all = np.zeros((n, n), dtype=np.float32)
    smaller_all = np.zeros((n, n), dtype=np.float32)
    union_all = np.zeros((n, n), dtype=np.float32)
    for function, held_by in prints.items():
        w, holders = weights(held_by, common.get(function, set()), units, settings)
        shared_columns = {
            h: i for i, h in enumerate(sorted(h for h, c in holders.items() if c >= 2))
        }
        held = _matrix(students, held_by, shared_columns)
        rel = np.zeros(held.shape[1], dtype=np.float32)
        for h, i in shared_columns.items():
            rel[i] = w[h]
        shared = (held * rel) @ held.T
        sizes = np.array(
            [sum(w[h] for h in held_by.get(s, ())) for s in students], dtype=np.float32
        )
        smaller = np.minimum(sizes[:, None], sizes[None, :])
        union = sizes[:, None] + sizes[None, :] - shared
        floor = settings.min_fingerprints
        result.functions.append(
            FunctionScores(
                function,
                shared / np.maximum(smaller, floor),
                shared / np.maximum(union, floor),
                shared,
                {h: w[h] for h in shared_columns},
                holders,
            )
        )
        shared_all += shared
        smaller_all += smaller
        union_all += union
    floor = settings.min_pair_fingerprints
    result.containment = np.minimum(1.0, shared_all / np.maximum(smaller_all, floor))
    result.similarity = np.minimum(1.0, shared_all / np.maximum(union_all, floor))
    result.score = (result.containment + result.similarity) / 2
    for m in (result.score, result.containment, result.similarity):
        np.fill_diagonal(m, 0.0)
    return result
