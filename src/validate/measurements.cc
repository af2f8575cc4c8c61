// Measured rows: the CSV reader and both formats of ../shared/reference/MEASUREMENTS.md, the
// settings read from a row's notes, and the regime of a row (validate.h).
#include "validate/validate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text.h"
#include "hw/hw.h"
#include "validate/row_metrics.h"

namespace l2s::validate {
namespace {

// The result keys of the benchmark clients (vLLM's `vllm bench serve` / benchmark_serving.py
// --save-result JSON, SGLang's bench_serving) as the format's metrics, matched at the end of the
// metric after a mean_ / median_ / p99_ prefix is read: totals over the run.
constexpr std::pair<std::string_view, std::string_view> kMetricAliases[] = {
    {"e2el_ms", "e2e_ms"},                         // vLLM: mean_e2el_ms, p99_e2el_ms
    {"e2e_latency_ms", "e2e_ms"},                  // SGLang: mean_e2e_latency_ms
    {"request_throughput", "requests_per_s"},      // both: requests/s
    {"output_throughput", "output_tokens_per_s"},  // both: output tokens/s
    {"output_token_throughput", "output_tokens_per_s"},  // vLLM's printed summary
    {"input_throughput", "input_tokens_per_s"},          // SGLang
    {"total_token_throughput", "total_tokens_per_s"},    // vLLM
    {"total_throughput", "total_tokens_per_s"},          // SGLang
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `v` without the thousands separators of a number written "1,253.1" or "12,345": commas only
// between groups of exactly three digits before any decimal point; anything else ("1,5", "1,23")
// is returned unchanged (and then is not a number).
std::string WithoutThousandsCommas(const std::string& v) {
  if (v.find(',') == std::string::npos) return v;
  const size_t start = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
  const size_t point = std::min(v.find('.'), v.size());
  if (v.find(',', point) != std::string::npos) return v;
  std::string out = v.substr(0, start);
  size_t run = 0;
  bool first = true;
  for (size_t i = start; i < point; ++i) {
    if (v[i] == ',') {
      if (run == 0 || (first ? run > 3 : run != 3)) return v;
      first = false;
      run = 0;
    } else if (std::isdigit(static_cast<unsigned char>(v[i]))) {
      ++run;
      out += v[i];
    } else {
      return v;
    }
  }
  if (run != 3) return v;
  return out + v.substr(point);
}

// The whole of `v` as a finite number, nullopt otherwise (empty, trailing text, inf, nan);
// thousands separators are read ("1,253.1").
std::optional<double> ParseFinite(const std::string& v_in) {
  const std::string v = WithoutThousandsCommas(v_in);
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != v.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

}  // namespace

// ---------------------------------------------------------------- CSV

StatusOr<std::vector<CsvRecord>> ParseCsv(std::string_view text) {
  std::vector<CsvRecord> out;
  CsvRecord rec;
  std::string field;
  int line = 1;
  bool in_quotes = false, after_quote = false, field_started = false;
  rec.line = 1;
  auto end_field = [&] {
    rec.fields.push_back(std::move(field));
    field.clear();
    after_quote = false;
    field_started = false;
  };
  auto end_record = [&] {
    // A record that is one empty field is a blank line: skip it.
    if (!(rec.fields.size() == 1 && rec.fields[0].empty())) out.push_back(std::move(rec));
    rec = CsvRecord{};
  };
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < n && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == ',') {
      end_field();
      continue;
    }
    if (c == '\r' && i + 1 < n && text[i + 1] == '\n') continue;  // CRLF: the LF ends the record
    if (c == '\n') {
      end_field();
      end_record();
      ++line;
      rec.line = line;
      continue;
    }
    if (after_quote) {
      return Status::ParseError(fmt::format("line {}, column {}: text after a closing quote",
                                            line, rec.fields.size() + 1));
    }
    if (c == '"') {
      if (field_started) {
        return Status::ParseError(fmt::format(
            "line {}, column {}: quote inside an unquoted field", line, rec.fields.size() + 1));
      }
      in_quotes = true;
      field_started = true;
      continue;
    }
    field += c;
    field_started = true;
  }
  if (in_quotes) {
    return Status::ParseError(fmt::format("line {}, column {}: unterminated quoted field",
                                          rec.line, rec.fields.size() + 1));
  }
  if (field_started || !rec.fields.empty()) {
    end_field();
    end_record();
  }
  return out;
}

// ---------------------------------------------------------------- rows

NotedSettings ReadNotes(std::string_view notes) {
  const std::string text = AsciiLower(notes);
  // True when `key` occurs in the notes not directly negated ("no ...", "not ...", "without ...").
  auto states = [&](std::string_view key) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      size_t end = at;
      while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '(')) --end;
      size_t begin = end;
      while (begin > 0 && std::isalpha(static_cast<unsigned char>(text[begin - 1]))) --begin;
      const std::string_view word = std::string_view(text).substr(begin, end - begin);
      if (word != "no" && word != "not" && word != "without") return true;
    }
    return false;
  };
  NotedSettings n;
  if (states("two-batch overlap") || states("two-batch-overlap")) n.overlap = "tbo";
  else if (states("single-batch overlap") || states("single-batch-overlap")) n.overlap = "sbo";
  n.adp_balance = states("enable_balance");
  n.fp8_kv = states("fp8 flashmla");
  n.fp8_attention = n.fp8_kv || states("fp8 attention");
  n.mtp_on = states("mtp on");
  // Request-length distribution: "random-range-ratio <r>" or "uniform in [<r>x".
  for (const std::string_view key : {std::string_view("random-range-ratio "),
                                     std::string_view("uniform in [")}) {
    const size_t at = text.find(key);
    if (at == std::string::npos) continue;
    size_t end = at + key.size();
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
      ++end;
    const std::optional<double> r = ParseFinite(text.substr(at + key.size(), end - at - key.size()));
    if (r && *r > 0 && *r < 1) {
      n.length_ratio = *r;
      break;
    }
  }
  // SGLang's receive interval: "scheduler-recv-interval <n>" (with or without the dashes of
  // the flag, "=" or a space before the number).
  for (size_t at = text.find("scheduler-recv-interval"); at != std::string::npos;
       at = text.find("scheduler-recv-interval", at + 1)) {
    size_t b = at + std::string_view("scheduler-recv-interval").size();
    if (b < text.size() && (text[b] == ' ' || text[b] == '=')) ++b;
    size_t e = b;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e])) && e - b < 7) ++e;
    if (e > b) {
      n.recv_interval = std::max(1, std::stoi(text.substr(b, e - b)));
      break;
    }
  }
  // "num prompts = K x concurrency" / "num-prompts N": the client's prompts. After the key, an
  // optional "=" or ":" and spaces, a number, then "x concurrency" (per client) or nothing more
  // of a number (the total).
  for (const std::string_view key : {std::string_view("num prompts"),
                                     std::string_view("num-prompts"),
                                     std::string_view("num_prompts")}) {
    const size_t at = text.find(key);
    if (at == std::string::npos) continue;
    size_t b = at + key.size();
    while (b < text.size() && (text[b] == ' ' || text[b] == '=' || text[b] == ':')) ++b;
    size_t e = b;
    int64_t v = 0;
    while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e])) && e - b < 9)
      v = v * 10 + (text[e++] - '0');
    if (e == b || v < 1 || (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) ||
                                                 text[e] == '.')))
      continue;
    size_t k = e;
    while (k < text.size() && text[k] == ' ') ++k;
    const std::string_view rest = std::string_view(text).substr(k);
    if (rest.rfind("x concurrency", 0) == 0 || rest.rfind("x the concurrency", 0) == 0) {
      if (v <= 1000) n.prompts_per_client = static_cast<int>(v);
    } else {
      n.num_prompts = v;
    }
    break;
  }
  // "<N> requests": the number directly before the word (digits and thousands commas).
  for (size_t at = text.find(" requests"); at != std::string::npos;
       at = text.find(" requests", at + 1)) {
    size_t begin = at;
    while (begin > 0 && (std::isdigit(static_cast<unsigned char>(text[begin - 1])) ||
                         text[begin - 1] == ','))
      --begin;
    int64_t v = 0;
    bool digits = false;
    for (size_t i = begin; i < at && v <= kMaxRowGpus * int64_t{1024}; ++i) {
      if (text[i] == ',') continue;
      v = v * 10 + (text[i] - '0');
      digits = true;
    }
    const bool word_start = begin == 0 || !std::isalnum(static_cast<unsigned char>(text[begin - 1]));
    if (digits && word_start && v > 0 && v <= kMaxRowGpus * int64_t{1024}) {
      n.requests = v;
      break;
    }
  }
  return n;
}

std::string NotedSettings::Text() const {
  std::vector<std::string> parts;
  if (!overlap.empty()) parts.push_back(overlap);
  if (adp_balance) parts.emplace_back("adp-balance");
  if (fp8_attention) parts.emplace_back("attn=fp8");
  if (fp8_kv) parts.emplace_back("kv=fp8");
  if (requests > 0) parts.push_back(fmt::format("requests={}", requests));
  if (length_ratio < 1) parts.push_back(fmt::format("lengths={}-1.0x", length_ratio));
  if (mtp_on) parts.emplace_back("mtp-on");
  if (recv_interval > 1) parts.push_back(fmt::format("recv-interval={}", recv_interval));
  if (prompts_per_client > 0) parts.push_back(fmt::format("prompts={}x", prompts_per_client));
  if (num_prompts > 0) parts.push_back(fmt::format("prompts={}", num_prompts));
  std::string s;
  for (const std::string& x : parts) s += s.empty() ? x : " " + x;
  return s;
}

StatusOr<std::vector<Measurement>> ParseMeasurements(std::string_view text,
                                                     std::string_view name) {
  StatusOr<std::vector<CsvRecord>> recs = ParseCsv(text);
  if (!recs.ok()) return Status::ParseError(fmt::format("{}:{}", name, recs.status().message()));
  if (recs->empty()) return Status::ParseError(fmt::format("{}:1: empty file (no header)", name));
  const CsvRecord& header = recs->front();
  std::map<std::string, int> col;
  for (size_t i = 0; i < header.fields.size(); ++i) {
    const std::string key = AsciiLower(Trim(header.fields[i]));
    if (key.empty()) continue;
    if (col.count(key))
      return Status::ParseError(fmt::format("{}:{}: column '{}' appears twice in the header", name,
                                            header.line, key));
    col[key] = static_cast<int>(i);
  }
  for (const char* req : {"model_config", "gpu", "mode", "metric", "value"}) {
    if (!col.count(req))
      return Status::ParseError(
          fmt::format("{}:{}: column '{}': missing from the header", name, header.line, req));
  }
  std::vector<Measurement> rows;
  for (size_t r = 1; r < recs->size(); ++r) {
    const CsvRecord& rec = (*recs)[r];
    if (rec.fields.size() != header.fields.size()) {
      return Status::ParseError(fmt::format("{}:{}: expected {} fields like the header, got {}",
                                            name, rec.line, header.fields.size(),
                                            rec.fields.size()));
    }
    auto cell = [&](const char* c) -> std::string {
      auto it = col.find(c);
      return it == col.end() ? std::string() : std::string(Trim(rec.fields[it->second]));
    };
    auto bad = [&](const char* c, const std::string& want, const std::string& got) {
      return Status::ParseError(
          fmt::format("{}:{}: column '{}': expected {}, got '{}'", name, rec.line, c, want, got));
    };
    // Number cell: "" -> *out unchanged; otherwise finite and in [min, max].
    auto number = [&](const char* c, double min, double max, double* out) -> Status {
      const std::string v = cell(c);
      if (v.empty()) return Status::Ok();
      const std::optional<double> d = ParseFinite(v);
      if (!d || *d < min || *d > max)
        return bad(c, fmt::format("a number in [{}, {}]", min, max), v);
      *out = *d;
      return Status::Ok();
    };
    // Integer cell: "" -> *out unchanged; otherwise in [min, max]. Accepts "8.0" style integers
    // written by spreadsheets.
    auto integer = [&](const char* c, int64_t min, int64_t max, int64_t* out) -> Status {
      const std::string v = cell(c);
      if (v.empty()) return Status::Ok();
      const std::string want = min > 0 ? fmt::format("a positive integer <= {}", max)
                                       : fmt::format("a non-negative integer <= {}", max);
      size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(v, &used);
      } catch (...) {
        used = 0;
      }
      if (used != v.size()) {
        const std::optional<double> d = ParseFinite(v);
        if (!d || *d != std::floor(*d) || std::fabs(*d) > 1e15) return bad(c, want, v);
        x = static_cast<long long>(*d);
      }
      if (x < min || x > max) return bad(c, want, v);
      *out = x;
      return Status::Ok();
    };
    Measurement m;
    m.line = rec.line;
    m.id = cell("id");
    if (m.id.empty()) m.id = fmt::format("line{}", rec.line);
    m.source = cell("source");
    m.engine = cell("engine");
    m.gpu = cell("gpu");
    m.model_config = cell("model_config");
    m.weight_dtype = cell("weight_dtype");
    m.kv_dtype = cell("kv_dtype");
    m.mode = AsciiLower(cell("mode"));
    m.metric = AsciiLower(cell("metric"));
    // Spellings of the metrics: the mean is the plain name ("mean_tpot_ms" -> "tpot_ms"), a
    // median the 50th percentile ("median_ttft_ms" -> "p50_ttft_ms"), and the benchmark
    // clients' own result keys the format's (kMetricAliases: "p99_e2el_ms" -> "p99_e2e_ms").
    if (m.metric.rfind("mean_", 0) == 0) m.metric = m.metric.substr(5);
    if (m.metric.rfind("median_", 0) == 0) m.metric = "p50_" + m.metric.substr(7);
    for (const auto& [alias, name] : kMetricAliases) {
      if (m.metric == alias || EndsWith(m.metric, "_" + std::string(alias))) {
        m.metric.replace(m.metric.size() - alias.size(), alias.size(), name);
        break;
      }
    }
    m.notes = cell("notes");
    m.noted = ReadNotes(m.notes);
    m.overlap = AsciiLower(cell("overlap"));
    if (!m.overlap.empty() && m.overlap != "none" && m.overlap != "tbo" && m.overlap != "sbo")
      return bad("overlap", "none, tbo or sbo", m.overlap);
    // Degrees, replicas and GPU counts are bounded by kMaxRowGpus so that their products (checked
    // again when predicting) cannot overflow; lengths and batches by what an int64 token count
    // and an int batch hold.
    constexpr int64_t kG = kMaxRowGpus;
    constexpr int64_t kLen = int64_t{1} << 40;
    constexpr int64_t kBatch = std::numeric_limits<int>::max();
    const std::tuple<const char*, int64_t, int64_t, int64_t*> ints[] = {
        {"gpus", 1, kG, &m.gpus},
        {"tp", 1, kG, &m.tp},
        {"pp", 1, kG, &m.pp},
        {"dp", 1, kG, &m.dp},
        {"ep", 1, kG, &m.ep},
        {"isl", 1, kLen, &m.isl},
        {"osl", 1, kLen, &m.osl},
        {"context", 1, kLen, &m.context},
        {"batch", 1, kBatch, &m.batch},
        {"replicas", 1, kG, &m.replicas},
        {"expert_slots", 1, kG, &m.expert_slots},
        {"mtp", 0, kMaxMtpTokens, &m.mtp},
        {"max_batch", 1, kBatch, &m.max_batch},
        {"max_num_tokens", 1, kBatch, &m.max_num_tokens},
        {"concurrency", 1, kBatch, &m.concurrency},
        {"prefill_gpus", 1, kG, &m.prefill.gpus},
        {"prefill_tp", 1, kG, &m.prefill.tp},
        {"prefill_dp", 1, kG, &m.prefill.dp},
        {"prefill_ep", 1, kG, &m.prefill.ep},
        {"decode_gpus", 1, kG, &m.decode.gpus},
        {"decode_tp", 1, kG, &m.decode.tp},
        {"decode_dp", 1, kG, &m.decode.dp},
        {"decode_ep", 1, kG, &m.decode.ep},
    };
    for (const auto& [c, min, max, dst] : ints) {
      Status s = integer(c, min, max, dst);
      if (!s.ok()) return s;
    }
    // mtp_accept counts the verified token: in [1, mtp + 1] (checked when predicting, since mtp
    // may be stated in another column); here only a plausible range.
    m.layout_stated = !(cell("tp").empty() && cell("dp").empty() && cell("ep").empty());
    m.mtp_stated = !cell("mtp").empty();
    Status sa = number("mtp_accept", 1.0, kMaxMtpTokens + 1.0, &m.mtp_accept);
    if (!sa.ok()) return sa;
    const std::string v = cell("value");
    const std::optional<double> value = ParseFinite(v);
    if (!value || *value <= 0) return bad("value", "a positive number", v);
    m.value = *value;
    rows.push_back(std::move(m));
  }
  return rows;
}

std::string EngineFamily(std::string_view engine) { return l2s::EngineFamily(engine); }

std::string GpuOfLabel(std::string_view label) {
  const std::string gpu = AsciiLower(label);
  if (GpuPreset(gpu).ok()) return gpu;
  for (size_t i = 0; i < gpu.size();) {
    size_t n = i;
    while (n < gpu.size() && std::isalnum(static_cast<unsigned char>(gpu[n]))) ++n;
    if (n > i && GpuPreset(gpu.substr(i, n - i)).ok()) return gpu.substr(i, n - i);
    i = n + 1;
  }
  return gpu;
}

std::string Regime(const Measurement& m) {
  if (m.mode == "disagg") return "disagg";
  int64_t dp = m.dp;
  if (dp == 0) {
    const int64_t per = std::max<int64_t>(1, m.replicas) * m.tp * m.pp;  // each <= 2^24: no overflow
    dp = (m.gpus > 0 && per > 0 && m.gpus % per == 0) ? m.gpus / per : 1;
  }
  if (dp > 1) return m.ep > 1 ? "attention-dp+ep" : "attention-dp";
  return m.ep > 1 ? "tp+ep" : "tp-only";
}

}  // namespace l2s::validate
