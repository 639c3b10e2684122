"""The quizzes' self-check widgets in JupyterLab: every choice readable, every Check button
giving the right verdict."""

from __future__ import annotations

import pytest

from attention_course.quiz.loading import load_bank
from attention_course.quiz.samples import correct_answer, wrong_answer
from attention_course.quiz.variants import for_student
from tests.browser.conftest import QUIZZES, STUDENT_ID, screenshot
from tests.browser.lab import open_notebook, run_all
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
    box.get_by_role("button", name="Check").click()
    box.page.wait_for_function(
        "([el, before]) => el.innerText.trim() && el.innerText !== before",
        arg=[output.element_handle(), before],
    )
    return output.inner_text().strip()


@pytest.mark.parametrize("quiz", QUIZZES)
def test_quiz_widgets_show_every_choice_whole_and_check_answers(quiz, student_lab, page_factory):
    bank = load_bank(quiz, BANK_DIR)
    page = page_factory(student_lab)
    open_notebook(page, student_lab, f"quiz/{quiz}.selfcheck.ipynb")
    run_all(page, until="all")
    page.get_by_role("button", name="Check").nth(len(bank.questions) - 1).wait_for()

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
