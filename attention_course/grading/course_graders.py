"""A course's graders and reference, imported by path from its folder (never from sys.path).

Each course's grader folder becomes a package of its own name (derived from the folder), so
two courses graded in one process never share a module, and the graders' relative imports
(`from . import reference`) find their own course's reference. Graders imported for a
submission's seed (`seed=`) are a package of their own too, whose `rng` draws with that seed
(harness.py); `forget` drops such a package once it is no longer wanted.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import threading
import types

from attention_course.course import Course
from attention_course.grading import harness

_LOCK = threading.Lock()


def package(course: Course, seed: str | None = None) -> str:
    """The module name of the course's grader folder (for `seed`), created on first use."""
    folder = course.grader_dir.resolve()
    name = "attention_course_graders_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    if seed is not None:
        name += f"_seed_{seed}"
    with _LOCK:
        if name not in sys.modules:
            module = types.ModuleType(name, f"The graders of {course.root}.")
            module.__path__ = [str(folder)]
            module.__file__ = str(folder / "__init__.py")
            setattr(module, harness.SEED_ATTRIBUTE, seed)
            sys.modules[name] = module
    return name


def forget(course: Course, seed: str) -> list[str]:
    """Drop the grader package of `seed` and its modules; the names of those modules."""
    name = package(course, seed)
    with _LOCK:
        gone = [m for m in sys.modules if m == name or m.startswith(name + ".")]
        for m in gone:
            del sys.modules[m]
    return gone


def grader(course: Course, function: str, seed: str | None = None) -> types.ModuleType:
    """The grader module of `function` (grader_tests/test_<function>.py), for `seed`."""
    name = f"{package(course, seed)}.test_{function}"
    with _LOCK:
        return importlib.import_module(name)


def reference(course: Course) -> types.ModuleType:
    """The course's reference implementation (never shown to students)."""
    name = f"{package(course)}.{course.reference_file.stem}"
    with _LOCK:
        return importlib.import_module(name)
