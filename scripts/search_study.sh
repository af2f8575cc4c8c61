#!/usr/bin/env bash
# The search layer's evidence (docs/dev/SEARCH.md "The local searcher"): the generated problem
# sets, the move ablation on the design set (set 1) and the judgement of every searcher on the
# held-out set (set 2), 30 problems each, 5 seeds, budgets 1,000 and 4,000.
#   scripts/search_study.sh [BUILD_DIR] [OUT_DIR]     (about 40 min of one core; 2 shards run)
set -euo pipefail
build=${1:-build}
out=${2:-search-study}
tool="$build/bench/search_study"
mkdir -p "$out"
ablation="local"
for m in batch degree pair dim group recipe option crossover restart regroup; do
  ablation="$ablation,local(without=$m)"
done
"$tool" problems --set 1 --count 30 >"$out/set1.md"
"$tool" problems --set 2 --count 30 >"$out/set2.md"
run() {  # set searchers name
  "$tool" run --set "$1" --count 30 --seeds 5 --budgets 1000,4000 --searchers "$2" --shard 0/2 \
    >"$out/$3.0.csv" &
  "$tool" run --set "$1" --count 30 --seeds 5 --budgets 1000,4000 --searchers "$2" --shard 1/2 \
    >"$out/$3.1.csv"
  wait
  "$tool" table "$out/$3.0.csv" "$out/$3.1.csv" >"$out/$3.md"
}
run 1 "$ablation" ablation-set1
run 2 "$ablation,rl,sa,rw" judge-set2
echo "wrote $out/{set1,set2,ablation-set1,judge-set2}.md" >&2
