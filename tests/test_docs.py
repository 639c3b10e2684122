"""The documentation says only what is true of this repository: its relative links lead to files
(and headings) that exist, every `attention-course` command and option it names is in the
parser, every engine module it names exists, and the README stays a short introduction."""

from __future__ import annotations

import argparse
import ast
import re
from functools import cache
from pathlib import Path

import pytest

from attention_course.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "quiz" / "README.md"]
    + list((ROOT / "docs").glob("*.md"))
)
CHANGELOG = ROOT / "CHANGELOG.md"  # names old module paths on purpose: links and commands only
README_MAX_LINES = 150
QUICKSTART = ("bash scripts/demo.sh", "bash scripts/test.sh")

# Named by the docs before they exist; a pending path that exists is fine. Remove the entry once
# it is in the repository.
PENDING: tuple[str, ...] = ()  # paths named before they exist (none)

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
COMMAND = re.compile(r"attention-course((?:[ \t]+[^\s#`]+)+)")
MODULE_PATH = re.compile(r"attention_course/(?:[A-Za-z_]\w*/)*(?:[A-Za-z_]\w*\.py\b)?")
DOTTED = re.compile(r"\battention_course(?:\.[A-Za-z_]\w*)+")
REPO_PATH = re.compile(r"\b(?:benchmarks|scripts|docs)/[\w./-]*\w\.(?:py|sh|md)\b")


def ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code(markdown: str) -> list[str]:
    """The code of a page: each line of its fenced blocks, and each inline code span."""
    lines = [line for block in FENCE.finditer(markdown) for line in block.group(0).splitlines()]
    return lines + [m.group(0).strip("`") for m in INLINE_CODE.finditer(FENCE.sub("", markdown))]


def prose(markdown: str) -> str:
    """The page without its code (links inside code are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", markdown))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    plain = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")


@cache
def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", text(path))):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


@pytest.mark.parametrize("doc", [*DOCS, CHANGELOG], ids=ids([*DOCS, CHANGELOG]))
def test_relative_links_lead_to_files_and_headings(doc):
    broken = []
    for target in LINK.findall(prose(text(doc))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def check_command(words: list[str]) -> str | None:
    """What is wrong with `attention-course WORDS...` as the docs write it, or None."""
    parser = build_parser()
    named = ["attention-course"]
    for word in words:
        word = word.lstrip("[(")
        if word.startswith("--"):
            option = word.split("=")[0].rstrip("]|.,;:)")
            if option not in options(parser):
                return f"{' '.join(named)}: no option {option}"
            continue
        commands = subcommands(parser)
        if not commands:
            continue  # an argument (an assignment, a file, a placeholder)
        if not re.fullmatch(r"[a-z][a-z-]*", word):
            return None  # a placeholder for the command itself, such as <command> or ...
        if word not in commands:
            return f"{' '.join(named)}: no command {word!r} (known: {', '.join(commands)})"
        parser = commands[word]
        named.append(word)
    return None


@pytest.mark.parametrize("doc", [*DOCS, CHANGELOG], ids=ids([*DOCS, CHANGELOG]))
def test_every_command_and_option_named_exists(doc):
    wrong = []
    for snippet in code(text(doc)):
        snippet = snippet.split(" #")[0]  # a shell comment after the command
        for match in COMMAND.finditer(snippet):
            problem = check_command(match.group(1).split())
            if problem:
                wrong.append(problem)
    assert not wrong, f"{doc.relative_to(ROOT)}: " + "; ".join(sorted(set(wrong)))


def test_the_docs_name_the_commands_they_document():
    """The check above only bites if the docs do name commands: every command is named."""
    named = {
        w for doc in DOCS for s in code(text(doc)) for w in re.findall(r"attention-course (\S+)", s)
    }
    assert set(subcommands(build_parser())) <= named


@cache
def top_level_names(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def check_dotted(name: str) -> str | None:
    """`attention_course.a.b[.attribute]`: the longest module prefix exists, and the first part
    after it is defined at the top of that module."""
    parts = name.split(".")
    for n in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:n])
        module = (
            base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        )
        if module.is_file():
            if n < len(parts) and parts[n] not in top_level_names(module):
                return f"{name}: {'.'.join(parts[:n])} defines no {parts[n]}"
            return None
    return f"{name}: no such module"


@pytest.mark.parametrize("doc", DOCS, ids=ids(DOCS))
def test_every_module_path_named_exists(doc):
    markdown = text(doc)
    missing = []
    for path in set(MODULE_PATH.findall(markdown)) | set(REPO_PATH.findall(markdown)):
        if not path.startswith(PENDING) and not (ROOT / path).exists():
            missing.append(f"{path}: no such file or folder")
    for name in set(DOTTED.findall(markdown)):
        problem = check_dotted(name)
        if problem:
            missing.append(problem)
    assert not missing, f"{doc.relative_to(ROOT)}: " + "; ".join(sorted(missing))


def test_readme_is_short_and_starts_with_the_quickstart():
    readme = text(ROOT / "README.md")
    assert len(readme.splitlines()) <= README_MAX_LINES
    for command in QUICKSTART:
        assert command in readme, f"the README's quickstart lacks {command!r}"


def test_every_docs_page_is_linked_from_the_readme():
    links = {(ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(text(ROOT / "README.md"))}
    pages = [*(ROOT / "docs").glob("*.md"), ROOT / "CONTRIBUTING.md", CHANGELOG]
    assert not [p.name for p in pages if p.resolve() not in links]


LIFE = ROOT / "docs" / "life-of-a-submission.md"
WING_PATH = re.compile(r"\b((?:grading|classgrade|integrations|sandbox|cli)/(?:\w+/)*\w+\.py)\b")


def test_the_life_of_a_submission_names_modules_that_exist():
    """The page's figure and steps name the engine's modules by their path in the engine
    (`grading/runner.py`): each one exists, and the figure is there."""
    page = text(LIFE)
    assert "```mermaid" in page
    named = set(WING_PATH.findall(page))
    missing = sorted(p for p in named if not (ROOT / "attention_course" / p).is_file())
    assert len(named) > 20 and not missing, missing


def test_every_module_of_the_grading_wing_says_where_it_stands_on_that_way():
    """Each module of grading/ says in its docstring where it stands on a submission's way,
    naming the page that draws it."""
    wing = sorted((ROOT / "attention_course" / "grading").glob("*.py"))
    silent = [
        p.name
        for p in wing
        if p.name != "__init__.py"
        and "docs/life-of-a-submission.md" not in (ast.get_docstring(ast.parse(text(p))) or "")
    ]
    assert wing and not silent, silent


def test_the_layout_table_names_every_module_of_the_engine():
    """docs/development.md's table of the engine's wings names each module of the engine (its
    file name in its wing's row): a module added without a line there fails here."""
    page = (ROOT / "docs" / "development.md").read_text()
    table = page[page.index("| wing | what it holds |") : page.index("**The layering rule.**")]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = line.split("|")
        if len(cells) > 2:
            head = cells[1].strip().strip("`").rstrip("/")
            rows["" if head == "base modules" else head] = cells[2]
    engine = ROOT / "attention_course"
    missing = []
    for path in sorted(engine.rglob("*.py")):
        parts = path.relative_to(engine).parts
        wing = parts[0] if len(parts) > 1 else ""
        if path.name != "__init__.py" and f"`{path.name}`" not in rows.get(wing, ""):
            missing.append("/".join(parts))
    assert not missing, f"not in docs/development.md's layout table: {missing}"


def test_every_path_pyproject_names_exists():
    """pyproject.toml's comments name the files that need each dependency: each exists."""
    text = (ROOT / "pyproject.toml").read_text()
    named = set(re.findall(r"\b(?:tests|benchmarks|scripts|attention_course)/[\w./*-]*\w/?", text))
    assert len(named) > 5
    missing = sorted(p for p in named if not list(ROOT.glob(p.rstrip("/"))))
    assert not missing, f"pyproject.toml names what does not exist: {missing}"
