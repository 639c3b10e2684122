"""The engine's layers: one wing per stage, lower wings never import higher ones, no import
circles, and the engine never imports a course (graders, reference, banks are read by path)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "attention_course"
# Lowest first: a module may import its own wing and the wings before it, never a later one.
WINGS = (
    *("", "sandbox", "quiz", "grading", "classgrade", "reports"),
    *("similarity", "integrations", "cli"),
)
COURSE_PACKAGES = ("grader_tests", "quiz", "tests", "source", "release")


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in WINGS) else ""


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, at module level or inside functions (not the imports made
    for type checkers only)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


FILES = sorted(p for p in ENGINE.rglob("*.py") if "inside" not in p.parts)
MODULES = {module_name(p) for p in ENGINE.rglob("*.py")}
GRAPH = {module_name(p): {m for m in imports(p) if m in MODULES} for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: module_name(p))
def test_a_module_imports_only_its_own_wing_and_lower_ones(path: Path) -> None:
    here = module_name(path)
    rank = WINGS.index(wing(here))
    higher = sorted(m for m in GRAPH[here] if WINGS.index(wing(m)) > rank)
    assert not higher, f"{here} ({wing(here) or 'base'}) imports higher wings: {higher}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: module_name(p))
def test_the_engine_never_imports_a_course(path: Path) -> None:
    outside = sorted(
        m
        for m in imports(path)
        if m.split(".")[0] in COURSE_PACKAGES
        or m.startswith("attention_course.grader")
        and m not in MODULES
    )
    assert not outside, f"{module_name(path)} imports course code: {outside}"


def test_no_import_circles() -> None:
    """Depth-first search for a cycle in the import graph (lazy imports included)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if nxt == node or nxt == node.rpartition(".")[0]:
                continue  # a module and its own package's __init__
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(GRAPH):
        if node not in state and (cycle := visit(node)):
            pytest.fail("import circle: " + " -> ".join(cycle))


def test_the_checks_can_fail() -> None:
    """The rules above see a lazy import inside a function and a relative one."""
    sample = ENGINE / "sandbox" / "confined.py"
    assert "attention_course.errors" in imports(sample)
    assert any(wing(m) == "quiz" for m in GRAPH["attention_course.grading.quiz_answers"])
    assert WINGS.index(wing("attention_course.cli.main")) > WINGS.index(
        wing("attention_course.sandbox.jail")
    )
