#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run the whole test suite.
# `scripts/test.sh --sanitize` builds with AddressSanitizer + UBSan in build-asan/ instead.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
# Tests and benchmarks on explicitly: scripts/plan.sh configures the same build/ without them.
args=(-DL2S_BUILD_TESTS=ON -DL2S_BUILD_BENCH=ON)
if [ "${1:-}" = "--sanitize" ]; then
  build="$here/build-asan"
  args+=(-DL2S_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
else
  # The Python package (python/) and its pytest suite, a CTest test: Debian's interpreter, the one
  # Debian's pybind11 and pytest serve (not a pyenv/conda python3 that may come first on PATH).
  # Not under --sanitize: an ASan module cannot load into an uninstrumented interpreter.
  args+=(-DL2S_BUILD_PYTHON=ON -DPYTHON_EXECUTABLE=/usr/bin/python3)
fi
"$here/scripts/setup.sh" "$build" "${args[@]}"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
