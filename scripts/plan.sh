#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job (`l2s plan`).
# Extra arguments are passed to `l2s plan`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" "$here/build" -DL2S_BUILD_TESTS=OFF -DL2S_BUILD_BENCH=OFF >&2
exec "$here/build/src/cli/l2s" plan "$@"
