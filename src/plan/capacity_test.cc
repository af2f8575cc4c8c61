// Capacity sizing as a library (plan/capacity.h): hand-derived labels and default sizes, the KV
// link's pool size, the fewest-GPU answer's invariants (GPUs = instances x GPUs per instance, the
// answer meets the SLOs and one instance fewer misses them), and its usage errors.
#include "plan/capacity.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.h"
#include "hw/hw.h"
#include "model/presets.h"
#include "serve/step_cost.h"
#include "strategy/strategy.h"

namespace l2s::plan {
namespace {

// The serve problem on `gpus` H100s of Llama-3.1-8B (BF16) at 1000/200 tokens, as the CLI builds
// it: the engine's scheduler and its max batch when an engine is named.
ProblemOnGpusFn Llama8bOnH100(std::vector<int>* requested = nullptr) {
  return [requested](int gpus, const std::string& engine) -> StatusOr<Problem> {
    if (requested != nullptr) requested->push_back(gpus);
    Problem p;
    p.model = *ModelPreset("llama-3.1-8b");
    auto c = MakeCluster("h100", gpus);
    if (!c.ok()) return c.status();
    p.cluster = *c;
    p.workload.mode = Mode::kServe;
    p.workload.isl = 1000;
    p.workload.osl = 200;
    if (!engine.empty()) {
      auto id = engine::ParseEngineId(engine);
      if (!id.ok()) return id.status();
      p.workload.engine = engine::SchedulerOf(*id);
      p.workload.max_batch = DefaultsOf(p.workload.engine).max_batch;
    }
    return p;
  };
}

CapacityRequest SmallRequest() {
  CapacityRequest r;
  r.problem_on_gpus = Llama8bOnH100();
  r.engine = "vllm";
  r.sizes_gpus = {1};
  r.search = "local";
  r.budget_calls = 200;
  r.layouts_per_size = 1;
  r.serving = Serving::kAgg;  // the aggregated sizing (the default sizes both)
  r.slos = *serve::ParseSlos("p99_ttft_ms=1000,p99_tpot_ms=30");
  serve::WorkloadSpec w;
  w.rate_rps = 40;
  w.num_requests = 800;
  w.isl = 1000;
  w.osl = 200;
  r.requests = *serve::GenerateRequests(w);
  return r;
}

TEST(CapacityLabels, LayoutLabelDropsTheAutoBatchAndKeepsMtp) {
  const ModelSpec m = *ModelPreset("llama-3.1-8b");
  Strategy s;
  s.tp = 2;
  EXPECT_EQ(LayoutLabel(m, s), "pp=1,tp=2,dp=1,ep=1,sp=off");
  s.mtp = 2;
  s.batch = 8;
  EXPECT_EQ(LayoutLabel(m, s), "pp=1,tp=2,dp=1,ep=1,batch=8,sp=off,mtp=2");
  Strategy d;
  EXPECT_EQ(DisaggLabel(m, d, s),
            "prefill [pp=1,tp=1,dp=1,ep=1,sp=off] | decode [pp=1,tp=2,dp=1,ep=1,batch=8,sp=off,mtp=2]");
}

TEST(CapacitySizes, DefaultSizesArePowersOfTwoUpTo64AndTheBudget) {
  EXPECT_EQ(DefaultInstanceSizes(4096), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(DefaultInstanceSizes(6), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(DefaultInstanceSizes(1), (std::vector<int>{1}));
}

// 1 + 1 GPUs share one 8-GPU NVLink domain (a pool of 2); 8 + 8 span two (a pool of 16, whole
// domains), so their KV moves over the scale-out network.
TEST(CapacityLink, PoolIsBothInstancesRoundedToWholeDomains) {
  std::vector<int> asked;
  auto near = KvLinkBetween(Llama8bOnH100(&asked), "", 1, 1);
  ASSERT_TRUE(near.ok()) << near.status().message();
  EXPECT_EQ(asked, (std::vector<int>{1, 2}));
  EXPECT_TRUE(near->nvlink);
  asked.clear();
  auto far = KvLinkBetween(Llama8bOnH100(&asked), "", 8, 8);
  ASSERT_TRUE(far.ok()) << far.status().message();
  EXPECT_EQ(asked, (std::vector<int>{8, 16}));
  EXPECT_FALSE(far->nvlink);
  asked.clear();
  ASSERT_TRUE(KvLinkBetween(Llama8bOnH100(&asked), "", 3, 2).ok());
  EXPECT_EQ(asked, (std::vector<int>{3, 5}));
}

TEST(CapacityRouter, FrontEndFollowsTheEngineLayer) {
  // Every engine of the capability table: round-robin exactly where the engine layer says its
  // front end takes instances in turn (the three Dynamo engines), least-loaded elsewhere.
  int round_robin = 0;
  for (const engine::Capabilities& c : engine::CapabilityTable()) {
    const serve::Assign a = FrontEndRouter(std::string(c.name));
    EXPECT_EQ(a == serve::Assign::kRoundRobin, c.round_robin_router) << c.name;
    round_robin += a == serve::Assign::kRoundRobin;
  }
  EXPECT_EQ(round_robin, 3);
  EXPECT_EQ(FrontEndRouter(""), serve::Assign::kShortestQueue);
  EXPECT_EQ(FrontEndRouter("no-such-engine"), serve::Assign::kShortestQueue);
  EXPECT_EQ(FrontEndRouter("dynamo-sglang"), serve::Assign::kRoundRobin);  // a spelling ParseEngineId takes
  // SizedServeOptions resolves only the engine default; an explicit router stays.
  serve::ServeOptions base;
  base.router = serve::Assign::kEngineDefault;
  EXPECT_EQ(SizedServeOptions(base, Engine::kTrtllm, "dynamo+trtllm").router,
            serve::Assign::kRoundRobin);
  EXPECT_EQ(SizedServeOptions(base, Engine::kTrtllm, "trtllm").router,
            serve::Assign::kShortestQueue);
  base.router = serve::Assign::kShortestQueue;
  EXPECT_EQ(SizedServeOptions(base, Engine::kTrtllm, "dynamo+trtllm").router,
            serve::Assign::kShortestQueue);
}

TEST(CapacityFewest, AnswerMeetsTheSlosAndOneInstanceFewerMisses) {
  const CapacityRequest req = SmallRequest();
  StatusOr<FewestOutcome> o = SizeFewest(req);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->engine, "vllm");
  EXPECT_TRUE(o->agg);
  EXPECT_FALSE(o->dres.has_value());
  ASSERT_TRUE(o->any_found);
  ASSERT_TRUE(o->res.found);
  ASSERT_EQ(o->res.candidates.size(), 1u);
  const serve::SizeResult& b = o->res.candidates[o->res.best];
  EXPECT_TRUE(b.meets);
  EXPECT_EQ(b.layout.strategy.gpus(), 1);
  EXPECT_EQ(b.gpus, b.instances * b.layout.strategy.gpus());
  EXPECT_EQ(o->gpus, b.gpus);
  EXPECT_DOUBLE_EQ(o->max_rps, b.instances * b.instance_max_rps);
  EXPECT_EQ(o->layout, std::to_string(b.instances) + " x [" + b.layout.label + "]");
  EXPECT_EQ(o->p0.model.name, "llama-3.1-8b");
  std::string why;
  EXPECT_TRUE(serve::MeetsSlos(b.at, req.slos, &why)) << why;
  // 40 req/s of 1000/200 tokens is more than one H100 serves within the SLOs.
  ASSERT_GT(b.instances, 1);
  ASSERT_TRUE(b.has_smaller);
  EXPECT_FALSE(serve::MeetsSlos(b.smaller, req.slos, &why));
  EXPECT_FALSE(b.smaller_why.empty());
}

// The disaggregated sizing pairs each role's sizes that carry the traffic on the fewest GPUs:
// ceil(rate / rps) x gpus, hand-derived here, not the most tokens/s per GPU.
TEST(CapacityFewest, RoleSizesAreChosenByTheGpusTheTrafficNeeds) {
  const std::vector<RoleSize> sizes = {{16, 10, 100}, {8, 6, 80}, {2, 1, 60}, {4, 0, 0}};
  // 5 req/s: 16 x 1 = 16, 8 x 1 = 8, 2 x 5 = 10, none.
  EXPECT_EQ(SizesForFewestGpus(sizes, 5, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(SizesForFewestGpus(sizes, 5, 2), (std::vector<int>{1, 2}));
  // 11 req/s: 16 x 2 = 32, 8 x 2 = 16, 2 x 11 = 22; the rate-less size last.
  EXPECT_EQ(SizesForFewestGpus(sizes, 11, 4), (std::vector<int>{1, 2, 0, 3}));
  // 20 req/s: 32, 8 x 4 = 32, 40: the tie goes to more tokens/s per GPU.
  EXPECT_EQ(SizesForFewestGpus(sizes, 20, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(SizesForFewestGpus(sizes, 5, 0).empty());
}

TEST(CapacityFewest, UsageErrorsAreStatuses) {
  CapacityRequest r = SmallRequest();
  r.slos.clear();
  EXPECT_FALSE(SizeFewest(r).ok());
  r = SmallRequest();
  r.search = "no-such-searcher";
  EXPECT_FALSE(SizeFewest(r).ok());
  r = SmallRequest();
  r.sizes_gpus = {1, 8192};
  EXPECT_FALSE(SizeFewest(r).ok());
  r = SmallRequest();
  for (serve::RequestSpec& q : r.requests) q.arrival_s = 0;  // all at once: no open-loop rate
  EXPECT_FALSE(SizeFewest(r).ok());
  r = SmallRequest();
  r.problem_on_gpus = nullptr;
  EXPECT_FALSE(SizeFewest(r).ok());
  EXPECT_FALSE(SizeFewestAllEngines(r).ok());
}

// A layout whose rank cannot hold the stream's largest request is refused it at every instance
// count, so an instance size offers the layouts that hold it: Llama-3.1-70B FP8 on 2 H100s with
// one 30,000-token prompt in the stream, where one GPU per rank (tp=1, dp=2: ~21k tokens of KV)
// does not. Against a slow reference: every other combination in OtherDegrees' order, kept when
// its StepCost's rank holds the request.
TEST(CapacityHolding, LayoutsThatCannotHoldTheLargestRequestGiveWay) {
  Problem p;
  p.model = *ModelPreset("llama-3.1-70b");
  p.cluster = *MakeCluster("h100", 2);
  p.workload.mode = Mode::kServe;
  p.workload.weight = DType::kFP8;  // a BF16 KV cache
  p.workload.isl = 4000;
  p.workload.osl = 500;
  p.workload.engine = Engine::kVllm;
  const Simulator sim(p);
  auto space = InstanceSpace(engine::EngineId::kVllm, p, 2, 0);
  ASSERT_TRUE(space.ok());
  const Strategy dp2 = *FromText("tp=1,dp=2", 2);
  std::vector<serve::RequestSpec> stream;
  for (int i = 0; i < 100; ++i) stream.push_back({0.05 * i, i == 42 ? 30000 : 4000, 500, 0});
  for (serve::PoolKind kind :
       {serve::PoolKind::kAggregated, serve::PoolKind::kPrefill, serve::PoolKind::kDecode}) {
    int64_t isl = 0, osl = 0, largest = 0;
    serve::MeanLengths(stream, &isl, &osl);
    auto holds = [&](const Strategy& s) {
      auto c = StepCost::Make(p, s);
      return c.ok() && serve::RankKvTokens(**c, kind, isl, osl) >=
                           (kind == serve::PoolKind::kPrefill ? 30000 : 30500);
    };
    ASSERT_FALSE(holds(dp2));
    const std::vector<Strategy> got = HoldingLayouts(sim, *space, p, dp2, kind, stream, 5, &largest);
    EXPECT_EQ(largest, kind == serve::PoolKind::kPrefill ? 30000 : 30500);
    std::vector<Strategy> want;
    for (const Strategy& o : OtherDegrees(sim, *space, dp2, 1 << 20))
      if (want.size() < 6 && holds(o)) want.push_back(o);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(got, want);
    // Without the long prompt the searcher's layout leads.
    std::vector<serve::RequestSpec> short_stream = stream;
    short_stream[42].prompt = 4000;
    const std::vector<Strategy> kept =
        HoldingLayouts(sim, *space, p, dp2, kind, short_stream, 1, &largest);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept.front(), dp2);
  }
}

}  // namespace
}  // namespace l2s::plan
