"""How the target systems read and score the exports, ported from their code for the tests.

Each function names the code it follows. Moodle is PHP and Canvas Ruby, neither runs here: the
GIFT text is parsed by gift-pegjs (node), the rest are these ports. jupyterquiz's own JavaScript
runs under node (node/jupyterquiz_check.js).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from decimal import Decimal
from html import escape, unescape
from typing import Any

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


# --- Moodle (question/type/*/question.php), on gift-pegjs's parse or the Moodle XML ------------


def moodle_fraction(choice: dict) -> float:
    """A GIFT answer's fraction: its %weight%, else 100% for "=" answers and 0 for "~"."""
    if choice["weight"] is not None:
        return choice["weight"] / 100
    return 1.0 if choice["isCorrect"] else 0.0


def moodle_shortanswer(choices: list[dict], response: str, usecase: bool = False) -> float:
    """qtype_shortanswer: the response (trimmed, PARAM_RAW_TRIMMED) against each answer in order,
    case ignored unless the question says ``usecase`` 1 (GIFT's short answers never do), ``*`` a
    wildcard; the first that matches gives its fraction (compare_string_with_wildcard)."""
    given = response.strip()
    flags = re.UNICODE if usecase else re.IGNORECASE | re.UNICODE
    for c in choices:
        pattern = "^" + ".*".join(re.escape(p) for p in c["text"]["text"].split("*")) + "$"
        if re.match(pattern, given, flags):
            return moodle_fraction(c)
    return 0.0


def moodle_numerical(choices: list[dict], response: str) -> float:
    """qtype_numerical: the first answer whose [answer - tolerance, answer + tolerance] holds the
    number gives its fraction."""
    value = float(response)
    for c in choices:
        low = c["text"]["number"] - c["text"]["range"]
        high = c["text"]["number"] + c["text"]["range"]
        if low <= value <= high:
            return moodle_fraction(c)
    return 0.0


def moodle_multichoice(choices: list[dict], picked_texts: list[str]) -> float:
    """qtype_multichoice: the sum of the picked answers' fractions, within [0, 1]."""
    total = sum(moodle_fraction(c) for c in choices if c["text"]["text"] in picked_texts)
    return max(0.0, min(1.0, total))


def moodle_match(pairs: list[dict], picked: dict[str, str]) -> float:
    """qtype_match: the share of subquestions (those with text) given their own answer; the
    answers of subquestions without text are distractors among the choices."""
    stems = [p for p in pairs if p["subquestion"]["text"]]
    right = sum(picked.get(p["subquestion"]["text"]) == p["subanswer"] for p in stems)
    return right / len(stems)


# --- Canvas: its QTI importer and its quiz scoring ----------------------------------------------


def _mattext(el: ET.Element) -> str:
    text = el.findtext(f".//{QTI}mattext") or ""
    return re.sub(r"<[^>]+>", "", unescape(text)).strip()


def canvas_match_id(ident: str, fallback: int) -> int:
    """canvas-lms gems/plugins/qti_exporter/lib/qti/associate_interaction.rb,
    get_canvas_matches: ``match[:match_id] = $1.to_i if sc['identifier'] =~ /(\\d+)/``, else a
    new local id."""
    found = re.search(r"(\d+)", ident)
    return int(found.group(1)) if found else fallback


def canvas_import_matching(item: ET.Element) -> dict[str, Any]:
    """Canvas's matching import: matches from the first item's options (numbered by
    canvas_match_id), and each item's answer connected to the match its scoring condition names.
    Returns {"answers": [{id, left, match_id, right}], "matches": {option ident: match_id}}."""
    lids = item.findall(f"{QTI}presentation/{QTI}response_lid")
    matches: dict[str, dict] = {}
    for n, label in enumerate(lids[0].iter(f"{QTI}response_label")):
        ident = label.get("ident", "")
        matches[ident] = {"match_id": canvas_match_id(ident, -1 - n), "text": _mattext(label)}
    answers = []
    for lid in lids:
        answer: dict[str, Any] = {"id": lid.get("ident"), "left": _mattext(lid)}
        for cond in item.iter(f"{QTI}respcondition"):
            eq = cond.find(f"{QTI}conditionvar/{QTI}varequal")
            scores = cond.find(f"{QTI}setvar") is not None
            if eq is not None and eq.get("respident") == lid.get("ident") and scores:
                match = matches.get((eq.text or "").strip())
                if match:
                    answer["match_id"] = match["match_id"]
        answers.append(answer)
    by_id: dict[int, str] = {}
    for m in matches.values():  # ensure_correct_format: the first match with that id
        by_id.setdefault(m["match_id"], m["text"])
    for a in answers:
        a["right"] = by_id.get(a.get("match_id", 0))
    return {"answers": answers, "matches": {k: v["match_id"] for k, v in matches.items()}}


def canvas_score_matching(imported: dict[str, Any], picked: dict[str, str]) -> float:
    """app/models/quizzes/quiz_question/matching_question.rb, correct_answer_parts: an item is
    right when the answer holding the picked match id is that item's, or has the same right side.
    ``picked`` maps item text to the picked option's ident."""
    answers = imported["answers"]
    right = 0
    for a in answers:
        match_id = imported["matches"].get(picked.get(a["left"], ""))
        found = next((b for b in answers if b.get("match_id") == match_id), None)
        if found is a or (found and found["right"] and found["right"] == a["right"]):
            right += 1
    return right / len(answers)


def canvas_choice_idents(item: ET.Element) -> list[tuple[str, str]]:
    """(ident, text) of a choice item's options."""
    return [(lab.get("ident", ""), _mattext(lab)) for lab in item.iter(f"{QTI}response_label")]


def canvas_correct_choices(item: ET.Element) -> set[str]:
    """The options the import weighs 100: those a full-score condition requires (not negated)."""
    correct = set()
    for cond in item.iter(f"{QTI}respcondition"):
        setvar = cond.find(f"{QTI}setvar")
        if setvar is None or (setvar.text or "").strip() != "100":
            continue
        var = cond.find(f"{QTI}conditionvar")
        negated = {id(el) for n in var.iter(f"{QTI}not") for el in n.iter(f"{QTI}varequal")}
        for eq in var.iter(f"{QTI}varequal"):
            if id(eq) not in negated:
                correct.add((eq.text or "").strip())
    return correct


def canvas_score_multiple_answers(correct: set[str], picked: set[str]) -> float:
    """multiple_answers_question.rb and base.rb score_question: (right picks - wrong picks) /
    number of right answers, not below 0."""
    k = max(1, len(correct))
    return max(0.0, (len(picked & correct) - len(picked - correct)) / k)


def canvas_score_short_answer(item: ET.Element, response: str) -> float:
    """short_answer_question.rb, matching_answer: CGI.escapeHTML(response).strip.downcase equal
    to an answer's text stripped and downcased."""
    given = escape(response, quote=True).strip().lower()
    answers = [(eq.text or "") for eq in item.iter(f"{QTI}varequal")]
    return 1.0 if any(escape(a.strip().lower(), quote=True) == given for a in answers) else 0.0


def canvas_score_numerical(item: ET.Element, response: str) -> float:
    """numeric_interaction.rb (margin = upper - exact, in BigDecimal) and numerical_question.rb
    (answer - margin <= response <= answer + margin, in BigDecimal)."""
    given = Decimal(response)
    for node in item.iter(f"{QTI}or"):
        exact = Decimal((node.findtext(f"{QTI}varequal") or "0").strip())
        upper = Decimal((node.findtext(f"{QTI}and/{QTI}varlte") or str(exact)).strip())
        margin = upper - exact
        if exact - margin <= given <= exact + margin:
            return 1.0
    return 0.0
