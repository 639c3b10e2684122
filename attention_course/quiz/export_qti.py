"""Canvas QTI 1.2 export, built with text2qti (a maintained Markdown-to-QTI package).

text2qti covers single choice, multiple answers, numerical, short answer (shapes) and essay
(free text). It has no matching question, so each matching question goes through text2qti as a
placeholder essay (keeping its place and points) that is then replaced by a Canvas
``matching_question`` item written with xml.etree. Templated questions become a question group
that gives each student one of the exported variants ("pick: 1").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from text2qti.config import Config
from text2qti.err import Text2qtiError
from text2qti.qti import QTI
from text2qti.quiz import Quiz

from attention_course.quiz.answer_core import format_number
from attention_course.quiz.exports import ExportItem, shape_forms
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.variants import Instance

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
PLACEHOLDER = "matching placeholder "
MD_SPECIAL = re.compile(r"([\\`*_\[\]$<>#|])")


def md(text: str) -> str:
    """Plain text as text2qti Markdown on one line: Markdown and LaTeX characters escaped."""
    return MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _number(value: float) -> str:
    return format_number(value)


def _question_block(q: Question, inst: Instance, number: int, title: str) -> list[str]:
    lines = [f"Title: {title}", f"Points: {format_number(q.points)}"]
    if q.type == "matching":
        return lines + [f"{number}.  {PLACEHOLDER}{q.id} {md(inst.prompt)}", "____", ""]
    lines.append(f"{number}.  {md(inst.prompt)}")
    if q.explanation and q.type != "single_choice":
        lines.append(f"+   {md(q.explanation)}")
    if q.type in ("single_choice", "multiple_select"):
        for letter, c in zip("abcdefghijklmnopqrstuvwxyz", q.choices, strict=False):
            correct = c.id == inst.key if q.type == "single_choice" else c.correct
            if q.type == "single_choice":
                mark = f"*{letter})" if correct else f"{letter}) "
            else:
                mark = "[*]" if correct else "[ ]"
            lines.append(f"{mark} {md(c.text)}")
            note = " ".join(p for p in (c.feedback, q.explanation if correct else "") if p)
            if note and q.type == "single_choice":
                lines.append(f"... {md(note)}")
            elif c.feedback:
                lines.append(f"... {md(c.feedback)}")
    elif q.type == "numeric":
        half = q.tolerance.half_width(inst.key)
        lines.append(f"=   {_number(inst.key)} +- {_number(half)}")
    elif q.type == "shape":
        lines += [f"*   {md(form)}" for form in shape_forms(inst.key)]
    elif q.type == "free_text":
        lines.append("____")
    return lines + [""]


def to_text2qti(bank: Bank, items: list[ExportItem]) -> str:
    """The text2qti source of the quiz (Markdown-based plain text)."""
    out = [f"Quiz title: {md(bank.title)}"]
    if bank.description:
        out.append(f"Quiz description: {md(bank.description)}")
    out += ["Shuffle answers: false", ""]
    number = 0
    for item in items:
        q = item.question
        grouped = q.templated and len(item.instances) > 1
        if grouped:
            out += ["GROUP", "pick: 1", f"points per question: {format_number(q.points)}", ""]
        for inst in item.instances:
            number += 1
            title = f"{q.id} v{inst.variant}" if q.templated else q.id
            out += _question_block(q, inst, number, title)
        if grouped:
            out += ["END_GROUP", ""]
    return "\n".join(out)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{QTI_NS}}}{tag}", attrs)
    if text is not None:
        el.text = text
    return el


def _field(meta: ET.Element, label: str, entry: str) -> None:
    f = _sub(meta, "qtimetadatafield")
    _sub(f, "fieldlabel", label)
    _sub(f, "fieldentry", entry)


def _html(text: str) -> str:
    return "<p>" + text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "</p>"


def matching_item(q: Question, inst: Instance, ident: str) -> ET.Element:
    """A Canvas ``matching_question`` item: one response_lid per item, options as choices."""
    item = ET.Element(f"{{{QTI_NS}}}item", {"ident": ident, "title": q.id})
    meta = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    option_ids = {o.id: f"{ident}_{o.id}" for o in q.choices}
    _field(meta, "question_type", "matching_question")
    _field(meta, "points_possible", format_number(q.points))
    _field(meta, "original_answer_ids", ",".join(option_ids.values()))
    presentation = _sub(item, "presentation")
    _sub(_sub(presentation, "material"), "mattext", _html(inst.prompt), texttype="text/html")
    for n, left in enumerate(q.items):
        lid = _sub(presentation, "response_lid", ident=f"response_{n + 1}")
        _sub(_sub(lid, "material"), "mattext", left, texttype="text/plain")
        choice = _sub(lid, "render_choice")
        for o in q.choices:
            label = _sub(choice, "response_label", ident=option_ids[o.id])
            _sub(_sub(label, "material"), "mattext", o.text)
    processing = _sub(item, "resprocessing")
    _sub(
        _sub(processing, "outcomes"),
        "decvar",
        maxvalue="100",
        minvalue="0",
        varname="SCORE",
        vartype="Decimal",
    )
    share = f"{100 / len(q.items):.2f}"
    for n, left in enumerate(q.items):
        cond = _sub(processing, "respcondition")
        _sub(
            _sub(cond, "conditionvar"),
            "varequal",
            option_ids[inst.key[left]],
            respident=f"response_{n + 1}",
        )
        _sub(cond, "setvar", share, varname="SCORE", action="Add")
    return item


def _replace_placeholders(assessment_xml: str, items: list[ExportItem]) -> str:
    ET.register_namespace("", QTI_NS)
    ET.register_namespace("xsi", "http://www.w3.org/2001/XMLSchema-instance")
    root = ET.fromstring(assessment_xml)
    matching = {i.question.id: i for i in items if i.question.type == "matching"}
    for parent in root.iter():
        for index, child in enumerate(list(parent)):
            if child.tag != f"{{{QTI_NS}}}item":
                continue
            text = "".join(child.itertext())
            found = re.search(re.escape(PLACEHOLDER) + r"(\w+)", text)
            if found and found.group(1) in matching:
                item = matching[found.group(1)]
                new = matching_item(item.question, item.instances[0], child.get("ident"))
                parent.remove(child)
                parent.insert(index, new)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def to_qti_zip(bank: Bank, items: list[ExportItem]) -> bytes:
    """The Canvas-importable QTI 1.2 zip (imsmanifest.xml and the assessment)."""
    source = to_text2qti(bank, items)
    try:
        qti = QTI(Quiz(source, config=Config(), source_name=f"{bank.quiz}.text2qti"))
    except Text2qtiError as exc:  # a bank text text2qti cannot take: report, don't crash
        raise ValueError(f"text2qti rejected the export of {bank.quiz}: {exc}") from None
    qti.assessment = _replace_placeholders(qti.assessment, items)
    return qti.zip_bytes()
