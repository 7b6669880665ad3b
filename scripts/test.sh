#!/usr/bin/env bash
# Set up everything on a fresh machine (Python 3.11) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_setup.sh
# System tools the tests use: bubblewrap jails the shell tool under test (hostile commands);
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
# Debian's chromium: the web UI is tested in a real headless browser.
[ -x /usr/bin/chromium ] || need+=(chromium)
# objdump: a test checks the llama.cpp build carries no AMX instruction.
command -v objdump >/dev/null || need+=(binutils)
# PostgreSQL's server: tests/postgres start a throwaway cluster (initdb + pg_ctl) of their own.
command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
  || need+=(postgresql)
debian_install "${need[@]}"
# Helm v4's engine as a library, for the chart tests (no helm binary ships in the registries);
# its metadata asks for Python 3.12 but it runs on 3.11.
quiet_pip install -q --ignore-requires-python -c constraints.txt "helm-sdkpy"
echo "== ruff"; .venv/bin/ruff check src tests bench
echo "== mypy"; .venv/bin/mypy
echo "== import layers (pyproject.toml [tool.importlinter])"; .venv/bin/lint-imports
# Two workers, each test module whole on one (its module fixtures are built once: the recall
# test's index of this repository was built twice when a module was split).
echo "== pytest"; .venv/bin/pytest -q --durations=30 -n 2 --dist loadfile "$@"
