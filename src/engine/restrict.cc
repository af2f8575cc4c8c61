#include "engine/restrict.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace l2s::engine {
namespace {

bool HasDenseFfn(const ModelSpec& m) { return ModelHasOp(m, Op::kDenseFfn1); }

// The group an operator's dim splits over: the attention-TP group, or the expert-TP group for
// the routed expert FFNs. On a group of one GPU every dim is the same computation.
int GroupOf(Op op, const Strategy& s) {
  return (op == Op::kMoeFfn1 || op == Op::kMoeFfn2) ? s.etp() : s.tp;
}

// The degree rules of the table that apply to model m.
// Whether ep must be 1 or the stage at attention-DP degree dp.
bool EpRule(const Capabilities& c, const ModelSpec& m, int dp) {
  if (c.id == EngineId::kIdeal || !m.is_moe()) return false;
  return c.expert_span == ExpertSpan::kOneOrStage ||
         (c.expert_span == ExpertSpan::kOneOrStageWithDp && dp > 1);
}
bool TpRule(const Capabilities& c, const ModelSpec& m) {
  if (c.id == EngineId::kIdeal || !m.is_moe()) return false;
  return c.attention_split == AttentionSplit::kTpOrDp ||
         (c.attention_split == AttentionSplit::kDpOnlyWithDenseFfn && HasDenseFfn(m));
}
bool OverlapOk(const Capabilities& c, Overlap o) { return c.overlap[static_cast<int>(o)]; }

std::string Degrees(const Strategy& s) {
  return fmt::format("pp={},tp={},dp={},ep={}", s.pp, s.tp, s.dp, s.ep);
}

// "it can run A or B instead" over the structurally valid degree repairs (an ep the engine
// cannot span at a repair's dp becomes 1 or the stage).
std::string RepairWords(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                        const std::vector<std::pair<int, int>>& tp_dp, const std::vector<int>& eps) {
  std::string list;
  const int G = s.tp * s.dp;
  for (auto [tp, dp] : tp_dp) {
    std::vector<int> at_dp;  // eps, each the engine cannot span at dp replaced by 1 and G
    for (int ep : eps)
      for (int e : EpRule(c, m, dp) && ep != 1 && ep != G ? std::vector<int>{1, G}
                                                           : std::vector<int>{ep})
        if (std::find(at_dp.begin(), at_dp.end(), e) == at_dp.end()) at_dp.push_back(e);
    for (int ep : at_dp) {
      Strategy t = s;
      t.tp = tp;
      t.dp = dp;
      t.ep = ep;
      if (CheckStrategy(m, s.gpus(), t).ok()) list += (list.empty() ? "" : " or ") + Degrees(t);
    }
  }
  if (list.empty()) return "no repair of the degrees is valid for this model";
  return "it can run " + list + " instead";
}

}  // namespace

std::vector<Violation> FindViolations(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                                      Role role) {
  std::vector<Violation> out;
  if (c.id == EngineId::kIdeal) return out;
  const std::string_view E = c.title;
  const int G = s.tp * s.dp;
  auto add = [&](Violation::Kind k, std::string text) {
    Violation v;
    v.kind = k;
    v.text = std::move(text);
    out.push_back(std::move(v));
  };
  if (!c.per_operator_dims) {
    const std::array<Dim, kNumOps> meg = MegatronDims();
    for (int i = 0; i < kNumOps; ++i) {
      const Op op = static_cast<Op>(i);
      if (!ModelHasOp(m, op) || s.dims[i] == meg[i] || GroupOf(op, s) <= 1) continue;
      Violation v;
      v.kind = Violation::Kind::kDim;
      v.op = op;
      v.runs = meg[i];
      v.text = fmt::format("{}={}: {} implements only Megatron's layout for it; it runs {}={} instead",
                           OpName(op), DimName(s.dims[i]), E, OpName(op), DimName(meg[i]));
      out.push_back(std::move(v));
    }
  }
  if (!c.sequence_parallel && s.sp && s.tp > 1)
    add(Violation::Kind::kSp,
        fmt::format("sp=on (residual stream split on tokens over the tp group): {} has no "
                    "sequence-parallel residual stream; it runs sp=off (replicated residual stream)",
                    E));
  if (!c.mtp && s.mtp > 0)
    add(Violation::Kind::kMtp,
        fmt::format("mtp={} (speculative tokens per step): {}'s inference has no MTP speculative "
                    "decoding; it runs mtp=0",
                    s.mtp, E));
  else if (!c.mtp_with_pp && s.mtp > 0 && s.pp > 1)
    add(Violation::Kind::kMtp,
        fmt::format("mtp={} with pp={}: {} runs no speculative decoding over pipeline stages; it "
                    "runs pp={} with mtp=0, or mtp={} without pipeline stages",
                    s.mtp, s.pp, E, s.pp, s.mtp));
  if (s.slots > 0 && !c.expert_slots)
    add(Violation::Kind::kSlots,
        fmt::format("slots={} (redundant experts, EPLB placement): {} has no redundant expert "
                    "slots; it runs one slot per expert",
                    s.slots, E));
  else if (s.slots > 0 && s.ep <= 1)
    add(Violation::Kind::kSlots,
        fmt::format("slots={} with ep=1: {} places redundant experts on expert-parallel ranks "
                    "only; it runs one slot per expert",
                    s.slots, E));
  if (!OverlapOk(c, s.overlap))
    add(Violation::Kind::kOverlap,
        fmt::format("overlap={} ({}): {} cannot overlap the MoE all-to-all this way; it runs "
                    "overlap=none",
                    OverlapName(s.overlap),
                    s.overlap == Overlap::kTbo ? "two-batch overlap" : "single-batch overlap", E));
  if (c.tbo_needs_dp && s.overlap == Overlap::kTbo && s.dp <= 1 && OverlapOk(c, s.overlap))
    add(Violation::Kind::kOverlap,
        fmt::format("overlap=tbo with dp=1: {}'s two-batch overlap runs with data-parallel "
                    "attention only (dp > 1); it runs overlap=none",
                    E));
  if (EpRule(c, m, s.dp) && s.ep != 1 && s.ep != G) {
    const std::string how =
        c.expert_span == ExpertSpan::kOneOrStage
            ? std::string("(--enable-expert-parallel)")
            : fmt::format("with data-parallel attention (dp={}: its all-to-all, "
                          "--moe-a2a-backend, sets --ep-size to --tp-size)",
                          s.dp);
    add(Violation::Kind::kExpertSpan,
        fmt::format("ep={} (expert-TP {}): {}'s expert parallelism spans all tp*dp = {} GPUs of a "
                    "stage {} or is off (experts tensor-parallel over the {} GPUs); {}",
                    s.ep, s.etp(), E, G, how, G, RepairWords(c, m, s, {{s.tp, s.dp}}, {1, G})));
  }
  if (TpRule(c, m) && s.dp > 1 && s.tp > 1) {
    const std::string why =
        c.attention_split == AttentionSplit::kTpOrDp
            ? fmt::format("{} runs attention either tensor-parallel over all {} GPUs of a stage or "
                          "data-parallel over them (attention DP)",
                          E, G)
            : fmt::format("with data-parallel attention {} runs the dense FFN layers of this model "
                          "over all {} GPUs or unsharded on each GPU (--moe-dense-tp-size 1), not "
                          "over an attention-TP group of {}",
                          E, G, s.tp);
    add(Violation::Kind::kAttentionSplit,
        fmt::format("tp={} with dp={}: {}; {}", s.tp, s.dp, why,
                    RepairWords(c, m, s, {{1, G}, {G, 1}}, {s.ep})));
  }
  if (!c.pp_with_dp && s.pp > 1 && s.dp > 1)
    add(Violation::Kind::kStagesWithDp,
        fmt::format("pp={} with dp={}: {} runs pipeline stages only without data parallelism "
                    "(one engine core per stage); {}",
                    s.pp, s.dp, E, RepairWords(c, m, s, {{G, 1}}, {s.ep})));
  if (!StagesAllowed(c, role) && s.pp > 1) {
    const char* side = role == Role::kPrefillPool ? "prefill" : "decode";
    add(Violation::Kind::kPoolStages,
        fmt::format("pp={} in a disaggregated {} pool: {} runs the {} servers of a prefill/"
                    "decode pair without pipeline stages (docs/PLAN.md \"Engine rules\"); it runs "
                    "pp=1 on the same {} GPUs (tp or dp {} times larger)",
                    s.pp, side, E, side, s.gpus(), s.pp));
  }
  return out;
}

std::vector<std::string> Violations(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                                    Role role) {
  std::vector<std::string> out;
  for (Violation& v : FindViolations(c, m, s, role)) out.push_back(std::move(v.text));
  return out;
}

std::vector<Strategy> Repairs(const Capabilities& c, const ModelSpec& m, const Strategy& s,
                              Role role) {
  if (c.id != EngineId::kIdeal && !StagesAllowed(c, role) && s.pp > 1) {
    // The stages folded into tp, then into dp, each then repaired as a server.
    std::vector<Strategy> out;
    for (bool into_tp : {true, false}) {
      Strategy t = s;
      t.pp = 1;
      (into_tp ? t.tp : t.dp) *= s.pp;
      for (const Strategy& r : Repairs(c, m, t))
        if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
    return out;
  }
  if (c.id == EngineId::kIdeal) {
    if (CheckStrategy(m, s.gpus(), s).ok()) return {Canonical(m, s)};
    return {};
  }
  Strategy base = s;
  if (!c.per_operator_dims) {
    base.dims = MegatronDims();
    ClearAbsentOps(m, &base);
  }
  if (!c.sequence_parallel) base.sp = false;
  if (!c.mtp || (!c.mtp_with_pp && s.pp > 1)) base.mtp = 0;
  if (!c.expert_slots) base.slots = 0;
  if (!OverlapOk(c, base.overlap)) base.overlap = Overlap::kNone;
  const int G = s.tp * s.dp;
  std::vector<std::pair<int, int>> tp_dp = {{s.tp, s.dp}};
  if (TpRule(c, m) && s.dp > 1 && s.tp > 1) tp_dp = {{1, G}, {G, 1}};
  if (!c.pp_with_dp && s.pp > 1 && s.dp > 1) tp_dp = {{G, 1}};
  std::vector<Strategy> out;
  for (auto [tp, dp] : tp_dp) {
    std::vector<int> eps = {s.ep};
    if (EpRule(c, m, dp) && s.ep != 1 && s.ep != G) eps = {1, G};
    for (int ep : eps) {
      Strategy t = base;
      t.tp = tp;
      t.dp = dp;
      t.ep = ep;
      if (t.tp <= 1) t.sp = false;
      if (c.tbo_needs_dp && t.overlap == Overlap::kTbo && t.dp <= 1) t.overlap = Overlap::kNone;
      if (t.ep <= 1) {
        t.overlap = Overlap::kNone;  // overlap hides the expert all-to-all only
        t.slots = 0;                 // redundant slots live on expert-parallel ranks
      }
      if (!CheckStrategy(m, s.gpus(), t).ok()) continue;
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  }
  return out;
}

StatusOr<SpaceOptions> RestrictOptions(const Capabilities& c, const ModelSpec& m,
                                       SpaceOptions opt, Role role) {
  opt.restriction = EngineRestriction{};
  if (c.id == EngineId::kIdeal) return opt;
  EngineRestriction& r = opt.restriction;
  r.active = true;
  r.engine = std::string(c.title);
  r.megatron_dims_only = !c.per_operator_dims;
  if (!c.sequence_parallel) opt.search_sp = false;
  if (!c.mtp) {
    if (std::find(opt.mtp.begin(), opt.mtp.end(), 0) == opt.mtp.end())
      return Status::InvalidArgument(fmt::format(
          "{} has no speculative decoding: plan it with mtp 0 (--mtp 0, or no --mtp), or "
          "another --engine",
          c.title));
    opt.mtp = {0};
  }
  if (!c.expert_slots) {
    if (!opt.search_slots && opt.fixed_slots != 0)
      return Status::InvalidArgument(
          fmt::format("slots={}: {} has no redundant expert slots", opt.fixed_slots, c.title));
    opt.search_slots = false;
    opt.fixed_slots = 0;
  }
  r.slots_need_ep = true;
  r.overlaps = c.overlap;
  if (!opt.search_overlap && !OverlapOk(c, opt.fixed_overlap))
    return Status::InvalidArgument(
        fmt::format("overlap={}: {} has no such overlap", OverlapName(opt.fixed_overlap), c.title));
  r.tbo_needs_dp = c.tbo_needs_dp;
  r.mtp_needs_one_stage = !c.mtp_with_pp;
  r.stages_need_one_dp = !c.pp_with_dp;
  r.one_stage = !StagesAllowed(c, role);
  r.ep_one_or_stage = m.is_moe() && c.expert_span == ExpertSpan::kOneOrStage;
  r.ep_one_or_stage_with_dp = m.is_moe() && c.expert_span == ExpertSpan::kOneOrStageWithDp;
  r.tp_one_or_stage = TpRule(c, m);
  return opt;
}

StatusOr<StrategySpace> RestrictedSpace(const Capabilities& c, const ModelSpec& m, int num_gpus,
                                        const SpaceOptions& opt) {
  StatusOr<SpaceOptions> r = RestrictOptions(c, m, opt);
  if (!r.ok()) return r.status();
  return StrategySpace::Make(m, num_gpus, *r);
}

StatusOr<StrategySpace> RestrictedSpace(const Capabilities& c, const StrategySpace& space) {
  return RestrictedSpace(c, space.model(), space.num_gpus(), space.options());
}

}  // namespace l2s::engine
