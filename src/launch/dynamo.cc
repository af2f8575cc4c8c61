#include "launch/dynamo.h"

#include <fmt/core.h>

#include <algorithm>

namespace l2s::launch {

namespace {

// `args` without the flag `name` (and its value when `with_value`), matched as a whole word.
std::string WithoutFlag(std::string args, const std::string& name, bool with_value) {
  const std::string key = " " + name;
  std::string padded = " " + args;
  for (size_t at = padded.find(key); at != std::string::npos; at = padded.find(key, at)) {
    size_t end = at + key.size();
    if (end < padded.size() && padded[end] != ' ') {
      ++at;
      continue;
    }
    if (with_value && end < padded.size()) {
      const size_t v = padded.find(' ', end + 1);
      end = v == std::string::npos ? padded.size() : v;
    }
    padded.erase(at, end - at);
  }
  return padded.substr(1);
}

}  // namespace

std::string DynamoFrontendCommand() {
  return fmt::format("python -m dynamo.frontend --http-port {}", kDynamoFrontendPort);
}

std::string DynamoDiscoveryNote() {
  return "Dynamo's workers register with its discovery service: start etcd (and NATS, for "
         "KV-event routing) where every host reaches them and set ETCD_ENDPOINTS=<host>:2379 "
         "(NATS_SERVER=nats://<host>:4222) for the frontend and every worker (Dynamo's "
         "deploy/docker-compose.yml starts both)";
}

LaunchCommand DynamoWorkerCommand(Engine backend, const Problem& p, const Strategy& s,
                                  LaunchOptions o, const std::string& trtllm_file) {
  o.listen_all = false;  // the frontend takes the requests; workers serve no public API
  const std::string model = o.model_id.empty() ? ModelArgument(p.model) : o.model_id;
  const std::string env = VisibleDevicesEnv(p.cluster.gpu.vendor, o.cuda_visible_devices);
  switch (backend) {
    case Engine::kSglang: {
      // The worker takes SGLang's server arguments; what precedes the server (its environment:
      // CUDA_VISIBLE_DEVICES, an override variable) stays in front.
      LaunchCommand lc = MakeLaunchCommand(backend, p, s, o);
      const std::string server = "python -m sglang.launch_server ";
      const size_t at = lc.command.find(server);
      if (at == std::string::npos) return lc;
      lc.command = lc.command.substr(0, at) + "python -m dynamo.sglang " +
                   lc.command.substr(at + server.size());
      return lc;
    }
    case Engine::kVllm: {
      // dynamo.vllm parses vLLM's engine arguments (AsyncEngineArgs), not `vllm serve`'s API
      // server ones: no --host / --port / --headless (the worker serves no HTTP).
      // Across nodes on a Ray cluster the head node's command is "ray start --head ... && vllm
      // serve ..." and the other nodes' only "ray start ...": the server part becomes the worker.
      LaunchCommand lc = MakeLaunchCommand(backend, p, s, o);
      const std::string serve = fmt::format("vllm serve {} ", model);
      const size_t at = lc.command.find(serve);
      if (at == std::string::npos) return lc;
      std::string args = lc.command.substr(at + serve.size());
      args = WithoutFlag(args, "--host", true);
      args = WithoutFlag(args, "--port", true);
      args = WithoutFlag(args, "--headless", false);
      lc.command = fmt::format("{}python -m dynamo.vllm --model {} {}", lc.command.substr(0, at),
                               model, args);
      std::erase_if(lc.notes, [](const std::string& n) {
        return n.find("--headless") != std::string::npos;
      });
      return lc;
    }
    default: {  // TensorRT-LLM: the parallel sizes go into the engine-args YAML
      o.trtllm_file = "";
      LaunchCommand lc = MakeLaunchCommand(Engine::kTrtllm, p, s, o);
      const bool moe = p.model.is_moe();
      const int G = s.tp * s.dp;
      std::string yaml = fmt::format("tensor_parallel_size: {}\npipeline_parallel_size: {}\n",
                                     moe ? G : s.tp, s.pp);
      if (moe) yaml += fmt::format("moe_expert_parallel_size: {}\n", s.ep);
      const int budget = p.workload.max_num_tokens > 0
                             ? p.workload.max_num_tokens
                             : DefaultsOf(l2s::Engine::kTrtllm).max_num_tokens;
      yaml += fmt::format("max_batch_size: {}\nmax_seq_len: {}\nmax_num_tokens: {}\n",
                          o.max_running > 0 ? o.max_running : std::max(1, s.batch),
                          MaxSequenceLength(p.workload), budget);
      yaml += lc.extra_file;  // enable_attention_dp, KV dtype, MTP, slots, transceiver
      LaunchCommand out;
      out.extra_file_name = trtllm_file;
      out.extra_file = yaml;
      // trtllm-serve's flag names in the notes are the YAML's keys here.
      for (std::string n : lc.notes) {
        for (const auto& [from, to] :
             {std::pair<std::string, std::string>{"--max_batch_size", "max_batch_size"},
              {"ep_size", "moe_expert_parallel_size"},
              {"tp_size", "tensor_parallel_size"}})
          if (const size_t at = n.find(from); at != std::string::npos) n.replace(at, from.size(), to);
        out.notes.push_back(n);
      }
      // Across nodes TensorRT-LLM is one MPI job started on the head node (the other nodes start
      // nothing): the worker runs under the same launcher.
      if (lc.command.empty()) return out;
      const std::string launcher = "trtllm-llmapi-launch ";
      const size_t at = lc.command.find(launcher);
      const std::string prefix =
          at == std::string::npos ? env : lc.command.substr(0, at + launcher.size());
      out.command = fmt::format("{}python -m dynamo.trtllm --model {} --extra-engine-args {}",
                                prefix, model, trtllm_file);
      return out;
    }
  }
}

bool DynamoHasWorkersFor(Engine backend) {
  return backend == Engine::kSglang || backend == Engine::kVllm || backend == Engine::kTrtllm;
}

DynamoAggLaunch MakeDynamoAggLaunch(const EngineTranslation& t, const Problem& p, int instances) {
  DynamoAggLaunch d;
  d.backend = t.engine;
  d.runnable = t.runnable && DynamoHasWorkersFor(t.engine);
  if (!d.runnable) return d;
  Strategy worker = t.launched;
  const int split =
      SeparateReplicaServers(t.engine, /*dynamo=*/true, p.model, worker, HostGpus(p.cluster));
  d.workers = std::max(1, instances) * split;
  worker.dp /= split;
  d.gpus_per_worker = worker.gpus();
  d.frontend = DynamoFrontendCommand();
  LaunchOptions o;
  o.eval = t.launched_eval.valid() ? &t.launched_eval : nullptr;
  d.worker = DynamoWorkerCommand(t.engine, p, worker, o, "agg.yaml");
  d.notes.push_back(
      d.workers == 1
          ? fmt::format("the frontend routes every request to the worker, which registers with "
                        "it on start; clients send requests to the frontend (port {})",
                        kDynamoFrontendPort)
          : fmt::format("start the worker {} times, each on its own {} "
                        "(CUDA_VISIBLE_DEVICES where workers share a node; --emit writes each "
                        "node's script); the frontend routes each request to one of them, and "
                        "clients send requests to the frontend (port {})",
                        d.workers,
                        d.gpus_per_worker == 1 ? std::string("GPU")
                                               : fmt::format("{} GPUs", d.gpus_per_worker),
                        kDynamoFrontendPort));
  if (t.engine == Engine::kVllm && worker.dp > 1)
    d.notes.push_back(fmt::format(
        "each worker runs its instance's {} data-parallel ranks itself (vLLM's internal load "
        "balancing, whose ranks Dynamo's router addresses one by one: dynamo/vllm/dp_topology.py); "
        "Dynamo's examples also start one worker per rank (--data-parallel-rank r on GPU r)",
        worker.dp));
  d.notes.push_back(DynamoDiscoveryNote());
  return d;
}

}  // namespace l2s::launch
