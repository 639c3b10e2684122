"""What normalisation takes away (names, formatting, comments, docstrings, the order of
independent statements, helpers called once) and what it keeps (dependent order, globals)."""

from __future__ import annotations

import pytest

from attention_course.similarity.normalise import CannotCompare, normalise

BASE = '''
def f(a, b):
    """Doc."""
    x = np.exp(a)
    y = np.log(b)
    return x + y * 2
'''


def same(one: str, other: str) -> bool:
    return normalise(one, "f").labels == normalise(other, "f").labels


def test_names_formatting_comments_and_docstrings_do_not_count():
    disguised = """
import numpy as np
def f(p, q):
    # first the exponential
    first = np.exp(
        p)
    second = np.log(q)   # then the log
    return first + second * 2
"""
    assert same(BASE, disguised)


def test_independent_statements_in_any_order_are_the_same():
    swapped = BASE.replace(
        "    x = np.exp(a)\n    y = np.log(b)", "    y = np.log(b)\n    x = np.exp(a)"
    )
    assert swapped != BASE and same(BASE, swapped)


def test_dependent_statements_keep_their_order_and_globals_their_names():
    chain = "def f(a):\n    x = a + 1\n    x = x * 2\n    return x\n"
    swapped = "def f(a):\n    x = x * 2\n    x = a + 1\n    return x\n"
    assert not same(chain, swapped)
    assert not same(BASE, BASE.replace("np.exp", "np.sin"))
    assert not same(BASE, BASE.replace("* 2", "* 3"))


def test_a_helper_called_once_is_inlined():
    helper = '''
def _tail(v, w):
    """helper"""
    t = np.log(w)
    return v + t * 2

def f(a, b):
    x = np.exp(a)
    return _tail(x, b)
'''
    inlined = "def f(a, b):\n    x = np.exp(a)\n    t = np.log(b)\n    return x + t * 2\n"
    assert same(helper, inlined)
    assert same(inlined, BASE)


def test_augmented_assignment_is_the_plain_one():
    assert same("def f(a):\n    a += 1\n    return a\n", "def f(a):\n    a = a + 1\n    return a\n")


def test_each_token_keeps_its_line():
    tokens = normalise(BASE, "f")
    assert tokens.lines[tokens.labels.index("np.log")] == 5


@pytest.mark.parametrize(
    "source, message",
    [("def f(:\n", "not valid Python (line 1)"), ("x = " + "1 + " * 20_000 + "1", "nested")],
)
def test_what_is_not_python_cannot_be_compared(source, message):
    with pytest.raises(CannotCompare, match=message.replace("(", r"\(").replace(")", r"\)")):
        normalise(source, "f")


def _corpus() -> list[tuple[str, str]]:
    """Varied real Python: modules of the standard library (every statement and expression
    form), the mistake catalogue and the realistic class."""
    import ast as ast_module
    import dataclasses
    import inspect
    import json.decoder
    import textwrap

    from tests.course import COURSE_ROOT
    from tests.similarity import realistic

    found = [(inspect.getsource(m), "") for m in (ast_module, dataclasses, textwrap, json.decoder)]
    for path in sorted((COURSE_ROOT / "tests" / "catalogue").glob("*/*.py")):
        found.append((path.read_text(), path.stem.split("__")[0]))
    for path in sorted(realistic.STUDENTS.glob("*.py")):
        found.append((path.read_text(), "softmax"))
    return found


def test_any_python_normalises_or_is_refused_with_a_reason():
    """Never another exception: a rewrite that cannot take a cell leaves it as it is."""
    import random

    rng = random.Random(43)
    for source, function in _corpus():
        assert normalise(source, function).labels
        lines = source.splitlines()
        for _ in range(3):  # the same code mangled: lines dropped or repeated
            i = rng.randrange(len(lines))
            mangled = lines[:i] + lines[i + rng.choice((1, 0)) :] + lines[i:i]
            try:
                normalise("\n".join(mangled), function)
            except CannotCompare:
                pass


def test_a_block_past_the_sorting_bound_keeps_its_order():
    """Sorting independent statements costs more than quadratic time in a block's length: a
    block of 150 independent statements (no solution of the course needs a tenth of it) is
    compared in the order written, so two orders of it differ; 20 of them are sorted."""

    def cell(n: int, order: list[int]) -> str:
        body = "".join(f"    v{i} = np.exp(a[{i}])\n" for i in order)
        read_twice = ", ".join(f"v{i}, v{i}" for i in range(n))  # nothing folded or dead
        return f"def f(a):\n{body}    return [{read_twice}]\n"

    for n, sorted_ in ((20, True), (150, False)):
        forward, backward = cell(n, list(range(n))), cell(n, list(range(n))[::-1])
        assert same(forward, backward) is sorted_, n
