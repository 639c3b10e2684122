#!/usr/bin/env bash
# Set up this course on a fresh machine: bubblewrap and libseccomp (the sandbox for student code
# and its system call filter), chromium (browser tests) and PostgreSQL (gradebook tests), where
# apt-get can install them; a virtual environment in .venv, and this package with its
# dependencies.
# Safe to run again: it only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install PACKAGE PURPOSE WITHOUT: install a Debian package as root where apt-get exists;
# otherwise (or if that fails) say WITHOUT, what does not work until it is installed.
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing $1 ($2) ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1") \
      >/dev/null 2>&1 || echo "setup: warning: $1 could not be installed; $3"
  else
    echo "setup: warning: $1 is not installed; $3 (apt-get install $1)"
  fi
}

if ! command -v bwrap >/dev/null 2>&1; then
  apt_install bubblewrap "sandbox for student code" \
    "grading refuses to run student code until it is"
fi

# libseccomp compiles the sandbox's system call filter (through pyseccomp, a dependency).
if ! ldconfig -p 2>/dev/null | grep -q "libseccomp\.so\.2"; then
  apt_install libseccomp2 "the sandbox's system call filter" \
    "grading refuses to run student code until it is"
fi

# Debian's chromium drives the browser tests (tests/browser/); Playwright's own browser download
# is not used.
if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium "for the browser tests" "the browser tests cannot run"
fi

# Debian's PostgreSQL: the tests start throwaway servers of their own (tests/pgserver.py).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  apt_install postgresql "the PostgreSQL gradebook's tests" "the PostgreSQL tests cannot run"
fi

# The sqlite3 program: the instructors' page backs up a SQLite gradebook with it, and a test does.
if ! command -v sqlite3 >/dev/null 2>&1; then
  apt_install sqlite3 "to back up a SQLite gradebook (docs/instructors.md)" \
    "the SQLite gradebook's backup test cannot run"
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

# The npm packages the quiz export tests run under node (gift-pegjs, jsdom: tests/quiz/node/),
# into .venv/node_tools; the tests install them there too when they are missing.
if command -v npm >/dev/null 2>&1; then
  if [ ! -f .venv/node_tools/.installed ] || [ tests/quiz/node/packages.txt -nt .venv/node_tools/.installed ]; then
    echo "setup: installing the quiz export tests' npm packages into .venv/node_tools ..."
    # shellcheck disable=SC2046
    if npm install --prefix .venv/node_tools --no-audit --no-fund $(cat tests/quiz/node/packages.txt) >/dev/null 2>&1; then
      touch .venv/node_tools/.installed
    else
      echo "setup: warning: npm could not install them; the quiz export tests install them when run"
    fi
  fi
  # configurable-http-proxy, JupyterHub's proxy (npm), for the JupyterHub deployment and its test
  # (tests/deploy/test_jupyterhub.py): into .venv/node_tools too, its program in node_modules/.bin.
  proxy_package=configurable-http-proxy@5.3.0
  if [ ! -x .venv/node_tools/node_modules/.bin/configurable-http-proxy ] \
    || ! grep -qs "$proxy_package" .venv/node_tools/.proxy-installed; then
    echo "setup: installing $proxy_package (JupyterHub's proxy) into .venv/node_tools ..."
    if npm install --prefix .venv/node_tools --no-audit --no-fund "$proxy_package" >/dev/null 2>&1; then
      echo "$proxy_package" > .venv/node_tools/.proxy-installed
    else
      echo "setup: warning: npm could not install $proxy_package; the JupyterHub test cannot run"
    fi
  fi
  # axe-core, the accessibility checker the browser tests run in the pages people read
  # (tests/browser/axe.py, which installs it too when it is missing): into .venv/node_tools.
  axe_package=axe-core@4.10.3
  if [ ! -f .venv/node_tools/node_modules/axe-core/axe.min.js ] \
    || ! grep -qs "$axe_package" .venv/node_tools/.axe-installed; then
    echo "setup: installing $axe_package (the browser tests' accessibility checker) into .venv/node_tools ..."
    if npm install --prefix .venv/node_tools --no-audit --no-fund "$axe_package" >/dev/null 2>&1; then
      echo "$axe_package" > .venv/node_tools/.axe-installed
    else
      echo "setup: warning: npm could not install $axe_package; the browser tests install it when run"
    fi
  fi
  # JupyterLab's builder for the course's JupyterLab extension (labextension/, built into
  # attention_course/labextension/ by scripts/build_labextension.py), as its lock pins it, into
  # .venv/node_tools/labextension.
  lab_tools=.venv/node_tools/labextension
  if ! cmp -s labextension/package-lock.json "$lab_tools/package-lock.json" \
    || [ ! -d "$lab_tools/node_modules/@jupyter/builder" ]; then
    echo "setup: installing JupyterLab's extension builder into $lab_tools ..."
    mkdir -p "$lab_tools"
    cp labextension/package.json labextension/package-lock.json "$lab_tools/"
    if ! npm ci --prefix "$lab_tools" --no-audit --no-fund >/dev/null 2>&1; then
      rm -f "$lab_tools/package-lock.json"
      echo "setup: warning: npm could not install it; the JupyterLab extension cannot be rebuilt"
    fi
  fi
else
  echo "setup: warning: node/npm are not installed; the quiz export and JupyterHub tests and the JupyterLab extension's build need them (apt-get install nodejs npm)"
fi
