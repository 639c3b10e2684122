"""A Gradescope autograder for one assignment: the zip.

`build_autograder` writes `setup.sh` (Python 3.11+, bubblewrap, the engine's pinned
dependencies and the engine's own wheel on Gradescope's Ubuntu image), `run_autograder`,
`autograder.json` (the assignment, its functions' points and the engine's version) and the
course's part under `course/`: a course.toml for this one assignment, its graders and the
reference. Nothing is picked by hand: the engine is the same wheel every deployment installs.
What runs inside, for every submission, is `gradescope_run`.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from attention_course import course_schema
from attention_course.course import Course, grade_cell_id
from attention_course.errors import UserError
from attention_course.integrations import wheel
from attention_course.integrations.gradescope_run import (
    CONFIG,
    GRADESCOPE_ROOT,
    INTERNAL_ERROR,
    ROOT_ENV,
    TIMED_OUT,
    failure_result,
)
from attention_course.settings import (
    DEFAULT,
    GRADESCOPE,
    Gradescope,
    Limits,
)

VENV = "/opt/attention-course/venv"  # where setup.sh installs Python and the dependencies
COURSE_DIR = "course"  # the course's part in the zip (/autograder/source/course)


def _support(graders: Path) -> list[Path]:
    """Every file of grader_tests/ but the graders themselves (one per function)."""
    return sorted(p for p in graders.glob("*.py") if not p.name.startswith("test_"))


class AutograderError(ValueError):
    """The autograder cannot be built (unknown assignment, missing files); one line."""


SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): it installs
# bubblewrap (the sandbox for student code) and libseccomp (its system call filter), Python 3.11
# or newer and the course's dependencies, pinned to the versions the autograder was built with.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${ATTENTION_COURSE_VENV:-@VENV@}"
export DEBIAN_FRONTEND=noninteractive

# apt-get runs only for what is missing (an image that has it all needs no network for it).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
apt_install() {
  local missing=()
  for package in "$@"; do installed "$package" || missing+=("$package"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    [ -n "${updated:-}" ] || { apt-get update -qq; updated=1; }
    apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
apt_install bubblewrap libseccomp2 python3 python3-venv python3-pip
new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
PY=""
for candidate in python3 python3.13 python3.12 python3.11; do
  if command -v "$candidate" >/dev/null && new_enough "$candidate"; then
    PY="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$PY" ]; then  # Ubuntu 22.04 ships Python 3.10; 3.11 is in its universe
  apt_install python3.11
  PY="$(command -v python3.11)"
fi
version="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
apt_install "python${version}-venv" >/dev/null 2>&1 || true

mkdir -p "$(dirname "$VENV")"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$SOURCE/requirements.txt"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$SOURCE/@WHEEL@"
"$VENV/bin/python" -m attention_course.integrations.gradescope_run --check \
  --course "$SOURCE/@COURSE@"  # the engine imports and reads the course

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
timeout --kill-after=10 "${ATTENTION_COURSE_TIMEOUT:-480}" \
  "$PYTHON" -m attention_course.integrations.gradescope_run --root "$ROOT" \
  --course "$ROOT/source/@COURSE@"
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


def requirements() -> str:
    """The engine's dependencies, pinned to the versions installed here (the ones it is
    tested with)."""
    return "\n".join(wheel.pinned_dependencies()) + "\n"


def course_toml(course: Course, assignment: str) -> str:
    """A course.toml for the zip: the course's id and this one assignment."""
    spec = course.assignment(assignment)

    def names(values: tuple[str, ...]) -> str:
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    def path(p: Path | None) -> str:
        return "" if p is None else json.dumps(p.relative_to(course.root).as_posix())

    shared = "".join(
        f"{key} = {path(p)}\n"
        for key, p in (
            ("contract", course.contract_file),
            ("misconceptions", course.misconceptions_file),
        )
        if p is not None and p.exists()
    )
    return (
        f"# {assignment} of {course.id}, for Gradescope (written by attention-course gradescope)\n"
        f"[course]\nid = {json.dumps(course.id)}\n"
        f"graders = {json.dumps(course.grader_dir.name)}\n"
        f"reference = {path(course.reference_file)}\n"
        f"{shared}"
        f"\n[assignments.{assignment}]\nfunctions = {names(spec.graded)}\n"
        f"helpers = {names(spec.helpers)}\n"
        f"{limits_table(course.limits)}"
    )


def limits_table(limits: Limits) -> str:
    """course.toml's [limits] table of the limits that are not the defaults ("" if none)."""
    changed = [
        f"{f.name} = {getattr(limits, f.name)!r}\n"
        for f in fields(limits)
        if getattr(limits, f.name) != getattr(DEFAULT, f.name)
    ]
    return "\n[limits]\n" + "".join(changed) if changed else ""


def points(course: Course, assignment: str) -> dict[str, float]:
    """Each graded function's points, from the test cells of the instructor's notebook."""
    path = course.source_notebook(assignment)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        meta = {
            c["metadata"]["nbgrader"]["grade_id"]: c["metadata"]["nbgrader"]
            for c in cells
            if "nbgrader" in c.get("metadata", {})
        }
        graded = course.assignment(assignment).graded
        return {f: float(meta[grade_cell_id(f)]["points"]) for f in graded}
    except (OSError, ValueError, KeyError, TypeError):
        raise AutograderError(
            f"{path}: cannot read the points of {assignment}'s test cells"
        ) from None


def shown(root: Path) -> Gradescope:
    """What students see of a result, and when: the defaults (settings.Gradescope), then
    course.toml's `[gradescope]` table. AutograderError for an unknown key or value."""
    from dataclasses import replace

    try:
        table = course_schema.table(root, "gradescope")  # keys and values: the schema's
    except UserError as exc:
        raise AutograderError(str(exc)) from None
    return replace(GRADESCOPE, **table)


def late_policy(root: Path) -> dict[str, Any]:
    """The course's late policy for the zip: nbgrader's penalty method
    (`c.LateSubmissionPlugin.penalty_method`) and the assignment's due date is Gradescope's
    (each student's, extensions included, from submission_metadata.json). A late plugin of the
    course's own cannot go into the zip: AutograderError."""
    from attention_course.classgrade.nbgrader_api import _config, late_penalty

    if not (root / "nbgrader_config.py").is_file():
        return {"late_penalty": "none"}
    custom = _config(root).AssignLatePenalties.get("plugin_class")
    if custom:
        raise AutograderError(
            f"c.AssignLatePenalties.plugin_class = {custom!r}: the autograder applies "
            "nbgrader's own penalty methods only (c.LateSubmissionPlugin.penalty_method)"
        )
    return {"late_penalty": late_penalty(root)}


def autograder_config(course: Course, assignment: str, unsandboxed: bool = False) -> dict:
    """autograder.json: the assignment, its functions' points, the engine's version, what
    students see and when (course.toml's `[gradescope]`), and the course's late policy."""
    config: dict[str, Any] = {
        "assignment": assignment,
        "points": points(course, assignment),
        "engine": wheel.version(),
        "shown": asdict(shown(course.root)),
        **late_policy(course.root),
    }
    if unsandboxed:
        config["unsandboxed"] = True
    return config


def autograder_files(assignment: str, root: Path, unsandboxed: bool = False) -> dict[str, bytes]:
    """Path in the zip -> content: the scripts, the settings, the pinned dependencies and the
    grading code. `unsandboxed` grades even where Gradescope's machine cannot make a sandbox
    (every result then says UNSANDBOXED)."""
    course = Course.load(root)
    spec = course.assignment(assignment)
    config = autograder_config(course, assignment, unsandboxed)
    fallback = json.dumps(failure_result(config, INTERNAL_ERROR))
    timed_out = json.dumps(failure_result(config, TIMED_OUT))
    files = {
        CONFIG: json.dumps(config, indent=1) + "\n",
        "setup.sh": _fill(SETUP_SH, VENV=VENV, COURSE=COURSE_DIR, WHEEL=wheel.wheel_name()),
        "run_autograder": _fill(
            RUN_AUTOGRADER,
            ROOT_ENV=ROOT_ENV,
            ROOT=str(GRADESCOPE_ROOT),
            VENV=VENV,
            COURSE=COURSE_DIR,
            FALLBACK=fallback,
            TIMED_OUT=timed_out,
        ),
        "requirements.txt": requirements(),
        f"{COURSE_DIR}/course.toml": course_toml(course, assignment),
    }
    sources = _support(course.grader_dir)
    sources += [spec.grader_file(function) for function in spec.graded]
    for shared in (course.reference_file, course.contract_file, course.misconceptions_file):
        if shared is not None and shared not in sources and shared.exists():
            sources.append(shared)
    for path in sources:
        if not path.is_file():
            raise AutograderError(f"{path}: missing (is {root} the course folder?)")
        files[f"{COURSE_DIR}/{path.relative_to(root).as_posix()}"] = path.read_text()
    out = {name: text.encode() for name, text in files.items()}
    with tempfile.TemporaryDirectory() as tmp:
        out[wheel.wheel_name()] = wheel.build_wheel(Path(tmp)).read_bytes()
    return out


def build_autograder(
    assignment: str, out: Path, root: Path, unsandboxed: bool = False
) -> list[str]:
    """Write the autograder zip; the same sources give the same bytes. Returns its file names."""
    try:
        course = Course.load(root)
        course.assignment(assignment)
    except UserError as exc:
        raise AutograderError(str(exc)) from None
    files = autograder_files(assignment, root, unsandboxed)
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
