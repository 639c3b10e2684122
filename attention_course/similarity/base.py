"""Known sources: code students may share without copying from one another.

The course declares its own (course.toml's `[similarity] base`: this course's is the course
text's code), and `attention-course similarity --base PATH...` adds more (last year's
solutions, a public repository). A source is a Python file, a notebook (its code cells), or a
folder of them. What a student's cell shares with a known source is taken out of the
comparison, as the release's stubs are, and the report shows those lines as "from" it.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from attention_course.errors import UserError
from attention_course.grading.notebook import _without_magics, parse_source
from attention_course.settings import SIMILARITY, Similarity
from attention_course.similarity.fingerprint import kgram_hashes
from attention_course.similarity.normalise import CannotCompare, Defaults, normalise


@dataclass(frozen=True)
class Source:
    """A known source: its name in the report and its pieces of code, each normalised on
    its own (a whole file, and each function it defines)."""

    name: str
    path: Path
    pieces: tuple[str, ...]


class BaseError(UserError):
    """A known source that cannot be read; the message names it and says why."""


def _pieces(code: str) -> list[str]:
    """The code whole, and each top-level function alone (a file's functions are read as
    students copy them: one at a time)."""
    found = [code]
    try:
        tree = parse_source(_without_magics(code))
    except SyntaxError:
        return found
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            segment = ast.get_source_segment(code, node)
            if segment:
                found.append(segment)
    return found


def _notebook_code(path: Path, text: str) -> list[str]:
    try:
        nb = json.loads(text)
    except ValueError:
        raise BaseError(f"{path}: not a notebook (not valid JSON)") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise BaseError(f"{path}: not a notebook (no cells)")
    code = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            src = "".join(s for s in src if isinstance(s, str)) if isinstance(src, list) else src
            if isinstance(src, str) and src.strip():
                code.append(src)
    return code


def _files(path: Path, settings: Similarity) -> list[Path]:
    if path.is_dir():
        found = sorted(
            p
            for p in path.rglob("*")
            if p.suffix in settings.base_suffixes and p.is_file() and not p.is_symlink()
        )
        if not found:
            kinds = " or ".join(settings.base_suffixes)
            raise BaseError(f"{path}: a folder with no {kinds} file to read as a known source")
        return found
    if not path.is_file():
        raise BaseError(f"{path}: no such file or folder (a known source)")
    if path.suffix not in settings.base_suffixes:
        kinds = " or ".join(settings.base_suffixes)
        raise BaseError(f"{path}: a known source must be a {kinds} file, or a folder of them")
    return [path]


def read_source(path: Path, name: str = "", settings: Similarity = SIMILARITY) -> Source:
    """The known source at `path` (a file or a folder), named `name` (else its file name);
    BaseError when it cannot be read."""
    pieces: list[str] = []
    total = 0
    for file in _files(path, settings):
        try:
            size = file.stat().st_size
            total += size
            if total > settings.base_bytes:
                raise BaseError(
                    f"{path}: more than {settings.base_bytes:,} bytes of known source code"
                )
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise BaseError(f"{file}: cannot be read as a known source ({why})") from None
        codes = _notebook_code(file, text) if file.suffix == ".ipynb" else [text]
        for code in codes:
            pieces += _pieces(code)
    return Source(name or path.name, path, tuple(pieces))


def base_kgrams(
    sources: list[Source],
    functions: tuple[str, ...],
    defaults: Defaults,
    settings: Similarity = SIMILARITY,
) -> dict[str, dict[int, str]]:
    """function -> every k-gram hash of the sources' code normalised for it -> the name of the
    first source that holds it. Every function of a source is kept, called or not; a piece
    that binds none of the names is normalised once."""
    found: dict[str, dict[int, str]] = {f: {} for f in functions}
    for source in sources:
        for piece in source.pieces:
            names = _binds(piece, functions)
            plain = None if names == set(functions) else _kgrams(piece, "", defaults, settings)
            for f in functions:
                hashes = _kgrams(piece, f, defaults, settings) if f in names else plain
                for h in hashes or ():
                    found[f].setdefault(h, source.name)
    return found


def _binds(piece: str, names: tuple[str, ...]) -> set[str]:
    """Which of `names` the code binds (defines, assigns, takes as a parameter): its tokens
    depend on which of them is the graded function."""
    try:
        tree = parse_source(_without_magics(piece))
    except SyntaxError:
        return set()
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound & set(names)


def _kgrams(piece: str, function: str, defaults: Defaults, settings: Similarity) -> list[int]:
    try:
        labels = normalise(piece, function, defaults, every_def=True).labels
    except CannotCompare:
        return []
    return kgram_hashes(labels, settings.kgram)
