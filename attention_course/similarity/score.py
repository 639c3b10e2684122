"""Pair scores weighed by how common the shared code is in the class, and clusters of pairs.

A fingerprint that d of the class's N solutions hold (the instructor's solution counting as
`common_weight` more) weighs idf = log((N + c + 1) / d), out of the most it can weigh, shared by
two students alone: log((N + c + 1) / 2) (inverse document frequency, as in information
retrieval). A pair's score is the weight of the fingerprints both hold over the number either
holds (at least `min_fingerprints`):

    score(A, B) = sum over h in A & B of idf(h) / idf_max  /  max(|A | B|, min_fingerprints)

so two identical solutions that nobody else wrote score 1, and two that the whole class wrote
alike score near 0: what they share is ordinary, not evidence.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from attention_course.settings import SIMILARITY, Similarity


@dataclass(frozen=True)
class Scored:
    a: str
    b: str
    score: float


def weights(
    prints: dict[str, set[int]], common: set[int], settings: Similarity = SIMILARITY
) -> dict[int, float]:
    """fingerprint -> its weight in [0, 1], for those at least two students hold."""
    n = len(prints)
    df = Counter(h for held in prints.values() for h in held)
    total = n + settings.common_weight + 1
    top = math.log(total / 2)
    out = {}
    for h, d in df.items():
        if d >= 2:
            count = d + (settings.common_weight if h in common else 0.0)
            out[h] = min(1.0, max(0.0, math.log(total / count) / top))
    return out


def score_pairs(
    prints: dict[str, set[int]], common: set[int], settings: Similarity = SIMILARITY
) -> tuple[list[Scored], float]:
    """Every pair of students at or above the threshold, most similar first, and the highest
    score below it (0 when there is none)."""
    students = sorted(s for s, held in prints.items() if held)
    if len(students) < 2:
        return [], 0.0
    subset = {s: prints[s] for s in students}
    w = weights(subset, common, settings)
    column = {h: i for i, h in enumerate(sorted(w))}
    held = np.zeros((len(students), max(1, len(column))), dtype=np.float32)
    for i, s in enumerate(students):
        cols = [column[h] for h in subset[s] if h in column]
        held[i, cols] = 1.0
    rel = np.zeros(held.shape[1], dtype=np.float32)
    for h, i in column.items():
        rel[i] = w[h]
    shared = (held * rel) @ held.T
    both = held @ held.T
    sizes = np.array([len(subset[s]) for s in students], dtype=np.float32)
    union = sizes[:, None] + sizes[None, :] - both
    scores = shared / np.maximum(union, settings.min_fingerprints)
    upper = np.triu(np.ones_like(scores, dtype=bool), k=1)
    hits = np.argwhere(upper & (scores >= settings.threshold))
    below = scores[upper & (scores < settings.threshold)]
    found = [Scored(students[i], students[j], float(scores[i, j])) for i, j in hits]
    found.sort(key=lambda p: (-p.score, p.a, p.b))
    return found, float(below.max()) if below.size else 0.0


def clusters(pairs: list[Scored]) -> list[list[str]]:
    """The groups of students joined by pairs (connected components), largest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[str, list[str]] = {}
    for x in parent:
        groups.setdefault(root(x), []).append(x)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))
