#!/usr/bin/env bash
# Set up this course on a fresh machine: bubblewrap (sandbox for student code), chromium (browser
# tests) and PostgreSQL (gradebook tests), where apt-get can install them; a virtual environment
# in .venv, and this package with its dependencies.
# Safe to run again: it only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing bubblewrap (sandbox for student code) ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) \
      >/dev/null 2>&1 || echo "setup: warning: bubblewrap could not be installed; grading refuses to run student code until it is (apt-get install bubblewrap)"
  else
    echo "setup: warning: bubblewrap (bwrap) is not installed; grading refuses to run student code until it is (apt-get install bubblewrap)"
  fi
fi

# Debian's chromium drives the browser tests (tests/browser/); Playwright's own browser download
# is not used.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium (for the browser tests) ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
      >/dev/null 2>&1 || echo "setup: warning: chromium could not be installed; the browser tests cannot run"
  else
    echo "setup: warning: /usr/bin/chromium is not installed; the browser tests cannot run"
  fi
fi

# Debian's PostgreSQL: the tests start throwaway servers of their own (tests/pgserver.py).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing postgresql (the PostgreSQL gradebook's tests) ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) \
      >/dev/null 2>&1 || echo "setup: warning: postgresql could not be installed; the PostgreSQL tests cannot run"
  else
    echo "setup: warning: PostgreSQL (initdb) is not installed; the PostgreSQL tests cannot run (apt-get install postgresql)"
  fi
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv ..."
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.attention-course-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing attention-course and its dependencies into .venv (about a minute) ..."
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]' 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
  .venv/bin/python -c "import attention_course, nbgrader, numpy" 
  touch "$stamp"
fi
