"""Every question, graded with a correct, a wrong and an invalid answer, by the instructor's
bank and by the students' self-check key (which must agree)."""

from __future__ import annotations

import pytest

from attention_course.quiz.checking import grade
from attention_course.quiz.loading import bank_files, load_bank
from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer
from attention_course.quiz.selfcheck import build_selfcheck, check
from attention_course.quiz.variants import for_student
from tests import course
from tests.course import BANK_DIR

# What a student reads of a free-text answer until it is marked by hand (typed: the promise).
STUDENT_SEES = "Answer recorded: free-text answers are marked by hand by your instructor."

BANKS = {p.stem: load_bank(p.stem, BANK_DIR) for p in bank_files(BANK_DIR)}
KEYS = {name: build_selfcheck(bank, salt="test-salt") for name, bank in BANKS.items()}
CASES = [(name, q.id) for name, bank in BANKS.items() for q in bank.questions]
STUDENTS = ["alice", "bob", "s-1042"]


def _spec(quiz: str, qid: str) -> dict:
    return next(q for q in KEYS[quiz]["questions"] if q["id"] == qid)


@pytest.mark.parametrize(("quiz", "qid"), CASES)
@pytest.mark.parametrize("student", STUDENTS)
def test_correct_answer(quiz: str, qid: str, student: str) -> None:
    bank = BANKS[quiz]
    inst = for_student(bank, bank.question(qid), student)
    answer = correct_answer(inst)
    if inst.question.type == "free_text":
        # the instructor's provisional score gives the sample answer full marks; the student
        # sees only that it is recorded, and self-check does not score free text at all
        result = grade(inst, answer)
        assert result.status == "needs_review" and result.fraction == 1.0
        assert result.review and "Provisional" not in " ".join(result.feedback)
        practice = check(KEYS[quiz], _spec(quiz, qid), student, answer)
        assert practice.status == "needs_review" and practice.fraction == 0.0
        assert practice.feedback[0].startswith("Not checked here")
        return
    for result in (grade(inst, answer), check(KEYS[quiz], _spec(quiz, qid), student, answer)):
        assert result.status == "correct"
        assert result.fraction == 1.0
        assert result.score == inst.question.points
        assert result.feedback


@pytest.mark.parametrize(("quiz", "qid"), CASES)
@pytest.mark.parametrize("student", STUDENTS)
def test_wrong_answer(quiz: str, qid: str, student: str) -> None:
    bank = BANKS[quiz]
    inst = for_student(bank, bank.question(qid), student)
    answer = wrong_answer(inst)
    expected = "needs_review" if inst.question.type == "free_text" else "wrong"
    results = (grade(inst, answer), check(KEYS[quiz], _spec(quiz, qid), student, answer))
    for result in results:
        assert result.status == expected
        assert result.fraction == 0.0
        assert result.score == 0.0
        assert result.feedback
    # both name the same misconception, when the wrong answer is a known mistake
    assert results[0].misconceptions == results[1].misconceptions
    if inst.question.type in ("single_choice", "numeric", "shape") and inst.wrong_answers + tuple(
        c for c in inst.question.choices if c.misconception
    ):
        assert results[0].misconceptions


@pytest.mark.parametrize(("quiz", "qid"), CASES)
def test_invalid_answer(quiz: str, qid: str) -> None:
    bank = BANKS[quiz]
    inst = for_student(bank, bank.question(qid), "alice")
    answer = invalid_answer(inst)
    for result in (grade(inst, answer), check(KEYS[quiz], _spec(quiz, qid), "alice", answer)):
        assert result.status == "invalid"
        assert result.score == 0.0
        assert result.feedback[0].startswith("Invalid answer:")
        assert "expected" in result.feedback[0]


@pytest.mark.parametrize(("quiz", "qid"), CASES)
def test_unanswered(quiz: str, qid: str) -> None:
    bank = BANKS[quiz]
    inst = for_student(bank, bank.question(qid), "alice")
    assert grade(inst, None).status == "unanswered"
    assert check(KEYS[quiz], _spec(quiz, qid), "alice", None).status == "unanswered"


# --- type-specific behaviour, with concrete answers ----------------------------------------------


def _inst(quiz: str, qid: str, student: str = "alice"):
    bank = BANKS[quiz]
    return for_student(bank, bank.question(qid), student)


def test_single_choice_feedback_is_for_the_chosen_wrong_answer() -> None:
    inst = _inst("knowledge_check", "qkv_roles")
    result = grade(inst, "a")
    assert result.misconceptions == ["query-key-swap"]
    assert "query" in result.feedback[0]
    assert grade(inst, " B) ").status == "correct"  # case and a trailing ')' are forgiven


def test_multiple_select_partial_credit() -> None:
    inst = _inst("knowledge_check", "sdpa_steps")  # a, b, d right; c, e wrong
    points = inst.question.points
    assert sorted(inst.key) == ["a", "b", "d"]
    assert grade(inst, ["a", "b", "d"]).score == points
    partial = grade(inst, ["a", "b"])  # 2 of the 3 right ones
    assert partial.status == "partial" and partial.score == round(points * 2 / 3, 6)
    assert partial.feedback == ["Not quite: something is missing."]
    penalised = grade(inst, ["a", "b", "d", "e"])  # 3 of 3 right, less 1 of the 2 wrong
    assert penalised.status == "partial" and penalised.score == pytest.approx(points * 1 / 2)
    assert penalised.feedback == [inst.question.choice("e").feedback]
    assert penalised.misconceptions == [inst.question.choice("e").misconception]
    nothing = grade(inst, ["c", "e"])  # more wrong than right: nothing, never less
    assert (nothing.status, nothing.fraction, nothing.score) == ("wrong", 0.0, 0.0)
    assert penalised.misconceptions == ["scale-by-dk"]
    assert grade(inst, "a, c").score == 0.0
    assert grade(inst, []).status == "wrong"
    key = KEYS["knowledge_check"]
    spec = _spec("knowledge_check", "sdpa_steps")
    assert check(key, spec, "x", ["a", "b"]).fraction == pytest.approx(2 / 3)
    assert check(key, spec, "x", ["a", "b", "d", "e"]).fraction == pytest.approx(1 / 2)


MULTIPLE_SELECT = [
    (name, q.id)
    for name, bank in BANKS.items()
    for q in bank.questions
    if q.type == "multiple_select"
]


@pytest.mark.parametrize(("quiz", "qid"), MULTIPLE_SELECT)
def test_ticking_every_choice_earns_nothing(quiz: str, qid: str) -> None:
    """A guess that ticks every box scores 0, by the bank and by the self-check key."""
    inst = _inst(quiz, qid)
    every = [c.id for c in inst.question.choices]
    assert len(every) > len(inst.key), "a question whose every choice is right tests nothing"
    for result in (grade(inst, every), check(KEYS[quiz], _spec(quiz, qid), "alice", every)):
        assert (result.status, result.fraction, result.score) == ("wrong", 0.0, 0.0)


def test_random_ticking_earns_nothing_on_average() -> None:
    """Over every subset of choices, each equally likely, the mean score before the floor is 0:
    each right pick earns 1/k, each wrong pick costs 1/(n - k)."""
    from itertools import combinations

    inst = _inst("knowledge_check", "sdpa_steps")
    ids = [c.id for c in inst.question.choices]
    k, n = len(inst.key), len(ids)
    subsets = [s for r in range(n + 1) for s in combinations(ids, r)]
    raw = [
        sum(c in inst.key for c in s) / k - sum(c not in inst.key for c in s) / (n - k)
        for s in subsets
    ]
    assert sum(raw) == pytest.approx(0.0)
    for s, value in zip(subsets, raw, strict=True):
        assert grade(inst, list(s)).fraction == pytest.approx(max(0.0, value))


def test_numeric_relative_tolerance() -> None:
    inst = _inst("practice", "sdpa_scale")
    key = inst.key
    assert grade(inst, key * 1.004).status == "correct"
    assert grade(inst, f"{key:.3g}").status == "correct"
    assert grade(inst, key * 1.02).status == "wrong"
    assert grade(inst, "1e400").status == "invalid"
    assert grade(inst, True).status == "invalid"


def test_numeric_absolute_tolerance_zero_is_exact() -> None:
    inst = _inst("misconceptions", "mha_params")
    assert grade(inst, inst.key).status == "correct"
    assert grade(inst, f"{int(inst.key)}").status == "correct"
    assert grade(inst, inst.key + 1).status == "wrong"


def test_shape_answers_in_several_spellings() -> None:
    inst = _inst("misconceptions", "shape_scores")
    n = inst.key[0]
    for spelling in [(n, n), [n, n], f"({n}, {n})", f"{n}x{n}", f"[{n},{n}]", f"{n}, {n}"]:
        assert grade(inst, spelling).status == "correct", spelling
    three = grade(inst, (n, n, n))
    assert three.status == "wrong" and "3 dimensions" in three.feedback[0]
    assert grade(inst, (n, -1)).status == "invalid"
    assert grade(inst, (n, 2.5)).status == "invalid"


def test_matching_scores_each_pair() -> None:
    inst = _inst("concept_check", "library_analogy")
    assert grade(inst, {"query": "D", "key": "A", "value": "C"}).status == "correct"
    assert grade(inst, "query=D, key=A, value=C").status == "correct"
    swapped = grade(inst, {"query": "D", "key": "C", "value": "A"})
    assert swapped.status == "partial" and swapped.score == pytest.approx(0.5)
    assert swapped.misconceptions == ["key-value-swap", "key-value-swap"]
    assert grade(inst, {"query": "D", "key": "A", "value": "Z"}).status == "invalid"
    assert grade(inst, {"query": "D", "key": "A", "colour": "C"}).status == "invalid"


def test_free_text_gets_a_provisional_score_for_the_instructor_only() -> None:
    inst = _inst("concept_check", "long_range")
    half = "Each output looks at every position and takes a weighted sum of their values."
    result = grade(inst, half)
    assert result.status == "needs_review"
    assert result.fraction == pytest.approx(0.75)  # 1.5 of 2: nothing on distance
    assert result.feedback == [STUDENT_SEES]  # nothing provisional
    assert result.review[0] == "Provisional score 1.5 of 2 (graded by hand)."
    assert "every position reaches every other directly" in result.review[1]
    spec = _spec("concept_check", "long_range")
    assert check(KEYS["concept_check"], spec, "alice", half).fraction == 0.0
    assert grade(inst, 42).status == "invalid"


def _numeric_tolerances() -> list[tuple[str, str, dict]]:
    """(quiz, question, tolerance) of every numeric question, as its bank file writes it."""
    import yaml

    found = []
    for path in bank_files(BANK_DIR):
        for q in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]:
            if q["type"] == "numeric":
                found.append((path.stem, q["id"], q["tolerance"]))
    return found


@pytest.mark.parametrize(("quiz", "qid", "tolerance"), _numeric_tolerances())
@pytest.mark.parametrize("student", STUDENTS)
def test_numeric_answer_just_inside_and_just_outside_its_tolerance(quiz, qid, tolerance, student):
    """The half-width written in the bank, worked out here: 99% of it away from the key is
    right, 101% is not (on both sides)."""
    bank = BANKS[quiz]
    inst = for_student(bank, bank.question(qid), student)
    key = float(inst.key)
    half = tolerance["abs"] if "abs" in tolerance else tolerance["rel"] * abs(key)
    assert grade(inst, key).status == "correct"
    for side in (1, -1):
        if half > 0:
            assert grade(inst, key + side * 0.99 * half).status == "correct", (side, half)
        outside = key + side * max(1.01 * half, 1e-6 * max(1.0, abs(key)))
        assert grade(inst, outside).status != "correct", (side, half)


@pytest.mark.parametrize(("quiz", "qid"), [c for c in CASES if c[0] != "concept_check"])
def test_a_right_answer_is_told_why(quiz: str, qid: str) -> None:
    inst = _inst(quiz, qid)
    result = grade(inst, correct_answer(inst))
    assert inst.question.explanation and inst.question.explanation in result.feedback


def test_near_a_typical_wrong_number_is_that_mistake() -> None:
    """A number within the tolerance of a typical wrong answer gets that answer's feedback."""
    inst = _inst("practice", "sdpa_scale")
    for reaction in inst.wrong_answers:
        near = reaction.value * (1 + inst.question.tolerance.rel / 2)
        result = grade(inst, near)
        assert result.status == "wrong" and result.feedback == [reaction.feedback]
        assert result.misconceptions == [reaction.misconception]
    other = grade(inst, inst.key * 7 + 1)
    assert other.feedback == ["Not quite."] and other.misconceptions == []
    assert (other.status, other.fraction, other.score) == ("wrong", 0.0, 0.0)


def test_a_wrong_shape_is_told_what_is_wrong_with_it() -> None:
    inst = _inst("misconceptions", "per_head_weights")
    n = len(inst.key)
    for reaction in inst.wrong_answers:
        written = tuple(list(reaction.value))  # as a student writes it: equal, not the same
        assert grade(inst, written).feedback == [reaction.feedback]
    unlike = grade(inst, tuple([999] * n))  # as many dimensions, like no typical mistake
    assert unlike.status == "wrong" and unlike.feedback == ["Not quite."]
    assert unlike.misconceptions == []
    for dims in (n - 1, n + 1):
        result = grade(inst, tuple([2] * dims))
        assert result.feedback == [f"Your shape has {dims} dimensions; the answer has {n}."]


@pytest.mark.parametrize("raw", [None, "", "   \n"])
def test_no_answer_is_unanswered(raw) -> None:
    result = grade(_inst("practice", "sdpa_scale"), raw)
    assert (result.status, result.score, result.feedback) == (
        "unanswered",
        0.0,
        ["No answer given."],
    )


def test_matching_options_of_several_letters_are_compared_by_value(tmp_path) -> None:
    """A bank may name its options with words: the answers, read from the student and from the
    bank file separately, are the same text, not the same object, and each pair is still
    scored, with the feedback of the wrong picks only."""
    import yaml

    data = yaml.safe_load((course.BANK_DIR / "concept_check.yaml").read_text(encoding="utf-8"))
    question = next(q for q in data["questions"] if q["id"] == "library_analogy")
    renamed = {o["id"]: f"option-{o['id'].lower()}" for o in question["options"]}
    for option in question["options"]:
        option["id"] = renamed[option["id"]]
    question["answer"] = {item: renamed[opt] for item, opt in question["answer"].items()}
    path = tmp_path / "concept_check.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    bank = load_bank(str(path), BANK_DIR)
    inst = for_student(bank, bank.question("library_analogy"), "alice")
    right = "query=option-d, key=option-a, value=option-c"
    assert grade(inst, right).status == "correct"
    swapped = grade(inst, "query=option-d, key=option-c, value=option-a")
    assert swapped.status == "partial" and swapped.fraction == pytest.approx(1 / 3)
    q = inst.question
    assert swapped.feedback == [q.choice("option-c").feedback, q.choice("option-a").feedback]


def test_sizes_are_compared_by_value_however_large() -> None:
    """A matching question of 300 items, all right, is correct; a shape of as many dimensions
    as the key is not told its dimensions are wrong (more than 256: CPython shares only small
    ints, so these sizes must be compared by value)."""
    from dataclasses import replace

    inst = _inst("concept_check", "library_analogy")
    items = tuple(f"item{i}" for i in range(300))
    answer = {item: inst.question.choices[i % 2].id for i, item in enumerate(items)}
    big = replace(inst, question=replace(inst.question, items=items, answer=answer), key=answer)
    assert grade(big, dict(answer)).status == "correct"
    shape = _inst("misconceptions", "per_head_weights")
    deep = replace(shape, key=(2,) * 300, wrong_answers=())
    assert grade(deep, (3,) * 300).feedback == ["Not quite."]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("(9, 16)", (9, 16)),
        ("(9,16)", (9, 16)),
        ("[9, 16]", (9, 16)),
        ("[9,16]", (9, 16)),
        ("9, 16", (9, 16)),
        ("9,16", (9, 16)),
        ("9x16", (9, 16)),
        ("9X16", (9, 16)),
        ("9 x 16", (9, 16)),
        ("9×16", (9, 16)),
        ("9 × 16", (9, 16)),
        ("  (9, 16) ", (9, 16)),
        ("(9,)", (9,)),
        ("[9]", (9,)),
        ("9", (9,)),
        ("9 16", None),
        ("( 9, 16 )", None),
        ("(9 ,16)", None),
        ("(9, 16,)", None),
        ("(9)", None),
        ("9x 16", None),
        ("(9, 16]", None),
        ("nine by sixteen", None),
    ],
)
def test_a_shape_is_written_in_one_of_the_accepted_spellings(text: str, verdict) -> None:
    """The set every export also accepts (docs/quiz.md): anything else is invalid."""
    from attention_course.quiz.answer_core import InvalidAnswer, parse_shape

    if verdict is None:
        with pytest.raises(InvalidAnswer, match="expected a shape"):
            parse_shape(text)
    else:
        assert parse_shape(text) == verdict
