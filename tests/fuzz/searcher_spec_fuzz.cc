// Fuzz target: searcher specs ("sa(t0=50)"). MakeSearcher never crashes or hits UB; an error is
// one line; an accepted searcher's canonical spec (name()) is accepted again and is a fixed
// point. Seeds: tests/fuzz/corpus/searcher.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "search/search.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using l2s_fuzz::Require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  l2s::StatusOr<l2s::SearcherSpec> spec = l2s::ParseSearcherSpec(text);
  if (!spec.ok()) l2s_fuzz::CheckError(spec.status());
  l2s::StatusOr<std::unique_ptr<l2s::Searcher>> s = l2s::MakeSearcher(text);
  if (!s.ok()) {
    l2s_fuzz::CheckError(s.status());
    return 0;
  }
  Require(spec.ok(), "an accepted searcher's spec parses");
  const std::string canonical = (*s)->name();
  l2s::StatusOr<std::unique_ptr<l2s::Searcher>> again = l2s::MakeSearcher(canonical);
  Require(again.ok(), "the canonical spec is accepted");
  Require((*again)->name() == canonical, "the canonical spec is a fixed point");
  return 0;
}
