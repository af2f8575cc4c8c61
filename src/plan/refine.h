// Batch refinement of a finished plan (issue 14 item 1: the plan is never below a figure the
// output shows).
//
// The strategy spaces offer the batch in powers of two (strategy/space.h), which the searchers and
// the exact oracle need; an engine takes any batch (--max-running-requests, --max-num-seqs,
// --max_batch_size). Where memory or a latency limit binds, the best batch is usually between two
// options: kimi-k2 served on 64 H100s (TPOT 50 ms) at pp=2,tp=1,ep=32 with 480 expert slots and
// single-batch overlap decodes at 43.7 ms with batch 16, 49.6 ms with 21 and 53.1 ms with 24. These
// functions move a plan's batch there, with the simulator's own auto batch (sim/simulator.h: the
// largest batch within memory, the SLOs and the batch limits) as the bound.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "search/joint.h"
#include "sim/disagg.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s {

// `s` (evaluated as `e`) at the simulator's auto batch when that is valid and gives more tokens/s
// per GPU: updates *s (its batch) and *e and returns true; false (nothing changed) otherwise.
bool RefineBatch(const Simulator& sim, Strategy* s, Evaluation* e);

// Every distinct strategy a search evaluated (distinct up to its batch), at the best valid batch
// it was evaluated at: the candidates a plan refines, since the strategy best on the space's
// batches is not always the best once each batch is refined (deepseek-v3 served on 256 H100s:
// the rl searcher's best, pp=1,tp=8,ep=64 at batch 256, is 791.92 tokens/s per GPU and 804.77
// refined; another strategy it evaluated, at 746.97 on the space's batches, is 1,087.78 refined).
class EvaluatedStrategies {
 public:
  // Keeps `s` when `e` is valid and beats what was kept for the same strategy up to its batch.
  void Add(const Strategy& s, const Evaluation& e);
  // The kept strategies, best first (ties: the one added first).
  std::vector<std::pair<Strategy, Evaluation>> Sorted() const;
  size_t size() const { return items_.size(); }

 private:
  std::map<std::string, size_t> index_;  // ToText of the strategy with batch 0 -> items_
  std::vector<std::pair<Strategy, Evaluation>> items_;
};

// The same for a disaggregated deployment `p` of `dm` (evaluated as `e`): the decode instance's
// batch, then the prefill instance's, each raised to the largest batch up to its role
// simulator's auto batch with which the combined deployment stays valid (the TTFT is joint:
// a larger batch lengthens the prefill and the decode step), by bisection (validity falls with the
// batch); the variant of the best figure of merit among decode only, prefill only and both. Updates
// *p and *e and returns true when one beats `e`.
bool RefineDisaggBatches(const DisaggModel& dm, JointSpace::Point* p, DisaggEvaluation* e);

// Latency at no cost in throughput: where one role has capacity to spare (the other binds the
// rate, the instance counts being whole), its batch lowered to the smallest with which the
// deployment stays valid at the same tokens/s per GPU (1e-12 relative), by bisection (the rate
// does not fall as a batch grows): the decode instance's first (a shorter TPOT and decode step),
// then the prefill instance's (a shorter prefill). Updates *p and *e and returns true when a
// batch was lowered.
bool LowerDisaggBatches(const DisaggModel& dm, JointSpace::Point* p, DisaggEvaluation* e);

}  // namespace l2s
