#include "serve/step_cost.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "sim/moe_load.h"
#include "strategy/space.h"

namespace l2s {
namespace {

// The simulator's switch between DeepEP's low-latency and high-throughput kernels (simulator.cc
// kLowLatencyTokenLimit): decode-sized steps of <= 256 tokens per GPU of the tp group.
constexpr double kLowLatencyTokenLimit = 256;

// Steps whose work is pooled over the attention-dp ranks (simulator.cc PooledAcrossRanks): the
// expert FFN GEMMs, their activation and the expert-TP conversions see every rank's tokens.
bool Pooled(const Step& st) {
  if (st.kind == StepKind::kComm) return st.group == GroupKind::kEtp;
  if (st.op != Op::kMoeFfn1 && st.op != Op::kMoeFfn2) return false;
  return st.kind == StepKind::kGemm || (st.kind == StepKind::kElementwise && st.op == Op::kMoeFfn1);
}

}  // namespace

StatusOr<std::unique_ptr<StepCost>> StepCost::Make(const Problem& problem, const Strategy& s) {
  Status st = CheckStrategy(problem.model, problem.cluster.num_gpus, s);
  if (!st.ok()) return st;
  if (s.mtp > 0 && !problem.model.can_speculate())
    return Status::InvalidArgument("mtp > 0 needs a model with MTP layers or a draft model");
  return std::unique_ptr<StepCost>(new StepCost(problem, s));
}

StepCost::StepCost(const Problem& p, const Strategy& s) : p_(p), s_(s) {
  p_.workload.mode = Mode::kServe;
  p_.workload.ttft_ms = p_.workload.tpot_ms = 0;
  sim_ = std::make_unique<Simulator>(p_);
  num_kinds_ = CollectLayerKinds(p_.model, &kinds_);
  const int L = p_.model.num_layers;
  kind_prefix_.assign(num_kinds_, std::vector<int>(L + 1, 0));
  for (int k = 0; k < num_kinds_; ++k)
    for (int i = 0; i < L; ++i)
      kind_prefix_[k][i + 1] = kind_prefix_[k][i] + (p_.model.layers[i] == kinds_[k] ? 1 : 0);
  // The program configuration exactly as the Simulator's constructor sets it.
  cfg_.weight = p_.workload.weight;
  cfg_.kv = p_.workload.kv;
  cfg_.act = DType::kBF16;
  cfg_.dispatch = p_.workload.weight == DType::kBF16 ? DType::kBF16
                  : (p_.workload.weight == DType::kFP4 && p_.cluster.gpu.fp4_flops > 0)
                      ? DType::kFP4
                      : DType::kFP8;
  cfg_.kinds = kinds_.data();
  cfg_.num_kinds = num_kinds_;
  if (p_.model.is_moe() && s_.ep > 1) {
    const double sigma = p_.workload.routing_sigma >= 0 ? p_.workload.routing_sigma
                                                        : Simulator::kDefaultRoutingSigma;
    static_load_ = MoeStaticImbalance(p_.model.num_experts, s_.ep, s_.slots, sigma);
  }
  accept_ = sim_->TokensPerStep(s_);
}

void StepCost::Build(const RankShape& r, bool whole_chunk, Program* prog, bool* dk) const {
  const double pp = s_.pp;
  // The pp microbatches share the rank's sequences, each whole: 1 / pp of them each, but at least
  // one when the rank has any. Prompt chunks: spread over the microbatches (the round's stage
  // work), or one whole chunk (the microbatch that carries it, for its latency).
  auto per_microbatch = [pp](double n) { return n > 0 ? std::max(n / pp, std::min(n, 1.0)) : 0.0; };
  StepShape sh;
  sh.decode_q = decode_q();
  sh.decode_seqs = per_microbatch(r.decode_seqs);
  sh.decode_kv_len = r.decode_ctx;
  sh.kv_hold_len = r.decode_ctx;
  if (r.prefill_tokens > 0 && r.prefill_seqs > 0) {
    sh.prefill_seqs = whole_chunk ? per_microbatch(r.prefill_seqs) : r.prefill_seqs / pp;
    sh.prefill_len = r.prefill_tokens / r.prefill_seqs;
  }
  if (s_.overlap == Overlap::kTbo) {
    // Two-batch overlap: the larger half (SectionSeconds doubles it), as Simulator::Prepare,
    // which also takes the expert load and the kernel choice from the half.
    sh.decode_seqs = std::ceil(sh.decode_seqs / 2);
    sh.prefill_seqs /= 2;
  }
  const double tokens = sh.decode_seqs * sh.decode_q + sh.prefill_seqs * sh.prefill_len;
  ProgramConfig cfg = cfg_;
  if (p_.model.is_moe() && s_.ep > 1)
    cfg.expert_imbalance =
        CombinedImbalance(static_load_, tokens * s_.dp * p_.model.experts_per_token, s_.ep);
  BuildProgram(p_.model, p_.cluster, s_, sh, cfg, prog);
  *dk = tokens / std::max(1, s_.tp) <= kLowLatencyTokenLimit;
}

void StepCost::Cost(const Section& sec, bool dk, SectionCost* out) const {
  // Simulator::StepTimes: overlapped (sbo) steps charged what sticks out beyond their partner.
  double x[Section::kMaxSteps];
  for (int i = 0; i < sec.num_steps; ++i) x[i] = sim_->StepSeconds(sec.steps[i], dk);
  const double stretch = sim_->OverlapStretch();
  for (int i = 0; i < sec.num_steps; ++i) {
    const int j = sec.steps[i].hides_under;
    if (j >= 0 && j < i) x[i] = std::max(x[j] * stretch, x[i]) - x[j];
  }
  *out = SectionCost{};
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    const bool comm = st.kind == StepKind::kComm;
    if (Pooled(st)) (comm ? out->pool_a : out->pool_c) += x[i];
    else (comm ? out->rank_a : out->rank_c) += x[i];
  }
}

StepCost::Times StepCost::StepTimes(const RankShape& busiest, const RankShape& mean) const {
  Times t;
  if (busiest.empty()) return t;
  t.round_s = PricedSeconds(busiest, mean, false);
  const bool chunks_split = s_.pp > 1 && busiest.prefill_seqs > 0 && busiest.prefill_tokens > 0;
  t.chunk_latency_s = chunks_split ? std::max(t.round_s, PricedSeconds(busiest, mean, true))
                                   : t.round_s;
  return t;
}

double StepCost::PricedSeconds(const RankShape& busiest, const RankShape& mean,
                               bool whole_chunk) const {
  thread_local Program pb, pm;
  bool dkb = true, dkm = true;
  Build(busiest, whole_chunk, &pb, &dkb);
  const bool same = std::memcmp(&busiest, &mean, sizeof(RankShape)) == 0;
  if (!same) Build(mean, whole_chunk, &pm, &dkm);
  const Program& m = same ? pb : pm;
  const bool tbo = s_.overlap == Overlap::kTbo;
  // Per-rank part from the busiest rank's program, pooled part from the mean rank's.
  auto section = [&](const Section& b, const Section& mn, double* c, double* a) {
    SectionCost cb, cm;
    Cost(b, dkb, &cb);
    if (&b == &mn) cm = cb;
    else Cost(mn, dkm, &cm);
    *c = cb.rank_c + cm.pool_c;
    *a = cb.rank_a + cm.pool_a;
  };
  std::array<double, Program::kMaxKinds> kind_s{};
  for (int k = 0; k < pb.num_kinds; ++k) {
    double c = 0, a = 0;
    section(pb.layers[k], m.layers[k], &c, &a);
    kind_s[k] = sim_->SectionSeconds(c, a, tbo);
  }
  double ec = 0, ea = 0, lc = 0, la = 0, pc = 0, pa = 0;
  section(pb.embed, m.embed, &ec, &ea);
  section(pb.lm_head, m.lm_head, &lc, &la);
  section(pb.pipe, m.pipe, &pc, &pa);
  if (pb.mtp_passes > 0) {
    double mc = 0, ma = 0;
    section(pb.mtp, m.mtp, &mc, &ma);
    lc += pb.mtp_passes * mc;
    la += pb.mtp_passes * ma;
  }
  const double embed_s = sim_->SectionSeconds(ec, ea, tbo);
  const double lm_s = sim_->SectionSeconds(lc, la, tbo);
  const double pipe_s = sim_->SectionSeconds(pc, pa, tbo);
  // Stages as Simulator::Compose: stage i holds layers [i L / pp, (i + 1) L / pp).
  const int L = p_.model.num_layers, pp = s_.pp;
  double worst = 0;
  for (int st = 0; st < pp; ++st) {
    const int lo = static_cast<int>(static_cast<long long>(st) * L / pp);
    const int hi = static_cast<int>(static_cast<long long>(st + 1) * L / pp);
    double t = pp > 1 ? pipe_s : 0.0;
    for (int k = 0; k < pb.num_kinds; ++k) t += (kind_prefix_[k][hi] - kind_prefix_[k][lo]) * kind_s[k];
    if (st == 0) t += embed_s;
    if (st == pp - 1) t += lm_s;
    worst = std::max(worst, t);
  }
  return pp * worst;
}

int64_t StepCost::KvCapacityTokens(int64_t hold_len, int64_t prompt_len) const {
  hold_len = std::max<int64_t>(1, hold_len);
  const bool tbo = s_.overlap == Overlap::kTbo;
  const int b = tbo ? 2 : 1;  // under tbo both halves of batch 2 hold one sequence each
  Problem d = p_;
  d.workload.mode = Mode::kDecode;
  d.workload.context = hold_len;
  d.workload.kv_hold = hold_len;
  const Simulator sd(d);
  const Evaluation ed = sd.EvaluateAtBatch(s_, b);
  Problem pf = p_;
  pf.workload.mode = Mode::kPrefill;
  pf.workload.isl = sim_->MaxNumTokens() > 0 ? sim_->MaxNumTokens() : std::max<int64_t>(1, prompt_len);
  const Simulator sp(pf);
  const Evaluation ep = sp.EvaluateAtBatch(s_, 1);
  const double per_token = ed.kv_bytes / (static_cast<double>(s_.pp) * b * hold_len);
  const double free = p_.cluster.gpu.hbm_bytes - ed.weight_bytes - ed.state_bytes -
                      std::max(ed.act_bytes, ep.act_bytes) - ed.reserve_bytes;
  if (per_token <= 0 || free <= 0) return 0;
  return static_cast<int64_t>(std::floor(free / per_token));
}

}  // namespace l2s
