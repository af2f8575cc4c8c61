#!/usr/bin/env bash
# Builds l2s with ThreadSanitizer and runs the commands that use threads (docs/dev/PLANNER.md
# "Threads") on 4 threads each; fails on any ThreadSanitizer report or when a result differs from
# the one-thread run of the regular build. Not part of the test command (the build takes ~10
# minutes on 2 cores).
#
# Usage: scripts/tsan_check.sh [REGULAR_L2S]   (default build/src/cli/l2s)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ref="${1:-$here/build/src/cli/l2s}"
tsan_dir="${TSAN_BUILD_DIR:-$here/build-tsan}"
shared="$here/../shared"
cmake -S "$here" -B "$tsan_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DL2S_BUILD_TESTS=OFF -DL2S_BUILD_BENCH=OFF -DL2S_BUILD_PYTHON=OFF > /dev/null
cmake --build "$tsan_dir" --target l2s > /dev/null
tsan="$tsan_dir/src/cli/l2s"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # name, then the command's arguments (run with --jobs 4 under TSan, --jobs 1 regular)
  local name="$1"; shift
  TSAN_OPTIONS="halt_on_error=0" "$tsan" "$@" --jobs 4 > "$work/$name.tsan" 2> "$work/$name.err" || true
  "$ref" "$@" --jobs 1 > "$work/$name.ref" 2> /dev/null || true
  if grep -q "WARNING: ThreadSanitizer" "$work/$name.err"; then
    echo "$name: ThreadSanitizer report"; grep -A12 "WARNING: ThreadSanitizer" "$work/$name.err" | head -40
    fail=1
  elif ! cmp -s <(grep -v "wall" "$work/$name.tsan") <(grep -v "wall" "$work/$name.ref"); then
    echo "$name: differs from the one-thread run"; fail=1
  else
    echo "$name: ok"
  fi
}
check pareto-dense plan --pareto --model llama-3.1-8b --gpus 8 --isl 1024 --osl 256 \
  --slo tpot_ms=20 --svg none
check pareto-moe plan --pareto --model qwen3-30b-a3b --gpus 8 --isl 1024 --osl 256 \
  --slo tpot_ms=30 --svg none --budget 500
check capacity capacity --model qwen3-30b-a3b --gpu h100 --rate 10 --requests 300 --isl 2000 \
  --osl 200 --slo p99_ttft_ms=2000,p99_tpot_ms=40 --sizes 1,2 --mtp 0 --json
# The frontier file's runs with a client of at most 32 (three rows each, one simulated client).
python3 - "$shared/reference/measurements-frontier.csv" "$work/rows.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
c = rows[0].index("concurrency")
with open(sys.argv[2], "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(rows[0])
    w.writerows(r for r in rows[1:] if r[c] and int(r[c]) <= 32)
PY
check validate validate --measurements "$work/rows.csv" --models-dir "$shared/models/hf" --json
exit "$fail"
