// Issue 15 (reliability round 2), end to end through the built binary: for each defect class
// the reported example and at least one sibling - crashes (bytes that are not UTF-8, deep
// nesting, endless or huge inputs), undefined behaviour (counts past their bounds), silent
// nonsense (values replaced or ignored), output and data loss (full disk, closed pipe, --out
// over an input, unwritable --out, SIGTERM) and messages (line/column, blame, size). And issue 14
// item 1: plan's answer is never below a baseline it prints. docs/LIMITS.md lists the bounds.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/text.h"
#include "run_l2s.h"

namespace {

namespace fs = std::filesystem;
using l2s_cli_test::Result;
using l2s_cli_test::Slurp;
using l2s_cli_test::TempPath;

const std::string kShared = L2S_SHARED_DIR;
const std::string kLlama8b = kShared + "/models/hf/meta-llama--Meta-Llama-3.1-8B.json";
const std::string kDeepseekV3 = kShared + "/models/hf/deepseek-ai--DeepSeek-V3.json";

Result L2s(const std::vector<std::string>& args) { return l2s_cli_test::RunL2s(args, "l2s_rel"); }

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A usage error: exit 2, nothing on stdout, ONE line on stderr that contains `needle`.
void ExpectUsageError(const std::vector<std::string>& args, const std::string& needle) {
  std::string cmd;
  for (const std::string& a : args) cmd += (a.size() > 80 ? a.substr(0, 80) + "..." : a) + " ";
  SCOPED_TRACE(cmd);
  const Result r = L2s(args);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 500);
  EXPECT_EQ(Lines(r.err), 1) << r.err.substr(0, 500);
  EXPECT_EQ(r.err.rfind("l2s: error: ", 0), 0u) << r.err.substr(0, 500);
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err.substr(0, 500);
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

nlohmann::json ParseJson(const std::string& s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << s.substr(0, 1000);
  return j;
}

double Num(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : -1.0; }

bool HaveShared() { return fs::exists(kLlama8b) && fs::exists(kDeepseekV3); }

// Runs l2s with stdout on `stdout_fd` (stderr captured); returns {exit code, stderr}.
Result RunWithStdout(const std::vector<std::string>& args, int stdout_fd) {
  const std::string err = TempPath("l2s_rel_fd_err");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(stdout_fd, 1);
    if (std::freopen(err.c_str(), "w", stderr) == nullptr) ::_exit(127);
    std::vector<char*> argv{const_cast<char*>(L2S_BIN)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(L2S_BIN, argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = Slurp(err);
  fs::remove(err);
  return r;
}

// True once `pid` has a handler for `sig` (SigCgt in /proc/PID/status).
bool Catches(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("SigCgt:", 0) == 0)
      return (std::strtoull(line.c_str() + 7, nullptr, 16) >> (sig - 1)) & 1ULL;
  return false;
}

class TempDir {
 public:
  TempDir() : path_(TempPath("l2s_rel_dir")) { fs::create_directories(path_); }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ------------------------------------------------------------------ 1. crashes

// A model path with a Latin-1 byte reaches the JSON output: replaced, not an abort.
TEST(Crashes, NonUtf8PathInJsonOutput) {
  if (!HaveShared()) GTEST_SKIP() << "no shared configs";
  TempDir d;
  const std::string model = d / "caf\xE9.json";
  fs::copy_file(kLlama8b, model);
  Result r = L2s({"eval", "--model", model, "--gpus", "8", "--strategy", "tp=8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(ParseJson(r.out)["model"].get<std::string>().find("caf"), std::string::npos);
  // Sibling: plan's --out file and stdout.
  const std::string out = d / "plan.json";
  r = L2s({"plan", "--model", model, "--gpus", "8", "--budget", "30", "--no-baselines", "--json",
           "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  ParseJson(r.out);
  ParseJson(Slurp(out));
  // Sibling: the path in an error message is printable.
  const std::string bad = d / "bad\xFF.json";
  WriteFile(bad, "{");
  ExpectUsageError({"describe", "--model", bad}, "bad\\xFF.json");
}

// 100k levels of nesting in a 200 KB file: one line, no stack overflow.
TEST(Crashes, DeepNestingIsAnError) {
  TempDir d;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  WriteFile(d / "deep.json", deep);
  ExpectUsageError({"describe", "--model", d / "deep.json"}, "nested deeper than 64 levels");
  // Sibling: the cluster file, objects instead of arrays.
  std::string objs;
  for (int i = 0; i < 5000; ++i) objs += "{\"a\":";
  objs += "1" + std::string(5000, '}');
  WriteFile(d / "cluster.json", objs);
  ExpectUsageError({"describe", "--cluster", d / "cluster.json"}, "line 1, column");
}

// A key given twice in one object of a config or cluster file is an error: nlohmann's reader
// keeps the last, so "num_hidden_layers": 80 then 8 planned an 8-layer model with exit 0.
TEST(Inputs, AKeyGivenTwiceIsAnError) {
  if (!HaveShared()) GTEST_SKIP() << "no shared configs";
  TempDir d;
  std::string text = Slurp(kLlama8b);
  const size_t brace = text.find('{');
  ASSERT_NE(brace, std::string::npos);
  text.insert(brace + 1, "\n  \"num_hidden_layers\": 8,");
  WriteFile(d / "config.json", text);
  ExpectUsageError({"describe", "--model", d / "config.json"},
                   "key \"num_hidden_layers\" is given twice in one object");
  // Sibling: a cluster file, the key twice in a nested object.
  WriteFile(d / "cluster.json",
            R"({"gpu": "h100", "nodes": 1, "gpus_per_node": 8, "gpus_per_node": 4})");
  ExpectUsageError({"describe", "--cluster", d / "cluster.json"}, "\"gpus_per_node\" is given twice");
  // The same keys in two different objects are not a repeat.
  WriteFile(d / "ok.json", R"({"a": {"name": 1}, "b": {"name": 2}})");
  EXPECT_EQ(L2s({"describe", "--model", d / "ok.json"}).err.find("given twice"), std::string::npos);
}

// Endless or non-regular files are not read: /dev/zero, a FIFO; a huge file stops at the bound.
TEST(Crashes, NonRegularAndHugeFiles) {
  ExpectUsageError({"describe", "--model", "/dev/zero"}, "not a regular file");
  ExpectUsageError({"eval", "--cluster", "/dev/zero", "--model", "llama-3.1-8b", "--strategy",
                    "tp=8"},
                   "not a regular file");
  TempDir d;
  const std::string fifo = d / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ExpectUsageError({"describe", "--model", fifo}, "not a regular file");
  // 17 MiB of spaces: over the 16 MiB bound.
  {
    std::ofstream f(d / "huge.json", std::ios::binary);
    const std::string mib(1 << 20, ' ');
    for (int i = 0; i < 17; ++i) f << mib;
  }
  ExpectUsageError({"describe", "--model", d / "huge.json"}, "larger than 16777216 bytes");
}

// ------------------------------------------------------------------ 2. undefined behaviour

TEST(Bounds, CountsPastTheirBoundsAreUsageErrors) {
  // nodes x gpus-per-node overflowed int: now each is bounded and the product checked.
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--nodes", "1048576", "--gpus-per-node",
                    "65536", "--strategy", "tp=8"},
                   "GPUs, more than the 16777216");
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "2147483648", "--strategy", "tp=8"},
                   "--gpus");
  ExpectUsageError({"space", "--model", "llama-3.1-8b", "--gpus", "8", "--max-batch", "2147483647"},
                   "--max-batch");
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8",
                    "--mode", "serve", "--isl", "9223372036854775807", "--osl", "10"},
                   "--isl");
  // Out-of-range --budget / --seed are rejected, not saturated.
  ExpectUsageError({"plan", "--budget", "99999999999999999999999"}, "--budget");
  ExpectUsageError({"plan", "--seed", "99999999999999999999"}, "--seed");
  ExpectUsageError({"plan", "--seed", "-1"}, "--seed");
  ExpectUsageError({"compare", "--budget", "100000001"}, "--budget");
  // The cluster file's own bound on domains.
  TempDir d;
  WriteFile(d / "c.json", R"({"gpu": "h100", "num_gpus": 16777216, "gpus_per_domain": 131072})");
  ExpectUsageError({"describe", "--cluster", d / "c.json"}, "gpus_per_domain");
}

// ------------------------------------------------------------------ 3. silent nonsense

TEST(SilentNonsense, ZeroLengthsAreErrorsInEveryCommand) {
  for (const char* cmd : {"eval", "explain", "space"}) {
    SCOPED_TRACE(cmd);
    std::vector<std::string> base = {cmd, "--model", "llama-3.1-8b", "--gpus", "8"};
    if (std::string(cmd) != "space") base.insert(base.end(), {"--strategy", "tp=8"});
    for (const char* flag : {"--context", "--isl", "--osl"}) {
      std::vector<std::string> a = base;
      a.insert(a.end(), {flag, "0"});
      ExpectUsageError(a, flag);
    }
  }
}

TEST(SilentNonsense, AbsurdHardwareFiguresAreRejected) {
  TempDir d;
  WriteFile(d / "tiny.json", R"({"gpu": {"name": "h100", "bf16_tflops": 1e-300}, "num_gpus": 8})");
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--cluster", d / "tiny.json", "--strategy",
                    "tp=8"},
                   "bf16_tflops");
  WriteFile(d / "bw.json", R"({"gpu": {"name": "h100", "hbm_tbps": 1e-300}, "num_gpus": 8})");
  ExpectUsageError({"describe", "--cluster", d / "bw.json"}, "hbm_tbps");
  WriteFile(d / "so.json", R"({"gpu": "h100", "num_gpus": 8, "scaleout_gbps_per_gpu": 1e-200})");
  ExpectUsageError({"describe", "--cluster", d / "so.json"}, "scaleout_gbps_per_gpu");
  // An unknown calibration set was silently replaced by the H100 tables (a100_sxm has tables in
  // ../shared but no fitted set).
  WriteFile(d / "cal.json", R"({"gpu": {"name": "h100", "calibration": "a100_sxm"}, "num_gpus": 8})");
  ExpectUsageError({"describe", "--cluster", d / "cal.json"}, "calibration");
}

TEST(SilentNonsense, SloIsStrict) {
  const std::vector<std::string> eval = {"eval", "--model", "llama-3.1-8b", "--gpus", "8",
                                         "--strategy", "tp=8", "--mode", "serve"};
  for (const char* slo : {"ttft_ms=inf", "tpot_ms=nan", "ttft_ms=0x10", "tpot_ms=50,",
                          "tpot_ms=50,tpot_ms=60", ",tpot_ms=5", "tpot_ms= 5", "tpot_ms=-5",
                          "tpot_ms=1e400", "ttft_ms=2000;tpot_ms=50"}) {
    std::vector<std::string> a = eval;
    a.insert(a.end(), {"--slo", slo});
    ExpectUsageError(a, "--slo");
  }
  // Limits that cannot apply to the mode.
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8",
                    "--mode", "decode", "--slo", "ttft_ms=100"},
                   "ttft_ms does not apply to --mode decode");
  ExpectUsageError({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "prefill", "--slo",
                    "tpot_ms=100"},
                   "tpot_ms does not apply to --mode prefill");
  // A valid one still works.
  std::vector<std::string> a = eval;
  a.insert(a.end(), {"--slo", "ttft_ms=2000,tpot_ms=50", "--json"});
  const Result r = L2s(a);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_EQ(Num(ParseJson(r.out)["slo"]["tpot_ms"]), 50);  // report.cc prints the limits
}

TEST(SilentNonsense, UnknownOrIgnoredNamesAreErrors) {
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8",
                    "--engine", "tensorflow"},
                   "--engine");
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--cluster", "h200", "--gpu", "a100",
                    "--strategy", "tp=8"},
                   "--gpu a100 cannot be combined with --cluster");
  ExpectUsageError({"plan", "--model", "llama-3.1-8b", "--cluster", "gb200-nvl72", "--gpu", "h100"},
                   "--cluster");
  // A dim for an operator the model lacks (the space rejects it too).
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy",
                    "tp=8,moe_ffn1=dim0"},
                   "no moe_ffn1 operator");
  ExpectUsageError({"explain", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy",
                    "tp=8,shared_ffn2=dim1"},
                   "no shared_ffn2 operator");
  // Known engines still work, with a release from their row's on; an older one is refused.
  const Result r = L2s({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8",
                        "--engine", "trtllm-1.2"});
  EXPECT_EQ(r.code, 0) << r.err;
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8",
                    "--engine", "trtllm-0.17"},
                   "l2s plans TensorRT-LLM from release 1.1 on");
}

TEST(Reliability, PlanStrategyTextReadsBackIntoEval) {
  // plan prints every operator's dim, `none` for those the model lacks (a dense model's MoE
  // operators): that text must evaluate to the same figures in eval.
  // The plan is the fastest engine's (best.engine): eval under that engine prices it the same.
  const Result plan = L2s({"plan", "--model", "llama-3.1-8b", "--gpus", "2", "--mode", "decode",
                           "--budget", "200", "--oracle-seconds", "0", "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto j = nlohmann::json::parse(plan.out);
  const std::string text = j["best"]["strategy"].get<std::string>();
  ASSERT_NE(text.find("moe_ffn1=none"), std::string::npos) << text;
  const std::string engine = j["best"]["engine"].get<std::string>();
  ASSERT_NE(engine, "ideal");
  const Result ev = L2s({"eval", "--model", "llama-3.1-8b", "--gpus", "2", "--mode", "decode",
                         "--engine", engine, "--strategy", text, "--json"});
  ASSERT_EQ(ev.code, 0) << ev.err;
  const auto e = nlohmann::json::parse(ev.out);
  EXPECT_NEAR(e["tokens_per_s_per_gpu"].get<double>(),
              j["best"]["tokens_per_s_per_gpu"].get<double>(),
              1e-6 * j["best"]["tokens_per_s_per_gpu"].get<double>());
}

// ------------------------------------------------------------------ 4. output and data loss

TEST(Output, FullDiskAndClosedPipeOnStdout) {
  const int full = ::open("/dev/full", O_WRONLY);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  Result r = RunWithStdout({"describe", "--model", "llama-3.1-8b", "--json"}, full);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  r = RunWithStdout({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "30",
                     "--no-baselines"},
                    full);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  ::close(full);
  // A pipe whose reader is gone: not killed by SIGPIPE, one line, exit 2.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  r = RunWithStdout({"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", "tp=8"}, fds[1]);
  ::close(fds[1]);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("Broken pipe"), std::string::npos) << r.err;
}

// plan --out x | head: the file is written before stdout, so the reader going away does not
// lose the result; the exit status says stdout failed.
TEST(Output, PlanOutSurvivesAClosedPipe) {
  TempDir d;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  const Result r = RunWithStdout({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget",
                                  "30", "--no-baselines", "--out", d / "plan.json"},
                                 fds[1]);
  ::close(fds[1]);
  EXPECT_EQ(r.code, 2) << r.err;
  const nlohmann::json j = ParseJson(Slurp(d / "plan.json"));
  EXPECT_TRUE(j["best"].is_object());
}

TEST(Output, OutFileFailuresAreFoundFirstAndNeverTruncateAnInput) {
  if (!HaveShared()) GTEST_SKIP() << "no shared configs";
  TempDir d;
  // --out on a full disk: one line, exit 2.
  if (fs::exists("/dev/full"))
    ExpectUsageError({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "30",
                      "--no-baselines", "--out", "/dev/full"},
                     "No space left on device");
  // --out equal to --model: refused before anything is written; the input is intact.
  const std::string model = d / "config.json";
  fs::copy_file(kLlama8b, model);
  const std::string before = Slurp(model);
  ExpectUsageError({"plan", "--model", model, "--gpus", "8", "--out", model}, "destroy the input");
  ExpectUsageError({"plan", "--model", d.path(), "--gpus", "8", "--out", model}, "destroy the input");
  EXPECT_EQ(Slurp(model), before);
  // An unwritable --out is found before a search of 10^8 calls (which would take hours).
  const auto t0 = std::chrono::steady_clock::now();
  ExpectUsageError({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "100000000",
                    "--out", model + "/plan.json"},
                   "--out");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60);
  // A successful write leaves no temporary file behind.
  const Result r = L2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--budget", "30",
                        "--no-baselines", "--out", d / "plan.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(d.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 2);  // config.json and plan.json
}

// SIGTERM is handled like Ctrl-C: plan prints and writes the best so far, marked interrupted.
TEST(Output, SigtermWritesThePartialPlan) {
  if (!fs::exists("/proc/self/status")) GTEST_SKIP() << "needs /proc";
  TempDir d;
  const std::string out = TempPath("l2s_rel_term_out"), err = TempPath("l2s_rel_term_err");
  const pid_t pid = l2s_cli_test::Spawn({"plan", "--model", "mixtral-8x7b", "--gpus", "8",
                                         "--search", "sa", "--budget", "100000000", "--json",
                                         "--out", d / "plan.json"},
                                        out, err);
  ASSERT_GT(pid, 0);
  bool ready = false;
  for (int i = 0; i < 3000 && !ready; ++i) {
    ready = Catches(pid, SIGTERM);
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(ready) << "the child never installed its SIGTERM handler";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const Result r = l2s_cli_test::Wait(pid, out, err);
  EXPECT_EQ(r.code, 143) << r.err;
  EXPECT_EQ(ParseJson(r.out)["interrupted"], true);
  EXPECT_EQ(ParseJson(Slurp(d / "plan.json"))["interrupted"], true);
}

// compare: a previous run's files never look current - a decode run leaves no pareto.svg from an
// earlier serve run, and SIGTERM rewrites the files marked interrupted.
TEST(Output, CompareLeavesNoStaleFiles) {
  TempDir d;
  WriteFile(d / "pareto.svg", "<svg>stale</svg>");
  WriteFile(d / "traces.csv", "stale\n");
  const Result r = L2s({"compare", "--model", "llama-3.1-8b", "--gpus", "8", "--searchers",
                        "rw", "--seeds", "1", "--budget", "20", "--out-dir", d.path()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(d / "pareto.svg"));
  EXPECT_EQ(Slurp(d / "traces.csv").rfind("searcher,seed,call,value\n", 0), 0u);
  // SIGTERM in the middle of a long run.
  if (!fs::exists("/proc/self/status")) return;
  WriteFile(d / "traces.csv", "stale\n");
  const std::string out = TempPath("l2s_rel_cmp_out"), err = TempPath("l2s_rel_cmp_err");
  const pid_t pid = l2s_cli_test::Spawn({"compare", "--model", "mixtral-8x7b", "--gpus", "8",
                                         "--searchers", "sa", "--seeds", "1", "--budget",
                                         "100000000", "--out-dir", d.path(), "--json"},
                                        out, err);
  bool ready = false;
  for (int i = 0; i < 3000 && !ready; ++i) {
    ready = Catches(pid, SIGTERM);
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(ready);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const Result t = l2s_cli_test::Wait(pid, out, err);
  EXPECT_EQ(t.code, 143) << t.err;
  EXPECT_EQ(ParseJson(t.out)["interrupted"], true);
  EXPECT_EQ(Slurp(d / "traces.csv").rfind("searcher,seed,call,value\n", 0), 0u);
}

// ------------------------------------------------------------------ 5. messages

TEST(Messages, SyntaxErrorsHaveLineColumnAndReason) {
  TempDir d;
  WriteFile(d / "bad.json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,,\n}\n");
  ExpectUsageError({"describe", "--model", d / "bad.json"}, "line 3, column");
  const Result r = L2s({"describe", "--model", d / "bad.json"});
  EXPECT_NE(r.err.find("syntax error"), std::string::npos) << r.err;
  // Sibling: a number too large for a double was raw library text ([json.exception...]).
  WriteFile(d / "big.json", R"({"model_type": "llama", "hidden_size": 1e400})");
  ExpectUsageError({"describe", "--model", d / "big.json"}, "number overflow");
}

// The FP8 checkpoint on an A100 is the checkpoint's doing, not a --dtype the user never gave.
TEST(Messages, BlameWhatTheUserGave) {
  if (!HaveShared()) GTEST_SKIP() << "no shared configs";
  const Result r = L2s({"eval", "--model", kDeepseekV3, "--gpu", "a100", "--gpus", "64",
                        "--strategy", "tp=8,ep=8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find("--dtype fp8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("checkpoint"), std::string::npos) << r.err;
  // Sibling: when the flag was given, the flag is named.
  ExpectUsageError({"eval", "--model", "llama-3.1-8b", "--gpu", "a100", "--gpus", "8", "--dtype",
                    "fp8", "--strategy", "tp=8"},
                   "--dtype fp8");
}

// 100 KB values are clipped, not echoed in full.
TEST(Messages, HugeValuesAreClipped) {
  const std::string huge(100000, 'x');
  for (const std::vector<std::string>& a :
       {std::vector<std::string>{"describe", "--model", huge},
        std::vector<std::string>{"eval", "--model", "llama-3.1-8b", "--gpus", "8", "--strategy", huge},
        std::vector<std::string>{"plan", "--search", huge}}) {
    const Result r = L2s(a);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(Lines(r.err), 1);
    EXPECT_LT(r.err.size(), 1100u) << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("bytes]"), std::string::npos) << r.err.substr(0, 300);
  }
}

// The helper behind every message: well-formed UTF-8 kept, other bytes escaped, long text clipped
// at a unit boundary with its start and end kept.
TEST(Messages, PrintableText) {
  EXPECT_EQ(l2s::PrintableText("caf\xC3\xA9"), "caf\xC3\xA9");       // UTF-8 e-acute kept
  EXPECT_EQ(l2s::PrintableText("caf\xE9"), "caf\\xE9");               // Latin-1 byte escaped
  EXPECT_EQ(l2s::PrintableText("a\tb\x01"), "a\\x09b\\x01");         // controls escaped
  EXPECT_EQ(l2s::PrintableText("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate is not UTF-8
  const std::string huge = "head" + std::string(100000, '\xE9') + "tail";
  const std::string p = l2s::PrintableText(huge, 200);
  EXPECT_LE(p.size(), 200u);
  EXPECT_EQ(p.rfind("head", 0), 0u);
  EXPECT_EQ(p.substr(p.size() - 4), "tail");
  EXPECT_NE(p.find("...[100008 bytes]..."), std::string::npos) << p;
  EXPECT_TRUE(l2s::IsUtf8(p));
  // Status messages are one printable line.
  const l2s::Status st = l2s::Status::InvalidArgument("line 1\nline 2 \xFF" + std::string(5000, 'x'));
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
  EXPECT_LE(st.message().size(), l2s::kMaxMessageBytes);
  EXPECT_EQ(st.message().rfind("line 1 line 2 \\xFF", 0), 0u) << st.message().substr(0, 40);
}

// ------------------------------------------------------------------ issue 14, item 1

// With a budget of 2 calls the searcher cannot win, so by construction the plan must be the best
// of the baselines and the oracle it prints, and say which found it.
// The paper's unrestricted space (--engine ideal), where the searcher runs beside the oracle.
TEST(PlanBest, NeverBelowABaselineItPrints) {
  const Result r = L2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--context", "4096",
                        "--search", "rw", "--budget", "2", "--oracle-seconds", "60",
                        "--engine", "ideal", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  const double plan = Num(j["best"]["tokens_per_s_per_gpu"]);
  ASSERT_GT(plan, 0);
  for (const char* b : {"megatron", "default"}) {
    ASSERT_TRUE(j["baselines"][b].is_object()) << b;
    EXPECT_GE(plan, Num(j["baselines"][b]["tokens_per_s_per_gpu"])) << b;
  }
  ASSERT_EQ(j["oracle"]["status"], "solved");
  EXPECT_GE(plan, Num(j["oracle"]["tokens_per_s_per_gpu"]));
  // The oracle's optimum, its batch refined between the space's options (plan/refine.h): this
  // decode problem is memory-bound, and the batch the oracle's 256 leaves room for is larger.
  EXPECT_GE(Num(j["oracle"]["recommended_fraction"]), 1.0);
  EXPECT_EQ(j["best"]["found_by"], "oracle");
  EXPECT_EQ(j["best"]["batch_refined_from"], 256);
  EXPECT_GT(Num(j["best"]["batch"]), 256);
  // Every engine's run of the plan, as simulated, is not above the plan either.
  for (const auto& [engine, l] : j["launch"].items()) {
    if (l["launched"].is_object()) {
      EXPECT_LE(Num(l["launched"]["tokens_per_s_per_gpu"]), plan * (1 + 1e-12)) << engine;
    }
  }
  // The searcher's own result stays, for studies.
  const std::string found_by = j["best"]["found_by"].get<std::string>();
  if (j["search"]["best"].is_object() &&
      Num(j["search"]["best"]["tokens_per_s_per_gpu"]) < plan) {
    EXPECT_NE(found_by, "search");
    EXPECT_TRUE(j["warning"].is_string());
  }
  EXPECT_TRUE(found_by == "search" || found_by == "oracle" || found_by == "megatron" ||
              found_by == "default" || found_by == "expressible_scan" ||
              found_by == "engine_repair")
      << found_by;
  // The text output says who found it, and every "plan is" ratio is >= 1.
  const Result t = L2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--context", "4096",
                        "--search", "rw", "--budget", "2", "--oracle-seconds", "60",
                        "--engine", "ideal"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("Best strategy (found by "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("oracle (optimum)"), std::string::npos);
  EXPECT_NE(t.out.find("refined from 256"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("the oracle's optimum is over the space's batch options"), std::string::npos)
      << t.out;
}

// The plan refines every strategy the search evaluated, not only its best (plan/refine.h
// EvaluatedStrategies): deepseek-v3 served on 256 H100s (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms),
// aggregated, the default rl at 4,000 calls, seed 0. The search's best (pp=1,tp=8,ep=64 at batch
// 256, 791.92 tokens/s per GPU) refines to 804.77; another strategy it evaluated (pp=4,tp=16,ep=64
// at batch 512, 746.97) refines to batch 864 and 1,087.78, which is the plan. One instance of 256
// GPUs (--instance-gpus 256): the search on that space.
TEST(PlanBest, RefinesEveryStrategyTheSearchEvaluated) {
  const Result r = L2s({"plan", "--model", "deepseek-v3", "--gpus", "256", "--mode", "serve",
                        "--isl", "2048", "--osl", "512", "--slo", "ttft_ms=2000,tpot_ms=50",
                        "--serving", "agg", "--oracle-seconds", "0", "--engine", "ideal",
                        "--instance-gpus", "256", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  const nlohmann::json& b = j["best"];
  const double searched = Num(j["search"]["best"]["tokens_per_s_per_gpu"]);
  EXPECT_EQ(b["found_by"], "search");
  ASSERT_TRUE(b["batch_refined_from"].is_number());
  EXPECT_LT(Num(b["tokens_per_s_per_gpu_before_refinement"]), searched);
  EXPECT_GT(Num(b["tokens_per_s_per_gpu"]), searched);
  EXPECT_NE(b["strategy"], j["search"]["best"]["strategy"]);
  EXPECT_GT(Num(b["batch"]), b["batch_refined_from"].get<int>());
  EXPECT_LE(Num(b["tpot_ms"]), 50.0);
}

}  // namespace
