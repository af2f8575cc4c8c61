// Prediction of measured rows with the simulator: the row's problem and strategy, its unstated
// degrees at their best, its benchmark client simulated request by request, disaggregated rows
// from their pools (validate.h, Predictor).
#include "validate/validate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "common/parallel.h"
#include "common/text.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "model/presets.h"
#include "serve/bench_client.h"
#include "sim/disagg.h"
#include "strategy/space.h"
#include "validate/row_metrics.h"
#include "validate/trtllm_bench.h"

namespace l2s::validate {
namespace {

// a * b when it stays <= kMaxRowGpus (operands are already bounded by it, so the product of two
// fits in int64), nullopt otherwise.
std::optional<int64_t> BoundedProduct(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0 || a > kMaxRowGpus || b > kMaxRowGpus) return std::nullopt;
  const int64_t p = a * b;
  if (p > kMaxRowGpus) return std::nullopt;
  return p;
}

}  // namespace

// ---------------------------------------------------------------- prediction

Predictor::Predictor(std::vector<std::string> model_dirs, bool apply_engine_factor)
    : dirs_(std::move(model_dirs)), apply_factor_(apply_engine_factor) {}

namespace {

namespace fs = std::filesystem;

// The file of `dirs` a row's model_config names: as named, without a folder
// ("models/hf/x.json") or with ".json" added ("deepseek-ai--DeepSeek-R1"); "" when none.
std::string ConfigInDirs(const std::vector<std::string>& dirs, const std::string& config) {
  std::vector<std::string> names = {config, fs::path(config).filename().string()};
  if (!EndsWith(names[1], ".json")) names.push_back(names[1] + ".json");
  std::error_code ec;
  for (const std::string& d : dirs)
    for (const std::string& n : names)
      if (!n.empty() && fs::is_regular_file(fs::path(d) / n, ec)) return (fs::path(d) / n).string();
  return "";
}

// The one file of the first folder of `dirs` that has "<org>--<name>.json" for a bare name
// ("DeepSeek-R1.json", "DeepSeek-R1"; case ignored); "" when none or several.
std::string ConfigByBareName(const std::vector<std::string>& dirs, const std::string& config) {
  if (config.find('/') != std::string::npos) return "";
  const std::string want = AsciiLower(EndsWith(config, ".json") ? config : config + ".json");
  std::error_code ec;
  for (const std::string& d : dirs) {
    std::vector<std::string> hits;
    for (fs::directory_iterator e(d, ec), end; !ec && e != end; e.increment(ec)) {
      const std::string f = AsciiLower(e->path().filename().string());
      const size_t sep = f.find("--");
      if (sep != std::string::npos && f.substr(sep + 2) == want) hits.push_back(e->path().string());
    }
    if (!hits.empty()) return hits.size() == 1 ? hits[0] : "";
  }
  return "";
}

}  // namespace

StatusOr<ModelSpec> Predictor::Model(const std::string& config) {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(config);
    if (it != cache_.end()) return it->second;
  }
  // A file of the model directories, then a preset or a path as given, then a bare name.
  StatusOr<ModelSpec> result = Status::NotFound("");
  if (const std::string file = ConfigInDirs(dirs_, config); !file.empty()) {
    result = LoadModel(file);
  } else if (StatusOr<ModelSpec> m = LoadModel(config); m.ok()) {
    result = std::move(m);
  } else if (const std::string bare = ConfigByBareName(dirs_, config); !bare.empty()) {
    result = LoadModel(bare);
  } else {
    std::string where;
    for (const std::string& d : dirs_) where += (where.empty() ? "" : ", ") + d;
    result = Status::NotFound(fmt::format("model config '{}' not found (searched: {}) and not a preset",
                                          config, where.empty() ? "no directory" : where));
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  cache_.emplace(config, result);  // another thread's load of the same config is the same
  return result;
}


namespace {

// `value`, simulated under the engine's factor `factor` (Workload::engine_factor), is the row's
// prediction; `raw` is it with the factor divided out (latencies multiplied back), the ideal
// engine's figure the JSON reports (exact for steady states; for client runs the request overhead
// is not the factor's, so it is that approximately).
void SetPredicted(double value, MetricKind kind, double factor, Prediction* out) {
  out->predicted = value;
  out->factor = factor;
  out->raw = kind == MetricKind::kLatency ? value * factor : value / factor;
  out->ok = true;
}

// Expert slots an engine runs when the row states none: SGLang adds redundant experts up to a
// multiple of the EP size when EP does not divide the routed experts (ep_num_redundant_experts;
// 256 experts at EP 48 run 288 slots); 0 (one slot per expert) otherwise.
int EngineSlots(const std::string& engine, const ModelSpec& m, int ep) {
  if (!m.is_moe() || ep <= 1 || m.num_experts % ep == 0) return 0;
  if (EngineFamily(engine) != "sglang") return 0;
  return (m.num_experts + ep - 1) / ep * ep;
}

// A disagg row: the prefill pool and the decode pool (prefill_*/decode_* columns: each pool is
// instances of tp x dp GPUs with pp = 1), costed by DisaggModel on the serve workload. The counts
// are the row's (all instances of each pool); batch: the decode pool's share of `concurrency`,
// else the simulator's best; the prefill batch is the simulator's best.
Prediction PredictDisagg(const Measurement& row, Problem p, MetricKind kind, const std::string& gpu,
                         Predictor::ClientRuns* runs) {
  Prediction out;
  auto miss = [&](std::string why) {
    out.ok = false;
    out.reason = std::move(why);
    return out;
  };
  if (row.isl <= 0 || row.osl <= 0) return miss("disagg row needs isl and osl");
  p.workload.isl = row.isl;
  p.workload.osl = row.osl;
  const PoolColumns* pools[2] = {&row.prefill, &row.decode};
  int size[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const PoolColumns& c = *pools[k];
    const char* role = k == 0 ? "prefill" : "decode";
    if (c.gpus <= 0 || c.tp <= 0) return miss(fmt::format("disagg row needs {}_gpus and {}_tp", role, role));
    const int64_t dp = c.dp > 0 ? c.dp : 1;
    if (c.tp * dp > c.gpus || c.gpus % (c.tp * dp) != 0)
      return miss(fmt::format("{}_tp x {}_dp = {} does not divide the {} {} GPUs", role, role,
                              c.tp * dp, c.gpus, role));
    size[k] = static_cast<int>(c.tp * dp);
  }
  if (row.gpus > 0 && row.gpus != row.prefill.gpus + row.decode.gpus)
    return miss(fmt::format("gpus {} is not prefill_gpus + decode_gpus = {}", row.gpus,
                            row.prefill.gpus + row.decode.gpus));
  DisaggSetup st;
  st.serve = p;
  // A pool may use part of a node (a 4-GPU prefill worker beside idle GPUs, 20 prefill GPUs in
  // 8-GPU nodes): its cluster is the whole nodes it occupies; the rate below counts only the
  // row's instances, so the idle GPUs add nothing.
  auto pool_cluster = [&](int64_t g) -> StatusOr<ClusterSpec> {
    StatusOr<ClusterSpec> one = MakeCluster(gpu, 1);
    if (!one.ok()) return one.status();
    const int64_t dom = one->gpus_per_domain;
    const int64_t whole = g <= dom ? g : (g + dom - 1) / dom * dom;
    return MakeCluster(gpu, static_cast<int>(whole));
  };
  StatusOr<ClusterSpec> pc = pool_cluster(row.prefill.gpus);
  StatusOr<ClusterSpec> dc = pool_cluster(row.decode.gpus);
  if (!pc.ok()) return miss(pc.status().message());
  if (!dc.ok()) return miss(dc.status().message());
  st.prefill_pool = *pc;
  st.decode_pool = *dc;
  st.shared = false;
  st.speculating = row.mtp > 0;
  st.prefill_pool_name = "prefill";
  st.decode_pool_name = "decode";
  st.cross = KvLink{false, pc->scaleout_bw, pc->scaleout_latency};
  // The pools' clusters are whole nodes (pool_cluster); the rate counts the row's instances only.
  st.total_gpus = pc->num_gpus + dc->num_gpus;
  StatusOr<std::unique_ptr<DisaggModel>> dm = DisaggModel::Make(std::move(st));
  if (!dm.ok()) return miss(dm.status().message());
  Strategy s[2];
  for (int k = 0; k < 2; ++k) {
    const PoolColumns& c = *pools[k];
    s[k].tp = static_cast<int>(c.tp);
    s[k].dp = static_cast<int>(c.dp > 0 ? c.dp : 1);
    // A dense model has no experts to split: a stated ep is the engine's no-op flag.
    s[k].ep = p.model.is_moe() ? static_cast<int>(c.ep > 0 ? c.ep : 1) : 1;
    s[k].dims = MegatronDims();
    s[k].slots = static_cast<int>(row.expert_slots);
    if (s[k].slots == 0) s[k].slots = EngineSlots(row.engine, p.model, s[k].ep);
    if (!row.overlap.empty() && !ParseOverlap(row.overlap, &s[k].overlap))
      return miss(fmt::format("unsupported overlap '{}'", row.overlap));
    ClearAbsentOps(p.model, &s[k]);
  }
  // A speculating deployment's prefill servers run the same speculative setting (its extend
  // drafts the first token and fills the draft's KV cache, which the decode side receives).
  s[0].mtp = s[1].mtp = static_cast<int>(row.mtp);
  const int64_t decode_ranks = (row.decode.gpus / size[1]) * s[1].dp;
  if (row.batch > 0) s[1].batch = static_cast<int>(row.batch);
  else if (row.concurrency > 0)
    s[1].batch = static_cast<int>((row.concurrency + decode_ranks - 1) / decode_ranks);
  for (int k = 0; k < 2; ++k) {
    Status cs = CheckStrategy(p.model, size[k], s[k]);
    if (!cs.ok()) return miss(fmt::format("invalid {} strategy: {}", k == 0 ? "prefill" : "decode", cs.message()));
  }
  // A deployment that runs (SLOs aside: a row states none it had to meet).
  auto deployable = [](const DisaggEvaluation& x) {
    return x.verdict != Verdict::kStructure && x.verdict != Verdict::kMemory &&
           x.verdict != Verdict::kNoBatch;
  };
  DisaggEvaluation d = (*dm)->Evaluate(size[0], s[0], size[1], s[1]);
  // A client-simulated row whose concurrency (not a stated batch) does not fit the decode pool's
  // KV memory at once: the decode instances admit what fits and the other clients wait (the client
  // run simulates it); the static model is checked at the batch that fits, as aggregated rows are.
  if (d.verdict == Verdict::kMemory && row.batch == 0 && ClientSimulated(row)) {
    Strategy fit = s[1];
    fit.batch = 0;
    DisaggEvaluation auto_d = (*dm)->Evaluate(size[0], s[0], size[1], fit);
    if (deployable(auto_d)) {
      s[1] = fit;
      d = std::move(auto_d);
    }
  }
  out.strategy = fmt::format("prefill {} | decode {}", ToText(s[0]), ToText(s[1]));
  out.batch = d.decode.eval.batch;
  // The row's own counts: every instance of each pool (BestCounts' choice has the same rate).
  const int np = static_cast<int>(row.prefill.gpus / size[0]), nd = static_cast<int>(row.decode.gpus / size[1]);
  if (!deployable(d)) return miss(fmt::format("invalid: {}", d.reason));
  Evaluation e = d.AsEvaluation();
  const double rate = std::min({np * d.prefill.capacity_rps, nd * d.decode.capacity_rps,
                                std::min(np * size[0], nd * size[1]) * d.link.bw /
                                    std::max(1.0, d.kv_bytes_per_prompt)});
  e.tokens_per_s = rate * static_cast<double>(row.osl);
  std::optional<double> v = MetricValue(
      e, p.workload, static_cast<int>(row.prefill.gpus + row.decode.gpus), row.metric);
  // A row stating a concurrency: its client's mean TTFT, mean TPOT or output tokens/s (one run,
  // ClientSimulated, shared by the run's rows through ClientRunOf), simulated request by request
  // on the two pools (serve/bench_client.h, ServeSim::MakeDisagg): np prefill and nd decode
  // instances, the KV link of the static model. Work limit: a run of more than 10^9 decode
  // token-steps (the largest in the frontier file, 1024/8192 at 8,192 clients, is 6.7 x 10^8
  // and takes about 15 s) sends fewer prompts per client (ClientSpec; the lengths column says
  // so); one that exceeds it with one prompt per client (ClientWork) keeps the static model's
  // figure, and says so in the reason.
  const double client_work = ClientWork(row, nd);
  if (v && ClientSimulated(row) && client_work > kMaxClientTokenSteps) {
    out.reason = fmt::format(
        "static model: the benchmark client's {:.2g} decode token-steps at one prompt per client "
        "exceed the simulation's work limit of {:.0e}",
        client_work, kMaxClientTokenSteps);
  } else if (v && ClientSimulated(row)) {
    serve::BenchClientSpec bc = ClientSpec(row, nd);
    // Unstated, a decode worker's running-request limit is the engine's batch cap, not SGLang's
    // speculative default of 48 (DefaultMaxRunning): the disaggregated launchers behind these
    // rows pass --max-running-requests to every worker (AMD's MoRI launcher, InferenceX
    // benchmarks/multi_node/amd_utils/models.yaml: 128 to 4,096 per decode worker). With 48 the
    // 64 clients per decode worker of frontier row 1014 would queue for whole 8k-token requests
    // (23.8 s mean TTFT against 441 ms measured).
    if (bc.max_running == 0) bc.max_running = DefaultsOf(p.workload.engine).max_batch;
    serve::DisaggServeOptions dso;
    dso.prefill_instances = np;
    dso.prefill_router = bc.router;
    dso.link = d.link;
    const Problem pi = (*dm)->PrefillServeProblem(size[0]), di = (*dm)->DecodeServeProblem(size[1]);
    const StatusOr<serve::BenchClientResult>& r = ClientRunOf(row, runs, [&] {
      return serve::SimulateDisaggBenchmarkClient(pi, s[0], di, s[1], dso, bc);
    });
    if (!r.ok()) return miss(r.status().message());
    v = ClientValue(row, *r);
    out.lengths = ClientLengths(row, nd);
  }
  if (!v || !std::isfinite(*v) || *v <= 0)
    return miss(fmt::format("unsupported metric '{}' for mode disagg", row.metric));
  out.replicas = 1;
  SetPredicted(*v, kind, p.workload.engine_factor, &out);
  return out;
}

}  // namespace

namespace {

// Every Measurement with the unstated degrees of `row` filled in, each with a description of the
// choice; just the row itself when everything is stated. Candidates:
//   layout (tp, dp, ep cells all empty, mode not disagg): tp a power of two dividing the
//     instance's GPUs up to 8 (one node), dp the rest, ep 1 or the whole tp x dp group;
//   a disagg pool without tp: tp x dp = min(pool GPUs, 8) with tp a power of two, ep 1 or tp x dp
//     (attention-DP workers with expert parallelism, or TP workers);
//   mtp on without a depth: mtp 1, 2, 3.
std::vector<std::pair<Measurement, std::string>> Candidates(const Measurement& row) {
  std::vector<std::pair<Measurement, std::string>> out = {{row, ""}};
  auto expand = [&](auto&& fill) {
    std::vector<std::pair<Measurement, std::string>> next;
    for (const auto& [m, why] : out) fill(m, why, &next);
    out = std::move(next);
  };
  auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : a + "; " + b; };
  if (!row.layout_stated && row.mode != "disagg" && row.gpus > 1) {
    expand([&](const Measurement& m, const std::string& why, auto* next) {
      const int64_t per = m.gpus / std::max<int64_t>(1, m.replicas) / std::max<int64_t>(1, m.pp);
      for (int64_t tp = 1; tp <= std::min<int64_t>(per, 8); tp *= 2) {
        if (per % tp != 0) continue;
        for (const bool wide : {false, true}) {
          Measurement c = m;
          c.tp = tp;
          c.dp = per / tp;
          c.ep = wide ? per : 1;
          if (wide && per == 1) continue;
          next->push_back({c, join(why, fmt::format("tp {} dp {} ep {}", c.tp, c.dp, c.ep))});
        }
      }
    });
  }
  if (row.mode == "disagg") {
    for (int k = 0; k < 2; ++k) {
      const PoolColumns& pc = k == 0 ? row.prefill : row.decode;
      if (pc.tp > 0 || pc.gpus <= 0) continue;
      expand([&](const Measurement& m, const std::string& why, auto* next) {
        const int64_t size = std::min<int64_t>(pc.gpus, 8);
        for (int64_t tp = 1; tp <= size; tp *= 2) {
          if (size % tp != 0) continue;
          for (const bool wide : {false, true}) {
            Measurement c = m;
            PoolColumns& q = k == 0 ? c.prefill : c.decode;
            q.tp = tp;
            q.dp = size / tp;
            q.ep = wide ? size : 1;
            if (wide && size == 1) continue;
            next->push_back({c, join(why, fmt::format("{} tp {} dp {} ep {}", k == 0 ? "prefill" : "decode",
                                                     q.tp, q.dp, q.ep))});
          }
        }
      });
    }
  }
  if (!row.mtp_stated && row.noted.mtp_on) {
    expand([&](const Measurement& m, const std::string& why, auto* next) {
      for (int64_t d = 1; d <= 3; ++d) {
        Measurement c = m;
        c.mtp = d;
        next->push_back({c, join(why, fmt::format("mtp {}", d))});
      }
    });
  }
  return out;
}

// The throughput metric of the same mode, for ranking candidates.
std::string RankMetric(const Measurement& row) {
  return row.mode == "prefill" ? "input_tokens_per_s" : "output_tokens_per_s";
}

}  // namespace

Prediction Predictor::Predict(const Measurement& row) {
  const std::vector<std::pair<Measurement, std::string>> cands = Candidates(row);
  if (cands.size() == 1) return PredictLengths(row);
  Prediction best;
  double best_rate = -1;
  std::string first_reason;
  for (const auto& [c, why] : cands) {
    Measurement rank = c;
    rank.metric = RankMetric(c);
    const Prediction r = PredictLengths(rank);
    if (!r.ok) {
      if (first_reason.empty()) first_reason = fmt::format("{}: {}", why, r.reason);
      continue;
    }
    if (r.raw > best_rate) {
      Prediction p = PredictLengths(c);
      if (!p.ok) continue;
      best_rate = r.raw;
      best = std::move(p);
      best.chosen = why;
    }
  }
  if (best_rate < 0) {
    Prediction miss;
    miss.reason = fmt::format("no candidate for the unstated degrees predicts (first: {})", first_reason);
    return miss;
  }
  return best;
}

Prediction Predictor::PredictLengths(const Measurement& row) {
  const double r = row.noted.length_ratio;
  // A client-simulated row: its client draws the lengths (a grid would draw them twice).
  if (!(r < 1) || row.isl <= 0 || ClientSimulated(row)) return PredictOne(row);
  // Midpoints of three equal-probability bins of U[r, 1].
  double f[3];
  for (int i = 0; i < 3; ++i) f[i] = r + (1.0 - r) * (i + 0.5) / 3.0;
  const bool has_osl = row.osl > 0;
  const MetricKind kind = KindOfMetric(row.metric);
  double sum_inv_rps = 0, sum_per_req = 0, sum_v = 0, sum_raw = 0;
  int n = 0;
  Prediction last;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < (has_osl ? 3 : 1); ++j) {
      Measurement m = row;
      m.isl = std::max<int64_t>(1, std::llround(static_cast<double>(row.isl) * f[i]));
      if (has_osl) m.osl = std::max<int64_t>(1, std::llround(static_cast<double>(row.osl) * f[j]));
      const Prediction p = PredictOne(m);
      if (!p.ok) return p;
      if (kind == MetricKind::kThroughput) {
        // requests/s of this point, and the metric per request (tokens of the metric's kind).
        Measurement q = m;
        q.metric = EndsWith(m.metric, "_per_gpu") ? "requests_per_s_per_gpu" : "requests_per_s";
        const Prediction rq = PredictOne(q);
        if (!rq.ok || !(rq.raw > 0)) return rq.ok ? p : rq;
        sum_inv_rps += 1.0 / rq.raw;
        sum_per_req += p.raw / rq.raw;
      } else {
        sum_v += p.predicted;
        sum_raw += p.raw;
      }
      ++n;
      last = p;
    }
  }
  Prediction out = last;
  if (kind == MetricKind::kThroughput) {
    const double rps = n / sum_inv_rps;  // 1 / mean(1 / r_i)
    out.raw = rps * sum_per_req / n;     // x mean tokens per request
    out.predicted = out.raw * out.factor;
  } else {
    out.raw = sum_raw / n;
    out.predicted = sum_v / n;
  }
  out.lengths = fmt::format("isl/osl uniform {:.2g}-1.0 x nominal ({}-point grid)", r, n);
  return out;
}

Prediction Predictor::PredictOne(const Measurement& row) {
  Prediction out;
  auto miss = [&](std::string why) {
    out.ok = false;
    out.reason = std::move(why);
    return out;
  };
  if (row.model_config.empty()) return miss("no model_config");
  const MetricKind kind = KindOfMetric(row.metric);
  if (kind == MetricKind::kUnknown) return miss(fmt::format("unsupported metric '{}'", row.metric));
  StatusOr<ModelSpec> model = Model(row.model_config);
  if (!model.ok()) return miss(model.status().message());

  Problem p;
  p.model = *model;
  Workload& w = p.workload;
  w.request_overhead = request_overhead_;
  // The engine's fitted factor, under which every step runs (Workload::engine_factor); a row
  // without an engine label is an unknown engine (the default factor), not the ideal one. The
  // fit (apply_factor_ false) predicts with the ideal engine's steps.
  SetEngineFigures(row.engine.empty() ? "unknown" : row.engine, &w);
  if (!apply_factor_) w.engine_factor = 1.0;
  const bool disagg = row.mode == "disagg";  // a serve workload on two pools (sim/disagg.h)
  if (disagg) w.mode = Mode::kServe;
  else if (!ParseMode(row.mode, &w.mode)) return miss(fmt::format("unsupported mode '{}'", row.mode));
  // A prefill or decode row measures one pool of a disaggregated deployment (or a benchmark of
  // one): its engine runs a pool's kernels (vLLM: the all-to-all of --all2all-backend, not its
  // aggregated server's all-gather + reduce-scatter; Workload::disagg_pool).
  if (!disagg && w.mode != Mode::kServe) w.disagg_pool = true;

  // Degrees and GPU count: gpus = replicas x tp x pp x dp, every factor <= kMaxRowGpus (parsed),
  // products checked against the same bound before they are formed (no overflow).
  const int64_t replicas = row.replicas > 0 ? row.replicas : 1;
  // A dense model has no experts to split: an ep the row states (SGLang's --ep-size, vLLM's
  // --enable-expert-parallel on a dense model) changes nothing the engine runs.
  const int64_t tp = row.tp, pp = row.pp, ep = p.model.is_moe() ? row.ep : 1;
  if (row.ep > 1 && ep == 1) out.reason = fmt::format("ep {} ignored: a dense model", row.ep);
  // A row that speculates on a model without MTP layers ran a draft model, which the row does not
  // name: priced as the EAGLE-3 draft --draft-model attaches (model.h DraftLayerOf).
  if (row.mtp > 0 && !p.model.can_speculate()) {
    if (Status st = AttachDraftModel("eagle3-draft", &p.model); !st.ok())
      return miss(st.message());
    out.reason += fmt::format("{}mtp {} drafted by an EAGLE-3 draft model (the row names none)",
                              out.reason.empty() ? "" : "; ", row.mtp);
  }
  const std::optional<int64_t> tp_pp = BoundedProduct(tp, pp);
  const std::optional<int64_t> per_dp = tp_pp ? BoundedProduct(*tp_pp, replicas) : std::nullopt;
  if (!per_dp)
    return miss(fmt::format("replicas*tp*pp = {}*{}*{} exceeds {} GPUs", replicas, tp, pp,
                            kMaxRowGpus));
  int64_t dp = row.dp;
  if (dp == 0) {
    if (row.gpus == 0) {
      dp = 1;
    } else if (row.gpus % *per_dp != 0) {
      return miss(fmt::format("replicas*tp*pp = {} does not divide the {} GPUs", *per_dp, row.gpus));
    } else {
      dp = row.gpus / *per_dp;
    }
  }
  const std::optional<int64_t> total = BoundedProduct(*per_dp, dp);
  if (!total)
    return miss(fmt::format("replicas*tp*pp*dp = {}*{}*{}*{} exceeds {} GPUs", replicas, tp, pp,
                            dp, kMaxRowGpus));
  if (row.gpus != 0 && *total != row.gpus)
    return miss(fmt::format("replicas*tp*pp*dp = {} but the row has {} GPUs", *total, row.gpus));
  const int gpus = static_cast<int>(*total / replicas);  // one instance
  out.replicas = replicas;

  // GPU: a preset name, or a label with one among its words ("h100_sxm", "HGX B300").
  const std::string gpu = GpuOfLabel(row.gpu);
  if (!GpuPreset(gpu).ok()) return miss(fmt::format("unknown GPU '{}'", row.gpu));
  // A disaggregated row's GPUs need not fill whole nodes (pools may use part of one): its serve
  // problem is set on the whole nodes; PredictDisagg builds each pool on its own.
  int cluster_gpus = gpus;
  if (disagg) {
    StatusOr<ClusterSpec> one = MakeCluster(gpu, 1);
    if (!one.ok()) return miss(one.status().message());
    const int dom = one->gpus_per_domain;
    if (cluster_gpus > dom) cluster_gpus = (cluster_gpus + dom - 1) / dom * dom;
  }
  StatusOr<ClusterSpec> cluster = MakeCluster(gpu, cluster_gpus);
  if (!cluster.ok()) return miss(cluster.status().message());
  p.cluster = *cluster;
  // An engine that has no build for the GPU's vendor (ATOM on NVIDIA, TensorRT-LLM on AMD) ran
  // no such deployment: a miss with the engine layer's reason, as plan and eval refuse it.
  if (StatusOr<engine::EngineId> id = engine::ParseEngineId(row.engine); id.ok())
    if (Status v = engine::CheckVendor(*id, p.cluster.gpu.vendor, p.cluster.gpu.name); !v.ok())
      return miss(v.message());

  // Dtypes: fp16 is stored like bf16 (2 bytes) and runs at the same tensor rate on the GPUs
  // modelled, so it is read as bf16.
  auto dtype = [](const std::string& s, DType dflt) -> std::optional<DType> {
    const std::string l = AsciiLower(s);
    // "auto" / "default": the engine's choice, as an empty cell (kv_cache_dtype=auto).
    if (l.empty() || l == "auto" || l == "default") return dflt;
    if (l == "fp16" || l == "float16" || l == "half") return DType::kBF16;
    if (l == "nvfp4") return DType::kFP4;
    return ParseDType(l);
  };
  const std::optional<DType> wd = dtype(row.weight_dtype, p.model.weight_dtype);
  if (!wd) return miss(fmt::format("unsupported weight_dtype '{}'", row.weight_dtype));
  // KV dtype not stated: the engine's default. TensorRT-LLM's kv_cache_dtype "auto" takes the
  // checkpoint's KV format, and NVIDIA's quantised (ModelOpt FP8/FP4) checkpoints are exported with
  // FP8 KV (ModelOpt's default kv_cache_qformat); every other engine and bf16 checkpoints keep the
  // model's 16-bit KV.
  const bool trtllm = EngineFamily(row.engine) == "trtllm";
  const bool quantised_trtllm = trtllm && wd && *wd != DType::kBF16;
  // FlashMLA's FP8 path (stated in the notes) reads an FP8 latent cache.
  const std::optional<DType> kd = dtype(
      row.kv_dtype, quantised_trtllm || row.noted.fp8_kv ? DType::kFP8 : DType::kBF16);
  if (!kd || *kd == DType::kFP4) return miss(fmt::format("unsupported kv_dtype '{}'", row.kv_dtype));
  // A row's weight_dtype is the format of the checkpoint it ran (MEASUREMENTS.md: the config
  // names the architecture; an MXFP4 DeepSeek-R1 row names DeepSeek-R1's FP8 config). FP4
  // weights on a GPU without FP4 tensor cores run weight-only, as plan runs gpt-oss's MXFP4 on
  // Hopper (sim/kernels.h): predicted, not a miss.
  w.weight = *wd;
  w.kv = *kd;
  // FP8 attention math stated in the notes (FA3 FP8, FlashMLA FP8).
  if (row.noted.fp8_attention) w.attn = DType::kFP8;
  if (disagg) {
    if (ParseEngine(row.engine, &w.engine)) w.max_batch = DefaultsOf(w.engine).max_batch;
    if (row.max_batch > 0) w.max_batch = static_cast<int>(row.max_batch);
    if (row.max_num_tokens > 0) w.max_num_tokens = static_cast<int>(row.max_num_tokens);
    if (row.mtp_accept > 0) w.mtp_accept = row.mtp_accept;
    return PredictDisagg(row, std::move(p), kind, gpu, &client_runs_);
  }

  Strategy s;
  s.pp = static_cast<int>(pp);
  s.tp = static_cast<int>(tp);
  s.dp = static_cast<int>(dp);
  s.ep = static_cast<int>(ep);
  s.dims = MegatronDims();
  s.slots = static_cast<int>(row.expert_slots);
  if (s.slots == 0) s.slots = EngineSlots(row.engine, p.model, s.ep);
  ClearAbsentOps(p.model, &s);

  // The engine's scheduler and its default limits (max batch, max_num_tokens: Workload::engine),
  // unless the row states them; an engine l2s does not know keeps the ideal engine.
  if (ParseEngine(row.engine, &w.engine)) w.max_batch = DefaultsOf(w.engine).max_batch;
  // TensorRT-LLM's attention-DP balancing, when the notes state it (the engine's default is off).
  if (row.noted.adp_balance) w.adp_balance = 1;
  // Engine limits and MTP as stated.
  if (row.max_batch > 0) w.max_batch = static_cast<int>(row.max_batch);
  if (row.max_num_tokens > 0) w.max_num_tokens = static_cast<int>(row.max_num_tokens);
  if (row.mtp_accept > 0) {
    if (row.mtp_accept > static_cast<double>(row.mtp) + 1.0)
      return miss(fmt::format("mtp_accept {} exceeds mtp + 1 = {} tokens per step", row.mtp_accept,
                              row.mtp + 1));
    w.mtp_accept = row.mtp_accept;
  }
  // A trtllm-bench throughput run whose command sets no limits ran with trtllm-bench's own
  // estimate of them (trtllm_bench.h), which every rank's scheduler applies.
  if (w.mode == Mode::kServe && trtllm && row.batch == 0 &&
      row.concurrency == 0 && row.max_batch <= 0 && row.max_num_tokens <= 0 &&
      AsciiLower(row.source).find("trtllm-bench") != std::string::npos && row.isl > 0 && row.osl > 0) {
    TrtllmBenchInput in;
    in.weight = w.weight;
    in.kv = w.kv;
    in.tp = static_cast<int>(tp * dp);
    in.pp = static_cast<int>(pp);
    in.isl = row.isl;
    in.osl = row.osl;
    const StatusOr<TrtllmBenchLimits> lim = TrtllmBenchSettings(p.model, p.cluster.gpu, in);
    if (!lim.ok()) return miss(lim.status().message());
    w.max_batch = lim->max_batch;
    w.max_num_tokens = lim->max_num_tokens;
    // trtllm-bench also captures CUDA graphs up to that max batch (PyTorch backend:
    // cuda_graph_config {padding_enabled, max_batch_size = max_batch_size} in
    // tensorrt_llm/bench/benchmark/utils/general.py; the TensorRT-engine backend of the v0.17
    // rows launches from C++ with no per-op framework dispatch): no step of the run is eager.
    w.cuda_graph_max_batch = lim->max_batch;
    out.limits = fmt::format("trtllm-bench max_batch {}, max_num_tokens {}{}", lim->max_batch,
                             lim->max_num_tokens, lim->tuned ? "" : " (untuned defaults)");
  }
  // Batch per attention-dp rank: the stated batch, else the stated concurrency spread over the dp
  // ranks, else the simulator's best (under max_batch).
  int64_t batch = row.batch;
  if (batch == 0 && row.concurrency > 0) batch = (row.concurrency + dp - 1) / dp;
  // An offline benchmark of N requests (all queued at once) never has more than N in flight: each
  // rank of an instance holds at most ceil(N / (replicas x dp)) of them.
  const int64_t offline_n = OfflineRequests(row);
  if (batch == 0 && offline_n > 0 && w.mode == Mode::kServe) {
    const int64_t per_rank = (offline_n + replicas * dp - 1) / (replicas * dp);
    w.max_batch = static_cast<int>(std::min<int64_t>(w.max_batch, per_rank));
  }
  switch (w.mode) {
    case Mode::kServe:
      if (row.isl <= 0 || row.osl <= 0) return miss("serve row needs isl and osl");
      w.isl = row.isl;
      w.osl = row.osl;
      s.mtp = static_cast<int>(row.mtp);
      break;
    case Mode::kDecode:
      if (row.context <= 0) return miss("decode row needs context");
      w.context = row.context;
      if (row.isl > 0) w.isl = row.isl;
      if (row.osl > 0) w.osl = row.osl;
      s.mtp = static_cast<int>(row.mtp);
      break;
    case Mode::kPrefill:
      if (row.isl <= 0) return miss("prefill row needs isl");
      w.isl = row.isl;
      break;  // no decode step: MTP does not apply
  }
  s.batch = static_cast<int>(batch);
  // A stated batch ran on the engine, so its token budget held it: without a stated
  // max_num_tokens, the engine's default budget is doubled until the simulator's own token limit
  // (Simulator::TokenBatchLimit) admits the measured batch (SGLang's prefill rows ran 16,384
  // tokens per device against its 8,192 default).
  if (batch > 0 && row.max_num_tokens <= 0) {
    const int budget = DefaultsOf(w.engine).max_num_tokens;  // 0: no budget (ideal engine)
    for (int c = budget; c > 0 && c < (1 << 30); c *= 2) {
      w.max_num_tokens = c;
      if (Simulator(p).TokenBatchLimit(s) >= batch) break;
    }
  }
  Status st = CheckStrategy(p.model, gpus, s);
  if (!st.ok()) {
    out.strategy = ToText(s);
    return miss(fmt::format("invalid strategy: {}", st.message()));
  }

  // Overlap of the MoE all-to-all: the row's `overlap` column when it has one; else what its notes
  // state (ReadNotes), when the row has expert parallelism to overlap; otherwise the engines'
  // default, none (SGLang's two- and single-batch overlap are opt-in flags; TensorRT-LLM has no
  // two-batch overlap by default).
  const std::string overlap =
      !row.overlap.empty() ? row.overlap : (s.ep > 1 ? row.noted.overlap : std::string());
  if (!overlap.empty() && !ParseOverlap(overlap, &s.overlap))
    return miss(fmt::format("unsupported overlap '{}'", overlap));
  out.strategy = ToText(s);
  const Simulator sim(std::move(p));
  Evaluation e = sim.Evaluate(s);
  // A client-simulated row whose concurrency (not a stated batch) does not fit the KV memory at
  // once: the engine admits what fits and the rest of the clients wait, which its client run
  // simulates (serve::ServeSim's admission); the steady state is checked at the batch that fits.
  if (!e.valid() && row.batch == 0 && sim.problem().workload.mode == Mode::kServe &&
      ClientSimulated(row)) {
    Strategy fit = s;
    fit.batch = 0;  // the simulator's best batch under the per-rank concurrency (max_batch)
    const Evaluation auto_e = sim.Evaluate(fit);
    if (auto_e.valid()) {
      s = fit;
      e = auto_e;
      out.strategy = ToText(s);
    }
  }
  out.batch = e.batch;
  if (!e.valid()) return miss(fmt::format("invalid strategy: {}", sim.Reason(s, e)));
  std::optional<double> v = MetricValue(e, sim.problem().workload, gpus, row.metric);
  if (!v) return miss(fmt::format("unsupported metric '{}' for mode {}", row.metric, row.mode));
  // A serve row stating a concurrency: its client's mean TTFT, mean TPOT or output tokens/s,
  // simulated request by request (ClientSimulated).
  const bool client = w.mode == Mode::kServe && ClientSimulated(row);
  bool offline = w.mode == Mode::kServe && !client && OfflineSimulated(row, offline_n);
  const double offline_work = static_cast<double>(offline_n) * static_cast<double>(row.osl);
  if (offline && offline_work > kMaxClientTokenSteps) {
    offline = false;
    out.reason = fmt::format(
        "static model: the offline run's {:.2g} decode token-steps exceed the simulation's work "
        "limit of {:.0e}",
        offline_work, kMaxClientTokenSteps);
  } else if (offline && offline_n > serve::kMaxBenchClients) {
    offline = false;
    out.reason = fmt::format(
        "static model: the offline run's {} requests exceed the benchmark client's {}",
        offline_n, serve::kMaxBenchClients);
  }
  if (client) {
    const StatusOr<serve::BenchClientResult>& r = ClientRunOf(row, &client_runs_, [&] {
      return serve::SimulateBenchmarkClient(sim.problem(), s,
                                            ClientSpec(row, static_cast<int>(replicas)));
    });
    if (!r.ok()) return miss(r.status().message());
    v = ClientValue(row, *r);
    out.lengths = ClientLengths(row, static_cast<int>(replicas));
  } else if (offline) {
    const StatusOr<serve::BenchClientResult> r = serve::SimulateBenchmarkClient(
        sim.problem(), s,
        OfflineSpec(row, offline_n, static_cast<int>(replicas), sim.problem().workload.max_batch));
    if (!r.ok()) return miss(r.status().message());
    v = r->output_tokens_per_s;  // over every replica, like a client run
    out.lengths = fmt::format("offline: {} requests queued at once{}", offline_n,
                              row.noted.length_ratio < 1 ? ", lengths as noted" : "");
  }
  if (!std::isfinite(*v) || *v <= 0)
    return miss(fmt::format("simulator returned {} for {}", *v, row.metric));
  // Totals cover every replica (the client's and the offline run already do); per-GPU figures, per-user speed
  // and latencies do not change.
  const bool is_total = !client && !offline && kind == MetricKind::kThroughput &&
                        !EndsWith(row.metric, "_per_gpu");
  SetPredicted(*v * (is_total ? static_cast<double>(replicas) : 1.0), kind,
               sim.problem().workload.engine_factor, &out);
  return out;
}

std::vector<RowResult> PredictAll(const std::vector<Measurement>& rows, Predictor* predictor,
                                  const std::function<void(size_t, size_t)>& on_row, int jobs) {
  // Groups of rows that share a client run (one run's metric rows), in order of their first row;
  // a group's rows are predicted in order on one thread, so its run is simulated once.
  std::vector<std::vector<size_t>> groups;
  {
    std::map<std::string, size_t> group_of;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto [it, fresh] = group_of.try_emplace(ClientKey(rows[i]), groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  // The longest first (a simulated benchmark client's decode token-steps, ClientWork, on one
  // instance as a guess; rows without a client last), so that one long run does not start last;
  // the results do not depend on the order.
  std::vector<size_t> order(groups.size());
  std::vector<double> work(groups.size(), 0.0);
  for (size_t g = 0; g < groups.size(); ++g) {
    order[g] = g;
    const Measurement& m = rows[groups[g].front()];
    if (ClientSimulated(m)) work[g] = ClientWork(m, 1);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return work[a] > work[b]; });
  std::vector<std::optional<RowResult>> res(rows.size());
  std::mutex progress_mu;
  size_t done = 0;
  ParallelFor(static_cast<int>(groups.size()), jobs, [&](int k) {
    for (size_t i : groups[order[static_cast<size_t>(k)]]) {
      const Measurement& m = rows[i];
      RowResult r{m, predictor->Predict(m), kMissAbsPctError};
      if (r.pred.ok) r.error_pct = (r.pred.predicted - m.value) / m.value * 100.0;
      res[i] = std::move(r);
      if (on_row) {
        std::lock_guard<std::mutex> lock(progress_mu);
        on_row(++done, rows.size());
      }
    }
  });
  std::vector<RowResult> out;
  out.reserve(rows.size());
  for (std::optional<RowResult>& r : res) out.push_back(std::move(*r));
  return out;
}

}  // namespace l2s::validate
