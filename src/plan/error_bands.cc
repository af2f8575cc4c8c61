#include "plan/error_bands.h"

#include <fmt/format.h>

#include "sim/kernels.h"

namespace l2s::plan {
namespace {

struct Row {
  const char* kind;
  const char* key;
  int rows;
  double median;
  double within;
};
constexpr Row kBands[] = {
#include "plan/error_bands_data.inc"
};
constexpr int kPpRows = L2S_PP_ROWS;

}  // namespace

std::optional<ErrorBand> FindErrorBand(const std::string& kind, const std::string& key) {
  for (const Row& r : kBands)
    if (kind == r.kind && key == r.key) return ErrorBand{r.kind, r.key, r.rows, r.median, r.within};
  return std::nullopt;
}

std::string RegimeOf(const ModelSpec& m, const Strategy& s, bool disaggregated) {
  if (disaggregated) return "disagg";
  const bool moe = m.num_experts > 0;
  if (moe && s.dp > 1) return s.ep > 1 ? "attention-dp+ep" : "attention-dp";
  return s.ep > 1 ? "tp+ep" : "tp-only";
}

Uncertainty UncertaintyOf(const Problem& p, const Strategy& s, bool disaggregated, int pp_used) {
  Uncertainty u;
  u.calibration = CalibrationNote(p.cluster.gpu);
  u.gpu = FindErrorBand("gpu", p.cluster.gpu.name);
  u.regime = RegimeOf(p.model, s, disaggregated);
  u.regime_band = FindErrorBand("regime", u.regime);
  if (pp_used > 1)
    u.unmeasured.push_back(
        kPpRows == 0
            ? fmt::format("pipeline parallelism (pp={}): no measured row in ../shared backs it; "
                          "its schedule is modelled (docs/dev/COST_MODEL.md), not validated",
                          pp_used)
            : fmt::format("pipeline parallelism (pp={}): {} measured rows", pp_used, kPpRows));
  if (!u.gpu)
    u.unmeasured.push_back(fmt::format("{}: no measured deployment in ../shared", p.cluster.gpu.name));
  if (s.mtp > 0 && p.model.has_draft_model())
    u.unmeasured.push_back(fmt::format(
        "speculation with the draft model {} (mtp={}): no measured row in ../shared; priced as "
        "an EAGLE-3 draft, accepting {}",
        p.model.draft_model, s.mtp,
        p.workload.mtp_accept > 0 ? fmt::format("the stated {:g} tokens per step",
                                                p.workload.mtp_accept)
                                  : std::string("as DeepSeek's MTP does (--mtp-accept states "
                                                "your draft's)")));
  if (p.model.vision_tower)
    u.unmodelled.push_back(
        "the checkpoint's vision / audio tower: the plan prices the language model on text "
        "tokens (count image tokens in the prompt length)");
  return u;
}

std::vector<std::string> UncertaintyLines(const Uncertainty& u) {
  std::vector<std::string> out;
  out.push_back("calibration  " + u.calibration);
  auto band = [](const ErrorBand& b) {
    return fmt::format("{} rows, median |error| {:.1f}%, {:.0f}% within 25%", b.rows,
                       b.median_abs_pct, 100 * b.share_within_25pct);
  };
  std::string m = "measured     ";
  m += u.gpu ? fmt::format("{}: {}", u.gpu->key, band(*u.gpu)) : "this GPU: none";
  m += u.regime_band ? fmt::format("; regime {}: {}", u.regime, band(*u.regime_band))
                     : fmt::format("; regime {}: none", u.regime);
  out.push_back(m + " (throughput and TPOT rows of ../shared, l2s validate)");
  for (const std::string& s : u.unmeasured) out.push_back("unmeasured   " + s);
  for (const std::string& s : u.unmodelled) out.push_back("unmodelled   " + s);
  return out;
}

}  // namespace l2s::plan
