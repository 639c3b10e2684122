"""Sample submissions for the demo class and the end-to-end tests.

Each sample student is made from the released notebook by replacing the source of some solution
cells: `instructor` takes every solution from source/, `partial` gets a few classic mistakes,
`stub` hands in the release untouched, and `hostile` tries to forge its score. `broken` is not a
notebook at all (invalid JSON). The same students answer the graded quiz (`attention_quiz`): all
right, right and wrong alternately, nothing, code and badly formatted answers, broken JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from attention_course.course import Course

# --------------------------------------------------------------------------- partly correct

_MISTAKES = {
    "softmax": '''def softmax(z, axis=-1):
    """Forgets to subtract the maximum: overflows on large scores."""
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)
''',
    "causal_mask": '''def causal_mask(seq_len):
    """tril instead of triu: forbids the past and allows the future."""
    return np.tril(np.ones((seq_len, seq_len)), k=-1).astype(bool)
''',
    "split_heads": '''def split_heads(X, num_heads):
    """Reshapes straight to (num_heads, seq_len, d_k): heads get mixed-up rows."""
    *lead, seq_len, d_model = X.shape
    if d_model % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    return X.reshape(*lead, num_heads, seq_len, d_model // num_heads)
''',
    "attention_cost": '''def attention_cost(seq_len_q, seq_len_k, d_model, num_heads, batch_size=1,
                   bytes_per_float=4):
    """Counts a multiply-add as one FLOP."""
    d_k = d_model // num_heads
    n = batch_size * num_heads * seq_len_q * seq_len_k
    return {"score_flops": n * d_k, "mix_flops": n * d_k, "weights_bytes": n * bytes_per_float}
''',
}

# The partly correct student's mistakes per assignment (in the second assignment they pasted
# correct helpers), and the functions that do not depend on a mistaken one (full marks).
PARTIAL = {
    "attention_basics": {k: _MISTAKES[k] for k in ("softmax", "causal_mask")},
    "masks_and_heads": {k: _MISTAKES[k] for k in ("split_heads", "attention_cost")},
}
PARTIAL_UNAFFECTED = {
    "attention_basics": ("create_qkv",),
    "masks_and_heads": ("self_attention", "cross_attention", "combine_heads"),
}

# --------------------------------------------------------------------------- hostile

_STEAL = """
# Try to read the hidden reference and use it (hidden from the grading worker).
try:
    exec(open({reference!r}).read())
except OSError:
    pass
"""

HOSTILE = {
    "softmax": """import numpy as np
import numpy.testing
np.allclose = lambda *args, **kwargs: True                     # every comparison "passes"
np.testing.assert_allclose = lambda *args, **kwargs: None
np.array_equal = lambda *args, **kwargs: True

def softmax(z, axis=-1):
    return np.zeros_like(z)                                    # and the answer is wrong
""",
    "create_qkv": '''class Liar(np.ndarray):
    """An array that claims to equal anything."""
    def __eq__(self, other):
        return np.ones(np.shape(self), dtype=bool)
    def __ne__(self, other):
        return np.zeros(np.shape(self), dtype=bool)

def create_qkv(X, W_q, W_k, W_v):
    zero = np.zeros(X.shape[:-1] + (W_q.shape[-1],)).view(Liar)
    return zero, zero, zero
''',
    "scaled_dot_product_attention": """def scaled_dot_product_attention(Q, K, V, mask=None):
    while True:                                                # an endless loop
        pass
""",
    "causal_mask": """import sys
try:                                                           # forge the displayed score
    get_ipython().display_formatter.formatters["text/plain"].for_type(
        float, lambda value, printer, cycle: printer.text("5.0"))
except NameError:
    pass
sys.modules["grader_tests"] = type(sys)("grader_tests")        # plant a fake grader module
print("5.0")
{steal}
import sqlite3                                                 # rewrite everybody's grades
for db in ("../../../gradebook.db", {gradebook!r}):
    try:
        with sqlite3.connect("file:" + db + "?mode=rw", uri=True) as con:
            con.execute("UPDATE grade SET auto_score = 0")
    except sqlite3.Error:
        pass

def causal_mask(seq_len):
    return np.zeros((seq_len, seq_len), dtype=bool)
""",
    "self_attention": """import os
def self_attention(X, W_q, W_k, W_v, causal=False):
    os._exit(0)                                                # kill whatever runs this
""",
    "combine_heads": """def combine_heads(H):
    import signal, time
    signal.signal(signal.SIGALRM, signal.SIG_IGN)              # ignore the time limit
    while True:
        time.sleep(1)
""",
    "multi_head_attention": """import warnings
def multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads, mask=None, context=None):
    warnings.warn("printing to stderr does not change a grade")
    return np.zeros(X.shape[:-1] + (W_o.shape[-1],)), None
""",
}

SAMPLE_STUDENTS = ("demo-instructor", "demo-partial", "demo-stub", "demo-hostile", "demo-broken")

# A cell added at the end of the hostile notebook: kills the kernel during nbgrader's Execute.
HOSTILE_LAST_CELL = "import os\nos._exit(1)\n"


def _solution_sources(assignment: str, root: Path) -> dict[str, str]:
    nb = nbformat.read(root / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }


def fill(released: Path, replacements: dict[str, str], extra_cells: list[str] = ()):
    """The released notebook with some solution cells' source replaced."""
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in replacements:
            cell.source = replacements[grade_id]
    for source in extra_cells:
        nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def sample_notebooks(assignment: str, root: Path) -> dict[str, object]:
    """student id -> notebook (or a str holding invalid JSON) for one assignment."""
    if assignment == Course.load(root).quiz_assignment:
        return sample_quiz_notebooks(root)
    released = root / "release" / assignment / f"{assignment}.ipynb"
    solutions = _solution_sources(assignment, root)
    steal = _STEAL.format(reference=str(Course.load(root).reference_file))
    hostile = {
        k: v.replace("{steal}", steal).replace("{gradebook!r}", repr(str(root / "gradebook.db")))
        for k, v in HOSTILE.items()
    }
    partial = dict(solutions, **PARTIAL[assignment])
    return {
        "demo-instructor": fill(released, solutions),
        "demo-partial": fill(released, partial),
        "demo-stub": fill(released, {}),
        "demo-hostile": fill(released, dict(solutions, **hostile), [HOSTILE_LAST_CELL]),
        "demo-broken": '{"cells": [ this is not JSON',
    }


def write_submissions(assignment: str, root: Path) -> list[str]:
    """Write submitted/<student>/<assignment>/<assignment>.ipynb for each sample student."""
    students = []
    for student, nb in sample_notebooks(assignment, root).items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{assignment}.ipynb"
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            nbformat.write(nb, path)
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC\n")
        students.append(student)
    return students


# --------------------------------------------------------------------------- quiz notebooks

_ANSWER_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
_TEXT_STUB = "YOUR ANSWER HERE"


def _quiz_answers(root: Path, student: str, pick) -> dict[tuple[str, str], object]:
    """(quiz, question) -> answer for every question of the graded quizzes, each picked by
    `pick(index, instance)` from the student's own variant."""
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.variants import for_student

    quiz_settings = Course.load(root).quiz
    assert quiz_settings is not None
    answers = {}
    for quiz in quiz_settings.quizzes:
        bank = load_bank(quiz, quiz_settings.banks, quiz_settings.formulas)
        for i, q in enumerate(bank.questions):
            answers[(quiz, q.id)] = pick(i, for_student(bank, q, student))
    return answers


def fill_quiz(released: Path, answers: dict[tuple[str, str], object]):
    """The released quiz notebook with answers written in: `answer = <literal>` in answer
    cells (a str starting with "code:" is written as it is), free text as the cell's text."""
    nb = nbformat.read(released, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        key = tuple(grade_id.removesuffix("__answer").split("__"))
        if key not in answers or not cell.metadata["nbgrader"].get("solution"):
            continue
        value = answers[key]
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace(_TEXT_STUB, str(value))
        else:
            code = value[5:] if isinstance(value, str) and value.startswith("code:") else None
            line = code if code is not None else f"answer = {value!r}"
            cell.source = cell.source.replace(_ANSWER_STUB, line)
    return nb


def sample_quiz_notebooks(root: Path) -> dict[str, object]:
    """student id -> filled-in graded quiz (or a str holding invalid JSON): all right, right and
    wrong alternately, untouched, code and badly formatted answers, broken."""
    from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer

    course = Course.load(root)
    assert course.quiz is not None
    released = course.release_notebook(course.quiz.assignment)

    def hostile(i, inst):  # code is never run: it is not a literal, so the answer is invalid
        if i == 0:
            return "code:answer = chr(98)  # an expression, not a literal"
        return invalid_answer(inst)

    return {
        "demo-instructor": fill_quiz(
            released, _quiz_answers(root, "demo-instructor", lambda i, inst: correct_answer(inst))
        ),
        "demo-partial": fill_quiz(
            released,
            _quiz_answers(
                root,
                "demo-partial",
                lambda i, inst: correct_answer(inst) if i % 2 == 0 else wrong_answer(inst),
            ),
        ),
        "demo-stub": fill_quiz(released, {}),
        "demo-hostile": fill_quiz(released, _quiz_answers(root, "demo-hostile", hostile)),
        "demo-broken": '{"cells": [ this is not JSON',
    }


# --------------------------------------------------------------------------- quiz responses


def quiz_responses(root: Path, quiz: str = "knowledge_check") -> dict[str, object]:
    """student id -> a response file's content (or a str that is not valid JSON), built from
    each student's own variant: all right, right and wrong alternately, unanswered, wrongly
    formatted, broken."""
    from attention_course.quiz.loading import load_bank
    from attention_course.quiz.samples import correct_answer, invalid_answer, wrong_answer
    from attention_course.quiz.variants import for_student

    quiz_settings = Course.load(root).quiz
    assert quiz_settings is not None
    bank = load_bank(quiz, quiz_settings.banks, quiz_settings.formulas)

    def answers(student: str, pick) -> dict:
        return {q.id: pick(i, for_student(bank, q, student)) for i, q in enumerate(bank.questions)}

    return {
        "demo-instructor": answers("demo-instructor", lambda i, inst: correct_answer(inst)),
        "demo-partial": answers(
            "demo-partial",
            lambda i, inst: correct_answer(inst) if i % 2 == 0 else wrong_answer(inst),
        ),
        "demo-stub": {},
        "demo-hostile": answers("demo-hostile", lambda i, inst: invalid_answer(inst)),
        "demo-broken": '{"student": "demo-broken", "answers": {',
    }


def write_quiz_responses(root: Path, folder: Path, quiz: str = "knowledge_check") -> list[Path]:
    """One response file per sample student of the course at `root`, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for student, answers in quiz_responses(root, quiz).items():
        path = folder / f"{student}.json"
        if isinstance(answers, str):
            path.write_text(answers)
        else:
            path.write_text(json.dumps({"student": student, "quiz": quiz, "answers": answers}))
        paths.append(path)
    return paths
