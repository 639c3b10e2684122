"""One verdict for one answer everywhere: every question of every bank, answered with the key,
typical wrong answers and other spellings, gets the course's score from each export as its
target system reads and scores it: Moodle's GIFT through gift-pegjs (the npm GIFT parser) and
Moodle's scoring rules, the Moodle XML through the same rules, Canvas's QTI through Canvas's
importer and scoring rules (tests/quiz/lms_rules.py names the code each follows), and
jupyterquiz through jupyterquiz's own JavaScript under node."""

from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import jupyterquiz
import pytest

from attention_course.quiz import types
from attention_course.quiz.answer_core import format_number, shape_forms
from attention_course.quiz.checking import grade
from attention_course.quiz.export_gift import to_gift
from attention_course.quiz.export_jupyterquiz import to_jupyterquiz
from attention_course.quiz.export_moodlexml import to_moodlexml
from attention_course.quiz.export_qti import to_qti_zip
from attention_course.quiz.exports import export_items, exportable
from attention_course.quiz.loading import bank_files, load_bank
from attention_course.quiz.samples import correct_answer, wrong_answer
from attention_course.quiz.types.matching import option_idents
from attention_course.quiz.variants import Instance
from tests.course import BANK_DIR
from tests.quiz import lms_rules as lms
from tests.quiz.node_tools import run_node

QUIZZES = [p.stem for p in bank_files(BANK_DIR)]
STUDENTS = ["alice", "bob"]


def _answers(inst: Instance) -> list[Any]:
    """What a student may write: the key, a typical wrong answer and, for values, other texts."""
    q = inst.question
    if q.type == "free_text":
        return []
    if q.type == "shape":
        dims = [str(v) for v in inst.key]
        others = ["x".join(dims).upper(), " ".join(dims), "(" + ",".join(dims) + ",)", "[]"]
        wrong = [shape_forms(w.value)[n % 3] for n, w in enumerate(inst.wrong_answers)]
        return [
            *shape_forms(inst.key),
            *others,
            *wrong,
            shape_forms(tuple(v + 1 for v in inst.key))[0],
        ]
    if q.type == "numeric":
        half = q.tolerance.half_width(inst.key)
        near = [inst.key + 0.5 * half, inst.key - 0.9 * half, inst.key + 3 * half + 1]
        near += list(q.tolerance.bounds(inst.key))  # the edges: inside, in every system
        wrong = [w.value for w in inst.wrong_answers]
        return [format_number(v) for v in [inst.key, *near, *wrong]]
    return [correct_answer(inst), wrong_answer(inst)]


def _course(inst: Instance, raw: Any) -> float:
    return grade(inst, raw).fraction


def _cases(bank, items, fmt: str):
    for item in exportable(items, fmt):
        yield item.question, item.instances[0]


def _letters(raw: Any) -> list[str]:
    return [raw] if isinstance(raw, str) else sorted(raw)


# --- Moodle: GIFT (parsed by gift-pegjs) and Moodle XML -------------------------------------------


def _moodle_verdicts(q, inst: Instance, parsed: dict) -> list[tuple[Any, float, float]]:
    out = []
    for raw in _answers(inst):
        if q.type in ("single_choice", "multiple_select"):
            texts = [q.choice(c).text for c in _letters(raw)]
            got = lms.moodle_multichoice(parsed["choices"], texts)
        elif q.type == "numeric":
            got = lms.moodle_numerical(parsed["choices"], raw)
        elif q.type == "shape":
            got = lms.moodle_shortanswer(parsed["choices"], raw, parsed.get("usecase", False))
        else:  # matching
            picked = {item: q.choice(opt).text for item, opt in raw.items()}
            got = lms.moodle_match(parsed["matchPairs"], picked)
        out.append((raw, got, _course(inst, raw)))
    return out


def _from_moodlexml(el: ET.Element) -> dict:
    """A Moodle XML question in gift-pegjs's shape, to score it by the same rules."""
    choices = []
    for a in el.findall("answer"):
        text: dict[str, Any] = {"text": a.findtext("text") or ""}
        if el.get("type") == "numerical":
            text = {"number": float(text["text"]), "range": float(a.findtext("tolerance") or 0)}
        choices.append(
            {
                "weight": float(a.get("fraction", "0")),
                "isCorrect": True,
                "text": text,
                "feedback": a.findtext("feedback/text") or "",
            }
        )
    pairs = [
        {"subquestion": {"text": s.findtext("text") or ""}, "subanswer": s.findtext("answer/text")}
        for s in el.findall("subquestion")
    ]
    usecase = (el.findtext("usecase") or "0").strip() == "1"  # Moodle's default: case ignored
    return {"choices": choices, "matchPairs": pairs, "usecase": usecase}


@pytest.mark.parametrize("student", STUDENTS)
def test_moodle_gives_the_courses_verdicts(student: str) -> None:
    texts, banks = [], []
    for quiz in QUIZZES:
        bank = load_bank(quiz, BANK_DIR)
        banks.append((bank, export_items(bank, 1, student)))
        texts.append(to_gift(*banks[-1]))
    parsed_all = run_node("gift_parse.js", texts)
    checked = 0
    for (bank, items), parsed in zip(banks, parsed_all, strict=True):
        assert "error" not in parsed, parsed
        questions = [p for p in parsed if p["type"] != "Category"]
        xml = ET.fromstring(to_moodlexml(bank, items).encode())
        xml_questions = [e for e in xml.findall("question") if e.get("type") != "category"]
        cases = list(_cases(bank, items, "gift"))
        assert len(questions) == len(cases) == len(xml_questions)
        for (q, inst), gq, xq in zip(cases, questions, xml_questions, strict=True):
            assert float(xq.findtext("defaultgrade")) == q.points  # GIFT has no weights
            if q.type == "free_text":
                assert gq["type"] == "Essay" and xq.get("type") == "essay"
                continue
            for source in (gq, _from_moodlexml(xq)):
                for raw, got, course in _moodle_verdicts(q, inst, source):
                    assert got == pytest.approx(course, abs=1e-4), (bank.quiz, q.id, raw)
                    checked += 1
            if q.type == "matching":  # the distractor is carried, with no left side
                for source in (gq, _from_moodlexml(xq)):
                    lefts = [p["subquestion"]["text"] for p in source["matchPairs"]]
                    assert lefts.count("") == len(q.choices) - len(set(inst.key.values())) > 0
            if q.type in ("shape", "numeric"):  # what the course tells a typical mistake
                notes = {c["feedback"]["text"] for c in gq["choices"] if c["feedback"]}
                for w in inst.wrong_answers:
                    if grade(inst, types.of(q).sample(w.value)).feedback == [w.feedback]:
                        assert w.feedback in notes
    assert checked > 100


def test_moodle_scores_every_combination_of_picks_as_the_course() -> None:
    """Multiple select: every subset of a question's choices (right and wrong picks together,
    none, all) gets the course's score (right/k - wrong/(n - k), floored at 0) from the Moodle
    XML and from the GIFT as Moodle reads them, for every multiple-select question of every
    bank. The sdpa_steps case typed out: a, b, d right of five, e wrong: 3/3 - 1/2."""
    texts, banks = [], []
    for quiz in QUIZZES:
        bank = load_bank(quiz, BANK_DIR)
        banks.append((bank, export_items(bank, 1, STUDENTS[0])))
        texts.append(to_gift(*banks[-1]))
    parsed_all = run_node("gift_parse.js", texts)
    combinations = 0
    seen: dict[tuple[str, tuple[str, ...]], float] = {}
    for (bank, items), parsed in zip(banks, parsed_all, strict=True):
        xml = ET.fromstring(to_moodlexml(bank, items).encode())
        xml_questions = [e for e in xml.findall("question") if e.get("type") != "category"]
        gift_questions = [p for p in parsed if p["type"] != "Category"]
        cases = list(_cases(bank, items, "gift"))
        for (q, inst), gq, xq in zip(cases, gift_questions, xml_questions, strict=True):
            if q.type != "multiple_select":
                continue
            ids = [c.id for c in q.choices]
            for size in range(len(ids) + 1):
                for picked in itertools.combinations(ids, size):
                    course = _course(inst, list(picked))
                    texts_ = [q.choice(c).text for c in picked]
                    for where, source in (("xml", _from_moodlexml(xq)), ("gift", gq)):
                        got = lms.moodle_multichoice(source["choices"], texts_)
                        assert got == pytest.approx(course, abs=1e-4), (q.id, picked, where)
                    seen[(q.id, picked)] = course
                    combinations += 1
    assert seen[("sdpa_steps", ("a", "b", "d", "e"))] == pytest.approx(0.5)
    assert seen[("sdpa_steps", ("a", "b", "c", "d", "e"))] == 0.0
    assert combinations >= 32


# --- Canvas: QTI 1.2 ------------------------------------------------------------------------------


def _canvas_items(bank, items) -> list[ET.Element]:
    archive = zipfile.ZipFile(io.BytesIO(to_qti_zip(bank, items)))
    name = next(
        n for n in archive.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n
    )
    root = ET.fromstring(archive.read(name))
    return list(root.iter(f"{lms.QTI}item"))


def _canvas_type(item: ET.Element) -> str:
    for f in item.iter(f"{lms.QTI}qtimetadatafield"):
        if f.findtext(f"{lms.QTI}fieldlabel") == "question_type":
            return f.findtext(f"{lms.QTI}fieldentry") or ""
    return ""


@pytest.mark.parametrize("student", STUDENTS)
def test_canvas_gives_the_courses_verdicts(student: str) -> None:
    checked = 0
    for quiz in QUIZZES:
        bank = load_bank(quiz, BANK_DIR)
        items = export_items(bank, 1, student)
        qti_items = _canvas_items(bank, items)
        cases = list(_cases(bank, items, "qti"))
        assert len(qti_items) == len(cases)
        for (q, inst), item in zip(cases, qti_items, strict=True):
            kind = _canvas_type(item)
            if kind == "essay_question":
                continue
            if kind == "matching_question":
                imported = lms.canvas_import_matching(item)
                idents = [i for i, _ in lms.canvas_choice_idents(item)][: len(q.choices)]
                by_option = dict(zip([o.id for o in q.choices], idents, strict=True))
            else:
                idents = [i for i, _ in lms.canvas_choice_idents(item)]
                by_option = dict(zip([c.id for c in q.choices], idents, strict=False))
            for raw in _answers(inst):
                if kind == "multiple_choice_question":
                    got = float(by_option[raw] in lms.canvas_correct_choices(item))
                elif kind == "multiple_answers_question":
                    picked = {by_option[c] for c in _letters(raw)}
                    got = lms.canvas_score_multiple_answers(
                        lms.canvas_correct_choices(item), picked
                    )
                elif kind == "numerical_question":
                    got = lms.canvas_score_numerical(item, raw)
                elif kind == "short_answer_question":
                    got = lms.canvas_score_short_answer(item, raw)
                else:
                    picked = {left: by_option[opt] for left, opt in raw.items()}
                    got = lms.canvas_score_matching(imported, picked)
                assert got == pytest.approx(course := _course(inst, raw), abs=1e-4), (
                    quiz,
                    q.id,
                    raw,
                    course,
                )
                checked += 1
    assert checked > 50


def test_canvas_numbers_a_matching_questions_options_apart() -> None:
    bank = load_bank("concept_check", BANK_DIR)
    items = export_items(bank, 1)
    (item,) = [i for i in _canvas_items(bank, items) if _canvas_type(i) == "matching_question"]
    imported = lms.canvas_import_matching(item)
    assert len(set(imported["matches"].values())) == len(imported["matches"]) == 4
    assert len({a["match_id"] for a in imported["answers"]}) == 3  # query, key, value
    # the rule, on the identifiers text2qti-style names would give: every option is match 2
    old = [f"text2qti_question_{'ab' * 8}_{o}" for o in "ABCD"]
    assert {lms.canvas_match_id(i, 0) for i in old} == {2}
    new = option_idents("text2qti_question_" + "ab" * 8, list("ABCD"))
    assert len({lms.canvas_match_id(i, 0) for i in new.values()}) == 4


# --- jupyterquiz: its own JavaScript under node ---------------------------------------------------


def _jq_clicks(q, raw: Any) -> list[int]:
    """The answers a student clicks: their indices, the right ones first (jupyterquiz forgets a
    wrong click once a right one follows it, so a wrong pick counts only when clicked last)."""
    ids = [c.id for c in q.choices]
    picked = sorted(_letters(raw), key=lambda c: (not q.choice(c).correct, c))
    return [ids.index(c) for c in picked]


@pytest.mark.parametrize("student", STUDENTS)
def test_jupyterquiz_gives_the_courses_verdicts(student: str) -> None:
    cases, expected = [], []
    for quiz in QUIZZES:
        bank = load_bank(quiz, BANK_DIR)
        items = export_items(bank, 1, student)
        questions, _ = to_jupyterquiz(bank, items)
        pending = iter(questions)
        for item in exportable(items, "jupyterquiz"):
            q, inst = item.question, item.instances[0]
            if q.type == "matching":  # one multiple-choice question per item
                per_item = {left: next(pending) for left in q.items}
                for raw in _answers(inst):
                    for left, opt in raw.items():
                        ids = [o.id for o in q.choices]
                        cases.append({"question": per_item[left], "answer": [ids.index(opt)]})
                        expected.append((quiz, q.id, left, raw, inst.key[left] == opt))
                continue
            jq = next(pending)
            for raw in _answers(inst):
                answer = raw if q.type in ("numeric", "shape") else _jq_clicks(q, raw)
                cases.append({"question": jq, "answer": answer})
                expected.append((quiz, q.id, "", raw, grade(inst, raw).status == "correct"))
        assert next(pending, None) is None
    js = str(Path(jupyterquiz.__file__).parent / "js")
    verdicts = run_node("jupyterquiz_check.js", cases, js)
    assert len(verdicts) == len(expected) > 80
    wrong = [(e[:4], v) for e, v in zip(expected, verdicts, strict=True) if e[4] != v]
    assert not wrong
    assert any(verdicts) and not all(verdicts)


def test_every_type_lists_moodlexml_when_it_lists_gift() -> None:
    for qtype in types.TYPES.values():
        assert ("gift" in qtype.exports) == ("moodlexml" in qtype.exports)
