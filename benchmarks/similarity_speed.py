"""How long the similarity report takes for a class: prints figures, asserts nothing.

    python benchmarks/similarity_speed.py [--students 60 600]

For each class size N, a class of N submissions of both assignments is written into a fresh
course copy: each student's solution cells are drawn from the catalogue's variants of that
function (tests/catalogue/correct/ and wrong/) and the instructor's solution, each disguised
its own way (locals renamed, reformatted, comments dropped), and one student in ten copies
another's notebook under new names. It prints the time `compare_class` takes per assignment
(reading, normalising with the canonical forms, scoring every pair twice with the rings'
units, no report written) and then with the report files, each as wall-clock time and as
CPU time, the process's and its workers' (which another user of the machine does not
inflate; the cells are normalised in one process per CPU); how many pairs
it reports, and how many of the planted copies are among them. The course text is the known
source, as shipped. The class is drawn from a few variants per function: many students hand
in the same variants, as no real class does, and the report flags them as groups. First, the
CPU time of a few hostile cells, each of the longest length compared.
"""

from __future__ import annotations

import argparse
import ast
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nbformat  # noqa: E402

from attention_course.classgrade.nbgrader_api import copy_course  # noqa: E402
from attention_course.cli.progress import Progress  # noqa: E402
from attention_course.cli.samples import _solution_sources, fill  # noqa: E402
from attention_course.course import Course  # noqa: E402
from attention_course.similarity.compare import compare_class  # noqa: E402
from attention_course.similarity.report import write_report  # noqa: E402

COURSE_ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = COURSE_ROOT / "tests" / "catalogue"


def variants(root: Path, assignment: str) -> dict[str, list[str]]:
    """function -> every cell the catalogue and the instructor have for it."""
    found = {f: [src] for f, src in _solution_sources(assignment, root).items()}
    for path in sorted(CATALOGUE.glob("*/*.py")):
        function = path.stem.split("__")[0]
        if function in found:
            found[function].append(path.read_text())
    return found


def disguise(source: str, rng: random.Random) -> str:
    """The cell with its local names renamed and reformatted by ast.unparse (comments gone)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names = {name: f"{name}_{rng.randrange(10_000)}" for name in stored}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return ast.unparse(tree)


def write_class(root: Path, assignment: str, students: int, seed: int = 0) -> set[tuple[str, str]]:
    """Write the class; returns the planted copies (pairs of student ids)."""
    rng = random.Random(seed)
    planted: set[tuple[str, str]] = set()
    pool = variants(root, assignment)
    released = Course.load(root).release_notebook(assignment)
    written: list[dict[str, str]] = []
    for i in range(students):
        if written and i % 10 == 9:  # a copy of an earlier student, disguised again
            j = rng.randrange(len(written))
            cells = {f: disguise(src, rng) for f, src in written[j].items()}
            planted.add((f"student-{j:04d}", f"student-{i:04d}"))
        else:
            cells = {f: disguise(rng.choice(options), rng) for f, options in pool.items()}
        written.append(cells)
        folder = root / "submitted" / f"student-{i:04d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(fill(released, cells), folder / f"{assignment}.ipynb")
    return planted


def cpu_time() -> float:
    """CPU seconds of this process and of its children (the processes that normalise)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# Cells of 100,000 characters (the most compared) that make the normalisation work hardest.
HOSTILE = {
    "a chain of 6000 temporaries": lambda: (
        "def softmax(z, axis=-1):\n" + "".join(f"    a{i} = a{i - 1} + 1\n" for i in range(1, 6000))
    ),
    "one name assigned 8000 times": lambda: (
        "def softmax(z, axis=-1):\n    x = z\n" + "    x = x + 1\n" * 8000 + "    return x\n"
    ),
    "2500 helpers calling each other": lambda: (
        "".join(f"def h{i}(x):\n    return h{i - 1}(x) + 1\n" for i in range(1, 2500))
        + "def softmax(z):\n    return h2499(z)\n"
    ),
    "4000 stores nobody reads": lambda: (
        "def softmax(z, axis=-1):\n" + "    unused = np.zeros(3)\n" * 4000 + "    return z\n"
    ),
}


def hostile() -> None:
    """CPU seconds to normalise each of the HOSTILE cells."""
    from attention_course.settings import SIMILARITY
    from attention_course.similarity.normalise import CannotCompare, normalise

    for name, make in HOSTILE.items():
        cell = make()[: SIMILARITY.cell_chars]
        start = time.process_time()
        try:
            normalise(cell, "softmax")
            what = "compared"
        except CannotCompare as exc:
            what = f"not compared: {exc}"
        took = time.process_time() - start
        print(f"  {name:<34} {len(cell):>7} characters: {took:5.2f} s CPU ({what})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="*", default=[60, 600])
    args = parser.parse_args()
    print("One hostile cell each (the longest compared, made to work the normalisation hard):")
    hostile()
    course = Course.load(COURSE_ROOT)
    for n in args.students:
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_course(Path(tmp) / "course", COURSE_ROOT)
            planted = {a: write_class(root, a, n) for a in course.assignments}
            for assignment in course.assignments:
                bar = Progress(n, "submissions read")
                start, cpu = time.perf_counter(), cpu_time()
                found = compare_class(assignment, root, bar.update if bar.tty else None)
                compared = time.perf_counter() - start
                compared_cpu = cpu_time() - cpu
                write_report(found, root / "reports" / assignment)
                total = time.perf_counter() - start
                total_cpu = cpu_time() - cpu
                pairs = {(p.a, p.b) for p in found.pairs}
                caught = len(planted[assignment] & pairs)
                print(
                    f"{n:>5} students  {assignment:<18} compared in {compared:6.1f} s "
                    f"(CPU {compared_cpu:5.1f} s), with the report {total:6.1f} s "
                    f"(CPU {total_cpu:5.1f} s); {len(pairs)} pair(s) of students reported, "
                    f"{caught} of the {len(planted[assignment])} planted copies"
                )


if __name__ == "__main__":
    main()
