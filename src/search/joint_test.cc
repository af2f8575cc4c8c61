// The disaggregated joint space and its oracle (search/joint.h): the oracle against a slow
// reference that evaluates every prefill and every decode strategy of every size, masked
// sampling stays valid, and the metaheuristics run on the joint space through SearchEncoded.
#include "search/joint.h"
#include "search/searchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "search/oracle.h"
#include "search/sampling.h"
#include "search/test_util.h"

namespace l2s {
namespace {


using testing::MakeProblem;
using testing::TinyDense;
using testing::TinyMla;

struct Fixture {
  std::unique_ptr<DisaggModel> model;
  std::unique_ptr<JointSpace> space;
};

Fixture Make(Problem serve) {
  Fixture f;
  f.model = std::move(DisaggModel::Make(SharedSetup(serve))).value();
  SpaceOptions o;
  o.max_batch = serve.workload.max_batch;
  o.search_sp = false;
  SpaceOptions dec = o;
  if (serve.model.mtp_layers > 0) dec.mtp = {0, 1};
  f.space = std::move(JointSpace::Make({f.model.get()}, o, dec)).value();
  return f;
}

// Every structurally valid point of a StrategySpace, by depth-first enumeration under the mask.
void ForEachPoint(const StrategySpace& s, const std::function<void(const Strategy&)>& fn) {
  std::vector<int> idx(s.num_heads(), 0);
  std::vector<uint8_t> m;
  std::function<void(int)> rec = [&](int h) {
    if (h == s.num_heads()) {
      fn(s.Decode(idx));
      return;
    }
    m.assign(s.head_size(h), 0);
    s.Mask(std::span<const int>(idx.data(), h), h, m);
    const std::vector<uint8_t> mine = m;
    for (int i = 0; i < s.head_size(h); ++i) {
      if (!mine[i]) continue;
      idx[h] = i;
      rec(h + 1);
    }
  };
  rec(0);
}

// The reference: every (gp, gd) pair and every valid decode strategy, paired with the prefill
// strategy of highest capacity among all valid ones whose latency fits the TTFT the decode step
// and the KV transfer leave (every prefill evaluation, sorted by latency, prefix maxima).
double BruteForce(const Fixture& f) {
  const DisaggModel& dm = *f.model;
  const Workload& w = dm.setup().serve.workload;
  struct Pre { double lat, cap; Strategy s; Evaluation e; };
  double best = 0;
  for (int gp : dm.prefill_sizes()) {
    const StrategySpace* ps = f.space->PrefillSpace(0, gp);
    if (ps == nullptr) continue;
    std::vector<Pre> pres;
    ForEachPoint(*ps, [&](const Strategy& s) {
      const Evaluation e = dm.PrefillSim(gp).Evaluate(s);
      if (e.valid()) pres.push_back({e.ttft_s, e.tokens_per_s, s, e});
    });
    std::sort(pres.begin(), pres.end(), [](const Pre& a, const Pre& b) { return a.lat < b.lat; });
    std::vector<int> argmax(pres.size());  // best capacity among pres[0..i]
    for (size_t i = 0; i < pres.size(); ++i)
      argmax[i] = i == 0 || pres[i].cap > pres[argmax[i - 1]].cap ? static_cast<int>(i) : argmax[i - 1];
    for (int gd : dm.decode_sizes()) {
      const StrategySpace* ds = f.space->DecodeSpace(0, gd);
      if (ds == nullptr || gp + gd > dm.setup().prefill_pool.num_gpus) continue;
      const KvLink l = dm.Link(gp, gd);
      const double t = dm.KvBytesPerPrompt() / l.bw + l.latency;
      ForEachPoint(*ds, [&](const Strategy& sd) {
        const Evaluation ed = dm.DecodeSim(gd).Evaluate(sd);
        if (!ed.valid()) return;
        const double x = w.ttft_ms > 0 ? w.ttft_ms / 1e3 - t - ed.tpot_s * ed.accept : 1e300;
        auto it = std::upper_bound(pres.begin(), pres.end(), x,
                                   [](double v, const Pre& p) { return v < p.lat; });
        if (it == pres.begin()) return;
        const Pre& p = pres[argmax[(it - pres.begin()) - 1]];
        const DisaggEvaluation d = dm.Combine(gp, p.s, p.e, gd, sd, ed);
        if (d.valid()) best = std::max(best, d.tokens_per_s_per_gpu);
      });
    }
  }
  return best;
}

Problem SmallServe(ModelSpec m, int gpus) {
  Problem p = MakeProblem(std::move(m), gpus, Mode::kServe);
  p.workload.max_batch = 4;
  return p;
}

TEST(JointSpace, MaskedSamplesAreValidAndRoundTrip) {
  Fixture f = Make(SmallServe(TinyMla(4, 1), 8));
  MaskedSampler sampler(*f.space);
  Rng rng(7);
  std::vector<int> idx, again;
  for (int i = 0; i < 300; ++i) {
    sampler.Sample(rng, &idx);
    ASSERT_TRUE(f.space->Valid(idx));
    const JointSpace::Point p = f.space->Decode(idx);
    EXPECT_LE(p.gp + p.gd, 8);
    EXPECT_EQ(p.prefill.gpus(), p.gp);
    EXPECT_EQ(p.decode.gpus(), p.gd);
    ASSERT_TRUE(f.space->Encode(p, &again));
    EXPECT_EQ(again, idx);
  }
}

class JointOracle : public ::testing::TestWithParam<int> {};

TEST_P(JointOracle, MatchesTheExhaustiveReference) {
  // SLO settings: none; TPOT limits at 0.8 and 0.5 of a reference strategy's (the latter leaves
  // nothing valid); TTFT limits at 0.9 and 0.45 of the unconstrained optimum's.
  Problem p = SmallServe(TinyDense(4), 4);
  if (GetParam() == 1) testing::BindSlo(&p, false, 0.8);
  if (GetParam() == 3) testing::BindSlo(&p, false, 0.5);
  Fixture probe = Make(p);
  if (GetParam() == 2 || GetParam() == 4) {
    const DisaggResult r = SolveDisaggExact(*probe.space, nullptr);
    ASSERT_TRUE(r.found);
    p.workload.ttft_ms = r.eval.ttft_s * 1e3 * (GetParam() == 2 ? 0.9 : 0.45);
  }
  Fixture f = Make(p);
  const double ref = BruteForce(f);
  const DisaggResult r = SolveDisaggExact(*f.space, nullptr);
  if (ref == 0) {
    EXPECT_FALSE(r.found);
    EXPECT_FALSE(r.why_none.empty());
    return;
  }
  ASSERT_TRUE(r.found);
  EXPECT_NEAR(r.eval.tokens_per_s_per_gpu, ref, 1e-9 * ref);
  // The reported point evaluates to the same figure through the joint problem.
  JointProblem jp(*f.space);
  EXPECT_NEAR(jp.Evaluate(r.best_encoded).tokens_per_s_per_gpu, ref, 1e-9 * ref);
}

INSTANTIATE_TEST_SUITE_P(Slos, JointOracle, ::testing::Values(0, 1, 2, 3, 4));

TEST(JointSearch, MetaheuristicsRunOnTheJointSpaceBelowTheOracle) {
  Fixture f = Make(SmallServe(TinyMla(4, 1), 8));
  const DisaggResult exact = SolveDisaggExact(*f.space, nullptr);
  ASSERT_TRUE(exact.found);
  JointProblem jp(*f.space);
  for (const char* spec : {"rl", "sa", "ga", "rw", "random"}) {
    auto s = std::move(MakeSearcher(spec)).value();
    const SearchResult a = s->SearchEncoded(jp, 300, 3, nullptr);
    const SearchResult b = s->SearchEncoded(jp, 300, 3, nullptr);
    EXPECT_EQ(a.calls, 300) << spec;
    ASSERT_TRUE(a.found) << spec;
    EXPECT_EQ(a.best_encoded, b.best_encoded) << spec << ": not deterministic";
    EXPECT_LE(a.eval.tokens_per_s_per_gpu, exact.eval.tokens_per_s_per_gpu * (1 + 1e-9)) << spec;
    EXPECT_DOUBLE_EQ(jp.Evaluate(a.best_encoded).tokens_per_s_per_gpu,
                     a.eval.tokens_per_s_per_gpu) << spec;
  }
  // Searchers that need a strategy space say so.
  auto m = std::move(MakeSearcher("megatron")).value();
  const SearchResult r = m->SearchEncoded(jp, 10, 0, nullptr);
  EXPECT_FALSE(r.found);
  EXPECT_NE(r.note.find("strategy space"), std::string::npos);
}

TEST(JointOracle, FastPathMatchesTheReferencePath) {
  // The incumbent's floors on the decode solves and the pool solves' partial bound
  // (DisaggOracleOptions) must not change the optimum: both paths on dense, MLA + MoE and MTP
  // problems of 4-16 GPUs with and without binding SLOs. Both paths examine the decode sizes in
  // the same order, so even the chosen point is the same. The floors must actually cut solves.
  struct C {
    Problem p;
    int slo;  // 0 none, 1 TPOT 0.8, 2 TTFT 0.9 of the optimum's
  };
  std::vector<C> cases;
  for (int slo : {0, 1, 2}) {
    cases.push_back({SmallServe(TinyDense(4), 8), slo});
    cases.push_back({SmallServe(TinyMla(4, 1), 8), slo});
    cases.push_back({SmallServe(TinyMla(4, 1), 16), slo});
  }
  int64_t bounded = 0;
  DisaggOracleOptions slow;
  slow.floors = false;
  slow.partial_bound = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    Problem p = cases[i].p;
    if (cases[i].slo == 1) testing::BindSlo(&p, false, 0.8);
    if (cases[i].slo == 2) {
      Fixture probe = Make(p);
      const DisaggResult r = SolveDisaggExact(*probe.space, nullptr);
      ASSERT_TRUE(r.found);
      p.workload.ttft_ms = r.eval.ttft_s * 1e3 * 0.9;
    }
    Fixture f = Make(p);
    DisaggOracleStats fs, ss;
    const DisaggResult a = SolveDisaggExact(*f.space, nullptr, &fs);
    const DisaggResult b = SolveDisaggExact(*f.space, nullptr, &ss, slow);
    EXPECT_EQ(ss.sizes_bounded, 0);
    ASSERT_EQ(a.found, b.found);
    if (!a.found) continue;
    EXPECT_NEAR(a.eval.tokens_per_s_per_gpu, b.eval.tokens_per_s_per_gpu,
                1e-12 * b.eval.tokens_per_s_per_gpu);
    EXPECT_EQ(a.best_encoded, b.best_encoded);
    bounded += fs.sizes_bounded;
  }
  EXPECT_GT(bounded, 0);
}

// The decomposed search (SearchJointDecomposed, rl's path on a JointProblem) on a problem whose
// optimum uses a prefill instance size that is not the best per GPU: TinyDense on 16 GPUs with
// HBM squeezed (SqueezeMemory 0.3); the oracle's optimum has 4-GPU prefill instances although
// 8-GPU ones reach more tokens/s per GPU (asserted here with SolveExact per size): the integer
// instance counts choose the size. rl must find the oracle's value at 1,000 calls, every seed.

// `model` served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) disaggregated on `gpus` GPUs of type
// `gpu`, in the joint space `l2s plan --serving disagg` searches (cli/plan_problem.cc
// PlanSpaceOptions: batch up to 1,024 and sp searched in both roles, MTP depths 0-3 in decode for
// a model with MTP layers).
Fixture PlanServeOn(const Problem& serve) {
  Fixture f;
  f.model = std::move(DisaggModel::Make(SharedSetup(serve))).value();
  auto plan_options = [](const Problem& p) {
    SpaceOptions o;
    o.max_batch = std::max(1, std::min(p.workload.max_batch, 1024));
    o.search_batch = true;
    o.search_sp = true;
    if (p.model.mtp_layers > 0 && p.workload.mode != Mode::kPrefill) o.mtp = {0, 1, 2, 3};
    return o;
  };
  const DisaggSetup& st = f.model->setup();
  const Problem pp = *PrefillProblem(serve, st.prefill_pool, st.prefill_pool.num_gpus);
  const Problem dp = *DecodeProblem(serve, st.decode_pool, st.decode_pool.num_gpus);
  f.space = std::move(JointSpace::Make({f.model.get()}, plan_options(pp), plan_options(dp))).value();
  return f;
}

Fixture PlanServe(const std::string& model, const std::string& gpu, int gpus) {
  return PlanServeOn(testing::RealServe(model, gpu, gpus));
}

// A mechanism of rl on the g-GPU decode role of `model` disaggregated on `gpus` H100s: the cold
// searcher (`budget` calls, `seed`) reaches 0.99 of the role's exact optimum (`optimum`, checked),
// and `without` (the mechanism off) stays below `below` x it. Returns the cold searcher's result.

// deepseek-v3 served on the GB200 NVL72 (one NVLink domain of 72 GPUs).
// The traps below were measured with GB200 priced by the H100 fit at its peaks (per-SM transfer).
// Since issue 44 the gb200 preset runs its own kernel set (kernel_coeffs_blackwell.cc), on whose
// landscape the memory near-miss trap does not arise (the ablated searches reach the optimum too):
// the fixture keeps the landscape the mechanisms were measured on (calibration "": H100 fit),
// every assertion unchanged.

// The decomposed search with default options and cold role searches (rl(warm=0)'s roles: the
// mechanisms below were needed by them; the pretrained ones of the default rl leave these traps
// without them) reaches 0.99 of the exact optimum of `f`'s joint space at `budget` calls and
// `seed`, and with `off` it does not; rl(warm=0)'s own path on the joint space is the search with
// the defaults. `optimum`: that optimum when known (0: SolveDisaggExact here). `base`: the options
// both searches start from (the defaults but for what the mechanism was measured without; `off`
// changes them further). Returns the search's result with `base`.

// The decomposed search as measured before the fifteenth pass (ep_memory, probe_early and
// evidence_fallback off, and the eighteenth pass's recipe, the twenty-second's shape_sizes, the
// twenty-third's dp_shapes and the twenty-fourth's deep_first, dp_shapes_after and
// evidence_prefill_below), for the tests whose traps were measured on it.

// The role searches follow `warm` (rl.h, "Warm start"; issue 14's seventh pass): kimi-k2
// disaggregated on 64 H200s, 1,000 calls, seed 0. With cold role searches (rl(warm=0)) the
// search ends at 0.622 of the exact optimum; the default rl's role searches start from the
// pretrained weights and end at 0.892. rl's own path on the joint space is the decomposed search
// with its roles. (Until the eighth pass this test's problem was deepseek-v3 on 32 H100s at 4,000
// calls, where cold role searches now reach the optimum too; on the disaggregated suite the
// pretrained ones reach 0.99 of it in 78 of 90 runs at 4,000 calls against 77, with higher worst
// seeds.) Measured before `eligible` (thirteenth pass), with which the cold role searches reach
// the optimum here too (EligibleDeepSearchesSkipSizesTheRoleFitsBadly): both run without it.
// (test removed with the RL role searches; see the decomposed search rewrite)

// eligible (thirteenth pass): the same problem, cold role searches, 1,000 calls, seed 0. After the
// anchors the decode role's best capacity per GPU is 1,075.7 tokens/s; the first ranked pair
// (by how the sizes pack at their hopes) has the 8-GPU decode slot, whose best part is 320.0
// (0.30 of it: kimi-k2's fp8 weights, about 1 TB, leave little of 8 x 141 GB to the KV cache),
// and its deep search finds nothing better (0.622 of the optimum at the end). Skipping slots
// below 0.6 of the role's best, the deep search goes to the 16-GPU decode slot (846.9, 0.79) and
// the search reaches the optimum (16-GPU decode instances). Any threshold in (0.30, 0.79] picks
// the same slot.

// The optimum of kimi-k2 disaggregated on 256 H100s (below): the decode role's exact optimum at 120
// GPUs x 120 / 256.

// evidence (fourteenth pass): kimi-k2 disaggregated on 256 H100s, cold role searches, 4,000
// calls, seed 4. Its optimum (SolveDisaggExact, 24 s, not run here) is 8 prefill instances of 16
// GPUs with one decode instance of 120 GPUs that binds the rate: 1,253.99 tokens/s per GPU, the
// decode role's own optimum at 120 GPUs (pp=1,tp=4,ep=120 with 480 expert slots, batch 512, tbo:
// 2,675.19 tokens/s per GPU) x 120 / 256. Computed here that way (0.8 s); the search must also end
// at a 120-GPU decode instance. How well a decode size fits kimi-k2's 384 experts decides whether
// batch 512 fits the 50 ms TPOT (the role's optimum is 1,742 at 80 GPUs, 2,675 at 120, 1,568 at
// 128, 2,769 at 144, 713 at 152), but at the batch 256 and single-batch overlap of the parts the
// projections carry, the sizes that fit look alike (about 1,750 per GPU), and without evidence
// every deep search goes where the sizes pack well (0.837). With it, the 120-GPU slot's probe at
// the widest ep, batch 512 and tbo misses the TPOT by a few percent (a potential of about 2,250)
// and the second deep search goes there.

// exploit and evidence_prefill off (fourteenth pass): the same problem with the default rl's
// pretrained role searches, 4,000 calls, seed 3. The second deep search (ranked by evidence) takes
// the 120-GPU decode slot to 2,615 tokens/s per GPU and the best pair (eight 16-GPU prefill
// instances with it) to 0.977 of the optimum. Before, the pair's 136-GPU prefill slot was
// deep-searched too (400 calls) and the round after deep-searched another pair (a 40-GPU decode
// slot): nothing was left for the binding 120-GPU slot; with exploit alone its further search gets
// the last 121 calls. With both, that further search gets 400 calls (2,626 per GPU, batch 256 at
// tp = 2): 0.982. Each alone stays at 0.977.
// (test removed with the RL role searches; see the decomposed search rewrite)

// deep_share (fourteenth pass): kimi-k2 disaggregated on 64 H200s, cold role searches, 1,000 calls,
// seed 1. With deep searches of 400 calls the budget ends after the first round's two (the 40-GPU
// decode slot and the 8-GPU prefill slot): 0.892 of the optimum. With 149-call ones (0.15 of the
// budget) a second, evidence-ranked round follows at 742 calls: the 16-GPU decode slot, whose
// probes promise 2,460 tokens/s per GPU, is searched deeply and further and the search ends at
// the optimum's two 16-GPU decode instances.

// other_side off (fourteenth pass): the target problem of PLAN.md (deepseek-v3 served with 4,096
// in / 512 out on 128 H100s, disaggregated), cold role searches, 1,000 calls, seed 0. With the
// projections in six shapes (pp also the nearest option on the other side of the one wanted) the
// first projection round takes 245 calls over the 38 slots, the later deep searches have less,
// and the search ends at 0.961 of the optimum with an 88-GPU prefill instance at pp = 22 (every
// seed 0-9 below 0.98); in three shapes that round takes 150 calls and the search reaches 0.997
// with pp = 11 there (9 of 10 seeds).

// unstick: kimi-k2 disaggregated on 64 H200s, 4,000 calls, seed 2. The decode anchor at 16 GPUs
// finds 102 tokens/s per GPU (847 with the serving-shape templates), below the 40-GPU decode
// slot's 1,850, so every further search goes to the 40-GPU slot of the best pair and stays there
// (0.892 of the oracle). With unstick the 16-GPU decode slot gets a deep search once the further
// searches stop improving, and reaches the optimum (two 16-GPU decode instances at batch 512).

// ep_memory (fifteenth pass): deepseek-v3 disaggregated on 256 H100s, a 120-GPU decode part at
// ep 40 with every dim `none` (each GPU holds whole experts; what the first deep search of a
// 1,000-call search ends at) projected onto a 16-GPU decode instance keeping pp and tp (dp 15 ->
// 2). The same share of a stage's GPUs is ep 40 x 16 / 120 = 5.3 -> 4 (nearest in log2), where the
// 320 expert slots of 58 MoE layers x 3 x 7,168 x 2,048 fp8 bytes (44.0 MB an expert, 761 GiB in
// all) put 190 GiB on each GPU, over an H100's 80 GiB at any batch (211.8 GiB of weights with the
// replicated rest). At least the source's 40 experts' GPUs, capped at the stage's 16, is ep 16:
// 47.6 GiB of experts, 66.6 GiB of weights, and at batch 256 (the projection's 1,024 two options
// down, as a start's variants go) the part is valid. Before ep_memory the 16-GPU decode slot of
// the optimum (nine 16-GPU prefill and seven 16-GPU decode instances) had no valid part after the
// first projection round.
TEST(JointSearch, ProjectionsOntoSmallerInstancesKeepTheExpertsSpread) {
  const Fixture f = PlanServe("deepseek-v3", "h100", 256);
  const StrategySpace* from = f.space->DecodeSpace(0, 120);
  const StrategySpace* to = f.space->DecodeSpace(0, 16);
  ASSERT_TRUE(from != nullptr && to != nullptr);
  const StatusOr<Strategy> s = FromText(
      "pp=1,tp=8,dp=15,ep=40,batch=1024,sp=on,slots=320,overlap=tbo,mtp=2,embed=none,"
      "attn_qkv=none,attn_core=none,attn_out=none,moe_router=none,moe_ffn1=none,moe_ffn2=none,"
      "shared_ffn1=none,shared_ffn2=none,dense_ffn1=none,dense_ffn2=none,lm_head=none",
      120);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(from->Check(*s).ok()) << from->Check(*s).message();
  const Simulator& sim = f.model->DecodeSim(16);
  Strategy kept, share;
  ASSERT_TRUE(ProjectPart(*from, *s, *to, 0, true, &kept));
  ASSERT_TRUE(ProjectPart(*from, *s, *to, 0, false, &share));
  EXPECT_EQ(kept.pp, 1);
  EXPECT_EQ(kept.tp, 8);
  EXPECT_EQ(kept.ep, 16);
  EXPECT_EQ(share.ep, 4);
  EXPECT_EQ(share.tp, 8);
  kept.batch = 256;
  EXPECT_TRUE(sim.Evaluate(kept).valid()) << ToText(kept);
  share.batch = 1;
  const Evaluation e = sim.Evaluate(share);
  EXPECT_EQ(e.verdict, Verdict::kMemory) << ToText(share);
  EXPECT_GT(e.weight_bytes, e.mem_capacity_bytes);
  // Onto a larger instance both are the same share of the stage (ep 40 x 240 / 120 = 80).
  const StrategySpace* larger = f.space->DecodeSpace(0, 240);
  ASSERT_NE(larger, nullptr);
  Strategy a, b;
  ASSERT_TRUE(ProjectPart(*from, *s, *larger, 0, true, &a));
  ASSERT_TRUE(ProjectPart(*from, *s, *larger, 0, false, &b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.ep, 80);
}

// probe_early and evidence_fallback (fifteenth pass): deepseek-v3 disaggregated on 64 H100s, cold
// role searches, 1,000 calls, seed 4. After the anchors the best pair is a 32-GPU prefill with a
// 32-GPU decode instance, both at their role's best per GPU, so no pair's packing hopes beat it
// and the round went to a further search of that pair's binding slot; the deep searches of the
// 16- and 24-GPU decode slots came later, the 24-GPU one with 62 calls left (0.905 of the
// optimum, still 32 + 32). With the decode slots' probes from the first projection round on and
// such a round ranked by their evidence, the 24-GPU decode slot is searched deeply in the second
// round and the search ends at the optimum's pair, 40-GPU prefill with 24-GPU decode (0.998).
// Either change alone leaves it at 0.905.

// nearmove (rl.h 29., fifteenth pass): the 16-GPU decode role of deepseek-v3 disaggregated on 48
// H100s (the optimum's decode instance: context 2,304, 2,560 tokens of KV reserved a sequence,
// TPOT 50 ms), cold, 4,000 calls, seed 0. The role's optimum (3,675.8 tokens/s per GPU) is tp=4 at
// batch 512 with 32 redundant expert slots (288), the embedding on dim1 and attention's output on
// dim0, at 79.97 of 80 GiB. The redundant slots cost about 5 GiB per GPU (32 x 58 layers x 44.0
// MB / 16); from a point without them the slots move misses memory at its batch by about that
// much, and the sharded dims that save it gain nothing at the lower batch its fit falls back to,
// so without nearmove the search ends at tp=2, batch 256, 256 slots (3,373.0: 0.918); with it the
// move descends from its own batch (the dims walk towards valid) and the search reaches the
// optimum. Seeds 0-9: 10 of 10 at the optimum, 1 of 10 without (pretrained: 10 and 9).

// memtrade (rl.h 32., eighteenth pass): the same 16-GPU decode role of deepseek-v3 (the decode
// instance of the optimum of deepseek-v3 disaggregated on 48 H100s), cold, seed 0,
// 3,000 calls. From the serving shapes every seed climbs to tp=4, batch 512, 288 slots at 3,506.6
// tokens/s per GPU (0.954 of the role's optimum, 79.77 of 80 GiB; call 2,415): there the shared
// FFN's up-projection whole per GPU would be 4.5% faster but needs 1.21 GiB more (0.98 over the
// capacity), the embedding on dim1 saves 1.29 GiB for 0.06% of throughput, and neither alone is
// better. The pass's end tries the pair (0.9958 at 79.69 GiB), whose descent takes the dense
// FFN's down-projection whole too: the optimum at 79.97 GiB, call 2,641 (0.99 at 2,589 in every
// seed 0-9; without memtrade at 3,103-3,787, this seed at 3,614).

// nearscale (rl.h 33., nineteenth pass): deepseek-v3 disaggregated on 256 H100s (2,048 in / 512
// out, TTFT 2 s, TPOT 50 ms), cold role searches, 4,000 calls, seed 0. The optimum (1,416.10
// tokens/s per GPU, the exact oracle's: `l2s plan ... --serving disagg --oracle-seconds 600`, 35
// s) is prefill-bound: 9 x 16 prefill GPUs at pp=16 beside 7 x 16 decode GPUs at
// pp=1,tp=2,ep=16, batch 256 (3,373 tokens/s per GPU). The 16-GPU decode slot's deep search
// climbs to pp=2,tp=2,ep=8 (3,050.6); from there the move to pp=1, ep 16 misses memory at batch
// 256 by 2.0 GiB and its fit falls to batch 128 (2,312). No two points with other dims had been
// seen at pp=1,tp=2,ep=16, so 17.'s spread there was 0 and the move was no near miss; the spread
// seen at pp=2,tp=2,ep=8 (the same tp and expert-TP degree 1: 4.9 GiB) scaled by pp (9.9 GiB)
// makes it one, its descent starts at batch 256 and shards attention's output projection: the
// optimum's decode part. Without it the search pairs 4 x 24 decode GPUs (1,390.21, 0.982).
// (test removed with the RL role searches; see the decomposed search rewrite)

// rl.h 30. (pairfirst=2): the 120-GPU decode role of kimi-k2 disaggregated on 256 H100s (TPOT 50
// ms), cold, 4,000 calls, seed 1. Its optimum (pp=1,tp=4,ep=120, batch 512) takes attention
// `none,none,dim0` with the shared FFN pair `dim0/dim1` (2,675.19 tokens/s per GPU); from
// attention `dim1,none,dim0` with the pair `none/none` (2,614.65) each change alone is worse
// (2,601.58; the pair alone misses the TPOT). pairfirst=1 (its near option of attention with the
// expert pair, at points a move reached) ends at tp = 2, 0.982 of it; with the shared pair too and
// at the ends of improving descents the search reaches the optimum.

// recipe (eighteenth pass): kimi-k2 disaggregated on 128 H100s (2,048 in / 512 out, TTFT 2 s,
// TPOT 50 ms), cold role searches, 4,000 calls, seed 0. The optimum (1,070.12 tokens/s per GPU, the
// exact oracle's, `l2s plan ... --serving disagg --search oracle`, 10 s) prefills on 2 x 24 GPUs at
// pp=1,tp=8,ep=24 with two-batch overlap and 480 expert slots (11,415 input tokens/s per GPU)
// beside one 80-GPU decode instance. The anchors' serving shapes had wide ep only without overlap
// and with 384 slots (at 24 GPUs 6,769 per GPU, over the TTFT), so the prefill parts found were
// deep pipelines (pp=16 at 11,192), whose projections onto 24 GPUs miss memory: 3 x 16 prefill
// GPUs, 1,049.29 (0.981) in every seed. With the shapes also overlapped and with redundant
// experts the 24-GPU slot has a wide-ep part and the search reaches the optimum (seeds 0-9: 10 of
// 10, either searcher).

// templates and the anchors per role by budget: kimi-k2 disaggregated on 32 H100s, 1,000 calls,
// seed 1. Without them six anchors of 58 calls each (at 2, 8 and 16 GPUs per role; kimi-k2's
// weights need 16 H100s) leave the 16-GPU decode slot at 53 tokens/s per GPU, and its deep search
// climbs from there to 95 (0.13 of the oracle); with one anchor per role and the pp = 1, widest-ep
// shapes evaluated beside it the search reaches the optimum. (Measured before the twenty-third
// pass's dp_shapes, off in both: with it the search without the templates reaches the optimum
// too, its data-parallel-attention shapes grown from the 16-GPU decode slot's part.)

// shape_sizes (twenty-second pass): deepseek-v3 disaggregated on 128 H200s (2,048 in / 512 out,
// TTFT 2 s, TPOT 50 ms), cold role searches, 1,000 calls, seed 3. At 1,000 calls each role gets one
// anchor search (350 anchor calls < 3 x 2 x 200); without the serving shapes at the decode role's
// other anchor sizes (a quarter and a sixteenth of its largest) the search ends at 0.900 of the
// exact optimum (1,779.78 tokens/s per GPU, `l2s plan ... --serving disagg --search oracle`);
// with them, each raised in batch while it gains, it reaches the optimum.

// The same on kimi-k2 disaggregated on 256 H100s, seed 0 (optimum 1,253.99: 8 x 16 prefill GPUs
// beside one 120-GPU decode instance at tp=4, batch 512, TBO, 480 slots). The one decode anchor
// (128 GPUs) ends at tp=1, batch 64 (1,442.5 tokens/s per GPU); without shape_sizes the 120-GPU
// slot stays at tp=1 and the search ends at 0.852. With it the recipe with SBO raised to batch 64
// at 64 GPUs (1,524.3) is projected onto the 120-GPU slot, whose deep search climbs to tp=2, batch
// 256, TBO (2,586.4 against the role's 2,675.19): 0.967 (every seed 0-9 the same; still short of
// 0.98, docs/dev/RL_STUDY.md twenty-second pass). Both without the twenty-third pass's dp_shapes
// (next test).
// (test removed with the RL role searches; see the decomposed search rewrite)

// A short-budget option (`option`: on by default) changes nothing once the deep searches reach
// their cap: cold role searches, 1,000 calls with deep searches of 0.5 of the budget (499 calls:
// the cap of 400 binds), the same point with the option on and off.

// dp_shapes (twenty-third pass), the same problem and seed: before the 120-GPU decode slot's deep
// search (149 calls at 1,000) its data-parallel-attention shapes are raised in batch. From its
// part (pp=1,tp=1,ep=120, batch 64, SBO, 480 slots: 1,753.7 tokens/s per GPU) the shapes at tp=2
// start at batch 128 (the part's KV per GPU: batch 64 x 2 / 1) and the one with TBO rises to
// batch 256 (2,580.0; 512 misses the TPOT); at tp=4 the one with TBO rises from 256 to 512
// (2,645.4: Megatron's dims but the embedding, QKV and attention core `none`), and no shape at
// tp=8 beats that, so the raise stops there. The deep search starts from that part and ends at
// the role's optimum at 120 GPUs (2,675.19: tp=4, batch 512, TBO, shared experts split), the
// pair at the joint optimum (1,253.99: 8 x 16 prefill GPUs beside the 120-GPU instance) where
// without the shapes it ends at 0.967 (above). At 4,000 calls (deep searches of 400 calls) the
// option does nothing.

// dp_shapes_wide (twenty-fourth pass): deepseek-v3 served on 256 H100s (2,048 in / 512 out, TTFT
// 2 s, TPOT 50 ms), cold role searches, 1,000 calls; joint optimum 1,416.10 tokens/s per GPU
// (SolveDisaggExact, docs/dev/RL_STUDY.md). Its 24-GPU decode role's optimum is tp=2 at batch 256
// with every dim `none` but the LM head (3,707.2 tokens/s per GPU); at tp=2 with every dim `none`
// it is the tp=1 program (3,698.8), so the climbs' tp move screens equal. Seed 0: the slot's part
// is at tp=8 (the domain), batch 1,024 (3,027.1), where the shapes above it had nothing to offer;
// now the tp options below it come next, tp=4 at batch 512 and tp=2 at batch 1,024 x 2 / 8 = 256,
// whose LM-head shape is that optimum. Seed 5: the part is already tp=1, batch 128 (3,698.8), and
// its tp=2 LM-head shape at batch 128 x 2 = 256 is the optimum. The pair then packs at 1,390.21
// (0.9817); without them both seeds end at 1,387.05 (0.9795: the 24-GPU slot at 3,698.8).
// (test removed with the RL role searches; see the decomposed search rewrite)

// deep_first (twenty-fourth pass): kimi-k2 served on 64 H200s (2,048 in / 512 out, TTFT 2 s, TPOT
// 50 ms), cold role searches, 1,000 calls, seed 5; joint optimum 1,295.58 tokens/s per GPU
// (docs/dev/RL_STUDY.md), the one nine of ten seeds reached already. After the first round's deep
// searches (the 40-GPU decode slot, the 8-GPU prefill slot) raised the best pair, `exploit` spent
// the round on further searches of the binding slot, and the next round had too few calls left
// for the 16-GPU decode slot's deep search, which the optimum's pair needs: 1,156.22 (0.892).
// With fewer than two deep searches' calls (2 x 149) left that round goes to the ranked pair's
// deep search instead, and the search ends at the optimum. At 4,000 calls (deep searches at their
// cap of 400) the option does nothing.
// (test removed with the RL role searches; see the decomposed search rewrite)

// evidence_prefill_below (twenty-fourth pass): deepseek-v3 served on 128 H100s with 4,096 in /
// 512 out (TTFT 2 s, TPOT 50 ms), cold role searches, 1,000 calls, seed 4; joint optimum 788.63
// tokens/s per GPU (SolveDisaggExact, docs/dev/RL_STUDY.md). The first round is ranked by the decode
// slots' evidence (evidence_fallback) and deep-searches the 40-GPU decode slot only; the 88-GPU
// prefill slot of the optimum's pair holds a projection (8,134.9 input tokens/s per GPU against
// the role's 9,042.1 at another size) and, never searched deeply, the run ends at 706.41 (0.896).
// Below its role's best, it is searched in that round too and the run ends at 786.07 (0.997).
// (test removed with the RL role searches; see the decomposed search rewrite)

// pair_fallback (twenty-second pass): llama-3.1-405b disaggregated on 32 H100s (2,048 in / 512
// out, TTFT 2 s, TPOT 50 ms), pretrained role searches, 1,000 calls, seed 3, with deep searches of
// 0.175 of the budget (0.15 by default). Slots of both roles have parts, but no pairing of them
// meets the TTFT; once the ranked pairs' slots have all been searched deeply there is no best pair
// to search further, and without the fallback the search ends at 744 calls with no answer. With
// it the first ranked pair's prefill slot is searched held to the latency its decode part leaves,
// and the search ends at a valid pair (16 + 16 GPUs) with its budget spent.
// (test removed with the RL role searches; see the decomposed search rewrite)

// rl.h 17. (feas, nearmem, pairdp): the 8-GPU decode instance of deepseek-v3 disaggregated on the
// GB200 NVL72 (TPOT 50 ms). Its optimum is pp=1,tp=2,batch=1,024 with no redundant expert slots,
// one MTP token and the embedding and dense FFN sharded, at 185.8 of 186 GiB per GPU; from the
// policy's tp=1,batch=256 with redundant slots every climb ends at 0.875 of it without the three
// (in every seed and at any budget: the batch that needs those dims misses memory by 0.8% with
// any one of them, and a descent from an invalid start took no invalid step). feas and nearmem
// are each needed at 4,000 calls, seed 1, cold and pretrained. pairdp lets the first climb (from
// tp = 1) take the tp = 2 move with DP-attention dims and no redundant slots: at 1,000 calls the
// search gets within 3% of the optimum with it and stays at 0.875 without (a later climb from
// tp = 2 finds the way at 4,000 calls either way).

// other (DecomposedOptions): the same GB200 NVL72 problem, 4,000 calls, seed 1, pretrained roles.
// The best pair found pairs 8-GPU prefill instances (the binding role) with 8-GPU decode
// instances at batch 256 (four of them, 13% to spare); the further searches of the prefill slot
// find nothing better. Searched further too, the decode slot reaches batch 1,024, three decode
// instances carry the rate and the 8 GPUs freed go to prefill: the optimum (0.987 without).
// (test removed with the RL role searches; see the decomposed search rewrite)

// Counts the calls an observer sees and cancels after `stop` of them (0: never).
class CallCounter final : public Observer {
 public:
  explicit CallCounter(int64_t stop = 0) : stop_(stop) {}
  void OnProgress(int64_t calls, int64_t, double) override {
    ++seen;
    last = calls;
  }
  bool Cancelled() override { return stop_ > 0 && seen >= stop_; }
  int64_t seen = 0, last = 0;

 private:
  int64_t stop_;
};

// Call accounting and determinism of the decomposed search: every role evaluation and the last
// joint call are charged (the observer sees each; never more than the budget, budgets 1 to
// 1,000), the same seed gives the same point and trace, the trace rises to the result, and an
// observer that cancels stops it within the call it cancels at.
TEST(JointSearch, DecomposedRlChargesEveryCallAndIsDeterministic) {
  Problem p = SmallServe(TinyMla(4, 1), 16);
  testing::SqueezeMemory(&p, 0.5);
  Fixture f = Make(p);
  JointProblem jp(*f.space);
  for (int64_t budget : {1, 2, 7, 137, 1000}) {
    auto rl = std::move(MakeSearcher("rl")).value();
    CallCounter c1, c2;
    const SearchResult a = rl->SearchEncoded(jp, budget, 7, &c1);
    const SearchResult b = rl->SearchEncoded(jp, budget, 7, &c2);
    EXPECT_LE(a.calls, budget);
    EXPECT_EQ(c1.seen, a.calls) << "budget " << budget;  // every call seen once
    EXPECT_EQ(c1.last, a.calls) << "budget " << budget;
    EXPECT_EQ(a.calls, b.calls);
    EXPECT_EQ(a.found, b.found);
    EXPECT_EQ(a.best_encoded, b.best_encoded) << "budget " << budget << ": not deterministic";
    ASSERT_EQ(a.trace.size(), b.trace.size());
    for (size_t i = 0; i < a.trace.size(); ++i) {
      EXPECT_EQ(a.trace[i].call, b.trace[i].call);
      EXPECT_EQ(a.trace[i].value, b.trace[i].value);
      if (i > 0) {
        EXPECT_GT(a.trace[i].value, a.trace[i - 1].value);
        EXPECT_GE(a.trace[i].call, a.trace[i - 1].call);
      }
    }
    if (a.found) {
      ASSERT_FALSE(a.trace.empty());
      EXPECT_EQ(a.trace.back().value, a.eval.tokens_per_s_per_gpu);
      EXPECT_LE(a.trace.back().call, a.calls);
      EXPECT_DOUBLE_EQ(jp.Evaluate(a.best_encoded).tokens_per_s_per_gpu,
                       a.eval.tokens_per_s_per_gpu);
    }
    if (budget >= 137) {
      EXPECT_TRUE(a.found) << "budget " << budget;
    }
  }
  // Another seed searches differently (some choice of its role searches differs).
  auto rl = std::move(MakeSearcher("rl")).value();
  CallCounter ca, cb;
  const SearchResult a = rl->SearchEncoded(jp, 1000, 7, &ca);
  const SearchResult b = rl->SearchEncoded(jp, 1000, 8, &cb);
  EXPECT_TRUE(a.trace.size() != b.trace.size() || a.best_encoded != b.best_encoded ||
              !std::equal(a.trace.begin(), a.trace.end(), b.trace.begin(),
                          [](const TracePoint& x, const TracePoint& y) {
                            return x.call == y.call && x.value == y.value;
                          }));
  // Cancelled after 50 calls: it stops there, interrupted.
  CallCounter stop(50);
  const SearchResult r = rl->SearchEncoded(jp, 1000, 7, &stop);
  EXPECT_TRUE(r.interrupted);
  EXPECT_LE(r.calls, 50);
  EXPECT_EQ(stop.seen, 50);
}

// The decomposed search's role searches follow `warm`: the default rl (warm=1) and the cold
// rl(warm=0) search its roles from different networks (other traces), each deterministic for its
// seed; the name records the option.

// The options of rl.h 18. (repair, triple, first) are off in the role searches (RlRoleRun; they
// cost runs on the disaggregated suite, docs/dev/RL_STUDY.md ninth pass): spelled on or off, rl's path
// on the joint space is the same. kimi-k2 disaggregated on 64 H200s, 1,000 calls, seed 2, where
// with them on in the role searches the path differs (checked by removing the override).


}  // namespace
}  // namespace l2s
