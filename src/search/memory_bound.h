// What one evaluation of a strategy tells about the memory of the same strategy at another batch
// (the RL searcher's `membound`, rl.h item 15): a lower bound on the bytes its worst stage holds,
// so a candidate certain to miss memory need not cost a simulator call.
//
// Why it holds (sim/simulator.cc Compose, strategy/layout.cc): a stage holds its weights, the
// reserve, the KV cache and recurrent state of the sequences it keeps, and activations.
//   - weights and the reserve do not depend on the batch;
//   - the caches grow with the sequences kept: per GPU ceil(sequences / g) for the group g that
//     splits them, doubled halves under two-batch overlap (ceil(batch / 2) each). So for batches
//     b' that are multiples of b they are never smaller, and in decode and prefill, for a batch
//     b' dividing b, at least b' / b of what they were at b (n ceil(x) >= ceil(n x) for an
//     integer n = b / b'). Serve mode also keeps the share of a prompt that a step prefills
//     (batch / osl prompts), split by whole prompts when it is a whole number and evenly when it
//     is not, so a smaller batch can hold less than in proportion there (batch 1,024 with
//     osl 512 over 16 GPUs: one whole prompt per GPU; batch 256: 1/32 of one): only zero is
//     certain below b, as it is for batches that are not such multiples or divisors;
//   - activations are >= 0 and left out;
//   - the simulator's memory is its largest stage's, at least the stage that was the largest at b.
// The bound is checked against the simulator over random strategies of several problems in
// memory_bound_test.cc.
#pragma once

#include <optional>

#include "sim/simulator.h"

namespace l2s {

// The memory of one evaluated strategy's worst stage, split by how it depends on the batch.
struct MemoryAtBatch {
  int batch = 0;               // sequences per attention-dp rank it was evaluated at (>= 1)
  double fixed_bytes = 0;      // weights + reserve
  double cache_bytes = 0;      // KV cache + recurrent state
  double capacity_bytes = 0;   // the GPU's memory
  bool proportional_below = false;  // caches at a batch dividing `batch` are >= in proportion
};

// The split of an evaluation that reached the memory check (valid, or invalid for memory, TPOT
// or TTFT) under a workload of mode `mode`; nullopt for a structurally invalid one or a batch < 1.
std::optional<MemoryAtBatch> MemoryOf(const Evaluation& e, Mode mode);

// Lower bound on the worst stage's memory (bytes) of the same strategy at batch `batch` (>= 1).
double MemoryLowerBoundBytes(const MemoryAtBatch& m, int batch);

// True when the same strategy at batch `batch` certainly misses memory.
inline bool CertainMemoryMiss(const MemoryAtBatch& m, int batch) {
  return MemoryLowerBoundBytes(m, batch) > m.capacity_bytes;
}

}  // namespace l2s
