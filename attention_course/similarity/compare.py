"""A class's similarity: every pair of submissions, function by function, after what the
release gave them and what copying disguises are taken away."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from attention_course.course import Course
from attention_course.settings import SIMILARITY, Similarity
from attention_course.similarity.extract import Handed, given, read_handed, submitted
from attention_course.similarity.fingerprint import kgram_hashes, winnow
from attention_course.similarity.normalise import CannotCompare, Tokens, normalise
from attention_course.similarity.score import Scored, clusters, score_pairs


@dataclass(frozen=True)
class Doc:
    """One student's solution cell of one function, normalised and fingerprinted."""

    source: str
    tokens: Tokens
    prints: dict[int, list[int]]  # fingerprint -> k-gram positions


@dataclass(frozen=True)
class Pair:
    function: str
    a: str
    b: str
    score: float
    lines_a: tuple[int, ...]  # lines of a's cell that match b's (1-based)
    lines_b: tuple[int, ...]


@dataclass
class FunctionResult:
    function: str
    compared: int  # students whose cell was compared (not the stub)
    pairs: list[Pair]
    clusters: list[list[str]]
    highest_below: float  # the highest score of a pair not reported


@dataclass
class Similarities:
    assignment: str
    students: list[str]
    threshold: float
    functions: list[FunctionResult] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # student -> why
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # student, function, why
    cells: dict[tuple[str, str], str] = field(default_factory=dict)  # (student, f) -> source


def _fingerprints(tokens: Tokens, settings: Similarity) -> dict[int, list[int]]:
    return winnow(kgram_hashes(tokens.labels, settings.kgram), settings.window)


def _all_kgrams(source: str, function: str, settings: Similarity) -> set[int]:
    try:
        return set(kgram_hashes(normalise(source, function).labels, settings.kgram))
    except CannotCompare:
        return set()


def _lines(doc: Doc, shared: set[int], k: int) -> tuple[int, ...]:
    lines: set[int] = set()
    for h in shared:
        for pos in doc.prints[h]:
            lines.update(doc.tokens.lines[pos : pos + k])
    return tuple(sorted(lines))


def compare_class(
    assignment: str,
    root: Path,
    progress: Callable[[str, str], None] | None = None,
    settings: Similarity = SIMILARITY,
) -> Similarities:
    """Compare every pair of submissions of `assignment` in the course at `root`.
    `progress(student, what)` is called once per submission read."""
    course = Course.load(root)
    gift = given(course, assignment)
    students = submitted(course.root, assignment)
    result = Similarities(assignment, students, settings.threshold)
    boiler = {
        f: _all_kgrams(gift.stubs.get(f, ""), f, settings)
        | set().union(*(_all_kgrams(c, "", settings) for c in gift.checks))
        for f in gift.functions
    }
    common = {
        f: set(_fingerprints(normalise(src, f), settings)) if src else set()
        for f, src in gift.solutions.items()
    }
    stub_tokens = {f: normalise(src, f).labels for f, src in gift.stubs.items() if _parses(src, f)}
    docs: dict[str, dict[str, Doc]] = {f: {} for f in gift.functions}
    seen: dict[tuple[str, str], tuple[Tokens, dict[int, list[int]]] | str] = {}
    for student in students:
        handed: Handed = read_handed(course.root, assignment, student, gift.functions)
        if handed.reason:
            result.unreadable[student] = handed.reason
        for f, why in handed.skipped.items():
            result.skipped.append((student, f, why))
        for f, source in handed.cells.items():
            key = (f, source)
            if key not in seen:
                try:
                    tokens = normalise(source, f)
                    prints = _fingerprints(tokens, settings)
                    seen[key] = (tokens, {h: p for h, p in prints.items() if h not in boiler[f]})
                except CannotCompare as exc:
                    seen[key] = str(exc)
            found = seen[key]
            if isinstance(found, str):
                result.skipped.append((student, f, found))
            elif found[0].labels != stub_tokens.get(f) and found[1]:
                docs[f][student] = Doc(source, found[0], found[1])
                result.cells[(student, f)] = source
        if progress:
            progress(student, "unreadable" if handed.reason else "read")
    for f in gift.functions:
        held = {s: set(d.prints) for s, d in docs[f].items()}
        scored, below = score_pairs(held, common.get(f, set()), settings)
        pairs = [_pair(f, p, docs[f], settings.kgram) for p in scored]
        result.functions.append(FunctionResult(f, len(held), pairs, clusters(scored), below))
    return result


def _parses(source: str, function: str) -> bool:
    try:
        normalise(source, function)
    except CannotCompare:
        return False
    return True


def _pair(function: str, p: Scored, docs: dict[str, Doc], k: int) -> Pair:
    a, b = docs[p.a], docs[p.b]
    shared = set(a.prints) & set(b.prints)
    return Pair(function, p.a, p.b, p.score, _lines(a, shared, k), _lines(b, shared, k))
