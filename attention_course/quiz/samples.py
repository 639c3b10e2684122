"""Example answers of every question: right, wrong and badly formatted.

Used by the tests (every question is checked with each kind) and by demos; answers are in the
form a student would write them in a response file or a notebook answer cell. Each question type
says what they are (attention_course.quiz.types).
"""

from __future__ import annotations

from typing import Any

from attention_course.quiz import types
from attention_course.quiz.types.free_text import UNRELATED_TEXT
from attention_course.quiz.variants import Instance

__all__ = ["UNRELATED_TEXT", "correct_answer", "invalid_answer", "wrong_answer"]


def correct_answer(inst: Instance) -> Any:
    return types.of(inst.question).correct_answer(inst)


def wrong_answer(inst: Instance) -> Any:
    """A well-formed answer that earns nothing (a typical mistake where the bank has one)."""
    return types.of(inst.question).wrong_answer(inst)


def invalid_answer(inst: Instance) -> Any:
    """An answer in the wrong format for the question's type."""
    return types.of(inst.question).invalid_answer(inst)
