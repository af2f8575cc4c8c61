// Every flag l2s emits exists in the engine: each command of every engine, aggregated and
// disaggregated, over a set of plans (dense, dense replicas, MoE wide-EP with redundant experts and
// overlap, MTP, multi-node data/pipeline/tensor parallelism, a config given by path, a decode batch
// above the CUDA-graph default, P/D pools), and the scripts `l2s plan --emit` writes, are parsed;
// every `--flag` must be in the fixture of its program (src/launch/testdata/flags, taken from the
// engines' sources) and its value among the fixture's choices where it lists them. The same plans
// check what makes the files start: distinct ports and disjoint CUDA_VISIBLE_DEVICES per node, a
// model id that is a repo id or a placeholder (never a folder of configs), DeepEP on SGLang expert
// parallelism, --cuda-graph-max-bs >= a decode batch above the default, and memory fractions that
// hold the plan's memory.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launch/disagg_launch.h"
#include "launch/dynamo.h"
#include "launch/emit.h"
#include "launch/launch.h"
#include "launch/test_plans.h"
#include "model/presets.h"

namespace l2s::launch {
namespace {

using testing::Has;
using testing::Megatron;
using testing::Preset;

// ---- fixtures ----
using Flags = std::map<std::string, std::vector<std::string>>;  // flag -> accepted values

std::string FlagsDir() { return std::string(L2S_SOURCE_DIR) + "/src/launch/testdata/flags/"; }

// The flags of `file` (section "[name]" when `section` is not empty), up to the comment line
// `until` when it is not empty.
Flags LoadFlags(const std::string& file, const std::string& section = "",
                const std::string& until = "") {
  std::ifstream in(FlagsDir() + file);
  EXPECT_TRUE(in.good()) << file;
  Flags out;
  std::string line;
  bool on = section.empty();
  bool found_until = until.empty();
  while (std::getline(in, line)) {
    if (!until.empty() && line == until) {
      found_until = true;
      break;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      on = line == "[" + section + "]";
      continue;
    }
    if (!on) continue;
    std::istringstream ss(line);
    std::string name, v;
    ss >> name;
    std::vector<std::string>& choices = out[name];
    while (ss >> v) choices.push_back(v);
  }
  EXPECT_FALSE(out.empty()) << file << " " << section;
  EXPECT_TRUE(found_until) << file << ": no line " << until;
  return out;
}

Flags Merge(Flags a, const Flags& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

struct Fixtures {
  Flags sglang = LoadFlags("sglang-launch_server.txt");
  Flags vllm = LoadFlags("vllm-serve.txt");
  Flags trtllm = LoadFlags("trtllm-serve.txt");
  Flags yaml = LoadFlags("trtllm-llm-api-yaml.txt");
  Flags sglang_router = LoadFlags("routers.txt", "sglang_router");
  Flags vllm_router = LoadFlags("routers.txt", "vllm-router");
  Flags frontend = LoadFlags("routers.txt", "dynamo.frontend");
  Flags dynamo_trtllm = LoadFlags("dynamo-workers.txt", "dynamo.trtllm");
  // dynamo.vllm parses vLLM's engine arguments (AsyncEngineArgs.add_cli_args), not the API
  // server's (--host, --port) or `vllm serve`'s (--headless): the first block of vllm-serve.txt.
  Flags dynamo_vllm =
      Merge(LoadFlags("vllm-serve.txt", "", "# vllm/entrypoints/openai/cli_args.py (FrontendArgs, BaseFrontendArgs)"),
            LoadFlags("dynamo-workers.txt", "dynamo.vllm"));
  Flags megatron = LoadFlags("megatron.txt");
  Flags atom = LoadFlags("atom-openai_server.txt");
  Flags ray = LoadFlags("cluster-tools.txt", "ray");
};

const Fixtures& Fx() {
  static const Fixtures* f = new Fixtures();
  return *f;
}

// ---- command parsing ----
// Shell words of `cmd`: whitespace-separated, '...' and "..." quoted.
std::vector<std::string> Words(const std::string& cmd) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  char quote = 0;
  for (char c : cmd) {
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (have) out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  EXPECT_EQ(quote, 0) << "unbalanced quote in " << cmd;
  if (have) out.push_back(cur);
  return out;
}

struct Parsed {
  std::string program;                 // "vllm", "sglang", ...
  std::string model;                   // the model argument ("" when the program takes none)
  std::map<std::string, std::string> values;  // flag -> value ("" for a switch)
  std::vector<std::string> env;        // NAME=VALUE prefixes
};

struct Checker {
  int commands = 0;
  int flags = 0;
  std::vector<std::string> errors;

  // Checks the flags from words[i] on against `fx`; fills `p`.
  void CheckFlags(const std::vector<std::string>& w, size_t i, const Flags& fx, Parsed* p,
                  const std::string& where) {
    for (; i < w.size(); ++i) {
      if (w[i].rfind("--", 0) != 0) continue;
      std::string name = w[i], value;
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) {
        value = w[i + 1];
      }
      ++flags;
      p->values[name] = value;
      const auto it = fx.find(name);
      if (it == fx.end()) {
        errors.push_back(fmt::format("{}: {} is not a {} flag", where, name, p->program));
        continue;
      }
      if (!it->second.empty() &&
          std::find(it->second.begin(), it->second.end(), value) == it->second.end())
        errors.push_back(fmt::format("{}: {} {} is not one of its values", where, name, value));
    }
  }

  // Parses and checks one command line (segments joined by &&).
  std::vector<Parsed> Check(const std::string& cmd, const std::string& where) {
    std::vector<Parsed> out;
    const std::vector<std::string> all = Words(cmd);
    std::vector<std::vector<std::string>> segments(1);
    for (const std::string& x : all) {
      if (x == "&&") segments.emplace_back();
      else segments.back().push_back(x);
    }
    for (std::vector<std::string> w : segments) {
      Parsed p;
      size_t i = 0;
      while (i < w.size() && w[i].find('=') != std::string::npos && w[i].rfind("-", 0) != 0)
        p.env.push_back(w[i++]);
      w.erase(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(i));
      if (!w.empty() && w[0] == "mpirun") {
        const auto it = std::find(w.begin(), w.end(), "trtllm-llmapi-launch");
        if (it == w.end()) {
          errors.push_back(where + ": mpirun without trtllm-llmapi-launch");
          continue;
        }
        w.erase(w.begin(), it + 1);
      }
      if (w.empty()) continue;
      ++commands;
      auto is = [&](std::initializer_list<const char*> head) {
        size_t k = 0;
        for (const char* h : head)
          if (k >= w.size() || w[k++] != h) return false;
        return true;
      };
      if (is({"vllm", "serve"})) {
        p.program = "vllm";
        p.model = w.size() > 2 ? w[2] : "";
        CheckFlags(w, 3, Fx().vllm, &p, where);
      } else if (is({"python", "-m", "sglang.launch_server"}) || is({"python", "-m", "dynamo.sglang"})) {
        p.program = "sglang";
        CheckFlags(w, 3, Fx().sglang, &p, where);
        p.model = p.values["--model-path"];
      } else if (is({"python", "-m", "atom.entrypoints.openai_server"})) {
        p.program = "atom";
        CheckFlags(w, 3, Fx().atom, &p, where);
        p.model = p.values["--model"];
      } else if (is({"python", "-m", "sglang_router.launch_router"})) {
        p.program = "sglang_router";
        CheckFlags(w, 3, Fx().sglang_router, &p, where);
      } else if (is({"vllm-router"})) {
        p.program = "vllm-router";
        CheckFlags(w, 1, Fx().vllm_router, &p, where);
      } else if (is({"python", "-m", "dynamo.frontend"})) {
        p.program = "dynamo.frontend";
        CheckFlags(w, 3, Fx().frontend, &p, where);
      } else if (is({"python", "-m", "dynamo.vllm"})) {
        p.program = "dynamo.vllm";
        CheckFlags(w, 3, Fx().dynamo_vllm, &p, where);
        p.model = p.values["--model"];
      } else if (is({"python", "-m", "dynamo.trtllm"})) {
        p.program = "dynamo.trtllm";
        CheckFlags(w, 3, Fx().dynamo_trtllm, &p, where);
        p.model = p.values["--model"];
      } else if (is({"trtllm-serve", "disaggregated"})) {
        p.program = "trtllm-serve disaggregated";
        CheckFlags(w, 2, Fx().trtllm, &p, where);
      } else if (is({"trtllm-serve"})) {
        p.program = "trtllm";
        p.model = w.size() > 1 ? w[1] : "";
        CheckFlags(w, 2, Fx().trtllm, &p, where);
      } else if (is({"ray", "start"})) {
        p.program = "ray";
        CheckFlags(w, 2, Fx().ray, &p, where);
      } else if (w[0].rfind("--", 0) == 0) {
        p.program = "megatron";
        CheckFlags(w, 0, Fx().megatron, &p, where);
      } else {
        errors.push_back(fmt::format("{}: unknown program in: {}", where, cmd));
        continue;
      }
      out.push_back(p);
    }
    return out;
  }

  // Checks the keys of a TensorRT-LLM YAML (two-space indentation, "- " list items) against the
  // fixture's dotted paths.
  void CheckYaml(const std::string& yaml, const std::string& where) {
    std::istringstream in(yaml);
    std::string line;
    std::vector<std::string> path;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t indent = line.find_first_not_of(' ');
      if (line.compare(indent, 2, "- ") == 0) continue;
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t level = indent / 2;
      path.resize(std::min(path.size(), level));
      path.push_back(line.substr(indent, colon - indent));
      std::string key;
      for (const std::string& k : path) key += (key.empty() ? "" : ".") + k;
      ++flags;
      if (Fx().yaml.count(key) == 0)
        errors.push_back(fmt::format("{}: YAML key {} is not a TensorRT-LLM option", where, key));
    }
  }
};

// A repo id ("org/name") or a placeholder ("<...>"); never a path.
bool IsModelId(const std::string& s) {
  if (s.size() > 2 && s.front() == '<' && s.back() == '>') return true;
  const size_t slash = s.find('/');
  return slash != std::string::npos && slash > 0 && s.find('/', slash + 1) == std::string::npos &&
         s[0] != '.' && !std::filesystem::exists(s);
}

double Value(const Parsed& p, const std::string& flag) {
  const auto it = p.values.find(flag);
  return it == p.values.end() ? -1 : std::stod(it->second);
}

// vLLM's and ATOM's --gpu-memory-utilization `util`: the engine starts (util x total is at most
// what is free after the 551 MiB in use before it, the CUDA context), and its budget holds what
// the plan allocates besides its runtime reserve (weights, KV, recurrent state, activations).
void ExpectUtilizationStartsAndHolds(double util, const Evaluation& ev, const std::string& where) {
  const double cap = ev.mem_capacity_bytes;
  EXPECT_LE(util * cap, cap - 551.0 * 1024 * 1024) << where;
  EXPECT_GE(util * cap * (1 + 1e-9), ev.weight_bytes + ev.kv_bytes + ev.state_bytes + ev.act_bytes)
      << where;
}

// ---- plans ----
struct AggPlan {
  std::string name;
  Problem problem;
  Strategy strategy;
  Evaluation eval;
};

Problem MakeProblem(const ModelSpec& m, const char* gpu, int gpus, Mode mode, int64_t isl = 2048,
                    int64_t osl = 512) {
  Problem p;
  p.model = m;
  StatusOr<ClusterSpec> c = MakeCluster(gpu, gpus, 8);
  EXPECT_TRUE(c.ok()) << gpu;
  p.cluster = *c;
  p.workload.mode = mode;
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.workload.context = isl + osl;
  p.workload.weight = m.weight_dtype;
  return p;
}

// Evaluates `s` at its batch (or the simulator's best batch when that one is not valid).
AggPlan Plan(std::string name, Problem p, Strategy s) {
  EXPECT_TRUE(CheckStrategy(p.model, p.cluster.num_gpus, s).ok())
      << name << ": " << CheckStrategy(p.model, p.cluster.num_gpus, s).message();
  const Simulator sim(p);
  Evaluation e = sim.Evaluate(s);
  if (!e.valid()) {
    Strategy a = s;
    a.batch = 0;
    const Evaluation ea = sim.Evaluate(a);
    if (ea.valid()) e = ea;
  }
  if (e.valid()) s.batch = e.batch;
  return {std::move(name), std::move(p), s, e};
}

constexpr const char* kDraftId = "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B";

std::vector<AggPlan> AggregatedPlans() {
  std::vector<AggPlan> out;
  {  // dense, one node
    const ModelSpec m = Preset("llama-3.1-70b");
    out.push_back(Plan("dense tp8", MakeProblem(m, "h100", 8, Mode::kServe), Megatron(m, 1, 8, 1, 1, 64)));
  }
  {  // dense replicas (TensorRT-LLM: four servers on one node)
    const ModelSpec m = Preset("llama-3.1-8b");
    out.push_back(Plan("dense tp2 dp4", MakeProblem(m, "h100", 8, Mode::kServe),
                       Megatron(m, 1, 2, 4, 1, 64)));
  }
  {  // MoE wide expert parallelism over 2 nodes, redundant experts, two-batch overlap, MTP
    const ModelSpec m = Preset("deepseek-v3");
    Strategy s = Megatron(m, 1, 1, 16, 16, 32);
    s.slots = 288;
    s.overlap = Overlap::kTbo;
    s.mtp = 2;
    Problem p = MakeProblem(m, "h200", 16, Mode::kServe);
    p.workload.weight = DType::kFP8;
    out.push_back(Plan("deepseek wide-EP dp16 ep16 slots288 tbo mtp2", p, s));
  }
  {  // MTP on one node with single-batch overlap
    const ModelSpec m = Preset("deepseek-v3");
    Strategy s = Megatron(m, 1, 1, 8, 8, 16);
    s.mtp = 1;
    s.overlap = Overlap::kSbo;
    Problem p = MakeProblem(m, "h200", 8, Mode::kServe);
    p.workload.weight = DType::kFP8;
    p.workload.kv = DType::kFP8;
    out.push_back(Plan("deepseek dp8 ep8 mtp1 sbo fp8-kv", p, s));
  }
  {  // pipeline and data parallelism over 2 nodes
    const ModelSpec m = Preset("mixtral-8x7b");
    out.push_back(Plan("mixtral pp2 tp2 dp4 ep8", MakeProblem(m, "h100", 16, Mode::kServe),
                       Megatron(m, 2, 2, 4, 8, 16)));
  }
  {  // tensor parallelism across nodes
    const ModelSpec m = Preset("llama-3.1-405b");
    Problem p = MakeProblem(m, "h100", 16, Mode::kServe);
    p.workload.weight = DType::kFP8;
    out.push_back(Plan("llama-405b tp16", p, Megatron(m, 1, 16, 1, 1, 32)));
  }
  {  // a config given by path (an org--name.json file of ../shared/models/hf)
    StatusOr<ModelSpec> m =
        LoadModel(std::string(L2S_SHARED_DIR) + "/models/hf/deepseek-ai--DeepSeek-R1.json");
    if (m.ok()) {
      Problem p = MakeProblem(*m, "h200", 8, Mode::kServe);
      p.workload.weight = DType::kFP8;
      out.push_back(Plan("DeepSeek-R1 by path tp8 ep8", p, Megatron(*m, 1, 8, 1, 8, 32)));
    }
  }
  {  // AMD: SGLang's MoRI all-to-all, ATOM with two-batch overlap, EPLB slots and MTP
    const ModelSpec m = Preset("deepseek-v3");
    Strategy s = Megatron(m, 1, 1, 8, 8, 32);
    s.slots = 288;
    s.overlap = Overlap::kTbo;
    s.mtp = 2;
    Problem p = MakeProblem(m, "mi355x", 8, Mode::kServe);
    p.workload.weight = DType::kFP8;
    p.workload.kv = DType::kFP8;
    out.push_back(Plan("deepseek mi355x dp8 ep8 slots288 tbo mtp2", p, s));
  }
  {  // speculative decoding on a model without MTP layers: an EAGLE-3 draft model
    ModelSpec m = Preset("llama-3.1-70b");
    EXPECT_TRUE(AttachDraftModel(kDraftId, &m).ok());
    Strategy s = Megatron(m, 1, 8, 1, 1, 32);
    s.mtp = 3;
    Problem p = MakeProblem(m, "h100", 8, Mode::kServe);
    p.workload.weight = DType::kFP8;
    out.push_back(Plan("llama-70b tp8 draft-model mtp3", p, s));
    s.mtp = 2;
    p = MakeProblem(m, "mi355x", 8, Mode::kServe);
    p.workload.weight = DType::kFP8;
    out.push_back(Plan("llama-70b mi355x tp8 draft-model mtp2", p, s));
  }
  {  // a decode batch above every engine's CUDA-graph default (TensorRT-LLM 128, SGLang 256)
    const ModelSpec m = Preset("qwen3-30b-a3b");
    Problem p = MakeProblem(m, "h200", 8, Mode::kDecode);
    p.workload.context = 2048;
    out.push_back(Plan("qwen3-30b decode batch 600", p, Megatron(m, 1, 1, 8, 8, 600)));
  }
  return out;
}

// ---- the aggregated commands ----
TEST(LaunchFlags, EveryAggregatedCommandUsesOnlyTheEnginesFlags) {
  Checker ck;
  int valid = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    valid += plan.eval.valid();
    for (Engine e : kAllEngines) {
      std::vector<Strategy> alts = EngineAlternatives(e, plan.problem.model, plan.strategy);
      if (alts.empty()) continue;
      const Strategy& s = Expressible(e, plan.problem.model, plan.strategy) ? plan.strategy : alts[0];
      const int nodes = InstanceNodes(plan.problem, s);
      for (int rank = -1; rank < nodes; ++rank) {
        LaunchOptions o;
        o.eval = &plan.eval;
        o.node_rank = rank;
        o.listen_all = true;
        const LaunchCommand lc = MakeLaunchCommand(e, plan.problem, s, o);
        const std::string where = fmt::format("{} / {} / rank {}", plan.name, EngineName(e), rank);
        for (const Parsed& p : ck.Check(lc.command, where)) {
          if (!p.model.empty()) {
            EXPECT_TRUE(IsModelId(p.model)) << where << ": " << p.model;
          }
        }
        if (!lc.extra_file.empty()) ck.CheckYaml(lc.extra_file, where);
      }
    }
  }
  EXPECT_GE(valid, 6);
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GT(ck.commands, 40);
  EXPECT_GT(ck.flags, 400);
  std::printf("aggregated: %d commands, %d flags checked, %zu outside the fixtures\n", ck.commands,
              ck.flags, ck.errors.size());
}

// The start-ability facts of the aggregated commands, per plan and engine.
TEST(LaunchFlags, AggregatedCommandsCarryWhatThePlanAssumes) {
  Checker ck;
  int graph_checked = 0, mem_checked = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    if (!plan.eval.valid()) continue;
    const Evaluation& ev = plan.eval;
    const Strategy& s = plan.strategy;
    const double cap = ev.mem_capacity_bytes;
    for (Engine e : {Engine::kSglang, Engine::kVllm, Engine::kTrtllm, Engine::kAtom}) {
      if (!Expressible(e, plan.problem.model, s)) continue;
      if (!RunsOn(e, plan.problem.cluster.gpu.vendor)) continue;
      LaunchOptions o;
      o.eval = &ev;
      o.node_rank = 0;
      const LaunchCommand lc = MakeLaunchCommand(e, plan.problem, s, o);
      const std::string where = fmt::format("{} / {}", plan.name, EngineName(e));
      const std::vector<Parsed> ps = ck.Check(lc.command, where);
      ASSERT_FALSE(ps.empty()) << where;
      const Parsed& p = ps.back();
      const int graph_default =
          DefaultsOf(e == Engine::kSglang                          ? l2s::Engine::kSglang
                     : (e == Engine::kVllm || e == Engine::kAtom) ? l2s::Engine::kVllm
                                                                   : l2s::Engine::kTrtllm)
              .cuda_graph_max_batch;
      switch (e) {
        case Engine::kSglang: {
          // DeepEP all-to-all whenever the experts are spread (ep > 1) over DP-attention ranks
          // (MoRI on AMD GPUs, no DeepEP mode there); without DP attention the MoE layers end in
          // one all-reduce (SGLang's default backend).
          if (plan.problem.model.is_moe() && s.ep > 1 && s.dp > 1) {
            const bool amd = plan.problem.cluster.gpu.vendor == "amd";
            EXPECT_EQ(p.values.count("--moe-a2a-backend"), 1u) << where;
            EXPECT_EQ(p.values.at("--moe-a2a-backend"), amd ? "mori" : "deepep") << where;
            EXPECT_EQ(p.values.count("--deepep-mode"), amd ? 0u : 1u) << where;
            if (!amd) {
              EXPECT_EQ(p.values.at("--deepep-mode"), "auto") << where;
            }
          } else {
            EXPECT_EQ(p.values.count("--moe-a2a-backend"), 0u) << where;
          }
          // Weights + KV fit in the static pool.
          const double share = (ev.weight_bytes + ev.kv_bytes + ev.state_bytes) / cap;
          EXPECT_GE(Value(p, "--mem-fraction-static") + 1e-9, share) << where;
          ++mem_checked;
          if (s.batch > graph_default) {
            EXPECT_GE(Value(p, "--cuda-graph-max-bs"), s.batch) << where;
            ++graph_checked;
          } else {
            EXPECT_EQ(p.values.count("--cuda-graph-max-bs"), 0u) << where;
          }
          break;
        }
        case Engine::kVllm: {
          ExpectUtilizationStartsAndHolds(Value(p, "--gpu-memory-utilization"), ev, where);
          EXPECT_GE(Value(p, "--gpu-memory-utilization"), 0.90) << where;
          ++mem_checked;
          if (s.batch > graph_default) {
            EXPECT_GE(Value(p, "--max-cudagraph-capture-size"), s.batch) << where;
            ++graph_checked;
          }
          EXPECT_EQ(Value(p, "--max-num-batched-tokens"), 8192) << where;
          break;
        }
        case Engine::kTrtllm: {
          // free_gpu_memory_fraction x (memory left after weights, activations, reserve) holds the KV.
          const size_t at = lc.extra_file.find("free_gpu_memory_fraction: ");
          ASSERT_NE(at, std::string::npos) << where;
          const double frac = std::stod(lc.extra_file.substr(at + 26));
          const double free = cap - ev.weight_bytes - ev.act_bytes - ev.reserve_bytes;
          EXPECT_GE(frac * free * (1 + 1e-9), ev.kv_bytes + ev.state_bytes) << where;
          ++mem_checked;
          if (s.batch > graph_default) {
            EXPECT_TRUE(Has(lc.extra_file, fmt::format("cuda_graph_config:\n  enable_padding: "
                                                       "true\n  max_batch_size: {}\n",
                                                       s.batch)))
                << where << "\n" << lc.extra_file;
            ++graph_checked;
          }
          break;
        }
        case Engine::kAtom: {
          // vLLM's scheduler limits, stated (ATOM's own defaults are 512 / 16384).
          ExpectUtilizationStartsAndHolds(Value(p, "--gpu-memory-utilization"), ev, where);
          ++mem_checked;
          EXPECT_EQ(Value(p, "--max-num-seqs"), s.batch * s.pp) << where;
          EXPECT_EQ(Value(p, "--max-num-batched-tokens"), 8192) << where;
          if (s.batch > graph_default) {
            EXPECT_TRUE(Has(p.values.at("--cudagraph-capture-sizes"),
                            fmt::format(",{}]", s.batch)))
                << where;
            ++graph_checked;
          }
          break;
        }
        case Engine::kMegatron: break;
      }
    }
  }
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GE(graph_checked, 3);  // the batch-600 plan on every engine at least
  EXPECT_GE(mem_checked, 10);
}

// Speculative decoding loads what was priced: a draft model's plan starts each engine's EAGLE-3
// path with that draft (and K draft tokens), an MTP plan the engine's MTP path without a draft.
TEST(LaunchFlags, SpeculativeCommandsLoadWhatThePlanDraftsWith) {
  Checker ck;
  int drafts = 0, mtps = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    const Strategy& s = plan.strategy;
    if (s.mtp <= 0) continue;
    const bool draft = plan.problem.model.has_draft_model();
    for (Engine e : {Engine::kSglang, Engine::kVllm, Engine::kTrtllm, Engine::kAtom}) {
      if (!Expressible(e, plan.problem.model, s)) continue;
      if (!RunsOn(e, plan.problem.cluster.gpu.vendor)) continue;
      LaunchOptions o;
      o.node_rank = 0;
      const LaunchCommand lc = MakeLaunchCommand(e, plan.problem, s, o);
      const std::string where = fmt::format("{} / {}", plan.name, EngineName(e));
      const std::vector<Parsed> ps = ck.Check(lc.command, where);
      ASSERT_FALSE(ps.empty()) << where;
      const Parsed& p = ps.back();
      auto value = [&](const char* flag) {
        auto it = p.values.find(flag);
        return it == p.values.end() ? std::string("<absent>") : it->second;
      };
      (draft ? drafts : mtps) += 1;
      switch (e) {
        case Engine::kSglang:
          EXPECT_EQ(value("--speculative-algorithm"), draft ? "EAGLE3" : "EAGLE") << where;
          EXPECT_EQ(value("--speculative-draft-model-path"), draft ? kDraftId : "<absent>")
              << where;
          EXPECT_EQ(value("--speculative-num-steps"), std::to_string(s.mtp)) << where;
          EXPECT_EQ(value("--speculative-num-draft-tokens"), std::to_string(s.mtp + 1)) << where;
          break;
        case Engine::kVllm:
          EXPECT_EQ(value("--speculative-config"),
                    draft ? fmt::format("{{\"method\":\"eagle3\",\"model\":\"{}\","
                                        "\"num_speculative_tokens\":{}}}",
                                        kDraftId, s.mtp)
                          : fmt::format("{{\"method\":\"deepseek_mtp\","
                                        "\"num_speculative_tokens\":{}}}",
                                        s.mtp))
              << where;
          break;
        case Engine::kTrtllm:
          EXPECT_TRUE(Has(lc.extra_file,
                          draft ? fmt::format("speculative_config:\n  decoding_type: Eagle\n  "
                                              "max_draft_len: {}\n  speculative_model: {}\n",
                                              s.mtp, kDraftId)
                                : fmt::format("speculative_config:\n  decoding_type: MTP\n  "
                                              "num_nextn_predict_layers: {}\n",
                                              s.mtp)))
              << where << "\n" << lc.extra_file;
          ck.CheckYaml(lc.extra_file, where);
          break;
        case Engine::kAtom:
          EXPECT_EQ(value("--method"), draft ? "eagle3" : "mtp") << where;
          EXPECT_EQ(value("--draft-model"), draft ? kDraftId : "<absent>") << where;
          EXPECT_EQ(value("--num-speculative-tokens"), std::to_string(s.mtp)) << where;
          break;
        case Engine::kMegatron: break;
      }
    }
  }
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GE(drafts, 4);  // SGLang, vLLM and TensorRT-LLM on h100; ATOM (and the others) on mi355x
  EXPECT_GE(mtps, 4);
}

// ---- Dynamo's aggregated workers ----
// Every aggregated plan on NVIDIA GPUs as Dynamo workers of each engine, at every node rank: the
// worker's flags (and TensorRT-LLM's engine-args YAML) are the worker program's, the frontend's
// its own; a dense model's data-parallel replicas become one worker each.
TEST(LaunchFlags, EveryDynamoAggregatedCommandUsesOnlyTheWorkersFlags) {
  Checker ck;
  int launches = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    if (!plan.eval.valid() || plan.problem.cluster.gpu.vendor != "nvidia") continue;
    for (Engine e : {Engine::kSglang, Engine::kVllm, Engine::kTrtllm}) {
      if (!Expressible(e, plan.problem.model, plan.strategy)) continue;
      EngineTranslation t;
      t.engine = e;
      t.runnable = true;
      t.launched = plan.strategy;
      t.launched_eval = plan.eval;
      const DynamoAggLaunch d = MakeDynamoAggLaunch(t, plan.problem, 2);
      ASSERT_TRUE(d.runnable) << plan.name;
      ++launches;
      const std::string where = fmt::format("{} / dynamo+{}", plan.name, EngineName(e));
      const bool dense_dp = !plan.problem.model.is_moe() && plan.strategy.dp > 1;
      EXPECT_EQ(d.workers, 2 * (dense_dp ? plan.strategy.dp : 1)) << where;
      EXPECT_EQ(d.gpus_per_worker, plan.strategy.gpus() / (dense_dp ? plan.strategy.dp : 1))
          << where;
      ck.Check(d.frontend, where + " / frontend");
      for (const Parsed& p : ck.Check(d.worker.command, where)) {
        EXPECT_TRUE(p.program.rfind("dynamo.", 0) == 0 || p.program == "sglang") << where;
        EXPECT_TRUE(IsModelId(p.model)) << where << ": " << p.model;
        if (dense_dp) {
          EXPECT_EQ(p.values.count("--data-parallel-size") + p.values.count("--dp-size"), 0u)
              << where;
        }
      }
      EXPECT_TRUE(Has(d.worker.command, "python -m dynamo.")) << d.worker.command;
      // A vLLM worker of a MoE model's attention-DP ranks runs them all (internal load balancing)
      // and says so.
      const bool vllm_dp = e == Engine::kVllm && plan.problem.model.is_moe() && plan.strategy.dp > 1;
      EXPECT_EQ(std::any_of(d.notes.begin(), d.notes.end(),
                            [](const std::string& n) { return Has(n, "internal load balancing"); }),
                vllm_dp)
          << where;
      if (!d.worker.extra_file.empty()) ck.CheckYaml(d.worker.extra_file, where);
      // Every node of a multi-node worker.
      Strategy w = plan.strategy;
      if (dense_dp) w.dp = 1;
      for (int rank = 0; rank < InstanceNodes(plan.problem, w); ++rank) {
        LaunchOptions o;
        o.eval = &plan.eval;
        o.node_rank = rank;
        const LaunchCommand lc = DynamoWorkerCommand(e, plan.problem, w, o, "agg.yaml");
        ck.Check(lc.command, fmt::format("{} / rank {}", where, rank));
      }
    }
  }
  EXPECT_GE(launches, 15);
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  std::printf("dynamo aggregated: %d commands, %d flags checked, %zu outside the fixtures\n",
              ck.commands, ck.flags, ck.errors.size());
}

// ---- the disaggregated commands ----
PoolPlan Pool(const ModelSpec& m, const char* gpu, Strategy s, int instances, Mode mode,
              int64_t isl, int64_t osl) {
  PoolPlan p;
  p.instances = instances;
  p.gpus_per_instance = s.gpus();
  p.problem = MakeProblem(m, gpu, s.gpus(), mode, isl, osl);
  if (mode == Mode::kDecode) p.problem.workload.context = isl + osl / 2;
  const Simulator sim(p.problem);
  Evaluation e = sim.Evaluate(s);
  if (!e.valid()) {
    s.batch = 0;
    e = sim.Evaluate(s);
  }
  if (e.valid()) s.batch = e.batch;
  p.strategy = s;
  return p;
}

struct DisaggPlanCase {
  std::string name;
  PoolPlan prefill, decode;
};

std::vector<DisaggPlanCase> DisaggPlans() {
  std::vector<DisaggPlanCase> out;
  {
    const ModelSpec m = Preset("mixtral-8x7b");
    out.push_back({"mixtral P 2x dp8 / D 1x tp2 dp4",
                   Pool(m, "h100", Megatron(m, 1, 1, 8, 8, 4), 2, Mode::kPrefill, 4096, 1024),
                   Pool(m, "h100", Megatron(m, 1, 2, 4, 8, 64), 1, Mode::kDecode, 4096, 1024)});
  }
  {  // decode instances of 16 GPUs (2 nodes each) with MTP
    const ModelSpec m = Preset("deepseek-v3");
    Strategy d = Megatron(m, 1, 1, 16, 16, 64);
    d.mtp = 1;
    PoolPlan pp = Pool(m, "h200", Megatron(m, 1, 1, 8, 8, 2), 3, Mode::kPrefill, 2048, 512);
    PoolPlan dp = Pool(m, "h200", d, 1, Mode::kDecode, 2048, 512);
    pp.problem.workload.weight = dp.problem.workload.weight = DType::kFP8;
    out.push_back({"deepseek P 3x dp8 / D 1x dp16 mtp1", pp, dp});
  }
  {  // dense: small instances sharing nodes
    const ModelSpec m = Preset("llama-3.1-8b");
    out.push_back({"llama-8b P 4x tp1 / D 2x tp2",
                   Pool(m, "h100", Megatron(m, 1, 1, 1, 1, 8), 4, Mode::kPrefill, 2048, 256),
                   Pool(m, "h100", Megatron(m, 1, 2, 1, 1, 128), 2, Mode::kDecode, 2048, 256)});
  }
  return out;
}

TEST(LaunchFlags, EveryDisaggregatedCommandUsesOnlyTheEnginesFlags) {
  Checker ck;
  int runnable = 0;
  for (const DisaggPlanCase& c : DisaggPlans()) {
    for (DisaggEngine e : kDisaggEngines) {
      // Dynamo with each engine its workers run.
      std::vector<std::optional<Engine>> backends = {std::nullopt};
      if (e == DisaggEngine::kDynamo) backends = {Engine::kSglang, Engine::kVllm, Engine::kTrtllm};
      for (const std::optional<Engine> backend : backends)
      for (KvTransfer t : {KvTransfer::kNixl, KvTransfer::kMooncake}) {
        StatusOr<DisaggLaunch> l = MakeDisaggLaunch(e, c.prefill, c.decode, t, backend);
        ASSERT_TRUE(l.ok()) << c.name << ": " << l.status().message();
        if (backend) {
          EXPECT_EQ(l->backend, *backend);
        }
        if (!l->runnable) continue;
        ++runnable;
        for (const DisaggProcess& p : l->processes) {
          const std::string where =
              fmt::format("{} / {}{} / {} / {}", c.name, DisaggEngineName(e),
                          backend ? "+" + std::string(EngineName(*backend)) : "",
                          KvTransferName(t), p.role);
          for (const Parsed& x : ck.Check(p.command, where)) {
            if (!x.model.empty()) {
              EXPECT_TRUE(IsModelId(x.model)) << where << ": " << x.model;
            }
            // SGLang expert parallelism runs DeepEP in the mode of its side.
            if (x.program == "sglang" && x.values.count("--ep-size") && x.values.at("--ep-size") != "1") {
              EXPECT_EQ(x.values.at("--moe-a2a-backend"), "deepep") << where;
              EXPECT_EQ(x.values.at("--deepep-mode"), p.role == "prefill" ? "normal" : "low_latency")
                  << where;
            }
          }
          if (!p.file.empty()) ck.CheckYaml(p.file, where);
        }
      }
    }
  }
  EXPECT_GE(runnable, 28);
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  std::printf("disaggregated: %d commands, %d flags checked, %zu outside the fixtures\n",
              ck.commands, ck.flags, ck.errors.size());
}

// ---- the emitted files ----
std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Checks every server line of the node scripts in `dir`: flags in the fixtures, ports distinct and
// CUDA_VISIBLE_DEVICES disjoint within each script (one node). Returns the scripts checked.
int CheckScripts(const std::filesystem::path& dir, int gpus_per_node, Checker* ck) {
  int scripts = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".yml" || entry.path().extension() == ".yaml") {
      if (name != "lws.yaml" && name != "dynamo-graph.yaml")
        ck->CheckYaml(ReadAll(entry.path()), dir.filename().string() + "/" + name);
      continue;
    }
    if (entry.path().extension() != ".sh") continue;
    ++scripts;
    // bash parses it.
    EXPECT_EQ(std::system(("bash -n '" + entry.path().string() + "'").c_str()), 0) << entry.path();
    std::istringstream in(ReadAll(entry.path()));
    std::string line;
    std::set<std::string> ports;
    std::set<int> devices;
    while (std::getline(in, line)) {
      std::string cmd;
      const size_t nohup = line.find("nohup ");
      if (nohup != std::string::npos && line.find(" > logs/") != std::string::npos) {
        // NAME=VALUE prefixes come before nohup.
        EXPECT_TRUE(nohup == 0 || line[nohup - 1] == ' ') << line;
        cmd = line.substr(0, nohup) + line.substr(nohup + 6, line.find(" > logs/") - nohup - 6);
      } else if (line.rfind("exec ", 0) == 0) {
        cmd = line.substr(5);
      } else {
        continue;
      }
      const std::string where = dir.filename().string() + "/" + name;
      for (const Parsed& p : ck->Check(cmd, where)) {
        if (p.values.count("--port")) {
          EXPECT_TRUE(ports.insert(p.values.at("--port")).second)
              << where << ": port " << p.values.at("--port") << " twice";
        }
        // SGLang prefill servers (and Dynamo's SGLang prefill workers) each listen on their own
        // bootstrap port.
        if (p.values.count("--disaggregation-bootstrap-port")) {
          EXPECT_TRUE(ports.insert(p.values.at("--disaggregation-bootstrap-port")).second)
              << where << ": port " << p.values.at("--disaggregation-bootstrap-port") << " twice";
        }
        for (const std::string& env : p.env) {
          if (env.rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) continue;
          std::stringstream ds(env.substr(21));
          std::string d;
          while (std::getline(ds, d, ',')) {
            const int g = std::stoi(d);
            EXPECT_LT(g, gpus_per_node) << where;
            EXPECT_TRUE(devices.insert(g).second) << where << ": GPU " << g << " twice";
          }
        }
      }
    }
  }
  return scripts;
}

TEST(LaunchFlags, EmittedScriptsStartOnDistinctPortsAndDevices) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_test_{}", ::getpid());
  std::filesystem::remove_all(root);
  Checker ck;
  int scripts = 0, lws = 0, graphs = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    if (!plan.eval.valid()) continue;
    for (Engine e : kAllEngines) {
      if (!Expressible(e, plan.problem.model, plan.strategy)) continue;
      const std::filesystem::path dir =
          root / fmt::format("{}-{}", EngineName(e), scripts + lws + graphs + ck.commands);
      std::vector<std::string> written;
      ASSERT_TRUE(EmitDeployment(dir.string(), e, plan.problem, plan.strategy, plan.eval, {}, &written).ok())
          << plan.name;
      EXPECT_TRUE(std::filesystem::exists(dir / "DEPLOY.md"));
      // A plan that drafts with a draft model says that every server loads it.
      if (e != Engine::kMegatron) {
        EXPECT_EQ(Has(ReadAll(dir / "DEPLOY.md"),
                      fmt::format("Speculative decoding with the draft model `{}`", kDraftId)),
                  plan.problem.model.has_draft_model() && plan.strategy.mtp > 0)
            << plan.name << " / " << EngineName(e);
      }
      scripts += CheckScripts(dir, plan.problem.cluster.gpus_per_domain, &ck);
      if (std::filesystem::exists(dir / "lws.yaml")) {
        ++lws;
        const std::string y = ReadAll(dir / "lws.yaml");
        EXPECT_TRUE(Has(y, "kind: LeaderWorkerSet")) << y;
        EXPECT_TRUE(Has(y, fmt::format("size: {}", InstanceNodes(plan.problem, plan.strategy)))) << y;
      }
    }
  }
  for (const DisaggPlanCase& c : DisaggPlans()) {
    StatusOr<std::vector<DisaggLaunch>> all = TranslateDisaggPlan(c.prefill, c.decode);
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), kDisaggEngines.size());  // NVIDIA pools: Dynamo is (*all)[3]
    for (const DisaggLaunch& l : *all) {
      if (!l.runnable) continue;
      const std::filesystem::path dir =
          root / fmt::format("disagg-{}-{}", DisaggEngineName(l.engine), scripts + graphs);
      ASSERT_TRUE(EmitDisaggDeployment(dir.string(), l, {}, nullptr).ok());
      scripts += CheckScripts(dir, 8, &ck);
      if (std::filesystem::exists(dir / "dynamo-graph.yaml")) {
        ++graphs;
        const std::string y = ReadAll(dir / "dynamo-graph.yaml");
        EXPECT_TRUE(Has(y, "kind: DynamoGraphDeployment")) << y;
        EXPECT_TRUE(Has(y, "subComponentType: prefill")) << y;
      }
    }
  }
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GT(scripts, 30);
  EXPECT_GE(lws, 6);     // the 3 multi-node aggregated plans on SGLang and vLLM
  EXPECT_GE(graphs, 3);  // the disaggregated plans that span nodes
  std::printf("emitted: %d scripts, %d commands, %d flags checked, %zu outside the fixtures\n",
              scripts, ck.commands, ck.flags, ck.errors.size());
  std::filesystem::remove_all(root);
}

// Every file a Dynamo graph's worker reads (`--extra-engine-args NAME`: TensorRT-LLM's engine
// options) is written by the pod's command before it (a pod has none of the files beside the
// node scripts); returns how many such files the graph has.
int ExpectGraphWritesItsFiles(const std::string& y) {
  int files = 0;
  const std::string flag = "--extra-engine-args ";
  for (size_t at = y.find(flag); at != std::string::npos; at = y.find(flag, at + 1)) {
    const size_t from = at + flag.size();
    const std::string name = y.substr(from, y.find_first_of(" '\n", from) - from);
    const size_t written = y.rfind("cat > " + name + " <<'L2S_EOF'\n", at);
    EXPECT_NE(written, std::string::npos) << name << "\n" << y;
    if (written != std::string::npos) {
      EXPECT_NE(y.find("L2S_EOF\n", written + 20), std::string::npos) << y;
    }
    ++files;
  }
  return files;
}

// A disaggregated plan over several nodes emitted for SGLang, vLLM or TensorRT-LLM: its Kubernetes
// graph runs Dynamo's workers of that engine (the graph of the default Dynamo translation ran
// SGLang workers for a vLLM plan), and DEPLOY.md says so; a plan whose nodes each hold one pool is
// started decode nodes first, without the shared-node wording.
TEST(LaunchFlags, DisaggregatedGraphRunsTheAskedEnginesWorkers) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_graph_{}", ::getpid());
  std::filesystem::remove_all(root);
  const DisaggPlanCase c = DisaggPlans()[1];  // DeepSeek-V3: 3 prefill nodes, 2 decode nodes
  StatusOr<std::vector<DisaggLaunch>> all = TranslateDisaggPlan(c.prefill, c.decode);
  ASSERT_TRUE(all.ok());
  const std::map<DisaggEngine, std::string> worker = {
      {DisaggEngine::kSglang, "python -m dynamo.sglang "},
      {DisaggEngine::kVllm, "python -m dynamo.vllm "},
      {DisaggEngine::kTrtllm, "python -m dynamo.trtllm "}};
  int graphs = 0;
  for (const auto& [e, program] : worker) {
    const DisaggLaunch* l = nullptr;
    for (const DisaggLaunch& x : *all)
      if (x.engine == e) l = &x;
    ASSERT_NE(l, nullptr);
    if (!l->runnable) continue;
    const std::filesystem::path dir = root / std::string(DisaggEngineName(e));
    EmitOptions separate;
    separate.shared_nodes = false;
    ASSERT_TRUE(EmitDisaggregatedPlan(dir.string(), *all, e, separate).ok());
    const std::string md = ReadAll(dir / "DEPLOY.md");
    EXPECT_TRUE(Has(md, "The decode nodes' scripts, then the prefill nodes'")) << md;
    EXPECT_FALSE(Has(md, "the pools share the nodes")) << md;
    if (!std::filesystem::exists(dir / "dynamo-graph.yaml")) {
      // Only when Dynamo's workers of the engine would run a pool differently.
      StatusOr<DisaggLaunch> d =
          MakeDisaggLaunch(DisaggEngine::kDynamo, c.prefill, c.decode, KvTransfer::kNixl,
                           l->backend);
      EXPECT_TRUE(!d.ok() || !d->runnable || !(d->prefill == l->prefill) ||
                  !(d->decode == l->decode))
          << DisaggEngineName(e);
      continue;
    }
    ++graphs;
    const std::string y = ReadAll(dir / "dynamo-graph.yaml");
    // TensorRT-LLM's workers read their options from a file, written by the pod first; a
    // multinode worker's MPI job is the operator's.
    EXPECT_EQ(ExpectGraphWritesItsFiles(y) > 0, e == DisaggEngine::kTrtllm) << y;
    EXPECT_FALSE(Has(y, "mpirun") || Has(y, "${MPI_HOSTS}")) << y;
    for (const auto& [other, other_program] : worker)
      EXPECT_EQ(Has(y, other_program), other == e) << DisaggEngineName(e) << "\n" << y;
    EXPECT_TRUE(Has(md, fmt::format("({} workers with the same engine flags)",
                                    EngineTitle(l->backend))))
        << md;
  }
  EXPECT_GE(graphs, 2);
  // Shared nodes, each node one pool's: the order names no shared-node scripts.
  const std::filesystem::path shared = root / "shared";
  ASSERT_TRUE(EmitDisaggregatedPlan(shared.string(), *all, DisaggEngine::kSglang, {}).ok());
  const std::string md = ReadAll(shared / "DEPLOY.md");
  EXPECT_TRUE(Has(md, "1. Each node's script, the decode nodes' first")) << md;
  EXPECT_FALSE(Has(md, "the pools share the nodes")) << md;
  std::filesystem::remove_all(root);
}

// An aggregated plan emitted for Dynamo (EmitOptions::dynamo): the node scripts start workers with
// the worker programs' flags on disjoint devices, frontend.sh starts Dynamo's frontend, and
// DEPLOY.md starts the discovery service first.
TEST(LaunchFlags, EmittedDynamoWorkersStartBehindTheFrontend) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_dynamo_{}", ::getpid());
  std::filesystem::remove_all(root);
  Checker ck;
  int emitted = 0, graphs = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    if (!plan.eval.valid() || plan.problem.cluster.gpu.vendor != "nvidia") continue;
    for (Engine e : {Engine::kSglang, Engine::kVllm, Engine::kTrtllm}) {
      if (!Expressible(e, plan.problem.model, plan.strategy)) continue;
      const std::filesystem::path dir = root / fmt::format("{}-{}", EngineName(e), emitted);
      EmitOptions opt;
      opt.dynamo = true;
      opt.replicas = 2;
      ASSERT_TRUE(EmitDeployment(dir.string(), e, plan.problem, plan.strategy, plan.eval, opt,
                                 nullptr).ok())
          << plan.name;
      CheckScripts(dir, plan.problem.cluster.gpus_per_domain, &ck);
      ASSERT_TRUE(std::filesystem::exists(dir / "frontend.sh")) << plan.name;
      EXPECT_FALSE(std::filesystem::exists(dir / "router.sh")) << plan.name;
      EXPECT_TRUE(Has(ReadAll(dir / "frontend.sh"), "exec python -m dynamo.frontend --http-port 8000"));
      // Across nodes: Dynamo's graph deployment (frontend + the workers), not a LeaderWorkerSet;
      // the operator sets a multinode worker's rank and leader, so no node flags remain.
      EXPECT_FALSE(std::filesystem::exists(dir / "lws.yaml")) << plan.name;
      if (std::filesystem::exists(dir / "dynamo-graph.yaml")) {
        ++graphs;
        const std::string y = ReadAll(dir / "dynamo-graph.yaml");
        EXPECT_TRUE(Has(y, "kind: DynamoGraphDeployment")) << y;
        EXPECT_TRUE(Has(y, "componentType: frontend")) << y;
        EXPECT_TRUE(Has(y, "python -m dynamo.frontend")) << y;
        EXPECT_TRUE(Has(y, "componentType: worker")) << y;
        EXPECT_FALSE(Has(y, "${NODE_RANK}")) << y;
        // A multinode TensorRT-LLM worker's MPI job is the operator's (it wraps the leader's
        // command in its mpirun over the pods), not the node scripts' ssh one.
        EXPECT_FALSE(Has(y, "mpirun") || Has(y, "${MPI_HOSTS}")) << y;
        EXPECT_EQ(ExpectGraphWritesItsFiles(y) > 0, e == Engine::kTrtllm) << y;
      }
      const std::string md = ReadAll(dir / "DEPLOY.md");
      EXPECT_TRUE(Has(md, "1. etcd")) << md;
      EXPECT_TRUE(Has(md, "NVIDIA Dynamo (" + std::string(EngineTitle(e)) + " workers)")) << md;
      // Every node script line is a Dynamo worker (or nothing on an MPI job's other nodes).
      for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".sh" && entry.path().filename() != "frontend.sh") {
          const std::string sh = ReadAll(entry.path());
          EXPECT_FALSE(Has(sh, "vllm serve") || Has(sh, "sglang.launch_server") ||
                       Has(sh, "trtllm-serve"))
              << sh;
        }
      ++emitted;
    }
  }
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GE(emitted, 15);
  EXPECT_GE(graphs, 6);  // every plan whose 2 instances span more than one node
  std::filesystem::remove_all(root);
}

// Aggregated replicas (EmitOptions::replicas): each engine's replicas start on disjoint devices
// and ports, and router.sh reaches each instance's head server with the router's real flags.
TEST(LaunchFlags, EmittedReplicasGetARouterWithItsRealFlags) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_replicas_{}", ::getpid());
  std::filesystem::remove_all(root);
  Checker ck;
  int routers = 0;
  for (const AggPlan& plan : AggregatedPlans()) {
    if (!plan.eval.valid() || !plan.problem.model.is_moe()) continue;
    for (Engine e : {Engine::kSglang, Engine::kVllm, Engine::kTrtllm}) {
      if (!Expressible(e, plan.problem.model, plan.strategy)) continue;
      const std::filesystem::path dir = root / fmt::format("{}-{}", EngineName(e), routers);
      EmitOptions opt;
      opt.replicas = 3;
      ASSERT_TRUE(EmitDeployment(dir.string(), e, plan.problem, plan.strategy, plan.eval, opt,
                                 nullptr).ok())
          << plan.name;
      CheckScripts(dir, plan.problem.cluster.gpus_per_domain, &ck);
      ASSERT_TRUE(std::filesystem::exists(dir / "router.sh")) << plan.name;
      const std::string r = ReadAll(dir / "router.sh");
      int urls = 0;  // one URL per instance
      for (size_t at = r.find("http://<"); at != std::string::npos; at = r.find("http://<", at + 1))
        ++urls;
      EXPECT_EQ(urls, 3) << r;
      EXPECT_TRUE(Has(r, e == Engine::kSglang ? "sglang_router.launch_router --worker-urls"
                                              : "vllm-router --worker-urls"))
          << r;
      EXPECT_TRUE(Has(ReadAll(dir / "DEPLOY.md"), "Each of the 3 replicas")) << plan.name;
      ++routers;
    }
  }
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  EXPECT_GE(routers, 3);
  std::filesystem::remove_all(root);
}

TEST(LaunchFlags, PlacementPartitionsNodes) {
  // 8-GPU nodes: 2-GPU instances pack 4 per node on disjoint devices and distinct ports.
  const std::vector<PlacedServer> p = PlaceInstances(6, 2, 8, 30000);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].devices, "0,1");
  EXPECT_EQ(p[3].devices, "6,7");
  EXPECT_EQ(p[3].port, 30003);
  EXPECT_EQ(p[4].node, 1);
  EXPECT_EQ(p[4].devices, "0,1");
  EXPECT_EQ(p[4].port, 30000);
  // A whole node: no device list; 16-GPU instances take 2 nodes with ranks 0 and 1.
  EXPECT_EQ(PlaceInstances(2, 8, 8, 8000)[1].devices, "");
  const std::vector<PlacedServer> w = PlaceInstances(2, 16, 8, 8000);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[3].node, 3);
  EXPECT_EQ(w[3].node_rank, 1);
  EXPECT_EQ(w[3].port, 0);
  EXPECT_EQ(w[2].port, 8000);
}

// Pools sharing a cluster: their servers packed onto common nodes, taken in proportion.
TEST(LaunchFlags, SharedPlacementPacksBothPoolsOntoCommonNodes) {
  // 2 x 4 GPUs (keys 1/4, 3/4) and 3 x 2 GPUs (keys 1/6, 1/2, 5/6) on 8-GPU nodes, the router's
  // port 8000 reserved: order B0 A0 B1 A1 B2; node 0 gets B0 (0,1), A0 (2-5), B1 (6,7); node 1
  // A1 (0-3), B2 (4,5). Ports count from the base past those taken on the node.
  const auto g = PlaceSharedNodes({{2, 4, 30000}, {3, 2, 30000}}, 8, 8000);
  ASSERT_EQ(g.size(), 2u);
  ASSERT_EQ(g[0].size(), 2u);
  ASSERT_EQ(g[1].size(), 3u);
  struct Want {
    int group, instance, node;
    const char* devices;
    int port;
  };
  for (const Want& w : {Want{1, 0, 0, "0,1", 30000}, Want{0, 0, 0, "2,3,4,5", 30001},
                        Want{1, 1, 0, "6,7", 30002}, Want{0, 1, 1, "0,1,2,3", 30000},
                        Want{1, 2, 1, "4,5", 30001}}) {
    const PlacedServer& ps = g[w.group][w.instance];
    EXPECT_EQ(ps.node, w.node) << w.group << "/" << w.instance;
    EXPECT_EQ(ps.devices, w.devices) << w.group << "/" << w.instance;
    EXPECT_EQ(ps.first_device, std::stoi(w.devices)) << w.group << "/" << w.instance;
    EXPECT_EQ(ps.port, w.port) << w.group << "/" << w.instance;
  }
  // The reserved port is skipped: base 8000 starts at 8001.
  EXPECT_EQ(PlaceSharedNodes({{2, 1, 8000}}, 8, 8000)[0][1].port, 8002);
  // An instance over 16 GPUs takes 2 whole nodes of its own (ranks 0, 1); the others pack
  // around it: keys A0 1/2, B0 1/6, B1 1/2, B2 5/6 -> B0 node 0, A0 nodes 1-2, B1 node 3...
  const auto w = PlaceSharedNodes({{1, 16, 30000}, {3, 8, 30000}}, 8);
  ASSERT_EQ(w[0].size(), 2u);
  EXPECT_EQ(w[1][0].node, 0);
  EXPECT_EQ(w[1][0].devices, "");
  EXPECT_EQ(w[0][0].node, 1);
  EXPECT_EQ(w[0][1].node, 2);
  EXPECT_EQ(w[0][1].node_rank, 1);
  EXPECT_EQ(w[0][1].port, 0);
  EXPECT_EQ(w[1][1].node, 3);
  EXPECT_EQ(w[1][2].node, 4);
}

// PlaceSharedNodes over random pools (a fixed LCG, not picked by hand): every instance placed
// (an instance over more than a node on that many consecutive whole nodes, ranks 0..), no node
// holding more GPUs than it has, device ranges disjoint and ports distinct per node, and never
// the reserved port.
TEST(LaunchFlags, SharedPlacementInvariantsOverRandomPools) {
  uint64_t state = 20261205;
  auto next = [&](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  const int kGpus[] = {1, 2, 3, 4, 8, 16};
  for (int trial = 0; trial < 300; ++trial) {
    const int P = next(2) == 0 ? 4 : 8;
    std::vector<PoolGroup> groups(1 + next(3));
    for (PoolGroup& g : groups) g = {1 + next(6), kGpus[next(6)], next(2) == 0 ? 8000 : 30000};
    const auto placed = PlaceSharedNodes(groups, P, 8000);
    ASSERT_EQ(placed.size(), groups.size());
    std::map<int, int> used;
    std::map<int, std::set<int>> devices, ports;
    for (size_t k = 0; k < groups.size(); ++k) {
      const PoolGroup& g = groups[k];
      const int span = g.gpus > P ? (g.gpus + P - 1) / P : 1;
      ASSERT_EQ(placed[k].size(), static_cast<size_t>(g.instances * span)) << trial;
      for (size_t i = 0; i < placed[k].size(); ++i) {
        const PlacedServer& ps = placed[k][i];
        EXPECT_EQ(ps.instance, static_cast<int>(i) / span) << trial;
        EXPECT_EQ(ps.node_rank, static_cast<int>(i) % span) << trial;
        if (ps.node_rank > 0) {
          EXPECT_EQ(ps.node, placed[k][i - 1].node + 1) << trial;
        }
        used[ps.node] += std::min(g.gpus, P);
        if (!ps.devices.empty()) {
          for (int d = ps.first_device; d < ps.first_device + g.gpus; ++d)
            EXPECT_TRUE(devices[ps.node].insert(d).second) << trial << ": GPU " << d << " twice";
        } else {
          EXPECT_TRUE(devices[ps.node].empty()) << trial;  // a whole node is its server's alone
          for (int d = 0; d < P; ++d) devices[ps.node].insert(d);
        }
        if (ps.port > 0) {
          EXPECT_NE(ps.port, 8000) << trial;
          EXPECT_TRUE(ports[ps.node].insert(ps.port).second) << trial << ": port " << ps.port;
        }
      }
    }
    for (const auto& [node, gpus] : used) EXPECT_LE(gpus, P) << trial << ": node " << node;
  }
}

// Pools of a mixed cluster keep their own hosts: an 8-GPU decode instance on GB200 compute trays
// of 4 spans two trays (HEAD_ADDR, ranks 0 and 1), while the 8-GPU H100 prefill instance is one
// host's.
TEST(LaunchFlags, MixedPoolsPlaceEachOnItsOwnHosts) {
  const ModelSpec m = Preset("llama-3.1-70b");
  const PoolPlan p = Pool(m, "h100", Megatron(m, 1, 8, 1, 1, 8), 1, Mode::kPrefill, 2048, 256);
  const PoolPlan d = Pool(m, "gb200", Megatron(m, 1, 8, 1, 1, 64), 1, Mode::kDecode, 2048, 256);
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(DisaggEngine::kSglang, p, d);
  ASSERT_TRUE(l.ok() && l->runnable);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_mixed_{}", ::getpid());
  std::filesystem::remove_all(dir);
  EmitOptions opt;
  opt.shared_nodes = false;
  ASSERT_TRUE(EmitDisaggDeployment(dir.string(), *l, opt, nullptr).ok());
  EXPECT_FALSE(Has(ReadAll(dir / "prefill-node-1.sh"), "HEAD_ADDR"));
  EXPECT_FALSE(std::filesystem::exists(dir / "prefill-node-2.sh"));
  for (const char* node : {"decode-node-1.sh", "decode-node-2.sh"})
    EXPECT_TRUE(Has(ReadAll(dir / node), "HEAD_ADDR")) << node;
  const std::string md = ReadAll(dir / "DEPLOY.md");
  EXPECT_TRUE(Has(md, "| decode-node-2 | decode 1 rank 1 | all | - |")) << md;
  EXPECT_TRUE(Has(md, "| prefill-node-1 | prefill 1 | all | 30000 |")) << md;
  std::filesystem::remove_all(dir);
}

// A disaggregated plan whose pools share one node (Llama-8B: 4 x 1-GPU prefill + 2 x 2-GPU
// decode = 8 GPUs, its KV priced over NVLink) is emitted as one node script that starts all six
// servers on the node's 8 GPUs, none on the router's port; with pools of their own
// (EmitOptions::shared_nodes false) each pool gets its node.
TEST(LaunchFlags, PoolsSharingANodeStartOnOneNode) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_shared_{}", ::getpid());
  std::filesystem::remove_all(root);
  const DisaggPlanCase c = DisaggPlans()[2];
  ASSERT_EQ(c.prefill.instances * c.prefill.gpus_per_instance +
                c.decode.instances * c.decode.gpus_per_instance, 8);
  StatusOr<std::vector<DisaggLaunch>> all = TranslateDisaggPlan(c.prefill, c.decode);
  ASSERT_TRUE(all.ok());
  Checker ck;
  int checked = 0;
  for (const DisaggLaunch& l : *all) {
    if (!l.runnable) continue;
    ++checked;
    // The printed commands say that servers sharing a node need their own GPUs and ports.
    EXPECT_TRUE(std::any_of(l.notes.begin(), l.notes.end(), [](const std::string& n) {
      return Has(n, "servers that share a node need their own GPUs");
    })) << DisaggEngineName(l.engine);
    const std::filesystem::path dir = root / std::string(DisaggEngineName(l.engine));
    ASSERT_TRUE(EmitDisaggDeployment(dir.string(), l, {}, nullptr).ok());
    EXPECT_FALSE(std::filesystem::exists(dir / "prefill-node-1.sh"));
    EXPECT_FALSE(std::filesystem::exists(dir / "node-2.sh"));
    EXPECT_FALSE(std::filesystem::exists(dir / "dynamo-graph.yaml"));  // one node
    const std::string script = ReadAll(dir / "node-1.sh");
    std::set<std::string> gpus;
    int servers = 0;
    for (size_t at = script.find("CUDA_VISIBLE_DEVICES="); at != std::string::npos;
         at = script.find("CUDA_VISIBLE_DEVICES=", at + 1)) {
      ++servers;
      std::stringstream ds(script.substr(at + 21, script.find(' ', at) - at - 21));
      for (std::string d; std::getline(ds, d, ',');) EXPECT_TRUE(gpus.insert(d).second) << d;
    }
    EXPECT_EQ(servers, 6) << script;
    EXPECT_EQ(gpus.size(), 8u) << script;
    EXPECT_EQ(CheckScripts(dir, 8, &ck), 2);  // node-1.sh and router.sh
    // The router reaches the servers on node-1 and none listens on the router's port.
    const std::string router = ReadAll(dir / "router.sh");
    EXPECT_FALSE(Has(router, "<prefill-")) << router;
    if (l.engine == DisaggEngine::kVllm) {
      EXPECT_TRUE(Has(router, "--prefill http://<node-1>:")) << router;
      EXPECT_FALSE(Has(script, "--port 8000 ")) << script;  // the router's
    }
    EmitOptions separate;
    separate.shared_nodes = false;
    const std::filesystem::path sep = root / (std::string(DisaggEngineName(l.engine)) + "-separate");
    ASSERT_TRUE(EmitDisaggDeployment(sep.string(), l, separate, nullptr).ok());
    EXPECT_TRUE(std::filesystem::exists(sep / "prefill-node-1.sh"));
    EXPECT_TRUE(std::filesystem::exists(sep / "decode-node-1.sh"));
    EXPECT_FALSE(std::filesystem::exists(sep / "node-1.sh"));
  }
  EXPECT_EQ(checked, 4);
  for (const std::string& err : ck.errors) ADD_FAILURE() << err;
  // Twice the pools over two nodes: each node's script starts both roles, and DEPLOY.md says the
  // router may send a prompt's KV across nodes (the plan priced it over NVLink).
  const ModelSpec m = Preset("llama-3.1-8b");
  const PoolPlan p2 = Pool(m, "h100", Megatron(m, 1, 1, 1, 1, 8), 8, Mode::kPrefill, 2048, 256);
  const PoolPlan d2 = Pool(m, "h100", Megatron(m, 1, 2, 1, 1, 128), 4, Mode::kDecode, 2048, 256);
  StatusOr<DisaggLaunch> two = MakeDisaggLaunch(DisaggEngine::kSglang, p2, d2);
  ASSERT_TRUE(two.ok() && two->runnable);
  const std::filesystem::path dir2 = root / "two-nodes";
  ASSERT_TRUE(EmitDisaggDeployment(dir2.string(), *two, {}, nullptr).ok());
  for (const char* node : {"node-1.sh", "node-2.sh"}) {
    const std::string script = ReadAll(dir2 / node);
    EXPECT_TRUE(Has(script, "--disaggregation-mode prefill")) << node;
    EXPECT_TRUE(Has(script, "--disaggregation-mode decode")) << node;
  }
  EXPECT_FALSE(std::filesystem::exists(dir2 / "node-3.sh"));
  EXPECT_TRUE(Has(ReadAll(dir2 / "DEPLOY.md"), "may take the scale-out network"));
  EXPECT_TRUE(Has(ReadAll(dir2 / "DEPLOY.md"),
                  "`node-2.sh`: run on node-2 (its decode servers, then its prefill servers)"));
  // Pools on shared nodes where a node holds one role only: its line says which.
  // 8 prefill servers of 1 GPU and one decode server of 8: a node each.
  const PoolPlan d3 = Pool(m, "h100", Megatron(m, 1, 8, 1, 1, 128), 1, Mode::kDecode, 2048, 256);
  StatusOr<DisaggLaunch> three = MakeDisaggLaunch(DisaggEngine::kSglang, p2, d3);
  ASSERT_TRUE(three.ok() && three->runnable);
  const std::filesystem::path dir3 = root / "one-role-nodes";
  ASSERT_TRUE(EmitDisaggDeployment(dir3.string(), *three, {}, nullptr).ok());
  const std::string md3 = ReadAll(dir3 / "DEPLOY.md");
  EXPECT_TRUE(Has(md3, "`node-1.sh`: run on node-1 (prefill servers only)")) << md3;
  EXPECT_TRUE(Has(md3, "`node-2.sh`: run on node-2 (decode servers only)")) << md3;
  EXPECT_FALSE(Has(ReadAll(root / "sglang" / "DEPLOY.md"), "may take the scale-out network"));
  std::filesystem::remove_all(root);
}

TEST(LaunchFlags, EmittedFilesFollowTheGpuVendor) {
  // AMD: the Kubernetes manifest asks the AMD device plugin for GPUs and runs the ROCm image of
  // the GPU's family; ATOM's scripts listen on its default port (8000), not port 0.
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_vendor_{}", ::getpid());
  std::filesystem::remove_all(root);
  const ModelSpec m = Preset("deepseek-v3");
  // Emits DeepSeek-V3 FP8 as `strategy` (batch 32) on `gpus` GPUs of `gpu` into root/`dir` and
  // returns the text of `file` there.
  auto emit = [&](const char* dir, Engine e, const char* gpu, int gpus, const Strategy& strategy,
                  const char* file) {
    Problem p = MakeProblem(m, gpu, gpus, Mode::kServe);
    p.workload.weight = DType::kFP8;
    const Evaluation ev = Simulator(p).EvaluateAtBatch(strategy, 32);
    EXPECT_TRUE(ev.valid()) << dir;
    EXPECT_TRUE(EmitDeployment((root / dir).string(), e, p, strategy, ev, {}, nullptr).ok()) << dir;
    return ReadAll(root / dir / file);
  };
  const Strategy wide = Megatron(m, 1, 1, 16, 16, 32);
  const std::string y = emit("sglang", Engine::kSglang, "mi355x", 16, wide, "lws.yaml");
  EXPECT_TRUE(Has(y, "amd.com/gpu: 8")) << y;
  EXPECT_FALSE(Has(y, "nvidia.com/gpu")) << y;
  EXPECT_TRUE(Has(y, "lmsysorg/sglang:v0.5.12-rocm700-mi35x")) << y;
  // MI300X (CDNA3, no FP4 matrix cores): the mi30x build.
  const std::string y3 = emit("cdna3", Engine::kSglang, "mi300x", 16, wide, "lws.yaml");
  EXPECT_TRUE(Has(y3, "lmsysorg/sglang:v0.5.12-rocm700-mi30x")) << y3;
  // The same on H200s: NVIDIA's device plugin and the CUDA image.
  const std::string yq = emit("cuda", Engine::kSglang, "h200", 16, wide, "lws.yaml");
  EXPECT_TRUE(Has(yq, "nvidia.com/gpu: 8")) << yq;
  EXPECT_TRUE(Has(yq, "lmsysorg/sglang:latest")) << yq;
  // ATOM on one MI355X node: its server answers on 8000.
  const std::string md =
      emit("atom", Engine::kAtom, "mi355x", 8, Megatron(m, 1, 1, 8, 8, 32), "DEPLOY.md");
  EXPECT_TRUE(Has(md, "http://<node>:8000/v1/models")) << md;
  std::filesystem::remove_all(root);
}

// A context beyond the model's max_position_embeddings (DeepSeek-V3: 163,840): vLLM and SGLang
// start only with their override variable, which the commands set; in every emitted file it goes
// before the program that runs the server (nohup, exec): "exec VAR=1 prog" is "VAR=1: not found".
TEST(LaunchFlags, AContextBeyondTheModelsStartsWithTheOverrideBeforeExec) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_long_{}", ::getpid());
  std::filesystem::remove_all(root);
  const ModelSpec m = Preset("deepseek-v3");
  Problem p = MakeProblem(m, "h200", 16, Mode::kServe);
  p.workload.isl = 170000;
  p.workload.osl = 1000;
  const Strategy s = Megatron(m, 1, 1, 16, 16, 1);
  const Evaluation ev = Simulator(p).EvaluateAtBatch(s, 1);
  ASSERT_TRUE(ev.valid());
  for (Engine e : {Engine::kSglang, Engine::kVllm}) {
    const char* var = e == Engine::kVllm ? "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
                                         : "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1";
    const LaunchCommand lc = MakeLaunchCommand(e, p, s);
    EXPECT_EQ(lc.command.rfind(std::string(var) + " ", 0), 0u) << lc.command;
    // Dynamo's worker of the engine keeps the variable in front of its own module.
    const LaunchCommand dw = DynamoWorkerCommand(e, p, s, LaunchOptions{}, "engine.yaml");
    EXPECT_EQ(dw.command.rfind(fmt::format("{} python -m dynamo.{} ", var, EngineName(e)), 0), 0u)
        << dw.command;
    const std::filesystem::path dir = root / EngineName(e);
    ASSERT_TRUE(EmitDeployment(dir.string(), e, p, s, ev, {}, nullptr).ok());
    for (const char* file : {"node-1.sh", "node-2.sh", "lws.yaml"}) {
      if (!std::filesystem::exists(dir / file)) continue;
      const std::string text = ReadAll(dir / file);
      EXPECT_TRUE(Has(text, var)) << file << text;
      EXPECT_FALSE(Has(text, std::string("exec ") + var)) << file << text;
      EXPECT_FALSE(Has(text, std::string("nohup ") + var)) << file << text;
    }
  }
  EXPECT_TRUE(std::filesystem::exists(root / "sglang" / "lws.yaml"));
  // ATOM has no override: it caps the length at the model's, and its command says so.
  Problem amd = p;
  amd.cluster = *MakeCluster("mi355x", 8, 8);
  const LaunchCommand atom = MakeLaunchCommand(Engine::kAtom, amd, Megatron(m, 1, 1, 8, 8, 1));
  EXPECT_FALSE(Has(atom.command, "ALLOW")) << atom.command;
  EXPECT_TRUE(std::any_of(atom.notes.begin(), atom.notes.end(), [](const std::string& n) {
    return n.rfind("--max-model-len 171000: ATOM caps it at the model's max_position_embeddings 163840", 0) == 0;
  })) << fmt::format("{}", fmt::join(atom.notes, "\n"));
  // Within the model's context: no variable.
  p.workload.isl = 2048;
  EXPECT_FALSE(Has(MakeLaunchCommand(Engine::kVllm, p, s).command, "VLLM_ALLOW"));
  std::filesystem::remove_all(root);
}

TEST(LaunchFlags, BadEmitDirectoryIsOneClearError) {
  const AggPlan plan = AggregatedPlans()[0];
  ASSERT_TRUE(plan.eval.valid());
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / fmt::format("l2s_emit_file_{}", ::getpid());
  std::ofstream(file) << "x";
  const Status st = EmitDeployment(file.string(), Engine::kVllm, plan.problem, plan.strategy,
                                   plan.eval, {}, nullptr);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(Has(st.message(), "--emit")) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace l2s::launch
