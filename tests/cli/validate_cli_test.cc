// End-to-end tests of `l2s validate` on both measurement formats: the JSON `groups` contract, the
// scale file (every row reported, GPUs and metrics known), and bad input that must end with one
// clear line and a non-zero exit instead of NaN scores or a crash (issue 15: header-only file,
// missing --models-dir, non-UTF-8 bytes, degrees whose product overflows). Also the hardware
// flags the new rows need: `--dtype fp4` is Blackwell-only, h20 and gb200 are GPUs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <cctype>
#include <sstream>
#include <string>

#include "run_l2s.h"

namespace {

using l2s_cli_test::Result;
using l2s_cli_test::RunL2s;
using l2s_cli_test::Slurp;
using l2s_cli_test::TempPath;

std::string Shared() { return L2S_SHARED_DIR; }

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Writes `text` to a temporary file and returns its path.
std::string WriteTemp(const std::string& stem, const std::string& text) {
  const std::string path = TempPath(stem);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const char* kHeader =
    "id,source,engine,gpu,gpus,model_config,weight_dtype,kv_dtype,tp,pp,dp,ep,mode,isl,osl,"
    "context,batch,metric,value\n";

TEST(ValidateCli, ScaleFileEveryRowWithGroups) {
  const std::string csv = Shared() + "/reference/measurements-scale.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  const Result r = RunL2s({"validate", "--measurements", csv, "--models-dir",
                           Shared() + "/models/hf", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["rows"].is_array());
  EXPECT_EQ(j["rows"].size(), static_cast<size_t>(j["num_rows"].get<int>()));
  EXPECT_GE(j["rows"].size(), 25u);
  int regime_rows = 0, engine_rows = 0;
  ASSERT_TRUE(j.contains("groups"));
  for (const auto& [name, g] : j["groups"]["regime"].items()) {
    regime_rows += g["rows"].get<int>();
    for (const char* k : {"rows", "predicted", "missed", "median_abs_pct_error",
                          "share_within_25pct"})
      EXPECT_TRUE(g.contains(k)) << name << " " << k;
  }
  for (const auto& [name, g] : j["groups"]["engine"].items()) engine_rows += g["rows"].get<int>();
  // Each row is in exactly one regime and one engine family.
  EXPECT_EQ(regime_rows, j["num_rows"].get<int>());
  EXPECT_EQ(engine_rows, j["num_rows"].get<int>());
  EXPECT_TRUE(j["groups"]["regime"].contains("attention-dp+ep"));
  EXPECT_TRUE(j["groups"]["regime"].contains("tp-only"));
  for (const auto& row : j["rows"]) {
    const std::string reason = row["reason"];
    EXPECT_EQ(reason.find("unknown GPU"), std::string::npos) << row["id"];
    EXPECT_EQ(reason.find("unsupported metric"), std::string::npos) << row["id"];
    // The batch-1 latency row is predicted at batch 1 when it is predicted.
    if (row["batch_stated"] == 1 && row["status"] == "ok") {
      EXPECT_EQ(row["batch"], 1) << row["id"];
    }
  }
}

// The text's group table: every row's columns line up with the header's, whatever the longest
// group name (a 26- or 28-character "metric tokens_per_s_per_user" pushed its columns right of a
// fixed 24-character column).
TEST(ValidateCli, GroupTableColumnsLineUp) {
  const std::string path = WriteTemp(
      "groups.csv", std::string(kHeader) +
                        "1,s,trtllm,h100,1,meta-llama--Meta-Llama-3.1-8B.json,bf16,,1,1,1,1,serve,"
                        "1024,1024,,64,tokens_per_s_per_user,50\n"
                        "2,s,trtllm,h100,1,meta-llama--Meta-Llama-3.1-8B.json,bf16,,1,1,1,1,serve,"
                        "1024,1024,,64,tpot_ms,20\n");
  const Result r = RunL2s({"validate", "--measurements", path, "--models-dir",
                           Shared() + "/models/hf"});
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("\ngroup ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream in(r.out.substr(at + 1));
  std::string header, line;
  std::getline(in, header);
  const size_t end = header.find("rows") + 4;  // the right edge of the "rows" column
  int rows = 0;
  bool wide = false;
  while (std::getline(in, line) && !line.empty()) {
    ++rows;
    wide |= line.rfind("metric tokens_per_s_per_user ", 0) == 0;
    ASSERT_GE(line.size(), end) << line;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[end - 1])) && line[end] == ' ')
        << "\n" << header << "\n" << line;
  }
  EXPECT_TRUE(wide) << r.out;
  EXPECT_GE(rows, 5);
}

TEST(ValidateCli, FitRequestOverheadPrintsTheCommittedValue) {
  // --fit-request-overhead on the frontier file prints, per engine family, the values
  // Simulator::RequestOverheadSeconds commits: SGLang 132.3 ms from 7 rows, ATOM 29.8 ms from 6
  // (the library test holds them to the fit within 3%).
  const std::string csv = Shared() + "/reference/measurements-frontier.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  const Result r = RunL2s({"validate", "--measurements", csv, "--models-dir",
                           Shared() + "/models/hf", "--fit-request-overhead", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["max_concurrency"], 16);
  EXPECT_EQ(j["min_rows_per_family"], 3);
  std::map<std::string, double> ms;
  int rows = 0;
  for (const nlohmann::json& f : j["families"]) {
    rows += f["rows"].get<int>();
    if (f["own"].get<bool>()) ms[f["family"].get<std::string>()] = f["request_overhead_ms"];
  }
  EXPECT_EQ(rows, j["rows"].get<int>());
  ASSERT_EQ(ms.size(), 2u) << r.out;
  EXPECT_NEAR(ms["sglang"], 132.3, 0.03 * 132.3);
  EXPECT_NEAR(ms["atom"], 29.8, 0.03 * 29.8);
  const Result t = RunL2s({"validate", "--measurements", csv, "--models-dir",
                           Shared() + "/models/hf", "--fit-request-overhead"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("sglang"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("atom"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" ms"), std::string::npos) << t.out;
  // A file without such rows has nothing to fit: one line, exit 2.
  const std::string other = Shared() + "/reference/measurements.csv";
  const Result none = RunL2s({"validate", "--measurements", other, "--models-dir",
                              Shared() + "/models/hf", "--fit-request-overhead"});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err,
            "l2s: error: --fit-request-overhead: no serve ttft_ms row with a concurrency of at "
            "most 16 could be predicted (../shared/reference/measurements-frontier.csv has "
            "them)\n");
}

TEST(ValidateCli, OldFormatStillScoresAndHasGroups) {
  const std::string csv = Shared() + "/reference/measurements.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  const Result r = RunL2s({"validate", "--measurements", csv, "--models-dir",
                           Shared() + "/models/hf", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["num_missed"], 0);
  EXPECT_EQ(j["groups"]["engine"]["trtllm"]["rows"], 79);
  EXPECT_EQ(j["groups"]["regime"]["tp-only"]["rows"], 79);
}

TEST(ValidateCli, HeaderOnlyFileIsAnError) {
  const std::string path = WriteTemp("l2s_header_only", kHeader);
  const Result r = RunL2s({"validate", "--measurements", path, "--json"});
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no data rows"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("NaN"), std::string::npos);
  // --json: the error as one JSON object on stdout (issue 46), nothing else.
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_NE(j["reason"].get<std::string>().find("no data rows"), std::string::npos) << r.out;
}

TEST(ValidateCli, MissingModelsDirIsAnError) {
  const std::string path = WriteTemp(
      "l2s_models_dir", std::string(kHeader) +
                            "1,s,trtllm,h100,1,llama-3.1-8b,,,1,1,1,1,serve,128,128,,,"
                            "output_tokens_per_s,100\n");
  const Result r = RunL2s({"validate", "--measurements", path, "--models-dir", "/nonexistent/hf"});
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--models-dir"), std::string::npos) << r.err;
}

TEST(ValidateCli, Windows1252BytesGiveValidJson) {
  // 0x96 (en dash) and 0xE9 (e acute) in Windows-1252 are not UTF-8: the JSON output replaces
  // them instead of aborting.
  const std::string path = WriteTemp(
      "l2s_cp1252", std::string(kHeader) +
                        "1,Caf\xE9 blog \x96 2025,trtllm\x96x,h100,1,llama-3.1-8b,,,1,1,1,1,serve,128,"
                        "128,,,output_tokens_per_s,100\n");
  const Result r = RunL2s({"validate", "--measurements", path, "--json"});
  const Result t = RunL2s({"validate", "--measurements", path});
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // throws on invalid UTF-8
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_NE(j["rows"][0]["engine"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(t.code, 0) << t.err;
}

TEST(ValidateCli, OverflowingDegreesAreAMissNotASignal) {
  // 65536 * 65536 * 1 wraps a 32-bit int to 0; the old reader divided by it (SIGFPE).
  const std::string path = WriteTemp(
      "l2s_overflow", std::string(kHeader) +
                          "1,s,trtllm,h100,,llama-3.1-8b,,,65536,65536,,,serve,128,128,,,"
                          "output_tokens_per_s,100\n"
                          "2,s,trtllm,h100,8,llama-3.1-8b,,,65536,65536,,,serve,128,128,,,"
                          "output_tokens_per_s,100\n");
  const Result r = RunL2s({"validate", "--measurements", path, "--json"});
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["status"], "miss");
    EXPECT_NE(row["reason"].get<std::string>().find("exceeds"), std::string::npos) << row;
  }
  EXPECT_EQ(j["median_abs_pct_error"], 100.0);
}

TEST(HardwareCli, Fp4IsBlackwellOnly) {
  // One line naming the flag, exit 2 (usage) on Hopper; the same problem runs on B200/GB200.
  for (const char* gpu : {"h100", "h200", "h20"}) {
    const Result r = RunL2s({"eval", "--model", "llama-3.1-8b", "--gpu", gpu, "--gpus", "1",
                             "--dtype", "fp4", "--strategy", "tp=1"});
    EXPECT_EQ(r.code, 2) << gpu << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--dtype fp4"), std::string::npos) << r.err;
  }
  for (const char* gpu : {"b200", "gb200"}) {
    const Result r = RunL2s({"eval", "--model", "llama-3.1-8b", "--gpu", gpu, "--gpus", "1",
                             "--dtype", "fp4", "--strategy", "tp=1", "--json"});
    EXPECT_EQ(r.code, 0) << gpu << ": " << r.err;
  }
}

}  // namespace
