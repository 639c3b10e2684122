"""Fingerprints of a token sequence: hashed k-grams selected by winnowing.

Winnowing is the algorithm of Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for
document fingerprinting", SIGMOD 2003 (the one MOSS uses): of the hashes of every k tokens in a
row, each window of `window` consecutive hashes contributes its smallest (the rightmost on a
tie). Any match of at least `k + window - 1` tokens shares a fingerprint; none shorter than `k`
does. It is written here rather than taken from copydetect, which winnows characters of a file
filtered by Pygments (with Python's per-process salted `hash`): here the tokens come from the
syntax tree (normalise.py), and the hashes must be the same in every run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

SEP = "\x1f"


def kgram_hashes(labels: Sequence[str], k: int) -> list[int]:
    """The 64-bit hash of every run of `k` labels (one hash of all of them when there are
    fewer)."""
    if not labels:
        return []
    runs = [labels] if len(labels) < k else [labels[i : i + k] for i in range(len(labels) - k + 1)]
    return [
        int.from_bytes(hashlib.blake2b(SEP.join(r).encode(), digest_size=8).digest(), "big")
        for r in runs
    ]


def winnow(hashes: Sequence[int], window: int) -> dict[int, list[int]]:
    """hash -> the k-gram positions where winnowing selected it."""
    selected: dict[int, list[int]] = {}
    if len(hashes) <= window:
        if hashes:
            i = min(range(len(hashes)), key=lambda j: (hashes[j], -j))
            selected[hashes[i]] = [i]
        return selected
    last = -1
    for start in range(len(hashes) - window + 1):
        best = start
        for j in range(start, start + window):
            if hashes[j] <= hashes[best]:
                best = j
        if best != last:
            selected.setdefault(hashes[best], []).append(best)
            last = best
    return selected
