#!/usr/bin/env bash
# Set up, lint, type-check, and run the whole test suite (graders against the reference, the
# mistake catalogue, hostile submissions, nbgrader end to end, the quiz). Extra arguments go to
# pytest.
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
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
