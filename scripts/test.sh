#!/usr/bin/env bash
# Set up, lint, type-check, and run the whole test suite (graders against the reference, the
# mistake catalogue, hostile submissions, nbgrader end to end, the quiz, the deployments).
# Extra arguments go to pytest; a first argument --long adds the tests marked `long` (further
# variants of scenarios the suite runs once already, minutes of real waiting: CI leaves them
# out). The tests run in four processes (pytest-xdist; two take the tests that compute first,
# two the tests that mostly wait, on servers, a browser or faults lasting seconds of real time,
# so that two cores stay busy; tests/conftest.py keeps the modules that share a server in one),
# then, if they passed, the few that measure
# time (marked `alone`) on their own. The type checker runs beside the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
selected="not alone and not long"
if [ "${1:-}" = "--long" ]; then
  selected="not alone"
  shift
fi
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# Types: the engine (pyproject.toml's [tool.mypy], strict on sandbox/), then, strictly, the
# scripts of sandbox/inside/ as the top-level modules they are in the sandbox (`import wire`).
types_log="$(mktemp)"
(
  .venv/bin/mypy
  MYPYPATH=attention_course/sandbox/inside .venv/bin/mypy --strict --explicit-package-bases \
    --no-warn-unused-configs attention_course/sandbox/inside/[!_]*.py
) >"$types_log" 2>&1 &
types_pid=$!

# types_verdict: the type check's output, and whether it passed (waits for it).
types_verdict() {
  local status=0
  wait "$types_pid" || status=$?
  cat "$types_log"
  rm -f "$types_log"
  if [ "$status" -ne 0 ]; then
    echo "test.sh: the type check failed" >&2
  fi
  return "$status"
}

first=0
.venv/bin/python -m pytest -n "${TEST_PROCESSES:-4}" --dist loadscope -m "$selected" "$@" \
  || first=$?
if [ "$first" -ne 0 ] && [ "$first" -ne 5 ]; then
  types_verdict || true
  exit "$first"
fi
second=0
.venv/bin/python -m pytest -m alone "$@" || second=$?
types_verdict
if [ "$first" -eq 5 ] && [ "$second" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
if [ "$second" -ne 0 ] && [ "$second" -ne 5 ]; then
  exit "$second"
fi
exit 0
