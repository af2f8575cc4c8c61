// Disaggregated serving in the request-level simulator (ServeSim::MakeDisagg): one request by
// hand on each engine (KV at the decode instance after prefill + KvTransferSeconds; the first
// token as the engine streams it: SGLang when the request joins the decode batch, TensorRT-LLM
// and vLLM after the first decode step), a full decode pool holding requests back by hand
// (TensorRT-LLM: the transfer waits for the decode KV; SGLang: the prefill waits for the
// pre-allocation), conservation of requests and tokens, determinism per seed, the decode pool's
// KV capacity binding, the transfer queue, option errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hw/hw.h"
#include "model/counts.h"
#include "model/presets.h"
#include "serve/bench_client.h"
#include "serve/capacity.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/step_cost.h"
#include "serve/workload.h"
#include "sim/disagg.h"
#include "strategy/strategy.h"

namespace l2s::serve {
namespace {

Problem MakeProblem(Engine engine, int gpus = 1) {
  Problem p;
  p.model = *ModelPreset("llama-3.1-8b");
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = Mode::kServe;
  p.workload.weight = DType::kBF16;
  p.workload.kv = DType::kBF16;
  p.workload.engine = engine;
  return p;
}

Strategy S(const std::string& text, int gpus) { return *FromText(text, gpus); }

struct Pools {
  std::unique_ptr<StepCost> prefill, decode;
};

Pools MakePools(Engine e) {
  Pools p;
  auto a = StepCost::Make(MakeProblem(e), S("tp=1", 1));
  auto b = StepCost::Make(MakeProblem(e), S("tp=1", 1));
  p.prefill = std::move(a.value());
  p.decode = std::move(b.value());
  return p;
}

DisaggServeOptions Link(double bw, double latency) {
  DisaggServeOptions d;
  d.link.bw = bw;
  d.link.latency = latency;
  return d;
}

// Seconds of the first n decode steps of a lone request with a `prompt`-token prompt: one
// sequence at KV length prompt + k in step k.
double DecodeStepsOfOne(ServeSim& sim, int prompt, int n) {
  double t = 0;
  for (int k = 0; k < n; ++k) {
    const RankShape r{1, static_cast<double>(prompt + k), 0, 0};
    t += sim.StepSeconds(r, r);
  }
  return t;
}

TEST(ServeDisagg, OneRequestByHand) {
  for (Engine e : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm}) {
    Pools c = MakePools(e);
    const DisaggServeOptions d = Link(50e9, 2e-6);
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{}, d, 1000, 10);
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    const ServeRun run = (*sim)->Run({RequestSpec{0.0, 1000, 10, 0}});
    ASSERT_EQ(run.requests.size(), 1u);
    const RequestOutcome& o = run.requests[0];
    ASSERT_TRUE(o.done());
    EXPECT_TRUE(run.disaggregated);
    // One prefill step of the whole 1,000-token prompt (within every engine's budget).
    const double prefill = (*sim)->PrefillStepSeconds({0, 0, 1000, 1}, {0, 0, 1000, 1});
    // KV of 1,000 tokens of llama-3.1-8b bf16: 2 x 32 layers x 8 heads x 128 x 2 bytes = 131,072
    // bytes per token; over 50 GB/s plus 2 us.
    EXPECT_DOUBLE_EQ(KvBytesForSequence(c.decode->sim().problem().model, DType::kBF16, 1000),
                     131072.0 * 1000);
    const double xfer = 131072.0 * 1000 / 50e9 + 2e-6;
    // The request reaches the engine after its request overhead (SGLang's; 0 for the others).
    const double h = c.prefill->sim().RequestOverheadS();
    EXPECT_EQ(h, Simulator::RequestOverheadSeconds(e));
    EXPECT_NEAR(o.engine_s, h, 1e-12);
    EXPECT_NEAR(o.prefill_end_s, h + prefill, 1e-12);
    EXPECT_NEAR(o.kv_ready_s, h + prefill + xfer, 1e-12);
    // Decode steps at KV length 1000 + k.
    const double step0 = DecodeStepsOfOne(**sim, 1000, 1);
    double decode = 0;
    if (e == Engine::kSglang) {
      // Streamed as it joins the decode batch; then 9 decode steps for the 9 other tokens.
      EXPECT_NEAR(o.ttft_s(), h + prefill + xfer, 1e-12);
      decode = DecodeStepsOfOne(**sim, 1000, 9);
      EXPECT_NEAR(o.tpot_s(), decode / 9, 1e-9);
    } else if (e == Engine::kTrtllm) {
      // The first decode step returns the context server's token and its own: 9 steps.
      EXPECT_NEAR(o.ttft_s(), prefill + xfer + step0, 1e-12);
      decode = DecodeStepsOfOne(**sim, 1000, 9);
      EXPECT_NEAR(o.tpot_s(), (decode - step0) / 9, 1e-9);
    } else {
      // vLLM: the decode instance computes all 10 tokens, the first after its first step.
      EXPECT_NEAR(o.ttft_s(), prefill + xfer + step0, 1e-12);
      decode = DecodeStepsOfOne(**sim, 1000, 10);
      EXPECT_NEAR(o.tpot_s(), (decode - step0) / 9, 1e-9);
    }
    EXPECT_NEAR(o.e2e_s(), h + prefill + xfer + decode, 1e-9);
    EXPECT_EQ(o.preemptions, 0);
    const ServeSummary s = Summarise(run, {});
    EXPECT_NEAR(s.kv_transfer.mean, xfer, 1e-12);
  }
}

TEST(ServeDisagg, SingleTokenOutputFinishesAtPrefill) {
  Pools c = MakePools(Engine::kVllm);
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{},
                                  Link(50e9, 0), 500, 1);
  ASSERT_TRUE(sim.ok());
  const ServeRun run = (*sim)->Run({RequestSpec{0.0, 500, 1, 0}});
  ASSERT_TRUE(run.requests[0].done());
  EXPECT_EQ(run.requests[0].finish_s, run.requests[0].first_token_s);
  EXPECT_LT(run.requests[0].kv_ready_s, 0);  // nothing to decode: no transfer
}

TEST(ServeDisagg, ConservationEveryRequestOnceEveryToken) {
  for (Engine e : {Engine::kVllm, Engine::kSglang, Engine::kTrtllm, Engine::kIdeal}) {
    Pools c = MakePools(e);
    DisaggServeOptions d = Link(25e9, 1e-5);
    d.prefill_instances = 2;
    ServeOptions o;
    o.instances = 3;
    o.kv_capacity_tokens = 40'000;  // tight enough to queue and (vLLM, SGLang) preempt
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 1500, 300);
    ASSERT_TRUE(sim.ok());
    WorkloadSpec w;
    w.rate_rps = 15;
    w.num_requests = 300;
    w.isl = 1500;
    w.osl = 300;
    w.isl_dist = *ParseLengthDist("uniform:0.5");
    w.osl_dist = *ParseLengthDist("uniform:0.5");
    const auto reqs = *GenerateRequests(w);
    const ServeRun run = (*sim)->Run(reqs);
    int64_t tokens_after_first = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const RequestOutcome& r = run.requests[i];
      ASSERT_TRUE(r.done()) << EngineName(e) << " request " << i;
      EXPECT_GT(r.prefill_end_s, r.arrival_s);
      EXPECT_GE(r.kv_ready_s, r.prefill_end_s);
      EXPECT_GE(r.first_token_s, r.kv_ready_s);
      EXPECT_GT(r.finish_s, r.first_token_s);
      // TensorRT-LLM streams its first two tokens together (one emission).
      tokens_after_first += r.output - (e == Engine::kTrtllm ? 2 : 1);
    }
    // One inter-token gap per emission after the first, preempted (recomputed) requests included.
    EXPECT_DOUBLE_EQ(run.itl.Count(), static_cast<double>(tokens_after_first)) << EngineName(e);
    EXPECT_TRUE(run.finished);
    const ServeSummary s = Summarise(run, {});
    EXPECT_EQ(s.completed, 300);
    EXPECT_GT(s.prefill_busy, 0);
    EXPECT_LE(s.prefill_busy, 1 + 1e-9);
    EXPECT_GT(s.decode_busy, 0);
    EXPECT_LE(s.decode_busy, 1 + 1e-9);
  }
}

TEST(ServeDisagg, DeterministicPerSeed) {
  Pools c = MakePools(Engine::kSglang);
  DisaggServeOptions d = Link(25e9, 1e-5);
  d.prefill_instances = 2;
  ServeOptions o;
  o.instances = 2;
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 2000, 200);
  ASSERT_TRUE(sim.ok());
  WorkloadSpec w;
  w.rate_rps = 10;
  w.num_requests = 200;
  w.isl = 2000;
  w.osl = 200;
  w.isl_dist = *ParseLengthDist("lognormal:0.5");
  const ServeRun a = (*sim)->Run(*GenerateRequests(w));
  const ServeRun b = (*sim)->Run(*GenerateRequests(w));
  w.seed = 2;
  const ServeRun other = (*sim)->Run(*GenerateRequests(w));
  ASSERT_EQ(a.requests.size(), b.requests.size());
  bool differs = false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token_s, b.requests[i].first_token_s);
    EXPECT_EQ(a.requests[i].kv_ready_s, b.requests[i].kv_ready_s);
    EXPECT_EQ(a.requests[i].finish_s, b.requests[i].finish_s);
    differs |= a.requests[i].finish_s != other.requests[i].finish_s;
  }
  EXPECT_TRUE(differs);
}

TEST(ServeDisagg, DecodeKvCapacityBinds) {
  // TensorRT-LLM admits a request on the decode instance only when KV for its whole prompt +
  // output is free: with room for 3 of 10 requests of 100 + 50 tokens, decoding comes in waves.
  Pools c = MakePools(Engine::kTrtllm);
  std::vector<RequestSpec> reqs(10, RequestSpec{0.0, 100, 50, 0});
  const double one_step = [&] {
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{},
                                    Link(1e12, 0), 100, 50);
    const RankShape r{1, 100, 0, 0};
    return (*sim)->StepSeconds(r, r);
  }();
  auto finishes = [&](int64_t cap) {
    ServeOptions o;
    o.kv_capacity_tokens = cap;
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, Link(1e12, 0), 100, 50);
    EXPECT_TRUE(sim.ok());
    const ServeRun run = (*sim)->Run(reqs);
    std::vector<double> f;
    for (const RequestOutcome& r : run.requests) {
      EXPECT_TRUE(r.done());
      f.push_back(r.finish_s);
    }
    std::sort(f.begin(), f.end());
    return f;
  };
  const std::vector<double> tight = finishes(3 * 150);
  // The 4th request starts decoding only when one of the first 3 has finished its 49 steps.
  EXPECT_GE(tight[3] - tight[0], 49 * one_step);
  EXPECT_GE(tight[9] - tight[0], 3 * 49 * one_step);  // 4 waves: 3, 3, 3, 1
  // With room for all, the prefills (and their arrivals at the decode pool) spread them less
  // than one request's decode.
  const std::vector<double> roomy = finishes(100'000);
  EXPECT_LT(roomy[9] - roomy[0], 49 * one_step);
}

TEST(ServeDisagg, FullDecodePoolHoldsTheTransferBackTrtllm) {
  // TensorRT-LLM: decode KV for one request of 100 + 50 tokens, two requests at 0. Both prefill
  // in one step; the second's transfer starts only when the first has finished its 49 decode
  // steps and freed its reserve: TTFT2 = TTFT1 + those 49 steps + one transfer.
  Pools c = MakePools(Engine::kTrtllm);
  ServeOptions o;
  o.kv_capacity_tokens = 150;
  DisaggServeOptions d = Link(50e9, 0);
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 100, 50);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const ServeRun run = (*sim)->Run(std::vector<RequestSpec>(2, RequestSpec{0.0, 100, 50, 0}));
  const double prefill = (*sim)->PrefillStepSeconds({0, 0, 200, 2}, {0, 0, 200, 2});
  const double xfer = 131072.0 * 100 / 50e9;
  const double steps49 = DecodeStepsOfOne(**sim, 100, 49);
  const RequestOutcome& a = run.requests[0];
  const RequestOutcome& b = run.requests[1];
  ASSERT_TRUE(a.done() && b.done());
  EXPECT_NEAR(a.prefill_end_s, prefill, 1e-12);
  EXPECT_NEAR(b.prefill_end_s, prefill, 1e-12);
  EXPECT_NEAR(a.ttft_s(), prefill + xfer + DecodeStepsOfOne(**sim, 100, 1), 1e-12);
  EXPECT_NEAR(a.finish_s, prefill + xfer + steps49, 1e-9);
  EXPECT_NEAR(b.kv_ready_s, a.finish_s + xfer, 1e-9);
  EXPECT_NEAR(b.ttft_s(), a.ttft_s() + steps49 + xfer, 1e-9);
  // The wait shows in the transfer figure: queue (the allocation) + link.
  const ServeSummary s = Summarise(run, {});
  // (the second: from the prefill's end to the first's finish, P + xfer + 49 steps, + xfer).
  EXPECT_NEAR(s.kv_transfer.mean, (xfer + (steps49 + 2 * xfer)) / 2, 1e-9);
  EXPECT_NEAR(s.decode_alloc_wait.mean, (0 + (steps49 + xfer)) / 2, 1e-9);
  // With room for both, both transfers start at the prefill's end (one link: one after the other).
  o.kv_capacity_tokens = 300;
  auto roomy = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 100, 50);
  const ServeRun r2 = (*roomy)->Run(std::vector<RequestSpec>(2, RequestSpec{0.0, 100, 50, 0}));
  EXPECT_NEAR(r2.requests[1].kv_ready_s, prefill + 2 * xfer, 1e-12);
}

TEST(ServeDisagg, FullDecodePoolHoldsThePrefillBackSglang) {
  // SGLang pre-allocates decode KV before the prefill: prompt + 512 reserved tokens, less 512 per
  // request held. A 700-token pool takes one request of 100 + 50 tokens; the second's prefill
  // starts only when the first has finished: TTFT2 = 2 (prefill + transfer) + the first's 49
  // decode steps (SGLang streams the first token as the request joins the decode batch).
  Pools c = MakePools(Engine::kSglang);
  ServeOptions o;
  o.kv_capacity_tokens = 700;
  DisaggServeOptions d = Link(50e9, 0);
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 100, 50);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const ServeRun run = (*sim)->Run(std::vector<RequestSpec>(2, RequestSpec{0.0, 100, 50, 0}));
  const double prefill = (*sim)->PrefillStepSeconds({0, 0, 100, 1}, {0, 0, 100, 1});
  const double xfer = 131072.0 * 100 / 50e9;
  const double steps49 = DecodeStepsOfOne(**sim, 100, 49);
  const RequestOutcome& a = run.requests[0];
  const RequestOutcome& b = run.requests[1];
  ASSERT_TRUE(a.done() && b.done());
  // Both reach the engine after SGLang's request overhead h.
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  EXPECT_NEAR(a.ttft_s(), h + prefill + xfer, 1e-12);
  EXPECT_NEAR(a.finish_s, h + prefill + xfer + steps49, 1e-9);
  EXPECT_NEAR(b.prefill_end_s, a.finish_s + prefill, 1e-9);
  EXPECT_NEAR(b.ttft_s(), h + 2 * (prefill + xfer) + steps49, 1e-9);
  EXPECT_NEAR(b.kv_alloc_s, a.finish_s, 1e-9);
  // Waits from reaching the engine: 0 for the first, until the first's finish for the second.
  EXPECT_NEAR(Summarise(run, {}).decode_alloc_wait.mean, (a.finish_s - h) / 2, 1e-9);
  // A pool with room for both (2 x (100 + 512) + 512 reserve for the first): both prefill at once.
  o.kv_capacity_tokens = 2000;
  auto roomy = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 100, 50);
  const ServeRun r2 = (*roomy)->Run(std::vector<RequestSpec>(2, RequestSpec{0.0, 100, 50, 0}));
  const double prefill2 = (*roomy)->PrefillStepSeconds({0, 0, 200, 2}, {0, 0, 200, 2});
  EXPECT_NEAR(r2.requests[1].prefill_end_s, h + prefill2, 1e-12);
}

TEST(ServeDisagg, RecvIntervalHoldsTheDecodePreallocation) {
  // SGLang P/D with --scheduler-recv-interval R: the decode server takes a new request (and
  // pre-allocates its KV) only at a receive point. Request A joins the decode batch at its first
  // token T (the decode server was idle: it received A at once) and decodes alone; B reaches the
  // engine halfway through A's second decode step. R = 1: B's KV is allocated at the end of that
  // step; R = 4: after A's fourth step (the counter grows by one per decode step).
  Pools c = MakePools(Engine::kSglang);
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  for (int R : {1, 4}) {
    ServeOptions o;
    o.sglang_recv_interval = R;
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, Link(50e9, 0), 100, 50);
    ASSERT_TRUE(sim.ok()) << sim.status().message();
    const double T = (*sim)->Run({RequestSpec{0.0, 100, 50, 0}}).requests[0].first_token_s;
    const double b_engine = T + DecodeStepsOfOne(**sim, 100, 1) +
                            DecodeStepsOfOne(**sim, 101, 1) / 2;
    const ServeRun run =
        (*sim)->Run({RequestSpec{0.0, 100, 50, 0}, RequestSpec{b_engine - h, 100, 50, 0}});
    ASSERT_TRUE(run.requests[1].done());
    EXPECT_NEAR(run.requests[0].first_token_s, T, 1e-12);
    EXPECT_NEAR(run.requests[1].kv_alloc_s, T + DecodeStepsOfOne(**sim, 100, R == 1 ? 2 : 4),
                1e-9)
        << "R " << R;
  }
}

TEST(ServeDisagg, TtftStopStaysExactWithDecodeBackPressure) {
  // The first token now comes from the decode instance, after its KV allocation: the early stop
  // (ServeOptions::ttft_stops) must still fire only when the percentile is certainly above its
  // limit. A limit just above the full run's p99 leaves the run unchanged; one at half of it
  // stops early.
  for (Engine e : {Engine::kSglang, Engine::kTrtllm, Engine::kVllm}) {
    Pools c = MakePools(e);
    WorkloadSpec w;
    w.rate_rps = 40;
    w.num_requests = 400;
    w.isl = 1000;
    w.osl = 100;
    const auto reqs = *GenerateRequests(w);
    auto run_with = [&](std::vector<ServeOptions::TtftStop> stops) {
      ServeOptions o;
      o.kv_capacity_tokens = 20'000;  // the decode pool holds requests back
      o.ttft_stops = std::move(stops);
      auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, Link(25e9, 1e-5), 1000,
                                      100);
      EXPECT_TRUE(sim.ok());
      return (*sim)->Run(reqs);
    };
    const ServeRun full = run_with({});
    // Every request finishes (a rank whose KV is held by arrived requests behind a preempted one
    // must not stall).
    ASSERT_EQ(Summarise(full, {}).completed, 400) << EngineName(e) << ": " << full.unstable_reason;
    const double p99 = Summarise(full, {}).ttft.p99;
    const ServeRun hi = run_with({{p99 * 1.01, 0.99}});
    EXPECT_EQ(hi.steps, full.steps) << EngineName(e);
    EXPECT_EQ(hi.unstable_reason, full.unstable_reason) << EngineName(e);
    for (size_t i = 0; i < reqs.size(); ++i)
      EXPECT_EQ(hi.requests[i].first_token_s, full.requests[i].first_token_s) << i;
    const ServeRun lo = run_with({{p99 * 0.5, 0.99}});
    EXPECT_TRUE(lo.unstable) << EngineName(e);
    EXPECT_EQ(lo.unstable_reason.rfind("stopped early", 0), 0u) << lo.unstable_reason;
    EXPECT_LT(lo.steps, full.steps) << EngineName(e);
  }
}

TEST(ServeDisagg, TransferQueueIsFifoPerDecodeInstance) {
  // A slow link, one channel: 4 requests whose prefills end together leave one after the other.
  Pools c = MakePools(Engine::kVllm);
  DisaggServeOptions d = Link(1e9, 0);
  d.kv_channels = 1;
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{}, d, 1000, 4);
  ASSERT_TRUE(sim.ok());
  const ServeRun run = (*sim)->Run(std::vector<RequestSpec>(4, RequestSpec{0.0, 1000, 4, 0}));
  const double xfer = 131072.0 * 1000 / 1e9;
  std::vector<double> ready;
  for (const RequestOutcome& r : run.requests) {
    EXPECT_EQ(r.prefill_end_s, run.requests[0].prefill_end_s);  // one prefill step of 4 prompts
    ready.push_back(r.kv_ready_s);
  }
  std::sort(ready.begin(), ready.end());
  for (int k = 0; k < 4; ++k)
    EXPECT_NEAR(ready[k], run.requests[0].prefill_end_s + (k + 1) * xfer, 1e-12) << k;
  // Two channels: two at a time.
  d.kv_channels = 2;
  auto sim2 = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{}, d, 1000, 4);
  const ServeRun run2 = (*sim2)->Run(std::vector<RequestSpec>(4, RequestSpec{0.0, 1000, 4, 0}));
  double latest = 0;
  for (const RequestOutcome& r : run2.requests) latest = std::max(latest, r.kv_ready_s);
  EXPECT_NEAR(latest, run2.requests[0].prefill_end_s + 2 * xfer, 1e-12);
}

TEST(ServeDisagg, LayerwiseHidesTheTransferBehindThePrefill) {
  Pools c = MakePools(Engine::kVllm);
  DisaggServeOptions d = Link(50e9, 0);
  d.layerwise = true;
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{}, d, 1000, 2);
  const ServeRun run = (*sim)->Run({RequestSpec{0.0, 1000, 2, 0}});
  const RequestOutcome& o = run.requests[0];
  const double xfer = 131072.0 * 1000 / 50e9;
  EXPECT_NEAR(o.kv_ready_s - o.prefill_end_s,
              ExposedKvTransfer(xfer, o.prefill_end_s - o.arrival_s, 32, true), 1e-12);
  EXPECT_LT(o.kv_ready_s - o.prefill_end_s, xfer);
}

TEST(ServeDisagg, OptionErrors) {
  Pools c = MakePools(Engine::kVllm);
  auto bad = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{},
                                  DisaggServeOptions{}, 1000, 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "serve: the KV link needs a positive bandwidth");
  DisaggServeOptions d = Link(1e9, 0);
  d.prefill_instances = 0;
  auto bad2 = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{}, d, 1000, 100);
  ASSERT_FALSE(bad2.ok());
  EXPECT_EQ(bad2.status().message(), "serve: prefill instances must be in [1, 10^6]");
  auto other = StepCost::Make(MakeProblem(Engine::kSglang), S("tp=1", 1));
  auto bad3 = ServeSim::MakeDisagg(other->get(), c.decode.get(), ServeOptions{}, Link(1e9, 0),
                                   1000, 100);
  ASSERT_FALSE(bad3.ok());
  EXPECT_EQ(bad3.status().message(), "serve: the prefill and decode pools run different engines");
}

TEST(ServeDisagg, BenchmarkClientMeansOverAllPrompts) {
  BenchClientSpec spec;
  spec.concurrency = 4;
  spec.isl = 1000;
  spec.osl = 100;
  const Problem p = MakeProblem(Engine::kSglang);
  auto r = SimulateDisaggBenchmarkClient(p, S("tp=1", 1), p, S("tp=1", 1), Link(25e9, 1e-5),
                                         spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->summary.completed, 40);
  EXPECT_TRUE(r->summary.disaggregated);
  EXPECT_GT(r->mean_ttft_s, 0);
  EXPECT_GT(r->mean_tpot_s, 0);
}

// A request larger than a rank's KV is refused at every instance count: a prompt over a prefill
// rank's, a prompt + output over a decode rank's. The pools are sized by RankKvTokens (the same
// figures a run reports), Refused counts and names the pool, a run says the same, and sizing a
// pair that refuses some of its stream simulates nothing (it once grew the pools to 4,096 GPUs).
TEST(ServeDisagg, RequestsLargerThanARankAreRefusedAtEveryPoolSize) {
  Pools c = MakePools(Engine::kVllm);
  {
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), ServeOptions{},
                                    Link(50e9, 2e-6), 3000, 300);
    ASSERT_TRUE(sim.ok());
    const ServeRun r = (*sim)->Run({{0, 3000, 300, 0}});
    EXPECT_EQ(r.prefill_kv_capacity_tokens,
              RankKvTokens(*c.prefill, PoolKind::kPrefill, 3000, 300));
    EXPECT_EQ(r.kv_capacity_tokens, RankKvTokens(*c.decode, PoolKind::kDecode, 3000, 300));
  }
  ServeOptions o;
  o.kv_capacity_tokens = 8000;  // decode rank
  DisaggServeOptions d = Link(50e9, 2e-6);
  d.prefill_kv_capacity_tokens = 5000;
  auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, 4000, 100);
  ASSERT_TRUE(sim.ok());
  const std::vector<RequestSpec> fits = {{0, 5000, 3000, 0}, {1, 4000, 4000, 0}};
  const std::vector<RequestSpec> mixed = {
      {0, 4000, 100, 0}, {1, 5001, 10, 0}, {2, 4000, 4001, 0}, {3, 100, 100, 0}};
  const std::vector<RequestSpec> prompts = {{0, 6000, 10, 0}, {1, 9000, 10, 0}};
  std::string why;
  EXPECT_EQ((*sim)->Refused(fits, &why), 0);
  EXPECT_EQ(why, "");
  EXPECT_EQ((*sim)->Refused(mixed, &why), 2);
  EXPECT_EQ(why,
            "2 requests need more KV than one prefill or decode rank holds (5000 tokens): the "
            "engine rejects them");
  EXPECT_EQ((*sim)->Refused(prompts, &why), 2);
  EXPECT_EQ(why, "2 prompts need more KV than one prefill rank holds (5000 tokens): the engine "
                 "rejects them");
  EXPECT_EQ((*sim)->Refused({{0, 100, 7901, 0}}, &why), 1);
  EXPECT_EQ(why, "1 requests need more KV than one decode rank holds (8000 tokens): the engine "
                 "rejects them");
  const ServeRun r = (*sim)->Run(mixed);
  EXPECT_TRUE(r.unstable);
  EXPECT_EQ(r.unstable_reason,
            "2 requests need more KV than one prefill or decode rank holds (5000 tokens): the "
            "engine rejects them");

  // Sizing: a 3-million-token prompt is more than an H100 rank of Llama-8B holds.
  DisaggLayoutOption lay;
  lay.prefill_problem = lay.decode_problem = MakeProblem(Engine::kVllm);
  lay.prefill = lay.decode = S("tp=1", 1);
  lay.link = d.link;
  std::vector<RequestSpec> stream;
  for (int i = 0; i < 50; ++i) stream.push_back({0.1 * i, i == 7 ? 3'000'000 : 1000, 100, 0});
  const Slo ttft{Metric::kTtft, Stat::kP99, 2000};
  auto res = FewestGpusDisagg({lay}, stream, {ttft}, CapacityOptions{});
  ASSERT_TRUE(res.ok()) << res.status().message();
  ASSERT_EQ(res->candidates.size(), 1u);
  EXPECT_FALSE(res->found);
  EXPECT_EQ(res->candidates[0].simulations, 0);
  EXPECT_NE(res->candidates[0].note.find("1 prompts need more KV than one prefill rank holds"),
            std::string::npos)
      << res->candidates[0].note;
  EXPECT_NE(res->candidates[0].note.find("at every pool size"), std::string::npos);
  // Without it the same pair is sized.
  stream[7].prompt = 1000;
  res = FewestGpusDisagg({lay}, stream, {ttft}, CapacityOptions{});
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->found);
}

// A TTFT percentile that requests miss even alone on idle instances is missed at every pool size:
// the pair is not grown (it was, one instance per simulation up to --max-gpus: a thousand
// simulations). Llama-8B on one H100 prefills 30,000 tokens in well over 100 ms; 2 of 50 such
// prompts put the p99 above it, 1 of 100 (the others 1,000 tokens) does not: that p99 interpolates
// between a short and a long prompt. And no pair grows past bound_gpus (an answer found already).
TEST(ServeDisagg, SizingStopsWhereNoPoolSizeCanMeetTheSlos) {
  const DisaggServeOptions d = Link(50e9, 2e-6);
  DisaggLayoutOption lay;
  lay.prefill_problem = lay.decode_problem = MakeProblem(Engine::kVllm);
  lay.prefill = lay.decode = S("tp=1", 1);
  lay.link = d.link;
  const Slo ttft{Metric::kTtft, Stat::kP99, 100};
  std::vector<RequestSpec> stream;
  for (int i = 0; i < 50; ++i) stream.push_back({0.1 * i, i == 7 || i == 9 ? 30'000 : 1000, 100, 0});
  auto res = FewestGpusDisagg({lay}, stream, {ttft}, CapacityOptions{});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_FALSE(res->found);
  EXPECT_EQ(res->candidates[0].simulations, 0);
  EXPECT_NE(res->candidates[0].note.find("with every request alone on idle instances"),
            std::string::npos)
      << res->candidates[0].note;
  // One long prompt in 100: p99 = 1% of the way from the 99th to the 100th value; not a proof
  // that no size meets, so the pair is simulated (and, bounded at 4 GPUs, stops there).
  stream.clear();
  for (int i = 0; i < 100; ++i) stream.push_back({0.1 * i, i == 7 ? 30'000 : 1000, 100, 0});
  CapacityOptions bounded;
  bounded.bound_gpus = 4;
  res = FewestGpusDisagg({lay}, stream, {ttft}, bounded);
  ASSERT_TRUE(res.ok());
  const DisaggSizeResult& c = res->candidates[0];
  EXPECT_GT(c.simulations, 0);
  EXPECT_EQ(c.note.find("alone on idle instances"), std::string::npos) << c.note;
  if (c.meets) EXPECT_LE(c.gpus, 4);
  else EXPECT_NE(c.note.find("more would exceed the 4 GPUs of the aggregated answer"),
                 std::string::npos)
      << c.note;
}

// Where an overloaded pair's queue builds, at the last arrival (ServeRun::prefill_queued /
// decode_queued, which capacity sizing grows the pool by): 8,000-token prompts of 4 tokens each
// at 20 req/s queue for the one prefill instance (~16k prompt tokens/s per H100 on Llama-8B);
// 100-token prompts of 2,000 tokens each, 4 running at most on the decode instance, queue there.
TEST(ServeDisagg, TheOverloadedPoolHoldsTheQueue) {
  Pools c = MakePools(Engine::kVllm);
  const DisaggServeOptions d = Link(50e9, 2e-6);
  auto run = [&](const ServeOptions& o, int64_t isl, int64_t osl, double rate) {
    auto sim = ServeSim::MakeDisagg(c.prefill.get(), c.decode.get(), o, d, isl, osl);
    EXPECT_TRUE(sim.ok());
    WorkloadSpec w;
    w.rate_rps = rate;
    w.num_requests = 400;
    w.isl = isl;
    w.osl = osl;
    return (*sim)->Run(*GenerateRequests(w));
  };
  const ServeRun prefill_bound = run(ServeOptions{}, 8000, 4, 20);
  EXPECT_GT(prefill_bound.prefill_queued, 100);
  EXPECT_LT(prefill_bound.decode_queued, 10);
  ServeOptions four;
  four.max_running = 4;
  const ServeRun decode_bound = run(four, 100, 2000, 20);
  EXPECT_GT(decode_bound.decode_queued, 100);
  EXPECT_LT(decode_bound.prefill_queued, 10);
  const ServeSummary s = Summarise(decode_bound, {});
  EXPECT_EQ(s.decode_queued, decode_bound.decode_queued);
  EXPECT_EQ(SummaryJson(s)["decode_queued"], decode_bound.decode_queued);
  EXPECT_EQ(SummaryJson(s)["prefill_queued"], decode_bound.prefill_queued);
}

}  // namespace
}  // namespace l2s::serve
