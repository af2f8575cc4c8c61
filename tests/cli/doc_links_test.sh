#!/usr/bin/env bash
# Every documentation path the tree mentions exists (issue 46 item 6: docs/ split into user pages
# and docs/dev/ for maintainers; a moved page must not leave a dangling reference behind).
#
# Usage: doc_links_test.sh SOURCE_ROOT
# Checks, and names FILE:LINE and the missing path for each failure:
#  1. every path of the form docs/<name>.md (any depth under docs/) written in README.md or in a
#     file under docs/ src/ scripts/ python/ tools/ bench/ tests/ exists under SOURCE_ROOT;
#  2. every relative Markdown link ](target) in README.md and docs/ resolves from its page's
#     folder (anchors dropped; http(s)/mailto links and in-page #anchors are not checked).
# Exit 0 when all resolve, 1 otherwise.
set -u
root="${1:?usage: doc_links_test.sh SOURCE_ROOT}"
cd "$root" || { echo "doc_links_test: cannot enter $root"; exit 2; }

# Paths of other projects' documentation, quoted where l2s cites them (engine rules, flag
# fixtures); they are not files of this tree.
external=(
  "docs/design/dbo.md"                           # vLLM, dual-batch overlap (src/engine/engine.cc)
  "docs/advanced_features/server_arguments.md"   # SGLang server arguments (src/launch/testdata)
  "docs/model-routing/pd-disaggregation.md"      # router docs (src/launch/testdata/flags)
)
is_external() {
  local p
  for p in "${external[@]}"; do [[ "$1" == "$p" ]] && return 0; done
  return 1
}

scan=(README.md)
for d in docs src scripts python tools bench tests; do [[ -d "$d" ]] && scan+=("$d"); done

fail=0
checked=0
# 1. docs/<...>.md paths. The character before "docs/" must not be part of a path, so that
#    e.g. another project's ".../docs/x.md" is not read as ours, nor a ':' (git's COMMIT:PATH,
#    an old version's path that git show reads).
while IFS= read -r hit; do
  file="${hit%%:*}"; rest="${hit#*:}"; line="${rest%%:*}"; match="${rest#*:}"
  path="${match#"${match%%docs/*}"}"   # drop the leading non-path character, if any
  checked=$((checked + 1))
  is_external "$path" && continue
  if [[ ! -f "$path" ]]; then
    echo "$file:$line: mentions $path, which does not exist"
    fail=1
  fi
done < <(grep -rIonE --exclude-dir=__pycache__ --exclude-dir=build '(^|[^A-Za-z0-9_./:-])docs/[A-Za-z0-9_./-]+\.md' \
           "${scan[@]}")

# 2. relative Markdown links in the pages themselves.
while IFS= read -r page; do
  dir="$(dirname "$page")"
  while IFS= read -r hit; do
    line="${hit%%:*}"; link="${hit#*:}"
    target="${link#](}"; target="${target%)}"; target="${target%%#*}"
    [[ -z "$target" ]] && continue
    [[ "$target" =~ ^(https?|mailto): ]] && continue
    checked=$((checked + 1))
    if [[ ! -e "$dir/$target" ]]; then
      echo "$page:$line: links to $target, which does not exist (from $dir/)"
      fail=1
    fi
  done < <(grep -onE '\]\([^) ]+\)' "$page")
done < <(find README.md docs -name '*.md' -type f | sort)

if [[ $checked -eq 0 ]]; then
  echo "doc_links_test: found no documentation reference at all under $root (wrong root?)"
  exit 1
fi
if [[ $fail -ne 0 ]]; then
  echo "doc_links_test: broken documentation references (above); fix the path or the page"
  exit 1
fi
echo "doc_links_test: $checked references, all resolve"
