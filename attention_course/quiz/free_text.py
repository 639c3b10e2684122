"""Scoring a free-text answer the way a teacher reads it: ideas in context, wrong ideas caught.

The score is provisional and for the instructor only (students see the final mark, given by
hand). It reads the answer sentence by sentence:

- a key idea (:class:`attention_course.quiz.model.Idea`) counts when one sentence holds one
  of its phrases and,
  when the idea says so, one of its ``together`` phrases within a few words of it (ideas are
  scored as relations, not keyword by keyword) and one of its ``by`` phrases before it (who
  does it: "attention", "each token"), is not negated just before it ("does not attend to
  every token"), and is not said of a recurrent network ("In an RNN, every token ...") unless
  set against it ("Unlike an RNN, ..."); an idea whose ``needs`` is missing counts half, and
  so does one that ``follows`` from the idea it needs but is not said as its consequence
  ("..., so ...");
- a known wrong idea (:class:`attention_course.quiz.model.WrongIdea`) costs its penalty when
  a sentence affirms
  it: not when the sentence speaks of recurrent networks before it, sets it against something
  ("instead of", "unlike", "not", ...) just before or after it, or has one of its ``unless``
  phrases just before it.

An answer it is unsure of is flagged for the instructor and gets at most half the points,
never the full score: one with a half-counted idea, one that affirms a wrong idea beside the
key ones, or one that gives a reason ("because ...") in which no key idea is found.
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
CONSEQUENCES = (
    "so",
    "therefore",
    "thus",
    "hence",
    "which means",
    "this means",
    "that means",
    "meaning",
    "as a result",
    "which is why",
    "that is why",
)
REASONS = ("because", "since", "due to", "thanks to", "owing to")
NEGATION_WINDOW = 4  # words before a phrase that can negate it
CONTRAST_WINDOW = 12  # words before (or after) a phrase that can set it against something
RELATION_WINDOW = 6  # words at most between an idea's phrase and its `together` phrase
UNSURE_SHARE = 0.5  # the most an answer the scorer is unsure of gets, as a share of the points


@dataclass
class FreeTextScore:
    points: float  # provisional, out of the question's points
    found: list[str] = field(default_factory=list)  # labels of the key ideas found
    missing: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)  # labels of the wrong ideas affirmed
    unsure: list[str] = field(default_factory=list)  # why the score may be wrong: read it

    def review(self, out_of: float) -> list[str]:
        """Lines for the instructor: the provisional score and why."""
        lines = [f"Provisional score {self.points:g} of {out_of:g} (graded by hand)."]
        lines.append("Key ideas found: " + ("; ".join(self.found) or "none") + ".")
        if self.missing:
            lines.append("Missing: " + "; ".join(self.missing) + ".")
        if self.wrong:
            lines.append("Known wrong ideas: " + "; ".join(self.wrong) + ".")
        if self.unsure:
            lines.append(
                "Unsure, please read it (so at most half the points): "
                + "; ".join(self.unsure)
                + "."
            )
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


def _gap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Words between two spans (0 when they touch or overlap)."""
    return max(0, b[0] - a[1], a[0] - b[1])


def _idea_hits(idea: Idea, ws: list[str]) -> list[tuple[int, int]]:
    """The spans of `ws` where `idea` is said as the key says it."""
    hits = []
    for start, end in (hit for p in idea.phrases for hit in _at(ws, p)):
        if _negated(ws, start) or _about_recurrence(ws, start):
            continue
        if idea.together and not any(
            not _negated(ws, s) and _gap((start, end), (s, e)) <= RELATION_WINDOW
            for p in idea.together
            for s, e in _at(ws, p)
        ):
            continue  # the words, but not in relation to each other
        if idea.by and not any(s < start for p in idea.by for s, _ in _at(ws, p)):
            continue  # nobody (no attention, no token) does it
        if idea.contrast and not (
            _any_in(ws, CONTRASTS, start - CONTRAST_WINDOW, start)
            or _any_in(ws, CONTRASTS, end, end + CONTRAST_WINDOW)
        ):
            continue
        hits.append((start, end))
    return hits


def _idea_in(idea: Idea, ws: list[str]) -> bool:
    return bool(_idea_hits(idea, ws))


def _as_consequence(
    parts: list[list[str]], hits: list[list[tuple[int, int]]], needed: list[list[tuple[int, int]]]
) -> bool:
    """A hit said as the consequence of a hit of the needed idea: after it in the same
    sentence with "so" (or the like) between them, or in a later sentence after "so"."""
    for i, ws in enumerate(parts):
        for start, _ in hits[i]:
            if any(e <= start and _any_in(ws, CONSEQUENCES, e, start) for _, e in needed[i]):
                return True
            if any(needed[:i]) and _any_in(ws, CONSEQUENCES, 0, start):
                return True
    return False


def _reasons_without_ideas(question: Question, parts: list[list[str]]) -> list[str]:
    """The reasons given ("because ...", up to a "so") in which no key idea is found."""
    found = []
    for ws in parts:
        for p in REASONS:
            for _, e in _at(ws, p):
                stop = [s for c in CONSEQUENCES for s, _ in _at(ws, c) if s >= e]
                clause = ws[e : min(stop, default=len(ws))]
                if clause and not any(_idea_in(i, clause) for i in question.rubric):
                    found.append(" ".join(clause))
    return found


def _affirmed(wrong: WrongIdea, ws: list[str]) -> bool:
    for start, end in (hit for p in wrong.phrases for hit in _at(ws, p)):
        if _any_in(ws, RECURRENT, 0, start):
            continue  # said of a recurrent network
        if _any_in(ws, CONTRASTS, start - CONTRAST_WINDOW, start):
            continue  # "instead of being passed step by step"
        if _any_in(ws, NEGATIONS, end, end + 4):
            continue  # "a hidden state is not needed" (but "sums to one instead of" affirms)
        if _any_in(ws, wrong.unless, start - 3, start):
            continue
        return True
    return False


def score(question: Question, text: str) -> FreeTextScore:
    """The provisional score of `text` against the question's key and wrong ideas."""
    parts = sentences(text)
    hits = {i.label: [_idea_hits(i, ws) for ws in parts] for i in question.rubric}
    found = [i for i in question.rubric if any(hits[i.label])]
    labels = {i.label for i in found}
    unsure = []
    points = 0.0
    for idea in found:
        whole = idea.needs is None or idea.needs in labels
        if whole and idea.follows and idea.needs is not None:
            whole = _as_consequence(parts, hits[idea.label], hits[idea.needs])
            if not whole:
                unsure.append(f"'{idea.label}' is not said as a consequence of '{idea.needs}'")
        elif not whole:
            unsure.append(f"'{idea.label}' without '{idea.needs}'")
        points += idea.points if whole else idea.points / 2
    wrong = [w for w in question.wrong_ideas if any(_affirmed(w, ws) for ws in parts)]
    if wrong and found:
        unsure.append("key ideas and known wrong ideas side by side")
    unsure += [
        f"a reason with no key idea in it: '{r}'" for r in _reasons_without_ideas(question, parts)
    ]
    points = max(0.0, min(question.points, points) - sum(w.penalty for w in wrong))
    if unsure:
        points = min(points, question.points * UNSURE_SHARE)
    return FreeTextScore(
        points=points,
        found=[i.label for i in found],
        missing=[i.label for i in question.rubric if i.label not in labels],
        wrong=[w.label for w in wrong],
        unsure=unsure,
    )
