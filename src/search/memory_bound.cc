// The memory lower bound of memory_bound.h.
#include "search/memory_bound.h"

namespace l2s {

std::optional<MemoryAtBatch> MemoryOf(const Evaluation& e, Mode mode) {
  if (e.verdict == Verdict::kStructure || e.verdict == Verdict::kNoBatch || e.batch < 1 ||
      !(e.mem_capacity_bytes > 0))
    return std::nullopt;
  return MemoryAtBatch{e.batch, e.weight_bytes + e.reserve_bytes, e.kv_bytes + e.state_bytes,
                       e.mem_capacity_bytes, mode != Mode::kServe};
}

double MemoryLowerBoundBytes(const MemoryAtBatch& m, int batch) {
  double cache = 0;
  if (batch >= m.batch && batch % m.batch == 0) {
    cache = m.cache_bytes;  // never less for n times the sequences
  } else if (m.proportional_below && batch >= 1 && m.batch % batch == 0) {
    cache = m.cache_bytes * static_cast<double>(batch) / static_cast<double>(m.batch);
  }
  return m.fixed_bytes + cache;
}

}  // namespace l2s
