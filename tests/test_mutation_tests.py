"""benchmarks/mutation.py names, for every module it mutates, the tests that should kill its
mutants: each of them exists (a moved or renamed test makes every mutant of that module a
baseline failure, found only hours into a run), and every module it names exists."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from tests.course import COURSE_ROOT

MUTATION = COURSE_ROOT / "benchmarks" / "mutation.py"


def _mutation_module():
    spec = importlib.util.spec_from_file_location("mutation_benchmark", MUTATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_every_test_the_mutation_benchmark_names_exists():
    mutation = _mutation_module()
    missing = []
    for module, arguments in mutation.MODULES.items():
        if not (COURSE_ROOT / module).exists():
            missing.append(f"{module}: no such module")
        for argument in arguments:
            words = argument.split()
            target = words[-1]  # "--deselect NODE" names a test too
            path, _, name = target.partition("::")
            file = COURSE_ROOT / path
            if not file.exists():
                missing.append(f"{module}: {path}: no such test file or folder")
            elif name and name not in _functions(file):
                missing.append(f"{module}: {target}: no such test")
    assert not missing, "\n".join(missing)


def test_every_group_names_modules_the_benchmark_knows():
    mutation = _mutation_module()
    assert mutation.GROUPS, "no groups"
    for group, modules in mutation.GROUPS.items():
        assert modules, group
        unknown = [m for m in modules if m not in mutation.MODULES]
        assert not unknown, f"{group}: {unknown}"
