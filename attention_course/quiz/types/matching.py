"""Matching: every item is paired with one option, scored by the share of right pairs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from typing import TYPE_CHECKING, Any

from attention_course.quiz.answer_core import FORMATS, format_number, parse_matching
from attention_course.quiz.gift_text import escape
from attention_course.quiz.moodle_text import question_el, text_el, value_el
from attention_course.quiz.qti_text import PLACEHOLDER, QTI_NS, html, md, metadata_field, sub
from attention_course.quiz.types.base import Put, QuestionType

if TYPE_CHECKING:
    from attention_course.quiz.exports import ExportItem
    from attention_course.quiz.model import Question
    from attention_course.quiz.reading import _Reader
    from attention_course.quiz.results import Result
    from attention_course.quiz.variants import Instance


class Matching(QuestionType):
    name = "matching"
    title = "matching"
    answer_format = FORMATS[name]
    exports = frozenset({"gift", "moodlexml", "qti", "jupyterquiz", "selfcheck", "widgets"})

    def read(self, reader: _Reader, raw: dict, qid: str) -> dict | None:
        items = raw.get("items")
        if (
            not isinstance(items, list)
            or len(items) < 2
            or not all(isinstance(i, str) and i.strip() for i in items)
            or len(set(items)) != len(items)
        ):
            reader.problem(qid, "'items' must be a list of at least two distinct strings")
            return None
        options = reader.choices(raw, qid, key="options")
        answer = raw.get("answer")
        if not isinstance(answer, dict):
            reader.problem(qid, "no answer: 'answer' must map every item to an option id")
            return None
        option_ids = {o.id for o in options}
        if set(answer) != set(items):
            reader.problem(qid, "'answer' must have exactly the keys listed in 'items'")
        for item, option in answer.items():
            if option not in option_ids:
                reader.problem(qid, f"answer for {item!r} is {option!r}, which is not an option id")
        return {"items": tuple(items), "choices": options, "answer": dict(answer)}

    def key(self, question: Question, params: dict[str, Any]) -> Any:
        return dict(question.answer)

    def parse(self, question: Question, raw: object) -> Any:
        return parse_matching(raw, question.items, [c.id for c in question.choices])

    def check(self, instance: Instance, value: Any, text: str) -> Result:
        q, key = instance.question, instance.key
        right = [item for item, opt in value.items() if key[item] == opt]
        wrong = [q.choice(opt) for item, opt in value.items() if key[item] != opt]
        fraction = len(right) / len(q.items)
        if len(right) == len(q.items):
            return self.result(q, "correct", 1.0, [self.correct_note(q)], answer=text)
        labels = [c.misconception for c in wrong if c.misconception] or self.default_labels(q)
        feedback = [c.feedback for c in wrong] or ["Not quite: something is missing."]
        status = "partial" if fraction > 0 else "wrong"
        return self.result(q, status, fraction, feedback, misconceptions=labels, answer=text)

    def correct_answer(self, instance: Instance) -> Any:
        return instance.key

    def wrong_answer(self, instance: Instance) -> Any:
        q = instance.question
        options = [o.id for o in q.choices]
        return {
            item: next(o for o in options[n:] + options[:n] if o != instance.key[item])
            for n, item in enumerate(q.items)
        }

    def invalid_answer(self, instance: Instance) -> Any:
        q = instance.question
        return {q.items[0]: q.choices[0].id}  # the other items are missing

    def answer_example(self, question: Question) -> str | None:
        return "answer = {" + ", ".join(f'"{i}": "?"' for i in question.items) + "}"

    def selfcheck_fields(self, question: Question) -> dict[str, Any]:
        return {
            "choices": [{"id": c.id, "text": c.text} for c in question.choices],
            "choice_ids": [c.id for c in question.choices],
            "items": list(question.items),
        }

    def selfcheck_entries(self, instance: Instance, put: Put) -> None:
        q = instance.question
        for item in q.items:
            for o in q.choices:
                ok = instance.key[item] == o.id
                payload: dict[str, Any] = {"correct": ok}
                if not ok:
                    payload.update(
                        feedback=o.feedback, misconception=o.misconception or q.misconception
                    )
                put(f"{item}={o.id}", payload)
        put("all:" + self.canonical(instance.key), {"correct": True, "feedback": q.explanation})

    def gift_answers(self, item: ExportItem, index: int) -> str:
        """Every item with its option, then each distractor (an option no item takes) with an
        empty left side, which Moodle's GIFT importer keeps as an extra answer."""
        q, inst = item.question, item.instances[index]
        options = {o.id: o.text for o in q.choices}
        lines = [f"={escape(left)} -> {escape(options[inst.key[left]])}" for left in q.items]
        taken = set(inst.key.values())
        lines += [f"= -> {escape(o.text)}" for o in q.choices if o.id not in taken]
        return "{\n" + "\n".join(lines) + "\n}"

    def qti_block(self, question: Question, instance: Instance, number: int) -> list[str]:
        """text2qti has no matching question: a placeholder essay that qti_item replaces."""
        return [f"{number}.  {PLACEHOLDER}{question.id} {md(instance.prompt)}", "____"]

    def qti_item(self, question: Question, instance: Instance, ident: str) -> ET.Element:
        """A Canvas ``matching_question`` item: one response_lid per item, options as choices.

        The options' identifiers are distinct numbers: Canvas's importer numbers each option
        by the first run of digits in its identifier (see :func:`option_idents`)."""
        q, inst = question, instance
        item = ET.Element(f"{{{QTI_NS}}}item", {"ident": ident, "title": q.id})
        meta = sub(sub(item, "itemmetadata"), "qtimetadata")
        option_ids = option_idents(ident, [o.id for o in q.choices])
        metadata_field(meta, "question_type", "matching_question")
        metadata_field(meta, "points_possible", format_number(q.points))
        metadata_field(meta, "original_answer_ids", ",".join(option_ids.values()))
        presentation = sub(item, "presentation")
        sub(sub(presentation, "material"), "mattext", html(inst.prompt), texttype="text/html")
        for n, left in enumerate(q.items):
            lid = sub(presentation, "response_lid", ident=f"response_{n + 1}")
            sub(sub(lid, "material"), "mattext", left, texttype="text/plain")
            choice = sub(lid, "render_choice")
            for o in q.choices:
                label = sub(choice, "response_label", ident=option_ids[o.id])
                sub(sub(label, "material"), "mattext", o.text)
        processing = sub(item, "resprocessing")
        sub(
            sub(processing, "outcomes"),
            "decvar",
            maxvalue="100",
            minvalue="0",
            varname="SCORE",
            vartype="Decimal",
        )
        share = f"{100 / len(q.items):.2f}"
        for n, left in enumerate(q.items):
            cond = sub(processing, "respcondition")
            sub(
                sub(cond, "conditionvar"),
                "varequal",
                option_ids[inst.key[left]],
                respident=f"response_{n + 1}",
            )
            sub(cond, "setvar", share, varname="SCORE", action="Add")
        wrong = " ".join(f'If you chose "{o.text}": {o.feedback}' for o in q.choices if o.feedback)
        for ident_, text in (("correct_fb", q.explanation), ("general_incorrect_fb", wrong)):
            if text:  # Canvas's correct and incorrect comments, as text2qti writes them
                material = sub(sub(sub(item, "itemfeedback", ident=ident_), "flow_mat"), "material")
                sub(material, "mattext", html(text), texttype="text/html")
        return item

    def moodle_question(self, item: ExportItem, index: int, title: str) -> ET.Element:
        """Every item with its option, then each distractor as a subquestion with no text.
        Moodle's matching has no per-option feedback: the options' feedback goes into the
        incorrect-answer feedback."""
        q, inst = item.question, item.instances[index]
        el = question_el("matching", title, inst.prompt, q.points, q.explanation)
        value_el(el, "shuffleanswers", "1")
        options = {o.id: o.text for o in q.choices}
        taken = set(inst.key.values())
        pairs = [(left, options[inst.key[left]]) for left in q.items]
        pairs += [("", o.text) for o in q.choices if o.id not in taken]
        for left, right in pairs:
            sub_el = text_el(el, "subquestion", left, format="plain_text")
            text_el(sub_el, "answer", right)
        wrong = " ".join(f'If you chose "{o.text}": {o.feedback}' for o in q.choices if o.feedback)
        text_el(el, "correctfeedback", q.explanation, format="plain_text")
        text_el(el, "partiallycorrectfeedback", wrong, format="plain_text")
        text_el(el, "incorrectfeedback", wrong, format="plain_text")
        return el

    def jupyterquiz(self, item: ExportItem) -> list[dict[str, Any]]:
        """One multiple-choice question per item."""
        q, inst = item.question, item.instances[0]
        out = []
        for left in q.items:
            answers = [
                {
                    "answer": o.text,
                    "correct": inst.key[left] == o.id,
                    "feedback": "Correct."
                    if inst.key[left] == o.id
                    else o.feedback or "Not quite.",
                }
                for o in q.choices
            ]
            prompt = f"{inst.prompt} ({left})"
            out.append({"question": prompt, "type": "multiple_choice", "answers": answers})
        return out


def option_idents(item_ident: str, option_ids: list[str]) -> dict[str, str]:
    """QTI identifiers of a matching item's options: all digits and distinct.

    Canvas's QTI importer (canvas-lms gems/plugins/qti_exporter/lib/qti/associate_interaction.rb,
    ``get_canvas_matches``) takes an option's match id from the first run of digits in its
    identifier, so identifiers such as ``text2qti_question_<hash>_A`` all become match 2 and
    one option is the answer for every item. These are a number drawn from the item's
    identifier (stable across exports) followed by the option's position.
    """
    base = 100 + zlib.crc32(item_ident.encode("utf-8")) % 900_000
    return {oid: str(base * 100 + n + 1) for n, oid in enumerate(option_ids)}


TYPE = Matching()
