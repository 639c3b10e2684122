"""Moodle XML pieces: the elements of ``<quiz><question type=...>`` (Moodle's XML format)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from attention_course.quiz.answer_core import format_number


def text_el(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    """``<tag format="plain_text"><text>text</text></tag>`` (format only when given)."""
    el = ET.SubElement(parent, tag, attrs)
    ET.SubElement(el, "text").text = text
    return el


def question_el(qtype: str, name: str, prompt: str, points: float, explanation: str) -> ET.Element:
    """A question's common part: name, text, general feedback and its weight (defaultgrade)."""
    q = ET.Element("question", {"type": qtype})
    text_el(q, "name", name)
    text_el(q, "questiontext", prompt, format="plain_text")
    text_el(q, "generalfeedback", explanation, format="plain_text")
    ET.SubElement(q, "defaultgrade").text = format_number(points)
    ET.SubElement(q, "penalty").text = "0"
    ET.SubElement(q, "hidden").text = "0"
    return q


def answer_el(parent: ET.Element, fraction: float, text: str, feedback: str = "") -> ET.Element:
    """An answer worth ``fraction`` (1 = 100%) with its feedback."""
    shown = f"{100 * fraction:.5f}".rstrip("0").rstrip(".")
    a = ET.SubElement(parent, "answer", {"fraction": shown, "format": "plain_text"})
    ET.SubElement(a, "text").text = text
    text_el(a, "feedback", feedback, format="plain_text")
    return a


def value_el(parent: ET.Element, tag: str, text: str) -> ET.Element:
    """``<tag>text</tag>``: one setting of a question."""
    el = ET.SubElement(parent, tag)
    el.text = text
    return el


def category_el(path: str) -> ET.Element:
    q = ET.Element("question", {"type": "category"})
    text_el(q, "category", path)
    return q
