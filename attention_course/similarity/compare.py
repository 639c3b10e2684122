"""A class's similarity: every pair of students over all their functions, after what the
release and the known sources gave them and what copying disguises are taken away.

The result is per pair of students first (a score over all functions, why it is reported, each
function's match with its lines), then per function, and the groups of students joined by
reported pairs: a ring of any size is one group.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attention_course.course import Course
from attention_course.settings import SIMILARITY, Similarity
from attention_course.similarity.base import Source, base_kgrams, read_source
from attention_course.similarity.extract import Handed, given, read_handed, submitted
from attention_course.similarity.fingerprint import kgram_hashes, winnow
from attention_course.similarity.normalise import (
    CannotCompare,
    Defaults,
    Tokens,
    normalise,
    signatures,
)
from attention_course.similarity.score import FunctionScores, Scores, rings, score_class

RELEASE = "the release"  # the name of the stubs and visible checks as a known source


@dataclass(frozen=True)
class Doc:
    """One student's solution cell of one function, normalised and fingerprinted."""

    source: str
    tokens: Tokens
    prints: dict[int, list[int]]  # fingerprint -> k-gram positions (known sources taken out)
    known: dict[int, str]  # line -> the known source its code comes from
    covers: dict[int, tuple[int, ...]]  # fingerprint -> the lines its k-grams span


@dataclass(frozen=True)
class Match:
    """What a pair shares in one function."""

    function: str
    containment: float
    similarity: float
    identical: bool  # the same code after normalisation (and not only a known source's)
    lines_a: tuple[int, ...]  # lines of a's cell that match b's (1-based)
    lines_b: tuple[int, ...]
    shared_a: dict[int, int]  # matching line of a -> how many students share its code
    shared_b: dict[int, int]
    common_a: tuple[int, ...] = ()  # matching lines whose code is common in the class
    common_b: tuple[int, ...] = ()


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float  # the mean of containment and similarity, over all functions
    containment: float
    similarity: float
    matches: tuple[Match, ...]  # every function both compared, in the course's order
    why: tuple[str, ...]  # why the pair is reported, in words
    group: int = 0  # its group's number in `Similarities.groups` (1-based), 0 if none

    def match(self, function: str) -> Match | None:
        return next((m for m in self.matches if m.function == function), None)


@dataclass(frozen=True)
class Group:
    """Three or more students every two of whom are a reported pair (a ring), and the
    functions in which they share code."""

    members: tuple[str, ...]
    functions: tuple[str, ...]
    lowest: float  # the lowest score of a pair inside the group
    identical: bool  # every pair of the group identical after normalisation in some function


@dataclass
class FunctionResult:
    function: str
    compared: int  # students whose cell was compared (not the stub)
    pairs: list[Pair]  # the reported pairs that match in this function
    highest_below: float  # the highest containment of a pair in this function not reported


@dataclass
class Similarities:
    assignment: str
    students: list[str]
    threshold: float
    functions: list[FunctionResult] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)  # reported, most similar first
    # rings: three or more students, every two of them a reported pair, largest first
    groups: list[Group] = field(default_factory=list)
    highest_below: float = 0.0  # the highest score of a pair not reported
    known: list[str] = field(default_factory=list)  # the known sources' names
    unreadable: dict[str, str] = field(default_factory=dict)  # student -> why
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # student, function, why
    cells: dict[tuple[str, str], str] = field(default_factory=dict)  # (student, f) -> source
    known_lines: dict[tuple[str, str], dict[int, str]] = field(default_factory=dict)
    scores: Scores | None = None  # every pair's scores (for benchmarks and tests)

    def score(self, a: str, b: str) -> float:
        """The pair's score over all functions (0 when either handed in nothing)."""
        if self.scores is None:
            return 0.0
        index = self.scores.index()
        if a not in index or b not in index:
            return 0.0
        return float(self.scores.score[index[a], index[b]])


def course_sources(course: Course, extra: list[Path] = (), own: bool = True) -> list[Source]:  # type: ignore[assignment]
    """The known sources: the course's declared ones (unless `own` is False), then `extra`."""
    found = [read_source(path, name) for name, path in course.similarity_base] if own else []
    return found + [read_source(path) for path in extra]


def _fingerprints(tokens: Tokens, settings: Similarity) -> dict[int, list[int]]:
    return winnow(kgram_hashes(tokens.labels, settings.kgram), settings.window)


def _known_lines(tokens: Tokens, known: dict[int, str], k: int) -> dict[int, str]:
    """Lines whose tokens all lie in k-grams of a known source -> that source's name."""
    named: dict[int, str] = {}
    covered: dict[int, int] = {}
    for pos, h in enumerate(kgram_hashes(tokens.labels, k)):
        if h in known:
            for line in tokens.lines[pos : pos + k]:
                named.setdefault(line, known[h])
            for i in range(pos, min(pos + k, len(tokens.labels))):
                covered[i] = 1
    total: dict[int, int] = {}
    for i, line in enumerate(tokens.lines):
        total[line] = total.get(line, 0) + 1
        covered[i] = covered.get(i, 0)
    full = {
        line for line in total if all(covered[i] for i, at in enumerate(tokens.lines) if at == line)
    }
    return {line: name for line, name in named.items() if line in full}


def _matching(doc: Doc, shared: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted({line for h in shared for line in doc.covers[h]}))


def _covers(tokens: Tokens, prints: dict[int, list[int]], k: int) -> dict[int, tuple[int, ...]]:
    return {
        h: tuple(sorted({line for pos in positions for line in tokens.lines[pos : pos + k]}))
        for h, positions in prints.items()
    }


def _shared_by(
    doc: Doc, shared: Iterable[int], holders: Mapping[int, int], weights: dict[int, float]
) -> tuple[tuple[int, ...], dict[int, int], tuple[int, ...]]:
    """The matching lines; each one's count of students who hold the rarest matching code on
    it; and those whose rarest matching code is common (weighs less than a half)."""
    out: dict[int, int] = {}
    weight: dict[int, float] = {}
    for h in shared:
        held, w = holders[h], weights.get(h, 1.0)
        for line in doc.covers[h]:
            if out.get(line, held + 1) > held:
                out[line] = held
            if weight.get(line, -1.0) < w:
                weight[line] = w
    common = tuple(sorted(line for line, w in weight.items() if w < 0.5))
    return tuple(sorted(out)), out, common


def compare_class(
    assignment: str,
    root: Path,
    progress: Callable[[str, str], None] | None = None,
    settings: Similarity = SIMILARITY,
    base: list[Path] = (),  # type: ignore[assignment]
    course_base: bool = True,
) -> Similarities:
    """Compare every pair of submissions of `assignment` in the course at `root`, with the
    course's known sources (unless `course_base` is False) and those at `base`.
    `progress(student, what)` is called once per submission read (before the cells are
    normalised, in several processes for a large class)."""
    course = Course.load(root)
    sources = course_sources(course, list(base), course_base)
    gift = given(course, assignment)
    students = submitted(course.root, assignment)
    result = Similarities(assignment, students, settings.threshold)
    result.known = [s.name for s in sources]
    defaults: Defaults = {}
    for stub in gift.stubs.values():
        defaults = {**defaults, **signatures(stub)}
    release = Source(RELEASE, course.root, (*gift.stubs.values(), *gift.checks))
    known = base_kgrams([release, *sources], gift.functions, defaults, settings)
    common = {
        f: set(_fingerprints(normalise(src, f, defaults), settings)) if src else set()
        for f, src in gift.solutions.items()
    }
    stub_tokens = {
        f: normalise(src, f, defaults).labels for f, src in gift.stubs.items() if _parses(src, f)
    }
    handed_in: list[Handed] = []
    for student in students:
        handed = read_handed(course.root, assignment, student, gift.functions)
        handed_in.append(handed)
        if handed.reason:
            result.unreadable[student] = handed.reason
        for f, why in handed.skipped.items():
            result.skipped.append((student, f, why))
        if progress:
            progress(student, "unreadable" if handed.reason else "read")
    cells = sorted({(f, source) for h in handed_in for f, source in h.cells.items()})
    seen = _docs(cells, defaults, known, settings)
    docs: dict[str, dict[str, Doc]] = {f: {} for f in gift.functions}
    for handed in handed_in:
        for f, source in handed.cells.items():
            found = seen[(f, source)]
            if isinstance(found, str):
                result.skipped.append((handed.student, f, found))
            elif found.tokens.labels != stub_tokens.get(f):
                docs[f][handed.student] = found
                result.cells[(handed.student, f)] = source
                if found.known:
                    result.known_lines[(handed.student, f)] = found.known
    _score(result, docs, common, settings)
    return result


# What each process normalising cells needs: the defaults, the known sources' k-grams and the
# settings (set once per process: `_docs`).
_TASK: tuple[Defaults, dict[str, dict[int, str]], Similarity] | None = None


def _docs(
    cells: list[tuple[str, str]],
    defaults: Defaults,
    known: dict[str, dict[int, str]],
    settings: Similarity,
) -> dict[tuple[str, str], Doc | str]:
    """(function, source) -> its Doc, or why it cannot be compared. A large class is
    normalised in `settings.workers` processes (one per CPU when 0)."""
    workers = settings.workers or os.cpu_count() or 1
    if workers < 2 or len(cells) < settings.parallel_cells:
        return {c: _doc(c[1], c[0], defaults, known[c[0]], settings) for c in cells}
    task = (defaults, known, settings)
    chunk = max(1, len(cells) // (workers * 8))
    with ProcessPoolExecutor(workers, initializer=_start, initargs=(task,)) as pool:
        return dict(zip(cells, pool.map(_doc_task, cells, chunksize=chunk), strict=True))


def _start(task: tuple[Defaults, dict[str, dict[int, str]], Similarity]) -> None:
    global _TASK
    _TASK = task


def _doc_task(cell: tuple[str, str]) -> Doc | str:
    assert _TASK is not None
    defaults, known, settings = _TASK
    return _doc(cell[1], cell[0], defaults, known[cell[0]], settings)


def _doc(
    source: str, f: str, defaults: Defaults, known: dict[int, str], s: Similarity
) -> Doc | str:
    try:
        tokens = normalise(source, f, defaults)
    except CannotCompare as exc:
        return str(exc)
    prints = {h: p for h, p in _fingerprints(tokens, s).items() if h not in known}
    covers = _covers(tokens, prints, s.kgram)
    return Doc(source, tokens, prints, _known_lines(tokens, known, s.kgram), covers)


def _parses(source: str, function: str) -> bool:
    try:
        normalise(source, function)
    except CannotCompare:
        return False
    return True


def _score(
    result: Similarities,
    docs: dict[str, dict[str, Doc]],
    common: dict[str, set[int]],
    settings: Similarity,
) -> None:
    """Score every pair, then fill in `result`: the reported pairs, most similar first, their
    groups, and each function's part."""
    students = sorted({s for held in docs.values() for s in held})
    prints = {f: {s: set(d.prints) for s, d in held.items()} for f, held in docs.items()}
    scores = score_class(students, prints, common, settings)
    result.scores = scores
    identical = _identical_code(students, docs, scores, settings)
    reported = _reported(students, docs, scores, identical, settings)
    upper = np.triu(np.ones(reported.shape, dtype=bool), k=1)
    below = scores.score[upper & ~reported]
    result.highest_below = float(below.max()) if below.size else 0.0
    found = sorted(
        (tuple(ij) for ij in np.argwhere(reported)),
        key=lambda ij: (-float(scores.score[ij]), students[ij[0]], students[ij[1]]),
    )
    same = {key: functions for key, (functions, _) in identical.items()}
    pairs = [
        _pair(i, j, students, docs, scores, same, settings, rank < settings.detailed_pairs)
        for rank, (i, j) in enumerate(found)
    ]
    result.pairs, result.groups = _grouped(students, pairs, reported, scores.score, settings)
    for fs in scores.functions:
        result.functions.append(_function(fs, docs[fs.function], students, result.pairs, settings))


def _identical_code(
    students: list[str], docs: dict[str, dict[str, Doc]], scores: Scores, settings: Similarity
) -> dict[tuple[int, int], tuple[list[str], float]]:
    """(i, j) -> the functions in which students i and j hand in the same uncommon code after
    normalisation (at least `min_fingerprints` of it), and how much uncommon code that is."""
    index = scores.index()
    found: dict[tuple[int, int], tuple[list[str], float]] = {}
    for fs in scores.functions:
        by_code: dict[tuple[str, ...], list[str]] = {}
        own: dict[tuple[str, ...], float] = {}
        for s, d in docs[fs.function].items():
            uncommon = _uncommon(d, fs.weights)
            if uncommon >= settings.min_fingerprints:
                by_code.setdefault(d.tokens.labels, []).append(s)
                own[d.tokens.labels] = uncommon
        for code, group in by_code.items():
            for a, b in itertools.combinations(sorted(group, key=index.__getitem__), 2):
                functions, weight = found.get((index[a], index[b]), ([], 0.0))
                found[(index[a], index[b])] = ([*functions, fs.function], weight + own[code])
    return found


def _reported(
    students: list[str],
    docs: dict[str, dict[str, Doc]],
    scores: Scores,
    identical: dict[tuple[int, int], tuple[list[str], float]],
    settings: Similarity,
) -> np.ndarray:
    """Which pairs (i < j) are reported: a score at least the threshold, or identical uncommon
    code weighing `min_pair_fingerprints` in all, or in every function both handed in."""
    reported = np.triu(scores.score >= settings.threshold, k=1)
    for (i, j), (_, uncommon) in identical.items():
        a, b = students[i], students[j]
        both = [held for held in docs.values() if a in held and b in held]
        everywhere = all(held[a].tokens.labels == held[b].tokens.labels for held in both)
        if uncommon >= settings.min_pair_fingerprints or everywhere:
            reported[i, j] = True
    return reported


def _grouped(
    students: list[str],
    pairs: list[Pair],
    reported: np.ndarray,
    score: np.ndarray,
    settings: Similarity,
) -> tuple[list[Pair], list[Group]]:
    """The pairs, each with its ring's number, and the rings: three or more students every
    two of whom are a reported pair."""
    strength = np.where(reported | reported.T, np.maximum(score, settings.threshold), 0.0)
    groups = [g for g in rings(students, [], strength, settings.threshold) if len(g) > 2]
    number = {s: g for g, members in enumerate(groups, start=1) for s in members}
    numbered = [
        _with_group(p, number.get(p.a, 0) if number.get(p.a, 0) == number.get(p.b) else 0)
        for p in pairs
    ]
    inside: dict[int, list[Pair]] = {}
    for p in numbered:
        if p.group:
            inside.setdefault(p.group, []).append(p)
    found = [
        _group(members, inside.get(g, []), settings) for g, members in enumerate(groups, start=1)
    ]
    return numbered, found


def _function(
    fs: FunctionScores,
    held: dict[str, Doc],
    students: list[str],
    pairs: list[Pair],
    settings: Similarity,
) -> FunctionResult:
    """One function's part: the reported pairs that match in it, and the highest containment
    in it of a pair it does not list."""
    listed = [
        p
        for p in pairs
        if (m := p.match(fs.function)) and (m.identical or m.containment >= settings.threshold)
    ]
    index = {s: i for i, s in enumerate(students)}
    handed = np.array([s in held for s in students])
    candidates = np.triu(handed[:, None] & handed[None, :], k=1)
    for p in listed:
        i, j = sorted((index[p.a], index[p.b]))
        candidates[i, j] = False
    values = fs.containment[candidates]
    return FunctionResult(
        fs.function, len(held), listed, float(values.max()) if values.size else 0.0
    )


def _uncommon(doc: Doc, weights: dict[int, float]) -> float:
    """How much of a cell's code is its own: its fingerprints weighed by rarity (a
    fingerprint nobody else holds weighs 1)."""
    return sum(weights.get(h, 1.0) for h in doc.prints)


def _with_group(p: Pair, group: int) -> Pair:
    return Pair(p.a, p.b, p.score, p.containment, p.similarity, p.matches, p.why, group)


def _pair(
    i: int,
    j: int,
    students: list[str],
    docs: dict[str, dict[str, Doc]],
    scores: Scores,
    identical: dict[tuple[int, int], list[str]],
    settings: Similarity,
    detailed: bool,
) -> Pair:
    """The pair of students i and j. `detailed`: with each matching line's count of students
    (the report shows its cells); otherwise the matching lines alone (for the CSV)."""
    a, b = students[i], students[j]
    matches = []
    for fs in scores.functions:
        held = docs[fs.function]
        if a not in held or b not in held:
            continue
        da, db = held[a], held[b]
        shared = da.prints.keys() & db.prints.keys()
        if detailed:
            lines_a, by_a, common_a = _shared_by(da, shared, fs.holders, fs.weights)
            lines_b, by_b, common_b = _shared_by(db, shared, fs.holders, fs.weights)
        else:
            lines_a, by_a, common_a = _matching(da, shared), {}, ()
            lines_b, by_b, common_b = _matching(db, shared), {}, ()
        matches.append(
            Match(
                fs.function,
                float(fs.containment[i, j]),
                float(fs.similarity[i, j]),
                fs.function in identical.get((i, j), []),
                lines_a,
                lines_b,
                by_a,
                by_b,
                common_a,
                common_b,
            )
        )
    score = float(scores.score[i, j])
    containment = float(scores.containment[i, j])
    similarity = float(scores.similarity[i, j])
    why = []
    same = [m.function for m in matches if m.identical]
    if same:
        why.append("identical after normalisation, and uncommon: " + ", ".join(same))
    if score >= settings.threshold:
        why.append(
            f"score {score:.2f} at or above {settings.threshold:g}: of the smaller "
            f"submission's uncommon code, {containment:.0%} is in the other's "
            f"(containment {containment:.2f}; similarity {similarity:.2f})"
        )
    top = max(matches, key=lambda m: m.containment, default=None)
    if top is not None and top.containment > 0:
        why.append(f"most shared: {top.function} (containment {top.containment:.2f})")
    return Pair(a, b, score, containment, similarity, tuple(matches), tuple(why))


def _group(members: list[str], inside: list[Pair], settings: Similarity) -> Group:
    """The group of `members`, from the reported pairs `inside` it."""
    functions = [
        m.function
        for m in (inside[0].matches if inside else ())
        if any(
            (q := p.match(m.function)) and (q.identical or q.containment >= settings.threshold)
            for p in inside
        )
    ]
    complete = len(inside) == len(members) * (len(members) - 1) // 2
    return Group(
        tuple(members),
        tuple(functions),
        min((p.score for p in inside), default=0.0),
        complete and all(any(m.identical for m in p.matches) for p in inside),
    )
