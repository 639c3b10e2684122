#!/usr/bin/env bash
# The main job: set up, release both assignments, grade a sample class, show the results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/attention-course demo "$@"
