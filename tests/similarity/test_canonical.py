"""Canonical forms: equivalent code normalises to the same tokens (numpy synonyms, method and
function forms, einsum by meaning, constants, identities, temporaries, dead code, statement
shapes), and code that computes something else does not."""

from __future__ import annotations

import pytest

from attention_course.similarity.canonical import einsum_meaning
from attention_course.similarity.normalise import normalise, signatures

DEFAULTS = signatures("def softmax(z, axis=-1):\n    pass\n")


def tokens(body: str) -> tuple[str, ...]:
    """The tokens of `def f(a, b, m=None):` with `body` (one statement per line)."""
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return normalise(f"def f(a, b, m=None):\n{lines}", "f", DEFAULTS).labels


SAME = {
    "np.e ** x is np.exp": ("return np.e ** a", "return np.exp(a)"),
    "math.e ** x too": ("return math.e ** a", "return np.exp(a)"),
    "np.power(np.e, x)": ("return np.power(np.e, a)", "return np.exp(a)"),
    "a method is the numpy function": (
        "return a.sum(axis=-1, keepdims=True)",
        "return np.sum(a, axis=-1, keepdims=True)",
    ),
    "a positional axis is named": ("return np.max(a, -1)", "return a.max(axis=-1)"),
    "amax is max": ("return np.amax(a, axis=0)", "return np.max(a, axis=0)"),
    "true_divide is /": ("return np.true_divide(a, b)", "return a / b"),
    "np.divide is /": ("return np.divide(a, b)", "return a / b"),
    "np.multiply is *": ("return np.multiply(a, b)", "return a * b"),
    "** 0.5 is sqrt": ("return a ** 0.5", "return np.sqrt(a)"),
    "math.sqrt is np.sqrt": ("return math.sqrt(a)", "return np.sqrt(a)"),
    "** -0.5 is 1 / sqrt": ("return b * a ** -0.5", "return b / np.sqrt(a)"),
    "x * (1 / y) is x / y": ("return b * (1.0 / np.sqrt(a))", "return b / np.sqrt(a)"),
    "matmul is @": ("return np.matmul(a, b)", "return a @ b"),
    "dot is @": ("return np.dot(a, b)", "return a @ b"),
    "a.dot(b) is @": ("return a.dot(b)", "return a @ b"),
    "moveaxis of two neighbours is swapaxes": (
        "return np.moveaxis(b, -1, -2)",
        "return np.swapaxes(b, -1, -2)",
    ),
    "swapaxes either way": ("return np.swapaxes(b, -2, -1)", "return b.swapaxes(-1, -2)"),
    ".T is np.transpose": ("return a.T", "return np.transpose(a)"),
    "an einsum that is a product is @": ('return np.einsum("ij,jk->ik", a, b)', "return a @ b"),
    "an einsum against the transpose": (
        'return np.einsum("...qd,...kd->...qk", a, b)',
        "return a @ np.swapaxes(b, -1, -2)",
    ),
    "einsum letters do not count": (
        'return np.einsum("...id,...d->...i", a, b)',
        'return np.einsum("...xy,...y->...x", a, b)',
    ),
    "an implicit einsum output": (
        'return np.einsum("ii", a)',
        'return np.einsum("jj->", a)',
    ),
    "constants are evaluated": ("return a * (2 * 0.5)", "return a"),
    "identities go": ("return (a + 0) * 1.0 / 1", "return a"),
    "commutative operands in one order": ("return b * a + 1", "return 1 + a * b"),
    "comparisons one way": ("return a > b", "return b < a"),
    "x == True is x": ("return np.where(m == True, a, b)", "return np.where(m, a, b)"),
    "np.where of a negation swaps": ("return np.where(~m, a, b)", "return np.where(m, b, a)"),
    "logical_not is ~": ("return np.logical_not(m)", "return ~m"),
    "-inf spelt any way": ('return float("-inf")', "return -np.inf"),
    "np.NINF": ("return np.NINF", "return -math.inf"),
    "np.newaxis is None": ("return a[:, np.newaxis]", "return a[:, None]"),
    "dtypes spelt one way": (
        "return np.array(a, dtype=np.float64)",
        "return np.asarray(a, dtype=float)",
    ),
    "astype is asarray with a dtype": ("return a.astype(bool)", "return np.asarray(a, dtype=bool)"),
    "keywords in one order": (
        "return np.nan_to_num(a, posinf=0.0, neginf=0.0)",
        "return np.nan_to_num(a, neginf=0.0, posinf=0.0)",
    ),
    "keepdims=1": (
        "return np.sum(a, axis=0, keepdims=1)",
        "return np.sum(a, axis=0, keepdims=True)",
    ),
    "np.full of True": ("return np.full((a, a), True)", "return np.ones((a, a), dtype=bool)"),
    "range(0, n)": ("return [i for i in range(0, a)]", "return [i for i in range(a)]"),
    "a course function's default left out": (
        "return softmax(a, axis=-1)",
        "return softmax(a)",
    ),
    "return [x, y] is return x, y": ("return [a, b]", "return a, b"),
    "a temporary read once is folded": ("t = a @ b\nreturn t * 2", "return (a @ b) * 2"),
    "a chain of reassignments": (
        "a = np.asarray(a)\na = a - 1\nreturn np.exp(a)",
        "return np.exp(np.asarray(a) - 1)",
    ),
    "a name for a constant": ("scale = 2.0\nreturn a * scale", "return a * 2.0"),
    "asserts go": ("assert a.ndim == 2, 'two axes'\nreturn a", "return a"),
    "prints go": ("print(a.shape)\nreturn a", "return a"),
    "a store nobody reads goes": ("unused = np.zeros(3)\nreturn a", "return a"),
    "a store overwritten before it is read": (
        "t = np.zeros(3)\nt = a + b\nreturn t",
        "return a + b",
    ),
    "code after a return goes": ("return a\nb = 1", "return a"),
    "if False: goes": ("if False:\n    a = a + 1\nreturn a", "return a"),
    "a debug flag": ("debug = False\nif debug:\n    print(a)\nreturn a", "return a"),
    "if not c: A else: B": (
        "if m is None:\n    c = a\nelse:\n    c = b\nreturn c",
        "if m is not None:\n    c = b\nelse:\n    c = a\nreturn c",
    ),
    "a conditional expression that keeps itself": (
        "a = np.where(m, 0, a) if m is not None else a\nreturn a",
        "if m is not None:\n    a = np.where(m, 0, a)\nreturn a",
    ),
    "errstate that only hides warnings": (
        "with np.errstate(invalid='ignore'):\n    c = a / b\nreturn c",
        "return a / b",
    ),
    "a try that only raises again": (
        "try:\n    c = a @ b\nexcept ValueError:\n    raise ValueError('shapes')\nreturn c",
        "return a @ b",
    ),
    "a tuple assignment": (
        "c, d = a + 1, b + 1\nreturn c * d",
        "return (a + 1) * (b + 1)",
    ),
    "a counted while loop is a for loop": (
        "i = 0\nwhile i < a:\n    b[i] = i\n    i += 1\nreturn b",
        "for i in range(a):\n    b[i] = i\nreturn b",
    ),
    "a lambda is a helper": ("g = lambda x: x @ b\nreturn g(a), g(m)", "return a @ b, m @ b"),
    "an annotation does not count": ("c: np.ndarray = a + b\nreturn c", "return a + b"),
}

DIFFERENT = {
    "exp is not log": ("return np.exp(a)", "return np.log(a)"),
    "a different constant": ("return a * 2", "return a * 3"),
    "** 2 is not sqrt": ("return a ** 2", "return np.sqrt(a)"),
    "moveaxis of far axes is not swapaxes": (
        "return np.moveaxis(b, 0, -1)",
        "return np.swapaxes(b, 0, -1)",
    ),
    ".T is not swapaxes of the last two (they differ past 2-D)": (
        "return a.T",
        "return np.swapaxes(a, -1, -2)",
    ),
    "an einsum of another meaning": (
        'return np.einsum("ij,jk->ik", a, b)',
        'return np.einsum("ij,jk->ki", a, b)',
    ),
    "a sum over another axis": ("return np.sum(a, axis=0)", "return np.sum(a, axis=1)"),
    "a course function's argument that is not its default": (
        "return softmax(a, axis=0)",
        "return softmax(a)",
    ),
    "errstate that raises changes the result": (
        "with np.errstate(over='raise'):\n    c = np.exp(a)\nreturn c",
        "return np.exp(a)",
    ),
    "a try that recovers": (
        "try:\n    c = a @ b\nexcept ValueError:\n    c = a\nreturn c",
        "return a @ b",
    ),
    "a temporary read twice stays": ("t = a @ b\nreturn t * t", "return (a @ b) * (a @ b)"),
    "a mutated array is not folded": (
        "t = np.zeros(3)\nt[0] = a\nreturn t",
        "return np.zeros(3)",
    ),
    "a store that is read stays": ("c = a + 1\nreturn c + b", "return b"),
}


@pytest.mark.parametrize("name", SAME)
def test_equivalent_code_normalises_the_same(name):
    one, other = SAME[name]
    assert tokens(one) == tokens(other), name


@pytest.mark.parametrize("name", DIFFERENT)
def test_code_that_computes_something_else_does_not(name):
    one, other = DIFFERENT[name]
    assert tokens(one) != tokens(other), name


def test_einsum_subscripts_are_read_for_their_meaning():
    assert einsum_meaning("...qd,...kd->...qk", 2) == "...ab,...cb->...ac"
    assert einsum_meaning("ij->", 1) == "ab->"
    assert einsum_meaning("ii", 1) == "aa->"  # numpy's implicit output: nothing left
    assert einsum_meaning("ij,jk", 2) == "ab,bc->ac"
    assert einsum_meaning("not an einsum!", 1) is None
    assert einsum_meaning("ij,jk->ik", 3) is None  # three operands for two terms


def test_numpy_under_another_name_is_np():
    plain = normalise("def f(a):\n    return np.exp(a)\n", "f").labels
    for cell in (
        "import numpy\ndef f(a):\n    return numpy.exp(a)\n",
        "import numpy as xp\ndef f(a):\n    return xp.exp(a)\n",
        "from numpy import exp\ndef f(a):\n    return exp(a)\n",
    ):
        assert normalise(cell, "f").labels == plain, cell


def test_a_cell_the_rewrites_cannot_take_is_still_compared(monkeypatch):
    from attention_course.similarity import normalise as module

    def broken(*args, **kwargs):
        raise AttributeError("a rewrite's own fault")

    monkeypatch.setattr(module, "fold_temporaries", broken)
    found = normalise("def f(a):\n    t = a + 1\n    return t\n", "f").labels
    assert found and "np" not in found  # compared as it is, temporaries unfolded
    assert found.count("V") >= 3


def test_a_cell_past_the_bound_is_compared_without_the_canonical_forms():
    """What a long (hostile) cell costs stays bounded: past CANONICAL_NODES syntax nodes it
    is normalised plainly (names, formatting, comments, order), no rewrite, no inlining."""
    from attention_course.similarity import normalise as module

    pad = "".join(f"    c{i} = a + {i}\n" for i in range(module.CANONICAL_NODES // 5))
    short = "def f(a):\n    return np.e ** a\n"
    long = f"def f(a):\n{pad}    return np.e ** a\n"
    assert "np.exp" in normalise(short, "f").labels
    assert "np.exp" not in normalise(long, "f").labels and "Pow" in normalise(long, "f").labels
