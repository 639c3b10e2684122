"""A course's graders and reference, imported by path from its folder (never from sys.path).

Each course's grader folder becomes a package of its own name (derived from the folder), so
two courses graded in one process never share a module, and the graders' relative imports
(`from . import reference`) find their own course's reference.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import threading
import types

from attention_course.course import Course

_LOCK = threading.Lock()


def package(course: Course) -> str:
    """The module name of the course's grader folder, created on first use."""
    folder = course.grader_dir.resolve()
    name = "attention_course_graders_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    with _LOCK:
        if name not in sys.modules:
            module = types.ModuleType(name, f"The graders of {course.root}.")
            module.__path__ = [str(folder)]
            module.__file__ = str(folder / "__init__.py")
            sys.modules[name] = module
    return name


def grader(course: Course, function: str) -> types.ModuleType:
    """The grader module of `function` (grader_tests/test_<function>.py)."""
    name = f"{package(course)}.test_{function}"
    with _LOCK:
        return importlib.import_module(name)


def reference(course: Course) -> types.ModuleType:
    """The course's reference implementation (never shown to students)."""
    name = f"{package(course)}.{course.reference_file.stem}"
    with _LOCK:
        return importlib.import_module(name)
