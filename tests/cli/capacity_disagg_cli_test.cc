// Disaggregated serving in `l2s capacity` and `l2s plan` with a traffic (issue 45): a
// deployment's JSON (both pools, the KV link, transfer percentiles), the sizing answer's
// consistency (its pools meet the SLOs, one instance fewer in either pool does not; its figures
// are those of the same deployment simulated directly), plan --serving disagg's pick equal to
// capacity's simulation of the same deployment, and the one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_l2s.h"

namespace {

using l2s_cli_test::RunL2s;

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

const std::vector<std::string> kBase = {"capacity", "--model", "llama-3.1-8b", "--gpu", "h100",
                                        "--engine", "vllm",    "--isl",        "2000", "--osl",
                                        "200"};

TEST(CapacityDisaggCli, DeploymentJson) {
  const auto r = RunL2s(With(kBase, {"--prefill-strategy", "tp=1", "--strategy", "tp=1",
                                     "--prefill-instances", "2", "--instances", "1", "--rate", "6",
                                     "--requests", "300", "--slo", "p99_ttft_ms=1000", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["serving"], "disagg");
  EXPECT_EQ(j["prefill_instances"], 2);
  EXPECT_EQ(j["instances"], 1);
  EXPECT_EQ(j["gpus"], 3);
  // 1 + 1 GPUs share one 8-GPU NVLink domain: the static model's NVLink link.
  EXPECT_TRUE(j["kv_link"]["nvlink"].get<bool>());
  EXPECT_DOUBLE_EQ(j["kv_link"]["bw_bytes_per_s"].get<double>(), 450e9);
  const auto& s = j["summary"];
  EXPECT_EQ(s["completed"], 300);
  EXPECT_TRUE(s["disaggregated"].get<bool>());
  // KV of 2,000 tokens (131,072 bytes each) over 450 GB/s + 3 us: 0.5856 ms without queueing.
  EXPECT_GE(s["kv_transfer_ms"]["p50"].get<double>(), 0.58);
  EXPECT_LE(s["ttft_ms"]["p50"].get<double>(), s["ttft_ms"]["p99"].get<double>());
  EXPECT_TRUE(j["meets_slo"].get<bool>());
  // With --slo, the highest rate the pools sustain, as for an aggregated deployment (it had none):
  // above the 6 req/s met, bracketed within the tolerance.
  const auto& mr = j["max_rate"];
  ASSERT_TRUE(mr["found"].get<bool>()) << mr.dump();
  EXPECT_GT(mr["rate_rps"].get<double>(), 6.0);
  EXPECT_GT(mr["fail_rps"].get<double>(), mr["rate_rps"].get<double>());
  EXPECT_LE(mr["fail_rps"].get<double>() - mr["rate_rps"].get<double>(),
            0.02 * mr["fail_rps"].get<double>() + 1e-9);
  EXPECT_TRUE(mr["summary_at_rate"]["disaggregated"].get<bool>());
  EXPECT_TRUE(j["timeline"].contains("transferring"));
  // The prefill pool admits vLLM's default running limit (1,024 per rank: --max-batch sets the
  // decode pool's), in JSON and in the text.
  EXPECT_EQ(s["prefill_max_running"], 1024);
  const auto text = RunL2s(With(kBase, {"--prefill-strategy", "tp=1", "--strategy", "tp=1",
                                        "--prefill-instances", "2", "--instances", "1", "--rate",
                                        "6", "--requests", "300", "--max-batch", "64"}));
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("max running 1024 per rank\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("highest rate"), std::string::npos) << text.out;  // no --slo: none
}

TEST(CapacityDisaggCli, PrefillSideRunsTheDecodeSidesSpeculation) {
  // A decode side that drafts (here an EAGLE-3 draft model) has prefill servers started with the
  // same setting, priced with the draft's extend over every prompt: slower than without.
  const std::vector<std::string> spec = {"--draft-model", "org/eagle3-draft", "--rate", "4",
                                         "--requests", "200", "--prefill-instances", "1",
                                         "--instances", "1", "--json"};
  const auto r = RunL2s(With(kBase, With(spec, {"--prefill-strategy", "tp=1", "--strategy",
                                                "tp=1,mtp=2"})));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["prefill_strategy"].get<std::string>().find("mtp=2"), std::string::npos)
      << j["prefill_strategy"];
  const auto plain = RunL2s(With(kBase, With(spec, {"--prefill-strategy", "tp=1", "--strategy",
                                                    "tp=1,mtp=0"})));
  ASSERT_EQ(plain.code, 0) << plain.err;
  const auto q = nlohmann::json::parse(plain.out);
  EXPECT_EQ(q["prefill_strategy"].get<std::string>().find("mtp="), std::string::npos);
  EXPECT_GT(j["summary"]["ttft_ms"]["p50"].get<double>(),
            q["summary"]["ttft_ms"]["p50"].get<double>());
  const auto bad = RunL2s(With(kBase, With(spec, {"--prefill-strategy", "tp=1,mtp=2", "--strategy",
                                                  "tp=1"})));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--prefill-strategy mtp=2: the prefill side speculates only beside a "
                         "decode side that does"),
            std::string::npos)
      << bad.out << bad.err;
}

TEST(CapacityDisaggCli, SizingPairsLayoutsThatAgreeOnSpeculation) {
  // A model that can speculate (here with an EAGLE-3 draft) is sized both ways: pairs that do not
  // speculate and pairs that do on both pools, never one pool alone.
  const auto r = RunL2s(With(kBase, {"--draft-model", "org/eagle3-draft", "--rate", "4",
                                     "--requests", "300", "--slo",
                                     "p99_ttft_ms=2000,p99_tpot_ms=40", "--serving", "disagg",
                                     "--sizes", "1,2", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto mtp_of = [](const std::string& s) {
    const size_t at = s.find(",mtp=");
    return at == std::string::npos ? 0 : std::stoi(s.substr(at + 5));
  };
  int on = 0, off = 0;
  for (const auto& c : j["disagg"]["candidates"]) {
    const int p = mtp_of(c["prefill_strategy"].get<std::string>());
    const int d = mtp_of(c["decode_strategy"].get<std::string>());
    EXPECT_EQ(p, d) << c["prefill_strategy"] << " | " << c["decode_strategy"];
    (d > 0 ? on : off) += 1;
  }
  EXPECT_GT(on, 0);
  EXPECT_GT(off, 0);
}

TEST(CapacityDisaggCli, SizingMeetsAndOneFewerMisses) {
  const auto args = With(kBase, {"--rate", "20", "--requests", "1500", "--slo",
                                 "p99_ttft_ms=500,p99_tpot_ms=30", "--sizes", "1,2",
                                 "--serving", "disagg", "--json"});
  const auto r = RunL2s(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["serving"], "disagg");
  ASSERT_TRUE(j["found"].get<bool>());
  EXPECT_EQ(j["best_serving"], "disagg");
  const auto& d = j["disagg"];
  ASSERT_TRUE(d["found"].get<bool>());
  const auto& b = d["candidates"][d["best"].get<int>()];
  EXPECT_TRUE(b["meets"].get<bool>());
  const int np = b["prefill_instances"], nd = b["decode_instances"];
  const int gp = b["prefill_gpus_per_instance"], gd = b["decode_gpus_per_instance"];
  EXPECT_EQ(b["gpus"].get<int>(), np * gp + nd * gd);
  for (const auto& c : d["candidates"]) {
    if (c["meets"].get<bool>()) {
      EXPECT_GE(c["gpus"].get<int>(), b["gpus"].get<int>());
    }
  }
  const auto& s = b["summary"];
  EXPECT_LE(s["ttft_ms"]["p99"].get<double>(), 500);
  EXPECT_LE(s["tpot_ms"]["p99"].get<double>(), 30);
  // One fewer instance in a pool that has more than one misses.
  if (np > 1) {
    EXPECT_FALSE(b["fewer_prefill_misses"].get<std::string>().empty());
  }
  if (nd > 1) {
    EXPECT_FALSE(b["fewer_decode_misses"].get<std::string>().empty());
  }
  // The same deployment simulated directly gives the same figures.
  const auto direct = RunL2s(With(kBase, {"--prefill-strategy", b["prefill_strategy"], "--strategy",
                                          b["decode_strategy"], "--prefill-instances",
                                          std::to_string(np), "--instances", std::to_string(nd),
                                          "--rate", "20", "--requests", "1500", "--json"}));
  ASSERT_EQ(direct.code, 0) << direct.err;
  const auto dj = nlohmann::json::parse(direct.out);
  for (const char* m : {"ttft_ms", "tpot_ms", "e2e_ms", "kv_transfer_ms"})
    EXPECT_DOUBLE_EQ(dj["summary"][m]["p99"].get<double>(), s[m]["p99"].get<double>()) << m;
}

// Closed loop: the pools sized for N clients (first guess at ClosedLoopRateGuess's rate), each
// simulation running the clients; the answer meets, one prefill instance fewer misses, and the
// deployment given directly with the same clients gives the same figures.
TEST(CapacityDisaggCli, ClosedLoopSizingMeetsAndOneFewerMisses) {
  const std::vector<std::string> traffic = {"--concurrency", "64"};
  const auto r = RunL2s(With({"capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine",
                              "sglang", "--isl", "2048", "--osl", "128", "--slo",
                              "p99_ttft_ms=1500,p99_tpot_ms=20", "--sizes", "1,2", "--serving",
                              "disagg", "--json"},
                             traffic));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["concurrency"].get<int>(), 64);
  const auto& d = j["disagg"];
  ASSERT_TRUE(d["found"].get<bool>());
  const auto& b = d["candidates"][d["best"].get<int>()];
  ASSERT_TRUE(b["meets"].get<bool>());
  const int np = b["prefill_instances"], nd = b["decode_instances"];
  const auto& s = b["summary"];
  EXPECT_EQ(s["completed"].get<int>(), 640);
  EXPECT_LE(s["ttft_ms"]["p99"].get<double>(), 1500);
  EXPECT_LE(s["tpot_ms"]["p99"].get<double>(), 20);
  ASSERT_GT(np, 1);  // the clients' first prompts, all at once, need more than one prefill GPU
  EXPECT_FALSE(b["fewer_prefill_misses"].get<std::string>().empty());
  const auto direct = RunL2s(With(
      {"capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--isl",
       "2048", "--osl", "128", "--prefill-strategy", b["prefill_strategy"], "--strategy",
       b["decode_strategy"], "--prefill-instances", std::to_string(np), "--instances",
       std::to_string(nd), "--json"},
      traffic));
  ASSERT_EQ(direct.code, 0) << direct.err;
  const auto dj = nlohmann::json::parse(direct.out);
  for (const char* m : {"ttft_ms", "tpot_ms", "e2e_ms"})
    EXPECT_DOUBLE_EQ(dj["summary"][m]["p99"].get<double>(), s[m]["p99"].get<double>()) << m;
}

// Both servings are sized by default (--serving auto, as plan's): each answer, the fewest GPUs
// overall (ties: aggregated) in best_serving and on the text's last answer line; --serving agg
// sizes only the aggregated one.
TEST(CapacityDisaggCli, AutoReportsBothAndPicksFewestGpus) {
  const std::vector<std::string> q = {"--rate", "20", "--requests", "1000", "--slo",
                                      "p99_ttft_ms=1000,p99_tpot_ms=30", "--sizes", "1,2"};
  const auto r = RunL2s(With(With(kBase, q), {"--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["serving"], "auto");
  ASSERT_TRUE(j["found"].get<bool>());
  const auto& agg = j["candidates"][j["best"].get<int>()];
  const auto& d = j["disagg"];
  ASSERT_TRUE(d["found"].get<bool>());
  EXPECT_TRUE(d["error_band"].is_object());
  const int ga = agg["gpus"], gdis = d["candidates"][d["best"].get<int>()]["gpus"];
  const bool dis = gdis < ga;
  EXPECT_EQ(j["best_serving"], dis ? "disagg" : "agg");
  const auto text = RunL2s(With(kBase, q));
  ASSERT_EQ(text.code, 0) << text.err;
  const std::string overall = "\nfewest GPUs overall: " + std::to_string(dis ? gdis : ga) + " = ";
  const size_t at = text.out.rfind(overall);
  ASSERT_NE(at, std::string::npos) << text.out;
  EXPECT_NE(text.out.find(dis ? "(disaggregated serving)\n" : "(aggregated serving)\n", at),
            std::string::npos);
  EXPECT_NE(text.out.find("\nfewest GPUs aggregated: "), std::string::npos);
  EXPECT_NE(text.out.find("\nfewest GPUs disaggregated: "), std::string::npos);
  EXPECT_EQ(text.out.find("fewest GPUs", at + overall.size()), std::string::npos);  // the last
  const auto agg_only = RunL2s(With(With(kBase, q), {"--serving", "agg", "--json"}));
  ASSERT_EQ(agg_only.code, 0) << agg_only.err;
  const auto a = nlohmann::json::parse(agg_only.out);
  EXPECT_FALSE(a.contains("disagg"));
  EXPECT_EQ(a["candidates"], j["candidates"]);
}

TEST(CapacityDisaggCli, PlanWithTrafficMatchesCapacity) {
  const std::vector<std::string> traffic = {"--rate", "10", "--requests", "500", "--seed", "1", "--slo",
                                            "p99_ttft_ms=1000,p99_tpot_ms=40"};
  const auto plan = RunL2s(With({"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "4",
                                 "--engine", "vllm", "--isl", "2000", "--osl", "200", "--serving",
                                 "disagg", "--budget", "300", "--json"},
                                traffic));
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto j = nlohmann::json::parse(plan.out);
  const auto& b = j["best"];
  EXPECT_EQ(b["serving"], "disagg");
  EXPECT_EQ(b["found_by"], "traffic_slo");
  EXPECT_TRUE(b["meets"].get<bool>());
  EXPECT_TRUE(j.contains("steady_state_best"));
  EXPECT_GE(j["traffic"]["simulated"].get<int>(), 1);
  // capacity simulates the same deployment (decode max running as picked) to the same figures.
  const auto cap = RunL2s(With(
      {"capacity", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--isl", "2000",
       "--osl", "200", "--prefill-strategy", b["prefill"]["strategy"], "--strategy",
       b["decode"]["strategy"], "--prefill-instances",
       std::to_string(b["prefill"]["instances"].get<int>()), "--instances",
       std::to_string(b["decode"]["instances"].get<int>()), "--max-batch",
       std::to_string(b["decode"]["max_running"].get<int>()), "--json"},
      traffic));
  ASSERT_EQ(cap.code, 0) << cap.err;
  const auto c = nlohmann::json::parse(cap.out);
  for (const char* m : {"ttft_ms", "tpot_ms", "e2e_ms"})
    EXPECT_DOUBLE_EQ(c["summary"][m]["p99"].get<double>(), b["serve"][m]["p99"].get<double>()) << m;
}

TEST(CapacityDisaggCli, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {With(kBase, {"--prefill-strategy", "tp=1", "--rate", "5"}),
       "l2s: error: --prefill-strategy needs --strategy (the decode instance)\n"},
      {With(kBase, {"--serving", "both", "--rate", "5", "--slo", "p99_ttft_ms=100"}),
       "l2s: error: --serving must be agg, disagg or auto, got \"both\"\n"},
      {With(kBase, {"--prefill-strategy", "tp=1", "--strategy", "tp=1", "--prefill-instances",
                    "0", "--rate", "5"}),
       "l2s: error: --prefill-instances must be in [1, 100000]\n"},
  };
  for (const Case& c : cases) {
    const auto r = RunL2s(c.args, "cap_disagg_bad");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, c.err);
  }
}

}  // namespace
