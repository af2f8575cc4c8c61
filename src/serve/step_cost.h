// Seconds of one scheduling step of a serving engine for an arbitrary batch shape: the request-
// level simulator's (serve/serve_sim.h) price of a step. It builds the per-GPU program of the step
// (strategy/program.h) and costs it with the simulator's public step model
// (Simulator::StepSeconds, SectionSeconds, OverlapStretch) exactly as Simulator::Compose composes
// stages, so that a step of the shape serve mode assumes costs what Simulator::EvaluateAtBatch
// says (step_cost_test checks decode and prefill steps against it).
//
// What the serve mode of the Simulator fixes and this lets vary per step: the decoding sequences
// per attention-dp rank, their mean context, and the prefill tokens (and prompts or chunks they
// belong to) mixed into the step. Attention-DP ranks run in lockstep (their MoE layers exchange
// tokens every layer): a step's per-rank work (attention, dense GEMMs, dispatch) is the busiest
// rank's, its pooled work (expert GEMMs) the mean rank's — the split Simulator::Adp uses.
#pragma once

#include <memory>

#include "common/status.h"
#include "sim/simulator.h"
#include "strategy/program.h"
#include "strategy/strategy.h"

namespace l2s {

// Work of one attention-dp rank in one step (all its pipeline microbatches together).
struct RankShape {
  double decode_seqs = 0;     // sequences generating (1 + mtp query tokens each)
  double decode_ctx = 0;      // mean keys each decoding sequence attends (its KV length)
  double prefill_tokens = 0;  // prompt tokens prefilled in the step (chunks included)
  double prefill_seqs = 0;    // prompts or chunks those tokens belong to
  double tokens(double decode_q) const { return decode_seqs * decode_q + prefill_tokens; }
  bool empty() const { return decode_seqs <= 0 && prefill_tokens <= 0; }
};

class StepCost {
 public:
  // `problem` supplies model, cluster (one instance: strategy.gpus() GPUs) and workload dtypes,
  // engine and MTP acceptance; its mode and lengths are not read. `s` must be structurally valid
  // (CheckStrategy): an error otherwise.
  static StatusOr<std::unique_ptr<StepCost>> Make(const Problem& problem, const Strategy& s);

  // One step: `busiest` is the rank with the most work, `mean` the mean over the dp ranks (equal
  // when dp = 1). With pp > 1 the rank's work is split into pp microbatches, each traversing every
  // stage once: the step (`round_s`, when the next step can start and every decoding sequence has
  // its token) lasts pp x the slowest stage's time for one microbatch, the decoding sequences
  // whole (1 / pp of them each, at least one where there is any) and the prompt chunks spread
  // over the microbatches (the stages' work of the round). A chunk runs whole in one microbatch:
  // its prompt's next token comes `chunk_latency_s` after the step starts, pp x the slowest
  // stage's time for a microbatch holding one whole chunk (>= round_s; equal when pp = 1 or the
  // step prefills nothing): a lone 2,000-token prompt on pp = 4 takes about its one-GPU time,
  // not a quarter of it. 0 for an empty step.
  struct Times {
    double round_s = 0;
    double chunk_latency_s = 0;
  };
  Times StepTimes(const RankShape& busiest, const RankShape& mean) const;
  double Seconds(const RankShape& busiest, const RankShape& mean) const {
    return StepTimes(busiest, mean).round_s;
  }
  double Seconds(const RankShape& one) const { return Seconds(one, one); }

  // Query tokens one decoding sequence runs per step (1 + mtp) and tokens it emits per step on
  // average (Simulator::TokensPerStep: the MTP acceptance).
  double decode_q() const { return 1.0 + s_.mtp; }
  double accept() const { return accept_; }
  // KV-cache tokens one attention-dp rank holds: (HBM - weights - activations - runtime reserve)
  // / KV bytes per token, on the worst pipeline stage, by the Simulator's memory model (decode
  // mode at context `hold_len`, prefill activations at the engine's token budget or `prompt_len`).
  // 0 when the weights alone do not fit.
  int64_t KvCapacityTokens(int64_t hold_len, int64_t prompt_len) const;

  const Strategy& strategy() const { return s_; }
  const Simulator& sim() const { return *sim_; }
  int max_num_tokens() const { return sim_->MaxNumTokens(); }

 private:
  StepCost(const Problem& p, const Strategy& s);
  // Compute and communication seconds of each section of `prog` (x: seconds per step), split into
  // the per-rank and pooled parts.
  struct SectionCost {
    double rank_c = 0, rank_a = 0, pool_c = 0, pool_a = 0;
  };
  void Cost(const Section& sec, bool decode_kernels, SectionCost* out) const;
  // `whole_chunk`: the microbatch holding one whole prompt chunk (chunk latency), else the
  // chunks spread over the microbatches (the round).
  void Build(const RankShape& r, bool whole_chunk, Program* prog, bool* dk) const;
  double PricedSeconds(const RankShape& busiest, const RankShape& mean, bool whole_chunk) const;

  Problem p_;
  Strategy s_;
  std::unique_ptr<Simulator> sim_;
  ProgramConfig cfg_;
  std::array<LayerKind, Program::kMaxKinds> kinds_{};
  int num_kinds_ = 0;
  std::vector<std::vector<int>> kind_prefix_;
  double static_load_ = 1;
  double accept_ = 1;
};

}  // namespace l2s
