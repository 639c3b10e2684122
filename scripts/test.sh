#!/usr/bin/env bash
# Set up, lint, type-check, and run the whole test suite (graders against the reference, the
# mistake catalogue, hostile submissions, nbgrader end to end, the quiz, the deployments).
# Extra arguments go to pytest. The tests run in two processes (pytest-xdist; tests/conftest.py
# keeps the modules that share servers or a venv in one), then, if they passed, the few that
# measure time (marked `alone`) on their own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# Types: the engine (pyproject.toml's [tool.mypy], strict on sandbox/), then, strictly, the
# scripts of sandbox/inside/ as the top-level modules they are in the sandbox (`import wire`).
.venv/bin/mypy
MYPYPATH=attention_course/sandbox/inside .venv/bin/mypy --strict --explicit-package-bases \
  --no-warn-unused-configs attention_course/sandbox/inside/[!_]*.py

# run_pytest ARGS...: pytest's status (5: it collected no tests).
run_pytest() {
  local status=0
  .venv/bin/python -m pytest "$@" || status=$?
  return "$status"
}

first=0
run_pytest -n 2 --dist loadgroup -m "not alone" "$@" || first=$?
if [ "$first" -ne 0 ] && [ "$first" -ne 5 ]; then
  exit "$first"
fi
second=0
run_pytest -m alone "$@" || second=$?
if [ "$first" -eq 5 ] && [ "$second" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
if [ "$second" -ne 0 ] && [ "$second" -ne 5 ]; then
  exit "$second"
fi
exit 0
