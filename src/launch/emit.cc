#include "launch/emit.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "engine/engine.h"
#include "launch/dynamo.h"
#include "sim/disagg.h"

namespace l2s::launch {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Devices(int first, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += fmt::format("{}{}", i ? "," : "", first + i);
  return out;
}

// The engine's container image for the GPU: the CUDA images' latest tags; the ROCm builds are
// images of their own, per GPU family for SGLang (the tags the measured AMD runs of
// ../shared/reference/measurements-frontier.csv name: mi30x for MI300X/MI325X, CDNA3, mi35x for
// MI355X, CDNA4: the family with FP4 matrix cores).
const char* Image(Engine e, const GpuSpec& gpu) {
  const bool amd = gpu.vendor == "amd";
  const bool cdna4 = amd && gpu.fp4_flops > 0;
  switch (e) {
    case Engine::kSglang:
      if (!amd) return "lmsysorg/sglang:latest";
      return cdna4 ? "lmsysorg/sglang:v0.5.12-rocm700-mi35x" : "lmsysorg/sglang:v0.5.12-rocm700-mi30x";
    case Engine::kVllm: return amd ? "rocm/vllm:latest" : "vllm/vllm-openai:latest";
    case Engine::kTrtllm: return "nvcr.io/nvidia/tensorrt-llm/release:latest";
    case Engine::kAtom: return "rocm/atom:rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.3";
    case Engine::kMegatron: return amd ? "rocm/megatron-lm:latest" : "nvcr.io/nvidia/pytorch:latest";
  }
  return "";
}

// Dynamo's runtime image for workers of engine `e` (NVIDIA GPUs only).
std::string DynamoImage(Engine e) {
  return fmt::format("nvcr.io/nvidia/ai-dynamo/{}-runtime:latest",
                     e == Engine::kTrtllm ? "tensorrtllm" : EngineName(e));
}

// Kubernetes extended resource of the vendor's device plugin.
const char* GpuResource(const std::string& vendor) {
  return vendor == "amd" ? "amd.com/gpu" : "nvidia.com/gpu";
}

class Writer {
 public:
  Writer(std::string dir, std::vector<std::string>* written) : dir_(std::move(dir)), written_(written) {}
  Status Open() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
      return Status::InvalidArgument(
          fmt::format("--emit {}: cannot create the directory ({})", dir_,
                      ec ? ec.message() : "a file of that name exists"));
    return Status::Ok();
  }
  Status Write(const std::string& name, const std::string& text, bool executable = false) {
    const std::filesystem::path path = std::filesystem::path(dir_) / name;
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      if (!out) return Status::InvalidArgument(fmt::format("--emit {}: cannot write {}", dir_, name));
      out << text;
      if (!out) return Status::InvalidArgument(fmt::format("--emit {}: cannot write {}", dir_, name));
    }
    if (executable) {
      std::error_code ec;
      std::filesystem::permissions(path,
                                   std::filesystem::perms::owner_exec |
                                       std::filesystem::perms::group_exec |
                                       std::filesystem::perms::others_exec,
                                   std::filesystem::perm_options::add, ec);
    }
    if (written_ != nullptr) written_->push_back(path.string());
    return Status::Ok();
  }

 private:
  std::string dir_;
  std::vector<std::string>* written_;
};

const char* kScriptHead =
    "#!/usr/bin/env bash\n"
    "# Written by `l2s plan --emit`. Run from anywhere; logs go to ./logs.\n"
    "set -euo pipefail\n"
    "cd \"$(dirname \"$0\")\"\n"
    "mkdir -p logs\n";

// An instance's simulated figures; the latencies it has (a prefill instance has no TPOT, a decode
// instance no TTFT of its own).
std::string Figures(const Evaluation& e) {
  std::string latency;
  if (e.ttft_s > 0) latency = fmt::format("TTFT {:.0f} ms", e.ttft_s * 1e3);
  if (e.tpot_s > 0)
    latency += fmt::format("{}TPOT {:.1f} ms", latency.empty() ? "" : ", ", e.tpot_s * 1e3);
  return fmt::format(
      "- throughput {:.0f} tokens/s per GPU ({:.0f} tokens/s in all)\n{}- batch {} sequences per "
      "attention rank\n- memory {:.1f} of {:.1f} GiB per GPU (weights {:.1f}, KV cache {:.1f}, "
      "activations {:.1f}, reserve {:.1f})\n",
      e.tokens_per_s_per_gpu, e.tokens_per_s, latency.empty() ? "" : "- " + latency + "\n",
      e.batch, e.mem_bytes / kGiB, e.mem_capacity_bytes / kGiB, e.weight_bytes / kGiB,
      e.kv_bytes / kGiB, e.act_bytes / kGiB, e.reserve_bytes / kGiB);
}

// DEPLOY.md's line on a draft model the servers load beside the model (--draft-model), when the
// plan speculates with it; "" otherwise.
std::string DraftModelLine(const ModelSpec& m, int mtp) {
  if (mtp <= 0 || !m.has_draft_model()) return "";
  return fmt::format(
      "Speculative decoding with the draft model `{}` ({} draft token{} per step): every server "
      "loads it beside the model, so it must be reachable (downloaded, or a folder) where they "
      "start.\n\n",
      m.draft_model, mtp, mtp == 1 ? "" : "s");
}

// The strategy's degrees, batch and engine switches (ToText without the per-operator dims).
std::string Short(const Strategy& s) {
  const std::string t = ToText(s);
  const size_t at = t.find(",embed=");
  return at == std::string::npos ? t : t.substr(0, at);
}

// Where `cmd`'s leading NAME=VALUE words end (the program's first character).
size_t ProgramStart(const std::string& cmd) {
  size_t start = 0;
  while (true) {
    const size_t sp = cmd.find(' ', start);
    const std::string word = cmd.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
    if (sp == std::string::npos || word.find('=') == std::string::npos || word[0] == '-') break;
    start = sp + 1;
  }
  return start;
}

// `cmd` behind a program that runs it (nohup, exec): its NAME=VALUE prefixes first, since nohup
// and exec run a program, not an assignment ("exec FOO=1 prog" is "FOO=1: not found").
std::string Behind(const std::string& runner, const std::string& cmd) {
  const size_t start = ProgramStart(cmd);
  return fmt::format("{}{} {}", cmd.substr(0, start), runner, cmd.substr(start));
}

// The script line starting `cmd` in the background.
std::string Background(const std::string& cmd, const std::string& log) {
  return fmt::format("{} > {} 2>&1 &\n", Behind("nohup", cmd), log);
}

std::string Bulleted(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& x : v) out += "- " + x + "\n";
  return out;
}

// Shell-quotes `s` for bash -c '...'.
std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string YamlList(const std::string& indent, const std::string& cmd) {
  return fmt::format("{}- bash\n{}- -c\n{}- {}\n", indent, indent, indent, SingleQuoted(cmd));
}

// A DynamoGraphDeployment (the Dynamo Kubernetes operator's resource) named `name`, its services
// to follow.
std::string DynamoGraphHeader(const std::string& name) {
  return "# DynamoGraphDeployment (nvidia.com/v1alpha1, the Dynamo Kubernetes operator): the same\n"
         "# plan as Dynamo workers.\n"
         "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: " +
         name + "\nspec:\n  services:\n";
}

// `cmd` without the multi-node flags a node script sets from ${NODE_RANK} / ${HEAD_ADDR}
// (SGLang's --nnodes ... --dist-init-addr ...:port) or the MPI job it starts over ssh
// (TensorRT-LLM's `mpirun ... -H ${MPI_HOSTS} -np N` before trtllm-llmapi-launch): the operator
// gives each pod of a multinode service its rank and the leader's address, and wraps a
// TensorRT-LLM leader's command in its own mpirun over the service's pods.
std::string WithoutNodeFlags(std::string cmd) {
  const std::string launcher = "trtllm-llmapi-launch ";
  if (cmd.rfind("mpirun ", 0) == 0)
    if (const size_t l = cmd.find(" " + launcher); l != std::string::npos) cmd.erase(0, l + 1);
  const size_t at = cmd.find(" --nnodes ");
  if (at == std::string::npos) return cmd;
  const std::string port = fmt::format(":{}", kDistInitPort);
  const size_t end = cmd.find(port, at);
  if (end != std::string::npos) cmd.erase(at, end + port.size() - at);
  return cmd;
}

// The container command `bash -c` running `cmd` after writing the file `file_name` (`file`, its
// contents) that the command reads, as a YAML block scalar: a pod has none of the files the node
// scripts sit beside (TensorRT-LLM's workers read their engine options from one).
std::string YamlListWithFile(const std::string& indent, const std::string& cmd,
                             const std::string& file_name, const std::string& file) {
  std::string y = fmt::format("{}- bash\n{}- -c\n{}- |\n", indent, indent, indent);
  const std::string in = indent + "  ";
  y += fmt::format("{}cat > {} <<'L2S_EOF'\n", in, file_name);
  for (size_t at = 0; at < file.size();) {
    const size_t nl = file.find('\n', at);
    const std::string line = file.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    y += line.empty() ? "\n" : in + line + "\n";
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  y += fmt::format("{}L2S_EOF\n{}{}\n", in, in, cmd);
  return y;
}

// One service of a DynamoGraphDeployment: the frontend (`gpus` 0) or `replicas` workers of `gpus`
// GPUs each on hosts of `host_gpus` (`sub`: the disaggregated role, "" for aggregated workers),
// running `command`, which reads `file_name` (`file`) when given: the pod writes it first.
std::string DynamoGraphService(const std::string& name, const std::string& sub, int replicas,
                               int gpus, int host_gpus, const std::string& image,
                               const std::string& command, const std::string& file_name = "",
                               const std::string& file = "") {
  const bool frontend = gpus == 0;
  std::string y = fmt::format("    {}:\n      componentType: {}\n", name,
                              frontend ? "frontend" : "worker");
  if (!sub.empty()) y += fmt::format("      subComponentType: {}\n", sub);
  y += fmt::format("      replicas: {}\n", replicas);
  if (!frontend) {
    y += fmt::format("      resources:\n        limits:\n          gpu: \"{}\"\n",
                     std::min(gpus, host_gpus));
    if (gpus > host_gpus)
      y += fmt::format("      multinode:\n        nodeCount: {}\n", (gpus + host_gpus - 1) / host_gpus);
  }
  const std::string cmd = gpus > host_gpus ? WithoutNodeFlags(command) : command;
  y += fmt::format("      extraPodSpec:\n        mainContainer:\n          image: {}\n"
                   "          command:\n{}",
                   image,
                   file_name.empty() ? YamlList("          ", cmd)
                                     : YamlListWithFile("          ", cmd, file_name, file));
  return y;
}

}  // namespace

std::vector<std::vector<PlacedServer>> PlaceSharedNodes(const std::vector<PoolGroup>& groups,
                                                        int gpus_per_node, int reserved_port) {
  const int P = std::max(1, gpus_per_node);
  struct Item {
    double key;
    size_t group;
    int instance;
  };
  std::vector<Item> items;
  for (size_t k = 0; k < groups.size(); ++k)
    for (int i = 0; i < groups[k].instances; ++i)
      items.push_back({(i + 0.5) / groups[k].instances, k, i});
  // Pushed group by group: a stable sort keeps group order among equal keys.
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.key < b.key; });
  std::vector<int> used;             // GPUs taken, per node
  std::vector<std::set<int>> ports;  // ports taken, per node
  auto open_node = [&](int taken) {
    used.push_back(taken);
    ports.emplace_back();
    if (reserved_port > 0) ports.back().insert(reserved_port);
    return static_cast<int>(used.size()) - 1;
  };
  auto take_port = [&](int node, int base) {
    if (base <= 0) return 0;
    int port = base;
    while (ports[node].count(port)) ++port;
    ports[node].insert(port);
    return port;
  };
  std::vector<std::vector<PlacedServer>> out(groups.size());
  for (const Item& it : items) {
    const PoolGroup& g = groups[it.group];
    const int n = std::max(1, g.gpus);
    if (n > P) {  // whole nodes of its own
      const int nodes = (n + P - 1) / P;
      for (int r = 0; r < nodes; ++r) {
        PlacedServer s;
        s.instance = it.instance;
        s.node = open_node(P);
        s.node_rank = r;
        s.port = r == 0 ? take_port(s.node, g.base_port) : 0;
        out[it.group].push_back(s);
      }
      continue;
    }
    int node = 0;
    while (node < static_cast<int>(used.size()) && used[node] + n > P) ++node;
    if (node == static_cast<int>(used.size())) open_node(0);
    PlacedServer s;
    s.instance = it.instance;
    s.node = node;
    s.first_device = n < P ? used[node] : 0;
    s.devices = n < P ? Devices(used[node], n) : "";
    s.port = take_port(node, g.base_port);
    used[node] += n;
    out[it.group].push_back(s);
  }
  return out;
}

std::vector<PlacedServer> PlaceInstances(int instances, int gpus, int gpus_per_node, int base_port) {
  // One pool on nodes of its own: the shared placement of a single group packs floor(P/g) per node.
  return PlaceSharedNodes({{instances, gpus, base_port}}, gpus_per_node).front();
}

Status EmitDeployment(const std::string& dir, Engine engine, const Problem& p, const Strategy& s,
                      const Evaluation& eval, const EmitOptions& opt,
                      std::vector<std::string>* written) {
  if (!eval.valid())
    return Status::InvalidArgument("--emit: the plan has no valid evaluation to deploy");
  Writer w(dir, written);
  if (Status st = w.Open(); !st.ok()) return st;
  // A dense model's data-parallel replicas as separate servers where the engine starts them so.
  Strategy inst = s;
  const int P = HostGpus(p.cluster);
  const int split = SeparateReplicaServers(engine, opt.dynamo, p.model, s, P);
  const int instances = std::max(1, opt.replicas) * split;
  inst.dp /= split;
  const std::vector<PlacedServer> placed = PlaceInstances(instances, inst.gpus(), P, DefaultPort(engine));
  // The engine's own server, or a Dynamo worker running it (launch/dynamo.h).
  auto command = [&](const LaunchOptions& o) {
    return opt.dynamo ? DynamoWorkerCommand(engine, p, inst, o, "agg.yaml")
                      : MakeLaunchCommand(engine, p, inst, o);
  };
  const std::string title =
      opt.dynamo ? fmt::format("NVIDIA Dynamo ({} workers)", EngineTitle(engine))
                 : std::string(EngineTitle(engine));
  const int nodes_per_instance = InstanceNodes(p, inst);
  std::map<int, std::vector<const PlacedServer*>> by_node;
  for (const PlacedServer& ps : placed) by_node[ps.node].push_back(&ps);
  std::string files_md;
  std::string where_md;
  LaunchCommand first;
  for (const auto& [node, servers] : by_node) {
    std::string script = kScriptHead;
    if (nodes_per_instance > 1) {
      script += "# The instance's head node address (node-" +
                std::to_string(node - servers.front()->node_rank + 1) + "):\n";
      script += ": \"${HEAD_ADDR:?set HEAD_ADDR to the address of the head node}\"\n";
      if (engine == Engine::kTrtllm)
        script += fmt::format(": \"${{MPI_HOSTS:?set MPI_HOSTS to host1:{0},host2:{0},...}}\"\n", P);
      script += fmt::format("export HEAD_ADDR NODE_RANK={}\n", servers.front()->node_rank);
    }
    for (const PlacedServer* ps : servers) {
      LaunchOptions o;
      o.model_id = opt.model_id;
      o.eval = &eval;
      o.listen_all = true;
      o.port = ps->port > 0 ? ps->port : DefaultPort(engine);
      o.cuda_visible_devices = ps->devices;
      o.node_rank = ps->node_rank;
      const LaunchCommand lc = command(o);
      if (ps->instance == 0 && ps->node_rank == 0) first = lc;
      if (!lc.extra_file_name.empty() && ps->instance == 0 && ps->node_rank == 0) {
        if (Status st = w.Write(lc.extra_file_name, lc.extra_file); !st.ok()) return st;
        files_md += fmt::format("- `{}`: TensorRT-LLM's {}\n", lc.extra_file_name,
                                opt.dynamo ? "engine options (the worker's --extra-engine-args)"
                                           : "extra LLM-API options");
      }
      if (lc.command.empty()) {
        script += "# Nothing to start here: the head node's mpirun starts this node's ranks over ssh.\n";
        where_md += fmt::format("| node-{} | instance {} rank {} (started by mpirun) | - | - |\n",
                                node + 1, ps->instance + 1, ps->node_rank);
        continue;
      }
      const std::string log = fmt::format("logs/instance-{}-rank-{}.log", ps->instance + 1, ps->node_rank);
      if (engine == Engine::kMegatron)
        script += fmt::format("# Megatron-LM arguments of your inference script:\n# {}\n", lc.command);
      else
        script += Background(lc.command, log);
      where_md += fmt::format("| node-{} | {} {}{} | {} | {} |\n", node + 1,
                              opt.dynamo ? "worker" : "instance", ps->instance + 1,
                              nodes_per_instance > 1 ? fmt::format(" rank {}", ps->node_rank) : "",
                              ps->devices.empty() ? "all" : ps->devices,
                              ps->node_rank == 0 && !opt.dynamo ? std::to_string(o.port) : "-");
    }
    script += "wait\n";
    // Nodes are numbered from 1, as a disaggregated plan's are.
    const std::string name = fmt::format("node-{}.sh", node + 1);
    if (Status st = w.Write(name, script, true); !st.ok()) return st;
    files_md += fmt::format("- `{}`: run on node {}\n", name, node + 1);
  }
  // Dynamo: its frontend in front of the workers (they register with it through etcd).
  if (opt.dynamo) {
    std::string script = kScriptHead;
    script += "# ETCD_ENDPOINTS (and NATS_SERVER) must name the discovery service the workers use.\n";
    script += Behind("exec", DynamoFrontendCommand()) + "\n";
    if (Status st = w.Write("frontend.sh", script, true); !st.ok()) return st;
    files_md += fmt::format("- `frontend.sh`: Dynamo's frontend, on port {} (any host that "
                            "reaches the discovery service)\n",
                            kDynamoFrontendPort);
  }
  // Several instances: a router in front of their head servers.
  if (!opt.dynamo) {
    std::vector<std::string> urls;
    for (const PlacedServer& ps : placed)
      if (ps.node_rank == 0)
        urls.push_back(fmt::format("http://<node-{}>:{}", ps.node + 1,
                                   ps.port > 0 ? ps.port : DefaultPort(engine)));
    const std::string router = ReplicaRouterCommand(engine, urls);
    if (!router.empty()) {
      std::string script = kScriptHead;
      script += "# Replace <node-k> with the address of node k (DEPLOY.md).\n";
      script += Behind("exec", router) + "\n";
      if (Status st = w.Write("router.sh", script, true); !st.ok()) return st;
      files_md += fmt::format("- `router.sh`: the router in front of the {} instances, on port {} "
                              "(any host that reaches every server)\n",
                              instances, kReplicaRouterPort);
    }
  }
  // Kubernetes: a LeaderWorkerSet when one instance spans nodes.
  // (TensorRT-LLM across nodes is one MPI job started over ssh, which pods do not offer as such:
  // no manifest; DEPLOY.md says so.)
  // Dynamo: its graph deployment (frontend + the workers) whenever the deployment spans nodes.
  if (opt.dynamo && by_node.size() > 1) {
    LaunchOptions o;
    o.model_id = opt.model_id;
    o.eval = &eval;
    std::string yaml = DynamoGraphHeader("l2s-agg");
    yaml += DynamoGraphService("Frontend", "", 1, 0, P, DynamoImage(engine), DynamoFrontendCommand());
    const LaunchCommand worker = command(o);
    yaml += DynamoGraphService("worker", "", instances, inst.gpus(), P, DynamoImage(engine),
                               worker.command, worker.extra_file_name, worker.extra_file);
    if (Status st = w.Write("dynamo-graph.yaml", yaml); !st.ok()) return st;
    files_md += "- `dynamo-graph.yaml`: the same deployment as a Dynamo graph deployment on Kubernetes\n";
  }
  if (!opt.dynamo && nodes_per_instance > 1 && (engine == Engine::kSglang || engine == Engine::kVllm)) {
    std::string cases;
    for (int r = 1; r < nodes_per_instance; ++r) {
      LaunchOptions o;
      o.model_id = opt.model_id;
      o.eval = &eval;
      o.listen_all = true;
      o.node_rank = r;
      const LaunchCommand lc = command(o);
      cases += fmt::format("{}) {} ;; ", r,
                           Behind("exec", lc.command.empty() ? "sleep infinity" : lc.command));
    }
    LaunchOptions o0;
    o0.model_id = opt.model_id;
    o0.eval = &eval;
    o0.listen_all = true;
    o0.node_rank = 0;
    const LaunchCommand lead = command(o0);
    const std::string env = "export HEAD_ADDR=$LWS_LEADER_ADDRESS NODE_RANK=$LWS_WORKER_INDEX";
    const std::string pod = fmt::format(
        "      spec:\n        containers:\n        - name: {{}}\n          image: {}\n"
        "          command:\n{{}}          resources:\n            limits:\n"
        "              {}: {}\n",
        Image(engine, p.cluster.gpu), GpuResource(p.cluster.gpu.vendor),
        std::min(P, inst.gpus()));
    std::string yaml = fmt::format(
        "# LeaderWorkerSet (leaderworkerset.x-k8s.io): {} instance(s) of {} nodes each.\n"
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: l2s-{}\n"
        "spec:\n  replicas: {}\n  leaderWorkerTemplate:\n    size: {}\n    leaderTemplate:\n"
        "      metadata:\n        labels:\n          role: leader\n",
        instances, nodes_per_instance, EngineName(engine), instances, nodes_per_instance);
    yaml += fmt::format(fmt::runtime(pod), "leader",
                        YamlList("          ", env + "; " + Behind("exec", lead.command)));
    yaml += "    workerTemplate:\n";
    yaml += fmt::format(fmt::runtime(pod), "worker",
                        YamlList("          ", env + "; case $NODE_RANK in " + cases + "esac"));
    if (Status st = w.Write("lws.yaml", yaml); !st.ok()) return st;
    files_md += "- `lws.yaml`: the same deployment as a Kubernetes LeaderWorkerSet\n";
  }
  std::string md = fmt::format("# Deployment: {} on {}\n\n", p.model.name, title);
  md += fmt::format("{} instance(s) of {} GPU(s) (`{}`), {} node(s) of {} GPUs.\n\n", instances,
                    inst.gpus(), Short(inst), by_node.size(), P);
  md += DraftModelLine(p.model, inst.mtp);
  md += "## Files\n" + files_md + "\n## What runs where\n| node | server | GPUs | port |\n|---|---|---|---|\n" +
        where_md;
  md += "\n## Order to start\n";
  int step = 1;
  if (opt.dynamo)
    md += fmt::format("{}. etcd (and NATS) where every host reaches them, with ETCD_ENDPOINTS / "
                      "NATS_SERVER set on every host (see the notes).\n",
                      step++);
  if (nodes_per_instance > 1) {
    md += fmt::format("{}. On every node set HEAD_ADDR to the address of the instance's first node", step++) +
          std::string(engine == Engine::kTrtllm ? " and MPI_HOSTS to the nodes as host:" +
                                                      std::to_string(P) + " list"
                                                : "") +
          ".\n";
    md += fmt::format("{}. Start the scripts of the other nodes, then the head node's.\n", step++);
  } else {
    md += fmt::format("{}. Run each node's script (any order).\n", step++);
  }
  const bool routed = instances > 1 && engine != Engine::kMegatron && !opt.dynamo;
  if (opt.dynamo)
    md += fmt::format("{}. `frontend.sh` on any host; clients send their requests to it (port "
                      "{}).\n",
                      step++, kDynamoFrontendPort);
  if (routed)
    md += fmt::format("{}. `router.sh` once every server answers, after replacing <node-k> with "
                      "the nodes' addresses; clients send their requests to it (port {}).\n",
                      step++, kReplicaRouterPort);
  if (engine == Engine::kTrtllm && nodes_per_instance > 1)
    md += "\nTensorRT-LLM across nodes is one MPI job started from the head node over ssh; no "
          "Kubernetes manifest is written for it.\n";
  if (opt.dynamo)
    md += fmt::format(
        "\n## Check it is up\n`curl -s http://<frontend>:{}/v1/models` lists the model once a "
        "worker has loaded the weights and registered; then send a request to "
        "`/v1/completions`.\n",
        kDynamoFrontendPort);
  else if (engine != Engine::kMegatron)
    md += fmt::format(
        "\n## Check it is up\n`curl -s http://<node>:{}/v1/models` answers with the model once the "
        "weights are loaded; then send a request to `/v1/completions`.\n",
        DefaultPort(engine));
  md += "\n## What the plan expects (simulated)\n";
  if (opt.replicas > 1)
    md += fmt::format("Each of the {} replicas of the plan (they serve independently: the "
                      "deployment's tokens/s are {} times these, per GPU the same):\n",
                      opt.replicas, opt.replicas);
  md += Figures(eval);
  for (const std::string& l : opt.plan_lines) md += "- " + l + "\n";
  std::vector<std::string> notes = first.notes;
  if (opt.dynamo) notes.push_back(DynamoDiscoveryNote());
  md += "\n## Notes\n" + Bulleted(notes);
  if (Status st = w.Write("DEPLOY.md", md); !st.ok()) return st;
  return Status::Ok();
}

namespace {

// The command of one placed server of a disaggregated pool: the process's command with its port,
// devices (on GPUs of `vendor`) and the SGLang bootstrap port of its slot.
std::string PlacedCommand(const DisaggProcess& proc, const PlacedServer& ps, int base_port,
                          const std::string& vendor) {
  std::string c = proc.command;
  if (ps.port > 0 && ps.port != base_port) {
    const std::string from = fmt::format(" --port {}", base_port);
    const size_t at = c.find(from);
    if (at != std::string::npos) c.replace(at, from.size(), fmt::format(" --port {}", ps.port));
    const std::string boot = " --disaggregation-bootstrap-port 8998";
    const size_t b = c.find(boot);
    if (b != std::string::npos)
      c.replace(b, boot.size(),
                fmt::format(" --disaggregation-bootstrap-port {}", 8998 + ps.port - base_port));
  }
  return VisibleDevicesEnv(vendor, ps.devices) + c;
}

// `cmd` with the model argument `resolved` (a whole word) replaced by `model_id` ("" = kept).
std::string WithModelId(std::string cmd, const std::string& resolved, const std::string& model_id) {
  if (model_id.empty() || resolved.empty()) return cmd;
  for (size_t at = cmd.find(" " + resolved); at != std::string::npos;
       at = cmd.find(" " + resolved, at + 1 + model_id.size())) {
    const size_t end = at + 1 + resolved.size();
    if (end < cmd.size() && cmd[end] != ' ') continue;
    cmd.replace(at + 1, resolved.size(), model_id);
  }
  return cmd;
}

int ProcessPort(const DisaggProcess& proc) {
  const size_t at = proc.command.find(" --port ");
  return at == std::string::npos ? 0 : std::atoi(proc.command.c_str() + at + 8);
}

// The port the router listens on: its command's --port / --http-port, else its configuration
// file's top-level `port:` (TensorRT-LLM's disaggregated server); 0 when neither says.
int RouterPort(const std::string& cmd, const std::string& file) {
  for (const char* flag : {" --port ", " --http-port "}) {
    const size_t at = cmd.find(flag);
    if (at != std::string::npos) return std::atoi(cmd.c_str() + at + std::strlen(flag));
  }
  for (size_t at = 0; at < file.size();) {
    const size_t nl = file.find('\n', at);
    const std::string line = file.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (line.rfind("port:", 0) == 0) return std::atoi(line.c_str() + 5);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return 0;
}

// The Dynamo graph deployment of `l`: `l` itself on Dynamo; for SGLang, vLLM or TensorRT-LLM the
// Dynamo launch whose workers run that engine on the same pools (its workers take the engine's own
// flags), when it runs the same strategies; nullopt when Dynamo has no workers there (AMD GPUs) or
// would run a pool differently. A plan for vLLM so never becomes a graph of SGLang workers.
std::optional<DisaggLaunch> DynamoGraphOf(const DisaggLaunch& l) {
  if (l.engine == DisaggEngine::kDynamo) return l;
  if (!DynamoHasWorkersFor(l.backend) ||
      !DisaggRunsOn(DisaggEngine::kDynamo, l.prefill_pool.problem.cluster.gpu.vendor) ||
      !DisaggRunsOn(DisaggEngine::kDynamo, l.decode_pool.problem.cluster.gpu.vendor))
    return std::nullopt;
  StatusOr<DisaggLaunch> d = MakeDisaggLaunch(DisaggEngine::kDynamo, l.prefill_pool, l.decode_pool,
                                              l.transfer, l.backend);
  if (!d.ok() || !d->runnable || !(d->prefill == l.prefill) || !(d->decode == l.decode))
    return std::nullopt;
  return std::move(*d);
}

}  // namespace

Status EmitDisaggDeployment(const std::string& dir, const DisaggLaunch& l, const EmitOptions& opt,
                            std::vector<std::string>* written) {
  const PoolPlan& prefill = l.prefill_pool;
  const PoolPlan& decode = l.decode_pool;
  const std::string resolved = ModelArgument(decode.problem.model);
  if (!l.runnable)
    return Status::InvalidArgument(fmt::format("--emit: {} cannot run this plan",
                                               DisaggEngineTitle(l.engine)));
  Writer w(dir, written);
  if (Status st = w.Open(); !st.ok()) return st;
  std::string files_md, where_md;
  int total_nodes = 0;
  std::string router_cmd, router_file_name, router_file;
  // "<role-k>:port" of the router's placeholders -> "<node>:port" of the placed server (node
  // "node-n" on shared nodes, else "prefill-node-n" / "decode-node-n").
  std::vector<std::pair<std::string, std::string>> hosts;
  // Where each server runs: the pools' servers packed onto common nodes when the pools share the
  // cluster (EmitOptions::shared_nodes), else each pool on nodes of its own.
  struct Server {
    const DisaggProcess* proc;
    PlacedServer ps;
    int base;  // the process's port as translated
  };
  std::vector<const DisaggProcess*> servers_of;  // decode first: the packer places it first on ties
  for (const DisaggProcess& proc : l.processes) {
    if (proc.role == "router") {
      router_cmd = proc.command;
      router_file_name = proc.file_name;
      router_file = proc.file;
      continue;
    }
    if (!proc.file_name.empty()) {
      if (Status st = w.Write(proc.file_name, proc.file); !st.ok()) return st;
      files_md += fmt::format("- `{}`: {} servers' engine options\n", proc.file_name, proc.role);
    }
    servers_of.insert(proc.role == "decode" ? servers_of.begin() : servers_of.end(), &proc);
  }
  const ClusterSpec& pc = prefill.problem.cluster;
  const ClusterSpec& dc = decode.problem.cluster;
  const bool shared =
      opt.shared_nodes && pc.gpu.name == dc.gpu.name && HostGpus(pc) == HostGpus(dc);
  // GPUs of one host of the process's pool (the pools of a mixed cluster may differ).
  auto host_gpus = [&](const DisaggProcess& proc) {
    return HostGpus(proc.role == "prefill" ? pc : dc);
  };
  std::vector<std::string> node_order;                 // node names, first placed first
  std::map<std::string, std::vector<Server>> by_node;  // node name -> its servers
  auto add = [&](const std::string& node, const Server& sv) {
    if (!by_node.count(node)) node_order.push_back(node);
    by_node[node].push_back(sv);
  };
  const int router_port = RouterPort(router_cmd, router_file);
  if (shared) {
    std::vector<PoolGroup> groups;
    for (const DisaggProcess* proc : servers_of)
      groups.push_back({proc->count, proc->gpus, ProcessPort(*proc)});
    const std::vector<std::vector<PlacedServer>> placed =
        PlaceSharedNodes(groups, HostGpus(pc), router_port);
    // Node by node; on each, its decode servers before its prefill servers.
    std::vector<std::pair<int, Server>> all;
    for (size_t k = 0; k < servers_of.size(); ++k)
      for (const PlacedServer& ps : placed[k])
        all.push_back({ps.node, {servers_of[k], ps, groups[k].base_port}});
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [node, sv] : all) add(fmt::format("node-{}", node + 1), sv);
  } else {
    for (const DisaggProcess* proc : servers_of) {
      const int base = ProcessPort(*proc);
      const std::vector<std::vector<PlacedServer>> placed =
          PlaceSharedNodes({{proc->count, proc->gpus, base}}, host_gpus(*proc), router_port);
      for (const PlacedServer& ps : placed.front())
        add(fmt::format("{}-node-{}", proc->role, ps.node + 1), {proc, ps, base});
    }
  }
  total_nodes = static_cast<int>(node_order.size());
  bool mixed_node = false;  // some node runs servers of both pools
  for (const std::string& node : node_order) {
    const std::vector<Server>& servers = by_node[node];
    std::string script = kScriptHead;
    if (l.backend == Engine::kVllm &&
        (l.engine == DisaggEngine::kVllm || l.engine == DisaggEngine::kDynamo))
      script +=
          "# NIXL's handshake: this node's address as the other side reaches it.\n"
          "export VLLM_NIXL_SIDE_CHANNEL_HOST=${VLLM_NIXL_SIDE_CHANNEL_HOST:-$(hostname -i)}\n";
    const Server& head = servers.front();
    if (head.ps.node_rank > 0 || head.proc->gpus > host_gpus(*head.proc)) {
      script +=
          ": \"${HEAD_ADDR:?set HEAD_ADDR to the address of the first node of the instance}\"\n";
      script += fmt::format("export HEAD_ADDR NODE_RANK={}\n", head.ps.node_rank);
    }
    for (const Server& sv : servers) {
      const DisaggProcess& proc = *sv.proc;
      const PlacedServer& ps = sv.ps;
      if (ps.node_rank == 0) {
        const int slot = ps.port - sv.base;
        hosts.push_back({fmt::format("<{}-{}>:{}", proc.role, ps.instance + 1, sv.base),
                         fmt::format("<{}>:{}", node, ps.port)});
        // SGLang's prefill servers pair through their bootstrap port, one per slot.
        hosts.push_back({fmt::format("<{}>:{} 8998", node, ps.port),
                         fmt::format("<{}>:{} {}", node, ps.port, 8998 + slot)});
      }
      std::string cmd = WithModelId(
          PlacedCommand(proc, ps, sv.base, l.prefill_pool.problem.cluster.gpu.vendor), resolved,
          opt.model_id);
      // vLLM's NIXL handshake listens on VLLM_NIXL_SIDE_CHANNEL_PORT (5600) plus the worker's
      // rank: servers sharing a node start their range at their first GPU.
      if (servers.size() > 1 && l.backend == Engine::kVllm && !ps.devices.empty())
        cmd = fmt::format("VLLM_NIXL_SIDE_CHANNEL_PORT={} ", 5600 + ps.first_device) + cmd;
      script += Background(
          cmd, fmt::format("logs/{}-{}-rank-{}.log", proc.role, ps.instance + 1, ps.node_rank));
      where_md += fmt::format("| {} | {} {}{} | {} | {} |\n", node, proc.role, ps.instance + 1,
                              proc.gpus > host_gpus(proc) ? fmt::format(" rank {}", ps.node_rank) : "",
                              ps.devices.empty() ? "all" : ps.devices,
                              ps.port > 0 ? std::to_string(ps.port) : "-");
    }
    script += "wait\n";
    const std::string name = node + ".sh";
    if (Status st = w.Write(name, script, true); !st.ok()) return st;
    if (shared) {
      // What this node starts: its decode servers before its prefill servers, or the one kind.
      int roles[2] = {0, 0};  // decode, prefill
      for (const Server& sv : servers) ++roles[sv.proc->role == std::string("prefill") ? 1 : 0];
      mixed_node = mixed_node || (roles[0] > 0 && roles[1] > 0);
      const std::string what = roles[0] > 0 && roles[1] > 0
                                   ? "its decode servers, then its prefill servers"
                               : roles[0] > 0 ? "decode servers only"
                                              : "prefill servers only";
      files_md += fmt::format("- `{}`: run on {} ({})\n", name, node, what);
    } else {
      files_md += fmt::format("- `{}`: run on {}\n", name, node);
    }
  }
  // The router reaches each server on its node and port.
  for (const auto& [from, to] : hosts) {
    for (std::string* text : {&router_cmd, &router_file}) {
      for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size())) {
        const size_t end = at + from.size();
        if (end < text->size() && std::isdigit(static_cast<unsigned char>((*text)[end]))) continue;
        text->replace(at, from.size(), to);
      }
    }
  }
  if (!router_file_name.empty()) {
    if (Status st = w.Write(router_file_name, router_file); !st.ok()) return st;
    files_md += fmt::format("- `{}`: the router's configuration\n", router_file_name);
  }
  if (!router_cmd.empty()) {
    std::string script = kScriptHead;
    script += shared ? "# Replace <node-i> with the nodes' addresses (DEPLOY.md).\n"
                     : "# Replace <prefill-node-i> / <decode-node-i> with the nodes' addresses "
                       "(DEPLOY.md).\n";
    script += Behind("exec", router_cmd) + "\n";
    if (Status st = w.Write("router.sh", script, true); !st.ok()) return st;
    files_md += "- `router.sh`: the router (any host that reaches every server)\n";
  }
  // Kubernetes: Dynamo's graph deployment when the deployment spans nodes.
  const std::optional<DisaggLaunch> dynamo = total_nodes > 1 ? DynamoGraphOf(l) : std::nullopt;
  if (dynamo) {
    std::string yaml = DynamoGraphHeader("l2s-disagg");
    const std::string image = DynamoImage(dynamo->backend);
    for (const DisaggProcess& proc : dynamo->processes) {
      const bool router = proc.role == "router";
      const PoolPlan& pool = proc.role == "prefill" ? prefill : decode;
      yaml += DynamoGraphService(router ? "Frontend" : proc.role, router ? "" : proc.role,
                                 router ? 1 : proc.count, router ? 0 : proc.gpus,
                                 HostGpus(pool.problem.cluster), image,
                                 WithModelId(proc.command, resolved, opt.model_id),
                                 router ? std::string() : proc.file_name,
                                 router ? std::string() : proc.file);
    }
    if (Status st = w.Write("dynamo-graph.yaml", yaml); !st.ok()) return st;
    files_md += fmt::format(
        "- `dynamo-graph.yaml`: the plan as a Dynamo graph deployment on Kubernetes ({} "
        "workers{})\n",
        EngineTitle(dynamo->backend),
        l.engine == DisaggEngine::kDynamo ? "" : " with the same engine flags");
  }
  std::string md = fmt::format("# Deployment: {} disaggregated on {}\n\n",
                               decode.problem.model.name, DisaggEngineTitle(l.engine));
  md += fmt::format("Prefill: {} x `{}` ({} GPUs each); decode: {} x `{}` ({} GPUs each).\n\n",
                    prefill.instances, Short(l.prefill), prefill.gpus_per_instance,
                    decode.instances, Short(l.decode), decode.gpus_per_instance);
  md += DraftModelLine(decode.problem.model, l.decode.mtp);
  md += "## Files\n" + files_md + "\n## What runs where\n| node | server | GPUs | port |\n|---|---|---|---|\n" +
        where_md;
  const std::string start_nodes =
      shared && mixed_node
          ? "Each node's script (the pools share the nodes: a script starts its node's decode "
            "servers, then its prefill servers; a server that spans nodes: set HEAD_ADDR to its "
            "first node on each of them)."
      : shared ? "Each node's script, the decode nodes' first (a server that spans nodes: set "
                 "HEAD_ADDR to its first node on each of them)."
             : "The decode nodes' scripts, then the prefill nodes' (a server that spans nodes: set "
               "HEAD_ADDR to its first node on each of them).";
  if (l.engine == DisaggEngine::kDynamo) {
    md +=
        "\n## Order to start\n1. etcd (and NATS) where every host reaches them, with "
        "ETCD_ENDPOINTS / NATS_SERVER set on every host (see the notes).\n2. " +
        start_nodes +
        "\n3. `router.sh` (Dynamo's frontend) on any host; the workers register with it.\n";
    md += fmt::format(
        "\n## Check it is up\n`curl -s http://<frontend>:{}/v1/models` lists the model once the "
        "workers have registered; send a request to its `/v1/completions`.\n",
        kDynamoFrontendPort);
  } else {
    md += "\n## Order to start\n1. " + start_nodes +
          "\n2. `router.sh` once every server answers, " +
          (shared
               ? "after replacing <node-i> with the nodes' addresses.\n"
               : "after replacing <prefill-node-i> / <decode-node-i> with the nodes' addresses.\n");
    md += "\n## Check it is up\n`curl -s http://<server>:<port>/v1/models` on each server, then "
          "the same on the router; send a request to the router's `/v1/completions`.\n";
  }
  md += "\n## What the plan expects (simulated)\nPrefill instance:\n" + Figures(l.prefill_eval) +
        "Decode instance:\n" + Figures(l.decode_eval);
  for (const std::string& line : opt.plan_lines) md += "- " + line + "\n";
  std::vector<std::string> notes = l.notes;
  // The plan priced each prompt's KV over the scale-up fabric when a prefill and a decode
  // instance fit one node; across several nodes the router does not prefer a decode server on
  // the prefill's node.
  if (shared && total_nodes > 1 &&
      prefill.gpus_per_instance + decode.gpus_per_instance <= HostGpus(pc))
    notes.push_back(fmt::format(
        "the plan prices each prompt's KV transfer over {} (a prefill and a decode server fit one "
        "node); the router does not prefer a decode server on the prefill server's node, so "
        "across the {} nodes a transfer may take the scale-out network",
        ScaleUpName(pc.gpu), total_nodes));
  for (const DisaggProcess& proc : l.processes)
    for (const std::string& n : proc.notes) notes.push_back(proc.role + ": " + n);
  md += "\n## Notes\n" + Bulleted(notes);
  return w.Write("DEPLOY.md", md);
}

Status CheckEmitDir(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("--emit needs a directory");
  Writer w(dir, nullptr);
  if (Status st = w.Open(); !st.ok()) return st;
  const std::filesystem::path probe = std::filesystem::path(dir) / ".l2s-write-check";
  {
    std::ofstream out(probe);
    if (!out) return Status::InvalidArgument(fmt::format("--emit {}: the directory is not writable", dir));
  }
  std::error_code ec;
  std::filesystem::remove(probe, ec);
  return Status::Ok();
}

namespace {

std::string Summary(const std::string& dir, const std::vector<std::string>& written,
                    const std::string& what) {
  return fmt::format("wrote {} files to {} for {} (start with {}/DEPLOY.md)", written.size(), dir,
                     what, dir);
}

}  // namespace

StatusOr<std::string> EmitAggregatedPlan(const std::string& dir, const Problem& p,
                                         const std::vector<EngineTranslation>& launch,
                                         std::optional<Engine> asked, const EmitOptions& opt) {
  int pick = -1;
  if (asked && *asked != Engine::kMegatron)
    for (size_t k = 0; k < launch.size(); ++k)
      if (launch[k].engine == *asked) pick = static_cast<int>(k);
  if (pick >= 0 && !launch[pick].runnable)
    return Status::InvalidArgument(fmt::format("--emit: {} cannot run this plan (no valid repair)",
                                               EngineTitle(launch[pick].engine)));
  if (pick < 0) {
    for (size_t k = 0; k < launch.size(); ++k)
      if (launch[k].engine != Engine::kMegatron && launch[k].runnable &&
          (pick < 0 || launch[k].launched_eval.tokens_per_s_per_gpu >
                           launch[pick].launched_eval.tokens_per_s_per_gpu))
        pick = static_cast<int>(k);
  }
  if (pick < 0)
    return Status::InvalidArgument("--emit: no engine can run this plan (see the launch section)");
  const EngineTranslation& t = launch[pick];
  std::vector<std::string> written;
  EmitOptions o = opt;
  // Dynamo workers only of the engine it was asked for, and one Dynamo has workers for.
  o.dynamo = opt.dynamo && asked && t.engine == *asked && DynamoHasWorkersFor(t.engine);
  if (!t.unsupported.empty())
    o.plan_lines.push_back(fmt::format("{} cannot express {} choice(s) of the plan: the files run "
                                       "its repair {}",
                                       EngineTitle(t.engine), t.unsupported.size(),
                                       Short(t.launched)));
  if (Status st = EmitDeployment(dir, t.engine, p, t.launched, t.launched_eval, o, &written); !st.ok())
    return st;
  return Summary(dir, written,
                 fmt::format("{}{} ({}, {:.0f} tokens/s per GPU simulated)",
                             o.dynamo ? "NVIDIA Dynamo workers of " : "", EngineTitle(t.engine),
                             Short(t.launched), t.launched_eval.tokens_per_s_per_gpu));
}

StatusOr<std::string> EmitDisaggregatedPlan(const std::string& dir,
                                            const std::vector<DisaggLaunch>& launch,
                                            std::optional<DisaggEngine> asked,
                                            const EmitOptions& opt) {
  const int n = static_cast<int>(launch.size());
  auto index_of = [&](DisaggEngine e) {
    for (int k = 0; k < n; ++k)
      if (launch[k].engine == e) return k;
    return -1;
  };
  int pick = asked ? index_of(*asked) : -1;
  if (pick >= 0 && !launch[pick].runnable)
    return Status::InvalidArgument(fmt::format("--emit: {} cannot run this plan",
                                               DisaggEngineTitle(launch[pick].engine)));
  for (DisaggEngine e : kDisaggEngines)  // the first exact one, in kDisaggEngines order
    if (const int k = index_of(e); pick < 0 && k >= 0 && launch[k].runnable &&
                                   launch[k].unsupported.empty())
      pick = k;
  for (DisaggEngine e : kDisaggEngines)
    if (const int k = index_of(e); pick < 0 && k >= 0 && launch[k].runnable) pick = k;
  if (pick < 0)
    return Status::InvalidArgument("--emit: no engine can run this disaggregated plan");
  std::vector<std::string> written;
  if (Status st = EmitDisaggDeployment(dir, launch[pick], opt, &written); !st.ok())
    return st;
  return Summary(dir, written, fmt::format("{} prefill/decode", DisaggEngineTitle(launch[pick].engine)));
}

namespace {

// `s` at the largest batch that fits problem `q`'s memory (Simulator::LargestBatchInMemory), at
// most `max_running` per rank (the running-request limit the sizing simulated; its KV pool held no
// more full-length sequences), without latency limits (the sizing's percentile SLOs are the
// request-level simulator's).
StatusOr<std::pair<Strategy, Evaluation>> SizedBatch(Problem q, Strategy s, int max_running,
                                                     const char* what) {
  q.workload.ttft_ms = q.workload.tpot_ms = 0;
  if (max_running > 0) q.workload.max_batch = max_running;
  const Simulator sim(q);
  // Nothing fits (0): the evaluation at batch 1 says why.
  s.batch = std::max(1, sim.LargestBatchInMemory(s));
  const Evaluation e = sim.Evaluate(s);
  if (!e.valid())
    return Status::InvalidArgument(fmt::format(
        "--emit: the {} layout {} has no batch that fits: {}", what, Short(s), sim.Reason(s, e)));
  return std::make_pair(s, e);
}

}  // namespace

StatusOr<std::string> EmitSizedAggregated(const std::string& dir, Problem instance, Strategy s,
                                          int instances, int max_running, const std::string& engine,
                                          const EmitOptions& opt) {
  const std::optional<Engine> workers = WorkersOf(engine);
  if (!workers || *workers == Engine::kMegatron)
    return Status::InvalidArgument(fmt::format(
        "--emit: no launch files for the engine \"{}\" (a serving engine: --engine vllm, sglang, "
        "trtllm, atom or a Dynamo variant)",
        engine.empty() ? "ideal" : engine));
  StatusOr<std::pair<Strategy, Evaluation>> sized = SizedBatch(instance, s, max_running, "sized");
  if (!sized.ok()) return sized.status();
  EmitOptions o = opt;
  o.replicas = std::max(1, instances);
  StatusOr<engine::EngineId> id = engine::ParseEngineId(engine);
  o.dynamo =
      id.ok() && engine::CapabilitiesOf(*id).workers != *id && DynamoHasWorkersFor(*workers);
  std::vector<std::string> written;
  if (Status st = EmitDeployment(dir, *workers, instance, sized->first, sized->second, o, &written);
      !st.ok())
    return st;
  return Summary(
      dir, written,
      fmt::format("{} x {}{} ({})", o.replicas, o.dynamo ? "NVIDIA Dynamo workers of " : "",
                  EngineTitle(*workers), Short(sized->first)));
}

StatusOr<std::string> EmitSizedDisaggregated(const std::string& dir, Problem prefill, Strategy sp,
                                             int np, Problem decode, Strategy sd, int nd,
                                             int max_running, int prefill_max_running,
                                             const std::string& engine, const EmitOptions& opt) {
  StatusOr<engine::EngineId> id = engine::ParseEngineId(engine.empty() ? "ideal" : engine);
  const std::optional<DisaggEngine> de = id.ok() ? DisaggEngineOf(*id) : std::nullopt;
  if (!de)
    return Status::InvalidArgument(fmt::format(
        "--emit: no disaggregated launch files for the engine \"{}\" (--engine sglang, vllm, "
        "trtllm or a Dynamo variant)",
        engine.empty() ? "ideal" : engine));
  StatusOr<Problem> pre = PrefillProblem(prefill, prefill.cluster, prefill.cluster.num_gpus);
  if (!pre.ok()) return pre.status();
  StatusOr<Problem> dec = DecodeProblem(decode, decode.cluster, decode.cluster.num_gpus);
  if (!dec.ok()) return dec.status();
  StatusOr<std::pair<Strategy, Evaluation>> p = SizedBatch(*pre, sp, 0, "prefill");
  if (!p.ok()) return p.status();
  StatusOr<std::pair<Strategy, Evaluation>> d = SizedBatch(*dec, sd, max_running, "decode");
  if (!d.ok()) return d.status();
  PoolPlan pp{p->first, std::max(1, np), p->first.gpus(), *pre};
  if (prefill_max_running > 0 && prefill_max_running != p->first.batch)
    pp.max_running = prefill_max_running;
  PoolPlan dp{d->first, std::max(1, nd), d->first.gpus(), *dec};
  const std::optional<Engine> workers = WorkersOf(engine);
  StatusOr<DisaggLaunch> l = MakeDisaggLaunch(
      *de, pp, dp, KvTransfer::kNixl, *de == DisaggEngine::kDynamo ? workers : std::nullopt);
  if (!l.ok()) return Status::InvalidArgument("--emit: " + l.status().message());
  std::vector<std::string> written;
  if (Status st = EmitDisaggDeployment(dir, *l, opt, &written); !st.ok())
    return st;
  return Summary(dir, written,
                 fmt::format("{} prefill/decode ({} x {} | {} x {})", DisaggEngineTitle(l->engine),
                             pp.instances, Short(l->prefill), dp.instances, Short(l->decode)));
}

}  // namespace l2s::launch
