// Aggregated replicas (plan/replicas.h): the instance sizes a cluster tiles into, the weights
// bound, and the choice among the sizes' plans.
#include "plan/replicas.h"

#include <gtest/gtest.h>

#include <map>

#include "engine/engine.h"
#include "engine/restrict.h"
#include "hw/hw.h"
#include "plan/engines.h"
#include "plan/pareto.h"
#include "plan/replica_sizing.h"
#include "plan/space.h"
#include "model/presets.h"

namespace l2s::plan {
namespace {

ClusterSpec Cluster(const char* gpu, int gpus, int per_node) {
  StatusOr<ClusterSpec> c = MakeCluster(gpu, gpus, per_node);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

TEST(ReplicaInstanceSizes, TileTheClusterInsideADomainOrInWholeDomains) {
  EXPECT_EQ(ReplicaInstanceSizes(Cluster("h100", 128, 8)),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128}));
  // 24 GPUs in nodes of 8: 3, 6 and 12 would straddle nodes; 16 does not divide 24.
  EXPECT_EQ(ReplicaInstanceSizes(Cluster("h100", 24, 8)), (std::vector<int>{1, 2, 4, 8, 24}));
  // One NVL72 domain: every divisor of 72.
  EXPECT_EQ(ReplicaInstanceSizes(Cluster("gb300", 72, 72)),
            (std::vector<int>{1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36, 72}));
  // Two NVL72 domains: inside one domain, or both.
  EXPECT_EQ(ReplicaInstanceSizes(Cluster("gb300", 144, 72)),
            (std::vector<int>{1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36, 72, 144}));
  // Part of a node: 3 does not divide the node of 8, but 6 is the whole cluster.
  EXPECT_EQ(ReplicaInstanceSizes(Cluster("h100", 6, 8)), (std::vector<int>{1, 2, 6}));
}

Problem OnCluster(const char* model, const char* gpu, int gpus, int per_node) {
  Problem p;
  StatusOr<ModelSpec> m = ModelPreset(model);
  EXPECT_TRUE(m.ok());
  p.model = *m;
  p.cluster = Cluster(gpu, gpus, per_node);
  p.workload.weight = p.model.weight_dtype;
  p.workload.mode = Mode::kServe;
  p.workload.isl = 1024;
  p.workload.osl = 256;
  return p;
}

TEST(CanHoldWeights, WeightBytesAgainstTheGpusHbm) {
  // Llama-3.1-8B in bf16: 8.0e9 x 2 B = 16 GB, on one 80 GB H100.
  const Problem llama = OnCluster("llama-3.1-8b", "h100", 8, 8);
  EXPECT_TRUE(CanHoldWeights(llama, 1));
  // DeepSeek-V3 in fp8: 6.7e11 x 1 B = 671 GB: not on 4 H100s (320 GB), on 16 (1,280 GB).
  const Problem ds = OnCluster("deepseek-v3", "h100", 128, 8);
  EXPECT_FALSE(CanHoldWeights(ds, 4));
  EXPECT_TRUE(CanHoldWeights(ds, 16));
  // The instance problem: the same cluster but its GPU count.
  const Problem inst = InstanceProblem(ds, 16);
  EXPECT_EQ(inst.cluster.num_gpus, 16);
  EXPECT_EQ(inst.cluster.gpus_per_domain, 8);
  EXPECT_EQ(inst.cluster.gpu.name, ds.cluster.gpu.name);
  EXPECT_EQ(inst.workload.isl, 1024);
}

TEST(ChooseReplicas, TheBestPerGpuSizeTiesToTheLargerAndTheWholeClusterIsAlwaysPlanned) {
  // DeepSeek-V3 on 128 H100s: 1-4 GPUs cannot hold the weights and are not planned (8 x 80 GiB
  // = 687 GB just do).
  const Problem p = OnCluster("deepseek-v3", "h100", 128, 8);
  std::map<int, double> value = {{8, 10}, {16, 300}, {32, 500}, {64, 500}, {128, 120}};
  std::vector<int> planned;
  auto fn = [&](const Problem& q) -> StatusOr<SizeTrial> {
    planned.push_back(q.cluster.num_gpus);
    SizeTrial t;
    t.found = true;
    t.tokens_per_s_per_gpu = value.at(q.cluster.num_gpus);
    t.what = "layout";
    return t;
  };
  StatusOr<ReplicaChoice> c = ChooseReplicas(p, fn);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(planned, (std::vector<int>{8, 16, 32, 64, 128}));
  ASSERT_EQ(c->trials.size(), 8u);
  EXPECT_FALSE(c->trials[0].planned);  // 1 GPU
  EXPECT_EQ(c->trials[0].replicas, 128);
  // 32 and 64 tie: the larger instance, 2 replicas of 64.
  EXPECT_EQ(c->gpus_per_instance, 64);
  EXPECT_EQ(c->replicas, 2);
  EXPECT_EQ(c->trials[static_cast<size_t>(c->chosen)].gpus, 64);
  // Clearly better beats the tie.
  value[32] = 500.01;
  planned.clear();
  c = ChooseReplicas(p, fn);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus_per_instance, 32);
  EXPECT_EQ(c->replicas, 4);
}

TEST(ChooseReplicas, NothingFoundAndErrors) {
  const Problem p = OnCluster("llama-3.1-8b", "h100", 4, 8);
  auto none = [](const Problem&) -> StatusOr<SizeTrial> {
    SizeTrial t;
    t.what = "no valid strategy";
    return t;
  };
  StatusOr<ReplicaChoice> c = ChooseReplicas(p, none);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->chosen, -1);
  EXPECT_EQ(c->gpus_per_instance, 0);
  EXPECT_EQ(c->trials.size(), 3u);  // 1, 2, 4: each holds 16 GB
  auto fail = [](const Problem&) -> StatusOr<SizeTrial> { return Status::Cancelled("interrupted"); };
  EXPECT_FALSE(ChooseReplicas(p, fail).ok());
}

TEST(ReplicasText, Words) {
  EXPECT_EQ(ReplicasText(9, 8), "9 instances x 8 GPUs (72 GPUs)");
  EXPECT_EQ(ReplicasText(1, 72), "1 instance x 72 GPUs");
  EXPECT_EQ(ReplicatedText(8, "pp=2,tp=8"), "8x pp=2,tp=8");
  int n = 0;
  std::string s;
  ASSERT_TRUE(SplitReplicatedText("12x pp=1,tp=2,dp=1", &n, &s));
  EXPECT_EQ(n, 12);
  EXPECT_EQ(s, "pp=1,tp=2,dp=1");
  EXPECT_FALSE(SplitReplicatedText("pp=1,tp=2,dp=1", &n, &s));
  EXPECT_FALSE(SplitReplicatedText("x pp=1", &n, &s));
  EXPECT_FALSE(SplitReplicatedText("prefill 2x pp=1", &n, &s));
}


// The engine-launchable TPOT sweep of an MoE model sizes its replicas as `l2s plan` does: each
// limit's point is at least the one-instance point on every GPU (that size is among those tried),
// and a replicated point names N instances of a size the cluster tiles into.
TEST(EngineParetoSeries, ReplicatedPointsBeatOrEqualOneInstance) {
  Problem p = OnCluster("qwen3-30b-a3b", "h100", 8, 8);
  p.workload.ttft_ms = 2000;
  const AggRequest req;
  const std::vector<double> limits = {20, 50};
  StatusOr<ParetoSeries> s = EngineParetoSeries(p, engine::EngineId::kVllm, req, 0, limits);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->sweep.size(), 2u);
  // The one-instance reference: the same sweep on the 8-GPU restricted space alone.
  Problem q = p;
  q.workload.engine = Engine::kVllm;
  q.workload.max_batch = engine::DefaultsOfEngine(engine::EngineId::kVllm).max_batch;
  StatusOr<StrategySpace> space = engine::RestrictedSpace(
      engine::CapabilitiesOf(engine::EngineId::kVllm), q.model, 8, PlanSpaceOptions(q, 0));
  ASSERT_TRUE(space.ok());
  AggregatedSweepOptions opt;
  bool replicated = false;
  for (const ParetoPoint& pt : s->sweep) {
    const SweepAnswer one = BestAggregatedAtTpot(q, *space, pt.tpot_limit_ms, opt, nullptr);
    ASSERT_TRUE(one.point.has_value());
    const double k = Simulator::EngineFactor("vllm");
    EXPECT_GE(pt.tokens_per_s_per_gpu, one.point->tokens_per_s_per_gpu * k * (1 - 1e-9));
    EXPECT_LE(pt.tpot_ms, pt.tpot_limit_ms * (1 + 1e-9));
    const size_t x = pt.strategy.find("x ");
    if (x != std::string::npos && pt.strategy.find_first_not_of("0123456789") == x) {
      replicated = true;
      const int n = std::stoi(pt.strategy.substr(0, x));
      StatusOr<Strategy> st = FromText(pt.strategy.substr(x + 2));
      ASSERT_TRUE(st.ok()) << pt.strategy;
      EXPECT_EQ(n * st->gpus(), 8) << pt.strategy;
    }
  }
  EXPECT_TRUE(replicated);  // 1- and 2-GPU instances of a 30B model win at these limits
}


// The aggregated (unrestricted) TPOT sweep with replicas: every point at least the one-instance
// point of its limit, monotone in the limit, replicated points tiling the cluster; a dense model's
// series unchanged.
TEST(WithReplicas, AggregatedPointsBeatOrEqualOneInstanceAndStayMonotone) {
  Problem p = OnCluster("qwen3-30b-a3b", "h100", 8, 8);
  p.workload.ttft_ms = 2000;
  auto space_of = [](const Problem& q) {
    return StrategySpace::Make(q.model, q.cluster.num_gpus, PlanSpaceOptions(q, 0));
  };
  AggregatedSweepOptions opt;
  opt.points = 6;
  StatusOr<StrategySpace> space = space_of(p);
  ASSERT_TRUE(space.ok());
  std::vector<double> limits;
  StatusOr<ParetoSeries> one = AggregatedParetoSeries(p, *space, opt, nullptr, &limits);
  ASSERT_TRUE(one.ok()) << one.status().message();
  const ParetoSeries sized = WithReplicas(*one, p, space_of, opt, nullptr);
  ASSERT_EQ(sized.sweep.size(), one->sweep.size());
  bool replicated = false;
  for (size_t i = 0; i < sized.sweep.size(); ++i) {
    const ParetoPoint& a = sized.sweep[i];
    EXPECT_EQ(a.tpot_limit_ms, one->sweep[i].tpot_limit_ms);
    EXPECT_GE(a.tokens_per_s_per_gpu, one->sweep[i].tokens_per_s_per_gpu * (1 - 1e-12));
    EXPECT_LE(a.tpot_ms, a.tpot_limit_ms * (1 + 1e-9));
    if (i > 0) {
      EXPECT_GE(a.tokens_per_s_per_gpu, sized.sweep[i - 1].tokens_per_s_per_gpu);
    }
    const size_t x = a.strategy.find("x ");
    if (x != std::string::npos && a.strategy.find_first_not_of("0123456789") == x) {
      replicated = true;
      StatusOr<Strategy> st = FromText(a.strategy.substr(x + 2));
      ASSERT_TRUE(st.ok()) << a.strategy;
      EXPECT_EQ(std::stoi(a.strategy.substr(0, x)) * st->gpus(), 8) << a.strategy;
      EXPECT_FALSE(a.exact);
    }
  }
  EXPECT_TRUE(replicated);  // 4-GPU instances of a 30B model win at the loose limits
  EXPECT_FALSE(sized.front.empty());
  // A dense model: as it was.
  Problem d = OnCluster("llama-3.1-8b", "h100", 8, 8);
  ParetoSeries s;
  s.sweep = one->sweep;
  const ParetoSeries same = WithReplicas(s, d, space_of, opt, nullptr);
  ASSERT_EQ(same.sweep.size(), s.sweep.size());
  for (size_t i = 0; i < s.sweep.size(); ++i) EXPECT_EQ(same.sweep[i].strategy, s.sweep[i].strategy);
}

// The sizing as `l2s plan` runs it (plan/replica_sizing.h).
TEST(SizeAggregatedReplicas, PlansEachSizeAsThePlanAndKeepsTheChosenOnesPlan) {
  Problem p = OnCluster("qwen3-30b-a3b", "h100", 8, 8);
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 50;
  const AggRequest req;
  // --engine vllm: E's plan per size; the chosen size's plan is kept, no table.
  StatusOr<ReplicaSizing> e = SizeAggregatedReplicas(p, engine::EngineId::kVllm, false, 0, req, -1);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(e->active);
  EXPECT_EQ(e->choice.replicas * e->choice.gpus_per_instance, 8);
  ASSERT_TRUE(e->engine_plan.has_value());
  EXPECT_FALSE(e->table.has_value());
  EXPECT_EQ(e->engine_plan->problem.cluster.num_gpus, e->choice.gpus_per_instance);
  EXPECT_EQ(e->engine_plan->best.gpus(), e->choice.gpus_per_instance);
  // No engine: the engines' table per size, the chosen size's kept.
  StatusOr<ReplicaSizing> t = SizeAggregatedReplicas(p, engine::EngineId::kIdeal, true, 0, req, -1);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->table.has_value());
  ASSERT_GE(t->table->fastest, 0);
  EXPECT_NEAR(t->table->rows[static_cast<size_t>(t->table->fastest)].eval.tokens_per_s_per_gpu,
              t->choice.trials[static_cast<size_t>(t->choice.chosen)].tokens_per_s_per_gpu, 1e-9);
  // A dense model: its dp ranks are replicas already.
  StatusOr<ReplicaSizing> d = SizeAggregatedReplicas(OnCluster("llama-3.1-8b", "h100", 8, 8),
                                                     engine::EngineId::kVllm, false, 0, req, -1);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->active);
  EXPECT_TRUE(d->choice.trials.empty());
  // A fixed size: no planning; one the cluster does not tile into is InvalidArgument.
  StatusOr<ReplicaSizing> f = SizeAggregatedReplicas(p, engine::EngineId::kVllm, false, 4, req, -1);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->active && f->fixed);
  EXPECT_EQ(f->choice.replicas, 2);
  EXPECT_TRUE(f->choice.trials.empty());
  StatusOr<ReplicaSizing> bad = SizeAggregatedReplicas(p, engine::EngineId::kVllm, false, 3, req, -1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "3: 8 GPUs in NVLink domains of 8 split into instances of 1, 2, 4 or 8 GPUs");
}

}  // namespace
}  // namespace l2s::plan

namespace l2s::plan {
namespace {

// The engine table's headline prefers engines whose model-class list names the model (or that
// keep none): TensorRT-LLM, faster but without the class on its page, is the headline only when
// no other engine has a plan.
TEST(FastestPlan, EnginesThatListTheModelFirst) {
  ModelSpec m = *ModelPreset("llama-3.1-8b");
  m.hf_class = "Dots1ForCausalLM";  // on no list of TensorRT-LLM's page
  auto row = [&](engine::EngineId id, double tps, bool found) {
    EnginePlan e;
    e.id = id;
    e.problem.model = m;
    e.found = found;
    e.eval.tokens_per_s_per_gpu = tps;
    return e;
  };
  std::vector<EnginePlan> rows = {row(engine::EngineId::kVllm, 100, true),
                                  row(engine::EngineId::kTrtllm, 120, true)};
  EXPECT_EQ(FastestPlan(rows, false), 0);
  rows[0].found = false;
  EXPECT_EQ(FastestPlan(rows, false), 1);
  // A class TensorRT-LLM's page names: the faster plan wins, as before.
  for (EnginePlan& e : rows) e.problem.model.hf_class = "LlamaForCausalLM";
  rows[0].found = true;
  EXPECT_EQ(FastestPlan(rows, false), 1);
}

}  // namespace
}  // namespace l2s::plan
