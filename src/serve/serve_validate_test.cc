// The validation hook: `l2s validate` predicts the TTFT and TPOT of a serve row that states a
// concurrency with the request-level simulation of its benchmark client (serve/bench_client.h).
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
      "concurrency\n"
      "1,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,ttft_ms,100,,,,,,,16\n"
      "2,s,vllm,h100,1,llama-3.1-8b,bf16,bf16,1,1,1,1,serve,1000,300,,,tpot_ms,10,,,,,,,16\n";
  auto rows = validate::ParseMeasurements(text, "c.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  validate::Predictor pred({}, /*apply_engine_factor=*/false);
  const validate::Prediction ttft = pred.Predict((*rows)[0]);
  const validate::Prediction tpot = pred.Predict((*rows)[1]);
  ASSERT_TRUE(ttft.ok) << ttft.reason;
  ASSERT_TRUE(tpot.ok) << tpot.reason;
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
  auto r = serve::SimulateBenchmarkClient(p, *FromText("tp=1", 1), bc);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(ttft.predicted, 1e3 * r->mean_ttft_s);
  EXPECT_DOUBLE_EQ(tpot.predicted, 1e3 * r->mean_tpot_s);
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
      "64,8,8,1,1,16,8,1,1,\n";
  auto rows = validate::ParseMeasurements(text, "d.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  validate::Predictor pred({}, /*apply_engine_factor=*/false);
  const validate::Prediction ttft = pred.Predict((*rows)[0]);
  ASSERT_TRUE(ttft.ok) << ttft.reason;
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
  bc.instances = 2;
  serve::DisaggServeOptions d;
  d.prefill_instances = 1;
  d.link = KvLink{false, p.cluster.scaleout_bw, p.cluster.scaleout_latency};
  const Strategy s = *FromText("tp=8", 8);
  auto r = serve::SimulateDisaggBenchmarkClient(p, s, p, s, d, bc);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(ttft.predicted, 1e3 * r->mean_ttft_s, 1e-6 * ttft.predicted);
  EXPECT_TRUE(r->summary.disaggregated);
}

}  // namespace
}  // namespace l2s
