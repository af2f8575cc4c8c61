// The validation hook: `l2s validate` predicts the TTFT, TPOT and output tokens/s of a serve row
// that states a concurrency with one request-level simulation of its benchmark client
// (serve/bench_client.h), lengths as the row states them (fixed, or uniform from its notes).
#include <gtest/gtest.h>

#include "hw/hw.h"
#include "model/presets.h"
#include "serve/bench_client.h"
#include "validate/validate.h"

namespace l2s {
namespace {

TEST(ServeValidate, ConcurrencyRowsUseTheBenchmarkClient) {
  const std::string text =
      "id,source,engine,gpu,gpus,model_config,weight_dtype,kv_dtype,tp,pp,dp,ep,mode,isl,osl,"
      "context,batch,metric,value,replicas,expert_slots,mtp,mtp_accept,max_batch,max_num_tokens,"
      "concurrency,notes\n"
      "1,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,ttft_ms,100,,,,,,,16,\n"
      "2,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,tpot_ms,10,,,,,,,16,\n"
      "3,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,output_tokens_per_s,900,,,,,,,"
      "16,\n"
      "4,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,output_tokens_per_s,900,,,,,,,"
      "16,random-range-ratio 0.8\n";
  auto rows = validate::ParseMeasurements(text, "c.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  validate::Predictor pred({}, /*apply_engine_factor=*/false);
  const validate::Prediction ttft = pred.Predict((*rows)[0]);
  const validate::Prediction tpot = pred.Predict((*rows)[1]);
  const validate::Prediction thr = pred.Predict((*rows)[2]);
  const validate::Prediction thr_uniform = pred.Predict((*rows)[3]);
  ASSERT_TRUE(ttft.ok) << ttft.reason;
  ASSERT_TRUE(tpot.ok) << tpot.reason;
  ASSERT_TRUE(thr.ok) << thr.reason;
  ASSERT_TRUE(thr_uniform.ok) << thr_uniform.reason;
  Problem p;
  p.model = *ModelPreset("llama-3.1-8b");
  p.cluster = *MakeCluster("h100", 1);
  p.workload.mode = Mode::kServe;
  p.workload.engine = Engine::kVllm;
  p.workload.max_batch = DefaultsOf(Engine::kVllm).max_batch;
  serve::BenchClientSpec bc;
  bc.concurrency = 16;
  bc.isl = 1000;
  bc.osl = 300;
  bc.range_ratio = 1;  // the rows state no length distribution: fixed lengths
  auto r = serve::SimulateBenchmarkClient(p, *FromText("tp=1", 1), bc);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(ttft.predicted, 1e3 * r->mean_ttft_s);
  EXPECT_DOUBLE_EQ(tpot.predicted, 1e3 * r->mean_tpot_s);
  // The run's throughput is the same run's (not the steady state at 16 sequences, which has no
  // prefill stalls): output tokens over the whole run's time.
  EXPECT_DOUBLE_EQ(thr.predicted, r->output_tokens_per_s);
  const double steps_s = 1e-3 * (ttft.predicted + tpot.predicted * (300 - 1));
  EXPECT_NEAR(thr.predicted, 16 * 300 / steps_s, 0.1 * thr.predicted);  // closed loop, +-10%
  // Row 4's notes draw lengths uniform in 0.8-1.0 x nominal: the client draws them (once).
  bc.range_ratio = 0.8;
  auto u = serve::SimulateBenchmarkClient(p, *FromText("tp=1", 1), bc);
  ASSERT_TRUE(u.ok());
  EXPECT_DOUBLE_EQ(thr_uniform.predicted, u->output_tokens_per_s);
  EXPECT_NE(thr_uniform.predicted, thr.predicted);
}

TEST(ServeValidate, DisaggConcurrencyRowsSimulateBothPools) {
  // 1 prefill instance (TP8) and 2 decode instances (TP8), 64 clients: the mean TTFT of the
  // benchmark client on the two pools with the scale-out link between them.
  const std::string text =
      "id,source,engine,gpu,gpus,model_config,weight_dtype,kv_dtype,tp,pp,dp,ep,mode,isl,osl,"
      "context,batch,metric,value,replicas,expert_slots,mtp,mtp_accept,max_batch,max_num_tokens,"
      "concurrency,prefill_gpus,prefill_tp,prefill_dp,prefill_ep,decode_gpus,decode_tp,decode_dp,"
      "decode_ep,notes\n"
      "10,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,ttft_ms,100,,,,,,,"
      "64,8,8,1,1,16,8,1,1,\n"
      "11,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "64,8,8,1,1,16,8,1,1,\n";
  auto rows = validate::ParseMeasurements(text, "d.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  validate::Predictor pred({}, /*apply_engine_factor=*/false);
  const validate::Prediction ttft = pred.Predict((*rows)[0]);
  const validate::Prediction thr = pred.Predict((*rows)[1]);
  ASSERT_TRUE(ttft.ok) << ttft.reason;
  ASSERT_TRUE(thr.ok) << thr.reason;
  Problem p;
  p.model = *ModelPreset("llama-3.1-8b");
  p.cluster = *MakeCluster("h100", 8);
  p.workload.mode = Mode::kServe;
  p.workload.weight = p.workload.kv = DType::kFP8;
  p.workload.engine = Engine::kIdeal;
  p.workload.isl = p.workload.osl = 1024;
  serve::BenchClientSpec bc;
  bc.concurrency = 64;
  bc.isl = bc.osl = 1024;
  bc.range_ratio = 1;  // fixed lengths: the row states no distribution
  bc.instances = 2;
  serve::DisaggServeOptions d;
  d.prefill_instances = 1;
  d.link = KvLink{false, p.cluster.scaleout_bw, p.cluster.scaleout_latency};
  const Strategy s = *FromText("tp=8", 8);
  auto r = serve::SimulateDisaggBenchmarkClient(p, s, p, s, d, bc);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(ttft.predicted, 1e3 * r->mean_ttft_s, 1e-6 * ttft.predicted);
  EXPECT_NEAR(thr.predicted, r->output_tokens_per_s, 1e-6 * thr.predicted);
  EXPECT_TRUE(r->summary.disaggregated);
}

}  // namespace
}  // namespace l2s
