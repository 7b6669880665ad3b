# Shared set-up for scripts/run.sh and scripts/test.sh: venv, packages, system tools.
# The first run builds llama-cpp-python from source (~14 min on 2 cores); pip caches the wheel.
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
echo "== installing Python packages (first run: builds the local model runtime, ~14 min)"
.venv/bin/python -m pip install -q -e ".[dev,providers]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import pilothouse, llama_cpp" || { echo "package install failed" >&2; exit 1; }
