// Unit tests of the validation logic (validate/validate.h): CSV parsing, measurement rows,
// metric conversions, ranks and Spearman, scoring and the engine-factor fit. Expected values are
// derived by hand in the comments.
#include "validate/validate.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include "hw/hw.h"
#include "sim/disagg.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <set>

#include "model/presets.h"
#include "sim/simulator.h"
#include "validate/row_metrics.h"
#include "strategy/space.h"

namespace l2s::validate {
namespace {

// The rows of ../shared/reference/<file>, or an empty vector when the file is absent (a failed
// parse is a test failure).
std::vector<Measurement> SharedRows(const std::string& file) {
  const std::string csv = std::string(L2S_SHARED_DIR) + "/reference/" + file;
  if (!std::filesystem::exists(csv)) return {};
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<std::vector<Measurement>> rows = ParseMeasurements(text.str(), csv);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *std::move(rows) : std::vector<Measurement>{};
}

TEST(Csv, QuotedFieldsEscapesAndLineNumbers) {
  // Line 2 has a quoted comma and an escaped quote; line 3's record spans two physical lines
  // (3 and 4: a newline inside quotes), line 5 is blank and skipped, so the last record starts on
  // line 6.
  const std::string text =
      "a,b,c\r\n"
      "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
      "2,\"two\nlines\",z\n"
      "\n"
      "3,,\n";
  StatusOr<std::vector<CsvRecord>> r = ParseCsv(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].line, 1);
  EXPECT_EQ((*r)[1].fields, (std::vector<std::string>{"1", "x, y", "say \"hi\""}));
  EXPECT_EQ((*r)[1].line, 2);
  EXPECT_EQ((*r)[2].fields, (std::vector<std::string>{"2", "two\nlines", "z"}));
  EXPECT_EQ((*r)[2].line, 3);
  EXPECT_EQ((*r)[3].fields, (std::vector<std::string>{"3", "", ""}));
  EXPECT_EQ((*r)[3].line, 6);
  // No trailing newline: the last record still counts.
  StatusOr<std::vector<CsvRecord>> t = ParseCsv("a,b\n1,2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->size(), 2u);
}

TEST(Csv, Errors) {
  StatusOr<std::vector<CsvRecord>> a = ParseCsv("a,b\n1,\"open\n");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("line 2, column 2"), std::string::npos) << a.status().message();
  StatusOr<std::vector<CsvRecord>> b = ParseCsv("a,b\n1,x\"y\n");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("line 2, column 2"), std::string::npos) << b.status().message();
  StatusOr<std::vector<CsvRecord>> c = ParseCsv("a,b\n\"q\"x,1\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("line 2, column 1"), std::string::npos) << c.status().message();
}

const char* kHeader =
    "id,source,engine,gpu,gpus,model_config,weight_dtype,kv_dtype,tp,pp,dp,ep,mode,isl,osl,"
    "context,batch,metric,value\n";

TEST(Measurements, ParsesRowsWithDefaults) {
  const std::string text = std::string(kHeader) +
                           "7,\"Blog, 2025\",trtllm-0.17,h100,8,m.json,fp8,fp8,4,2,,,serve,128,"
                           "256,,,output_tokens_per_s,1234.5\n";
  StatusOr<std::vector<Measurement>> r = ParseMeasurements(text, "f.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const Measurement& m = (*r)[0];
  EXPECT_EQ(m.id, "7");
  EXPECT_EQ(m.source, "Blog, 2025");
  EXPECT_EQ(m.line, 2);
  EXPECT_EQ(m.gpus, 8);
  EXPECT_EQ(m.tp, 4);
  EXPECT_EQ(m.pp, 2);
  EXPECT_EQ(m.dp, 0);  // not given
  EXPECT_EQ(m.ep, 1);  // default
  EXPECT_EQ(m.isl, 128);
  EXPECT_EQ(m.osl, 256);
  EXPECT_EQ(m.context, 0);
  EXPECT_EQ(m.batch, 0);
  EXPECT_DOUBLE_EQ(m.value, 1234.5);
}

TEST(Measurements, ErrorsNameLineAndColumn) {
  auto msg = [](const std::string& text) {
    StatusOr<std::vector<Measurement>> r = ParseMeasurements(text, "f.csv");
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  const std::string ok_row = "1,s,e,h100,1,m.json,fp8,fp8,1,1,1,1,serve,1,1,,,output_tokens_per_s,1\n";
  std::string m = msg(std::string(kHeader) + ok_row +
                      "2,s,e,h100,1,m.json,fp8,fp8,0,1,1,1,serve,1,1,,,output_tokens_per_s,1\n");
  EXPECT_NE(m.find("f.csv:3: column 'tp'"), std::string::npos) << m;
  m = msg(std::string(kHeader) + "1,s,e,h100,1,m.json,fp8,fp8,1,1,1,1,serve,1,1,,,m,-5\n");
  EXPECT_NE(m.find("f.csv:2: column 'value'"), std::string::npos) << m;
  m = msg(std::string(kHeader) + "1,s,e,h100,1,m.json\n");
  EXPECT_NE(m.find("f.csv:2:"), std::string::npos) << m;
  m = msg("id,gpu,mode,metric,value\n1,h100,serve,x,1\n");
  EXPECT_NE(m.find("f.csv:1: column 'model_config'"), std::string::npos) << m;
  m = msg(std::string(kHeader) + "1,s,e,h100,x1,m.json,fp8,fp8,1,1,1,1,serve,1,1,,,m,1\n");
  EXPECT_NE(m.find("column 'gpus'"), std::string::npos) << m;
}

const char* kHeader35 =
    "id,source,engine,gpu,gpus,model_config,weight_dtype,kv_dtype,tp,pp,dp,ep,mode,isl,osl,"
    "context,batch,metric,value,replicas,expert_slots,mtp,mtp_accept,max_batch,max_num_tokens,"
    "concurrency,prefill_gpus,prefill_tp,prefill_dp,prefill_ep,decode_gpus,decode_tp,decode_dp,"
    "decode_ep,notes\n";

TEST(Measurements, ParsesThe35ColumnFormat) {
  const std::string text =
      std::string(kHeader35) +
      "9,src,sglang-0.5.2,h20,32,m.json,fp8,,1,1,16,16,decode,4096,1536,4864,48,"
      "output_tokens_per_s,11424,2,288,1,1.85,64,8192,96,,,,,,,,,\"note, with comma\"\n"
      "10,src,dynamo,h100,24,m.json,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "64,8,8,1,1,16,1,16,16,\n";
  StatusOr<std::vector<Measurement>> r = ParseMeasurements(text, "s.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  const Measurement& m = (*r)[0];
  EXPECT_EQ(m.replicas, 2);
  EXPECT_EQ(m.expert_slots, 288);
  EXPECT_EQ(m.mtp, 1);
  EXPECT_DOUBLE_EQ(m.mtp_accept, 1.85);
  EXPECT_EQ(m.max_batch, 64);
  EXPECT_EQ(m.max_num_tokens, 8192);
  EXPECT_EQ(m.concurrency, 96);
  EXPECT_EQ(m.notes, "note, with comma");
  EXPECT_EQ(m.kv_dtype, "");
  const Measurement& d = (*r)[1];
  EXPECT_EQ(d.mode, "disagg");
  EXPECT_EQ(d.replicas, 0);  // not stated
  EXPECT_EQ(d.concurrency, 64);
  EXPECT_EQ(d.prefill.gpus, 8);
  EXPECT_EQ(d.prefill.tp, 8);
  EXPECT_EQ(d.prefill.dp, 1);
  EXPECT_EQ(d.prefill.ep, 1);
  EXPECT_EQ(d.decode.gpus, 16);
  EXPECT_EQ(d.decode.tp, 1);
  EXPECT_EQ(d.decode.dp, 16);
  EXPECT_EQ(d.decode.ep, 16);
}

TEST(Measurements, IntegerCellsAreBounded) {
  auto msg = [](const std::string& row) {
    StatusOr<std::vector<Measurement>> r = ParseMeasurements(std::string(kHeader35) + row, "b.csv");
    EXPECT_FALSE(r.ok()) << row;
    return r.ok() ? std::string() : r.status().message();
  };
  const std::string tail = ",,,,,,,,,,,,,,,,\n";
  // tp above 2^24 (and far above an int): an error naming the column, not a wrapped product.
  std::string m = msg("1,s,e,h100,8,m.json,,,99999999999,1,1,1,serve,1,1,,,output_tokens_per_s,1" + tail);
  EXPECT_NE(m.find("b.csv:2: column 'tp'"), std::string::npos) << m;
  m = msg("1,s,e,h100,8,m.json,,,1,1,1,1,serve,1,1,,,output_tokens_per_s,1,0" + tail.substr(1));
  EXPECT_NE(m.find("column 'replicas'"), std::string::npos) << m;
  m = msg("1,s,e,h100,8,m.json,,,1,1,1,1,serve,1,1,,,output_tokens_per_s,1,,,99" + tail.substr(3));
  EXPECT_NE(m.find("column 'mtp'"), std::string::npos) << m;
  m = msg("1,s,e,h100,8,m.json,,,1,1,1,1,serve,1,1,,,output_tokens_per_s,1,,,1,0.5" + tail.substr(4));
  EXPECT_NE(m.find("column 'mtp_accept'"), std::string::npos) << m;
}

TEST(Predict, HugeDegreesAreAMissNotACrash) {
  // tp = pp = 2^24 each parse, but tp*pp*dp overflows an int (and would be 0 mod 2^32): the
  // product is checked in int64 against the GPU bound and the row is a MISS naming it.
  const std::string text = std::string(kHeader) +
                           "1,s,trtllm,h100,,llama-3.1-8b,,,16777216,16777216,,,serve,128,128,,,"
                           "output_tokens_per_s,100\n"
                           "2,s,trtllm,h100,16,llama-3.1-8b,,,65536,65536,,,serve,128,128,,,"
                           "output_tokens_per_s,100\n";
  StatusOr<std::vector<Measurement>> rows = ParseMeasurements(text, "h.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  Predictor pred({}, true);
  for (const Measurement& m : *rows) {
    const Prediction p = pred.Predict(m);
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.reason.find("exceeds"), std::string::npos) << p.reason;
  }
}

TEST(Regime, FromDegrees) {
  Measurement m;
  m.mode = "serve";
  EXPECT_EQ(Regime(m), "tp-only");  // all defaults
  m.tp = 8;
  m.ep = 2;
  EXPECT_EQ(Regime(m), "tp+ep");
  m.tp = 1;
  m.dp = 4;
  m.ep = 4;
  EXPECT_EQ(Regime(m), "attention-dp+ep");
  m.ep = 1;
  EXPECT_EQ(Regime(m), "attention-dp");
  // dp not given: gpus / (replicas tp pp) = 32 / (2 * 1 * 1) = 16 > 1.
  m.dp = 0;
  m.gpus = 32;
  m.replicas = 2;
  m.ep = 16;
  EXPECT_EQ(Regime(m), "attention-dp+ep");
  m.mode = "disagg";
  EXPECT_EQ(Regime(m), "disagg");
}

TEST(EngineFamily, StripsVersionsAndAliases) {
  EXPECT_EQ(EngineFamily("trtllm-0.17"), "trtllm");
  EXPECT_EQ(EngineFamily("TensorRT-LLM v0.17"), "trtllm");
  EXPECT_EQ(EngineFamily("trt-llm"), "trtllm");
  EXPECT_EQ(EngineFamily("sglang-0.4.6"), "sglang");
  EXPECT_EQ(EngineFamily("vLLM 0.6.3"), "vllm");
  EXPECT_EQ(EngineFamily("vllm0.6"), "vllm");
  EXPECT_EQ(EngineFamily(""), "");
  EXPECT_EQ(EngineFamily("none"), "");
  // Platform words, front ends and remarks do not hide the engine.
  EXPECT_EQ(EngineFamily("sglang-rocm"), "sglang");
  EXPECT_EQ(EngineFamily("SGLang 0.5.12 (ROCm)"), "sglang");
  EXPECT_EQ(EngineFamily("AMD ATOM"), "atom");
  EXPECT_EQ(EngineFamily("dynamo-trtllm"), "trtllm");
  EXPECT_EQ(EngineFamily("Dynamo (TensorRT-LLM)"), "trtllm");
  EXPECT_EQ(EngineFamily("sglang (PD-disagg, MoRI)"), "sglang");
  // An engine l2s does not know keeps its words, versions dropped.
  EXPECT_EQ(EngineFamily("lmdeploy v0.6"), "lmdeploy");
  EXPECT_EQ(EngineFamily("deepseek-internal"), "deepseekinternal");
  EXPECT_EQ(EngineFamily("Dynamo"), "dynamo");
}

TEST(Metrics, ConversionsFromTheEvaluation) {
  // Serve: 1000 output tokens/s, isl 100, osl 50 -> 20 requests/s, each bringing 100 input
  // tokens: 2000 input tokens/s, 3000 total; 4 GPUs -> 250 output tokens/s per GPU.
  Evaluation e;
  e.tokens_per_s = 1000;
  e.ttft_s = 0.2;
  e.tpot_s = 0.01;
  Workload w;
  w.mode = Mode::kServe;
  w.isl = 100;
  w.osl = 50;
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "output_tokens_per_s"), 1000);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "input_tokens_per_s"), 2000);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "total_tokens_per_s"), 3000);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "requests_per_s"), 20);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "output_tokens_per_s_per_gpu"), 250);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "ttft_ms"), 200);
  EXPECT_FALSE(MetricValue(e, w, 4, "joules_per_token").has_value());
  // Prefill: tokens_per_s counts input tokens; there is no TPOT.
  w.mode = Mode::kPrefill;
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "input_tokens_per_s"), 1000);
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "requests_per_s"), 10);  // 1000 / isl 100
  EXPECT_FALSE(MetricValue(e, w, 4, "tpot_ms").has_value());
  w.mode = Mode::kDecode;
  EXPECT_FALSE(MetricValue(e, w, 4, "input_tokens_per_s").has_value());
  // Per-user speed = 1 / tpot = 1 / 0.01 s = 100 tokens/s, the same in decode and serve; none
  // in prefill.
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "tokens_per_s_per_user"), 100);
  w.mode = Mode::kServe;
  EXPECT_DOUBLE_EQ(*MetricValue(e, w, 4, "tokens_per_s_per_user"), 100);
  w.mode = Mode::kPrefill;
  EXPECT_FALSE(MetricValue(e, w, 4, "tokens_per_s_per_user").has_value());
  // Kinds decide how the engine factor applies and what the fit uses.
  EXPECT_EQ(KindOfMetric("output_tokens_per_s"), MetricKind::kThroughput);
  EXPECT_EQ(KindOfMetric("input_tokens_per_s_per_gpu"), MetricKind::kThroughput);
  EXPECT_EQ(KindOfMetric("tpot_ms"), MetricKind::kLatency);
  EXPECT_EQ(KindOfMetric("ttft_ms"), MetricKind::kLatency);
  EXPECT_EQ(KindOfMetric("tokens_per_s_per_user"), MetricKind::kPerUser);
  EXPECT_EQ(KindOfMetric("itl_ms"), MetricKind::kLatency);
  EXPECT_EQ(KindOfMetric("p99_e2e_ms"), MetricKind::kLatency);
  EXPECT_EQ(KindOfMetric("p99_e2el_ms"), MetricKind::kUnknown);  // a spelling the parser maps
  EXPECT_EQ(KindOfMetric("joules_per_token"), MetricKind::kUnknown);
}

// One row of the 35-column format with the given cells (the rest empty).
Measurement ScaleRow(const std::string& cells) {
  StatusOr<std::vector<Measurement>> r = ParseMeasurements(std::string(kHeader35) + cells, "t.csv");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() && !r->empty() ? r->front() : Measurement{};
}
const std::string kEmpty16 = ",,,,,,,,,,,,,,,,";  // 16 empty cells: replicas .. notes

// The simulator's own evaluation of llama-3.1-8b fp8 on `gpus` H100s in serve mode 1024/1024.
Evaluation Direct(int gpus, int tp, int batch) {
  Problem p;
  p.model = *LoadModel("llama-3.1-8b");
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = Mode::kServe;
  p.workload.isl = 1024;
  p.workload.osl = 1024;
  p.workload.weight = DType::kFP8;
  p.workload.kv = DType::kFP8;
  Strategy s;
  s.tp = tp;
  s.dp = gpus / tp;
  s.dims = MegatronDims();
  ClearAbsentOps(p.model, &s);
  s.batch = batch;
  return Simulator(std::move(p)).Evaluate(s);
}

TEST(Predict, HonoursTheStatedBatch) {
  // A batch-1 latency row is predicted at batch 1 (not at the best-throughput batch), and the
  // per-user speed is 1 / tpot of that evaluation.
  const Evaluation e = Direct(1, 1, 1);
  ASSERT_TRUE(e.valid());
  Predictor pred({}, /*apply_engine_factor=*/false);
  const Prediction p = pred.Predict(ScaleRow(
      "1,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,1,tokens_per_s_per_user,100" +
      kEmpty16 + "\n"));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.batch, 1);
  EXPECT_NEAR(p.raw, 1.0 / e.tpot_s, 1e-9 * p.raw);
  // Without a batch the simulator picks its best (a larger) one.
  const Prediction q = pred.Predict(ScaleRow(
      "2,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,,output_tokens_per_s,100" +
      kEmpty16 + "\n"));
  ASSERT_TRUE(q.ok) << q.reason;
  EXPECT_GT(q.batch, 1);
}

TEST(Predict, AnEngineWithoutABuildForTheGpuIsAMiss) {
  // ATOM runs on AMD GPUs only, TensorRT-LLM on NVIDIA only: such a row names no deployment that
  // ran, so it is a miss with the engine layer's reason (plan and eval refuse it the same way).
  Predictor pred({}, false);
  const Prediction a = pred.Predict(ScaleRow(
      "1,s,atom,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,,output_tokens_per_s,100" +
      kEmpty16 + "\n"));
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.reason.rfind("ATOM does not run on NVIDIA GPUs (h100)", 0), 0u) << a.reason;
  const Prediction t = pred.Predict(ScaleRow(
      "2,s,trtllm,mi300x,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,,output_tokens_per_s,100" +
      kEmpty16 + "\n"));
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.reason.rfind("TensorRT-LLM does not run on AMD GPUs (mi300x)", 0), 0u) << t.reason;
}

TEST(Predict, DisaggRowsAreCostedByTheDisaggregatedModel) {
  // 8 prefill GPUs (one TP8 instance) + 16 decode GPUs (two TP8 instances), Llama-3.1-8B fp8 at
  // 1024/1024, a stated batch of 32 per decode rank (a row stating a concurrency instead is its
  // simulated benchmark client's, serve_validate_test).
  const std::string row =
      "10,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,32,output_tokens_per_s,5000,,,,,,,"
      ",8,8,1,1,16,8,1,1,\n";
  Predictor pred({}, false);
  const Prediction p = pred.Predict(ScaleRow(row));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.batch, 32);
  // The same deployment through DisaggModel: rate = min(1 x prefill capacity, 2 x decode
  // capacity, link), output tokens/s = rate x 1024.
  Problem serve;
  serve.model = *ModelPreset("llama-3.1-8b");
  serve.cluster = *MakeCluster("h100", 8);
  serve.workload.mode = Mode::kServe;
  serve.workload.weight = DType::kFP8;
  serve.workload.kv = DType::kFP8;
  serve.workload.isl = serve.workload.osl = 1024;
  const Problem pre = *PrefillProblem(serve, serve.cluster, 8);
  const Problem dec = *DecodeProblem(serve, serve.cluster, 8);
  Strategy s;
  s.tp = 8;
  s.dims = MegatronDims();
  ClearAbsentOps(serve.model, &s);
  const Evaluation ep = Simulator(pre).Evaluate(s);
  s.batch = 32;
  const Evaluation ed = Simulator(dec).Evaluate(s);
  ASSERT_TRUE(ep.valid() && ed.valid());
  const double rate = std::min(ep.tokens_per_s / 1024, 2 * ed.tokens_per_s / 1024);
  EXPECT_NEAR(p.raw, rate * 1024, 1e-9 * p.raw);
  // TPOT at a stated batch (no concurrency: a concurrency row's TPOT is its simulated benchmark
  // client's, serve_validate_test) is the decode instance's; a bad pool split is a miss naming
  // the columns.
  const Prediction t = pred.Predict(ScaleRow(
      "11,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,32,tpot_ms,10,,,,,,,"
      ",8,8,1,1,16,8,1,1,\n"));
  ASSERT_TRUE(t.ok) << t.reason;
  EXPECT_NEAR(t.raw, ed.tpot_s * 1e3, 1e-9 * t.raw);
  const Prediction bad = pred.Predict(ScaleRow(
      "12,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,tpot_ms,10,,,,,,,"
      "64,8,3,1,1,16,8,1,1,\n"));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.reason.find("prefill_tp"), std::string::npos) << bad.reason;
}

TEST(Predict, UnstatedKvDtypeIsTheEngineDefault) {
  // TensorRT-LLM serving a quantised checkpoint follows the checkpoint's FP8 KV; other engines
  // (and bf16 checkpoints) keep 16-bit KV. An unstated cell predicts exactly what stating that
  // default predicts.
  Predictor pred({}, false);
  auto raw = [&](const std::string& engine, const std::string& wd, const std::string& kv) {
    const Prediction p = pred.Predict(
        ScaleRow("1,s," + engine + ",h100,1,llama-3.1-8b," + wd + "," + kv +
                 ",1,1,1,1,serve,1024,1024,,,output_tokens_per_s,100" + kEmpty16 + "\n"));
    EXPECT_TRUE(p.ok) << p.reason;
    return p.raw;
  };
  EXPECT_DOUBLE_EQ(raw("trtllm-1.0", "fp8", ""), raw("trtllm-1.0", "fp8", "fp8"));
  EXPECT_DOUBLE_EQ(raw("sglang-0.5", "fp8", ""), raw("sglang-0.5", "fp8", "bf16"));
  EXPECT_DOUBLE_EQ(raw("trtllm-1.0", "bf16", ""), raw("trtllm-1.0", "bf16", "bf16"));
  EXPECT_NE(raw("trtllm-1.0", "fp8", "fp8"), raw("trtllm-1.0", "fp8", "bf16"));
}

TEST(Predict, OverlapOnlyWhenStated) {
  // Not stated: the engines' default, none. An `overlap` column (this reader's optional extra) is
  // honoured; anything but none/tbo/sbo is a parse error naming the column.
  const std::string header = std::string(kHeader35).insert(std::string(kHeader35).size() - 1, ",overlap");
  auto row = [&](const std::string& overlap) {
    return ParseMeasurements(header +
                                 "1,s,trtllm,h100,8,qwen3-30b-a3b,fp8,fp8,1,1,8,8,serve,1024,1024,,64,"
                                 "output_tokens_per_s,100" + kEmpty16 + "," + overlap + "\n",
                             "o.csv");
  };
  Predictor pred({}, false);
  const Prediction none = pred.Predict(row("")->front());
  ASSERT_TRUE(none.ok) << none.reason;
  EXPECT_EQ(none.strategy.find("overlap="), std::string::npos) << none.strategy;
  const Prediction tbo = pred.Predict(row("TBO")->front());
  ASSERT_TRUE(tbo.ok) << tbo.reason;
  EXPECT_NE(tbo.strategy.find("overlap=tbo"), std::string::npos) << tbo.strategy;
  StatusOr<std::vector<Measurement>> bad = row("both");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("column 'overlap'"), std::string::npos);
}

TEST(Notes, KeywordsAndNegation) {
  // The documented keyword list, case-insensitive; a keyword directly after "no"/"not"/"without"
  // (also inside a parenthesis) does not count.
  NotedSettings n = ReadNotes("DeepEP normal, Two-Batch Overlap, dense FFN data-parallel");
  EXPECT_EQ(n.overlap, "tbo");
  EXPECT_FALSE(n.adp_balance || n.fp8_attention || n.fp8_kv);
  n = ReadNotes("FP8 FlashMLA, DeepGEMM swapAB, Single-Batch-Overlap (no two-batch overlap)");
  EXPECT_EQ(n.overlap, "sbo");
  EXPECT_TRUE(n.fp8_attention);
  EXPECT_TRUE(n.fp8_kv);
  EXPECT_EQ(n.Text(), "sbo attn=fp8 kv=fp8");
  n = ReadNotes("enable_attention_dp with attention_dp_config.enable_balance (timeout_iters 60)");
  EXPECT_TRUE(n.adp_balance);
  EXPECT_EQ(n.overlap, "");
  n = ReadNotes("FA3 (final results include FP8 attention)");
  EXPECT_TRUE(n.fp8_attention);
  EXPECT_FALSE(n.fp8_kv);
  n = ReadNotes("served without two-batch overlap, not enable_balance, no fp8 attention");
  EXPECT_EQ(n.Text(), "");
  EXPECT_EQ(ReadNotes("").Text(), "");
  // Benchmark request counts: the number directly before "requests" (thousands commas allowed).
  EXPECT_EQ(ReadNotes("DEP4; table 6,430 tok/s/GPU; 3000 requests. Source: x").requests, 3000);
  EXPECT_EQ(ReadNotes("1,500 requests").requests, 1500);
  EXPECT_EQ(ReadNotes("all requests at once, v2 requests").requests, 0);
  EXPECT_EQ(ReadNotes("3000 requests").Text(), "requests=3000");
  // SGLang's receive interval, as the flag or its name with "=".
  EXPECT_EQ(ReadNotes("launched with --scheduler-recv-interval 30 --stream-interval 10")
                .recv_interval,
            30);
  EXPECT_EQ(ReadNotes("scheduler-recv-interval=10").Text(), "recv-interval=10");
  EXPECT_EQ(ReadNotes("no scheduler tuning").recv_interval, 1);
  EXPECT_EQ(ReadNotes("--scheduler-recv-interval (default)").recv_interval, 1);
  // The client's prompts: per client ("K x concurrency") or in all.
  n = ReadNotes("num prompts = 10 x concurrency (InferenceX single-node script)");
  EXPECT_EQ(n.prompts_per_client, 10);
  EXPECT_EQ(n.num_prompts, 0);
  EXPECT_EQ(n.Text(), "prompts=10x");
  n = ReadNotes("bench_serving --num-prompts 2000 --max-concurrency 64");
  EXPECT_EQ(n.num_prompts, 2000);
  EXPECT_EQ(n.prompts_per_client, 0);
  EXPECT_EQ(ReadNotes("num_prompts: 640").num_prompts, 640);
  EXPECT_EQ(ReadNotes("Num-Prompts=5 x concurrency").prompts_per_client, 5);
  EXPECT_EQ(ReadNotes("num prompts not stated").num_prompts, 0);
  EXPECT_EQ(ReadNotes("num prompts 2.5k").num_prompts, 0);
  EXPECT_EQ(ReadNotes("num prompts 0").num_prompts, 0);
}

TEST(Predict, BenchmarkRequestsBoundTheBatch) {
  // An offline benchmark of 9 requests on dp = 2 ranks never holds more than ceil(9 / 2) = 5
  // sequences per rank: the auto batch is the one the simulator picks under max_batch 5; a stated
  // batch is honoured as it is.
  Predictor pred({}, false);
  const Prediction p = pred.Predict(ScaleRow(
      "1,s,trtllm,h100,2,llama-3.1-8b,fp8,fp8,1,1,2,1,serve,1024,1024,,,output_tokens_per_s,100"
      ",,,,,,,,,,,,,,,,\"9 requests\"\n"));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.batch, 5);
  const Prediction q = pred.Predict(ScaleRow(
      "2,s,trtllm,h100,2,llama-3.1-8b,fp8,fp8,1,1,2,1,serve,1024,1024,,64,output_tokens_per_s,100"
      ",,,,,,,,,,,,,,,,\"9 requests\"\n"));
  ASSERT_TRUE(q.ok) << q.reason;
  EXPECT_EQ(q.batch, 64);
}

TEST(Predict, OfflineBenchmarksRunRequestByRequest) {
  // An offline benchmark of N requests queued at once (output tokens/s, no batch or concurrency
  // stated) is simulated request by request: with at most 8 running (max_batch 8) and fixed
  // lengths, 8 and 16 requests run in full waves of 8 (the same throughput up to the admission
  // ramp), while 12 run a wave of 8 and one of 4, whose decode steps read the same weights for
  // half the tokens: 12 / (T8 + T4) < 8 / T8 whenever T4 > T8 / 2.
  Predictor pred({}, false);
  auto run = [&](int n) {
    const Prediction p = pred.Predict(ScaleRow(fmt::format(
        "1,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,128,256,,,output_tokens_per_s,100"
        ",,,,,8,,,,,,,,,,,\"{} requests\"\n",
        n)));
    EXPECT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.lengths, fmt::format("offline: {} requests queued at once", n));
    return p.raw;
  };
  const double t8 = run(8), t12 = run(12), t16 = run(16);
  EXPECT_NEAR(t16 / t8, 1.0, 0.03);
  EXPECT_LT(t12, 0.9 * t8);
  // TensorRT-LLM's performance overview states no count in the row: its dataset sizes apply
  // (PerfOverviewRequests: 1,500 at 128/4096), and only to that source.
  const std::string cells =
      ",trtllm-0.17,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,128,4096,,,output_tokens_per_s,100" +
      kEmpty16 + "\n";
  const Prediction o = pred.Predict(
      ScaleRow("2,\"TensorRT-LLM v0.17 perf-overview (trtllm-bench throughput, FP8)\"" + cells));
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.lengths, "offline: 1500 requests queued at once");
  const Prediction b = pred.Predict(ScaleRow("3,a blog (trtllm-bench)" + cells));
  ASSERT_TRUE(b.ok) << b.reason;
  EXPECT_EQ(b.lengths, "");
  // Above the work limit (10^6 requests x 2,048 output tokens > 10^9 token-steps) the row keeps
  // the steady state and says so.
  const Prediction big = pred.Predict(ScaleRow(
      "4,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,128,2048,,,output_tokens_per_s,100" +
      kEmpty16.substr(1) + ",\"1,000,000 requests\"\n"));
  ASSERT_TRUE(big.ok) << big.reason;
  EXPECT_EQ(big.lengths, "");
  EXPECT_EQ(big.reason.rfind("static model: the offline run's 2e+09 decode token-steps", 0), 0u)
      << big.reason;
  // More requests than the benchmark client simulates (2 x 10^6 > 10^6, 2 x 10^8 token-steps):
  // the steady state too, not a miss.
  const Prediction many = pred.Predict(ScaleRow(
      "5,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,128,100,,,output_tokens_per_s,100" +
      kEmpty16.substr(1) + ",\"2,000,000 requests\"\n"));
  ASSERT_TRUE(many.ok) << many.reason;
  EXPECT_EQ(many.lengths, "");
  EXPECT_EQ(many.reason,
            "static model: the offline run's 2000000 requests exceed the benchmark client's 1000000");
}

TEST(Predict, NotesStateOverlapBalanceAndFp8Attention) {
  // The settings read from the notes reach the prediction: overlap in the strategy (only with
  // ep > 1), TensorRT-LLM's attention-DP balancing and FP8 attention math in the workload. Each is
  // checked against the same row with the setting stated another way.
  Predictor pred({}, false);
  auto row = [&](const std::string& cells, const std::string& notes) {
    return ScaleRow(cells + ",,,,,,,,,,,,,,,,\"" + notes + "\"\n");
  };
  const std::string dep8 =
      "1,s,trtllm,h200,8,deepseek-v3,fp8,fp8,1,1,8,8,serve,1024,1024,,64,output_tokens_per_s,100";
  const Prediction plain = pred.Predict(row(dep8, ""));
  const Prediction balanced = pred.Predict(row(dep8, "attention_dp_config.enable_balance"));
  ASSERT_TRUE(plain.ok && balanced.ok) << plain.reason << balanced.reason;
  // Unbalanced TensorRT-LLM waits for the slowest rank's prefill chunk: balancing is faster.
  EXPECT_GT(balanced.raw, plain.raw);
  const Prediction tbo = pred.Predict(row(dep8, "two-batch overlap"));
  ASSERT_TRUE(tbo.ok) << tbo.reason;
  EXPECT_NE(tbo.strategy.find("overlap=tbo"), std::string::npos) << tbo.strategy;
  // No expert parallelism: nothing to overlap, the keyword is not applied.
  const Prediction tp8 = pred.Predict(row(
      "2,s,sglang,h200,8,deepseek-v3,fp8,bf16,8,1,1,1,decode,,,4096,64,output_tokens_per_s,100",
      "two-batch overlap"));
  ASSERT_TRUE(tp8.ok) << tp8.reason;
  EXPECT_EQ(tp8.strategy.find("overlap="), std::string::npos) << tp8.strategy;
  // FP8 FlashMLA: FP8 latent cache (as if kv_dtype said fp8) and FP8 attention math, which only
  // makes the compute-bound MLA decode faster.
  const std::string sg =
      "3,s,sglang,h200,8,deepseek-v3,fp8,{},1,1,8,8,decode,,,4096,64,output_tokens_per_s,100";
  auto with_kv = [&](const std::string& kv) {
    std::string c = sg;
    return c.replace(c.find("{}"), 2, kv);
  };
  const Prediction kv8 = pred.Predict(row(with_kv("fp8"), ""));
  const Prediction flash = pred.Predict(row(with_kv(""), "FP8 FlashMLA"));
  ASSERT_TRUE(kv8.ok && flash.ok) << kv8.reason << flash.reason;
  EXPECT_GT(flash.raw, kv8.raw);
}

TEST(GpuOfLabel, APresetAmongTheWords) {
  EXPECT_EQ(GpuOfLabel("h100"), "h100");
  EXPECT_EQ(GpuOfLabel("H100-SXM5-80GB"), "h100");
  EXPECT_EQ(GpuOfLabel("AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(GpuOfLabel("HGX B300"), "b300");
  EXPECT_EQ(GpuOfLabel("nvidia-b300"), "b300");
  EXPECT_EQ(GpuOfLabel("GB300 NVL72"), "gb300");
  EXPECT_EQ(GpuOfLabel("mi300"), "mi300");  // not a preset: the label, for the miss
  EXPECT_EQ(GpuOfLabel(""), "");
  // Rows that spell one GPU two ways predict the same and score in one group.
  auto row = [](const char* id, const char* gpu) {
    return ScaleRow(fmt::format("{},s,vllm,{},1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,8,"
                                "output_tokens_per_s,100",
                                id, gpu) +
                    kEmpty16 + "\n");
  };
  Predictor pred({}, true);
  std::vector<RowResult> res;
  for (const Measurement& m : {row("1", "h200"), row("2", "NVIDIA HGX H200")})
    res.push_back({m, pred.Predict(m), 0});
  ASSERT_TRUE(res[0].pred.ok && res[1].pred.ok) << res[1].pred.reason;
  EXPECT_EQ(res[0].pred.predicted, res[1].pred.predicted);
  const Summary s = Summarize(res);
  ASSERT_EQ(s.by_gpu.size(), 1u);
  EXPECT_EQ(s.by_gpu.begin()->first, "h200");
}

TEST(Parse, ThousandsSeparatorsButNotDecimalCommas) {
  auto parse = [](const std::string& value) {
    return ParseMeasurements(std::string(kHeader35) +
                                 "1,s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,8,"
                                 "output_tokens_per_s,\"" + value + "\"" + kEmpty16 + "\n",
                             "t.csv");
  };
  EXPECT_DOUBLE_EQ(parse("1,253.1")->front().value, 1253.1);
  EXPECT_DOUBLE_EQ(parse("12,345,678")->front().value, 12345678);
  EXPECT_DOUBLE_EQ(parse("253.1")->front().value, 253.1);
  for (const char* bad : {"1,5", "1,23", "1234,567", "1,234,56", ",123", "1,234.5,6"}) {
    const auto r = parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("column 'value'"), std::string::npos) << bad;
  }
}

TEST(Parse, BenchmarkClientResultKeysAreTheFormatsMetrics) {
  auto metric = [](const std::string& m) {
    const auto r = ParseMeasurements(std::string(kHeader35) +
                                         "1,s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,"
                                         "1024,,8," + m + ",1" + kEmpty16 + "\n",
                                     "t.csv");
    EXPECT_TRUE(r.ok()) << m;
    return r.ok() ? r->front().metric : std::string();
  };
  EXPECT_EQ(metric("mean_tpot_ms"), "tpot_ms");
  EXPECT_EQ(metric("Median_TTFT_ms"), "p50_ttft_ms");
  EXPECT_EQ(metric("mean_e2el_ms"), "e2e_ms");            // vLLM
  EXPECT_EQ(metric("p99_e2el_ms"), "p99_e2e_ms");
  EXPECT_EQ(metric("median_e2e_latency_ms"), "p50_e2e_ms");  // SGLang
  EXPECT_EQ(metric("mean_itl_ms"), "itl_ms");
  EXPECT_EQ(metric("request_throughput"), "requests_per_s");
  EXPECT_EQ(metric("output_throughput"), "output_tokens_per_s");
  EXPECT_EQ(metric("output_token_throughput"), "output_tokens_per_s");
  EXPECT_EQ(metric("input_throughput"), "input_tokens_per_s");
  EXPECT_EQ(metric("total_token_throughput"), "total_tokens_per_s");
  EXPECT_EQ(metric("total_throughput"), "total_tokens_per_s");
  EXPECT_EQ(metric("output_tokens_per_s_per_gpu"), "output_tokens_per_s_per_gpu");  // unchanged
  EXPECT_EQ(metric("std_ttft_ms"), "std_ttft_ms");  // not a metric l2s predicts: a miss later
}

TEST(Predict, AutoDtypesAreTheEnginesChoice) {
  // kv_dtype "auto" (the engines' kv_cache_dtype=auto) is an empty cell: the engine's default.
  Predictor pred({}, true);
  auto row = [](const char* kv) {
    return ScaleRow(fmt::format("1,s,vllm,h100,1,llama-3.1-8b,fp8,{},1,1,1,1,serve,1024,1024,,8,"
                                "output_tokens_per_s,100",
                                kv) +
                    kEmpty16 + "\n");
  };
  const Prediction empty = pred.Predict(row("")), autokv = pred.Predict(row("auto"));
  ASSERT_TRUE(empty.ok && autokv.ok) << autokv.reason;
  EXPECT_EQ(autokv.predicted, empty.predicted);
}

TEST(Predict, ModelConfigSpellingsFindTheOneFile) {
  // The file name of the format, or the same without ".json", with a folder, or without its
  // "<org>--" prefix (case ignored): one config, one prediction.
  Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, true);
  auto row = [](const std::string& config) {
    return ScaleRow("1,s,vllm,h100,1," + config +
                    ",fp8,fp8,1,1,1,1,serve,1024,1024,,8,output_tokens_per_s,100" + kEmpty16 +
                    "\n");
  };
  const Prediction want = pred.Predict(row("meta-llama--Meta-Llama-3.1-8B.json"));
  ASSERT_TRUE(want.ok) << want.reason;
  for (const char* c : {"meta-llama--Meta-Llama-3.1-8B", "hf/meta-llama--Meta-Llama-3.1-8B.json",
                        "Meta-Llama-3.1-8B.json", "meta-llama-3.1-8b"}) {
    const Prediction got = pred.Predict(row(c));
    ASSERT_TRUE(got.ok) << c << ": " << got.reason;
    EXPECT_EQ(got.predicted, want.predicted) << c;
  }
  EXPECT_FALSE(pred.Predict(row("Meta-Llama-3.1-9B")).ok);
}

TEST(Predict, ConcurrencyAndMaxBatch) {
  Predictor pred({}, false);
  // concurrency 64 over dp 2: 32 sequences per attention-dp rank.
  const Prediction c = pred.Predict(ScaleRow(
      "1,s,trtllm,h100,2,llama-3.1-8b,fp8,fp8,1,1,2,1,serve,1024,1024,,,output_tokens_per_s,100,,,,,"
      ",,64,,,,,,,,,\n"));
  ASSERT_TRUE(c.ok) << c.reason;
  EXPECT_EQ(c.batch, 32);
  // max_batch bounds the automatic batch.
  const Prediction m = pred.Predict(ScaleRow(
      "2,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,1024,,,output_tokens_per_s,100,,,,,"
      "16,,,,,,,,,,,\n"));
  ASSERT_TRUE(m.ok) << m.reason;
  EXPECT_LE(m.batch, 16);
  EXPECT_GE(m.batch, 1);
}

TEST(Predict, EveryClientMetricComesFromTheOneRun) {
  // A row stating a concurrency: its per-user speed is 1 / the mean TPOT of the same client run
  // (not the steady state at ceil(concurrency / dp)), and its input tokens/s that run's prompts
  // over the same window as its output tokens/s (lengths uniform 0.8-1.0 x 2048 in / 256 out:
  // about 8x the output rate).
  Predictor pred({}, false);
  auto row = [](const char* id, const char* metric) {
    return ScaleRow(fmt::format(
        "{},s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,2048,256,,,{},100,,,,,,,16,,,,,,,,,"
        "\"random-range-ratio 0.8\"\n",
        id, metric));
  };
  const Prediction tpot = pred.Predict(row("1", "tpot_ms"));
  const Prediction user = pred.Predict(row("2", "tokens_per_s_per_user"));
  const Prediction out = pred.Predict(row("3", "output_tokens_per_s"));
  const Prediction in = pred.Predict(row("4", "input_tokens_per_s"));
  ASSERT_TRUE(tpot.ok && user.ok && out.ok && in.ok) << user.reason << in.reason;
  EXPECT_NEAR(user.raw, 1000 / tpot.raw, 1e-9 * user.raw);
  EXPECT_NE(user.lengths.find("client: 16 x 10 prompts"), std::string::npos) << user.lengths;
  EXPECT_GT(in.raw / out.raw, 6.0);
  EXPECT_LT(in.raw / out.raw, 10.0);
  // Its total tokens/s is the sum of the two, its requests/s the output rate over the mean
  // output (0.9 x 256 tokens; the window's requests and tokens differ by the edges: 5%).
  const Prediction total = pred.Predict(row("5", "total_tokens_per_s"));
  const Prediction rps = pred.Predict(row("6", "requests_per_s"));
  ASSERT_TRUE(total.ok && rps.ok) << total.reason << rps.reason;
  EXPECT_NEAR(total.raw, in.raw + out.raw, 1e-9 * total.raw);
  EXPECT_NEAR(rps.raw / (out.raw / (0.9 * 256)), 1.0, 0.05);
  EXPECT_NE(rps.lengths.find("client: 16 x 10 prompts"), std::string::npos) << rps.lengths;
}

TEST(ClientSpec, TheWorkLimitSendsFewerPromptsPerClient) {
  // 1024/8192 P/D at 16,384 clients: 10 prompts each are 1.34 x 10^9 decode token-steps, above
  // kMaxClientTokenSteps (10^9): the run sends floor(10^9 / 8192 / 16384) = 7 per client and
  // says so; at 4,096 clients (3.4 x 10^8) all 10. A stated prompt count is cut to what the
  // limit holds (10^9 / 8192 = 122,070), never below one per client.
  auto row = [](int clients, const char* notes) {
    return ScaleRow(fmt::format(
        "1,s,sglang,h200,16,deepseek-v3,fp8,fp8,,,,,disagg,1024,8192,,,ttft_ms,100,,,,,,,{},8,8,1,"
        "8,8,8,1,8,\"{}\"\n",
        clients, notes));
  };
  const serve::BenchClientSpec big = ClientSpec(row(16384, "random-range-ratio 0.8"), 1);
  EXPECT_EQ(big.concurrency, 16384);
  EXPECT_EQ(big.prompts_per_client, 7);
  EXPECT_EQ(StatedPrompts(row(16384, "random-range-ratio 0.8"), 1), 163840);
  EXPECT_NE(ClientLengths(row(16384, "random-range-ratio 0.8"), 1)
                .find("client: 16384 x 7 prompts (of 163840: the simulation's work limit)"),
            std::string::npos);
  EXPECT_LE(ClientWork(row(16384, ""), 1), kMaxClientTokenSteps);
  const serve::BenchClientSpec small = ClientSpec(row(4096, ""), 1);
  EXPECT_EQ(small.prompts_per_client, 10);
  EXPECT_EQ(ClientLengths(row(4096, ""), 1).find("work limit"), std::string::npos);
  // The lengths as the client draws them: fixed where the row states no range.
  EXPECT_EQ(ClientLengths(row(4096, ""), 1), "client: 4096 x 10 prompts, isl/osl fixed at nominal");
  EXPECT_EQ(ClientLengths(row(4096, "random-range-ratio 0.8"), 1),
            "client: 4096 x 10 prompts, isl/osl uniform 0.8-1.0 x nominal");
  // One prompt per client is the floor: 200,000 clients x 8,192 stays above the limit, which
  // keeps the static model's figure (PredictDisagg).
  EXPECT_EQ(ClientSpec(row(200000, ""), 1).prompts_per_client, 1);
  EXPECT_GT(ClientWork(row(200000, ""), 1), kMaxClientTokenSteps);
  // A stated total: 500,000 prompts over 16,384 clients -> 122,070 (10^9 / 8192).
  const serve::BenchClientSpec stated = ClientSpec(row(16384, "num_prompts 500000"), 1);
  EXPECT_EQ(stated.num_prompts, 122070);
  EXPECT_NE(ClientLengths(row(16384, "num_prompts 500000"), 1)
                .find("16384 clients, 122070 prompts (of 500000: the simulation's work limit)"),
            std::string::npos);
}

TEST(Predict, PercentileLatenciesComeFromTheClientsRequests) {
  // A concurrency row's p50 / p90 / p99 TTFT and TPOT are the percentiles of its client run's
  // requests (ordered, the mean between p50 and p99 here); "mean_" is the format's own metric and
  // "median_" the 50th percentile; a row without a client (a stated batch) is a steady state,
  // where every percentile is the value.
  Predictor pred({}, false);
  auto row = [](const char* metric, const char* clients, const char* batch) {
    return ScaleRow(fmt::format(
        "1,s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,4096,256,,{},{},100,,,,,,,{},,,,,,,,,"
        "\"random-range-ratio 0.5\"\n",
        batch, metric, clients));
  };
  auto raw = [&](const char* metric, const char* clients = "24", const char* batch = "") {
    const Prediction p = pred.Predict(row(metric, clients, batch));
    EXPECT_TRUE(p.ok) << metric << ": " << p.reason;
    return p.raw;
  };
  for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}) {
    const std::string s = m;
    const double mean = raw(m), p50 = raw(("p50_" + s).c_str()), p90 = raw(("p90_" + s).c_str()),
                 p99 = raw(("p99_" + s).c_str());
    EXPECT_LE(p50, p90) << m;
    EXPECT_LE(p90, p99) << m;
    EXPECT_LT(p50, p99) << m;
    EXPECT_GT(mean, 0.5 * p50) << m;
    EXPECT_LT(mean, p99) << m;
    EXPECT_EQ(raw(("mean_" + s).c_str()), mean) << m;
    EXPECT_EQ(raw(("median_" + s).c_str()), p50) << m;
    EXPECT_EQ(raw(("p99_" + s).c_str(), "", "8"), raw(m, "", "8")) << m;
  }
}

TEST(Predict, InterTokenAndEndToEndLatencyComeFromTheSameRun) {
  // The client's means relate as a request's latencies do: without MTP every step emits one token,
  // so the mean inter-token gap is the mean TPOT (one over gaps, one over requests: within 3%);
  // with MTP a step emits 2.58 tokens (two drafts) in one burst, so the gap is about that many
  // TPOTs. End-to-end = TTFT + (output tokens - 1) x TPOT, per request: with outputs uniform in
  // 0.8-1.0 x 256 the mean is TTFT + (0.9 x 256 - 1) x TPOT, within 3% (TPOT varies by request).
  // vLLM's "e2el" spelling is the same metric; a steady state (a stated batch) has the same
  // relations exactly.
  Predictor pred({}, false);
  auto raw = [&](const char* metric, const char* mtp = "", const char* clients = "16",
                 const char* batch = "") {
    const Prediction p = pred.Predict(ScaleRow(fmt::format(
        "1,s,vllm,h200,8,deepseek-v3,fp8,fp8,8,1,1,8,serve,1024,256,,{},{},100,,,{},,,,{},,,,,,,,,"
        "\"random-range-ratio 0.8\"\n",
        batch, metric, mtp, clients)));
    EXPECT_TRUE(p.ok) << metric << ": " << p.reason;
    return p.raw;
  };
  const double ttft = raw("ttft_ms"), tpot = raw("tpot_ms"), itl = raw("itl_ms"),
               e2e = raw("e2e_ms");
  EXPECT_NEAR(itl / tpot, 1.0, 0.03);
  EXPECT_NEAR(e2e / (ttft + (0.9 * 256 - 1) * tpot), 1.0, 0.03);
  EXPECT_EQ(raw("mean_e2el_ms"), e2e);
  EXPECT_EQ(raw("p99_e2el_ms"), raw("p99_e2e_ms"));
  EXPECT_NEAR(raw("itl_ms", "2") / raw("tpot_ms", "2"), 2.58, 0.15);
  // Steady state at a stated batch (no client): exact.
  const double s_tpot = raw("tpot_ms", "2", "", "8"), s_ttft = raw("ttft_ms", "2", "", "8");
  EXPECT_DOUBLE_EQ(raw("itl_ms", "2", "", "8"), s_tpot * 2.58);
  // (its output length is the mean, 0.9 x 256, as a whole number of tokens)
  EXPECT_NEAR((raw("e2e_ms", "2", "", "8") - s_ttft) / s_tpot, 0.9 * 256 - 1, 0.5);
}

TEST(Predict, AggregatedConcurrencyIsPerInstance) {
  // MEASUREMENTS.md: `concurrency` is the clients of one instance. Two replicas at 16 clients
  // each run 32 clients over two instances: twice the output rate of one, the same TPOT (within
  // the routing's noise), as the static batch ceil(16 / dp) per instance says.
  Predictor pred({}, false);
  auto row = [](const char* id, int gpus, int replicas, const char* metric) {
    return ScaleRow(fmt::format(
        "{},s,vllm,h100,{},llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,256,,,{},100,{},,,,,,16,,,,,,"
        ",,,\"random-range-ratio 0.8\"\n",
        id, gpus, metric, replicas));
  };
  const Prediction one = pred.Predict(row("1", 1, 1, "output_tokens_per_s"));
  const Prediction two = pred.Predict(row("2", 2, 2, "output_tokens_per_s"));
  const Prediction tpot1 = pred.Predict(row("3", 1, 1, "tpot_ms"));
  const Prediction tpot2 = pred.Predict(row("4", 2, 2, "tpot_ms"));
  ASSERT_TRUE(one.ok && two.ok && tpot1.ok && tpot2.ok) << two.reason;
  EXPECT_NEAR(two.raw / one.raw, 2.0, 0.1);
  EXPECT_NEAR(tpot2.raw / tpot1.raw, 1.0, 0.05);
  EXPECT_NE(two.lengths.find("client: 32 x 10 prompts (16 per instance x 2)"), std::string::npos)
      << two.lengths;
}

TEST(Predict, SpeculationOnAModelWithoutMtpLayersRanADraftModel) {
  // `mtp` is "speculative (MTP / draft) tokens per decode step" (MEASUREMENTS.md): on Llama, which
  // has no MTP layers, the row ran a draft model it does not name. It is predicted with the
  // EAGLE-3 draft --draft-model prices (and says so), not missed; at 4 clients the drafts shorten
  // TPOT (2.82 tokens a step for three draft passes of one layer).
  Predictor pred({}, false);
  auto row = [](const char* id, const char* mtp) {
    return ScaleRow(fmt::format(
        "{},s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1024,256,,,tpot_ms,5,,,{},,,,4,,,,,,"
        ",,,\"random-range-ratio 0.8\"\n",
        id, mtp));
  };
  const Prediction plain = pred.Predict(row("1", ""));
  const Prediction drafted = pred.Predict(row("2", "3"));
  ASSERT_TRUE(plain.ok) << plain.reason;
  ASSERT_TRUE(drafted.ok) << drafted.reason;
  EXPECT_LT(drafted.raw, plain.raw);
  EXPECT_NE(drafted.reason.find("mtp 3 drafted by an EAGLE-3 draft model"), std::string::npos)
      << drafted.reason;
  EXPECT_EQ(plain.reason.find("draft"), std::string::npos) << plain.reason;
}

TEST(Predict, ClientsBeyondTheKvMemoryWaitInsteadOfMissing) {
  // Llama-3.1-8B FP8 on one H100 at 8k/1k: 2,048 clients need about 1.2 TB of KV at once. The
  // engine admits what fits and the other clients wait: the row is predicted from its client run
  // (the steady state checked at the batch that fits), not missed for memory. The run's output
  // rate is no higher than with half the clients (the admitted batch is the same).
  Predictor pred({}, false);
  auto row = [](const char* id, int clients) {
    return ScaleRow(fmt::format(
        "{},s,vllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,8192,1024,,,output_tokens_per_s,100,"
        ",,,,,,{},,,,,,,,,\"random-range-ratio 0.8\"\n",
        id, clients));
  };
  const Prediction many = pred.Predict(row("1", 2048));
  ASSERT_TRUE(many.ok) << many.reason;
  EXPECT_LT(many.batch, 2048);
  EXPECT_EQ(many.strategy.find("batch=auto"), many.strategy.find("batch="));
  const Prediction half = pred.Predict(row("2", 1024));
  ASSERT_TRUE(half.ok) << half.reason;
  EXPECT_LE(many.raw, half.raw * 1.05);
}

TEST(Predict, DisaggClientsBeyondTheDecodeKvMemoryWaitInsteadOfMissing) {
  // The same for a disaggregated row: one H100 prefill and one H100 decode instance of
  // Llama-3.1-8B FP8 at 8k/1k, 512 clients, far more KV than the decode GPU holds at once. The
  // decode instance admits what fits and the other clients wait: predicted from the client run
  // (the static model checked at the decode batch that fits), not missed for memory.
  Predictor pred({}, false);
  const Prediction p = pred.Predict(ScaleRow(
      "11,s,vllm,h100,2,llama-3.1-8b,fp8,fp8,,,,,disagg,8192,1024,,,output_tokens_per_s,100,"
      ",,,,,,512,1,1,1,1,1,1,1,1,\"random-range-ratio 0.8\"\n"));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_LT(p.batch, 512);
  EXPECT_NE(p.strategy.find("decode pp=1,tp=1,dp=1,ep=1,batch=auto"), std::string::npos)
      << p.strategy;
}

TEST(Predict, DisaggDecodeWorkersRunTheirLauncherLimitNotTheSpeculativeDefault) {
  // SGLang P/D, DeepSeek-V3 FP8 on H200: one TP8 prefill and one TP8 decode worker with MTP 1, 96
  // clients at 1k/256. An aggregated SGLang server with MTP and no --max-running-requests runs 48
  // at a time (DefaultMaxRunning); the P/D launchers set the limit on every worker, so unstated
  // it is the engine's batch cap: the same client run as a stated 4,096, and none of the 96 waits
  // for a slot. Stated 48, half the clients wait for whole requests (256 decode steps, seconds).
  Predictor pred({}, false);
  const auto ttft = [&](const std::string& max_batch) {
    const Prediction p = pred.Predict(ScaleRow(
        "1,s,sglang,h200,16,deepseek-v3,fp8,fp8,,,,,disagg,1024,256,,,ttft_ms,100,,,1,," +
        max_batch + ",,96,8,8,1,8,8,8,1,8,\"random-range-ratio 0.8\"\n"));
    EXPECT_TRUE(p.ok) << p.reason;
    return p.predicted;
  };
  const double unstated = ttft(""), cap = ttft("4096"), spec48 = ttft("48");
  EXPECT_DOUBLE_EQ(unstated, cap);
  EXPECT_GT(spec48, 5 * unstated) << unstated;
}

TEST(Predict, TrtllmBenchRowsRunWithTheBenchEstimateOfTheLimits) {
  // A trtllm-bench throughput row that states no limits runs with trtllm-bench's own estimate
  // (trtllm_bench.h). Llama-3.1-70B FP8 on 2 H200s, TP2, FP8 KV, 1024/1024: 768 sequences and
  // 2,048 tokens per step (hand-derived in trtllm_bench_test.cc), so the automatic batch is at
  // most 768, and the prediction says where the limits came from.
  Predictor pred({}, false);
  const std::string cells =
      ",h200,2,llama-3.1-70b,fp8,fp8,2,1,1,1,serve,1024,1024,,,output_tokens_per_s,100,,,,,";
  const Prediction b = pred.Predict(ScaleRow("1,perf overview (trtllm-bench),trtllm" + cells +
                                             ",,,,,,,,,,,\n"));
  ASSERT_TRUE(b.ok) << b.reason;
  EXPECT_EQ(b.limits, "trtllm-bench max_batch 768, max_num_tokens 2048");
  EXPECT_LE(b.batch, 768);
  // The same row from another harness keeps the engine's defaults; a stated max_batch wins.
  const Prediction o = pred.Predict(ScaleRow("2,a blog,trtllm" + cells + ",,,,,,,,,,,\n"));
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.limits, "");
  const Prediction s = pred.Predict(ScaleRow("3,perf overview (trtllm-bench),trtllm" + cells +
                                             "16,,,,,,,,,,,\n"));
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_EQ(s.limits, "");
  EXPECT_LE(s.batch, 16);
}

TEST(Predict, ReplicasMultiplyTotalsOnly) {
  // 4 GPUs as 2 replicas of tp 2: totals = 2 x one tp-2 instance; per-GPU figures and per-user
  // speed are those of one instance.
  const Evaluation one = Direct(2, 2, 8);
  ASSERT_TRUE(one.valid());
  Predictor pred({}, false);
  auto row = [&](const std::string& metric) {
    return pred.Predict(ScaleRow("1,s,trtllm,h100,4,llama-3.1-8b,fp8,fp8,2,1,,1,serve,1024,1024,,8," +
                                 metric + ",100,2" + kEmpty16.substr(1) + "\n"));
  };
  const Prediction t = row("output_tokens_per_s");
  ASSERT_TRUE(t.ok) << t.reason;
  EXPECT_EQ(t.replicas, 2);
  EXPECT_NEAR(t.raw, 2 * one.tokens_per_s, 1e-9 * t.raw);
  const Prediction g = row("output_tokens_per_s_per_gpu");
  ASSERT_TRUE(g.ok) << g.reason;
  EXPECT_NEAR(g.raw, one.tokens_per_s / 2, 1e-9 * g.raw);
  const Prediction u = row("tokens_per_s_per_user");
  ASSERT_TRUE(u.ok) << u.reason;
  EXPECT_NEAR(u.raw, 1 / one.tpot_s, 1e-9 * u.raw);
  // gpus must be replicas x tp x pp x dp.
  const Prediction bad = pred.Predict(ScaleRow(
      "2,s,trtllm,h100,6,llama-3.1-8b,fp8,fp8,2,1,2,1,serve,1024,1024,,8,output_tokens_per_s,100,2" +
      kEmpty16.substr(1) + "\n"));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.reason.find("replicas*tp*pp*dp = 8 but the row has 6 GPUs"), std::string::npos)
      << bad.reason;
}

TEST(Predict, BadDisaggPoolIsAnExplainedMissAndFp4OnHopperRunsWeightOnly) {
  Predictor pred({}, true);
  // Disagg rows are predicted (DisaggRowsAreCostedByTheDisaggregatedModel); a decode pool of
  // tp 6, which does not divide llama-3.1-8b's 32 heads, is a miss naming the pool.
  const Prediction d = pred.Predict(ScaleRow(
      "1,s,dynamo,h100,14,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "64,8,8,1,1,6,6,1,1,\n"));
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.reason.find("invalid decode strategy"), std::string::npos) << d.reason;
  // An ep stated for a dense model splits no experts: the pool runs as ep 1 (the engine's
  // --ep-size does nothing there), predicted as the same row without it.
  const Prediction dense_ep = pred.Predict(ScaleRow(
      "2,s,dynamo,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,"
      ",,,64,8,8,1,1,16,1,16,16,\n"));
  const Prediction dense = pred.Predict(ScaleRow(
      "3,s,dynamo,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,"
      ",,,64,8,8,1,1,16,1,16,1,\n"));
  ASSERT_TRUE(dense_ep.ok && dense.ok) << dense_ep.reason << dense.reason;
  EXPECT_EQ(dense_ep.predicted, dense.predicted);
  const Prediction agg_ep = pred.Predict(ScaleRow(
      "4,s,vllm,h100,8,llama-3.1-8b,fp8,fp8,8,1,1,8,serve,1024,1024,,8,output_tokens_per_s,5000" +
      kEmpty16 + "\n"));
  const Prediction agg = pred.Predict(ScaleRow(
      "5,s,vllm,h100,8,llama-3.1-8b,fp8,fp8,8,1,1,1,serve,1024,1024,,8,output_tokens_per_s,5000" +
      kEmpty16 + "\n"));
  ASSERT_TRUE(agg_ep.ok && agg.ok) << agg_ep.reason;
  EXPECT_EQ(agg_ep.predicted, agg.predicted);
  EXPECT_EQ(agg_ep.reason, "ep 8 ignored: a dense model");
  // A row's weight_dtype is its checkpoint's format (the config names the architecture): FP4
  // weights on Hopper run weight-only (FP8 GEMMs reading half the weight bytes), so the row is
  // predicted, no slower than the same row in FP8; a B200 runs FP4 GEMMs, faster still.
  auto row = [](const char* id, const char* gpu, const char* dtype) {
    return ScaleRow(fmt::format("{},s,trtllm,{},1,llama-3.1-8b,{},,1,1,1,1,serve,1024,1024,,,"
                                "output_tokens_per_s,100",
                                id, gpu, dtype) +
                    kEmpty16 + "\n");
  };
  const Prediction f = pred.Predict(row("2", "h100", "fp4"));
  const Prediction f8 = pred.Predict(row("3", "h100", "fp8"));
  const Prediction b = pred.Predict(row("4", "b200", "fp4"));
  ASSERT_TRUE(f.ok && f8.ok && b.ok) << f.reason << f8.reason << b.reason;
  EXPECT_GE(f.raw, 0.99 * f8.raw);
  EXPECT_GT(b.raw, f.raw);
}

TEST(SharedFiles, BothFormatsParseAndEveryRowIsReported) {
  for (const char* f : {"measurements.csv", "measurements-scale.csv"}) {
    const std::vector<Measurement> rows = SharedRows(f);
    if (rows.empty()) continue;
    EXPECT_GE(rows.size(), 25u) << f;
    Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, true);
    const std::vector<RowResult> res = PredictAll(rows, &pred);
    ASSERT_EQ(res.size(), rows.size());
    for (const RowResult& r : res) {
      // No GPU of the files is unknown and no metric unsupported any more.
      if (!r.pred.ok) {
        EXPECT_EQ(r.pred.reason.find("unknown GPU"), std::string::npos) << r.row.id;
        EXPECT_EQ(r.pred.reason.find("unsupported metric"), std::string::npos) << r.row.id;
      }
    }
  }
}

// The FP4 rows of measurements-scale.csv rest on two simulator rules (docs/dev/COST_MODEL.md): FP4
// experts dispatch FP4 payloads (0.5 + 1/32 bytes per element instead of FP8's 1) on GPUs with FP4
// tensor cores, and FP8 on Hopper, where FP4 weights run weight-only.
double DispatchBytes(const std::string& gpu, DType weight) {
  Problem p;
  p.model = *LoadModel("qwen3-30b-a3b");
  p.cluster = *MakeCluster(gpu, 4);
  p.workload.mode = Mode::kDecode;
  p.workload.context = 1024;
  p.workload.weight = weight;
  Strategy s = *FromText("tp=1,dp=4,ep=4", 4);
  ClearAbsentOps(p.model, &s);
  const Simulator sim(std::move(p));
  Simulator::Detail d;
  sim.Explain(s, 16, &d);
  for (int k = 0; k < d.program.num_kinds; ++k) {
    const Section& sec = d.program.layers[k];
    for (int i = 0; i < sec.num_steps; ++i)
      if (sec.steps[i].kind == StepKind::kComm && sec.steps[i].comm == CommKind::kDispatch)
        return sec.steps[i].comm_bytes;
  }
  return 0;
}

TEST(Fp4, DispatchPayload) {
  const double fp8 = DispatchBytes("b200", DType::kFP8);
  ASSERT_GT(fp8, 0);
  EXPECT_NEAR(DispatchBytes("b200", DType::kFP4) / fp8, 0.5 + 1.0 / 32, 1e-12);
  EXPECT_NEAR(DispatchBytes("b200", DType::kBF16) / fp8, 2.0, 1e-12);
  EXPECT_NEAR(DispatchBytes("h100", DType::kFP4) / DispatchBytes("h100", DType::kFP8), 1.0, 1e-12);
}

TEST(Ranks, TiesGetMeanPositions) {
  EXPECT_EQ(Ranks({10, 20, 20, 30}), (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(Ranks({3, 1, 2}), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(Ranks({5, 5, 5}), (std::vector<double>{2, 2, 2}));
}

TEST(Spearman, HandDerived) {
  // x ranks 1..5 (deviations -2,-1,0,1,2); y = {5,6,7,8,7} ranks {1,2,3.5,5,3.5} (deviations
  // -2,-1,0.5,2,0.5). sxy = 4+1+0+2+1 = 8, sxx = 10, syy = 9.5: rho = 8/sqrt(95) = 0.82078.
  EXPECT_NEAR(Spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 8.0 / std::sqrt(95.0), 1e-12);
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3}, {30, 20, 10}), -1.0);
  EXPECT_TRUE(std::isnan(Spearman({1, 2, 3}, {7, 7, 7})));
  EXPECT_TRUE(std::isnan(Spearman({1}, {1})));
}

TEST(Spearman, InvariantUnderMonotoneMaps) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> x(9), y(9), fx(9), gy(9);
    for (int i = 0; i < 9; ++i) {
      x[i] = u(rng);
      y[i] = u(rng);
      fx[i] = std::exp(x[i]);        // increasing
      gy[i] = y[i] * y[i] * y[i];    // increasing
    }
    EXPECT_NEAR(Spearman(x, y), Spearman(fx, gy), 1e-12);
    EXPECT_NEAR(Spearman(x, fx), 1.0, 1e-12);
  }
}

TEST(Median, OddEvenEmpty) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
}

RowResult Row(const std::string& engine, int tp, double measured, double predicted, bool ok = true) {
  RowResult r;
  r.row.engine = engine;
  r.row.model_config = "m.json";
  r.row.gpu = "h100";
  r.row.mode = "serve";
  r.row.isl = 128;
  r.row.osl = 128;
  r.row.metric = "output_tokens_per_s";
  r.row.tp = tp;
  r.row.value = measured;
  r.pred.ok = ok;
  r.pred.raw = predicted;
  r.pred.predicted = predicted;
  r.error_pct = ok ? (predicted - measured) / measured * 100 : kMissAbsPctError;
  return r;
}

TEST(Summarize, MissesCountAsHundredPercent) {
  // Errors +10%, -20%, +30% and one MISS: |errors| {10, 20, 30, 100}, median (20+30)/2 = 25;
  // within 25%: 2 of 4. The four rows share a group with tp 1, 2, 4, 8: predicted
  // {110, 160, 390, 0 (miss)} vs measured {100, 200, 300, 400}: ranks {2,3,4,1} vs {1,2,3,4},
  // deviations {-0.5,0.5,1.5,-1.5} vs {-1.5,-0.5,0.5,1.5}: sxy = 0.75-0.25+0.75-2.25 = -1,
  // sxx = syy = 5: rho = -0.2.
  std::vector<RowResult> rs = {Row("trtllm", 1, 100, 110), Row("trtllm", 2, 200, 160),
                               Row("trtllm", 4, 300, 390), Row("trtllm", 8, 400, 0, false)};
  const Summary s = Summarize(rs);
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.predicted, 3);
  EXPECT_EQ(s.missed, 1);
  EXPECT_NEAR(s.median_abs_pct_error, 25.0, 1e-9);
  EXPECT_NEAR(s.mean_abs_pct_error, 40.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.share_within_25pct, 0.5);
  EXPECT_EQ(s.spearman_groups, 1);
  EXPECT_NEAR(s.spearman, -0.2, 1e-12);
  EXPECT_NEAR(s.spearman_pooled, -0.2, 1e-12);  // one group: pooled = the group's value
  // Per GPU (gpus not given: tp*pp*dp = tp): predicted {110, 80, 97.5, 0} ranks {4,2,3,1};
  // measured {100, 100, 75, 50} ranks {3.5,3.5,2,1}. Deviations {1.5,-0.5,0.5,-1.5} and
  // {1,1,-0.5,-1.5}: sxy = 1.5-0.5-0.25+2.25 = 3, sxx = 5, syy = 4.5: rho = 3/sqrt(22.5).
  EXPECT_NEAR(s.spearman_per_gpu, 3.0 / std::sqrt(22.5), 1e-12);
}

TEST(Summarize, GroupsNeedThreeTensorParallelSizes) {
  // Two tp values only: no rank-correlation group.
  std::vector<RowResult> rs = {Row("trtllm", 1, 100, 100), Row("trtllm", 2, 200, 200),
                               Row("trtllm", 2, 150, 150)};
  EXPECT_EQ(Summarize(rs).spearman_groups, 0);
  EXPECT_TRUE(std::isnan(Summarize(rs).spearman));
  // A different engine is a different group.
  rs.push_back(Row("vllm", 4, 400, 400));
  EXPECT_EQ(Summarize(rs).spearman_groups, 0);
  rs.push_back(Row("trtllm", 4, 400, 400));
  EXPECT_EQ(Summarize(rs).spearman_groups, 1);
  EXPECT_NEAR(Summarize(rs).spearman, 1.0, 1e-12);
}

TEST(Summarize, ScoresPerEngineAndRegime) {
  // Engine trtllm: errors {+10, -20} -> median 15, both within 25%.
  // Engine sglang: errors {-40} and one MISS -> |errors| {40, 100}: median 70, none within.
  // Regimes: the tp-only rows are the two trtllm ones; the sglang rows are attention-dp+ep.
  std::vector<RowResult> rs = {Row("trtllm-0.17", 1, 100, 110), Row("trtllm", 2, 100, 80),
                               Row("sglang", 1, 100, 60), Row("sglang-0.5", 1, 100, 0, false)};
  for (int i = 2; i < 4; ++i) {
    rs[i].row.dp = 8;
    rs[i].row.ep = 8;
  }
  const Summary s = Summarize(rs);
  ASSERT_EQ(s.by_engine.size(), 2u);
  const Scores& t = s.by_engine.at("trtllm");
  EXPECT_EQ(t.rows, 2);
  EXPECT_NEAR(t.median_abs_pct_error, 15.0, 1e-9);
  EXPECT_DOUBLE_EQ(t.share_within_25pct, 1.0);
  const Scores& g = s.by_engine.at("sglang");
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.missed, 1);
  EXPECT_NEAR(g.median_abs_pct_error, 70.0, 1e-9);
  EXPECT_DOUBLE_EQ(g.share_within_25pct, 0.0);
  ASSERT_EQ(s.by_regime.size(), 2u);
  EXPECT_EQ(s.by_regime.at("tp-only").rows, 2);
  EXPECT_EQ(s.by_regime.at("attention-dp+ep").rows, 2);
  EXPECT_NEAR(s.by_regime.at("attention-dp+ep").median_abs_pct_error, 70.0, 1e-9);
  // Overall: |errors| {10, 20, 40, 100}: median 30.
  EXPECT_NEAR(s.median_abs_pct_error, 30.0, 1e-9);
}

TEST(EngineFit, MedianRatioPerFamilyAndDefault) {
  // trtllm ratios measured/raw: 100/200, 100/100, 100/50 -> {0.5, 1, 2}: median 1.
  // sglang: one row 300/100 = 3 -> too few rows for its own factor.
  // Default: median of {0.5, 1, 2, 3} = 1.5. The MISS row is ignored.
  std::vector<RowResult> rs = {Row("trtllm-0.17", 1, 100, 200), Row("trtllm-0.18", 2, 100, 100),
                               Row("TensorRT-LLM", 4, 100, 50), Row("sglang-0.4", 1, 300, 100),
                               Row("trtllm", 8, 100, 0, false)};
  const EngineFitResult f = FitEngineFactors(rs);
  EXPECT_EQ(f.rows, 4);
  EXPECT_DOUBLE_EQ(f.default_factor, 1.5);
  ASSERT_EQ(f.families.size(), 2u);
  EXPECT_EQ(f.families[0].family, "sglang");
  EXPECT_EQ(f.families[0].rows, 1);
  EXPECT_FALSE(f.families[0].own_factor);
  EXPECT_EQ(f.families[1].family, "trtllm");
  EXPECT_EQ(f.families[1].rows, 3);
  EXPECT_TRUE(f.families[1].own_factor);
  EXPECT_DOUBLE_EQ(f.families[1].median_ratio, 1.0);
}

TEST(EngineFactor, SameFamilyRuleAsTheFit) {
  // Simulator::EngineFactor normalises names itself (the sim layer cannot see the CLI); it must
  // agree with EngineFamily, which the fit groups rows by.
  for (const char* name : {"trtllm-0.17", "TensorRT-LLM v0.17", "trt-llm", "TRTLLM_1.0",
                           "sglang-0.4.6", "vLLM 0.6.3", "vllm0.6", "lmdeploy-0.7"}) {
    EXPECT_DOUBLE_EQ(Simulator::EngineFactor(name), Simulator::EngineFactor(EngineFamily(name)))
        << name;
  }
  EXPECT_EQ(Simulator::EngineFactor(""), 1.0);  // no engine: the ideal engine
  EXPECT_EQ(Simulator::EngineFactor("none"), 1.0);
  // Unknown engines share the default.
  EXPECT_DOUBLE_EQ(Simulator::EngineFactor("some-new-engine-2.0"),
                   Simulator::EngineFactor("another-engine"));
}

TEST(EngineFactor, CommittedValuesMatchTheFit) {
  // The factors in Simulator::EngineFactor must be what `l2s validate --fit-engine-factors`
  // gives on the shared measurements with the current kernel and collective models (3%
  // tolerance). When this fails after a refit of the cost model, refit and update them.
  std::vector<Measurement> rows = SharedRows("measurements.csv");
  if (rows.empty()) GTEST_SKIP() << "no measurements.csv";
  Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, /*apply_engine_factor=*/false);
  const std::vector<RowResult> res = PredictAll(rows, &pred);
  const EngineFitResult fit = FitEngineFactors(res);
  if (fit.rows == 0) GTEST_SKIP() << "no row could be predicted (cost model not fitted yet?)";
  // Families whose factor is fitted on the frontier file (below) are not this file's.
  const std::set<std::string> frontier_fitted = {"atom", "sglang"};
  for (const EngineFit& f : fit.families) {
    if (frontier_fitted.count(f.family)) continue;
    const double committed = Simulator::EngineFactor(f.family);
    const double want = f.own_factor ? f.median_ratio : fit.default_factor;
    EXPECT_NEAR(committed, want, 0.03 * want) << f.family;
  }
  EXPECT_NEAR(Simulator::EngineFactor("unknown-engine"), fit.default_factor,
              0.03 * fit.default_factor);
}

TEST(EngineFactor, FrontierFamiliesMatchTheirFit) {
  // ATOM and SGLang have their throughput rows in the frontier file, and their factors are its
  // fit (`l2s validate --measurements measurements-frontier.csv --fit-engine-factors`), 3%.
  std::vector<Measurement> rows = SharedRows("measurements-frontier.csv");
  if (rows.empty()) GTEST_SKIP() << "no measurements-frontier.csv";
  std::vector<Measurement> thr;  // the fit reads throughput rows only
  for (const Measurement& m : rows)
    if (KindOfMetric(m.metric) == MetricKind::kThroughput) thr.push_back(m);
  Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, /*apply_engine_factor=*/false);
  const EngineFitResult fit = FitEngineFactors(PredictAll(thr, &pred));
  int checked = 0;
  for (const EngineFit& f : fit.families) {
    if (f.family != "atom" && f.family != "sglang") continue;
    ASSERT_TRUE(f.own_factor) << f.family;
    EXPECT_NEAR(Simulator::EngineFactor(f.family), f.median_ratio, 0.03 * f.median_ratio)
        << f.family;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(RequestOverhead, CommittedValuesMatchTheFit) {
  // Simulator::RequestOverheadSeconds(family) must be what `l2s validate --fit-request-overhead`
  // gives on the frontier file with the current cost model (3% tolerance): per engine family, the
  // median gap of its aggregated TTFT rows at low concurrency, predicted without the overhead;
  // families with too few rows get 0. When this fails after a change of the cost model or the
  // serving simulator, refit and update the committed values.
  const std::vector<Measurement> rows = SharedRows("measurements-frontier.csv");
  if (rows.empty()) GTEST_SKIP() << "no measurements-frontier.csv";
  std::vector<Measurement> fit_rows;
  for (const Measurement& m : rows)
    if (RequestOverheadFitRow(m)) fit_rows.push_back(m);
  ASSERT_GE(fit_rows.size(), 3u);
  Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, /*apply_engine_factor=*/true);
  pred.set_request_overhead(false);
  const RequestOverheadFit fit = FitRequestOverhead(PredictAll(fit_rows, &pred));
  ASSERT_EQ(fit.rows, static_cast<int>(fit_rows.size()));
  int own = 0;
  for (const RequestOverheadFamily& f : fit.families) {
    const double committed = Simulator::RequestOverheadSeconds(f.family);
    if (f.own) {
      ++own;
      EXPECT_NEAR(committed, f.overhead_s, 0.03 * f.overhead_s) << f.family;
    } else {
      EXPECT_EQ(committed, 0.0) << f.family;
    }
  }
  EXPECT_EQ(own, 2);  // SGLang (7 rows) and ATOM (6 rows)
  EXPECT_NEAR(fit.Of("sglang"), Simulator::RequestOverheadSeconds(std::string("sglang-0.5.2")),
              0.03 * fit.Of("sglang"));
  // ATOM is scheduled as vLLM but keeps its own overhead; vLLM and TensorRT-LLM have none.
  EXPECT_GT(Simulator::RequestOverheadSeconds(std::string("atom")), 0.0);
  EXPECT_EQ(Simulator::RequestOverheadSeconds(std::string("vllm")), 0.0);
  EXPECT_EQ(Simulator::RequestOverheadSeconds(std::string("dynamo+trtllm")), 0.0);
  EXPECT_EQ(Simulator::RequestOverheadSeconds(std::string("dynamo+sglang")),
            Simulator::RequestOverheadSeconds(Engine::kSglang));
  // Predicted with the overhead, the same rows' TTFTs are longer by about their family's h (a
  // time outside the engine's steps, not scaled by its factor; not exactly: the clients'
  // requests reach the engine later, which changes their queueing).
  Predictor with({std::string(L2S_SHARED_DIR) + "/models/hf"}, /*apply_engine_factor=*/true);
  const std::vector<RowResult> a = PredictAll(fit_rows, &pred), b = PredictAll(fit_rows, &with);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].pred.ok) continue;
    const double step = Simulator::RequestOverheadSeconds(a[i].row.engine) * 1e3;
    EXPECT_GE(b[i].pred.predicted - a[i].pred.predicted, 0.5 * step) << a[i].row.id;
    EXPECT_LE(b[i].pred.predicted - a[i].pred.predicted, 1.5 * step + 1e-9) << a[i].row.id;
  }
}

}  // namespace
}  // namespace l2s::validate

namespace l2s::validate {
namespace {

TEST(Notes, LengthDistributionAndMtpOn) {
  const NotedSettings n = ReadNotes("random ISL/OSL uniform in [0.8x,1.0x] of nominal; MTP on");
  EXPECT_DOUBLE_EQ(n.length_ratio, 0.8);
  EXPECT_TRUE(n.mtp_on);
  EXPECT_DOUBLE_EQ(ReadNotes("InferenceX random-range-ratio 0.75").length_ratio, 0.75);
  EXPECT_DOUBLE_EQ(ReadNotes("fixed lengths").length_ratio, 1.0);
  EXPECT_FALSE(ReadNotes("no MTP on this run").mtp_on);
}

TEST(Predict, LengthDistributionAveragesOverTheGrid) {
  // Lengths uniform in [0.7, 1] x nominal: the 3 x 3 grid at 0.75, 0.85, 0.95 x (1000, 2000).
  // Throughput = 1 / mean(1 / requests_per_s_i) x mean(osl_i); TPOT = mean of tpot_i.
  Predictor pred({}, false);
  const std::string tail = ",,,,,,,,,,,,,,,,\"random-range-ratio 0.7\"\n";
  const Prediction thr = pred.Predict(ScaleRow(
      "1,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1000,2000,,8,output_tokens_per_s,100" +
      tail));
  const Prediction tpot = pred.Predict(ScaleRow(
      "2,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,1000,2000,,8,tpot_ms,10" + tail));
  ASSERT_TRUE(thr.ok && tpot.ok) << thr.reason << tpot.reason;
  const int64_t isl[3] = {750, 850, 950}, osl[3] = {1500, 1700, 1900};
  double inv = 0, mean_osl = 0, mean_tpot = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      auto row = [&](const char* metric) {
        return fmt::format("3,s,trtllm,h100,1,llama-3.1-8b,fp8,fp8,1,1,1,1,serve,{},{},,8,{},1",
                           isl[i], osl[j], metric) +
               kEmpty16 + "\n";
      };
      const Prediction r = pred.Predict(ScaleRow(row("requests_per_s")));
      const Prediction t = pred.Predict(ScaleRow(row("tpot_ms")));
      ASSERT_TRUE(r.ok && t.ok);
      inv += 1.0 / r.raw;
      mean_osl += osl[j] / 9.0;
      mean_tpot += t.raw / 9.0;
    }
  }
  EXPECT_NEAR(thr.raw, 9.0 / inv * mean_osl, 1e-9 * thr.raw);
  EXPECT_NEAR(tpot.raw, mean_tpot, 1e-9 * tpot.raw);
  EXPECT_NE(thr.lengths.find("9-point"), std::string::npos) << thr.lengths;
}

TEST(Predict, UnstatedDegreesArePredictedAtTheirBest) {
  // A disagg row without prefill_tp: every candidate split of the first node is tried and the
  // highest-throughput one is reported; the choice is named.
  Predictor pred({}, false);
  const Prediction p = pred.Predict(ScaleRow(
      "1,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "64,8,,,,16,8,1,1,\n"));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_NE(p.chosen.find("prefill tp"), std::string::npos) << p.chosen;
  double best = 0;
  for (const char* split : {"1,8,1", "2,4,1", "4,2,1", "8,1,1"}) {
    const Prediction c = pred.Predict(ScaleRow(
        std::string("1,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,"
                    "output_tokens_per_s,5000,,,,,,,64,8,") +
        split + ",16,8,1,1,\n"));
    if (c.ok) best = std::max(best, c.raw);
  }
  EXPECT_NEAR(p.raw, best, 1e-9 * best);
  // Stated degrees are never replaced.
  const Prediction s = pred.Predict(ScaleRow(
      "2,s,ideal,h100,24,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "64,8,8,1,1,16,8,1,1,\n"));
  EXPECT_TRUE(s.chosen.empty());
}

TEST(Predict, PoolsMayUsePartOfANode) {
  // 4 prefill GPUs + 12 decode GPUs (one TP4 prefill worker, three TP4 decode workers): neither
  // pool fills whole 8-GPU nodes, and the row is predicted, not rejected.
  Predictor pred({}, false);
  const Prediction p = pred.Predict(ScaleRow(
      "1,s,ideal,h100,16,llama-3.1-8b,fp8,fp8,,,,,disagg,1024,1024,,,output_tokens_per_s,5000,,,,,,,"
      "48,4,4,1,1,12,4,1,1,\n"));
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.batch, 16);  // 48 requests over 3 decode workers
}

TEST(Predict, SglangAddsRedundantExpertsWhenEpDoesNotDivide) {
  // DeepSeek-V3 (256 routed experts) at EP 48 with no slots stated: SGLang runs 288 slots (the
  // next multiple of 48); an engine without that rule cannot place 256 experts on 48 ranks.
  Predictor pred({}, false);
  const std::string cells =
      ",h200,48,deepseek-v3,fp8,fp8,1,1,48,48,decode,2048,512,2048,8,output_tokens_per_s,1000" +
      kEmpty16 + "\n";
  const Prediction sg = pred.Predict(ScaleRow("1,s,sglang" + cells));
  ASSERT_TRUE(sg.ok) << sg.reason;
  EXPECT_NE(sg.strategy.find("slots=288"), std::string::npos) << sg.strategy;
  const Prediction trt = pred.Predict(ScaleRow("2,s,trtllm" + cells));
  EXPECT_FALSE(trt.ok);
}

// Rows on several threads (one run's metric rows on one): the same predictions, in row order, as
// on one thread. The frontier file's runs with a concurrency (three rows each, one client run)
// and a stated-batch file's rows.
TEST(PredictAll, TheSamePredictionsOnEveryThreadCount) {
  std::vector<Measurement> rows;
  for (const Measurement& m : SharedRows("measurements-frontier.csv"))
    if (m.concurrency > 0 && m.concurrency <= 64) rows.push_back(m);
  const std::vector<Measurement> dense = SharedRows("measurements.csv");
  for (size_t i = 0; i < dense.size() && i < 20; ++i) rows.push_back(dense[i]);
  if (rows.size() < 10) GTEST_SKIP() << "no shared measurements";
  auto run = [&](int jobs) {
    Predictor pred({std::string(L2S_SHARED_DIR) + "/models/hf"}, true);
    size_t calls = 0, last = 0;
    const std::vector<RowResult> res = PredictAll(rows, &pred, [&](size_t done, size_t total) {
      ++calls;
      EXPECT_EQ(done, last + 1);  // one call at a time, counting up
      EXPECT_EQ(total, rows.size());
      last = done;
    }, jobs);
    EXPECT_EQ(calls, rows.size());
    return res;
  };
  const std::vector<RowResult> one = run(1);
  const std::vector<RowResult> three = run(3);
  ASSERT_EQ(one.size(), rows.size());
  ASSERT_EQ(three.size(), rows.size());
  int predicted = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(one[i].row.id, rows[i].id);
    EXPECT_EQ(three[i].row.id, rows[i].id);
    EXPECT_EQ(three[i].pred.ok, one[i].pred.ok) << rows[i].id;
    EXPECT_EQ(three[i].pred.predicted, one[i].pred.predicted) << rows[i].id;
    EXPECT_EQ(three[i].error_pct, one[i].error_pct) << rows[i].id;
    predicted += one[i].pred.ok;
  }
  EXPECT_GE(predicted, static_cast<int>(rows.size()) - 2);
}

}  // namespace
}  // namespace l2s::validate
