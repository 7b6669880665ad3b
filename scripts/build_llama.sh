#!/usr/bin/env bash
# Builds llama-cpp-python from source with portable CPU flags into a wheelhouse keyed by
# version, architecture and flags, and prints the wheel's path.
#
# Why: llama-cpp-python's default build is GGML_NATIVE, which compiles kernels for the build
# machine's CPU (AMX on recent Xeons). A hypervisor may advertise AMX without enabling it for
# guests, and the first matrix multiply then dies with a general protection fault. pip's own
# wheel cache is keyed by version only, so a native wheel built once is reused whatever
# CMAKE_ARGS says; this wheelhouse puts the flags into the cache key instead.
#
# Usage: scripts/build_llama.sh PYTHON VERSION
set -euo pipefail
python="$1"; version="$2"
arch="$(uname -m)"
case "$arch" in
  x86_64|amd64)
    # AVX2/FMA/F16C: every x86-64 server of the last decade. No AVX-512, no AMX, no native.
    flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BMI2=OFF" ;;
  *)
    # ARM64 and the rest: the architecture's baseline (NEON on aarch64), nothing CPU-specific.
    flags="-DGGML_NATIVE=OFF" ;;
esac
key="$(printf '%s|%s|%s' "$version" "$arch" "$flags" | sha256sum | cut -c1-16)"
house="${PILOTHOUSE_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/pilothouse/wheels}/llama-cpp-python-$version-$arch-$key"
wheel="$(ls "$house"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
  echo "== building llama-cpp-python $version (portable: $flags; about 14 min on 2 cores)" >&2
  tmp="$(mktemp -d)"
  # --no-cache-dir and --no-binary: never a wheel some earlier build left behind.
  CMAKE_ARGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$python" -m pip wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
      -w "$tmp" "llama-cpp-python==$version" 2>&1 | { grep -v "^WARNING: Location" || true; } >&2
  mkdir -p "$house"
  mv "$tmp"/llama_cpp_python-*.whl "$house"/
  printf '%s\n' "$flags" > "$house/FLAGS"
  rm -rf "$tmp"
  wheel="$(ls "$house"/llama_cpp_python-*.whl | head -n1)"
fi
printf '%s\n' "$wheel"
