"""Reading a bank: plain data (a YAML or JSON mapping) into the objects of model.py, each
question read by its type's module (quiz/types/), every problem collected."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_course import settings
from attention_course.quiz import types
from attention_course.quiz.model import (
    Bank,
    Choice,
    Problem,
    Question,
    WrongAnswer,
)


@dataclass
class _Reader:
    """Turns one bank mapping into a :class:`Bank`, noting every problem it meets."""

    path: Path
    problems: list[Problem] = field(default_factory=list)

    def problem(self, question: str | None, reason: str) -> None:
        self.problems.append(Problem(str(self.path), question, reason))

    # -- helpers -------------------------------------------------------------------------------

    def text(self, data: dict, key: str, qid: str | None, required: bool = True) -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.problem(qid, f"missing {key!r}")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.problem(qid, f"{key!r} must be a non-empty string")
            return ""
        return value.strip()

    def number(self, value: Any, qid: str | None, what: str) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(qid, f"{what} must be a finite number, not {value!r}")
            return None
        if not math.isfinite(value):
            self.problem(qid, f"{what} must be a finite number, not {value!r}")
            return None
        return float(value)

    def label(self, data: dict, qid: str) -> str | None:
        value = data.get("misconception")
        if value is not None and not isinstance(value, str):
            self.problem(qid, f"misconception label must be a string, not {value!r}")
            return None
        return value

    # -- bank ----------------------------------------------------------------------------------

    def bank(self, data: Any) -> Bank | None:
        if not isinstance(data, dict):
            self.problem(None, "a bank must be a mapping with 'quiz', 'title' and 'questions'")
            return None
        quiz = self.text(data, "quiz", None)
        if quiz and quiz != self.path.stem and self.path.suffix in settings.BANK_SUFFIXES:
            self.problem(None, f"quiz id {quiz!r} does not match the file name {self.path.name!r}")
        title = self.text(data, "title", None)
        source = self.text(data, "source", None)
        sections = self.string_map(data.get("sections"), "sections", required=True)
        misconceptions = self.string_map(data.get("misconceptions"), "misconceptions")
        parameters = self.parameters(data.get("parameters"))
        variant_count = data.get("variant_count", settings.VARIANT_COUNT)
        if type(variant_count) is not int or variant_count < 1:
            self.problem(None, f"variant_count must be a positive integer, not {variant_count!r}")
            variant_count = settings.VARIANT_COUNT
        raw_questions = data.get("questions")
        if not isinstance(raw_questions, list) or not raw_questions:
            self.problem(None, "'questions' must be a non-empty list")
            raw_questions = []
        questions = []
        seen: set[str] = set()
        for index, raw in enumerate(raw_questions, 1):
            question = self.question(raw, index)
            if question is None:
                continue
            if question.id in seen:
                self.problem(question.id, "duplicate question id")
                continue
            seen.add(question.id)
            questions.append(question)
        return Bank(
            quiz=quiz,
            title=title,
            source=source,
            path=self.path,
            sections=sections,
            parameters=parameters,
            misconceptions=misconceptions,
            questions=tuple(questions),
            variant_count=variant_count,
            description=self.text(data, "description", None, required=False),
        )

    def string_map(self, value: Any, what: str, required: bool = False) -> dict[str, str]:
        if value is None and not required:
            return {}
        if not isinstance(value, dict) or not value:
            self.problem(None, f"{what!r} must be a non-empty mapping of names to text")
            return {}
        out = {}
        for key, text in value.items():
            if not isinstance(text, str) or not text.strip():
                self.problem(None, f"{what}: {key!r} must map to a non-empty string")
            else:
                out[str(key)] = text.strip()
        return out

    def parameters(self, value: Any) -> dict[str, list]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(None, "'parameters' must be a mapping of names to {choices: [...]}")
            return {}
        out: dict[str, list] = {}
        for name, spec in value.items():
            if not str(name).isidentifier():
                self.problem(None, f"parameter name {name!r} is not an identifier")
                continue
            choices = spec.get("choices") if isinstance(spec, dict) else None
            if isinstance(spec, dict) and "range" in spec:
                lo_hi = spec["range"]
                step = spec.get("step", 1)
                if (
                    isinstance(lo_hi, list)
                    and len(lo_hi) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in [*lo_hi, step])
                    and step > 0
                    and lo_hi[0] <= lo_hi[1]
                ):
                    choices = list(range(lo_hi[0], lo_hi[1] + 1, step))
                else:
                    self.problem(None, f"parameter {name!r}: range must be [low, high] of integers")
                    continue
            if (
                not isinstance(choices, list)
                or not choices
                or not all(isinstance(c, int | float) and not isinstance(c, bool) for c in choices)
            ):
                self.problem(None, f"parameter {name!r} needs 'choices': a list of numbers")
                continue
            out[str(name)] = choices
        return out

    # -- questions -----------------------------------------------------------------------------

    def question(self, raw: Any, index: int) -> Question | None:
        if not isinstance(raw, dict):
            self.problem(f"#{index}", "a question must be a mapping")
            return None
        qid = raw.get("id")
        if not isinstance(qid, str) or not qid.isidentifier():
            self.problem(f"#{index}", f"missing or invalid 'id' {qid!r} (use a Python identifier)")
            return None

        qtype = types.get(raw.get("type"))
        if qtype is None:
            known = ", ".join(types.names())
            self.problem(qid, f"unknown type {raw.get('type')!r} (known: {known})")
            return None
        common: dict[str, Any] = {
            "id": qid,
            "type": qtype.name,
            "section": self.text(raw, "section", qid),
            "prompt": self.text(raw, "prompt", qid),
            "explanation": self.text(raw, "explanation", qid, required=False),
            "misconception": self.label(raw, qid),
        }
        points = raw.get("points", settings.DEFAULT_POINTS)
        value = self.number(points, qid, "points")
        if value is not None and (value <= 0 or (2 * value) != int(2 * value)):
            self.problem(qid, f"points must be a positive multiple of 0.5, not {points!r}")
        elif value is not None:
            common["points"] = value
        extra = qtype.read(self, raw, qid)
        return None if extra is None else Question(**common, **extra)

    def choices(self, raw: dict, qid: str, key: str = "choices") -> tuple[Choice, ...]:
        items = raw.get(key)
        if not isinstance(items, list) or len(items) < 2:
            self.problem(qid, f"{key!r} must be a list of at least two entries")
            return ()
        out, seen = [], set()
        for item in items:
            if not isinstance(item, dict):
                self.problem(qid, f"each of {key!r} must be a mapping with 'id' and 'text'")
                continue
            cid = item.get("id")
            if not isinstance(cid, str) or not cid.strip() or cid != cid.strip():
                self.problem(qid, f"choice id {cid!r} must be a non-empty string without spaces")
                continue
            if cid.casefold() in seen:
                self.problem(qid, f"duplicate choice id {cid!r}")
                continue
            seen.add(cid.casefold())
            correct = item.get("correct", False)
            if not isinstance(correct, bool):
                self.problem(qid, f"choice {cid!r}: 'correct' must be true or false")
                correct = False
            out.append(
                Choice(
                    id=cid,
                    text=self.text(item, "text", qid),
                    correct=correct,
                    feedback=self.text(item, "feedback", qid, required=False),
                    misconception=self.label(item, qid),
                )
            )
        return tuple(out)

    def wrong_answers(
        self, raw: dict, qid: str, read_value: Callable[[Any, str], Any]
    ) -> tuple[WrongAnswer, ...]:
        """Typical wrong answers, each fixed value read by ``read_value(value, qid)``."""
        items = raw.get("wrong_answers", [])
        if not isinstance(items, list):
            self.problem(qid, "'wrong_answers' must be a list")
            return ()
        out = []
        for item in items:
            if not isinstance(item, dict) or ("value" in item) == ("formula" in item):
                self.problem(qid, "each wrong answer needs exactly one of 'value' or 'formula'")
                continue
            value = item.get("value")
            if value is not None:
                value = read_value(value, qid)
            formula = item.get("formula")
            if formula is not None and not isinstance(formula, str):
                self.problem(qid, f"wrong answer formula must be a name, not {formula!r}")
                continue
            out.append(
                WrongAnswer(
                    misconception=self.label(item, qid),
                    feedback=self.text(item, "feedback", qid, required=False),
                    value=value,
                    formula=formula,
                )
            )
        return tuple(out)

    def key_or_template(self, raw: dict, qid: str) -> tuple[Any, str | None] | None:
        has_answer, template = "answer" in raw, raw.get("template")
        if has_answer and template is not None:
            self.problem(qid, "give either 'answer' or 'template', not both")
            return None
        if not has_answer and template is None:
            self.problem(qid, "no answer: give 'answer' or a 'template' formula name")
            return None
        if template is not None and not isinstance(template, str):
            self.problem(qid, f"'template' must be a formula name, not {template!r}")
            return None
        return raw.get("answer"), template

    def phrases(self, raw: Any, qid: str, what: str, required: bool = True) -> tuple[str, ...]:
        if raw is None and not required:
            return ()
        if (
            not isinstance(raw, list)
            or not raw
            or not all(isinstance(p, str) and p.strip() for p in raw)
        ):
            self.problem(qid, f"{what} needs a non-empty list of phrases")
            return ()
        return tuple(p.strip() for p in raw)


def read_bank(path: Path, data: Any) -> tuple[Bank | None, list[Problem]]:
    """Build a bank from already-parsed data; return it with the problems found."""
    reader = _Reader(path)
    bank = reader.bank(data)
    return bank, reader.problems
