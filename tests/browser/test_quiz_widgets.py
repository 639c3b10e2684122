"""The quizzes' self-check widgets in JupyterLab: the checking code out of sight, the student's id
asked in the widget (the questions follow it), every choice readable, every Check button giving
the right verdict."""

from __future__ import annotations

import pytest

from attention_course.quiz.loading import load_bank
from attention_course.quiz.samples import correct_answer, wrong_answer
from attention_course.quiz.variants import for_student, placeholders
from tests.browser.conftest import NUMBERS_QUIZ, QUIZZES, STUDENT_ID, screenshot
from tests.browser.lab import cells, open_notebook, run_all
from tests.browser.page_checks import LINES
from tests.course import BANK_DIR

# Marks, among the outputs, the innermost element showing each label; returns labels not found.
MARK_LABELS = """(labels) => {
  const output = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const missing = [];
  labels.forEach((label, n) => {
    const hits = [...output.querySelectorAll('*')].filter(e =>
      e.textContent.trim() === label && ![...e.children].some(c => c.textContent.trim() === label));
    if (hits.length) hits[hits.length - 1].setAttribute('data-choice', n); else missing.push(label);
  });
  return missing;
}"""


# The code a student sees: the source of every code cell whose input is on the screen.
SHOWN_CODE = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-editor')]
  .filter(e => e.getClientRects().length).map(e => e.innerText.trim())"""


def _open_selfcheck(page, lab, quiz: str) -> None:
    """Open the quiz's self-check notebook and run all cells; the widget then asks for an id."""
    open_notebook(page, lab, f"quiz/{quiz}.selfcheck.ipynb")
    run_all(page, until="all")
    page.get_by_role("button", name="Show my questions").wait_for()


def _show_questions(page, student_id: str, count: int) -> None:
    """Type `student_id` in the widget's id box, press Show my questions; wait for the questions
    (their Check buttons) of that id."""
    page.get_by_role("textbox", name="Student id").fill(student_id)
    page.get_by_role("button", name="Show my questions").click()
    page.locator(".widget-html", has_text=f"Questions for {student_id}:").wait_for()
    page.get_by_role("button", name="Check", exact=True).nth(count - 1).wait_for()


def _box(page, number: int):
    """The widget box of question `number` (the innermost one holding its bold heading)."""
    return page.locator(".widget-vbox", has=page.locator(f"b:text-is('Question {number}')")).last


def _answer(box, q, answer) -> None:
    labels = {c.id: f"{c.id}) {c.text}" for c in q.choices}
    if q.type == "single_choice":
        box.locator(".widget-hbox", has_text=labels[answer]).locator("input").check()
    elif q.type == "multiple_select":
        for cid, label in labels.items():
            row = box.locator(".widget-hbox", has_text=label).locator("input")
            row.set_checked(cid in answer)
    elif q.type == "matching":
        for item, cid in answer.items():
            box.locator(".widget-dropdown", has_text=item).locator("select").select_option(
                label=cid
            )
    else:
        value = ", ".join(map(str, answer)).join("()") if q.type == "shape" else str(answer)
        box.locator("input[type=text]").fill(value)


def _verdict(box) -> str:
    """Press the question's Check button; the verdict it prints (once it changed)."""
    output = box.locator(".widget-output")
    before = output.inner_text()
    box.get_by_role("button", name="Check", exact=True).click()
    box.page.wait_for_function(
        "([el, before]) => el.innerText.trim() && el.innerText !== before",
        arg=[output.element_handle(), before],
    )
    return output.inner_text().strip()


@pytest.mark.parametrize("quiz", QUIZZES)
def test_quiz_widgets_show_every_choice_whole_and_check_answers(quiz, student_lab, page_factory):
    bank = load_bank(quiz, BANK_DIR)
    page = page_factory(student_lab)
    _open_selfcheck(page, student_lab, quiz)
    assert page.evaluate(SHOWN_CODE) == ["self_check()"], "the checking code is on the screen"
    assert cells(page).locator(".jp-InputPlaceholder").count() == 1  # hidden, one click to see
    assert (
        page.get_by_role("button", name="Check", exact=True).count() == 0
    )  # no questions before an id
    screenshot(page, f"quiz-{quiz}-asks-id")
    _show_questions(page, STUDENT_ID, len(bank.questions))

    labels = [f"{c.id}) {c.text}" for q in bank.questions for c in q.choices]
    assert labels, "the quiz has questions with choices"
    assert page.evaluate(MARK_LABELS, labels) == []
    lines = page.evaluate(LINES, "[data-choice]")
    assert lines["cut"] == [], "choice labels cut off"
    assert lines["lines"] >= len(labels)

    checked = 0
    for number, q in enumerate(bank.questions, 1):
        if q.type == "free_text":  # marked by hand: no verdict here
            continue
        inst = for_student(bank, q, STUDENT_ID)
        box = _box(page, number)
        box.scroll_into_view_if_needed()
        _answer(box, q, wrong_answer(inst))
        assert _verdict(box).startswith("wrong"), q.id
        _answer(box, q, correct_answer(inst))
        assert _verdict(box).startswith("correct"), q.id
        checked += 1
    assert checked
    shown = next(
        (n for n, q in enumerate(bank.questions, 1) if q.type in ("multiple_select", "matching")),
        1,
    )
    _box(page, shown).evaluate("box => box.scrollIntoView({block: 'center'})")
    screenshot(page, f"quiz-{quiz}-widgets")


def test_the_questions_follow_the_id_typed_in_the_widget(student_lab, page_factory):
    bank = load_bank(NUMBERS_QUIZ, BANK_DIR)
    number, q = next((n, q) for n, q in enumerate(bank.questions, 1) if placeholders(q.prompt))
    first = for_student(bank, q, STUDENT_ID)
    other = next(  # a student whose numbers differ in this question
        s
        for s in (f"student{n}" for n in range(100))
        if for_student(bank, q, s).prompt != first.prompt
    )
    page = page_factory(student_lab)
    _open_selfcheck(page, student_lab, NUMBERS_QUIZ)
    shown = {}
    for student in (STUDENT_ID, other):
        _show_questions(page, student, len(bank.questions))
        inst = for_student(bank, q, student)
        box = _box(page, number)
        box.locator(".widget-html", has_text=" ".join(inst.prompt.split())).wait_for()
        shown[student] = " ".join(box.locator(".widget-html").first.inner_text().split())
        assert page.get_by_text(f"Question {number} ").count() == 1, "the last id's questions only"
        _answer(box, q, correct_answer(inst))
        assert _verdict(box).startswith("correct"), (student, q.id)
    assert shown[STUDENT_ID] != shown[other]
    _box(page, number).evaluate("box => box.scrollIntoView({block: 'center'})")
    screenshot(page, f"quiz-{NUMBERS_QUIZ}-{other}")
