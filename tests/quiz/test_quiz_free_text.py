"""Free-text answers are scored as a teacher would: ideas in context, known wrong ideas caught.

The score is provisional and reaches only the instructor; the student is told the answer is
marked by hand. Each answer below is written as a student might, with the mark a teacher gives
it (out of the question's points).
"""

from __future__ import annotations

import pytest

from attention_course.quiz import free_text
from attention_course.quiz.checking import grade
from attention_course.quiz.loading import load_bank
from attention_course.quiz.variants import for_student
from tests.course import BANK_DIR
from tests.quiz.test_quiz_questions import STUDENT_SEES

# concept_check / long_range (2 points): "How does attention directly solve the long-range
# dependency problem that plagued RNN-based sequence models?"
LONG_RANGE = [
    # (kind, answer, teacher's mark)
    ("sample answer", None, 2.0),
    (
        "correct, other words",
        "In a recurrent network a word at the start has to travel through every hidden state "
        "before it reaches a word far later, and it fades on the way. With attention, the word "
        "that needs context compares itself with all the other words directly and takes what "
        "it needs from the most relevant ones, so the path between any two words is one step, "
        "however far apart they are.",
        2.0,
    ),
    (
        "correct, terse",
        "Every token can attend to every other token directly, so the first and the hundredth "
        "token are one step away instead of ninety-nine recurrent steps.",
        2.0,
    ),
    (
        "correct, set against an RNN",
        "Unlike an RNN, which passes a hidden state step by step so early information fades, "
        "attention lets the current word read every earlier word directly, with weights from "
        "how relevant each one is to its information.",
        2.0,
    ),
    (
        "correct, paraphrase: a chain of hidden states",
        "Self-attention lets each token look directly at every other token, so two words a "
        "hundred positions apart are connected in a single step rather than through a long "
        "chain of hidden states.",
        2.0,
    ),
    (
        "correct, paraphrase: three sentences",
        "In an RNN information has to pass through many recurrent steps and gets diluted. "
        "Attention connects every position to every other position directly. So the distance "
        "between two tokens no longer matters: it is always one step.",
        2.0,
    ),
    (
        "correct, paraphrase: encoder states",
        "Instead of squeezing the sentence into one context vector, the decoder attends to all "
        "the encoder states directly, so it can reach any word regardless of how far back it is.",
        2.0,
    ),
    (
        "correct, paraphrase: queries and keys",
        "Each query compares itself with all keys of the sequence and takes a weighted sum of "
        "their values, so a distant token is as easy to reach as a neighbouring one.",
        2.0,
    ),
    (
        "correct, paraphrase: the reason first",
        "Because every token attends to all tokens directly, the path between any two positions "
        "is a single step, so distance does not matter, unlike in an RNN where the signal "
        "passes step by step.",
        2.0,
    ),
    (
        "partial: direct access and weighting, nothing on distance",
        "Each position looks at all the positions of the input and takes a weighted average of "
        "their values.",
        1.5,
    ),
    (
        "partial: the bottleneck only",
        "It avoids squeezing the whole sentence into one fixed-size context vector.",
        0.5,
    ),
    (
        "RNN-style wrong",
        "Attention keeps a hidden state that is passed step by step along the sequence, and the "
        "information decays with distance, so the model remembers the recent tokens best.",
        0.0,
    ),
    (
        "keyword-stuffed wrong, a list",
        "Attention distance weights relevance every position bottleneck softmax hidden state "
        "step by step constant path length.",
        0.0,
    ),
    (
        "keyword-stuffed wrong, in sentences",
        "Attention uses a hidden state at every position, weighted by relevance, so distance "
        "does not matter and there is no bottleneck.",
        0.0,
    ),
    (
        "LSTM-style wrong",
        "Attention adds gates like an LSTM, so the network can remember everything for longer.",
        0.0,
    ),
    (
        "negated",
        "Attention does not look at every token; it only uses the one just before.",
        0.0,
    ),
    ("history only", "Attention was added to RNN encoder-decoders in 2014.", 0.0),
    ("empty", "", 0.0),
    ("blank", "   \n ", 0.0),
]


@pytest.fixture(scope="module")
def long_range():
    bank = load_bank("concept_check", BANK_DIR)
    question = bank.question("long_range")
    return question, for_student(bank, question, "alice")


def test_enough_answers_of_each_kind():
    kinds = " ".join(k for k, _, _ in LONG_RANGE)
    assert len(LONG_RANGE) >= 8
    for kind in ("correct, other words", "keyword-stuffed wrong", "RNN-style wrong", "empty"):
        assert kind in kinds


@pytest.mark.parametrize(("kind", "answer", "mark"), LONG_RANGE, ids=[k for k, _, _ in LONG_RANGE])
def test_long_range_answers_are_scored_as_a_teacher_would(long_range, kind, answer, mark):
    question, instance = long_range
    text = question.sample_answer if answer is None else answer
    result = grade(instance, text)
    assert result.score == pytest.approx(mark), (kind, result.review)
    if text.strip():
        assert result.status == "needs_review"
        assert result.feedback == [STUDENT_SEES]  # the student sees nothing provisional
        assert result.review[0].startswith(f"Provisional score {mark:g} of 2")
    else:
        assert result.status == "unanswered"


def test_wrong_ideas_are_named_for_the_instructor(long_range):
    question, _ = long_range
    rnn_style = next(a for k, a, _ in LONG_RANGE if k == "RNN-style wrong")
    scored = free_text.score(question, rnn_style)
    assert "says attention passes information along step by step, as recurrence does" in (
        scored.wrong
    )
    assert "says information still fades with distance" in scored.wrong


def test_an_idea_counts_only_in_context(long_range):
    """The old keyword rubric gave 'distance' in 'decays with distance' a point."""
    question, _ = long_range
    scored = free_text.score(question, "Information decays with distance.")
    assert scored.found == [] and scored.points == 0


# Answers that play the scorer: the key's words without the key's relations, the right
# mechanism with a wrong reason, nonsense around a key phrase. Never the full provisional score.
GAMES = [
    (
        "keyword-stuffed, fluent",
        "Attention weights every position directly with relevance, regardless of distance, "
        "instead of a bottleneck.",
    ),
    (
        "keyword-stuffed, no agent",
        "The softmax looks at every token directly and the relevance weights values regardless "
        "of distance unlike a context vector.",
    ),
    (
        "right mechanism, wrong reason: parallel",
        "Every token attends to every other token directly, because attention processes all "
        "tokens in parallel on a GPU, so it is faster than an RNN that works step by step.",
    ),
    (
        "right mechanism, wrong reason: normalisation",
        "Attention looks at all the tokens directly, which works because the softmax makes the "
        "weights sum to one instead of using a hidden state.",
    ),
    (
        "right mechanism, a reason with no key idea",
        "Each token attends to every other token directly because the matrices are learned "
        "during training.",
    ),
    ("nonsense around one key phrase", "Purple bananas see every word on Tuesdays."),
    ("nonsense, the key's words only", "Directly every token banana."),
    ("nonsense, a consequence of nothing", "My dog reads every word in one step."),
]
NONSENSE = [a for k, a in GAMES if k.startswith("nonsense around")]


@pytest.mark.parametrize(("kind", "answer"), GAMES, ids=[k for k, _ in GAMES])
def test_gaming_answers_never_get_the_full_provisional_score(long_range, kind, answer):
    question, instance = long_range
    scored = free_text.score(question, answer)
    assert scored.points < question.points, (kind, scored)
    # either nothing is credited, or the instructor is told to read it
    assert scored.points == 0 or scored.unsure, (kind, scored)
    result = grade(instance, answer)
    assert result.status == "needs_review" and result.score < question.points
    if scored.unsure:
        assert any(line.startswith("Unsure, please read it") for line in result.review)


def test_a_key_phrase_in_nonsense_earns_nothing(long_range):
    """The old scorer gave 'see every word' half the points, whoever did the seeing."""
    question, _ = long_range
    for answer in NONSENSE:
        assert free_text.score(question, answer).points == 0


def test_correct_paraphrases_are_not_flagged(long_range):
    question, _ = long_range
    for kind, answer, mark in LONG_RANGE:
        if kind.startswith("correct") and answer is not None:
            scored = free_text.score(question, answer)
            assert scored.points == mark == question.points and not scored.unsure, (kind, scored)
