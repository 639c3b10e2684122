"""A course's graders, reference, contract and misconception models, read by path from its folder
(never from sys.path).

Each course's grader folder becomes a package of its own name (derived from the folder), so two
courses graded in one process never share a module, and the graders' relative imports
(`from . import reference`) find their own course's reference. A grader module is imported once
per process: what differs from one submission to the next is the seeded source its `@cases`
function is called with (draws.py), never the module.

Where this stands on a submission's way (docs/life-of-a-submission.md): runner.py (and the
pytest plugin, through pytest's own import) loads a course's grader files here, once per
process; the reference, the contract and the misconception models serve every Session after
that.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import threading
import types

from attention_course.course import Course
from attention_course.grading import contract as contracts
from attention_course.grading.diagnosis import Models

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


def _module(course: Course, stem: str) -> types.ModuleType:
    name = f"{package(course)}.{stem}"
    with _LOCK:
        return importlib.import_module(name)


def grader(course: Course, function: str) -> types.ModuleType:
    """The grader module of `function` (grader_tests/test_<function>.py)."""
    return _module(course, f"test_{function}")


def reference(course: Course) -> types.ModuleType:
    """The course's reference implementation (never shown to students)."""
    return _module(course, course.reference_file.stem)


def contract(course: Course) -> contracts.Contract:
    """The course's exercise contract as data (an empty one where it has none)."""
    if course.contract_file is None:
        return contracts.Contract()
    return contracts.load(course.contract_file)


def misconceptions(course: Course) -> Models:
    """The course's misconception models (none where it declares no file): its module's
    `MODELS`."""
    path = course.misconceptions_file
    if path is None or not path.is_file() or path.parent.resolve() != course.grader_dir.resolve():
        return Models()
    found = getattr(_module(course, path.stem), "MODELS", None)
    return found if isinstance(found, Models) else Models()
