"""Example answers of every question: right, wrong and badly formatted.

Used by the tests (every question is checked with each kind) and by demos; answers are in the
form a student would write them in a response file or a notebook answer cell.
"""

from __future__ import annotations

from typing import Any

from attention_course.quiz.variants import Instance

UNRELATED_TEXT = "I think it is mostly about the colours of the plots and the font of the axes."


def correct_answer(inst: Instance) -> Any:
    q = inst.question
    if q.type == "multiple_select":
        return sorted(inst.key)
    if q.type == "shape":
        return tuple(inst.key)
    if q.type == "free_text":
        return q.sample_answer
    if q.type == "numeric" and float(inst.key).is_integer():
        return int(inst.key)
    return inst.key


def wrong_answer(inst: Instance) -> Any:
    """A well-formed answer that earns nothing (a typical mistake where the bank has one)."""
    q = inst.question
    if q.type == "single_choice":
        return next(c.id for c in q.choices if not c.correct)
    if q.type == "multiple_select":
        return [next(c.id for c in q.choices if not c.correct)]
    if q.type == "matching":
        options = [o.id for o in q.choices]
        return {
            item: next(o for o in options[n:] + options[:n] if o != inst.key[item])
            for n, item in enumerate(q.items)
        }
    if q.type in ("numeric", "shape"):
        if inst.wrong_answers:
            value = inst.wrong_answers[0].value
        elif q.type == "numeric":
            value = 2 * inst.key + 1
        else:
            value = tuple(v + 1 for v in inst.key)
        if q.type == "shape":
            return tuple(value)
        return int(value) if float(value).is_integer() else value
    return UNRELATED_TEXT


def invalid_answer(inst: Instance) -> Any:
    """An answer in the wrong format for the question's type."""
    q = inst.question
    if q.type == "matching":
        return {q.items[0]: q.choices[0].id}  # the other items are missing
    return {
        "single_choice": "the second one",
        "multiple_select": ["a", "a"],
        "numeric": "about a hundred",
        "shape": "six by eight",
        "free_text": 42,  # not text
    }[q.type]
