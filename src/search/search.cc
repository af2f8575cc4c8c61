// The budgeted objective, searcher spec strings and the searcher registry.
#include "search/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "search/searchers.h"

namespace l2s {

// ---------------------------------------------------------------- Objective

Objective::Objective(const Simulator& sim, const StrategySpace& space, int64_t budget,
                     Observer* observer)
    : sim_(&sim),
      space_(&space),
      budget_(budget < 0 ? 0 : budget),
      observer_(observer),
      start_(std::chrono::steady_clock::now()) {}

Objective::Objective(const EncodedProblem& problem, int64_t budget, Observer* observer)
    : problem_(&problem),
      budget_(budget < 0 ? 0 : budget),
      observer_(observer),
      start_(std::chrono::steady_clock::now()) {}

const EncodedSpace& Objective::encoded_space() const {
  if (problem_ != nullptr) return problem_->space();
  return *space_;
}

const Evaluation& Objective::Evaluate(const Strategy& s) {
  assert(!Done() && sim_ != nullptr);
  ++calls_;
  // A point outside an engine-restricted space (the engine cannot launch it) is charged but not
  // simulated, and never becomes the best: structurally invalid for this search.
  if (space_->restriction().active && !space_->CheckRestriction(s).ok()) {
    last_ = Evaluation{};
    last_.verdict = Verdict::kStructure;
  } else {
    // Searchers compare figures, not their attribution to operators: Finish evaluates the best
    // once more with it.
    last_ = sim_->EvaluateWithoutBreakdown(s);
  }
  if (Track()) best_ = s;
  if (observer_ != nullptr) observer_->OnEvaluation(s, last_);
  Report();
  return last_;
}

bool Objective::Track() {
  const double v = Value(last_);
  // Strictly better valid value replaces the best; ties keep the earlier strategy.
  if (!last_.valid() || (has_best_ && v <= best_eval_.tokens_per_s_per_gpu)) return false;
  has_best_ = true;
  best_eval_ = last_;
  trace_.push_back(TracePoint{calls_, v});
  return true;
}

void Objective::Report() {
  if (observer_ == nullptr) return;
  observer_->OnProgress(calls_, budget_, best_value());
  if (observer_->Cancelled()) cancelled_ = true;
}

const Evaluation& Objective::EvaluateEncoded(std::span<const int> idx) {
  if (problem_ == nullptr) {
    scratch_ = space_->Decode(idx);
    return Evaluate(scratch_);
  }
  assert(!Done());
  ++calls_;
  last_ = problem_->Evaluate(idx);
  if (Track()) best_idx_.assign(idx.begin(), idx.end());
  Report();
  return last_;
}

SearchResult Objective::Finish(std::string searcher) const {
  SearchResult r;
  r.searcher = std::move(searcher);
  r.found = has_best_;
  if (has_best_ && problem_ != nullptr) {
    r.best_encoded = best_idx_;
    r.eval = best_eval_;
  } else if (has_best_) {
    // Equivalent choices (dims over one-GPU groups, sp at tp=1) are reported canonically.
    r.best = Canonical(sim_->problem().model, best_);
    r.eval = sim_->Evaluate(best_);  // best_eval_'s figures, with the breakdown
  }
  r.calls = calls_;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  r.interrupted = cancelled_;
  r.trace = trace_;
  return r;
}

SearchResult Searcher::SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                                     Observer* observer) {
  (void)problem; (void)budget; (void)seed; (void)observer;
  SearchResult r;
  r.searcher = name();
  r.note = fmt::format("searcher '{}' needs a strategy space; it does not search an encoded "
                       "(joint) space",
                       name());
  return r;
}

// ---------------------------------------------------------------- spec strings

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsNameChar(c)) return false;
  return true;
}

}  // namespace

StatusOr<SearcherSpec> ParseSearcherSpec(std::string_view text) {
  SearcherSpec spec;
  spec.text = std::string(text);
  const std::string_view t = Trim(text);
  if (t.empty()) return Status::InvalidArgument("searcher spec is empty (e.g. \"rl(paper=1)\")");
  const size_t open = t.find('(');
  const std::string_view name = Trim(t.substr(0, open));
  if (!IsName(name)) {
    return Status::InvalidArgument(fmt::format(
        "searcher spec \"{}\": \"{}\" is not a searcher name (letters, digits, '_', '-')", text,
        name));
  }
  spec.name = std::string(name);
  if (open == std::string_view::npos) return spec;
  const size_t close = t.rfind(')');
  if (close == std::string_view::npos || close < open) {
    return Status::InvalidArgument(fmt::format("searcher spec \"{}\": missing ')'", text));
  }
  if (close != t.size() - 1) {
    return Status::InvalidArgument(fmt::format("searcher spec \"{}\": unexpected \"{}\" after ')'",
                                               text, t.substr(close + 1)));
  }
  const std::string_view body = t.substr(open + 1, close - open - 1);
  if (Trim(body).empty()) return spec;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view entry = Trim(body.substr(pos, comma - pos));
    if (entry.empty()) {
      return Status::InvalidArgument(
          fmt::format("searcher spec \"{}\": empty option (stray ',')", text));
    }
    if (entry.find_first_of("()") != std::string_view::npos) {
      return Status::InvalidArgument(
          fmt::format("searcher spec \"{}\": unexpected parenthesis in \"{}\"", text, entry));
    }
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(fmt::format(
          "searcher spec \"{}\": option \"{}\" has no value (expected key=value)", text, entry));
    }
    const std::string_view key = Trim(entry.substr(0, eq));
    const std::string_view value = Trim(entry.substr(eq + 1));
    if (!IsName(key)) {
      return Status::InvalidArgument(
          fmt::format("searcher spec \"{}\": \"{}\" is not an option name", text, key));
    }
    if (value.empty()) {
      return Status::InvalidArgument(
          fmt::format("searcher spec \"{}\": option '{}' has an empty value", text, key));
    }
    if (!spec.args.emplace(std::string(key), std::string(value)).second) {
      return Status::InvalidArgument(
          fmt::format("searcher spec \"{}\": option '{}' given twice", text, key));
    }
    pos = comma + 1;
  }
  return spec;
}

double SearcherSpec::Double(const std::string& key, double def) const {
  auto it = args.find(key);
  if (it == args.end()) return def;
  const char* begin = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    if (error.empty())
      error = fmt::format("searcher '{}': option {}={} is not a finite number", name, key,
                          it->second);
    return def;
  }
  return v;
}

int64_t SearcherSpec::Int(const std::string& key, int64_t def) const {
  auto it = args.find(key);
  if (it == args.end()) return def;
  const char* begin = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(begin, &end, 10);
  if (end == begin || *end != '\0' || errno == ERANGE) {
    if (error.empty())
      error = fmt::format("searcher '{}': option {}={} is not an integer", name, key, it->second);
    return def;
  }
  return static_cast<int64_t>(v);
}

bool SearcherSpec::Bool(const std::string& key, bool def) const {
  auto it = args.find(key);
  if (it == args.end()) return def;
  const std::string& v = it->second;
  if (v == "true" || v == "1" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "off" || v == "no") return false;
  if (error.empty())
    error = fmt::format("searcher '{}': option {}={} is not a boolean (true/false)", name, key, v);
  return def;
}

Status CheckSpecKeys(const SearcherSpec& spec, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : spec.args) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == key;
    if (ok) continue;
    std::string list;
    for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    return Status::InvalidArgument(fmt::format("searcher '{}' has no option '{}' ({})", spec.name,
                                               key,
                                               list.empty() ? "it takes no options"
                                                            : "options: " + list));
  }
  return Status::Ok();
}

Status SpecValueError(const SearcherSpec& spec) {
  if (spec.error.empty()) return Status::Ok();
  return Status::InvalidArgument(spec.error);
}

// ---------------------------------------------------------------- registry

std::vector<std::string> SearcherNames() {
  return {"local", "rl", "sa", "rw", "ga", "megatron", "default", "oracle"};
}

StatusOr<std::unique_ptr<Searcher>> MakeSearcher(std::string_view text) {
  StatusOr<SearcherSpec> parsed = ParseSearcherSpec(text);
  if (!parsed.ok()) return parsed.status();
  const SearcherSpec& spec = *parsed;
  const std::string& n = spec.name;
  if (n == "local") return MakeLocalSearcher(spec);
  if (n == "rl") return MakeRlSearcher(spec);
  if (n == "sa") return MakeSaSearcher(spec);
  if (n == "rw") return MakeRwSearcher(spec);
  if (n == "ga") return MakeGaSearcher(spec);
  if (n == "megatron") return MakeMegatronSearcher(spec);
  if (n == "default") return MakeDefaultSearcher(spec);
  if (n == "oracle") return MakeOracleSearcher(spec);
  std::string list;
  for (const std::string& s : SearcherNames()) list += (list.empty() ? "" : ", ") + s;
  return Status::NotFound(fmt::format("unknown searcher '{}'; searchers: {}", n, list));
}

}  // namespace l2s
