"""``attention-course quiz ...``: list, show, validate, take, grade, export and notebook."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_course import settings
from attention_course.cli.options import add_course_option, positive
from attention_course.course import find_course
from attention_course.errors import UserError

if TYPE_CHECKING:  # the quiz engine is imported by the quiz's commands only
    from attention_course.quiz.model import Bank

TAKE_HELP = """\
Take a quiz in the terminal with immediate feedback.

QUIZ is a quiz id or bank file (graded with the instructor's bank: the full key, free-text
rubrics included) or the path of a self-check key made by `quiz export QUIZ --format selfcheck`
(what students are given; recognised by its content, whatever the file is called). A
self-check key stores answers as salted hashes: they cannot be read from the file,
but they are not secret either, since anyone can try every choice, and a numeric key can be
recovered by hashing candidate numbers; numeric answers are accepted within a window of up to
twice the tolerance. Use it for practice, never for grading.

Without --answers the quiz is interactive: an answer in the wrong format is explained and asked
again; an empty line skips a question. With --answers FILE (JSON or YAML: {student: ID,
answers: {question_id: answer}}) every answer is checked at once.

Every attempt is recorded as a response file (student, quiz, time, answers and the verdicts
shown) at --out, by default attempts/<quiz>-<student>-<UTC time>.json; `quiz grade QUIZ FILE`
grades it again with the bank.
"""

EXPORT_HELP = f"""\
Export a quiz from its bank.

  gift         Moodle GIFT text; each templated question's variants in a category of their own;
               GIFT cannot carry question weights (Moodle imports each as 1 point)
  moodlexml    Moodle XML: as gift, plus each question's points and matching distractors
  qti          Canvas QTI 1.2 zip (built with text2qti); variants as a question group, pick 1
  jupyterquiz  jupyterquiz JSON; one variant; holds answers in plain text (jupyterquiz checks
               in the browser), so it hides nothing; free text is left out
  selfcheck    self-check key for `quiz take KEY`: salted hashes, no plaintext answers (see
               `quiz take --help` for what that does and does not hide)
  widgets      self-check notebook (ipywidgets) with the same key embedded

Templated questions: --student ID exports that student's numbers only; otherwise gift,
moodlexml and qti carry --variants variants (default {settings.EXPORT_VARIANTS}) and
jupyterquiz variant 0.
selfcheck and widgets always hold every variant: students type their id to get their numbers.
"""


def _common() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--banks",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of bank files (default: the course's, as its course.toml says)",
    )
    add_course_option(parent)
    return parent


def _quiz_settings(args: argparse.Namespace):
    quiz = find_course(args.course).quiz
    if quiz is None:
        raise UserError("this course declares no quiz ([quiz] in its course.toml)")
    return quiz


def _banks(args: argparse.Namespace) -> Path:
    """The bank folder: --banks, else the course's."""
    return args.banks if args.banks is not None else _quiz_settings(args).banks


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``quiz`` and its sub-commands to the top-level ``attention-course`` parser."""
    parser = subparsers.add_parser(
        "quiz",
        help="quizzes: take, grade, export, validate",
        description="The course's quizzes: one bank file per quiz, in the folder its "
        "course.toml names ([quiz] banks, here quiz/banks/).",
    )
    sub = parser.add_subparsers(dest="quiz_command", required=True, metavar="QUIZ_COMMAND")
    common = _common()

    _add_reading(sub, common)
    _add_taking(sub, common)
    _add_writing(sub, common)


def _add_reading(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """quiz list, show, validate."""
    p = sub.add_parser(
        "list", parents=[common], help="list the quizzes", description="List the quizzes."
    )
    p.set_defaults(run=run_list)

    p = sub.add_parser(
        "show",
        parents=[common],
        help="print a quiz as a student sees it",
        description="Print a quiz's questions as one student sees them (with their numbers).",
    )
    p.add_argument("quiz", metavar="QUIZ", help="quiz id or bank file")
    p.add_argument(
        "--student", metavar="ID", default="", help="whose numbers to show (default: variant 0)"
    )
    p.add_argument("--key", action="store_true", help="also print the answers (instructor only)")
    p.set_defaults(run=run_show)

    p = sub.add_parser(
        "validate",
        parents=[common],
        help="check bank files",
        description=(
            "Check bank files: structure, types, answers, tolerances, duplicate ids, sections, "
            "misconception labels, and that every template computes for every variant. Each "
            "problem is printed as FILE: question ID: REASON."
        ),
    )
    p.add_argument("banks_to_check", nargs="*", metavar="QUIZ_OR_FILE", help="default: every bank")
    p.set_defaults(run=run_validate)


def _add_taking(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """quiz take, grade."""
    p = sub.add_parser(
        "take",
        parents=[common],
        help="take a quiz in the terminal",
        description=TAKE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("quiz", metavar="QUIZ", help="quiz id, bank file, or path of a self-check key")
    p.add_argument("--student", metavar="ID", help="your student id: it picks your numbers")
    p.add_argument("--answers", type=Path, metavar="FILE", help="answers file (JSON or YAML)")
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help=f"response file to record the attempt in (default: {settings.ATTEMPTS_DIR}/"
        "<quiz>-<student>-<UTC time>.json)",
    )
    p.set_defaults(run=run_take)

    p = sub.add_parser(
        "grade",
        parents=[common],
        help="grade a class's response files",
        description=(
            "Grade response files (JSON or YAML, one per student: {student: ID, answers: {...}}) "
            "into a CSV and print an item analysis: per question the share correct and the most "
            "common wrong answers with the misconception they point to. A malformed file gets a "
            "one-line error and the other files are still graded (exit code 1). Free-text "
            "answers get a provisional keyword score and are listed for review."
        ),
    )
    p.add_argument("quiz", metavar="QUIZ", help="quiz id or bank file")
    p.add_argument("responses", nargs="+", type=Path, metavar="RESPONSES", help="response files")
    p.add_argument(
        "--out",
        type=Path,
        default=settings.GRADES_CSV,
        metavar="CSV",
        help=f"grade table to write (default: {settings.GRADES_CSV})",
    )
    p.add_argument(
        "--top",
        type=int,
        default=settings.ITEM_ANALYSIS_TOP_WRONG,
        metavar="N",
        help=f"wrong answers listed per question (default: {settings.ITEM_ANALYSIS_TOP_WRONG})",
    )
    p.set_defaults(run=run_grade)


def _add_writing(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """quiz export, notebook."""
    p = sub.add_parser(
        "export",
        parents=[common],
        help="export to GIFT, QTI, jupyterquiz or self-check",
        description=EXPORT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("quiz", metavar="QUIZ", help="quiz id or bank file")
    p.add_argument("--format", required=True, choices=settings.EXPORT_FORMATS, help="what to write")
    p.add_argument(
        "--out",
        type=Path,
        metavar="PATH",
        help="file to write (default: QUIZ plus the format's suffix, in the current folder)",
    )
    p.add_argument(
        "--variants",
        type=positive,
        default=settings.EXPORT_VARIANTS,
        metavar="N",
        help="variants per templated question in gift/moodlexml/qti "
        f"(default: {settings.EXPORT_VARIANTS})",
    )
    p.add_argument("--student", metavar="ID", help="export only this student's numbers")
    p.set_defaults(run=run_export)

    p = sub.add_parser(
        "notebook",
        parents=[common],
        help="generate the graded nbgrader source notebook",
        description=(
            "Generate the nbgrader source notebook of the graded quiz (course.toml's [quiz] "
            "assignment and quizzes) from the banks. Never edit the notebook by hand: edit the "
            "banks and run this again."
        ),
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help="where to write it (default: source/<quiz assignment>/<quiz assignment>.ipynb)",
    )
    p.add_argument(
        "quizzes",
        nargs="*",
        default=None,
        metavar="QUIZ",
        help="quizzes to include (default: course.toml's [quiz] quizzes)",
    )
    p.set_defaults(run=run_notebook)


# --- helpers ------------------------------------------------------------------------------------


def _load(quiz: str, bank_dir: Path) -> Bank:
    from attention_course.quiz.loading import BankInvalid, load_bank

    try:
        return load_bank(quiz, bank_dir)
    except LookupError as exc:
        raise UserError(str(exc)) from None
    except BankInvalid as exc:
        raise UserError(f"{exc}; run `attention-course quiz validate` for every problem") from None


def _read(path: Path) -> Any:
    from attention_course.quiz.loading import parse_data_file

    try:
        return parse_data_file(path)
    except ValueError as exc:
        raise UserError(str(exc)) from None


# --- commands -----------------------------------------------------------------------------------


def run_list(args: argparse.Namespace) -> int:
    from attention_course.quiz.loading import bank_files, check_bank_file

    for path in bank_files(_banks(args)):
        bank, problems = check_bank_file(path)
        if bank is None:
            print(f"{path.stem:20} INVALID: {problems[0]}")
            continue
        print(
            f"{bank.quiz:20} {len(bank.questions):2} questions, {bank.max_score:g} points, "
            f"from {bank.source}: {bank.title}"
        )
    return 0


def run_show(args: argparse.Namespace) -> int:
    from attention_course.quiz import types
    from attention_course.quiz.sessions import BankSession
    from attention_course.quiz.terminal import render_question

    bank = _load(args.quiz, _banks(args))
    session = BankSession(bank, args.student)
    shown = session.questions()
    print(bank.title)
    for n, q in enumerate(shown, 1):
        print()
        print(render_question(q, n, len(shown)))
        if args.key:
            inst = session.instances[q.id]
            print(f"  KEY: {types.of(inst.question).key_text(inst)}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from attention_course.quiz.loading import bank_files, check_bank_file, resolve

    targets = args.banks_to_check or [str(p) for p in bank_files(_banks(args))]
    if not targets:
        raise UserError(f"no bank files in {_banks(args)}")
    all_problems = []
    for target in targets:
        try:
            path = resolve(target, _banks(args))
        except LookupError as exc:
            raise UserError(str(exc)) from None
        bank, problems = check_bank_file(path)
        if problems:
            all_problems += problems
            for problem in problems:
                print(problem, file=sys.stderr)
        else:
            assert bank is not None  # a bank with no problems is read
            print(f"ok: {path} ({len(bank.questions)} questions, {bank.max_score:g} points)")
    if all_problems:
        files = len({p.path for p in all_problems})
        raise UserError(f"{len(all_problems)} problem(s) in {files} bank file(s)")
    return 0


def _selfcheck_data(path: Path) -> Any:
    """The content of ``path`` when it is a self-check key (by its "format" field), else None."""
    from attention_course.quiz.selfcheck import FORMAT_NAME

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT_NAME else None


def _session(args: argparse.Namespace, student: str) -> Any:
    from attention_course.quiz.selfcheck import validate_selfcheck
    from attention_course.quiz.sessions import BankSession, SelfcheckSession

    path = Path(args.quiz)
    if path.is_file():
        data = _selfcheck_data(path)
        if data is not None:
            try:
                validate_selfcheck(data)
            except ValueError as exc:
                raise UserError(f"{path}: {exc}") from None
            return SelfcheckSession(data, student)
        if path.suffix not in settings.BANK_SUFFIXES:
            raise UserError(f"{path}: neither a self-check key nor a bank file")
    return BankSession(_load(args.quiz, _banks(args)), student)


def run_take(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from attention_course.quiz.attempts import attempt_record, default_path, write_attempt
    from attention_course.quiz.terminal import run_interactive, run_with_answers

    answers: dict[str, Any] | None = None
    student = args.student
    if args.answers is not None:
        data = _read(args.answers)
        if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
            raise UserError(f"{args.answers}: expected a mapping with 'answers'")
        answers = {str(k): v for k, v in data["answers"].items()}
        student = student or (str(data["student"]) if data.get("student") is not None else None)
    if not student:
        if answers is not None or not sys.stdin.isatty():
            raise UserError("give your student id with --student ID (it picks your numbers)")
        student = input("Your student id: ").strip()
        if not student:
            raise UserError("a student id is needed (it picks your numbers)")
    session = _session(args, student)
    started = datetime.now(UTC)
    if answers is not None:
        known = {q.id for q in session.questions()}
        unknown = sorted(set(answers) - known)
        if unknown:
            raise UserError(f"{args.answers}: no question {unknown[0]!r} in this quiz")
        results = run_with_answers(session, answers, sys.stdout)
    else:
        answers = {}
        results = run_interactive(session, input, sys.stdout, answers)
    record = attempt_record(session.quiz, student, answers, results, session.checked_with, started)
    out = args.out or default_path(session.quiz, student, started)
    try:
        write_attempt(record, out)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror}") from None
    print(f"Recorded this attempt in {out} (grade it with `attention-course quiz grade`).")
    return 0


def run_grade(args: argparse.Namespace) -> int:
    from attention_course.quiz.grading import (
        format_item_analysis,
        grade_response_files,
        item_analysis,
    )

    bank = _load(args.quiz, _banks(args))
    graded, errors = grade_response_files(bank, args.responses, args.out)
    for error in errors:
        print(f"attention-course: error: {error}", file=sys.stderr)
    if not graded:
        raise UserError("no response file could be graded")
    print(format_item_analysis(bank, item_analysis(bank, graded), args.top))
    print(f"Wrote {args.out}: {len(graded)} student(s); {len(errors)} file(s) could not be graded.")
    return 1 if errors else 0


def run_export(args: argparse.Namespace) -> int:
    from attention_course.quiz.exports import export_items, left_out

    bank = _load(args.quiz, _banks(args))
    if args.variants < 1:
        raise UserError("--variants must be at least 1")
    out = args.out or Path(bank.quiz + settings.EXPORT_SUFFIX[args.format])
    items = export_items(bank, args.variants, args.student)
    notes = [] if args.format == "jupyterquiz" else left_out(bank, args.format)
    if args.format == "gift":
        from attention_course.quiz.export_gift import to_gift

        content: str | bytes = to_gift(bank, items)
    elif args.format == "moodlexml":
        from attention_course.quiz.export_moodlexml import to_moodlexml

        content = to_moodlexml(bank, items)
    elif args.format == "qti":
        from attention_course.quiz.export_qti import to_qti_zip

        try:
            content = to_qti_zip(bank, items)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    elif args.format == "jupyterquiz":
        from attention_course.quiz.export_jupyterquiz import to_jupyterquiz

        questions, notes = to_jupyterquiz(bank, items)
        content = json.dumps(questions, indent=2, ensure_ascii=False) + "\n"
    elif args.format == "selfcheck":
        from attention_course.quiz.selfcheck import build_selfcheck

        content = json.dumps(build_selfcheck(bank), ensure_ascii=False) + "\n"
    else:
        import nbformat

        from attention_course.quiz.notebooks import selfcheck_notebook
        from attention_course.quiz.selfcheck import build_selfcheck

        content = nbformat.writes(selfcheck_notebook(build_selfcheck(bank)))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            out.write_bytes(content)
        else:
            out.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror}") from None
    from attention_course.quiz.exports import LIMITS

    for note in [*LIMITS.get(args.format, ()), *notes]:
        print(f"note: {note}", file=sys.stderr)
    print(f"Wrote {out} ({args.format}, {len(bank.questions)} questions)")
    return 0


def run_notebook(args: argparse.Namespace) -> int:
    import nbformat

    from attention_course.quiz.notebooks import graded_notebook

    quiz = _quiz_settings(args)
    out = args.out or find_course(args.course).source_notebook(quiz.assignment)
    banks = [_load(q, _banks(args)) for q in args.quizzes or quiz.quizzes]
    notebook = graded_notebook(banks)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(nbformat.writes(notebook), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror}") from None
    print(f"Wrote {out} ({sum(len(b.questions) for b in banks)} questions)")
    return 0
