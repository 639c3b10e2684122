"""Grading one answer with the instructor's bank: status, score, feedback, misconceptions."""

from __future__ import annotations

from dataclasses import dataclass, field

from attention_course.quiz import free_text
from attention_course.quiz.answer_core import InvalidAnswer, canonical, parse_answer
from attention_course.quiz.variants import Instance

STATUSES = ("correct", "partial", "wrong", "invalid", "unanswered", "needs_review")
RECORDED = "Answer recorded: free-text answers are marked by hand by your instructor."


@dataclass
class Result:
    """The outcome of one answer. ``fraction`` is provisional when status is needs_review.

    ``feedback`` is what the student may see; ``review`` holds notes for the instructor only
    (the provisional score of a free-text answer and why)."""

    question: str
    status: str
    fraction: float
    points: float
    feedback: list[str] = field(default_factory=list)
    misconceptions: list[str] = field(default_factory=list)
    answer: str = ""  # canonical text of a well-formed answer, for item analysis
    review: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return round(self.fraction * self.points, 6)


def grade(instance: Instance, raw: object) -> Result:
    """Grade ``raw`` (as the student wrote it) against ``instance``'s key."""
    q = instance.question

    def result(status: str, fraction: float, feedback: list[str], **kw: object) -> Result:
        return Result(q.id, status, fraction, q.points, [f for f in feedback if f], **kw)

    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return result("unanswered", 0.0, ["No answer given."])
    try:
        value = parse_answer(q.type, raw, [c.id for c in q.choices], q.items)
    except InvalidAnswer as exc:
        return result("invalid", 0.0, [f"Invalid answer: {exc}."])
    text = canonical(q.type, value)
    correct_note = q.explanation or "Correct."
    default_label = [q.misconception] if q.misconception else []

    if q.type == "free_text":
        scored = free_text.score(q, value)
        return result(
            "needs_review",
            scored.points / q.points,
            [RECORDED],
            answer=text,
            review=scored.review(q.points),
        )

    if q.type == "single_choice":
        choice = q.choice(value)
        if value == instance.key:
            return result("correct", 1.0, [choice.feedback, correct_note], answer=text)
        labels = [choice.misconception] if choice.misconception else default_label
        return result(
            "wrong", 0.0, [choice.feedback or "Not quite."], misconceptions=labels, answer=text
        )

    if q.type in ("multiple_select", "matching"):
        if q.type == "multiple_select":
            picked = [q.choice(cid) for cid in sorted(value)]
            right = [c for c in picked if c.correct]
            wrong = [c for c in picked if not c.correct]
            # the right picks are among the key's choices, so this is at most 1
            fraction = max(0.0, (len(right) - len(wrong)) / len(instance.key))
            exact = set(value) == set(instance.key)
        else:
            right = [item for item, opt in value.items() if instance.key[item] == opt]
            wrong = [q.choice(opt) for item, opt in value.items() if instance.key[item] != opt]
            fraction = len(right) / len(q.items)
            exact = len(right) == len(q.items)
        if exact:
            return result("correct", 1.0, [correct_note], answer=text)
        labels = [c.misconception for c in wrong if c.misconception] or default_label
        feedback = [c.feedback for c in wrong] or ["Not quite: something is missing."]
        status = "partial" if fraction > 0 else "wrong"
        return result(status, fraction, feedback, misconceptions=labels, answer=text)

    # numeric and shape
    if q.type == "numeric":
        hit = q.tolerance.accepts(value, instance.key)
    else:
        hit = value == instance.key
    if hit:
        return result("correct", 1.0, [correct_note], answer=text)
    for reaction in instance.wrong_answers:
        same = (
            q.tolerance.accepts(value, reaction.value)
            if q.type == "numeric"
            else value == reaction.value
        )
        if same:
            labels = [reaction.misconception] if reaction.misconception else default_label
            return result(
                "wrong",
                0.0,
                [reaction.feedback or "Not quite."],
                misconceptions=labels,
                answer=text,
            )
    feedback = ["Not quite."]
    if q.type == "shape" and len(value) != len(instance.key):
        feedback = [f"Your shape has {len(value)} dimensions; the answer has {len(instance.key)}."]
    return result("wrong", 0.0, feedback, misconceptions=default_label, answer=text)
