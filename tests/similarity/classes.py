"""Test classes for the similarity report: independent correct implementations (the catalogue's
correct variants and the instructor's solution, each by a different student) and disguised
copies of some of them, written as real notebooks in a copy of the course."""

from __future__ import annotations

from pathlib import Path

import nbformat

from attention_course.classgrade import nbgrader_api
from attention_course.cli.samples import _solution_sources, fill
from tests.course import COURSE_ROOT

CATALOGUE = COURSE_ROOT / "tests" / "catalogue" / "correct"
ASSIGNMENT = "attention_basics"


def variant(name: str) -> str:
    """A catalogue file as a student's cell (its header comments are the student's too)."""
    return (CATALOGUE / f"{name}.py").read_text()


# Disguised copies: (student, function, the student it copies, the cell).
COPIES = {
    # renamed, reformatted, comments changed
    ("copier-rename", "softmax", "indep-1"): '''\
def softmax(z, axis=-1):
    """Numerically stable softmax."""
    # make it a float array first
    scores = np.asarray(z,
                        dtype=np.float64)
    biggest = np.max(scores, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        centred = scores - biggest   # shift
    ex = np.exp(np.nan_to_num(centred, nan=-np.inf))
    denom = ex.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = ex / denom
    return np.nan_to_num(result, nan=0.0)
''',
    # statements reordered and renamed
    ("copier-reorder", "scaled_dot_product_attention", "indep-2"): """\
def scaled_dot_product_attention(Q, K, V, mask=None):
    width = Q.shape[-1]              # d_k first
    perm = list(range(K.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    s = np.matmul(Q, np.transpose(K, perm)) / np.sqrt(width)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    w = softmax(s)
    out = np.matmul(w, V)
    return out, w
""",
    # a helper of the original inlined ... (the original, indep-helper, has one)
    ("copier-inline", "softmax", "indep-helper"): """\
def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    top = np.max(z, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.sum(np.exp(z - top), axis=axis, keepdims=True)
    log_total = top + np.log(np.where(total > 0, total, 1.0))
    return np.exp(z - log_total)
""",
    # everything at once: renamed, reformatted, comments, reordered
    ("copier-all", "scaled_dot_product_attention", "indep-1"): """\
def scaled_dot_product_attention(Q, K, V, mask=None):
    # attention scores, scaled
    sc = np.einsum("...qd,...kd->...qk",
                   Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:   # hide forbidden keys
        sc = np.where(mask, -np.inf, sc)
    p = softmax(sc, axis=-1)
    return np.einsum("...qk,...kv->...qv", p, V), p
""",
}

# ... its original: the catalogue's log-sum-exp softmax with its last steps in a helper.
HELPER_SOFTMAX = '''\
def _log_normaliser(m, s):
    """log of the sum, shifted back."""
    return m + np.log(np.where(s > 0, s, 1.0))


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    s = np.sum(np.exp(z - m), axis=axis, keepdims=True)
    lse = _log_normaliser(m, s)
    return np.exp(z - lse)
'''


def independent_cells(root: Path) -> dict[str, dict[str, str]]:
    """student -> function -> cell, for the students who wrote their own code."""
    return {
        "indep-instructor": _solution_sources(ASSIGNMENT, root),
        "indep-1": {
            "softmax": variant("softmax__errstate_guards"),
            "scaled_dot_product_attention": variant("scaled_dot_product_attention__einsum"),
            "causal_mask": variant("causal_mask__index_compare"),
            "create_qkv": variant("create_qkv__einsum"),
        },
        "indep-2": {
            "scaled_dot_product_attention": variant(
                "scaled_dot_product_attention__matmul_transpose"
            ),
            "causal_mask": variant("causal_mask__triu_astype"),
        },
        "indep-3": {
            "scaled_dot_product_attention": variant("scaled_dot_product_attention__returns_list")
        },
        "indep-helper": {"softmax": HELPER_SOFTMAX},
    }


def copy_course(into: Path) -> Path:
    """A copy of the course's parts (no student data) in `into`."""
    return nbgrader_api.copy_course(into, COURSE_ROOT)


def write_student(root: Path, student: str, cells: dict[str, str], assignment=ASSIGNMENT) -> Path:
    folder = root / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    nbformat.write(fill(root / "release" / assignment / f"{assignment}.ipynb", cells), path)
    return path


def build_class(root: Path) -> dict[tuple[str, str], str]:
    """Write the class; returns (student, function) -> the student whose code it is."""
    origin = {}
    for student, cells in independent_cells(root).items():
        write_student(root, student, cells)
        origin.update({(student, f): student for f in cells})
    for (student, function, source), cell in COPIES.items():
        write_student(root, student, {function: cell})
        origin[(student, function)] = source
    return origin
