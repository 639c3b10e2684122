"""Finding and loading question banks: plain YAML or JSON files, one quiz per file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from attention_course import settings
from attention_course.quiz.formulas import load_formulas
from attention_course.quiz.model import Bank, Problem
from attention_course.quiz.reading import read_bank


class BankInvalid(Exception):
    """A bank file has problems; ``problems`` lists them (file, question id, reason)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = str(problems[0])
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        super().__init__(first + more)


def default_formulas(bank_dir: Path) -> Path | None:
    """The course's formulas file beside its banks' folder, if there is one."""
    path = Path(bank_dir).parent / settings.FORMULAS_FILE
    return path if path.is_file() else None


def bank_files(bank_dir: Path) -> list[Path]:
    """The bank files in ``bank_dir``, sorted by name."""
    return sorted(p for p in bank_dir.glob("*") if p.suffix in settings.BANK_SUFFIXES)


def quiz_ids(bank_dir: Path) -> list[str]:
    return [p.stem for p in bank_files(bank_dir)]


def resolve(quiz_or_path: str, bank_dir: Path) -> Path:
    """The bank file of a quiz id, or the path itself when given a bank file's path.

    Raises LookupError with a one-line message for an unknown quiz or a missing file.
    """
    candidate = Path(quiz_or_path)
    if candidate.suffix in settings.BANK_SUFFIXES:
        if not candidate.is_file():
            raise LookupError(f"{quiz_or_path}: no such bank file")
        return candidate
    for path in bank_files(bank_dir):
        if path.stem == quiz_or_path:
            return path
    known = ", ".join(quiz_ids(bank_dir)) or "none"
    raise LookupError(f"unknown quiz {quiz_or_path!r} (known: {known})")


def parse_data_file(path: Path) -> Any:
    """Parse a JSON or YAML file; raise ValueError with a one-line message naming the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{path}: invalid YAML{where}: {problem}") from None


def check_bank_file(path: Path, formulas: Path | None = None) -> tuple[Bank | None, list[Problem]]:
    """Read a bank file and return it with every problem found (structure and meaning), its
    templates computed with the course's formulas (`formulas`, else beside its folder)."""
    from attention_course.quiz.validation import semantic_problems

    load_formulas(formulas or default_formulas(Path(path).parent))
    try:
        data = parse_data_file(path)
    except ValueError as exc:
        return None, [Problem(str(path), None, str(exc).removeprefix(f"{path}: "))]
    bank, problems = read_bank(path, data)
    if bank is not None and not problems:
        problems = semantic_problems(bank)
    return (bank if not problems else None), problems


def load_bank(quiz_or_path: str, bank_dir: Path, formulas: Path | None = None) -> Bank:
    """Load a valid bank by quiz id or path, with the course's formulas (`formulas`, else
    formulas.py beside the banks' folder). Raises LookupError or BankInvalid."""
    bank, problems = check_bank_file(resolve(quiz_or_path, bank_dir), formulas)
    if bank is None:  # check_bank_file gives a bank exactly when there are no problems
        raise BankInvalid(problems)
    return bank
