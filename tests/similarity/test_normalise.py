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
