"""Scoring a free-text answer the way a teacher reads it: ideas in context, wrong ideas caught.

The score is provisional and for the instructor only (students see the final mark, given by
hand). It reads the answer sentence by sentence:

- a key idea (:class:`attention_course.quiz.model.Idea`) counts when one sentence holds one
  of its phrases and,
  when the idea says so, one of its ``together`` phrases too (ideas are scored together, not
  keyword by keyword), is not negated just before it ("does not attend to every token"), and is
  not said of a recurrent network ("In an RNN, every token ...") unless set against it
  ("Unlike an RNN, ..."); an idea whose ``needs`` is missing counts half;
- a known wrong idea (:class:`attention_course.quiz.model.WrongIdea`) costs its penalty when
  a sentence affirms
  it: not when the sentence speaks of recurrent networks before it, sets it against something
  ("instead of", "unlike", "not", ...) just before or after it, or has one of its ``unless``
  phrases just before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from attention_course.quiz.answer_core import words
from attention_course.quiz.model import Idea, Question, WrongIdea

# Words (as attention_course.quiz.answer_core.words spells them: lower case, no apostrophes).
NEGATIONS = ("not", "never", "no", "cannot", "cant", "doesnt", "dont", "isnt", "arent", "wont")
CONTRASTS = NEGATIONS + (
    "instead of",
    "rather than",
    "unlike",
    "without",
    "no longer",
    "avoid",
    "avoids",
    "avoided",
    "avoiding",
    "bypass",
    "bypasses",
    "skip",
    "skips",
    "removes",
    "removing",
    "eliminates",
    "whereas",
    "than",
)
RECURRENT = (
    "rnn",
    "rnns",
    "recurrent network",
    "recurrent networks",
    "recurrent neural",
    "recurrent model",
    "recurrent models",
    "lstm",
    "lstms",
    "gru",
    "grus",
    "seq2seq",
)
NEGATION_WINDOW = 4  # words before a phrase that can negate it
CONTRAST_WINDOW = 12  # words before (or after) a phrase that can set it against something


@dataclass
class FreeTextScore:
    points: float  # provisional, out of the question's points
    found: list[str] = field(default_factory=list)  # labels of the key ideas found
    missing: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)  # labels of the wrong ideas affirmed

    def review(self, out_of: float) -> list[str]:
        """Lines for the instructor: the provisional score and why."""
        lines = [f"Provisional score {self.points:g} of {out_of:g} (graded by hand)."]
        lines.append("Key ideas found: " + ("; ".join(self.found) or "none") + ".")
        if self.missing:
            lines.append("Missing: " + "; ".join(self.missing) + ".")
        if self.wrong:
            lines.append("Known wrong ideas: " + "; ".join(self.wrong) + ".")
        return lines


def sentences(text: str) -> list[list[str]]:
    """The answer's sentences, each as its list of words."""
    return [ws for part in re.split(r"[.!?;:\n]+", text) if (ws := words(part))]


def _at(ws: list[str], phrase: str) -> list[tuple[int, int]]:
    """(start, end) of every occurrence of `phrase` in the words `ws`."""
    target = words(phrase)
    n = len(target)
    return [(i, i + n) for i in range(len(ws) - n + 1) if n and ws[i : i + n] == target]


def _any_in(ws: list[str], phrases: tuple[str, ...], lo: int, hi: int) -> bool:
    lo, hi = max(0, lo), min(len(ws), hi)
    return any(lo <= s and e <= hi for p in phrases for s, e in _at(ws, p))


NOT_NEGATIONS = ("no matter", "not only", "not just")


def _negated(ws: list[str], start: int) -> bool:
    lo = max(0, start - NEGATION_WINDOW)
    if not _any_in(ws, NEGATIONS, lo, start):
        return False
    idioms = {s for p in NOT_NEGATIONS for s, _ in _at(ws, p)}
    return any(s not in idioms for p in NEGATIONS for s, e in _at(ws, p) if lo <= s and e <= start)


def _about_recurrence(ws: list[str], start: int) -> bool:
    """An RNN is named earlier in the sentence, and not set against ("unlike an RNN")."""
    return _any_in(ws, RECURRENT, 0, start) and not _any_in(ws, CONTRASTS, 0, start)


def _idea_in(idea: Idea, ws: list[str]) -> bool:
    for start, end in (hit for p in idea.phrases for hit in _at(ws, p)):
        if _negated(ws, start) or _about_recurrence(ws, start):
            continue
        if idea.together and not any(
            not _negated(ws, s) for p in idea.together for s, _ in _at(ws, p)
        ):
            continue
        if idea.contrast and not (
            _any_in(ws, CONTRASTS, start - CONTRAST_WINDOW, start)
            or _any_in(ws, CONTRASTS, end, end + CONTRAST_WINDOW)
        ):
            continue
        return True
    return False


def _affirmed(wrong: WrongIdea, ws: list[str]) -> bool:
    for start, end in (hit for p in wrong.phrases for hit in _at(ws, p)):
        if _any_in(ws, RECURRENT, 0, start):
            continue  # said of a recurrent network
        if _any_in(ws, CONTRASTS, start - CONTRAST_WINDOW, start):
            continue  # "instead of being passed step by step"
        if _any_in(ws, CONTRASTS, end, end + 4):
            continue  # "a hidden state is not needed"
        if _any_in(ws, wrong.unless, start - 3, start):
            continue
        return True
    return False


def score(question: Question, text: str) -> FreeTextScore:
    """The provisional score of `text` against the question's key and wrong ideas."""
    parts = sentences(text)
    found = [i for i in question.rubric if any(_idea_in(i, ws) for ws in parts)]
    labels = {i.label for i in found}
    points = sum(i.points if i.needs is None or i.needs in labels else i.points / 2 for i in found)
    wrong = [w for w in question.wrong_ideas if any(_affirmed(w, ws) for ws in parts)]
    points = max(0.0, min(question.points, points) - sum(w.penalty for w in wrong))
    return FreeTextScore(
        points=points,
        found=[i.label for i in found],
        missing=[i.label for i in question.rubric if i.label not in labels],
        wrong=[w.label for w in wrong],
    )
