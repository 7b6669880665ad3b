#!/usr/bin/env bash
# Set up everything on a fresh machine (Python 3.11) and run the demo on embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_setup.sh
exec .venv/bin/pilothouse demo "$@"
