"""The question bank as Python objects (reading.py makes them from a bank's plain data).

Reading never raises on a mistake in the data: each mistake becomes a :class:`Problem` (file,
question id, reason) so that ``attention-course quiz validate`` can list them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_course import settings

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Problem:
    """One mistake in a bank file."""

    path: str
    question: str | None
    reason: str

    def __str__(self) -> str:
        where = f"question {self.question!r}: " if self.question else ""
        return f"{self.path}: {where}{self.reason}"


@dataclass(frozen=True)
class Choice:
    """A choice (single/multiple choice) or a right-hand option (matching)."""

    id: str
    text: str
    correct: bool = False
    feedback: str = ""
    misconception: str | None = None


@dataclass(frozen=True)
class WrongAnswer:
    """A typical wrong numeric or shape answer, fixed or computed by a formula."""

    misconception: str | None
    feedback: str
    value: float | Shape | None = None
    formula: str | None = None


@dataclass(frozen=True)
class Tolerance:
    """How far a numeric answer may be from the key: absolute or relative (a fraction)."""

    abs: float | None = None
    rel: float | None = None

    def _relative(self) -> float:
        if self.rel is None:  # reading gives every tolerance abs or rel
            raise ValueError("a tolerance needs abs or rel")
        return float(self.rel)

    def half_width(self, key: float) -> float:
        return self.abs if self.abs is not None else self._relative() * abs(key)

    def bounds(self, key: float) -> tuple[float, float]:
        """The closed interval of accepted answers, [key - half width, key + half width], in
        floating point as Moodle computes it; every export carries these bounds."""
        half = self.half_width(key)
        return key - half, key + half

    def accepts(self, given: float, key: float) -> bool:
        low, high = self.bounds(key)
        return low <= given <= high

    def describe(self) -> str:
        return f"±{self.abs:g}" if self.abs is not None else f"±{100 * self._relative():g}%"


@dataclass(frozen=True)
class Idea:
    """A key idea of a free-text answer, worth ``points``.

    Found in a sentence that holds one of ``phrases`` (not negated just before it) and, when
    given, also one of ``together``; with ``contrast`` the sentence must set it against
    something ("instead of", "unlike", "not", ...). Without the idea named by ``needs`` it
    counts half. With ``by``, one of those phrases (who does it: "attention", "each token")
    must come before the phrase in its sentence; with ``follows``, it must be said as a
    consequence of the idea it needs ("..., so ..."), or it counts half and the answer is
    flagged for the instructor. See quiz/free_text.py."""

    label: str
    phrases: tuple[str, ...]
    points: float = 1.0
    together: tuple[str, ...] = ()
    contrast: bool = False
    needs: str | None = None
    by: tuple[str, ...] = ()
    follows: bool = False


@dataclass(frozen=True)
class WrongIdea:
    """A known wrong idea: a sentence that affirms one of ``phrases`` costs ``penalty`` points.

    Not affirmed when the sentence speaks of recurrent networks before it, or sets it against
    something ("instead of", "unlike", "not", ...), or one of ``unless`` comes just before it."""

    label: str
    phrases: tuple[str, ...]
    penalty: float = 1.0
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    section: str
    prompt: str
    points: float = settings.DEFAULT_POINTS
    explanation: str = ""
    choices: tuple[Choice, ...] = ()
    answer: Any = None
    template: str | None = None
    tolerance: Tolerance | None = None
    wrong_answers: tuple[WrongAnswer, ...] = ()
    items: tuple[str, ...] = ()
    rubric: tuple[Idea, ...] = ()
    wrong_ideas: tuple[WrongIdea, ...] = ()
    sample_answer: str = ""
    misconception: str | None = None  # what a wrong answer with no more specific label shows

    @property
    def templated(self) -> bool:
        return self.template is not None

    def choice(self, choice_id: str) -> Choice:
        """The choice (or matching option) ``choice_id``; parsed answers name only these."""
        for c in self.choices:
            if c.id == choice_id:
                return c
        raise KeyError(f"question {self.id!r} has no choice {choice_id!r}")


@dataclass(frozen=True)
class Bank:
    quiz: str
    title: str
    source: str
    path: Path
    sections: dict[str, str]
    parameters: dict[str, list]
    misconceptions: dict[str, str]
    questions: tuple[Question, ...]
    variant_count: int = settings.VARIANT_COUNT
    description: str = ""

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)

    @property
    def max_score(self) -> float:
        return sum(q.points for q in self.questions)
