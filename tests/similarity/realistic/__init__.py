"""A realistic class of `attention_basics`, written for the similarity report's tests and its
benchmark against Dolos (benchmarks/similarity_accuracy.py).

`students/<id>.py` holds what one student handed in: each solution cell after a line
`# %% <function>`, and a first line saying what the student did with the release's
docstrings (`kept`: left in place, `removed`, or `own`: written their own, already in the
file). The cells are put into the released notebook as the student's solution cells.

- 40 students wrote their own code, at every level: loops and prints, the course text's
  style, careful guards, einsum and log-sum-exp, helpers. Many of them arrive at the same
  natural code for the short functions, as independent students do.
- 2 students handed in the course text's own code (COURSE_TEXT), adapted to the signatures.
- 25 students copied another's code (COPIES and FRESH), disguised with the techniques of rising
  strength that the family names: renaming and reformatting, reordering and new argument
  names, helpers inlined or wrapped, equivalent numpy calls, temporaries folded or split,
  padding with dead code and asserts, constants and einsum subscripts, everything at once, a
  partial copy; a ring of four around one student's code (RING) (COPIES: the families of
  the issue that asked for this); and eleven written later as fresh cases, in two batches
  (FRESH).

The copy pairs (the truth): every pair of students inside one group of an original and its
copies, the ring included.
"""

from __future__ import annotations

import ast
import itertools
import random
import re
from pathlib import Path

import nbformat

from attention_course.cli.samples import fill
from attention_course.grading.notebook import read_notebook
from attention_course.similarity.extract import solution_cells

ASSIGNMENT = "attention_basics"
FUNCTIONS = ("softmax", "create_qkv", "causal_mask", "scaled_dot_product_attention")
STUDENTS = Path(__file__).parent / "students"

# copier -> (the student whose code it is, the disguise), weakest first.
COPIES = {
    "paolo": ("dmitri", "renamed, reformatted, comments changed"),
    "quinn": ("jia", "statements reordered, argument names changed"),
    "rahel": ("uma", "the original's helpers inlined"),
    "sami": ("lena", "steps wrapped in new helpers"),
    "tobi": ("omar", "equivalent numpy calls (np.e **, .sum(), true_divide, moveaxis, ** 0.5)"),
    "vera": ("kofi", "temporaries folded into expressions"),
    "wanjiru": ("hana", "expressions split into temporaries"),
    "xavier": ("victor", "padded with dead code, asserts and prints"),
    "yara": ("chen", "constants (* 1.0, + 0) and einsum subscripts rewritten"),
    "zeno": ("wen", "everything at once"),
    "abdul": ("helga", "a partial copy: two functions of four"),
    "jonas": ("sven", "a ring: lightly disguised, each their own way"),
    "kemal": ("sven", "a ring: lightly disguised, each their own way"),
    "leila": ("sven", "a ring: lightly disguised, each their own way"),
}
# Copies written after the scorer was built, as fresh cases, each batch scored once before
# any change (the first figures are in benchmarks/similarity-accuracy.md). The first batch
# showed canonical forms that were missing (added since); the scorer was not changed for the
# second.
FRESH = {
    "ines": ("elena", "type hints, a lambda, keepdims=1, axis=x.ndim - 1"),
    "olek": ("bilal", "a helper, while loops for for loops"),
    "pilar": ("gustavo", "boolean indexing for np.where, a generator for a list"),
    "ravi": ("nadia", "try/except around the code, one errstate block, a loop for a comprehension"),
    "sofia": ("priya", "keywords reordered, np.meshgrid for np.indices, temporaries folded"),
    "timo": ("amara", "a partial copy with extra guards and checks"),
    "uwe": ("mateo", "comments, a changed constant, float() around the scale"),
    "vlad": ("carmen", "a nested helper with a branch, None for np.newaxis, r < c for c > r"),
    "wiebke": ("ximena", "a product with the negated mask for np.where, logical_not"),
    "xiu": ("fatima", "an if True: block, np.add.reduce for np.sum, ** .5"),
    "yann": ("dev", "x != x for np.isnan, np.reciprocal, a method for np.sum"),
}
RING = ("sven", "jonas", "kemal", "leila")
COURSE_TEXT = ("tomas", "ugne")


def student_ids(fresh: bool = True) -> list[str]:
    """Every student of the class (without the FRESH copies when `fresh` is False)."""
    return sorted(p.stem for p in STUDENTS.glob("*.py") if fresh or p.stem not in FRESH)


def copies(fresh: bool = True) -> dict[str, tuple[str, str]]:
    return {**COPIES, **FRESH} if fresh else dict(COPIES)


def copy_groups(fresh: bool = True) -> list[set[str]]:
    """Each original with its copies."""
    groups: dict[str, set[str]] = {}
    for copier, (original, _) in copies(fresh).items():
        groups.setdefault(original, {original}).add(copier)
    return list(groups.values())


def copy_pairs(fresh: bool = True) -> set[tuple[str, str]]:
    """Every pair (a, b), a < b, of students of one copy group."""
    return {
        (a, b) for group in copy_groups(fresh) for a, b in itertools.combinations(sorted(group), 2)
    }


def independent() -> list[str]:
    """The students who wrote their own code (the originals of copies included)."""
    return [s for s in student_ids() if s not in copies() and s not in COURSE_TEXT]


def _with_docstring(cell: str, function: str, stub: str) -> str:
    """The cell with the release's docstring of `function` under its `def` line (when the
    cell has none)."""
    doc = re.search(r'^(\s+"""[\s\S]*?"""\n)', stub.partition(":\n")[2], flags=re.M)
    head = re.search(rf"^def {function}\(.*\):\n", cell, flags=re.M)
    if not doc or not head:
        return cell
    after = cell[head.end() :]
    if after.lstrip().startswith(('"""', "'''")):
        return cell
    return cell[: head.end()] + doc.group(1) + after


def cells_of(student: str, stubs: dict[str, str]) -> dict[str, str]:
    """function -> the student's solution cell, as handed in."""
    text = (STUDENTS / f"{student}.py").read_text()
    kept = text.startswith("# docstrings: kept")
    parts = re.split(r"^# %% (\w+)\n", text, flags=re.M)[1:]
    cells = dict(zip(parts[::2], parts[1::2], strict=True))
    return {f: _with_docstring(cell, f, stubs[f]) if kept else cell for f, cell in cells.items()}


def released_stubs(root: Path) -> dict[str, str]:
    released = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    return solution_cells(read_notebook(released), FUNCTIONS)


def write_class(root: Path, students: list[str] | None = None) -> dict[str, dict[str, str]]:
    """Write the class's notebooks into the course copy at `root`; returns student ->
    function -> cell."""
    stubs = released_stubs(root)
    released = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    written = {}
    for student in students or student_ids():
        cells = cells_of(student, stubs)
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(fill(released, cells), folder / f"{ASSIGNMENT}.ipynb")
        written[student] = cells
    return written


def _renamed(cell: str, rng: random.Random) -> str:
    """The cell with its local names renamed and reformatted by ast.unparse (its comments
    gone): the light disguise of a ring member."""
    tree = ast.parse(cell)
    graded = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    local = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names = {name: f"{name.lower()}_{rng.randrange(100)}" for name in local - graded}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return ast.unparse(tree) + "\n"


def ring(size: int, seed: int = 0) -> dict[str, dict[str, str]]:
    """A ring of `size` students around RING's code: ring-1 ... ring-N, each function taken
    from one of RING's four versions at random, then renamed and reformatted."""
    rng = random.Random(seed)
    stubs = {f: "" for f in FUNCTIONS}
    versions = [cells_of(s, stubs) for s in RING]
    return {
        f"ring-{i:02d}": {f: _renamed(rng.choice(versions)[f], rng) for f in FUNCTIONS}
        for i in range(1, size + 1)
    }


def write_cells(root: Path, cells: dict[str, dict[str, str]], assignment: str = ASSIGNMENT) -> None:
    """Write students' cells (student -> function -> cell) into the course copy at `root`."""
    released = root / "release" / assignment / f"{assignment}.ipynb"
    for student, handed in cells.items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(fill(released, handed), folder / f"{assignment}.ipynb")
