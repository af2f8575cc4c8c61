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

}  // namespace
}  // namespace l2s
