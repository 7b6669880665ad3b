#!/usr/bin/env bash
# Set up everything on a fresh machine (Python 3.11) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_setup.sh
echo "== ruff"; .venv/bin/ruff check src tests bench
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; .venv/bin/pytest -q "$@"
