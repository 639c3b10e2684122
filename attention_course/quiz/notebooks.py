"""Notebooks generated from the banks: the graded nbgrader source and the self-check widgets.

Graded (``attention-course quiz notebook``): one markdown cell per question; an answer cell
(nbgrader solution cell) where the student writes ``answer = <literal>``; a locked grade cell
whose hidden part names the question (``# quiz-grader: <quiz>/<question>``), graded out of the
kernel by attention_course.grading.quiz_answers.GradeQuizAnswers. Free-text questions are
manually graded
markdown cells, each followed by a locked cell that shows the instructor a provisional keyword
score. The notebook holds no key: keys stay in the banks. A locked cell prints every templated
question with the student's own numbers once they type their id.

Self-check (``attention-course quiz export QUIZ --format widgets``): the self-check key and the
two standard-library modules that read it (seeding.py, answer_core.py) embedded verbatim, and
ipywidgets to answer and check, in one cell whose source is hidden; the widget asks for the
student's id.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import nbformat
from nbformat.notebooknode import NotebookNode

from attention_course import settings
from attention_course.quiz import answer_core, seeding, types
from attention_course.quiz.answer_form import FORM_KEY, META_KEY, answer_form
from attention_course.quiz.model import Bank, Question
from attention_course.quiz.variants import placeholders

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
REVIEW_MARKER = "# quiz-review:"


def answer_cell_id(quiz: str, qid: str) -> str:
    return f"{quiz}__{qid}__answer"


def grade_cell_id(quiz: str, qid: str) -> str:
    return f"{quiz}__{qid}"


def review_cell_id(quiz: str, qid: str) -> str:
    return f"{quiz}__{qid}__review"


def _nbgrader(
    cell: NotebookNode,
    grade_id: str,
    *,
    solution: bool,
    grade: bool,
    locked: bool,
    points: float | None = None,
) -> NotebookNode:
    meta: dict[str, Any] = {
        "schema_version": 3,
        "grade_id": grade_id,
        "solution": solution,
        "grade": grade,
        "locked": locked,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def _markdown(source: str, grade_id: str | None = None) -> NotebookNode:
    cell = nbformat.v4.new_markdown_cell(source)
    if grade_id:
        _nbgrader(cell, grade_id, solution=False, grade=False, locked=True)
    return cell


def _code(source: str, grade_id: str | None = None, **flags: Any) -> NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if grade_id:
        _nbgrader(cell, grade_id, **flags)
    return cell


def _symbolic_prompt(bank: Bank, q: Question) -> str:
    if not placeholders(q.prompt):
        return q.prompt
    return q.prompt.format(**{name: f"⟨{name}⟩" for name in bank.parameters})


def question_heading(bank: Bank, q: Question, part: int, number: int) -> str:
    """A heading a student can read: part and question number, the course-text section it
    covers and the points (the internal ids stay in the cells' metadata)."""
    points = f"{q.points:g} point" + ("" if q.points == 1 else "s")
    section = re.sub(r"^\d+\.\s*", "", bank.sections.get(q.section, q.section))
    return f"### Question {part}.{number}: {section} ({points})"


def _question_markdown(bank: Bank, q: Question, part: int, number: int) -> str:
    lines = [
        question_heading(bank, q, part, number),
        "",
        " ".join(_symbolic_prompt(bank, q).split()),
    ]
    if placeholders(q.prompt):
        lines += ["", "*The numbers ⟨…⟩ are yours: see the output of the “Your numbers” cell.*"]
    if q.items:
        lines += ["", "Items: " + ", ".join(f"`{item}`" for item in q.items), "", "Options:"]
    if q.choices:
        lines.append("")
        lines += [f"- **{c.id}**) {c.text}" for c in q.choices]
    lines += ["", types.of(q).notebook_note(q)]
    return "\n".join(lines)


def _answer_source(q: Question) -> str:
    example = types.of(q).answer_example(q)
    return "\n".join(
        [
            f"# Write your answer as a Python literal, like: {example}",
            "# This cell is read, not run, when graded: only a literal counts.",
            "answer = None",
            "### BEGIN SOLUTION",
            "# (the key is in the quiz bank, not in this notebook)",
            "### END SOLUTION",
        ]
    )


def embeddable_source(module: Any) -> str:
    """A module's source as a notebook cell: its docstring as comments, no __future__ import
    (which must open a file, not a cell)."""
    source = inspect.getsource(module)
    doc = module.__doc__ or ""
    lines = source.split("\n")
    body = "\n".join(lines[len(f'"""{doc}"""'.split("\n")) :])
    comments = "\n".join(f"# {line}".rstrip() for line in doc.strip().split("\n"))
    body = body.replace("from __future__ import annotations\n", "", 1).lstrip("\n")
    return f"{comments}\n\n{body}".rstrip()


def _py_string(text: str, indent: int, key: str) -> str:
    """``text`` as the value of dict entry ``key``, laid out the way ruff formats it."""
    one_line = json.dumps(text, ensure_ascii=False)
    if indent + len(f'"{key}": {one_line},') <= 100:
        return one_line
    chunks, current = [], ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if len(candidate) + indent + 4 + 3 > 100 and current:
            chunks.append(current + " ")
            current = word
        else:
            current = candidate
    chunks.append(current)
    pad = " " * (indent + 4)
    inner = "\n".join(pad + json.dumps(c, ensure_ascii=False) for c in chunks)
    return "(\n" + inner + "\n" + " " * indent + ")"


def _numbers_table(banks: list[Bank]) -> str:
    out = ["QUIZ_NUMBERS = {"]
    for b in banks:
        if not b.parameters:
            continue
        out += [f'    "{b.quiz}": {{', f'        "variants": {b.variant_count},']
        out.append('        "parameters": {')
        out += [
            f'            "{name}": {json.dumps(values)},' for name, values in b.parameters.items()
        ]
        out += ["        },", '        "prompts": {']
        for q in b.questions:
            if placeholders(q.prompt):
                prompt = _py_string(" ".join(q.prompt.split()), 12, q.id)
                out.append(f'            "{q.id}": {prompt},')
        out += ["        },", "    },"]
    out.append("}")
    return "\n".join(out)


def _numbers_source(banks: list[Bank]) -> str:
    return "\n".join(
        [
            embeddable_source(seeding),
            "",
            "",
            _numbers_table(banks),
            "",
            "",
            "def show_numbers(student_id):",
            '    """Print every templated question with this student\'s own numbers."""',
            "    if not str(student_id).strip():",
            '        print("Type your student id above (in quotes), then run both cells.")',
            "        return",
            "    for quiz, spec in QUIZ_NUMBERS.items():",
            '        variant = variant_of(quiz, student_id, spec["variants"])',
            '        params = draw_parameters(quiz, variant, spec["parameters"])',
            '        for qid, prompt in spec["prompts"].items():',
            '            print(f"{quiz} / {qid}:")',
            '            print("    " + prompt.format(**params))',
            "",
            "",
            "show_numbers(STUDENT_ID)",
        ]
    )


def _answer_cells(bank: Bank, q) -> list[NotebookNode]:
    """The cells that take one question's answer: an answer cell read by its grade cell, or
    for a question marked by hand, a markdown answer and the instructor's review cell."""
    if types.of(q).hand_graded:  # answered in markdown, marked by hand
        answer = nbformat.v4.new_markdown_cell("Write your answer here.")
        review = (
            "# For the instructor: notes on the answer above appear here after\n"
            "# autograding; the mark itself is given by hand.\n"
            f"{REVIEW_MARKER} {bank.quiz}/{q.id}"
        )
        return [
            _nbgrader(
                answer,
                grade_cell_id(bank.quiz, q.id),
                solution=True,
                grade=True,
                locked=False,
                points=q.points,
            ),
            _code(
                review,
                review_cell_id(bank.quiz, q.id),
                solution=False,
                grade=False,
                locked=True,
            ),
        ]
    answer = _code(
        _answer_source(q),
        answer_cell_id(bank.quiz, q.id),
        solution=True,
        grade=False,
        locked=False,
    )
    answer.metadata[META_KEY] = {FORM_KEY: answer_form(q)}  # Validate reads it
    grader = (
        "# Graded from your answer above when the notebook is autograded.\n"
        "### BEGIN HIDDEN TESTS\n"
        f"{settings.GRADER_MARKER} {bank.quiz}/{q.id}\n"
        "### END HIDDEN TESTS"
    )
    return [
        answer,
        _code(
            grader,
            grade_cell_id(bank.quiz, q.id),
            solution=False,
            grade=True,
            locked=True,
            points=q.points,
        ),
    ]


def graded_notebook(banks: list[Bank]) -> NotebookNode:
    """The nbgrader source notebook of the graded quiz over ``banks``."""
    total = sum(b.max_score for b in banks)
    intro = f"""# Attention quiz

{len(banks)} parts, {sum(len(b.questions) for b in banks)} questions, {total:g} points.

**How to answer.** Each question has an answer cell. Replace the two lines
`# YOUR CODE HERE` / `raise NotImplementedError()` with `answer = ...`, where `...` is a Python
literal: a letter in quotes (`"b"`), a list of letters (`["a", "c"]`), a number (`64`, `0.125`),
a shape (`(3, 4)`) or a mapping (`{{"query": "D", ...}}`). Answer cells are **read, not run**, when
your notebook is graded: an expression, a variable or a function call is an *invalid* answer.
Free-text answers go in the markdown cells marked for them and are graded by hand.

**Your numbers.** Some questions use numbers of your own, shown as ⟨name⟩. Type your student id
(your course login) in the next cell, then run it and the “Your numbers” cell after it. Grading
uses the id you were registered with, so type it exactly.
"""
    numbers = _code(
        _numbers_source(banks), "quiz_numbers", solution=False, grade=False, locked=True
    )
    numbers.metadata["jupyter"] = {"source_hidden": True}  # the hashing code, out of sight
    cells = [
        _markdown(intro, "quiz_intro"),
        nbformat.v4.new_code_cell('STUDENT_ID = ""  # your student id (course login), in quotes'),
        _markdown(
            "#### Your numbers\n\nRun the next cell (its code is hidden; it only works out your "
            "numbers from your id).",
            "quiz_numbers_title",
        ),
        numbers,
    ]
    for part, bank in enumerate(banks, 1):
        cells.append(
            _markdown(
                f"## Part {part}. {bank.title}\n\n{bank.description}".strip(),
                f"{bank.quiz}__title",
            )
        )
        for number, q in enumerate(bank.questions, 1):
            cells.append(
                _markdown(_question_markdown(bank, q, part, number), f"{bank.quiz}__{q.id}__prompt")
            )
            cells += _answer_cells(bank, q)
    notebook = nbformat.v4.new_notebook(cells=_stable_ids(cells))
    notebook.metadata["kernelspec"] = KERNELSPEC
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def _stable_ids(cells: list[NotebookNode]) -> list[NotebookNode]:
    """Cell ids from the nbgrader grade ids (or positions): regenerating changes nothing."""
    for n, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell["id"] = (grade_id or f"cell-{n}").replace("__", "-")[:64]
    return cells


# --- self-check notebook ------------------------------------------------------------------------

WIDGETS_UI = '''\
import html

import ipywidgets as widgets
from IPython.display import display


def student_parameters(student_id):
    variant = variant_of(SELF_CHECK["quiz"], student_id, SELF_CHECK["variant_count"])
    return draw_parameters(SELF_CHECK["quiz"], variant, SELF_CHECK["parameters"])


def check_answer(question_id, student_id, answer):
    """Check one answer (as you would type it) and return status, fraction and feedback."""
    question = next(q for q in SELF_CHECK["questions"] if q["id"] == question_id)
    return check_selfcheck(SELF_CHECK["salt"], question, student_parameters(student_id), answer)


def _label(text):
    """A choice's text that wraps, however long (a widget's own description is cut off)."""
    return widgets.HTML(
        f'<div style="line-height: 1.4; padding: 4px 0">{html.escape(text)}</div>',
        layout={"flex": "1 1 auto", "min_width": "0"},
    )


def _choice_row(toggle, text):
    toggle.layout = {"width": "auto", "flex": "0 0 auto"}
    return widgets.HBox([toggle, _label(text)], layout={"align_items": "flex-start"})


def _input(q):
    """A widget for question q and a function reading its answer."""
    labels = [(f"{c['id']}) {c['text']}", c["id"]) for c in q.get("choices", [])]
    if q["type"] == "single_choice":
        # one radio button per row, so that each choice's text can wrap; picking one clears
        # the others
        radios = [widgets.RadioButtons(options=[("", cid)], value=None) for _, cid in labels]

        def pick(change, radios=radios):
            if change["new"] is not None:
                for other in radios:
                    if other is not change["owner"]:
                        other.value = None

        for radio in radios:
            radio.observe(pick, names="value")
        rows = [_choice_row(r, label) for r, (label, _) in zip(radios, labels)]
        read = lambda: next((r.value for r in radios if r.value is not None), None)  # noqa: E731
        return widgets.VBox(rows), read
    if q["type"] == "multiple_select":
        boxes = [widgets.Checkbox(value=False, indent=False) for _ in labels]
        rows = [_choice_row(b, label) for b, (label, _) in zip(boxes, labels)]
        ids = [cid for _, cid in labels]
        return widgets.VBox(rows), lambda: [i for i, b in zip(ids, boxes) if b.value]
    if q["type"] == "matching":
        # the options in full once, then one menu of option letters per item
        options = [_label(label) for label, _ in labels]
        drops = {
            item: widgets.Dropdown(
                options=[("-", None)] + [(cid, cid) for _, cid in labels],
                description=item,
                style={"description_width": "initial"},
            )
            for item in q["items"]
        }
        read = lambda: {k: d.value for k, d in drops.items() if d.value is not None}  # noqa: E731
        return widgets.VBox(options + list(drops.values())), read
    if q["type"] == "free_text":
        w = widgets.Textarea(placeholder="Your answer", layout={"width": "90%"})
    else:
        w = widgets.Text(placeholder=q["format"])
    return w, lambda: w.value.strip() or None


def _questions(student_id):
    """Every question with this student's numbers, each with a Check button."""
    params = student_parameters(student_id)
    boxes = []
    for n, q in enumerate(SELF_CHECK["questions"], 1):
        prompt = q["prompt"].format(**params) if SELF_CHECK["parameters"] else q["prompt"]
        field, read = _input(q)
        out = widgets.Output()
        button = widgets.Button(description="Check")

        def on_click(_, q=q, read=read, out=out):
            out.clear_output()
            with out:
                r = check_selfcheck(SELF_CHECK["salt"], q, params, read())
                if r["status"] != "needs_review":  # free text: marked by hand, no score here
                    print(f"{r['status']} ({r['fraction'] * q['points']:g}/{q['points']:g})")
                for line in r["feedback"]:
                    print(line)

        button.on_click(on_click)
        head = f"<b>Question {n}</b> ({q['points']:g} pt): {html.escape(prompt)}"
        boxes.append(widgets.VBox([widgets.HTML(head), field, button, out]))
    return boxes


ASK_ID = "Type your student id (your course login) and press Show my questions."


def self_check(student_id=""):
    """The self-check: a box for the student's id, then every question with that id's numbers
    (shown again, with the new id's numbers, whenever another id is given)."""
    id_box = widgets.Text(
        value=str(student_id),
        description="Student id",
        placeholder="your course login",
        continuous_update=False,
    )
    show = widgets.Button(description="Show my questions", button_style="primary")
    status = widgets.HTML()
    questions = widgets.VBox()
    shown = {"id": None}  # whose questions are on the screen (kept, with their answers, if same)

    def refresh(_=None):
        given = id_box.value.strip()
        if given == shown["id"]:
            return
        shown["id"] = given
        if not given:
            status.value = html.escape(ASK_ID)
            questions.children = ()
            return
        questions.children = _questions(given)
        status.value = f"Questions for <b>{html.escape(given)}</b>:"

    show.on_click(refresh)
    id_box.observe(refresh, names="value")
    refresh()
    display(widgets.VBox([widgets.HBox([id_box, show]), status, questions]))
'''


def selfcheck_notebook(key: dict[str, Any]) -> NotebookNode:
    """A notebook that checks answers against ``key`` (a self-check key) with ipywidgets: the
    checking code in one cell whose source is hidden, then one line that shows the widget, which
    asks for the student's id."""
    intro = f"""# Self-check: {key["title"]}

Practice, not graded. Run all cells (**Run > Run All Cells**), type your student id in the box
that appears and press **Show my questions**: every question appears with your own numbers and a
**Check** button that gives feedback at once.

{key["notice"]} Numeric answers are accepted within a window of up to twice the tolerance.
"""
    data = json.dumps(key, ensure_ascii=True, separators=(",", ":"))
    engine = "\n\n\n".join(
        [
            "# The self-check's code: the key and what reads it (no answers in plain text).",
            embeddable_source(seeding),
            embeddable_source(answer_core),
            f'import json\n\nSELF_CHECK = json.loads(r"""{data}""")',
            WIDGETS_UI.rstrip(),
        ]
    )
    code = nbformat.v4.new_code_cell(engine)
    code.metadata["jupyter"] = {"source_hidden": True}  # out of sight, one click to see it
    code.metadata["editable"] = False
    code.metadata["deletable"] = False
    cells = [
        nbformat.v4.new_markdown_cell(intro),
        code,
        nbformat.v4.new_code_cell("self_check()"),
    ]
    notebook = nbformat.v4.new_notebook(cells=_stable_ids(cells))
    notebook.metadata["kernelspec"] = KERNELSPEC
    return notebook
