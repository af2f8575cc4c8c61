#!/usr/bin/env bash
# l2s sweep end to end (issue 46 item 2): a 4-scenario grid run with --jobs 1, --jobs 2 and (when
# MPI is built) mpirun -np 2 gives byte-identical results.csv/json/svg and the same store ids; a
# rerun resumes (skips finished scenarios); each stored result is `l2s plan ... --json` byte for
# byte apart from its wall-clock fields; a bad grid is one line and exit 2.
# Usage: sweep_cli_test.sh L2S_BINARY WITH_MPI(ON/OFF)
set -euo pipefail
l2s="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
with_mpi="${2:-OFF}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > grid.yaml <<'YAML'
# 2 counts x 2 workloads = 4 tiny scenarios
models: [llama-3.1-8b]
gpus: [h100]
counts: [1, 2]
workloads:
  - {mode: serve, input: 1024, output: 256}
  - mode: decode
    context: 4096
prices: [2.5]
plan:
  budget: 100
  seed: 0
YAML

"$l2s" sweep grid.yaml --out j1 --jobs 1 2> j1.err || fail "jobs 1 exit $?"
"$l2s" sweep grid.yaml --out j2 --jobs 2 --quiet || fail "jobs 2 exit $?"
grep -q '^\[4/4\] llama-3.1-8b h100 x2 ' j1.err || fail "no progress line: $(cat j1.err)"
grep -q '^l2s sweep: 4 scenarios (0 already in the store, 4 run), 4 with a valid plan; results in j1/$' j1.err \
  || fail "summary line: $(tail -1 j1.err)"
[ "$(wc -l < j1/results.csv)" -eq 5 ] || fail "results.csv rows"
head -1 j1/results.csv | grep -q '^index,id,model,gpu,count,mode,input,output,context,slo,engine_asked,price_per_gpu_hour,exit_code,valid,engine,tokens_per_s_per_gpu,ttft_ms,tpot_ms,usd_per_mtok_output,usd_per_mtok_total,tokens_per_joule_output,gpus,serving,strategy,reason,p99_ttft_ms,p99_tpot_ms,rate,concurrency,usd_per_mtok_output_at_traffic$' \
  || fail "csv header"
ids() { python3 -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$1"; }
for f in results.csv results.json results.svg; do cmp j1/$f j2/$f || fail "$f differs between --jobs 1 and 2"; done
[ "$(ids j1/results.jsonl)" = "$(ids j2/results.jsonl)" ] || fail "store order differs"

if [ "$with_mpi" = ON ] && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  mpirun --oversubscribe -np 2 "$l2s" sweep grid.yaml --out mpi --jobs 1 2> mpi.err || fail "mpirun exit $? $(cat mpi.err)"
  grep -q 'run over 2 MPI ranks' mpi.err || fail "not 2 ranks: $(cat mpi.err)"
  for f in results.csv results.json results.svg; do cmp j1/$f mpi/$f || fail "$f differs under mpirun -np 2"; done
  [ "$(ids j1/results.jsonl)" = "$(ids mpi/results.jsonl)" ] || fail "store order differs under MPI"
  echo "mpirun -np 2: identical"
fi

# Resuming: nothing reruns; with the last store line gone, only that scenario runs.
cp j1/results.csv before.csv
"$l2s" sweep grid.yaml --out j1 --jobs 2 2> again.err
grep -q '(4 already in the store, 0 run)' again.err || fail "resume: $(cat again.err)"
head -n 3 j1/results.jsonl > t && mv t j1/results.jsonl
"$l2s" sweep grid.yaml --out j1 --jobs 2 2> again.err
grep -q '(3 already in the store, 1 run)' again.err || fail "partial resume: $(cat again.err)"
[ "$(grep -c '^\[' again.err)" -eq 1 ] || fail "more than one scenario reran"
cmp before.csv j1/results.csv || fail "resumed csv differs"

# A stored result is `l2s plan ARGV` byte for byte, but for its wall-clock fields.
mask() { sed -E 's/"(total_)?wall_s": [^,]*/"wall_s": T/; s/[0-9.]+ s"/T s"/'; }
for k in 0 3; do
  python3 -c 'import json,sys; l=open(sys.argv[1]).readlines()[int(sys.argv[2])]; e=json.loads(l); sys.stdout.write(e["stdout"]); open("argv","w").write("\n".join(e["argv"]))' j1/results.jsonl $k > stored.json
  mapfile -t argv < argv
  "$l2s" plan "${argv[@]}" > direct.json 2>/dev/null || true
  cmp <(mask < stored.json) <(mask < direct.json) || fail "scenario $k differs from plan --json"
done

# A bad grid: one clear line, exit 2.
printf 'models: [a\n' > bad.yaml
set +e
"$l2s" sweep bad.yaml --out bad 2> bad.err
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad grid exit $rc"
[ "$(wc -l < bad.err)" -eq 1 ] || fail "bad grid: more than one line"
grep -qF "l2s: error: bad.yaml:1: unclosed '['" bad.err || fail "bad grid message: $(cat bad.err)"
# A scenario that cannot be planned says why on its progress line: an infeasible problem (exit 1)
# is "done, no valid plan: REASON", a scenario whose input is wrong (exit 2) "error: REASON".
cat > why.yaml <<'YAML'
models: [llama-3.1-405b, nosuch-model]
gpus: [h100]
counts: [1]
workloads: [{mode: decode, context: 4096}]
plan: {budget: 50, seed: 0}
YAML
"$l2s" sweep why.yaml --out why --jobs 1 2> why.err || fail "why grid exit $?"
grep -qE '^\[[12]/2\] llama-3.1-405b h100 x1 decode ctx 4096 \.\.\. done, no valid plan: .*does not fit' why.err \
  || fail "infeasible progress line: $(cat why.err)"
grep -qE '^\[[12]/2\] nosuch-model h100 x1 decode ctx 4096 \.\.\. error: unknown model "nosuch-model"' why.err \
  || fail "bad-input progress line: $(cat why.err)"
echo "sweep_cli_test: ok"
