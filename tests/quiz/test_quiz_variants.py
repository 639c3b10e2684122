"""Per-student variants: stable seeds from (student id, quiz id), different students mostly
different numbers, and each student graded against their own."""

from __future__ import annotations

import os
import subprocess
import sys

from attention_course.quiz.checking import grade
from attention_course.quiz.loading import load_bank
from attention_course.quiz.samples import correct_answer
from attention_course.quiz.seeding import draw_parameters, variant_of
from attention_course.quiz.variants import for_student
from tests.course import BANK_DIR

STUDENTS = [f"student{n:03d}" for n in range(60)]


def test_seed_is_sha256_of_quiz_and_student_and_stable_across_processes() -> None:
    import hashlib

    digest = hashlib.sha256(b"misconceptions|alice").digest()
    assert variant_of("misconceptions", "alice", 256) == int.from_bytes(digest[:8], "big") % 256
    code = (
        "from attention_course.quiz.seeding import variant_of; "
        "print(variant_of('misconceptions', 'alice', 256))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert runs == {str(variant_of("misconceptions", "alice", 256))}


def test_same_student_same_variant_and_ids_are_normalized() -> None:
    bank = load_bank("misconceptions", BANK_DIR)
    q = bank.question("weights_memory")
    first = for_student(bank, q, "alice")
    assert for_student(bank, q, "alice") == first
    assert for_student(bank, q, "  Alice ").params == first.params
    # ... and the variant is the student's: over a class, the numbers differ
    drawn = {repr(sorted(for_student(bank, q, s).params.items())) for s in STUDENTS}
    assert len(drawn) > len(STUDENTS) // 4, f"{len(drawn)} variants for {len(STUDENTS)} students"


def test_variant_depends_on_the_quiz_too() -> None:
    variants = {
        (variant_of("misconceptions", s, 256), variant_of("knowledge_check", s, 256))
        for s in STUDENTS
    }
    assert sum(a != b for a, b in variants) > len(STUDENTS) // 2


def test_different_students_mostly_get_different_numbers() -> None:
    bank = load_bank("misconceptions", BANK_DIR)
    numbers = {
        tuple(
            draw_parameters(
                bank.quiz, variant_of(bank.quiz, s, bank.variant_count), bank.parameters
            ).values()
        )
        for s in STUDENTS
    }
    assert len(numbers) >= 0.9 * len(STUDENTS)


def test_two_students_differ_in_a_numeric_question_and_are_graded_on_their_own() -> None:
    bank = load_bank("misconceptions", BANK_DIR)
    numeric = [q for q in bank.questions if q.type == "numeric" and q.templated]
    pairs = [(for_student(bank, q, "alice"), for_student(bank, q, "bob")) for q in numeric]
    differing = [(a, b) for a, b in pairs if a.key != b.key]
    assert differing, "alice and bob should differ in at least one numeric question"
    for alice, bob in differing:
        assert alice.prompt != bob.prompt  # different numbers in the question itself
        assert grade(alice, correct_answer(alice)).status == "correct"
        assert grade(bob, correct_answer(bob)).status == "correct"
        assert grade(bob, correct_answer(alice)).status == "wrong"
        assert grade(alice, correct_answer(bob)).status == "wrong"
