#include "model/model_source.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

#include "common/text.h"
#include "model/config_lint.h"
#include "model/hf_config.h"
#include "model/hf_readers.h"
#include "model/json_fields.h"
#include "model/presets.h"

namespace l2s {
namespace {

namespace fs = std::filesystem;

// The config file of an existing path: the path itself, or a checkpoint folder's config.json.
std::string ConfigFileOfPath(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? (fs::path(path) / "config.json").string() : path;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool IsRepoChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The first line of a small text file ("" when absent).
std::string FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (in) std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// The cache's snapshot for `repo_dir` (models--org--name) as model_source.h says; "" when none.
std::string PickSnapshot(const fs::path& repo_dir) {
  const fs::path snapshots = repo_dir / "snapshots";
  const std::string main_rev = FirstLine(repo_dir / "refs" / "main");
  if (!main_rev.empty() && main_rev.find('/') == std::string::npos &&
      IsFile(snapshots / main_rev / "config.json"))
    return (snapshots / main_rev / "config.json").string();
  std::error_code ec;
  std::string best, best_rev;
  fs::file_time_type best_time{};
  for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path cfg = it->path() / "config.json";
    if (!IsFile(cfg)) continue;
    std::error_code tec;
    const fs::file_time_type t = fs::last_write_time(cfg, tec);
    if (tec) continue;
    const std::string rev = it->path().filename().string();
    if (best.empty() || t > best_time || (t == best_time && rev > best_rev)) {
      best = cfg.string();
      best_rev = rev;
      best_time = t;
    }
  }
  return best;
}

// The name a config file is known by when its JSON has no _name_or_path: its file name without
// .json, or for a config.json its folder's name (a hub cache's models--org--name for a snapshot).
std::string FileModelName(const std::string& path) {
  fs::path p(path);
  if (p.filename() != "config.json") return p.stem().string();
  fs::path dir = p.parent_path();
  if (dir.parent_path().filename() == "snapshots") {
    std::string repo = dir.parent_path().parent_path().filename().string();
    if (repo.rfind("models--", 0) == 0) {
      repo = repo.substr(8);
      const auto sep = repo.find("--");
      if (sep != std::string::npos) repo = repo.substr(0, sep) + "/" + repo.substr(sep + 2);
    }
    return repo;
  }
  return dir.filename().string();
}

// Loads a config file; with `warnings`, lints it and checks its named size against `fallback`'s.
StatusOr<ModelSpec> LoadConfigFile(const std::string& path, std::string_view fallback_name,
                                   std::vector<std::string>* warnings) {
  L2S_ASSIGN_OR_RETURN(std::string text, jsonio::ReadFile(path));
  L2S_ASSIGN_OR_RETURN(const nlohmann::json root, jsonio::Parse(text, path));
  L2S_ASSIGN_OR_RETURN(ModelSpec m, ParseHfConfigObject(root, path));
  // A Model Optimizer checkpoint states its format in hf_quant_config.json beside config.json
  // when config.json itself has no quantization_config - the one case ParseHfConfig leaves the
  // weights bf16 (every method it reads sets fp8 or fp4, or is refused).
  if (fs::path(path).filename() == "config.json" && m.weight_dtype == DType::kBF16) {
    const fs::path quant = fs::path(path).parent_path() / "hf_quant_config.json";
    std::error_code ec;
    if (fs::is_regular_file(quant, ec)) {
      L2S_ASSIGN_OR_RETURN(std::string qtext, jsonio::ReadFile(quant.string()));
      L2S_RETURN_IF_ERROR(ApplyHfQuantConfig(qtext, quant.string(), &m));
    }
  }
  if (warnings == nullptr) return m;
  for (std::string& w : LintHfConfig(root, path)) warnings->push_back(std::move(w));
  for (const std::string& name : ConfigModelNames(root, fallback_name)) {
    if (!ParseNamedSize(name)) continue;
    std::string w = NamedSizeWarning(m, name);
    if (!w.empty()) warnings->push_back(std::move(w));
    break;
  }
  return m;
}

std::string PresetList() {
  std::string list;
  for (const std::string& n : ModelPresetNames()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

}  // namespace

ModelSearchPaths DefaultModelSearchPaths() {
  ModelSearchPaths p;
  p.config_dirs.push_back("../shared/models/hf");
#ifdef L2S_SOURCE_DIR
  p.config_dirs.push_back(std::string(L2S_SOURCE_DIR) + "/../shared/models/hf");
#endif
  if (std::string v = Env("HF_HUB_CACHE"); !v.empty()) {
    p.hf_hub_cache = v;
  } else if (std::string h = Env("HF_HOME"); !h.empty()) {
    p.hf_hub_cache = (fs::path(h) / "hub").string();
  } else if (std::string x = Env("XDG_CACHE_HOME"); !x.empty()) {
    p.hf_hub_cache = (fs::path(x) / "huggingface" / "hub").string();
  } else if (std::string home = Env("HOME"); !home.empty()) {
    p.hf_hub_cache = (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  }
  return p;
}

bool LooksLikeRepoId(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos || s.find('/', slash + 1) != std::string_view::npos)
    return false;
  const std::string_view org = s.substr(0, slash), name = s.substr(slash + 1);
  for (std::string_view part : {org, name}) {
    if (part.empty() || part == "." || part == "..") return false;
    if (!std::all_of(part.begin(), part.end(), IsRepoChar)) return false;
  }
  return true;
}

Status AttachDraftModelFrom(const std::string& id, const ModelSearchPaths& paths, ModelSpec* m) {
  if (Status st = AttachDraftModel(id, m); !st.ok()) return st;
  std::error_code ec;
  std::string file;
  if (fs::exists(id, ec)) {
    file = ConfigFileOfPath(id);
    if (!fs::is_regular_file(file, ec)) file.clear();  // a folder without config.json
  } else if (LooksLikeRepoId(id)) {
    if (StatusOr<std::string> f = FindRepoConfig(id, paths, nullptr); f.ok()) file = *f;
  }
  if (file.empty()) return Status::Ok();  // not found: the rule of DraftLayerOf
  const std::string source = fmt::format("--draft-model {}: its config {}", id, file);
  // The model's own reader: bounded size and depth, the line of a syntax error, no key twice.
  L2S_ASSIGN_OR_RETURN(const std::string text, jsonio::ReadFile(file));
  L2S_ASSIGN_OR_RETURN(const nlohmann::json j, jsonio::Parse(text, source));
  if (!j.is_object()) return Status::InvalidArgument(source + " is not a JSON object");
  // The draft's attention shape, read as the HF readers read a GQA model's (hf_readers.h).
  using L = ModelLimits;
  const jsonio::ObjectReader r(j, source);
  ModelSpec d;
  L2S_ASSIGN_OR_RETURN(d.hidden_size, r.Int("hidden_size", 1, L::kMaxHidden));
  if (d.hidden_size != m->hidden_size)
    return Status::InvalidArgument(fmt::format(
        "{} has hidden_size {}, not the model's {}: an EAGLE-3 draft reads the model's hidden "
        "states",
        source, d.hidden_size, m->hidden_size));
  L2S_ASSIGN_OR_RETURN(const int64_t heads, r.Int("num_attention_heads", 1, L::kMaxHeads));
  L2S_ASSIGN_OR_RETURN(const int64_t kv, r.IntOr("num_key_value_heads", heads, 1, heads));
  d.num_heads = static_cast<int>(heads);
  d.num_kv_heads = static_cast<int>(kv);
  L2S_RETURN_IF_ERROR(hf::ReadGqaHeads(r, &d));
  L2S_ASSIGN_OR_RETURN(const int64_t ffn, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(const int64_t vocab,
                       r.Int(r.Has("draft_vocab_size") ? "draft_vocab_size" : "vocab_size", 1,
                             L::kMaxVocab));
  m->draft_heads = d.num_heads;
  m->draft_kv_heads = d.num_kv_heads;
  m->draft_head_dim = d.head_dim;
  m->draft_ffn = ffn;
  m->draft_vocab = vocab;
  m->draft_config = file;
  return Status::Ok();
}

StatusOr<std::string> FindRepoConfig(std::string_view repo_id, const ModelSearchPaths& paths,
                                     std::vector<std::string>* looked) {
  const std::string id(repo_id);
  const size_t slash = id.find('/');
  const std::string flat = id.substr(0, slash) + "--" + id.substr(slash + 1);
  std::vector<std::string> tried;
  std::vector<fs::path> seen;  // the same folder reached twice is tried once
  for (const std::string& dir : paths.config_dirs) {
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(fs::path(dir), ec);
    if (!ec && std::find(seen.begin(), seen.end(), canon) != seen.end()) continue;
    if (!ec) seen.push_back(canon);
    const fs::path f = fs::path(dir) / (flat + ".json");
    tried.push_back(f.string());
    if (IsFile(f)) {
      if (looked != nullptr) *looked = tried;
      return f.string();
    }
  }
  if (!paths.hf_hub_cache.empty()) {
    const fs::path repo_dir = fs::path(paths.hf_hub_cache) / ("models--" + flat);
    tried.push_back((repo_dir / "snapshots" / "*" / "config.json").string());
    if (std::string cfg = PickSnapshot(repo_dir); !cfg.empty()) {
      if (looked != nullptr) *looked = tried;
      return cfg;
    }
  }
  if (looked != nullptr) *looked = tried;
  std::string where;
  for (const std::string& t : tried) where += (where.empty() ? "" : ", ") + t;
  return Status::NotFound(fmt::format("no config.json for HuggingFace repo {} in {}",
                                      PrintableText(id), where.empty() ? "(no folder)" : where));
}

namespace {

// Every model l2s can load by name: (what to type, its lower-case name to compare with): the
// presets, and the configs of the config folders and the HuggingFace cache as org/repo.
std::vector<std::pair<std::string, std::string>> KnownModels(const ModelSearchPaths& paths) {
  std::vector<std::pair<std::string, std::string>> known;
  for (const std::string& p : ModelPresetNames()) known.emplace_back(p, p);
  auto add_repo = [&](const std::string& org, const std::string& repo) {
    if (!org.empty() && !repo.empty()) known.emplace_back(org + "/" + repo, AsciiLower(repo));
  };
  std::error_code ec;
  for (const std::string& dir : paths.config_dirs)
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string f = it->path().filename().string();
      const size_t sep = f.find("--");
      if (sep == std::string::npos || it->path().extension() != ".json") continue;
      add_repo(f.substr(0, sep), it->path().stem().string().substr(sep + 2));
    }
  if (!paths.hf_hub_cache.empty())
    for (fs::directory_iterator it(paths.hf_hub_cache, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string f = it->path().filename().string();
      if (f.rfind("models--", 0) != 0) continue;
      const std::string rest = f.substr(8);
      const size_t sep = rest.find("--");
      if (sep != std::string::npos) add_repo(rest.substr(0, sep), rest.substr(sep + 2));
    }
  return known;
}

// For an unknown model - a HuggingFace repo id with no local config, or a bare name - the known
// models (KnownModels) it may mean, as " (did you mean A or B?)" or "": the nearest preset and the
// nearest local repository to its (repository) name, each the same name in another case, within a
// misspelling, or containing it or contained in it with at least 6 characters (distance 1:
// "meta-llama/Llama-3.1-70B" -> llama-3.1-70b and meta-llama/Meta-Llama-3.1-70B,
// "deepseek-ai/DeepSeek-R1-0528" -> deepseek-ai/DeepSeek-R1, "Llama-3.1-70B-Instruct" ->
// llama-3.1-70b, "gpt-oss" -> gpt-oss-120b).
std::string ModelSuggestion(std::string_view id,
                           const std::vector<std::pair<std::string, std::string>>& known,
                           const std::vector<std::string>& presets) {
  const std::string want = AsciiLower(id.substr(id.find('/') + 1));
  const int max_d = std::max(1, MaxTypoDistance(want.size()));
  auto nearest = [&](bool preset) {
    const int i = NearestIndex(known.size(), max_d, [&](size_t i) {
      const bool is_preset =
          std::find(presets.begin(), presets.end(), known[i].first) != presets.end();
      if (is_preset != preset) return -1;
      const std::string& c = known[i].second;
      if (c == want) return 0;
      if (std::min(c.size(), want.size()) >= 6 &&
          (c.find(want) != std::string::npos || want.find(c) != std::string::npos))
        return 1;
      return EditDistance(want, c);
    });
    return i < 0 ? std::string() : known[static_cast<size_t>(i)].first;
  };
  std::vector<std::string> names;
  for (bool preset : {true, false})
    if (std::string n = nearest(preset); !n.empty()) names.push_back(n);
  if (names.empty()) return "";
  return fmt::format(" (did you mean {}?)",
                     names.size() == 1 ? names[0] : names[0] + " or " + names[1]);
}

}  // namespace

StatusOr<ModelSpec> LoadModelFrom(std::string_view name_or_path, const ModelSearchPaths& paths,
                                  std::vector<std::string>* warnings) {
  const std::vector<std::string> presets = ModelPresetNames();
  if (std::find(presets.begin(), presets.end(), name_or_path) != presets.end()) {
    L2S_ASSIGN_OR_RETURN(ModelSpec m, ModelPreset(name_or_path));
    if (warnings != nullptr)
      if (std::string w = NamedSizeWarning(m, name_or_path); !w.empty()) warnings->push_back(w);
    return m;
  }
  const std::string path(name_or_path);
  std::error_code ec;
  if (!path.empty() && fs::exists(path, ec)) {
    // A checkpoint directory works too: its config.json.
    const std::string file = ConfigFileOfPath(path);
    return LoadConfigFile(file, FileModelName(file), warnings);
  }
  if (LooksLikeRepoId(path)) {
    StatusOr<std::string> found = FindRepoConfig(path, paths, nullptr);
    if (!found.ok())
      return Status::NotFound(fmt::format(
          "unknown model \"{}\"{}: not a preset, no such file, and {} (l2s reads local files "
          "only: fetch it with `huggingface-cli download {} config.json`); presets: {}",
          PrintableText(path), ModelSuggestion(path, KnownModels(paths), presets),
          found.status().message(), PrintableText(path), PresetList()));
    L2S_ASSIGN_OR_RETURN(ModelSpec m, LoadConfigFile(*found, path, warnings));
    m.name = path;  // the repo id: what engines take as --model
    return m;
  }
  // A preset or a local config's repository name in other letter case ("Llama-3.1-8B",
  // "deepseek-r1" for deepseek-ai/DeepSeek-R1): the model it names when exactly one does (a
  // preset first: its name is l2s's own); two repositories of that name stay a question.
  const std::vector<std::pair<std::string, std::string>> known = KnownModels(paths);
  {
    const std::string want = AsciiLower(name_or_path);
    std::vector<std::string> exact;
    for (const auto& [type, compare] : known)
      if (compare == want && std::find(exact.begin(), exact.end(), type) == exact.end())
        exact.push_back(type);
    const auto preset = std::find_if(exact.begin(), exact.end(), [&](const std::string& t) {
      return std::find(presets.begin(), presets.end(), t) != presets.end();
    });
    if (preset != exact.end()) return LoadModelFrom(*preset, paths, warnings);
    if (exact.size() == 1) return LoadModelFrom(exact.front(), paths, warnings);
  }
  return Status::NotFound(
      fmt::format("unknown model \"{}\": not a preset and no such file{}; presets: {}",
                  PrintableText(name_or_path), ModelSuggestion(name_or_path, known, presets),
                  PresetList()));
}

}  // namespace l2s
