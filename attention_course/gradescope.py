"""A Gradescope autograder for one assignment: the zip, and what runs inside it.

`build_autograder` writes the zip: `setup.sh` (Python 3.11+, bubblewrap and the course's pinned
dependencies on Gradescope's Ubuntu image), `run_autograder`, and the grading code under
`course/`: this package, the assignment's graders and the reference. For every submission
`run_autograder` calls `main` here, which grades `<root>/submission/*.ipynb` with the same graders
and sandbox as `attention-course check` and always writes `<root>/results/results.json` in
Gradescope's format: a notebook that is missing, misnamed or not JSON, and a crash of the grading
itself, each get a result that says so. `<root>` is /autograder on Gradescope.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import zipfile
from pathlib import Path

from attention_course.assignments import ASSIGNMENTS, COURSE_ROOT, get_assignment

GRADESCOPE_ROOT = Path("/autograder")
ROOT_ENV = "AUTOGRADER_ROOT"  # run_autograder's root, for a stand-in folder in tests
VENV = "/opt/attention-course/venv"  # where setup.sh installs Python and the dependencies
COURSE_DIR = "course"  # the grading code's folder in the zip (/autograder/source/course)
CONFIG = "autograder.json"  # the assignment and its functions' points, in the zip
SUPPORT = ("__init__.py", "conftest.py", "harness.py", "reference.py")  # of grader_tests/
# The documented keys of results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/)
RESULT_KEYS = {"score", "execution_time", "output", "visibility", "stdout_visibility", "extra_data"}
TEST_KEYS = {"score", "max_score", "status", "name", "number", "output", "tags", "visibility"}
TIMED_OUT = (
    "Grading your notebook took too long and was stopped: does some code loop forever or run "
    "far too long when the notebook is run from the top?"
)
INTERNAL_ERROR = (
    "Your notebook could not be graded because of a problem on the grading side, not in your "
    "notebook. Your instructor can see the details; please tell them."
)


class AutograderError(ValueError):
    """The autograder cannot be built (unknown assignment, missing files); one line."""


# --------------------------------------------------------------------------- building

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): it installs
# bubblewrap (the sandbox for student code), Python 3.11 or newer and the course's dependencies,
# pinned to the versions the autograder was built with.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${ATTENTION_COURSE_VENV:-@VENV@}"
export DEBIAN_FRONTEND=noninteractive

apt-get update -qq
apt-get install -y -qq bubblewrap python3 python3-venv python3-pip >/dev/null
new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
PY=""
for candidate in python3 python3.13 python3.12 python3.11; do
  if command -v "$candidate" >/dev/null && new_enough "$candidate"; then
    PY="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$PY" ]; then  # Ubuntu 22.04 ships Python 3.10; 3.11 is in its universe
  apt-get install -y -qq python3.11 >/dev/null
  PY="$(command -v python3.11)"
fi
version="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
apt-get install -y -qq "python${version}-venv" >/dev/null 2>&1 || true

mkdir -p "$(dirname "$VENV")"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$SOURCE/requirements.txt"
PYTHONPATH="$SOURCE/@COURSE@" "$VENV/bin/python" -c "import attention_course.grading, numpy"

# The graders and the reference are for the grading process alone.
chmod -R go-rwx "$SOURCE"
probe=(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent true)
if "${probe[@]}" 2>/dev/null; then
  echo "setup: bubblewrap can make a sandbox here: student code will not see /autograder"
else
  echo "setup: WARNING: bubblewrap cannot make a sandbox in this container; student code will"
  echo "setup: run under time and memory limits only, and could read the files of /autograder"
fi
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: it grades the notebook in <root>/submission/ with
# the course's graders and sandbox, and always leaves <root>/results/results.json behind.
ROOT="${@ROOT_ENV@:-@ROOT@}"
PYTHON="${ATTENTION_COURSE_PYTHON:-${ATTENTION_COURSE_VENV:-@VENV@}/bin/python}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
cd "$ROOT" || exit 0
# Stopped before Gradescope's own time limit (10 minutes unless set), so a result is written.
PYTHONPATH="$ROOT/source/@COURSE@" timeout --kill-after=10 "${ATTENTION_COURSE_TIMEOUT:-480}" \
  "$PYTHON" -m attention_course.gradescope --root "$ROOT"
status=$?
if [ ! -s "$RESULTS" ]; then  # the grading program could not run, or ran out of time
  echo "run_autograder: the grading program ended with status $status without writing $RESULTS"
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    cat > "$RESULTS" <<'JSON'
@TIMED_OUT@
JSON
  else
    cat > "$RESULTS" <<'JSON'
@FALLBACK@
JSON
  fi
fi
exit 0
"""


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def requirements(root: Path = COURSE_ROOT) -> str:
    """The course's dependencies, pinned to the versions installed here (the ones it is tested
    with); a dependency not installed here keeps its range."""
    import re
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    lines = []
    for dep in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9._-]+", dep).group(0)  # "numpy>=1.26" -> "numpy"
        try:
            lines.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            lines.append(dep)
    return "\n".join(lines) + "\n"


def points(assignment: str, root: Path = COURSE_ROOT) -> dict[str, float]:
    """Each graded function's points, from the test cells of the instructor's notebook."""
    from attention_course.assignments import grade_cell_id

    path = root / "source" / assignment / f"{assignment}.ipynb"
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        meta = {
            c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]
            for c in cells
            if "nbgrader" in c.get("metadata", {})
        }
        return {f: float(meta[grade_cell_id(f)]["points"]) for f in ASSIGNMENTS[assignment].graded}
    except (OSError, ValueError, KeyError, TypeError):
        raise AutograderError(
            f"{path}: cannot read the points of {assignment}'s test cells"
        ) from None


def autograder_files(assignment: str, root: Path = COURSE_ROOT) -> dict[str, bytes]:
    """Path in the zip -> content: the scripts, the settings, the pinned dependencies and the
    grading code."""
    spec = get_assignment(assignment)
    config = {"assignment": assignment, "points": points(assignment, root)}
    fallback = json.dumps(failure_result(config, INTERNAL_ERROR))
    timed_out = json.dumps(failure_result(config, TIMED_OUT))
    files = {
        CONFIG: json.dumps(config, indent=1) + "\n",
        "setup.sh": _fill(SETUP_SH, VENV=VENV, COURSE=COURSE_DIR),
        "run_autograder": _fill(
            RUN_AUTOGRADER,
            ROOT_ENV=ROOT_ENV,
            ROOT=str(GRADESCOPE_ROOT),
            VENV=VENV,
            COURSE=COURSE_DIR,
            FALLBACK=fallback,
            TIMED_OUT=timed_out,
        ),
        "requirements.txt": requirements(root),
    }
    sources = [root / "pyproject.toml", *sorted((root / "attention_course").glob("*.py"))]
    graders = root / "grader_tests"
    sources += [graders / name for name in SUPPORT]
    sources += [graders / f"test_{function}.py" for function in spec.graded]
    for path in sources:
        if not path.is_file():
            raise AutograderError(f"{path}: missing (is {root} the course folder?)")
        files[f"{COURSE_DIR}/{path.relative_to(root).as_posix()}"] = path.read_text()
    return {name: text.encode() for name, text in files.items()}


def build_autograder(assignment: str, out: Path, root: Path = COURSE_ROOT) -> list[str]:
    """Write the autograder zip; the same sources give the same bytes. Returns its file names."""
    if assignment not in ASSIGNMENTS:
        known = ", ".join(ASSIGNMENTS)
        raise AutograderError(f"unknown assignment {assignment!r} (known: {known})")
    files = autograder_files(assignment, root)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(files):
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                mode = 0o755 if name in ("setup.sh", "run_autograder") else 0o644
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, files[name])
    except OSError as exc:
        raise AutograderError(f"cannot write {out}: {exc.strerror}") from None
    return sorted(files)


# --------------------------------------------------------------------------- grading


def failure_result(config: dict, why: str) -> dict:
    """Zero points for every function, each test saying why (no notebook, not JSON, ...)."""
    tests = [
        {
            "name": function,
            "score": 0.0,
            "max_score": most,
            "status": "failed",
            "output": f"Not graded: {why}",
            "visibility": "visible",
        }
        for function, most in config["points"].items()
    ]
    return {
        "score": 0.0,
        "output": f"{config['assignment']}: not graded. {why}",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "assignment": config["assignment"],
            "max_score": sum(config["points"].values()),
        },
        "tests": tests,
    }


def find_notebook(folder: Path, assignment: str) -> tuple[Path | None, str]:
    """The submitted notebook and a note for the student: `<assignment>.ipynb`, else the only
    notebook, else the one holding this assignment's test cells. Links are never followed."""
    from attention_course.assignments import grade_cell_id
    from attention_course.notebook import NotebookError, read_notebook

    expected = f"{assignment}.ipynb"
    found = sorted(
        p
        for p in folder.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and p.is_file() and not p.is_symlink()
    )
    if not found:
        return None, f"No notebook (.ipynb) in your submission: upload {expected}."
    for path in found:
        if path.name == expected:
            return path, ""
    if len(found) == 1:
        return found[0], f"Graded {found[0].name} (this assignment's notebook is {expected})."
    ids = {grade_cell_id(f) for f in get_assignment(assignment).graded}
    for path in found:
        try:
            cells = read_notebook(path)["cells"]
        except NotebookError:
            continue
        names = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in cells}
        if ids <= names:
            return path, f"Graded {path.name}: of {len(found)} notebooks, the one of {assignment}."
    return found[0], f"Graded {found[0].name}, the first of {len(found)} notebooks."


def grade_submission(root: Path, config: dict) -> dict:
    """results.json for the submission in `<root>/submission/`."""
    from attention_course.grading import grade_file
    from attention_course.notebook import NotebookError, read_notebook
    from attention_course.report import function_table, gradescope_results

    assignment = config["assignment"]
    path, note = find_notebook(root / "submission", assignment)
    if path is None:
        return failure_result(config, note)
    shown = path.relative_to(root / "submission")
    try:
        read_notebook(path)
    except NotebookError as exc:
        why = str(exc).replace(str(path), str(shown))
        return failure_result(config, f"{why}. Download the notebook again and resubmit.")
    report = grade_file(path, assignment, isolate="auto", hide=[root])
    print(function_table(report))  # stdout: for the instructor only
    raw = gradescope_results(report)
    notes = [note] if note else []
    notes += [f"Note: {n}" for n in report.notes]
    return {
        "score": raw["score"],
        "output": "\n".join([raw["output"], *notes]),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"assignment": assignment, "max_score": raw["max_score"]},
        "tests": [
            {
                **{k: v for k, v in test.items() if k in TEST_KEYS},
                "status": "passed" if test["score"] >= test["max_score"] else "failed",
            }
            for test in raw["tests"]
        ],
    }


def run(root: Path) -> int:
    """Grade and write `<root>/results/results.json`, whatever happens. Returns an exit code."""
    from attention_course.sandbox import bwrap_path

    start = time.monotonic()
    code, config = 0, None
    try:
        config = json.loads((root / "source" / CONFIG).read_text())
        print("grading code:", COURSE_ROOT)
        print("sandbox:", "bubblewrap" if bwrap_path() else "NONE (limits only)", flush=True)
        results = grade_submission(root, config)
    except BaseException:  # noqa: BLE001 - whatever goes wrong, Gradescope gets a result
        traceback.print_exc(file=sys.stdout)  # the details stay in the instructor's stdout
        if isinstance(config, dict) and "points" in config:
            results = failure_result(config, INTERNAL_ERROR)
        else:
            results = {"score": 0.0, "output": INTERNAL_ERROR, "stdout_visibility": "hidden"}
        code = 1
    results["execution_time"] = round(time.monotonic() - start)
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_suffix(".json.part")
    part.write_text(json.dumps(results, indent=1))
    os.replace(part, out)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attention_course.gradescope",
        description="Grade <root>/submission/*.ipynb and write <root>/results/results.json "
        "(what run_autograder calls on Gradescope).",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(os.environ.get(ROOT_ENV, GRADESCOPE_ROOT)),
        help=f"the autograder folder (default: ${ROOT_ENV} or {GRADESCOPE_ROOT})",
    )
    args = parser.parse_args(argv)
    return run(args.root.resolve())


if __name__ == "__main__":
    sys.exit(main())
