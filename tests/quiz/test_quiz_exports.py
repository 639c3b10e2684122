"""LMS exports: GIFT parses back (pygiftparser, plus GIFT's syntax rules), the QTI zip is the
QTI 1.2 structure Canvas imports, and jupyterquiz loads the JSON."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from jupyterquiz.dynamic.loader import load_questions_script
from pygiftparser import parser as gift_parser
from pygiftparser.utils import transformSpecials

from attention_course.cli.main import main
from attention_course.quiz import types as question_types
from attention_course.quiz.answer_core import format_number
from attention_course.quiz.export_gift import escape, gift_number, to_gift
from attention_course.quiz.export_jupyterquiz import TYPES, to_jupyterquiz
from attention_course.quiz.export_qti import md
from attention_course.quiz.exports import export_items, shape_forms
from attention_course.quiz.loading import bank_files, load_bank
from attention_course.quiz.variants import for_student
from tests.course import BANK_DIR

QUIZZES = [p.stem for p in bank_files(BANK_DIR)]
NS = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}
CANVAS_TYPES = {
    "single_choice": "multiple_choice_question",
    "multiple_select": "multiple_answers_question",
    "numeric": "numerical_question",
    "shape": "short_answer_question",
    "matching": "matching_question",
    "free_text": "essay_question",
}
GIFT_SETS = {
    "single_choice": "SelectSet",
    "multiple_select": "MultipleChoicesSet",
    "numeric": "NumericAnswerSet",
    "shape": "ShortSet",
    "matching": "MatchingSet",
    "free_text": "Essay",
}


def _export(tmp_path: Path, quiz: str, fmt: str, *extra: str) -> Path:
    out = tmp_path / f"{quiz}.{fmt}"
    assert main(["quiz", "export", quiz, "--format", fmt, "--out", str(out), *extra]) == 0
    return out


# --- GIFT ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("quiz", QUIZZES)
def test_gift_parses_back(tmp_path: Path, quiz: str) -> None:
    bank = load_bank(quiz, BANK_DIR)
    path = _export(tmp_path, quiz, "gift", "--variants", "3")
    parsed = gift_parser.parseFile(io.StringIO(path.read_text(encoding="utf-8")))
    items = export_items(bank, 3)
    expected = [(item, inst) for item in items for inst in item.instances]
    assert len(parsed) == len(expected)
    for gq, (item, inst) in zip(parsed, expected, strict=True):
        q = item.question
        assert gq.valid
        if q.type != "shape":  # pygiftparser reads a short answer with 0% answers as a select;
            # Moodle (and gift-pegjs, test_quiz_export_verdicts.py) read it as a short answer
            assert type(gq.answers).__name__ == GIFT_SETS[q.type]
        assert transformSpecials(gq.text) == inst.prompt
        assert gq.title.startswith(f"{quiz}/{q.id}")
        if q.templated:
            assert gq.cat == f"$course$/attention_course/{quiz}/{q.id}"
        answers = getattr(gq.answers, "answers", [])
        if q.type == "single_choice":
            right = [a for a in answers if a.select]
            assert len(right) == 1 and transformSpecials(right[0].answer) == q.choice(inst.key).text
        elif q.type == "multiple_select":
            positive = sum(a.fraction for a in answers if a.fraction > 0)
            assert positive == pytest.approx(100, abs=1e-3)
            for a, c in zip(answers, q.choices, strict=True):
                assert (a.fraction > 0) == c.correct
                assert transformSpecials(a.answer) == c.text
        elif q.type == "numeric":
            assert answers[0].value == pytest.approx(inst.key, rel=1e-12)
            assert answers[0].tolerance == pytest.approx(q.tolerance.half_width(inst.key))
            assert answers[0].fraction == 100 and all(a.fraction == 0 for a in answers[1:])
        elif q.type == "shape":
            forms = shape_forms(inst.key)
            assert [transformSpecials(a.answer) for a in answers][: len(forms)] == forms
        elif q.type == "matching":
            pairs = {a.question.strip(): transformSpecials(a.answer.strip()) for a in answers}
            options = {o.id: o.text for o in q.choices}
            distractors = [o.text for o in q.choices if o.id not in inst.key.values()]
            assert pairs == {item_: options[inst.key[item_]] for item_ in q.items} | {
                "": distractors[-1]  # the distractor: no left side
            }


def test_gift_syntax_rules() -> None:
    assert escape("a~b=c#d{e}f:g") == r"a\~b\=c\#d\{e\}f\:g"
    assert escape("two\nlines") == r"two\nlines"
    bank = load_bank("practice", BANK_DIR)  # numeric questions
    text = to_gift(bank, export_items(bank, 2))
    kc = load_bank("knowledge_check", BANK_DIR)  # a multiple-select question
    text += to_gift(kc, export_items(kc, 2))
    blocks = [b for b in text.split("\n\n") if b.strip() and not b.startswith("$CATEGORY")]
    for block in blocks[1:]:  # after the header comment
        lines = [ln for ln in block.splitlines() if not ln.startswith("//")]
        title = re.match(r"::(.+?)::\[plain\]", lines[0])
        assert title, lines[0]
        assert lines[-1].endswith("}")
        body = "\n".join(lines)
        # braces: exactly one unescaped answer block
        assert len(re.findall(r"(?<!\\)\{", body)) == 1 and len(re.findall(r"(?<!\\)\}", body)) == 1
    for item in export_items(bank, 2):  # numeric answers: the key and the tolerance's half-width
        if item.question.type == "numeric":
            for inst in item.instances:
                half = item.question.tolerance.half_width(inst.key)
                assert f"{{\n#={gift_number(inst.key)}:{gift_number(half)}" in text
    # sdpa_steps: 3 right choices (+1/3 each) and 2 wrong ones (-1/2 each), as graded
    assert "~%33.33333%" in text and "~%-50%" in text
    assert "// Note: GIFT has no question points: Moodle imports every question as 1 point" in text
    concept = load_bank("concept_check", BANK_DIR)
    gift = to_gift(concept, export_items(concept, 1))
    assert '=query -> What you are looking for, e.g. "books about gardening".' in gift
    assert "::concept_check/long_range::[plain]" in gift and gift.count("{}") == 1


# --- QTI ----------------------------------------------------------------------------------------


def _qti(tmp_path: Path, quiz: str, *extra: str) -> tuple[ET.Element, ET.Element, zipfile.ZipFile]:
    path = _export(tmp_path, quiz, "qti", *extra)
    archive = zipfile.ZipFile(path)
    manifest = ET.fromstring(archive.read("imsmanifest.xml"))
    hrefs = [el.get("href") for el in manifest.iter() if el.tag.endswith("}file")]
    assessment_file = next(h for h in hrefs if h.endswith(".xml") and "assessment_meta" not in h)
    return manifest, ET.fromstring(archive.read(assessment_file)), archive


@pytest.mark.parametrize("quiz", QUIZZES)
def test_qti_is_canvas_qti_1_2(tmp_path: Path, quiz: str) -> None:
    bank = load_bank(quiz, BANK_DIR)
    manifest, root, archive = _qti(tmp_path, quiz, "--variants", "3")
    assert manifest.tag.endswith("manifest")
    assert root.tag == f"{{{NS['q']}}}questestinterop"
    assessment = root.find("q:assessment", NS)
    section = assessment.find("q:section", NS)
    assert assessment is not None and section is not None
    items = list(section.iter(f"{{{NS['q']}}}item"))
    types = []
    for item in items:
        fields = {
            f.findtext("q:fieldlabel", namespaces=NS): f.findtext("q:fieldentry", namespaces=NS)
            for f in item.iter(f"{{{NS['q']}}}qtimetadatafield")
        }
        types.append((item.get("title").split(" v")[0], fields["question_type"]))
        assert float(fields["points_possible"]) > 0
        assert item.find("q:presentation", NS) is not None
    expected = [
        (item.question.id, CANVAS_TYPES[item.question.type])
        for item in export_items(bank, 3)
        for _ in item.instances
    ]
    assert types == expected
    # templated questions: a group of variants of which Canvas picks one per student
    groups = section.findall("q:section", NS)
    assert len(groups) == sum(q.templated for q in bank.questions)
    for group in groups:
        pick = group.find("q:selection_ordering/q:selection/q:selection_number", NS)
        assert pick is not None and pick.text == "1"
        first = group.find("q:item", NS).get("title")
        assert group.get("title") == first.split(" v")[0]  # the question, not "Group"
    assert any(n.endswith("assessment_meta.xml") for n in archive.namelist())


def test_qti_matching_and_numeric_items(tmp_path: Path) -> None:
    _, root, _ = _qti(tmp_path, "concept_check")
    bank = load_bank("concept_check", BANK_DIR)
    q = bank.question("library_analogy")
    item = next(i for i in root.iter(f"{{{NS['q']}}}item") if i.get("title") == q.id)
    lids = item.findall("q:presentation/q:response_lid", NS)
    assert [lid.findtext("q:material/q:mattext", namespaces=NS) for lid in lids] == list(q.items)
    labels = {
        lab.get("ident"): lab.findtext("q:material/q:mattext", namespaces=NS)
        for lab in lids[0].iter(f"{{{NS['q']}}}response_label")
    }
    options = {o.id: o.text for o in q.choices}
    conditions = item.findall("q:resprocessing/q:respcondition", NS)
    matched = {
        c.find("q:conditionvar/q:varequal", NS).get("respident"): labels[
            c.findtext("q:conditionvar/q:varequal", namespaces=NS)
        ]
        for c in conditions
    }
    assert matched == {f"response_{n + 1}": options[q.answer[i]] for n, i in enumerate(q.items)}
    assert sum(float(c.findtext("q:setvar", namespaces=NS)) for c in conditions) == pytest.approx(
        100, abs=0.02
    )

    _, root, _ = _qti(tmp_path, "misconceptions", "--student", "alice")
    bank = load_bank("misconceptions", BANK_DIR)
    inst = for_student(bank, bank.question("weights_memory"), "alice")
    item = next(
        i for i in root.iter(f"{{{NS['q']}}}item") if i.get("title").startswith("weights_memory")
    )
    comments = "".join(
        "".join(f.itertext())
        for f in item.findall("q:itemfeedback", NS)
        if f.get("ident") == "general_incorrect_fb"
    )
    reachable = question_types.of(inst.question).distinct_wrong(
        inst
    )  # Canvas: in the incorrect comment
    assert reachable and all(
        f"If you answered {format_number(w.value)}:" in comments for w in reachable
    )
    low = float(item.find(".//q:vargte", NS).text)
    high = float(item.find(".//q:varlte", NS).text)
    assert low < inst.key < high and (high - low) == pytest.approx(0.02 * inst.key, rel=1e-3)


def test_markdown_is_escaped_for_text2qti() -> None:
    assert md("Q @ K.T / sqrt(d_k) * 2 costs $5") == r"Q @ K.T / sqrt(d\_k) \* 2 costs \$5"


# --- jupyterquiz --------------------------------------------------------------------------------


@pytest.mark.parametrize("quiz", QUIZZES)
def test_jupyterquiz_round_trip(tmp_path: Path, quiz: str, capsys) -> None:
    path = _export(tmp_path, quiz, "jupyterquiz", "--student", "alice")
    notes = capsys.readouterr().err
    questions = json.loads(path.read_text(encoding="utf-8"))
    script, static, _ = load_questions_script(str(path), "quizdiv")
    assert static
    loaded = json.loads(script.split("var questionsquizdiv=", 1)[1].split(";\n\nif (typeof", 1)[0])
    assert loaded == questions
    bank = load_bank(quiz, BANK_DIR)
    items = export_items(bank, 1, "alice")
    assert to_jupyterquiz(bank, items)[0] == questions
    for q in questions:
        assert q["type"] in TYPES and q["question"]
        assert q["answers"]
        if q["type"] in ("multiple_choice", "many_choice"):
            assert all({"answer", "correct", "feedback"} <= set(a) for a in q["answers"])
            correct = sum(a["correct"] for a in q["answers"])
            assert correct == 1 if q["type"] == "multiple_choice" else correct >= 1
    if any(q.type == "free_text" for q in bank.questions):
        assert "free text is not supported by jupyterquiz" in notes


def test_jupyterquiz_types_are_the_ones_jupyterquiz_registers() -> None:
    import jupyterquiz

    js = Path(jupyterquiz.__file__).parent / "js"
    registered = set(
        re.findall(r"Question\.register\('(\w+)'", "".join(p.read_text() for p in js.glob("*.js")))
    )
    assert set(TYPES) <= registered


def test_jupyterquiz_numeric_answers(tmp_path: Path) -> None:
    bank = load_bank("practice", BANK_DIR)
    items = export_items(bank, 1, "bob")
    questions, _ = to_jupyterquiz(bank, items)
    scale = next(q for q in questions if q["question"].startswith("Queries and keys have"))
    key = for_student(bank, bank.question("sdpa_scale"), "bob").key
    right = scale["answers"][0]
    assert right["correct"] and right["type"] == "range"
    assert right["range"][0] <= key < right["range"][1]
    d_k = for_student(bank, bank.question("sdpa_scale"), "bob").params["d_k"]
    wrong = [a for a in scale["answers"] if a.get("correct") is False]
    low, high = wrong[0]["range"]  # a wrong answer is matched within the tolerance, as the key
    assert wrong[0]["type"] == "range" and low < float(d_k) < high
    width = next(q for q in questions if "attention heads" in q["question"])
    assert width["answers"][0] == {
        "type": "value",
        "value": float(for_student(bank, bank.question("head_width"), "bob").key),
        "correct": True,
        "feedback": bank.question("head_width").explanation,
    }
    assert width["answers"][-1]["type"] == "default"
