// The exact oracle against brute force: on many small random problems (dense GQA, MoE with two
// layer kinds, MLA with shared experts and a dense layer; 1..16 GPUs; decode, prefill and serve;
// memory squeezed so that it binds for some strategies; SLOs that bind in serve mode) every
// encoded strategy of the space is decoded and evaluated with Simulator::EvaluateAtBatch, and the
// oracle must report the same best value (rel 1e-9) with a strategy that the simulator
// re-evaluates to that value.
#include "search/oracle.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s {
namespace {

struct Brute {
  bool found = false;
  double value = 0;
  Strategy best;
  int64_t evaluations = 0;
  int64_t valid = 0;
  int64_t memory = 0;  // structurally valid but rejected for memory
  int64_t slo = 0;     // ... for TPOT or TTFT
};

// Batches a strategy of the space is evaluated at: its own, or for batch "auto" the powers of
// two 1..max_batch (what the oracle enumerates for such a space).
std::vector<int> BatchesOf(const Strategy& s, const Workload& w) {
  if (s.batch > 0) return {s.batch};
  std::vector<int> out;
  for (int b = 1; b <= w.max_batch; b *= 2) out.push_back(b);
  return out;
}

// Every encoded strategy, in lexicographic index order (last head fastest).
Brute BruteForce(const Simulator& sim, const StrategySpace& space) {
  Brute r;
  std::vector<int> idx(space.num_heads(), 0);
  while (true) {
    Strategy s = space.Decode(idx);
    for (int b : BatchesOf(s, sim.problem().workload)) {
      const Evaluation e = sim.EvaluateAtBatch(s, b);
      ++r.evaluations;
      if (e.valid()) {
        ++r.valid;
        if (!r.found || e.tokens_per_s_per_gpu > r.value) {
          r.found = true;
          r.value = e.tokens_per_s_per_gpu;
          r.best = s;
          r.best.batch = b;
        }
      } else if (e.verdict == Verdict::kMemory) {
        ++r.memory;
      } else if (e.verdict == Verdict::kTpot || e.verdict == Verdict::kTtft) {
        ++r.slo;
      }
    }
    int h = space.num_heads() - 1;
    while (h >= 0 && ++idx[h] == space.head_size(h)) idx[h--] = 0;
    if (h < 0) break;
  }
  return r;
}

struct Case {
  std::string label;
  Problem problem;
  SpaceOptions options;
};

Brute ExpectOracleMatchesBruteForce(const Case& c, int64_t* brute_evals) {
  SCOPED_TRACE(c.label);
  auto space = StrategySpace::Make(c.problem.model, c.problem.cluster.num_gpus, c.options);
  if (!space.ok()) {
    ADD_FAILURE() << space.status().message();
    return {};
  }
  Simulator sim(c.problem);
  OracleStats stats;
  const SearchResult r = SolveExact(sim, *space, nullptr, &stats);
  const Brute b = BruteForce(sim, *space);
  *brute_evals += b.evaluations;
  EXPECT_EQ(r.found, b.found) << r.note;
  EXPECT_EQ(stats.space_size, space->Size());
  EXPECT_LE(stats.max_verify_rel_err, 1e-9) << r.note;
  if (!b.found || !r.found) return b;
  EXPECT_NEAR(r.eval.tokens_per_s_per_gpu, b.value, 1e-9 * b.value)
      << "oracle " << ToText(r.best) << "\nbrute  " << ToText(b.best) << "\n" << r.note;
  // The reported strategy is structurally valid in the space (up to the explicit batch) and the
  // simulator re-evaluates it to the optimum.
  Strategy in_space = r.best;
  if (space->batch_options().size() == 1 && space->batch_options()[0] == 0) in_space.batch = 0;
  EXPECT_TRUE(space->Check(in_space).ok()) << ToText(r.best);
  const Evaluation e = sim.EvaluateAtBatch(r.best, r.best.batch);
  EXPECT_TRUE(e.valid()) << sim.Reason(r.best, e);
  EXPECT_NEAR(e.tokens_per_s_per_gpu, b.value, 1e-9 * b.value);
  // Trace: strictly increasing, ends at the result.
  if (r.trace.empty()) {
    ADD_FAILURE() << "empty trace";
    return b;
  }
  EXPECT_DOUBLE_EQ(r.trace.back().value, r.eval.tokens_per_s_per_gpu);
  for (size_t i = 1; i < r.trace.size(); ++i) {
    EXPECT_GT(r.trace[i].value, r.trace[i - 1].value);
    EXPECT_GE(r.trace[i].call, r.trace[i - 1].call);
  }
  return b;
}

TEST(Oracle, MatchesBruteForceOnRandomSmallProblems) {
  std::mt19937_64 rng(20250917);
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  const Mode modes[] = {Mode::kDecode, Mode::kPrefill, Mode::kServe};
  int64_t evals = 0;
  int memory_bound = 0, slo_bound = 0;
  for (int i = 0; i < 18; ++i) {
    Case c;
    const int kind = i % 4;
    const Mode mode = modes[(i / 4 + i) % 3];
    const int gpus_choices[] = {1, 2, 4, 8};
    int gpus = gpus_choices[rng() % 4];
    ModelSpec m;
    switch (kind) {
      case 0: m = testing::TinyDense(2 + static_cast<int>(rng() % 3)); break;
      case 1: m = testing::TinyMoe(2 + static_cast<int>(rng() % 2), 0); break;
      case 2: m = testing::TinyMoe(4, 256); break;  // two layer kinds (full / sliding window)
      default: m = testing::TinyMla(2, 0); break;   // shared experts: 10 dim heads
    }
    // Keep brute force small: the big-headed models get few degree options.
    if (kind == 3) gpus = std::min(gpus, 2);
    c.problem = testing::MakeProblem(m, gpus, mode);
    c.options.max_batch = 4;
    c.options.search_sp = kind != 3 && gpus <= 4;
    if (kind != 0 && gpus >= 4) {
      c.options.search_batch = false;
      c.options.fixed_batch = 2;
    }
    const double squeeze = 0.3 + 1.2 * unit();
    testing::SqueezeMemory(&c.problem, squeeze);
    if (mode == Mode::kServe) testing::BindSlo(&c.problem, i % 2 == 0, 0.6 + 0.8 * unit());
    c.label = fmt::format("#{} {} {} gpus {} squeeze {:.2f} tpot {:.3f} ms ttft {:.3f} ms", i,
                          m.name, ModeName(mode), gpus, squeeze, c.problem.workload.tpot_ms,
                          c.problem.workload.ttft_ms);
    const Brute b = ExpectOracleMatchesBruteForce(c, &evals);
    memory_bound += b.valid > 0 && b.memory > 0 ? 1 : 0;
    slo_bound += b.valid > 0 && b.slo > 0 ? 1 : 0;
  }
  RecordProperty("brute_force_evaluations", static_cast<int>(evals));
  // The generator must exercise the constraints: memory binds (some strategies rejected, others
  // valid) in many problems, and the serve SLOs bind in some.
  EXPECT_GE(memory_bound, 6);
  EXPECT_GE(slo_bound, 2);
}

TEST(Oracle, EveryOperatorGroupPresent) {
  // MLA + shared experts + one dense and one MoE layer: all seven groups (E, A, R, X, S, D, H) and
  // two layer kinds, 12 dim heads = 531,441 dim combinations per degree configuration. 3 GPUs,
  // 3 heads and 4 experts leave two degree configurations (tp = 1 or 3; pp = ep = 1); serve mode
  // with a TTFT SLO (the TTFT pass sums both kinds) and squeezed memory.
  Case c;
  ModelSpec m = testing::TinyMla(2, 1);
  m.num_heads = 3;
  m.num_kv_heads = 3;
  m.num_experts = 4;
  c.problem = testing::MakeProblem(m, 3, Mode::kServe);
  testing::SqueezeMemory(&c.problem, 0.8);
  testing::BindSlo(&c.problem, /*ttft=*/true, 1.0);
  c.options.search_batch = false;
  c.options.fixed_batch = 4;
  c.options.search_sp = false;
  c.label = "all groups, 3 gpus, serve";
  int64_t evals = 0;
  const Brute b = ExpectOracleMatchesBruteForce(c, &evals);
  // The whole space: the overlap head {none, tbo, sbo} triples it (tbo/sbo are invalid at
  // ep = 1, but brute force evaluates every encoded point); 4 experts get no slot options.
  EXPECT_EQ(evals, 2 * 531441 * 3);
  EXPECT_GT(b.valid, 0);
  EXPECT_GT(b.memory + b.slo, 0);  // the constraints bind for part of it
}

// Hybrid layer kinds (issue 13): gated DeltaNet, Mamba2 and no-mixer MLP blocks, and MLA sparse
// attention with own / shared indexers; their new program steps (state stream, chunked scan,
// indexer, latent MoE, zero-computation experts) must keep the per-operator decomposition exact.
ModelSpec TinyHybridLayers() {
  ModelSpec m = testing::TinyMoe(4);
  m.name = "tiny-hybrid";
  m.linear_key_heads = 4;
  m.linear_value_heads = 8;
  m.linear_key_dim = 64;
  m.linear_value_dim = 64;
  m.linear_conv_kernel = 4;
  m.mamba_version = 2;
  m.mamba_heads = 16;
  m.mamba_head_dim = 64;
  m.mamba_state = 64;
  m.mamba_groups = 2;
  m.mamba_conv_kernel = 4;
  m.num_zero_experts = 4;
  m.moe_latent_size = 512;
  m.layers[0].mixer = Mixer::kLinear;
  m.layers[1].mixer = Mixer::kMamba;
  m.layers[1].ffn = FfnKind::kNone;
  m.layers[2].mixer = Mixer::kNone;
  m.layers[2].ffn = FfnKind::kDense;
  return m;
}

ModelSpec TinySparse() {
  ModelSpec m = testing::TinyMla(3, 0);
  m.name = "tiny-sparse";
  m.index_topk = 256;
  m.index_heads = 4;
  m.index_head_dim = 64;
  for (LayerSpec& l : m.layers) l.mixer = Mixer::kSparse;
  m.layers[2].shared_indexer = true;
  return m;
}

TEST(Oracle, MatchesBruteForceOnHybridLayerKinds) {
  int64_t evals = 0;
  // 10 operators each (no shared experts in the hybrid, no dense layer in the sparse model):
  // 3^10 dim combinations per degree configuration on 2 GPUs.
  const Mode modes[] = {Mode::kDecode, Mode::kServe, Mode::kPrefill, Mode::kDecode};
  for (int i = 0; i < 4; ++i) {
    Case c;
    const bool sparse = i >= 2;
    const ModelSpec m = sparse ? TinySparse() : TinyHybridLayers();
    ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
    const Mode mode = modes[i];
    const int gpus = 2;
    c.problem = testing::MakeProblem(m, gpus, mode);
    testing::SqueezeMemory(&c.problem, 0.6 + 0.3 * i);
    if (mode == Mode::kServe) testing::BindSlo(&c.problem, /*ttft=*/true, 1.0);
    c.options.search_batch = false;
    c.options.fixed_batch = 2;
    c.options.search_sp = false;
    c.label = fmt::format("#{} {} {} gpus {}", i, m.name, ModeName(mode), gpus);
    ExpectOracleMatchesBruteForce(c, &evals);
  }
  EXPECT_GT(evals, 0);
}

TEST(Oracle, SixteenGpusAndAutoBatchSpaces) {
  int64_t evals = 0;
  {
    // 16 GPUs (two NVLink domains: groups that span them pay scale-out bandwidth), batch fixed.
    Case c;
    c.problem = testing::MakeProblem(testing::TinyDense(2), 16, Mode::kDecode);
    testing::SqueezeMemory(&c.problem, 0.4);
    c.options.search_batch = false;
    c.options.fixed_batch = 4;
    c.options.search_sp = true;
    c.label = "dense 16 gpus";
    ExpectOracleMatchesBruteForce(c, &evals);
  }
  {
    // Batch head {auto}: the oracle enumerates the powers of two 1..max_batch (= 8).
    Case c;
    c.problem = testing::MakeProblem(testing::TinyMoe(2), 4, Mode::kServe);
    testing::SqueezeMemory(&c.problem, 0.9);
    testing::BindSlo(&c.problem, /*ttft=*/true, 1.2);
    c.options.search_batch = false;
    c.options.fixed_batch = 0;
    c.options.search_sp = false;
    c.label = "moe 4 gpus serve, batch auto";
    ExpectOracleMatchesBruteForce(c, &evals);
    auto space = StrategySpace::Make(c.problem.model, 4, c.options);
    Simulator sim(c.problem);
    const SearchResult r = SolveExact(sim, *space, nullptr);
    EXPECT_NE(r.note.find("powers of two 1..8"), std::string::npos) << r.note;
  }
}

}  // namespace
}  // namespace l2s

namespace l2s {
namespace {

constexpr double kServeTtftFrac = 1.0;

TEST(Oracle, MtpHeadAndServeImbalanceStayExact) {
  // The mtp head is part of the enumerated degree configuration: its options multiply the
  // configurations, TokensPerStep scales the bound, and the MTP draft passes are folded into the
  // LM-head attribution. Decode with a TPOT SLO (the bound divides by the accepted tokens), and
  // serve on TensorRT-LLM without attention-DP balancing and on SGLang (the imbalance's
  // per-rank coefficients must keep the per-operator sums exact), with a token budget that
  // rejects some (mtp, batch) pairs: decode 8 x (mtp + 1) <= 24 tokens rejects mtp = 3; serve
  // on TensorRT-LLM 8 x (mtp + 1 + accept x 256 / 64) <= 64 rejects mtp >= 1. Prefill (a
  // speculating deployment's prefill server: one draft extend over the prompts, whatever the
  // depth) under a TTFT SLO that binds.
  int64_t evals = 0;
  for (Mode mode : {Mode::kDecode, Mode::kServe, Mode::kPrefill}) {
    for (Engine engine : {Engine::kTrtllm, Engine::kSglang}) {
      if (mode != Mode::kServe && engine == Engine::kSglang) continue;
      Case c;
      ModelSpec m = testing::TinyMoe(2);
      m.mtp_layers = 1;
      c.problem = testing::MakeProblem(m, 4, mode);
      c.problem.workload.engine = engine;
      c.problem.workload.max_num_tokens = mode == Mode::kDecode ? 24 : mode == Mode::kServe ? 64 : 4096;
      c.problem.workload.isl = 256;
      c.problem.workload.osl = 64;
      testing::SqueezeMemory(&c.problem, 0.9);
      if (mode == Mode::kDecode) testing::BindSlo(&c.problem, /*ttft=*/false, 1.0);
      if (mode == Mode::kPrefill) testing::BindSlo(&c.problem, /*ttft=*/true, 4.0);
      // Serve: a TTFT SLO that binds, its prefill pass holding the draft's extend.
      if (mode == Mode::kServe) testing::BindSlo(&c.problem, /*ttft=*/true, kServeTtftFrac);
      c.options.search_batch = false;
      c.options.fixed_batch = 8;
      c.options.search_sp = false;
      c.options.mtp = {0, 1, 3};
      c.label = fmt::format("mtp {} {}", ModeName(mode), EngineName(engine));
      const Brute b = ExpectOracleMatchesBruteForce(c, &evals);
      EXPECT_GT(b.valid, 0) << c.label;
      if (mode != Mode::kDecode) EXPECT_GT(b.slo, 0) << c.label;
    }
  }
  EXPECT_GT(evals, 0);
}

TEST(Oracle, ServeTokenBudgetActivationsStayExact) {
  // Serving on vLLM holds a full token budget's activations (Simulator::BudgetActivationScale):
  // a factor over the step's own that shrinks as the batch grows, so the oracle's memory bound
  // must take it at each configuration's batch (taken once, at batch 1, it over-counted every
  // larger batch and pruned layouts that fit). Memory squeezed so that it binds.
  int64_t evals = 0;
  int memory_bound = 0;
  for (int kind = 0; kind < 2; ++kind) {
    for (double squeeze : {0.6, 0.9, 1.3}) {
      Case c;
      const ModelSpec m = kind == 0 ? testing::TinyDense(2) : testing::TinyMoe(2, 0);
      c.problem = testing::MakeProblem(m, 2, Mode::kServe);
      c.problem.workload.engine = Engine::kVllm;
      c.problem.workload.max_num_tokens = 2048;
      c.problem.workload.isl = 256;
      c.problem.workload.osl = 64;
      testing::SqueezeMemory(&c.problem, squeeze);
      c.options.max_batch = 64;
      c.label = fmt::format("{} vllm serve squeeze {:.1f}", m.name, squeeze);
      const Brute b = ExpectOracleMatchesBruteForce(c, &evals);
      memory_bound += b.valid > 0 && b.memory > 0 ? 1 : 0;
    }
  }
  EXPECT_GE(memory_bound, 2);
  EXPECT_GT(evals, 0);
}

TEST(Oracle, TtftSloCountsTheEnginesRequestOverhead) {
  // SGLang's TTFT includes its request overhead h (Simulator::RequestOverheadSeconds), which the
  // oracle adds to the per-operator prefill parts. Serve and prefill, TTFT SLO h + 0.9 x the
  // reference strategy's step part: the SLO binds (some strategies rejected, some valid) and the
  // oracle must agree with brute force; an SLO of that step part alone (without h) admits none.
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  ASSERT_GT(h, 0);
  int64_t evals = 0;
  for (Mode mode : {Mode::kServe, Mode::kPrefill}) {
    Case c;
    c.problem = testing::MakeProblem(testing::TinyMoe(2), 4, mode);
    c.problem.workload.engine = Engine::kSglang;
    c.problem.workload.isl = 256;
    c.problem.workload.osl = 64;
    testing::BindSlo(&c.problem, /*ttft=*/true, 1.0);
    const double step_ms = c.problem.workload.ttft_ms - h * 1e3;
    ASSERT_GT(step_ms, 0);
    c.problem.workload.ttft_ms = h * 1e3 + 0.9 * step_ms;
    c.options.max_batch = 2;
    c.options.search_sp = false;
    c.label = fmt::format("sglang {} ttft {:.3f} ms", ModeName(mode), c.problem.workload.ttft_ms);
    const Brute b = ExpectOracleMatchesBruteForce(c, &evals);
    EXPECT_GT(b.valid, 0) << c.label;
    EXPECT_GT(b.slo, 0) << c.label;
    c.problem.workload.ttft_ms = 0.9 * step_ms;
    c.label += " without h";
    const Brute none = ExpectOracleMatchesBruteForce(c, &evals);
    EXPECT_EQ(none.valid, 0) << c.label;
    EXPECT_FALSE(none.found) << c.label;
  }
  EXPECT_GT(evals, 0);
}

TEST(Oracle, PartialBoundMatchesReferencePath) {
  // The partial bound (OracleOptions::partial_bound) skips a configuration's remaining
  // ComputeOpTotals calls when the bound over its complete groups (the largest counted 0) is
  // already pruned. Any configuration it skips is also pruned at the full root bound (that bound
  // adds the largest group's minima, all >= 0), so the result must be IDENTICAL to the reference
  // path: same found, same value, same strategy. Problems larger than brute force allows (8 and
  // 16 GPUs, every mode, memory squeezed, SLOs binding), and the skip must actually happen.
  std::mt19937_64 rng(20261130);
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  const Mode modes[] = {Mode::kDecode, Mode::kPrefill, Mode::kServe};
  int64_t skipped = 0, fast_calls = 0, slow_calls = 0;
  for (int i = 0; i < 9; ++i) {
    ModelSpec m = i % 3 == 0   ? testing::TinyDense(3)
                  : i % 3 == 1 ? testing::TinyMoe(2, 0)
                               : testing::TinyMla(2, 0);
    const Mode mode = modes[(i / 3 + i) % 3];
    Problem p = testing::MakeProblem(m, i % 2 == 0 ? 8 : 16, mode);
    testing::SqueezeMemory(&p, 0.4 + unit());
    if (mode == Mode::kServe) testing::BindSlo(&p, i % 2 == 0, 0.6 + 0.8 * unit());
    SpaceOptions o;
    o.max_batch = 16;
    auto space = StrategySpace::Make(p.model, p.cluster.num_gpus, o);
    ASSERT_TRUE(space.ok()) << space.status().message();
    Simulator sim(p);
    OracleStats fs, ss;
    OracleOptions slow;
    slow.partial_bound = false;
    const SearchResult f = SolveExact(sim, *space, nullptr, &fs);
    const SearchResult r = SolveExact(sim, *space, nullptr, &ss, slow);
    SCOPED_TRACE(fmt::format("#{} {} {} gpus {}", i, m.name, ModeName(mode), p.cluster.num_gpus));
    EXPECT_EQ(ss.partial_checks, 0);
    EXPECT_EQ(f.found, r.found);
    EXPECT_EQ(fs.degree_configs, ss.degree_configs);
    EXPECT_LE(fs.op_totals_calls, ss.op_totals_calls);
    if (f.found && r.found) {
      EXPECT_EQ(f.eval.tokens_per_s_per_gpu, r.eval.tokens_per_s_per_gpu);
      EXPECT_EQ(ToText(f.best), ToText(r.best));
    }
    skipped += fs.partial_pruned;
    fast_calls += fs.op_totals_calls;
    slow_calls += ss.op_totals_calls;
  }
  EXPECT_GT(skipped, 0);
  EXPECT_LT(fast_calls, slow_calls);
}

}  // namespace
}  // namespace l2s
