"""The similarity report beside Dolos on a realistic class: prints figures, asserts nothing.

    python benchmarks/similarity_accuracy.py [--rings 2 4 9 15 30] [--no-dolos]

The class is tests/similarity/realistic/ (56 students of attention_basics: 40 who wrote their
own code at every level, 2 who handed in the course text's code, 14 who copied with disguises
of rising strength, a ring of four among them), written as notebooks into a fresh copy of the
course. Both tools get the same extracted cells: the solution cells `attention-course
similarity` reads (similarity/extract.py), one file per student for Dolos, the four cells in
the course's order. Every pair of students is ranked by each tool's score; with k = the number
of true copy pairs, it prints precision at k (of the k highest pairs, the share that are
copies), how many copies are in the top 20, ROC AUC (the chance that a copy pair outranks an
innocent one, ties counting half), the rank of the two course-text students' pair, and each
copy's rank by disguise.

The tools: this project's similarity (the course's known source, the course text, as
shipped; and with the release alone), and Dolos (`@dodona/dolos-lib`, Ghent University's
winnowing tool, run by node through benchmarks/dolos_pairs.mjs; installed into
.venv/node_tools/dolos when missing) with the release's stubs as its template, and with the
stubs and the course text's code (source/course_text.py) as its template.

Then rings: the class without the ring, plus a ring of N students around one student's code
(each member's functions taken from the ring's four versions, renamed and reformatted): the
lowest score of a pair inside the ring, by each tool, and whether this project reports the
ring as one group.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_course.classgrade.nbgrader_api import copy_course  # noqa: E402
from attention_course.course import Course  # noqa: E402
from attention_course.similarity.compare import Similarities, compare_class  # noqa: E402
from attention_course.similarity.extract import given, read_handed, submitted  # noqa: E402
from tests.similarity import realistic  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent
DOLOS_PACKAGE = "@dodona/dolos-lib@3.5.1"
DOLOS_PREFIX = COURSE_ROOT / ".venv" / "node_tools" / "dolos"
DOLOS_SCRIPT = Path(__file__).resolve().parent / "dolos_pairs.mjs"

Score = Callable[[str, str], float]


def dolos_lib() -> Path | None:
    """dolos-lib's folder, installed with npm when missing (None, said why, when it cannot)."""
    lib = DOLOS_PREFIX / "node_modules" / "@dodona" / "dolos-lib"
    if (lib / "dist" / "index.js").is_file():
        return lib
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("Dolos not run: node and npm are needed (apt-get install nodejs npm)")
        return None
    print(f"installing {DOLOS_PACKAGE} into {DOLOS_PREFIX} (a few minutes) ...", flush=True)
    DOLOS_PREFIX.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(DOLOS_PREFIX), "--no-audit", "--no-fund", DOLOS_PACKAGE],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0 or not (lib / "dist" / "index.js").is_file():
        print(f"Dolos not run: npm install failed: {done.stderr.strip()[-400:]}")
        return None
    return lib


def extracted(root: Path) -> dict[str, str]:
    """student -> their solution cells as one file, in the course's order (what the project's
    similarity reads, given to Dolos as it is)."""
    course = Course.load(root)
    functions = course.assignment(realistic.ASSIGNMENT).graded
    out = {}
    for student in submitted(root, realistic.ASSIGNMENT):
        handed = read_handed(root, realistic.ASSIGNMENT, student, functions)
        out[student] = "\n\n".join(handed.cells[f] for f in functions if f in handed.cells)
    return out


def run_dolos(lib: Path, files: dict[str, str], template: str, folder: Path) -> Score:
    """Dolos's similarity of every pair of the students' files, `template` ignored."""
    folder.mkdir(parents=True)
    paths = []
    for student, code in files.items():
        path = folder / f"{student}.py"
        path.write_text(code)
        paths.append(str(path))
    template_file = ""
    if template:
        template_file = str(folder.parent / f"{folder.name}-template.py")
        Path(template_file).write_text(template)
    done = subprocess.run(
        ["node", str(DOLOS_SCRIPT), str(lib), template_file, *paths],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    found = {}
    for p in json.loads(done.stdout):
        a, b = sorted((Path(p["a"]).stem, Path(p["b"]).stem))
        found[(a, b)] = float(p["similarity"])
    return lambda a, b: found.get((min(a, b), max(a, b)), 0.0)


def ranking(score: Score, students: list[str], truth: set[tuple[str, str]]) -> dict:
    """Precision at k, copies in the top 20, ROC AUC and every pair's rank (1 = highest; a
    tie shares the best rank of its scores' run, so ties never flatter)."""
    pairs = list(itertools.combinations(sorted(students), 2))
    values = {p: score(*p) for p in pairs}
    ordered = sorted(pairs, key=lambda p: -values[p])
    # ties are ranked pessimistically for copies: an innocent pair with the same score first
    ordered = sorted(ordered, key=lambda p: (-values[p], p in truth))
    rank = {p: i + 1 for i, p in enumerate(ordered)}
    k = len(truth)
    positives = [values[p] for p in pairs if p in truth]
    negatives = [values[p] for p in pairs if p not in truth]
    wins = sum((x > y) + 0.5 * (x == y) for x in positives for y in negatives)
    return {
        "p_at_k": sum(p in truth for p in ordered[:k]) / k,
        "top20": sum(p in truth for p in ordered[:20]),
        "auc": wins / (len(positives) * len(negatives)),
        "rank": rank,
        "values": values,
        "k": k,
    }


def table(results: dict[str, dict], k: int) -> None:
    print("\n| tool | precision at k | copies in top 20 | ROC AUC | course-text pair's rank |")
    print("|---|---|---|---|---|")
    text_pair = tuple(sorted(realistic.COURSE_TEXT))
    for name, r in results.items():
        print(
            f"| {name} | {r['p_at_k']:.3f} | {r['top20']}/{min(20, k)} | {r['auc']:.4f} | "
            f"{r['rank'][text_pair]} |"
        )


def ours(found: Similarities) -> Score:
    return found.score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rings", type=int, nargs="*", default=[2, 4, 9, 15, 30])
    parser.add_argument("--no-dolos", action="store_true", help="this project's figures only")
    args = parser.parse_args()
    lib = None if args.no_dolos else dolos_lib()
    course_text = (COURSE_ROOT / "source" / "course_text.py").read_text()
    truth = realistic.copy_pairs()
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_course(Path(tmp) / "course", COURSE_ROOT)
        realistic.write_class(root)
        students = submitted(root, realistic.ASSIGNMENT)
        tools: dict[str, Score] = {}
        start = time.perf_counter()
        tools["attention-course, the course text as known source"] = ours(
            compare_class(realistic.ASSIGNMENT, root)
        )
        took = time.perf_counter() - start
        tools["attention-course, the release alone"] = ours(
            compare_class(realistic.ASSIGNMENT, root, course_base=False)
        )
        if lib is not None:
            files = extracted(root)
            stubs = "\n\n".join(given(Course.load(root), realistic.ASSIGNMENT).stubs.values())
            start = time.perf_counter()
            tools["Dolos, release stubs as template"] = run_dolos(
                lib, files, stubs, Path(tmp) / "dolos-stubs"
            )
            dolos_took = time.perf_counter() - start
            tools["Dolos, stubs + the course text's code as template"] = run_dolos(
                lib, files, stubs + "\n\n" + course_text, Path(tmp) / "dolos-text"
            )
        results = {name: ranking(score, students, truth) for name, score in tools.items()}
        k = len(truth)
        print(
            f"\nThe class: {len(students)} students, {len(students) * (len(students) - 1) // 2}"
            f" pairs, {k} copy pairs (k); attention-course compared it in {took:.1f} s"
            + (f", Dolos in {dolos_took:.1f} s" if lib is not None else "")
        )
        table(results, k)
        older = [s for s in students if s not in realistic.FRESH]
        truth_older = realistic.copy_pairs(fresh=False)
        print(
            f"\nThe same scores, without the {len(realistic.FRESH)} fresh copies (the issue's "
            f"disguise families: {len(older)} students, {len(truth_older)} copy pairs):"
        )
        table({n: ranking(s, older, truth_older) for n, s in tools.items()}, len(truth_older))
        print("\nEach copy's rank (score) by disguise:")
        names = list(results)
        print("| copy | disguise | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for copier, (original, family) in realistic.copies().items():
            pair = tuple(sorted((copier, original)))
            cells = [
                f"{results[n]['rank'][pair]} ({results[n]['values'][pair]:.2f})" for n in names
            ]
            print(f"| {copier} of {original} | {family} | " + " | ".join(cells) + " |")
        innocent = {
            n: max(v for p, v in r["values"].items() if p not in truth) for n, r in results.items()
        }
        print("\nHighest innocent pair: " + "; ".join(f"{n}: {v:.2f}" for n, v in innocent.items()))
    if args.rings:
        rings(args.rings, lib)


def rings(sizes: list[int], lib: Path | None) -> None:
    print("\nRings around one student's code (the class without its ring, plus N members):")
    print("| N | attention-course: lowest pair | one group | Dolos (stubs): lowest pair |")
    print("|---|---|---|---|")
    others = [s for s in realistic.independent() if s not in realistic.RING]
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_course(Path(tmp) / "course", COURSE_ROOT)
            realistic.write_class(root, others)
            members = realistic.ring(size, seed=size)
            realistic.write_cells(root, members)
            found = compare_class(realistic.ASSIGNMENT, root)
            inside = list(itertools.combinations(sorted(members), 2))
            lowest = min(found.score(a, b) for a, b in inside)
            group = any(set(g.members) == set(members) for g in found.groups) or (
                size == 2 and any({p.a, p.b} == set(members) for p in found.pairs)
            )
            dolos = "-"
            if lib is not None:
                stubs = "\n\n".join(given(Course.load(root), realistic.ASSIGNMENT).stubs.values())
                score = run_dolos(lib, extracted(root), stubs, Path(tmp) / "dolos")
                dolos = f"{min(score(a, b) for a, b in inside):.2f}"
            print(f"| {size} | {lowest:.2f} | {'yes' if group else 'no'} | {dolos} |")


if __name__ == "__main__":
    main()
