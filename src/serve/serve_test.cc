// Request-level serving simulator: the step cost against the Simulator, closed forms of queueing
// (M/D/1, Little's law), the unloaded TTFT, instability above capacity, schedulers' invariants,
// determinism, workloads and SLO parsing.
#include <gtest/gtest.h>

#include <cstdio>

#include <cmath>

#include "hw/hw.h"
#include "model/presets.h"
#include "serve/bench_client.h"
#include "serve/capacity.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/step_cost.h"
#include "serve/workload.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::serve {
namespace {

Problem MakeProblem(const std::string& model, int gpus, Engine engine = Engine::kVllm,
                    DType weight = DType::kBF16) {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = Mode::kServe;
  p.workload.weight = weight;
  p.workload.kv = weight == DType::kBF16 ? DType::kBF16 : DType::kFP8;
  p.workload.engine = engine;
  return p;
}

Strategy S(const std::string& text, int gpus) { return *FromText(text, gpus); }

// ---- step cost against the Simulator ----

// The Simulator's prefill of `batch` prompts of `isl` tokens on `p`'s cluster.
Evaluation PrefillEvaluation(const Problem& p, const Strategy& s, int64_t isl, int batch) {
  Problem f = p;
  f.workload.mode = Mode::kPrefill;
  f.workload.isl = isl;
  return Simulator(f).EvaluateAtBatch(s, batch);
}

TEST(StepCost, DecodeStepEqualsSimulatorDecodeMode) {
  struct Case {
    std::string model, strategy;
    int gpus;
    DType w;
  };
  const Case cases[] = {{"llama-3.1-8b", "tp=1", 1, DType::kBF16},
                        {"llama-3.1-70b", "tp=4", 4, DType::kFP8},
                        {"llama-3.1-70b", "tp=2,pp=2", 4, DType::kFP8},
                        {"deepseek-v3", "tp=1,dp=16,ep=16", 16, DType::kFP8},
                        {"deepseek-v3", "tp=1,dp=16,ep=16,overlap=tbo", 16, DType::kFP8},
                        {"deepseek-v3", "tp=1,dp=16,ep=16,mtp=2", 16, DType::kFP8}};
  for (const Case& c : cases) {
    Problem p = MakeProblem(c.model, c.gpus, Engine::kIdeal, c.w);
    const Strategy s = S(c.strategy, c.gpus);
    auto cost = StepCost::Make(p, s);
    ASSERT_TRUE(cost.ok()) << c.strategy << ": " << cost.status().message();
    for (int batch : {1, 7, 64}) {
      for (int64_t ctx : {512, 5000}) {
        Problem d = p;
        d.workload.mode = Mode::kDecode;
        d.workload.context = ctx;
        const Simulator sim(d);
        const Evaluation e = sim.EvaluateAtBatch(s, batch);
        ASSERT_NE(e.verdict, Verdict::kStructure) << c.strategy;
        // pp microbatches of `batch` sequences each: one step of pp x batch per rank.
        RankShape r{static_cast<double>(batch * s.pp), static_cast<double>(ctx), 0, 0};
        const double want = e.stage_s * s.pp;
        EXPECT_NEAR((*cost)->Seconds(r), want, 1e-9 * want) << c.strategy << " b=" << batch;
      }
    }
  }
}

TEST(StepCost, PrefillStepEqualsSimulatorPrefillMode) {
  for (const char* text : {"tp=1", "tp=2"}) {
    Problem p = MakeProblem("llama-3.1-8b", 2, Engine::kIdeal);
    if (std::string(text) == "tp=1") p.cluster = *MakeCluster("h100", 1);
    const Strategy s = S(text, p.cluster.num_gpus);
    auto cost = StepCost::Make(p, s);
    ASSERT_TRUE(cost.ok());
    for (int64_t isl : {100, 3000}) {
      const Evaluation e = PrefillEvaluation(p, s, isl, 2);
      RankShape r{0, 0, 2.0 * isl, 2};
      EXPECT_NEAR((*cost)->Seconds(r), e.ttft_s, 1e-9 * e.ttft_s) << text << " isl " << isl;
    }
  }
}

// Pipeline microbatches: a prompt chunk runs whole in one microbatch, so its latency (its
// prompt's next token) is pp x the stage time of a microbatch holding it - the Simulator's prefill
// of batch 1, about the one-GPU prefill - while the step (the round, when the next step starts)
// carries the stages' work of the chunks spread over the microbatches. Split over them, a lone
// 2,000-token prompt's token came in half that time on pp = 2, and capacity sizing took pipelines
// for TTFT (Llama-3.1-8B at p99 TTFT 50 ms: pp = 4 at 15 ms). A lone decoding sequence is whole
// in one microbatch.
TEST(StepCost, PipelineMicrobatchesHoldWholePromptsAndSequences) {
  Problem p = MakeProblem("llama-3.1-8b", 2, Engine::kIdeal);
  const Strategy s = S("pp=2,tp=1", 2);
  auto cost = StepCost::Make(p, s);
  ASSERT_TRUE(cost.ok());
  Problem one = p;
  one.cluster = *MakeCluster("h100", 1);
  auto cost1 = StepCost::Make(one, S("tp=1", 1));
  ASSERT_TRUE(cost1.ok());
  for (int64_t isl : {100, 2000}) {
    const Evaluation e = PrefillEvaluation(p, s, isl, 1);
    const double want = e.stage_s * s.pp;
    const RankShape prompt{0, 0, static_cast<double>(isl), 1};
    const StepCost::Times lone = (*cost)->StepTimes(prompt, prompt);
    EXPECT_NEAR(lone.chunk_latency_s, want, 1e-9 * want) << isl;
    // The round: the two stages' work of one prompt, half of it in each microbatch; well below
    // the latency where the prompt's compute dominates (2,000 tokens; 100 read the weights).
    EXPECT_LE(lone.round_s, lone.chunk_latency_s) << isl;
    if (isl == 2000) {
      EXPECT_LT(lone.round_s, 0.75 * lone.chunk_latency_s);
    }
    // pp prompts, one per microbatch: the round is the lone prompt's latency.
    const RankShape two{0, 0, 2.0 * isl, 2};
    EXPECT_NEAR((*cost)->StepTimes(two, two).round_s, want, 1e-9 * want) << isl;
    // Two stages of half the layers each: the one-GPU prefill, give or take the hand-off and
    // the embedding / LM head on one stage (each under 10% here).
    const double gpu1 = (*cost1)->Seconds(prompt);
    EXPECT_GT(lone.chunk_latency_s, 0.9 * gpu1) << isl;
    EXPECT_LT(lone.chunk_latency_s, 1.2 * gpu1) << isl;
    // pp = 1: no pipeline, the latency is the step.
    const StepCost::Times t1 = (*cost1)->StepTimes(RankShape{8, 3000, static_cast<double>(isl), 1},
                                                   RankShape{8, 3000, static_cast<double>(isl), 1});
    EXPECT_EQ(t1.chunk_latency_s, t1.round_s);
  }
  Problem d = p;
  d.workload.mode = Mode::kDecode;
  d.workload.context = 5000;
  const Evaluation e = Simulator(d).EvaluateAtBatch(s, 1);
  const StepCost::Times dec = (*cost)->StepTimes(RankShape{1, 5000, 0, 0}, RankShape{1, 5000, 0, 0});
  EXPECT_NEAR(dec.round_s, e.stage_s * s.pp, 1e-9 * e.stage_s);
  EXPECT_EQ(dec.chunk_latency_s, dec.round_s);
}

TEST(StepCost, BusiestRankSetsPerRankWork) {
  // Attention-DP: one rank with all the prefill costs more than the same tokens spread evenly,
  // and less than every rank carrying that much.
  Problem p = MakeProblem("deepseek-v3", 16, Engine::kSglang, DType::kFP8);
  auto cost = StepCost::Make(p, S("tp=1,dp=16,ep=16", 16));
  ASSERT_TRUE(cost.ok());
  const RankShape heavy{8, 2000, 4096, 1}, light{8, 2000, 0, 0};
  RankShape mean = light;
  mean.prefill_tokens = 4096.0 / 16;
  mean.prefill_seqs = 1.0 / 16;
  const double skew = (*cost)->Seconds(heavy, mean);
  EXPECT_GT(skew, (*cost)->Seconds(mean, mean));
  EXPECT_LT(skew, (*cost)->Seconds(heavy, heavy));
}

TEST(StepCost, KvCapacityByHand) {
  // llama-3.1-8b bf16 on one H100: KV per token = 2 (K,V) x 32 layers x 8 kv heads x 128 dims x
  // 2 bytes = 131,072 bytes; the pool is what weights, activations and the reserve leave.
  Problem p = MakeProblem("llama-3.1-8b", 1);
  auto cost = StepCost::Make(p, S("tp=1", 1));
  ASSERT_TRUE(cost.ok());
  const int64_t cap = (*cost)->KvCapacityTokens(2048, 1024);
  Problem d = p;
  d.workload.mode = Mode::kDecode;
  d.workload.context = 2048;
  const Evaluation e = Simulator(d).EvaluateAtBatch(S("tp=1", 1), 1);
  EXPECT_NEAR(e.kv_bytes / 2048, 131072.0, 1.0);
  const double free = p.cluster.gpu.hbm_bytes - e.weight_bytes - e.reserve_bytes;
  EXPECT_LE(cap, free / 131072.0);
  EXPECT_GT(cap, 0.9 * free / 131072.0);  // activations of an 8,192-token step are small
}

// ---- queueing checks ----

struct Rig {
  std::unique_ptr<StepCost> cost;
  std::unique_ptr<ServeSim> sim;
};

Rig MakeSim(Problem p, const std::string& strategy, ServeOptions opt, int64_t isl, int64_t osl) {
  Rig s;
  s.cost = StepCost::Make(p, S(strategy, p.cluster.num_gpus)).value();
  s.sim = ServeSim::Make(s.cost.get(), opt, isl, osl).value();
  return s;
}

std::vector<RequestSpec> Open(double rate, int64_t n, int64_t isl, int64_t osl, uint64_t seed = 7,
                              const char* isl_dist = "fixed") {
  WorkloadSpec w;
  w.rate_rps = rate;
  w.num_requests = n;
  w.isl = isl;
  w.osl = osl;
  w.isl_dist = *ParseLengthDist(isl_dist);
  w.seed = seed;
  return *GenerateRequests(w);
}

TEST(ServeSim, VanishingRateTtftIsTheUnloadedPrefill) {
  // The unloaded prefill includes the engine's request overhead (SGLang's; 0 for vLLM).
  for (Engine e : {Engine::kVllm, Engine::kSglang}) {
    Problem p = MakeProblem("llama-3.1-8b", 1, e);
    ServeOptions opt;
    opt.shape_steps_per_octave = 1 << 16;  // price shapes exactly (rounding below 1e-5)
    Rig s = MakeSim(p, "tp=1", opt, 2000, 50);
    const ServeRun run = s.sim->Run(Open(0.01, 200, 2000, 50));
    const ServeSummary sum = Summarise(run, {});
    Problem f = p;
    f.workload.mode = Mode::kPrefill;
    f.workload.isl = 2000;
    const double prefill = Simulator(f).EvaluateAtBatch(S("tp=1", 1), 1).ttft_s;
    EXPECT_FALSE(sum.unstable) << EngineName(e);
    EXPECT_NEAR(sum.ttft.p50, prefill, 1e-4 * prefill) << EngineName(e);
    EXPECT_GE(sum.ttft.p99, sum.ttft.p50) << EngineName(e);
  }
}

// At a vanishing rate a prompt on pp = 2 has its token after the pipeline latency of its chunk
// (the Simulator's batch-1 prefill: pp x its stage time), not after the round.
TEST(ServeSim, APipelinedPromptsTokenComesAfterItsChunkCrossesEveryStage) {
  Problem p = MakeProblem("llama-3.1-8b", 2, Engine::kVllm);
  ServeOptions opt;
  opt.shape_steps_per_octave = 1 << 16;  // price shapes exactly (rounding below 1e-5)
  Rig r = MakeSim(p, "pp=2,tp=1", opt, 2000, 50);
  const ServeSummary sum = Summarise(r.sim->Run(Open(0.01, 200, 2000, 50)), {});
  const Evaluation e = PrefillEvaluation(p, S("pp=2,tp=1", 2), 2000, 1);
  EXPECT_FALSE(sum.unstable);
  EXPECT_NEAR(sum.ttft.p50, e.stage_s * 2, 1e-4 * e.stage_s * 2);
  // Decoding alone after it: the round of one sequence, pp x its stage time, as before.
  EXPECT_GT(sum.tpot.p50, 0);
}

TEST(ServeSim, OfferedRateIsTheArrivalsOwn) {
  // Open loop: the rate the requests were sent at is (n - 1) / the arrivals' span, whatever the
  // deployment does; a closed loop has none (its clients send as requests finish).
  Problem p = MakeProblem("llama-3.1-8b", 1);
  Rig s = MakeSim(p, "tp=1", ServeOptions{}, 1000, 100);
  const std::vector<RequestSpec> reqs = Open(3, 200, 1000, 100);
  const ServeSummary open = Summarise(s.sim->Run(reqs), {});
  const double span = reqs.back().arrival_s - reqs.front().arrival_s;
  EXPECT_DOUBLE_EQ(open.window_s, span);
  EXPECT_DOUBLE_EQ(open.offered_rps, 199.0 / span);
  EXPECT_NEAR(open.offered_rps, 3.0, 3.0 * 0.2);  // a Poisson stream at 3 req/s
  EXPECT_EQ(Summarise(s.sim->Run(reqs, 4), {}).offered_rps, 0);
}

TEST(ServeSim, RequestOverheadDelaysTheEngineNotTheSteps) {
  // SGLang, one client (closed loop), one-token outputs: request k is sent when request k - 1
  // finishes, reaches the engine h later, and finishes one prefill step S after that; the GPU
  // idles during h, so request k is sent at k (h + S).
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kSglang);
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  ASSERT_GT(h, 0);
  Rig s = MakeSim(p, "tp=1", ServeOptions{}, 1000, 1);
  const double S = s.sim->StepSeconds({0, 0, 1000, 1}, {0, 0, 1000, 1});
  const ServeRun run = s.sim->Run(std::vector<RequestSpec>(3, RequestSpec{0.0, 1000, 1, 0}), 1);
  ASSERT_EQ(run.requests.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const RequestOutcome& o = run.requests[k];
    ASSERT_TRUE(o.done());
    EXPECT_NEAR(o.arrival_s, k * (h + S), 1e-9) << k;
    EXPECT_NEAR(o.engine_s, o.arrival_s + h, 1e-9) << k;
    EXPECT_NEAR(o.ttft_s(), h + S, 1e-9) << k;
  }
  EXPECT_EQ(run.steps, 3);  // the overhead is no step
}

TEST(ServeSim, RecvIntervalHoldsArrivalsUntilTheReceivePoint) {
  // SGLang, --scheduler-recv-interval R. Request A (1,000-token prompt, 50 outputs) runs alone;
  // its decode step j ends at t_j (t_j = A's finish when it has j + 1 outputs). Request B reaches
  // the engine halfway through step 2. Interval 1: the scheduler receives B at t_2 and prefills
  // it alone (SGLang's prefill steps do not decode), first token at t_2 + S_B. Interval 4: the
  // counter restarts after A's prefill step (weight 1,000 >= 4) and grows by one per decode step,
  // so B is received at t_4, first token at t_4 + S_B.
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kSglang);
  const double h = Simulator::RequestOverheadSeconds(Engine::kSglang);
  for (int R : {1, 4}) {
    ServeOptions opt;
    opt.sglang_recv_interval = R;
    Rig s = MakeSim(p, "tp=1", opt, 1000, 50);
    auto alone_finish = [&](int64_t outputs) {
      const ServeRun run = s.sim->Run({RequestSpec{0.0, 1000, outputs, 0}});
      return run.requests[0].finish_s;
    };
    const double t1 = alone_finish(2), t2 = alone_finish(3), t4 = alone_finish(5);
    ASSERT_LT(t1, t2);
    ASSERT_LT(t2, t4);
    const double S_B = s.sim->PrefillStepSeconds({0, 0, 1000, 1}, {0, 0, 1000, 1});
    const double b_arrival = (t1 + t2) / 2 - h;
    const ServeRun run = s.sim->Run(
        {RequestSpec{0.0, 1000, 50, 0}, RequestSpec{b_arrival, 1000, 2, 0}});
    ASSERT_TRUE(run.requests[1].done());
    const double expected = (R == 1 ? t2 : t4) + S_B;
    EXPECT_NEAR(run.requests[1].first_token_s, expected, 1e-9) << "R " << R;
    EXPECT_EQ(run.recv_interval, R);
  }
}

TEST(ServeSim, RecvIntervalIdleServerReceivesAtOnce) {
  // At a vanishing rate every request finds SGLang idle, which receives at once: the TTFTs are
  // those of the default interval, request by request.
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kSglang);
  const std::vector<RequestSpec> reqs = Open(0.01, 50, 2000, 50);
  ServeOptions slow;
  slow.sglang_recv_interval = 30;
  Rig a = MakeSim(p, "tp=1", ServeOptions{}, 2000, 50), b = MakeSim(p, "tp=1", slow, 2000, 50);
  const ServeRun ra = a.sim->Run(reqs), rb = b.sim->Run(reqs);
  for (size_t i = 0; i < reqs.size(); ++i)
    EXPECT_DOUBLE_EQ(ra.requests[i].ttft_s(), rb.requests[i].ttft_s()) << i;
}

TEST(ServeSim, RecvIntervalLowersTheRunningBatchUnderLoad) {
  // 64 clients, outputs of different lengths: a request sent when another finishes waits for a
  // receive point, so fewer decode at once; the decode steps get shorter (TPOT) and the waits
  // longer (TTFT).
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kSglang);
  std::vector<RequestSpec> reqs;  // outputs 160-200: the clients' requests desynchronise
  for (int i = 0; i < 640; ++i) reqs.push_back(RequestSpec{0.0, 1000, 160 + (i * 37) % 41, 0});
  ServeOptions slow;
  slow.sglang_recv_interval = 30;
  Rig a = MakeSim(p, "tp=1", ServeOptions{}, 1000, 200), b = MakeSim(p, "tp=1", slow, 1000, 200);
  const ServeSummary sa = Summarise(a.sim->Run(reqs, 64), {});
  const ServeSummary sb = Summarise(b.sim->Run(reqs, 64), {});
  EXPECT_GT(sb.ttft.mean, sa.ttft.mean);
  EXPECT_LT(sb.tpot.mean, sa.tpot.mean);
}

TEST(ServeSim, RecvIntervalIsAnSglangSetting) {
  ServeOptions opt;
  opt.sglang_recv_interval = 2;
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kVllm);
  auto cost = StepCost::Make(p, S("tp=1", 1)).value();
  const auto sim = ServeSim::Make(cost.get(), opt, 1000, 100);
  ASSERT_FALSE(sim.ok());
  EXPECT_EQ(sim.status().message(),
            "serve: the scheduler receive interval is an SGLang setting (the engine is vllm)");
  opt.sglang_recv_interval = 0;
  EXPECT_FALSE(ServeSim::Make(cost.get(), opt, 1000, 100).ok());
}

// Single server, deterministic service: every request is one prompt of `isl` tokens with one
// output token (done at the end of its prefill step) and the token budget holds one prompt.
struct Md1 {
  Rig s;
  double service_s = 0;
};
Md1 MakeMd1() {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  p.workload.max_num_tokens = 1000;
  ServeOptions opt;
  opt.max_running = 1;
  Md1 m;
  m.s = MakeSim(p, "tp=1", opt, 1000, 1);
  m.service_s = m.s.sim->StepSeconds({0, 0, 1000, 1}, {0, 0, 1000, 1});
  return m;
}

// MakeMd1's server with a p99 TTFT early stop at `limit_s`.
Rig MakeMd1WithTtftStop(double limit_s) {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  p.workload.max_num_tokens = 1000;
  ServeOptions opt;
  opt.max_running = 1;
  opt.ttft_stops = {{limit_s, 0.99}};
  return MakeSim(p, "tp=1", opt, 1000, 1);
}

TEST(ServeSim, MD1MeanWaitMatchesClosedForm) {
  Md1 m = MakeMd1();
  const double S = m.service_s;
  ASSERT_GT(S, 0);
  for (double rho : {0.3, 0.5, 0.7}) {
    const ServeRun run = m.s.sim->Run(Open(rho / S, 40000, 1000, 1));
    const ServeSummary sum = Summarise(run, {});
    // Pollaczek-Khinchine for deterministic service: Wq = rho S / (2 (1 - rho)).
    const double wq = rho * S / (2 * (1 - rho));
    EXPECT_FALSE(sum.unstable) << rho;
    EXPECT_NEAR(sum.ttft.mean - S, wq, 0.05 * wq) << "rho " << rho;
    EXPECT_GE(sum.ttft.p50, S - 1e-12);  // never faster than the service
  }
}

// A miss names the figure with the decimals that show it above the limit: a p99 TPOT of 30.04 ms
// against 30 ms reads "30.04 ms > 30 ms", not "30.0 ms > 30 ms".
TEST(Slos, MissShowsTheFigureAboveItsLimit) {
  ServeSummary sum;
  sum.tpot.p99 = 0.030041;
  sum.ttft.p99 = 0.0617;
  std::string why;
  EXPECT_FALSE(MeetsSlos(sum, {{Metric::kTpot, Stat::kP99, 30}}, &why));
  EXPECT_EQ(why, "p99 tpot 30.04 ms > 30 ms");
  EXPECT_FALSE(MeetsSlos(sum, {{Metric::kTtft, Stat::kP99, 50}}, &why));
  EXPECT_EQ(why, "p99 ttft 61.7 ms > 50 ms");
  EXPECT_TRUE(MeetsSlos(sum, {{Metric::kTpot, Stat::kP99, 30.05}}, &why));
  EXPECT_EQ(why, "");
}

// A stream that arrives faster than its requests finish: 200 requests of 1,000 output tokens at
// 50 req/s arrive in 4 s, each lasting ~20 s, on a Llama-8B with KV for all of them at once.
// The requests in the system rise over every quarter of the arrivals (the deployment fills), so
// comparing the quarters alone called it unstable; against the fill a stable system has, rate x
// E[min(latency, t)], it is stable - and said to be a burst. The same requests at 50x the rate
// on a tenth of the KV (a queue that does grow) stay unstable.
TEST(ServeSim, AStreamShorterThanItsRequestsIsABurstNotAnOverload) {
  Rig r = MakeSim(MakeProblem("llama-3.1-8b", 1), "tp=1", ServeOptions{}, 200, 1000);
  const ServeRun run = r.sim->Run(Open(50, 200, 200, 1000));
  EXPECT_FALSE(run.unstable) << run.unstable_reason;
  const ServeSummary sum = Summarise(run, {});
  EXPECT_TRUE(sum.burst);
  EXPECT_GT(sum.e2e.mean, sum.window_s);  // each request outlasts the whole arrival span
  EXPECT_EQ(SummaryJson(sum)["burst"], true);
  // The same stream at a 50th of the rate (200 s of arrivals) is no burst.
  EXPECT_FALSE(Summarise(r.sim->Run(Open(1, 200, 200, 1000)), {}).burst);
  // Overloaded: 8,000 KV tokens hold ~6 requests, so later arrivals queue for good.
  ServeOptions small;
  small.kv_capacity_tokens = 8000;
  Rig q = MakeSim(MakeProblem("llama-3.1-8b", 1), "tp=1", small, 200, 1000);
  const ServeRun over = q.sim->Run(Open(50, 200, 200, 1000));
  EXPECT_TRUE(over.unstable);
  EXPECT_NE(over.unstable_reason.find("queue grows"), std::string::npos) << over.unstable_reason;
}

TEST(ServeSim, AboveCapacityIsUnstable) {
  Md1 m = MakeMd1();
  const ServeRun run = m.s.sim->Run(Open(1.5 / m.service_s, 4000, 1000, 1));
  EXPECT_TRUE(run.unstable);
  EXPECT_NE(run.unstable_reason.find("queue grows"), std::string::npos) << run.unstable_reason;
  const ServeSummary sum = Summarise(run, {});
  std::string why;
  EXPECT_FALSE(MeetsSlos(sum, {{Metric::kTtft, Stat::kP99, 1e9}}, &why));
  EXPECT_EQ(SummaryJson(sum)["ttft_ms"], nullptr);
  // Just below capacity the same stream is stable.
  EXPECT_FALSE(m.s.sim->Run(Open(0.6 / m.service_s, 4000, 1000, 1)).unstable);
}

// The TTFT early stop (ServeOptions::ttft_stops) is exact: above capacity the run stops once the
// p99 TTFT is certain to exceed the limit - and the full run's p99 does exceed it - after far
// fewer steps; at a load whose p99 meets the limit the stop never fires and the run is the same
// request for request. The count it needs is n - floor(0.99 (n - 1)) = 41 of 4,000.
TEST(ServeSim, TtftStopIsExactAndEarly) {
  Md1 m = MakeMd1();
  const double limit_s = 20 * m.service_s;
  Rig stopping = MakeMd1WithTtftStop(limit_s);
  const std::vector<RequestSpec> over = Open(1.5 / m.service_s, 4000, 1000, 1);
  const ServeRun full = m.s.sim->Run(over);
  const ServeRun early = stopping.sim->Run(over);
  EXPECT_GT(Summarise(full, {}).ttft.p99, limit_s);  // what the stop claims
  EXPECT_TRUE(early.unstable);
  int late = 0;
  ASSERT_EQ(std::sscanf(early.unstable_reason.c_str(), "stopped early: %d of 4000 requests", &late),
            1)
      << early.unstable_reason;
  EXPECT_GE(late, 41);  // several arrivals can pass the limit between two events
  EXPECT_LE(late, 45);
  EXPECT_LT(early.steps * 10, full.steps);
  std::string why;
  EXPECT_FALSE(MeetsSlos(Summarise(early, {}), {{Metric::kTtft, Stat::kP99, limit_s * 1e3}}, &why));
  const std::vector<RequestSpec> under = Open(0.5 / m.service_s, 4000, 1000, 1);
  const ServeRun a = m.s.sim->Run(under), b = stopping.sim->Run(under);
  ASSERT_LT(Summarise(a, {}).ttft.p99, limit_s);
  EXPECT_FALSE(b.unstable);
  EXPECT_EQ(a.steps, b.steps);
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token_s, b.requests[i].first_token_s) << i;
    EXPECT_EQ(a.requests[i].finish_s, b.requests[i].finish_s) << i;
  }
}

// ... and for a closed loop, where a request's clock starts when its client sends it: 200 clients
// on one single-request server (service time S each) queue ~200 S for their first token, so a
// p99 TTFT limit of 20 S is certainly missed once n - floor(0.99 (n - 1)) = 21 of 2,000 requests
// are late - at the first event after 20 S, when the first 200 requests, all sent at 0, are late
// but 20 - and the full run's p99 does exceed it. With 10 clients (waits of ~10 S) the stop never
// fires and the run is the same request for request.
TEST(ServeSim, TtftStopIsExactForAClosedLoop) {
  Md1 m = MakeMd1();
  const double limit_s = 20 * m.service_s;
  Rig stopping = MakeMd1WithTtftStop(limit_s);
  const std::vector<RequestSpec> reqs = Open(1, 2000, 1000, 1);  // arrival times unused
  const ServeRun full = m.s.sim->Run(reqs, 200);
  const ServeRun early = stopping.sim->Run(reqs, 200);
  EXPECT_GT(Summarise(full, {}).ttft.p99, limit_s);
  EXPECT_TRUE(early.unstable);
  int late = 0;
  ASSERT_EQ(std::sscanf(early.unstable_reason.c_str(), "stopped early: %d of 2000 requests", &late),
            1)
      << early.unstable_reason;
  EXPECT_GE(late, 21);
  EXPECT_LE(late, 200);  // only requests already sent are counted
  EXPECT_LT(early.steps * 10, full.steps);
  const ServeRun a = m.s.sim->Run(reqs, 10), b = stopping.sim->Run(reqs, 10);
  ASSERT_LT(Summarise(a, {}).ttft.p99, limit_s);
  EXPECT_FALSE(b.unstable);
  EXPECT_EQ(a.steps, b.steps);
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].arrival_s, b.requests[i].arrival_s) << i;
    EXPECT_EQ(a.requests[i].first_token_s, b.requests[i].first_token_s) << i;
  }
}

TEST(ServeSim, MaxRateFindsTheMD1Rate) {
  // SLO: mean TTFT <= S (1 + rho / (2 (1 - rho))) at rho = 0.5, i.e. 1.5 S: the highest rate is
  // 0.5 / S (within the sampling noise of 20,000 requests and the 2% tolerance).
  Md1 m = MakeMd1();
  const double S = m.service_s;
  const std::vector<Slo> slo = {{Metric::kTtft, Stat::kMean, 1.5 * S * 1e3}};
  auto unit = ToUnitRate(Open(1.0, 20000, 1000, 1));
  auto r = MaxRate(m.s.sim.get(), unit, slo, 1.0 / S, MaxRateOptions{});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->found);
  EXPECT_NEAR(r->rate_rps, 0.5 / S, 0.06 * 0.5 / S);
  EXPECT_GT(r->fail_rps, r->rate_rps);
  EXPECT_LE(r->fail_rps - r->rate_rps, 0.02 * r->fail_rps + 1e-12);
}

// A stream too short to load the deployment has no failing rate. Five requests of service S on
// one server (max running 1): all at once, their TTFTs are S, 2S, ..., 5S, mean 3S. A mean-TTFT
// limit of 3.5 S is met by that burst, so every rate is (unbounded, not a rate doubled until the
// work limit); a limit of 2.5 S is not, so the search brackets a finite rate.
TEST(ServeSim, MaxRateOfAStreamTooShortToLoadIsUnbounded) {
  Md1 m = MakeMd1();
  const double S = m.service_s;
  const auto unit = ToUnitRate(Open(1.0, 5, 1000, 1));
  // The highest rate whose mean TTFT stays within `services` x S.
  auto within = [&](double services) {
    return MaxRate(m.s.sim.get(), unit, {{Metric::kTtft, Stat::kMean, services * S * 1e3}},
                   1.0 / S, MaxRateOptions{});
  };
  auto loose = within(3.5);
  ASSERT_TRUE(loose.ok());
  EXPECT_TRUE(loose->found);
  EXPECT_TRUE(loose->unbounded);
  EXPECT_TRUE(std::isinf(loose->rate_rps));
  EXPECT_NEAR(loose->at.summary.ttft.mean, 3 * S, 1e-9 * S);  // the burst, by hand
  EXPECT_LE(loose->probes.size(), static_cast<size_t>(kBurstAfterPasses + 1));
  auto tight = within(2.5);
  ASSERT_TRUE(tight.ok());
  EXPECT_TRUE(tight->found);
  EXPECT_FALSE(tight->unbounded);
  EXPECT_TRUE(std::isfinite(tight->rate_rps));
  EXPECT_GT(tight->fail_rps, tight->rate_rps);
}

// A max rate found on a stream that its answer's rate turns into a burst (the five requests
// arrive over less than 4x their mean end-to-end latency) is flagged, and with
// MaxRateOptions::longer searched again on a stream long enough for a steady state: with a mean
// TTFT limit of 2.5 S the M/D/1 queue's highest rate is at S (1 + rho / (2 (1 - rho))) = 2.5 S,
// rho = 0.75, i.e. 0.75 / S, which the five-request burst overstates.
TEST(ServeSim, AMaxRateFoundOnABurstIsSearchedAgainOnALongerStream) {
  Md1 m = MakeMd1();
  const double S = m.service_s;
  const std::vector<Slo> slo = {{Metric::kTtft, Stat::kMean, 2.5 * S * 1e3}};
  const auto unit = ToUnitRate(Open(1.0, 5, 1000, 1));
  auto fixed = MaxRate(m.s.sim.get(), unit, slo, 1.0 / S, MaxRateOptions{});
  ASSERT_TRUE(fixed.ok());
  ASSERT_TRUE(fixed->found);
  EXPECT_FALSE(fixed->unbounded);
  EXPECT_TRUE(fixed->burst);
  EXPECT_TRUE(fixed->at.summary.burst);
  EXPECT_EQ(fixed->requests, 5);
  EXPECT_EQ(fixed->burst_requests, 0);
  EXPECT_GT(fixed->rate_rps, 1.2 * 0.75 / S);  // the burst overstates the rate
  MaxRateOptions o;
  o.max_requests = 20000;
  std::vector<int64_t> drawn;
  o.longer = [&](int64_t n) -> StatusOr<std::vector<RequestSpec>> {
    drawn.push_back(n);
    return Open(3.0, n, 1000, 1);  // any rate: MaxRate takes the unit-rate form
  };
  auto steady = MaxRate(m.s.sim.get(), unit, slo, 1.0 / S, o);
  ASSERT_TRUE(steady.ok());
  ASSERT_TRUE(steady->found);
  ASSERT_FALSE(drawn.empty());
  EXPECT_EQ(drawn.front() % 1000, 0);  // rounded up to thousands
  EXPECT_EQ(steady->requests, drawn.back());
  EXPECT_LE(steady->requests, 20000);
  EXPECT_FALSE(steady->burst);
  EXPECT_EQ(steady->burst_requests, 5);
  EXPECT_DOUBLE_EQ(steady->burst_rate_rps, fixed->rate_rps);
  EXPECT_NEAR(steady->rate_rps, 0.75 / S, 0.08 * 0.75 / S);
  EXPECT_GT(steady->probes.size(), fixed->probes.size());  // both searches' probes
}

TEST(ServeSim, ClosedLoopLittlesLaw) {
  for (Engine e : {Engine::kVllm, Engine::kTrtllm, Engine::kSglang}) {
    Problem p = MakeProblem("llama-3.1-8b", 1, e);
    Rig s = MakeSim(p, "tp=1", ServeOptions{}, 1000, 200);
    WorkloadSpec w;
    w.concurrency = 16;
    w.num_requests = 16 * 60;
    w.isl = 1000;
    w.osl = 200;
    w.isl_dist = *ParseLengthDist("uniform:0.5");
    w.osl_dist = *ParseLengthDist("uniform:0.5");
    const ServeRun run = s.sim->Run(*GenerateRequests(w), 16);
    const ServeSummary sum = Summarise(run, {});
    ASSERT_EQ(sum.completed, w.num_requests) << EngineName(e);
    // Little: throughput x mean latency = clients in the system (16), up to the ramp at the
    // start and the drain at the end (~1 latency of 60 per client).
    EXPECT_NEAR(sum.request_rate * sum.e2e.mean, 16.0, 16.0 * 0.02) << EngineName(e);
  }
}

TEST(ServeSim, DeterministicPerSeed) {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  Rig a = MakeSim(p, "tp=1", ServeOptions{}, 1000, 100);
  Rig b = MakeSim(p, "tp=1", ServeOptions{}, 1000, 100);
  auto run = [&](Rig& s, uint64_t seed) {
    return Summarise(s.sim->Run(Open(20, 2000, 1000, 100, seed, "lognormal:0.6")), {});
  };
  const ServeSummary x = run(a, 3), y = run(b, 3), z = run(a, 4);
  EXPECT_EQ(x.ttft.p99, y.ttft.p99);
  EXPECT_EQ(x.e2e.mean, y.e2e.mean);
  EXPECT_EQ(x.steps, y.steps);
  EXPECT_NE(x.e2e.mean, z.e2e.mean);
}

TEST(ServeSim, KvPressurePreemptsOnVllmNotOnTrtllm) {
  for (Engine e : {Engine::kVllm, Engine::kTrtllm, Engine::kSglang}) {
    Problem p = MakeProblem("llama-3.1-8b", 1, e);
    ServeOptions opt;
    opt.kv_capacity_tokens = 12000;  // ~8 requests of 1,500 tokens
    Rig s = MakeSim(p, "tp=1", opt, 1000, 500);
    WorkloadSpec w;
    w.concurrency = 32;
    w.num_requests = 200;
    w.isl = 1000;
    w.osl = 500;
    const ServeRun run = s.sim->Run(*GenerateRequests(w), 32);
    const ServeSummary sum = Summarise(run, {});
    EXPECT_EQ(sum.completed, 200) << EngineName(e);
    EXPECT_LE(sum.peak_kv_fraction, 1.0 + 1e-9) << EngineName(e);
    if (e == Engine::kTrtllm) {
      EXPECT_EQ(sum.preemptions, 0);  // GUARANTEED_NO_EVICT
    }
    if (e == Engine::kVllm) {
      EXPECT_GT(sum.preemptions, 0);
    }
  }
}

TEST(ServeSim, OversizedRequestIsRejectedNotHung) {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  ServeOptions opt;
  opt.kv_capacity_tokens = 1000;
  Rig s = MakeSim(p, "tp=1", opt, 1000, 500);
  const ServeRun run = s.sim->Run(Open(1, 50, 1000, 500));
  EXPECT_TRUE(run.unstable);
  EXPECT_NE(run.unstable_reason.find("rejects"), std::string::npos);
}

TEST(ServeSim, MtpEmitsAcceptedTokensPerStep) {
  // An isolated request decodes osl - 1 tokens at `accept` tokens per step.
  Problem p = MakeProblem("deepseek-v3", 16, Engine::kTrtllm, DType::kFP8);
  p.workload.mtp_accept = 2.5;
  Rig s = MakeSim(p, "tp=1,dp=16,ep=16,mtp=2", ServeOptions{}, 500, 501);
  const ServeRun run = s.sim->Run(Open(0.001, 3, 500, 501));
  // Steps: 1 prefill + ceil(500 / 2.5) = 200 decodes per request.
  EXPECT_EQ(run.steps, 3 * 201);
}

TEST(ServeSim, AttentionDpSpreadsRequests) {
  Problem p = MakeProblem("deepseek-v3", 16, Engine::kSglang, DType::kFP8);
  for (Assign a : {Assign::kRoundRobin, Assign::kShortestQueue}) {
    ServeOptions opt;
    opt.rank_assign = a;
    Rig s = MakeSim(p, "tp=1,dp=16,ep=16", opt, 1000, 200);
    const ServeRun run = s.sim->Run(Open(15, 1000, 1000, 200));  // ~45% of the serve-mode 33 req/s
    const ServeSummary sum = Summarise(run, {});
    EXPECT_EQ(sum.completed, 1000);
    EXPECT_FALSE(sum.unstable) << sum.unstable_reason;
    // Every rank got work: 16 ranks' decode capacity is far above one rank's.
    EXPECT_LT(sum.tpot.p50, 0.2);
  }
}

// A dense model's dp ranks are independent replicas (issue 43: "never wait for each other"):
// one instance of tp=2,dp=2 serves a stream exactly as two instances of tp=2 behind a router
// that dispatches as the engine's dp does. Before, its ranks stepped in lockstep and the 4-GPU
// instance sustained well under twice one tp=2 instance's rate. A MoE model's ranks still step
// together (their expert collectives span the instance).
TEST(ServeSim, DenseDpRanksAreIndependentReplicas) {
  for (Engine e : {Engine::kVllm, Engine::kSglang}) {
    for (const char* dist : {"fixed", "uniform:0.5"}) {
      const auto reqs = Open(6, 600, 2000, 300, 11, dist);
      ServeOptions one;
      Rig dp2 = MakeSim(MakeProblem("llama-3.1-70b", 4, e, DType::kFP8), "tp=2,dp=2", one, 2000,
                        300);
      ServeOptions two;
      two.instances = 2;
      two.router = e == Engine::kSglang ? Assign::kRoundRobin : Assign::kShortestQueue;
      Rig tp2 = MakeSim(MakeProblem("llama-3.1-70b", 2, e, DType::kFP8), "tp=2", two, 2000, 300);
      const ServeRun a = dp2.sim->Run(reqs), b = tp2.sim->Run(reqs);
      ASSERT_EQ(a.requests.size(), b.requests.size());
      EXPECT_EQ(a.instances, 2);
      EXPECT_EQ(a.ranks, 1);
      for (size_t i = 0; i < a.requests.size(); ++i) {
        ASSERT_NEAR(a.requests[i].first_token_s, b.requests[i].first_token_s, 1e-9) << i;
        ASSERT_NEAR(a.requests[i].finish_s, b.requests[i].finish_s, 1e-9) << i;
      }
    }
  }
  ServeOptions opt;
  Rig moe = MakeSim(MakeProblem("deepseek-v3", 16, Engine::kSglang, DType::kFP8),
                    "tp=1,dp=16,ep=16", opt, 1000, 200);
  const ServeRun m = moe.sim->Run(Open(5, 50, 1000, 200));
  EXPECT_EQ(m.instances, 1);
  EXPECT_EQ(m.ranks, 16);
}

// The engines' running-request caps when the launch sets none: SGLang with MTP (EAGLE) sets 48
// per server and divides it over its dp-attention ranks; every other case is DefaultsOf's.
TEST(ServeSim, EngineDefaultMaxRunning) {
  EXPECT_EQ(DefaultMaxRunning(Engine::kSglang, 0, 1), 4096);
  EXPECT_EQ(DefaultMaxRunning(Engine::kSglang, 2, 1), 48);
  EXPECT_EQ(DefaultMaxRunning(Engine::kSglang, 3, 8), 6);
  EXPECT_EQ(DefaultMaxRunning(Engine::kSglang, 1, 64), 1);
  EXPECT_EQ(DefaultMaxRunning(Engine::kVllm, 2, 1), 1024);
  EXPECT_EQ(DefaultMaxRunning(Engine::kTrtllm, 3, 8), 2048);
  Problem p = MakeProblem("deepseek-v3", 8, Engine::kSglang, DType::kFP8);
  p.cluster = *MakeCluster("h200", 8);  // 671 GB of FP8 weights: 8 H100s do not hold them
  for (int mtp : {0, 2}) {
    Rig s = MakeSim(p, mtp ? "tp=8,mtp=2" : "tp=8", ServeOptions{}, 1000, 200);
    EXPECT_EQ(s.sim->max_running(), mtp ? 48 : 4096);
  }
}

// A benchmark client's stated per-rank limit caps the running requests: 8 clients on 2 slots
// queue for whole requests, so their mean TTFT is several request lifetimes, not one prefill.
TEST(BenchClient, StatedMaxRunningCapsTheBatch) {
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kVllm);
  BenchClientSpec spec;
  spec.concurrency = 8;
  spec.isl = 500;
  spec.osl = 100;
  const BenchClientResult free = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  spec.max_running = 2;
  const BenchClientResult capped = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  // With 2 slots, a request waits on average for about 3 lifetimes of ~90 decode steps.
  EXPECT_GT(capped.mean_ttft_s, 50 * free.mean_ttft_s);
  EXPECT_LT(capped.mean_tpot_s, free.mean_tpot_s);
  spec.max_running = -1;
  EXPECT_FALSE(SimulateBenchmarkClient(p, S("tp=1", 1), spec).ok());
}

// The prompts of a run: num_prompts = concurrency x k is the run of k prompts per client; a
// run of as many prompts as clients has no second wave, so with 2 slots for 8 clients its
// requests wait 0, 1, 2 or 3 lifetimes (1.5 on average) where the 10-prompt run's steady state
// waits about 3; fewer prompts than clients is that many clients.
TEST(BenchClient, StatedPromptCountsAreTheRun) {
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kVllm);
  BenchClientSpec spec;
  spec.concurrency = 8;
  spec.isl = 500;
  spec.osl = 100;
  spec.max_running = 2;
  spec.prompts_per_client = 3;
  const BenchClientResult three = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  spec.prompts_per_client = 10;
  spec.num_prompts = 24;
  const BenchClientResult total = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  EXPECT_EQ(total.summary.requests, 24);
  EXPECT_DOUBLE_EQ(total.mean_ttft_s, three.mean_ttft_s);
  EXPECT_DOUBLE_EQ(total.output_tokens_per_s, three.output_tokens_per_s);
  spec.num_prompts = 8;
  const BenchClientResult one_wave = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  spec.num_prompts = 0;
  const BenchClientResult ten = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  EXPECT_EQ(ten.summary.requests, 80);
  EXPECT_LT(one_wave.mean_ttft_s, 0.7 * ten.mean_ttft_s);
  EXPECT_GT(one_wave.mean_ttft_s, 0.3 * ten.mean_ttft_s);
  spec.num_prompts = 3;
  const BenchClientResult few = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  EXPECT_EQ(few.summary.requests, 3);
  spec.num_prompts = -1;
  EXPECT_FALSE(SimulateBenchmarkClient(p, S("tp=1", 1), spec).ok());
}

TEST(BenchClient, RoundRobinRouterQueuesBehindBusyInstances) {
  // Four instances of one running request each and four clients: a least-loaded router always
  // finds the instance its client just left free, so no request waits; round-robin (Dynamo's
  // frontend default) hands a request whose predecessor finished out of turn to an instance
  // still decoding, where it waits for up to one request's lifetime (~90 decode steps). With one
  // instance the routers are the same.
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kTrtllm);
  BenchClientSpec spec;
  spec.concurrency = 4;
  spec.instances = 4;
  spec.max_running = 1;
  spec.isl = 500;
  spec.osl = 100;
  const BenchClientResult least = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  spec.router = Assign::kRoundRobin;
  const BenchClientResult rr = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  EXPECT_GT(rr.mean_ttft_s, 1.5 * least.mean_ttft_s);  // 2.3x when written
  EXPECT_LT(rr.output_tokens_per_s, least.output_tokens_per_s);
  spec.instances = 1;
  spec.concurrency = 2;
  const BenchClientResult one_rr = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  spec.router = Assign::kShortestQueue;
  const BenchClientResult one_least = *SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  EXPECT_DOUBLE_EQ(one_rr.mean_ttft_s, one_least.mean_ttft_s);
  EXPECT_DOUBLE_EQ(one_rr.mean_tpot_s, one_least.mean_tpot_s);
}

TEST(ServeSim, MoreInstancesNeverSlower) {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  const auto reqs = Open(40, 3000, 1000, 200);
  double last = 1e18;
  for (int k : {1, 2, 4}) {
    ServeOptions opt;
    opt.instances = k;
    Rig s = MakeSim(p, "tp=1", opt, 1000, 200);
    const ServeSummary sum = Summarise(s.sim->Run(reqs), {});
    EXPECT_LE(sum.e2e.mean, last * 1.0001) << k;
    last = sum.e2e.mean;
  }
}

// ---- workloads and SLOs ----

TEST(Workload, LengthDistributions) {
  ServeRng rng(5);
  const LengthDist u = *ParseLengthDist("uniform:0.8");
  int64_t lo = 1 << 30, hi = 0;
  for (int i = 0; i < 5000; ++i) {
    const int64_t x = SampleLength(u, 1000, &rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_EQ(lo, 800);
  EXPECT_EQ(hi, 1000);
  const LengthDist ln = *ParseLengthDist("lognormal:0.5");
  double sum = 0;
  for (int i = 0; i < 40000; ++i) sum += SampleLength(ln, 2000, &rng);
  EXPECT_NEAR(sum / 40000, 2000, 2000 * 0.02);
  for (const char* bad : {"uniform", "uniform:0", "uniform:1.5", "lognormal:-1", "zipf:1", "fixed:2"})
    EXPECT_FALSE(ParseLengthDist(bad).ok()) << bad;
}

TEST(Workload, ArrivalsHaveTheRateAndBurstiness) {
  for (double burst : {1.0, 0.25}) {
    WorkloadSpec w;
    w.rate_rps = 10;
    w.burstiness = burst;
    w.num_requests = 40000;
    const auto r = *GenerateRequests(w);
    std::vector<double> gaps;
    for (size_t i = 1; i < r.size(); ++i) gaps.push_back(r[i].arrival_s - r[i - 1].arrival_s);
    double m = 0, v = 0;
    for (double g : gaps) m += g;
    m /= gaps.size();
    for (double g : gaps) v += (g - m) * (g - m);
    v /= gaps.size();
    EXPECT_NEAR(m, 0.1, 0.1 * 0.03);
    // Gamma(shape k): coefficient of variation^2 = 1 / k.
    EXPECT_NEAR(v / (m * m), 1.0 / burst, 0.08 / burst);
  }
}

TEST(Workload, ClosedLoopDefaultsToTenPromptsPerClient) {
  WorkloadSpec w;
  w.concurrency = 7;
  EXPECT_EQ(GenerateRequests(w)->size(), 70u);
  w.rate_rps = 1;
  EXPECT_FALSE(GenerateRequests(w).ok());  // both a rate and a concurrency
}

TEST(Workload, PrefixHitRate) {
  WorkloadSpec w;
  w.rate_rps = 1;
  w.num_requests = 10;
  w.isl = 1000;
  w.prefix_hit = 0.25;
  const StatusOr<std::vector<RequestSpec>> reqs = GenerateRequests(w);  // outlives the loop
  ASSERT_TRUE(reqs.ok());
  for (const RequestSpec& r : *reqs) EXPECT_EQ(r.cached, 250);
}

TEST(Workload, TraceCsv) {
  auto t = ParseTraceCsv("arrival_s,prompt_tokens,output_tokens,cached_tokens\n0,100,10,0\n"
                         "0.5,200,20,50\n",
                         "t.csv");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[1].cached, 50);
  EXPECT_EQ((*t)[1].arrival_s, 0.5);
  EXPECT_FALSE(ParseTraceCsv("1,100,10\n0,100,10\n", "t.csv").ok());   // time goes back
  EXPECT_FALSE(ParseTraceCsv("0,100\n", "t.csv").ok());                // missing field
  EXPECT_FALSE(ParseTraceCsv("0,100,10,100\n", "t.csv").ok());         // cached >= prompt
  EXPECT_FALSE(ParseTraceCsv("0,1.5,10\n", "t.csv").ok());             // fractional tokens
  auto e = ParseTraceCsv("0,100,x\n", "t.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("t.csv:1"), std::string::npos);
}

// Only the first line may be a header; a data row that does not parse is an error naming its line,
// not a second "header" skipped (a first row "-1,..." or "nan,..." was dropped, and a file of
// such rows read as "no requests").
TEST(Workload, TraceCsvHasOneHeaderAtMost) {
  for (const char* text : {"arrival_s,prompt_tokens,output_tokens\nnan,100,10\n",
                           "-1,100,10\n0,100,10\n", "nan,100,10\n0,100,10\n",
                           "arrival_s,prompt,output\nx,100,10\n0,100,10\n",
                           "arrival_s,prompt,output\ntime,prompt,output\n0,100,10\n"}) {
    auto t = ParseTraceCsv(text, "t.csv");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_NE(t.status().message().find("t.csv:"), std::string::npos) << t.status().message();
    EXPECT_EQ(t.status().message().find("no requests"), std::string::npos) << text;
  }
  // A quoted header, a header after comments and blank lines, and no header at all are read.
  for (const char* text : {"\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\n0,100,10\n",
                           "# exported\n\n_t,p,o\n0,100,10\n", "0,100,10\n"}) {
    auto t = ParseTraceCsv(text, "t.csv");
    ASSERT_TRUE(t.ok()) << text << ": " << t.status().message();
    ASSERT_EQ(t->size(), 1u);
    EXPECT_EQ((*t)[0].prompt, 100);
  }
}

TEST(Slo, Parse) {
  auto s = ParseSlos("p99_ttft_ms=2000,p50_tpot_ms=50,mean_e2e_ms=9000,itl_ms=80");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 4u);
  EXPECT_EQ((*s)[0].metric, Metric::kTtft);
  EXPECT_EQ((*s)[1].stat, Stat::kP50);
  EXPECT_EQ((*s)[3].stat, Stat::kP99);  // no stat = p99
  EXPECT_EQ(SlosText(*s), "p99_ttft_ms=2000,p50_tpot_ms=50,mean_e2e_ms=9000,p99_itl_ms=80");
  for (const char* bad : {"", "p99_ttft_ms", "p98_ttft_ms=1", "p99_ttft_ms=0", "p99_ttft_ms=x",
                          "ttft_ms=1,p99_ttft_ms=2", "p99_ttft_ms=1,"})
    EXPECT_FALSE(ParseSlos(bad).ok()) << bad;
}

TEST(Stats, QuantileInterpolates) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 1.0), 4);
  LogHistogram h;
  for (int i = 1; i <= 1000; ++i) h.Add(i * 1e-3);
  EXPECT_NEAR(h.Quantile(0.5), 0.5, 0.5 * 0.006);
  EXPECT_NEAR(h.Mean(), 0.5005, 1e-9);
}

TEST(BenchClient, MeansOverAllPrompts) {
  Problem p = MakeProblem("llama-3.1-8b", 1);
  BenchClientSpec spec;
  spec.concurrency = 8;
  spec.isl = 1000;
  spec.osl = 300;
  auto r = SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->summary.completed, 80);
  EXPECT_GT(r->mean_ttft_s, 0);
  EXPECT_GT(r->mean_tpot_s, 0);
  // Concurrency 1: no queueing, so TTFT is about one prefill of 900 tokens (0.8-1.0 x 1000).
  spec.concurrency = 1;
  auto one = SimulateBenchmarkClient(p, S("tp=1", 1), spec);
  ASSERT_TRUE(one.ok());
  EXPECT_LT(one->mean_ttft_s, r->mean_ttft_s);
  EXPECT_LT(one->mean_tpot_s, r->mean_tpot_s);
}

// OneSizeSmaller picks, among the simulated deployments that miss, the one with the most GPUs
// below the answer: one instance fewer of the answer's layout, or another layout's largest miss;
// none when the answer is one instance and nothing smaller was simulated.
TEST(Capacity, OneSizeSmallerIsTheLargestMissBelowTheAnswer) {
  auto cand = [](int gpus_per_instance, bool meets, int instances, double rps) {
    SizeResult c;
    c.layout.strategy.dp = gpus_per_instance;  // pp = tp = 1: gpus() = dp
    c.meets = meets;
    c.instances = meets ? instances : 0;
    c.gpus = meets ? instances * gpus_per_instance : 0;
    c.instance_max_rps = rps;
    return c;
  };
  CapacityResult r;
  r.candidates = {cand(1, true, 3, 10), cand(2, true, 1, 25), cand(4, false, 0, 30)};
  r.candidates[0].has_smaller = true;  // 2 x 1 GPU misses
  r.candidates[0].smaller_why = "p99 ttft";
  r.found = true;
  r.best = 1;  // 2 GPUs: 1 x [dp=2]
  // The answer is 1 x 2 GPUs; the only miss simulated, 2 x 1 GPU, is not below 2 GPUs: none.
  EXPECT_FALSE(OneSizeSmaller(r).has_value());
  r.candidates[0].instances = 2;  // the 1-GPU layout met at 2 instances; 1 instance missed
  std::optional<SmallerDeployment> s = OneSizeSmaller(r);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->candidate, 0);
  EXPECT_EQ(s->gpus, 1);
  EXPECT_EQ(s->instances, 1);
  EXPECT_EQ(s->why, "p99 ttft");
  // The answer's own layout one instance fewer wins a tie in GPUs.
  r.candidates[1].instances = 2;
  r.candidates[1].gpus = 4;
  r.candidates[1].has_smaller = true;
  r.candidates[1].smaller_why = "p99 tpot";
  r.candidates[2].missed_instances = 1;  // 1 x 4 GPUs, never meeting
  r.candidates[2].missed_why = "unstable";
  r.candidates[0].instances = 3;
  r.candidates[0].gpus = 3;  // met at 3 x 1: its miss is 2 GPUs
  r.best = 1;                 // 4 GPUs (2 x dp=2), say the answer
  s = OneSizeSmaller(r);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->gpus, 2);
  EXPECT_EQ(s->candidate, 1);  // 1 x dp=2 and 2 x dp=1 tie at 2 GPUs: the answer's layout
  EXPECT_EQ(s->why, "p99 tpot");
  // A layout that never met, at 3 GPUs, is the largest below 4.
  r.candidates[2].layout.strategy.dp = 3;
  s = OneSizeSmaller(r);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->candidate, 2);
  EXPECT_EQ(s->gpus, 3);
  EXPECT_EQ(s->why, "unstable");
  r.found = false;
  EXPECT_FALSE(OneSizeSmaller(r).has_value());
}

// When no search step simulated the size just below the answer, FewestGpus simulates it: here
// one tp=1 instance never meets a 4 ms TPOT, so its MaxRate finds nothing and no tp=1 count is
// simulated, while one tp=4 instance meets; one size smaller is then 3 x tp=1 (3 GPUs), simulated
// only for the report, and it misses the TPOT.
TEST(Capacity, FewestGpusSimulatesTheSizeBelowTheAnswer) {
  std::vector<LayoutOption> layouts;
  for (int g : {1, 4}) {
    LayoutOption lo;
    lo.problem = MakeProblem("llama-3.1-8b", g);
    lo.strategy = S("tp=" + std::to_string(g), g);
    lo.label = "tp=" + std::to_string(g);
    layouts.push_back(lo);
  }
  WorkloadSpec w;
  w.rate_rps = 1;
  w.num_requests = 200;
  w.isl = 256;
  w.osl = 64;
  auto reqs = GenerateRequests(w);
  ASSERT_TRUE(reqs.ok());
  auto slos = ParseSlos("p99_tpot_ms=4");
  ASSERT_TRUE(slos.ok());
  CapacityOptions opt;
  opt.max_gpus = 64;
  auto r = FewestGpus(layouts, *reqs, *slos, opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->found);
  ASSERT_EQ(r->best, 1) << r->candidates[0].note;
  EXPECT_EQ(r->candidates[1].gpus, 4);
  EXPECT_FALSE(r->candidates[0].meets);
  EXPECT_EQ(r->candidates[0].missed_instances, 0);
  ASSERT_EQ(r->below.size(), 1u);
  const std::optional<SmallerDeployment> s = OneSizeSmaller(*r);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->candidate, 0);
  EXPECT_EQ(s->instances, 3);
  EXPECT_EQ(s->gpus, 3);
  EXPECT_NE(s->why.find("p99 tpot"), std::string::npos) << s->why;
  EXPECT_GT(s->summary.tpot.p99, 0.004);
}

// The slow reference of the sizing tests: `requests` (with `concurrency` clients; 0: open loop)
// simulated on k instances of `cost`'s layout at the stream's mean lengths; whether they meet
// the SLOs, the summary in *out.
bool MeetsOnInstances(const StepCost* cost, int k, const std::vector<RequestSpec>& requests,
                      int concurrency, const std::vector<Slo>& slos, ServeSummary* out) {
  int64_t isl = 0, osl = 0;
  MeanLengths(requests, &isl, &osl);
  ServeOptions so;
  so.instances = k;
  auto sim = ServeSim::Make(cost, so, isl, osl);
  EXPECT_TRUE(sim.ok());
  *out = Summarise((*sim)->Run(requests, concurrency), slos);
  std::string why;
  return MeetsSlos(*out, slos, &why);
}

// Fast path against the slow reference: the instance count FewestGpus returns meets the SLOs and
// one fewer misses, each simulated here on its own, whatever the search took to get there. A
// 1-GPU Llama-70B (FP8) holds a few long prompts' KV, so one instance alone queues them (its max
// rate counts ~3x the instances a pool behind the router needs): the search walks down from a
// first guess far above the answer (in doubling steps, then bisection).
TEST(Capacity, FewestGpusIsTheCountWhoseOneFewerMisses) {
  LayoutOption lo;
  lo.problem = MakeProblem("llama-3.1-70b", 1, Engine::kVllm, DType::kFP8);
  lo.strategy = S("tp=1", 1);
  lo.label = "tp=1";
  const std::vector<RequestSpec> stream = Open(4, 400, 4500, 300, /*seed=*/1);
  auto slos = ParseSlos("p99_ttft_ms=2000,p99_tpot_ms=50");
  ASSERT_TRUE(slos.ok());
  CapacityOptions opt;
  opt.max_gpus = 1000;
  auto r = FewestGpus({lo}, stream, *slos, opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->found) << r->candidates[0].note;
  const SizeResult& c = r->candidates[0];
  const int guess = static_cast<int>(std::ceil(StreamRate(stream) / c.instance_max_rps - 1e-9));
  EXPECT_GE(guess - c.instances, 4) << guess;  // the walk down is exercised (15 -> 8)
  // 15 (meets), 14, 13, 11, 7 (misses); bisection 9, 8: each count once, not every count.
  EXPECT_LE(c.simulations, 8);
  auto cost = StepCost::Make(lo.problem, lo.strategy);
  ASSERT_TRUE(cost.ok());
  auto meets = [&](int k, ServeSummary* out) {
    return MeetsOnInstances(cost->get(), k, stream, 0, *slos, out);
  };
  ServeSummary at, below;
  EXPECT_TRUE(meets(c.instances, &at));
  EXPECT_FALSE(meets(c.instances - 1, &below));
  EXPECT_EQ(at.ttft.p99, c.at.ttft.p99);
  EXPECT_TRUE(c.has_smaller);
  EXPECT_FALSE(c.smaller_why.empty());  // (its run stops at a certain miss: figures differ)
}

// The layouts' one-instance rates are found on threads; the answer and every candidate's figures
// are the same for every thread count (each layout has its own step cost).
TEST(Capacity, FewestGpusTheSameOnEveryThreadCount) {
  std::vector<LayoutOption> layouts;
  const std::vector<std::pair<const char*, int>> texts = {
      {"tp=1", 1}, {"tp=2", 2}, {"tp=1,dp=2", 2}, {"pp=2,tp=1", 2}, {"tp=4", 4}, {"tp=2,dp=2", 4}};
  for (const auto& [text, g] : texts) {
    LayoutOption lo;
    lo.problem = MakeProblem("llama-3.1-8b", g);
    lo.strategy = S(text, g);
    lo.label = text;
    layouts.push_back(lo);
  }
  WorkloadSpec w;
  w.rate_rps = 6;
  w.num_requests = 300;
  w.isl = 512;
  w.osl = 64;
  auto reqs = GenerateRequests(w);
  ASSERT_TRUE(reqs.ok());
  auto slos = ParseSlos("p99_ttft_ms=500,p99_tpot_ms=15");
  ASSERT_TRUE(slos.ok());
  auto size = [&](int jobs) {
    CapacityOptions opt;
    opt.max_gpus = 64;
    opt.jobs = jobs;
    auto r = FewestGpus(layouts, *reqs, *slos, opt);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  const CapacityResult one = size(1);
  ASSERT_TRUE(one.found);
  for (int jobs : {2, 6}) {
    const CapacityResult many = size(jobs);
    EXPECT_EQ(many.best, one.best);
    ASSERT_EQ(many.candidates.size(), one.candidates.size());
    for (size_t i = 0; i < one.candidates.size(); ++i) {
      EXPECT_EQ(many.candidates[i].instance_max_rps, one.candidates[i].instance_max_rps) << i;
      EXPECT_EQ(many.candidates[i].gpus, one.candidates[i].gpus) << i;
      EXPECT_EQ(many.candidates[i].note, one.candidates[i].note) << i;
      EXPECT_EQ(many.candidates[i].at.ttft.p99, one.candidates[i].at.ttft.p99) << i;
    }
  }
}

// Closed loop (N clients): MaxClients' bisection against the slow reference, every client count
// probed in turn with the same rule (the first ceil(c x M / N) requests of the stream, c clients):
// it returns the most clients before the first count that misses, and the counts around it agree.
TEST(Capacity, MaxClientsIsTheLastCountBeforeTheFirstMiss) {
  Problem p = MakeProblem("llama-3.1-8b", 1, Engine::kVllm);
  Rig s = MakeSim(p, "tp=1", ServeOptions{}, 2048, 128);
  const int n = 48;
  WorkloadSpec w;
  w.concurrency = n;
  w.isl = 2048;
  w.osl = 128;
  w.isl_dist = *ParseLengthDist("uniform:0.8");
  auto reqs = GenerateRequests(w);
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 480u);  // 10 prompts per client
  auto slos = ParseSlos("p99_ttft_ms=1000,p99_tpot_ms=25");
  ASSERT_TRUE(slos.ok());
  auto r = MaxClients(s.sim.get(), *reqs, n, *slos);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->found);
  // The bisection: n, 1, then about log2(n) counts, not every count.
  EXPECT_LE(r->probes.size(), 2u + 6u);
  int first_miss = 0;
  for (int c = 1; c <= n && first_miss == 0; ++c) {
    const size_t m = static_cast<size_t>(std::ceil(10.0 * c - 1e-9));
    const std::vector<RequestSpec> part(reqs->begin(), reqs->begin() + static_cast<long>(m));
    std::string why;
    if (!MeetsSlos(Summarise(s.sim->Run(part, c), *slos), *slos, &why)) first_miss = c;
  }
  ASSERT_GT(first_miss, 1);   // the case is one with a boundary inside (1, n]
  ASSERT_LE(first_miss, n);
  EXPECT_EQ(r->clients, first_miss - 1) << "probes " << r->probes.size();
  EXPECT_EQ(r->fail_clients, first_miss);
  EXPECT_EQ(r->at.clients, r->clients);
  EXPECT_TRUE(r->at.meets);
  EXPECT_GT(r->at.summary.request_rate, 0);
  // Every client meeting the SLOs is the answer at once (one probe).
  auto loose = ParseSlos("p99_ttft_ms=100000");
  auto all = MaxClients(s.sim.get(), *reqs, n, *loose);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->found);
  EXPECT_EQ(all->clients, n);
  EXPECT_EQ(all->fail_clients, 0);
  EXPECT_EQ(all->probes.size(), 1u);
  // Not even one client: not found.
  auto tight = ParseSlos("p99_tpot_ms=1");
  auto none = MaxClients(s.sim.get(), *reqs, n, *tight);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->found);
  EXPECT_EQ(none->fail_clients, 1);
}

// The pools' first guess for a closed loop, by hand: 100 clients, 257 output tokens.
TEST(Capacity, ClosedLoopRateGuessByHand) {
  // TTFT 2,000 + 256 x TPOT 50 = 14,800 ms per request: 100 / 14.8 s = 6.757 req/s.
  EXPECT_NEAR(ClosedLoopRateGuess(100, 257, *ParseSlos("p99_ttft_ms=2000,p99_tpot_ms=50")),
              100 / 14.8, 1e-9);
  // The tightest keys: TTFT 1,000 and ITL 40 -> 1,000 + 256 x 40 = 11,240 ms.
  EXPECT_NEAR(ClosedLoopRateGuess(
                  100, 257, *ParseSlos("p99_ttft_ms=2000,p50_ttft_ms=1000,p99_tpot_ms=50,p90_itl_ms=40")),
              100 / 11.24, 1e-9);
  // An e2e limit is the latency itself: 10 s -> 10 req/s.
  EXPECT_NEAR(ClosedLoopRateGuess(100, 257, *ParseSlos("p99_e2e_ms=10000,p99_tpot_ms=50")), 10.0,
              1e-9);
  // TPOT alone: 256 x 50 ms.
  EXPECT_NEAR(ClosedLoopRateGuess(100, 257, *ParseSlos("p99_tpot_ms=50")), 100 / 12.8, 1e-9);
  // Only a TTFT bound: no guess.
  EXPECT_EQ(ClosedLoopRateGuess(100, 257, *ParseSlos("p99_ttft_ms=2000")), 0);
}

// Closed-loop sizing against the slow reference: the instances FewestGpus returns for N clients
// meet the SLOs and one fewer misses, each simulated here on its own; its first guess is
// ceil(N / one instance's MaxClients).
TEST(Capacity, ClosedLoopFewestGpusIsTheCountWhoseOneFewerMisses) {
  LayoutOption lo;
  lo.problem = MakeProblem("llama-3.1-8b", 1, Engine::kVllm);
  lo.strategy = S("tp=1", 1);
  lo.label = "tp=1";
  const int n = 96;
  WorkloadSpec w;
  w.concurrency = n;
  w.isl = 2048;
  w.osl = 128;
  w.isl_dist = *ParseLengthDist("uniform:0.8");
  w.osl_dist = *ParseLengthDist("uniform:0.8");
  auto reqs = GenerateRequests(w);
  ASSERT_TRUE(reqs.ok());
  auto slos = ParseSlos("p99_ttft_ms=1500,p99_tpot_ms=25");
  ASSERT_TRUE(slos.ok());
  CapacityOptions opt;
  opt.max_gpus = 64;
  opt.concurrency = n;
  auto r = FewestGpus({lo}, *reqs, *slos, opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->found) << r->candidates[0].note;
  const SizeResult& c = r->candidates[0];
  ASSERT_GT(c.instance_max_clients, 0);
  ASSERT_LT(c.instance_max_clients, n);
  EXPECT_GT(c.instances, 1);
  auto cost = StepCost::Make(lo.problem, lo.strategy);
  ASSERT_TRUE(cost.ok());
  auto meets = [&](int k, ServeSummary* out) {
    return MeetsOnInstances(cost->get(), k, *reqs, n, *slos, out);
  };
  ServeSummary at, below;
  EXPECT_TRUE(meets(c.instances, &at));
  EXPECT_FALSE(meets(c.instances - 1, &below));
  EXPECT_EQ(at.tpot.p99, c.at.tpot.p99);
  EXPECT_EQ(at.completed, static_cast<int64_t>(reqs->size()));
  EXPECT_TRUE(c.has_smaller);
  EXPECT_FALSE(c.smaller_why.empty());
}

}  // namespace
}  // namespace l2s::serve
