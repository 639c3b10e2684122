#!/usr/bin/env bash
# Set up, lint, and run the whole test suite (graders against the reference, the mistake
# catalogue, hostile submissions, nbgrader end to end, the quiz). Extra arguments go to pytest.
# The tests run in two processes (pytest-xdist; tests/conftest.py keeps the modules that share
# servers in one), then, if they passed, the few that measure time (marked `alone`) on their own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# run_pytest ARGS...: pytest; that it collected no tests (status 5) is a failure too.
run_pytest() {
  local status=0
  .venv/bin/python -m pytest "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest $* collected no tests; that is a failure" >&2
    return 1
  fi
  return "$status"
}

run_pytest -n 2 --dist loadgroup -m "not alone" "$@"
run_pytest -m alone "$@"
