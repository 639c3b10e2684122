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

from attention_course.quiz import types
from attention_course.quiz.answer_core import format_number
from attention_course.quiz.exports import ExportItem, exportable
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.qti_text import PLACEHOLDER, QTI_NS, md
from attention_course.quiz.variants import Instance

__all__ = ["md", "to_qti_zip", "to_text2qti"]


def _question_block(q: Question, inst: Instance, number: int, title: str) -> list[str]:
    lines = [f"Title: {title}", f"Points: {format_number(q.points)}"]
    return lines + types.of(q).qti_block(q, inst, number) + [""]


def to_text2qti(bank: Bank, items: list[ExportItem]) -> str:
    """The text2qti source of the quiz (Markdown-based plain text)."""
    out = [f"Quiz title: {md(bank.title)}"]
    if bank.description:
        out.append(f"Quiz description: {md(bank.description)}")
    out += ["Shuffle answers: false", ""]
    number = 0
    for item in exportable(items, "qti"):
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


def _replace_placeholders(assessment_xml: str, items: list[ExportItem]) -> str:
    ET.register_namespace("", QTI_NS)
    ET.register_namespace("xsi", "http://www.w3.org/2001/XMLSchema-instance")
    root = ET.fromstring(assessment_xml)
    by_id = {i.question.id: i for i in items}
    for parent in root.iter():
        for index, child in enumerate(list(parent)):
            if child.tag != f"{{{QTI_NS}}}item":
                continue
            text = "".join(child.itertext())
            found = re.search(re.escape(PLACEHOLDER) + r"(\w+)", text)
            if not found or found.group(1) not in by_id:
                continue
            item = by_id[found.group(1)]
            ident = child.attrib["ident"]  # text2qti gives every item one
            new = types.of(item.question).qti_item(item.question, item.instances[0], ident)
            if new is not None:  # the type writes its own item (matching)
                parent.remove(child)
                parent.insert(index, new)
    for section in root.iter(f"{{{QTI_NS}}}section"):
        titles = [i.get("title", "") for i in section.findall(f"{{{QTI_NS}}}item")]
        if section.get("title") == "Group" and titles:  # text2qti titles every group "Group"
            section.set("title", titles[0].split(" v")[0])
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
