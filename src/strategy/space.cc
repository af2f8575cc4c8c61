#include "strategy/space.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace l2s {
namespace {

// Divisors of n (n >= 1), ascending.
std::vector<int> Divisors(int n) {
  std::vector<int> lo, hi;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    lo.push_back(static_cast<int>(i));
    if (i * i != n) hi.push_back(static_cast<int>(n / i));
  }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

constexpr int kNumDimOptions = 3;  // dim0, dim1, none

bool HasMoeLayers(const ModelSpec& m) { return m.num_moe_layers() > 0; }

}  // namespace

int RedundantSlotsFor(int experts, int ep) {
  if (experts <= 0 || ep <= 0) return 0;
  return static_cast<int>((static_cast<int64_t>(experts) + ep) / ep * ep);
}

std::vector<int> SlotOptions(const ModelSpec& m) {
  std::vector<int> out = {0};
  // Offered for fine-grained MoE (>= 64 routed experts: DeepSeek, Kimi, Qwen3, Llama 4,
  // gpt-oss), the models deployed with EPLB; coarse MoE (Mixtral's 8, the paper's GPT-MoE 16)
  // keeps one slot per expert. DeepSeek's and SGLang's deployments add E/8 redundant experts
  // (256 + 32); E/4 is the next step.
  if (!HasMoeLayers(m) || m.num_experts < 64) return out;
  for (int r : {m.num_experts / 8, m.num_experts / 4}) out.push_back(m.num_experts + r);
  return out;
}

Status CheckMtp(const ModelSpec& m, int mtp) {
  if (mtp < 0 || mtp > kMaxMtpTokens) {
    return Status::Invalid(
        fmt::format("mtp={} is out of range (0..{} speculative tokens per step)", mtp, kMaxMtpTokens));
  }
  if (mtp > 0 && !m.can_speculate()) {
    return Status::Invalid(fmt::format(
        "mtp={} but model '{}' has no MTP (next-token-prediction) layers to draft with (a draft "
        "model, --draft-model, drafts for it)",
        mtp, m.name));
  }
  return Status::Ok();
}

bool ModelHasOp(const ModelSpec& m, Op op) {
  switch (op) {
    case Op::kEmbed:
    case Op::kAttnQkv:
    case Op::kAttnCore:
    case Op::kAttnOut:
    case Op::kLmHead:
      return true;
    case Op::kMoeRouter:
    case Op::kMoeFfn1:
    case Op::kMoeFfn2:
      return HasMoeLayers(m);
    case Op::kSharedFfn1:
    case Op::kSharedFfn2:
      return HasMoeLayers(m) && m.num_shared_experts > 0;
    case Op::kDenseFfn1:
    case Op::kDenseFfn2:
      return m.num_dense_layers() > 0;
  }
  return false;
}

Status CheckStrategy(const ModelSpec& m, int num_gpus, const Strategy& s) {
  if (num_gpus <= 0) {
    return Status::InvalidArgument(fmt::format("the cluster must have at least one GPU, got {}",
                                               num_gpus));
  }
  if (s.pp <= 0 || s.tp <= 0 || s.dp <= 0 || s.ep <= 0) {
    return Status::Invalid(fmt::format(
        "parallel degrees must be positive, got pp={}, tp={}, dp={}, ep={}", s.pp, s.tp, s.dp,
        s.ep));
  }
  const int64_t product = static_cast<int64_t>(s.pp) * s.tp * s.dp;
  if (product != num_gpus) {
    return Status::Invalid(
        fmt::format("pp*tp*dp = {} but the cluster has {} GPUs", product, num_gpus));
  }
  if (s.pp > m.num_layers) {
    return Status::Invalid(fmt::format(
        "pp={} exceeds the model's {} layers (each stage needs at least one)", s.pp,
        m.num_layers));
  }
  if (m.num_heads <= 0 || m.num_heads % s.tp != 0) {
    return Status::Invalid(
        fmt::format("tp={} does not divide the {} attention heads", s.tp, m.num_heads));
  }
  if (s.ep > 1 && !HasMoeLayers(m)) {
    return Status::Invalid(
        fmt::format("ep={} on a dense model (it has no MoE layers); ep must be 1", s.ep));
  }
  const int gpus_per_stage = s.tp * s.dp;
  if (gpus_per_stage % s.ep != 0) {
    return Status::Invalid(fmt::format("ep={} does not divide the {} GPUs per stage (tp*dp)",
                                       s.ep, gpus_per_stage));
  }
  if (s.slots < 0) {
    return Status::Invalid(fmt::format("slots={} is negative (0 means one per expert)", s.slots));
  }
  if (s.slots != 0 && !HasMoeLayers(m)) {
    return Status::Invalid(fmt::format(
        "slots={} on a dense model (it has no routed experts); leave slots unset", s.slots));
  }
  if (HasMoeLayers(m) && s.slots != 0 && s.slots < m.num_experts) {
    return Status::Invalid(fmt::format(
        "slots={} is below the {} routed experts (every expert needs at least one slot)",
        s.slots, m.num_experts));
  }
  if (HasMoeLayers(m) && s.slots > 0 && s.slots % s.ep != 0) {
    return Status::Invalid(
        fmt::format("ep={} does not divide the {} expert slots", s.ep, s.slots));
  }
  if (HasMoeLayers(m) && s.slots == 0 && (m.num_experts <= 0 || m.num_experts % s.ep != 0)) {
    return Status::Invalid(fmt::format(
        "ep={} does not divide the {} experts (redundant expert slots, e.g. slots={}, can make "
        "it divide)",
        s.ep, m.num_experts, RedundantSlotsFor(m.num_experts, s.ep)));
  }
  if (s.overlap != Overlap::kNone && (!HasMoeLayers(m) || s.ep <= 1)) {
    return Status::Invalid(fmt::format(
        "overlap={} needs expert parallelism (ep > 1 on a MoE model): it hides the MoE "
        "all-to-all",
        OverlapName(s.overlap)));
  }
  if (s.batch < 0) {
    return Status::Invalid(fmt::format("batch={} is negative (0 means auto)", s.batch));
  }
  if (Status st = CheckMtp(m, s.mtp); !st.ok()) return st;
  for (int i = 0; i < kNumOps; ++i) {
    const int d = static_cast<int>(s.dims[i]);
    if (d < 0 || d >= kNumDimOptions) {
      return Status::Invalid(fmt::format("{} has dim value {}; expected dim0, dim1 or none",
                                         OpName(static_cast<Op>(i)), d));
    }
  }
  return Status::Ok();
}

std::vector<std::string> StrategyNotes(const ModelSpec& m, const Strategy& s) {
  std::vector<std::string> notes;
  if (s.tp > 1 && m.attention == AttentionKind::kMla) {
    notes.push_back(fmt::format(
        "MLA keeps one latent KV vector per token shared by all heads: the latent KV cache is "
        "replicated on each of the {} tp ranks",
        s.tp));
  } else if (s.tp > 1 && m.num_kv_heads > 0 && m.num_kv_heads < s.tp) {
    notes.push_back(fmt::format(
        "tp={} exceeds the {} KV heads: each KV head (and its cache) is replicated on {} GPUs",
        s.tp, m.num_kv_heads, s.tp / m.num_kv_heads));
  }
  if (s.sp && s.tp == 1) notes.push_back("sp=on has no effect with tp=1");
  return notes;
}

void ClearAbsentOps(const ModelSpec& m, Strategy* s) {
  for (int i = 0; i < kNumOps; ++i) {
    if (!ModelHasOp(m, static_cast<Op>(i))) s->dims[i] = Dim::kNone;
  }
}

Strategy Canonical(const ModelSpec& m, const Strategy& s) {
  Strategy c = s;
  const auto megatron = MegatronDims();
  const int etp = s.ep > 0 ? s.tp * s.dp / s.ep : 1;
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    const bool expert = op == Op::kMoeFfn1 || op == Op::kMoeFfn2;
    if ((expert ? etp : s.tp) <= 1) c.dims[i] = megatron[i];
  }
  if (s.tp <= 1) c.sp = false;
  ClearAbsentOps(m, &c);
  return c;
}

StatusOr<StrategySpace> StrategySpace::Make(const ModelSpec& m, int num_gpus,
                                            const SpaceOptions& opt) {
  if (num_gpus <= 0) {
    return Status::InvalidArgument(
        fmt::format("strategy space: GPU count must be positive, got {}", num_gpus));
  }
  if (m.num_layers <= 0 || m.num_heads <= 0) {
    return Status::InvalidArgument(fmt::format(
        "strategy space: model '{}' needs positive num_layers and num_heads (got {} and {})",
        m.name, m.num_layers, m.num_heads));
  }
  if (static_cast<int>(m.layers.size()) != m.num_layers) {
    return Status::InvalidArgument(
        fmt::format("strategy space: model '{}' has num_layers={} but {} layer specs", m.name,
                    m.num_layers, m.layers.size()));
  }
  if (HasMoeLayers(m) && m.num_experts <= 0) {
    return Status::InvalidArgument(fmt::format(
        "strategy space: model '{}' has MoE layers but num_experts={}", m.name, m.num_experts));
  }
  if (opt.search_batch && opt.max_batch < 1) {
    return Status::InvalidArgument(
        fmt::format("strategy space: max_batch must be >= 1, got {}", opt.max_batch));
  }
  if (opt.mtp.empty()) {
    return Status::InvalidArgument("strategy space: the mtp head needs at least one option");
  }
  for (int k : opt.mtp) {
    if (Status st = CheckMtp(m, k); !st.ok())
      return Status::InvalidArgument("strategy space: " + st.message());
  }
  if (!opt.search_batch && opt.fixed_batch < 0) {
    return Status::InvalidArgument(fmt::format(
        "strategy space: fixed_batch must be >= 0 (0 = auto), got {}", opt.fixed_batch));
  }

  const EngineRestriction& r = opt.restriction;
  if (r.active) {
    if (!r.overlaps[static_cast<int>(Overlap::kNone)])
      return Status::InvalidArgument(
          "strategy space: an engine restriction must allow overlap=none");
    if (!opt.search_overlap && !r.overlaps[static_cast<int>(opt.fixed_overlap)])
      return Status::InvalidArgument(fmt::format("strategy space: {} has no overlap={}", r.engine,
                                                 OverlapName(opt.fixed_overlap)));
  }

  StrategySpace sp;
  sp.model_ = &m;
  sp.num_gpus_ = num_gpus;
  sp.search_sp_ = opt.search_sp;
  sp.options_ = opt;
  if (!r.active) sp.options_.restriction = EngineRestriction{};
  if (HasMoeLayers(m)) {
    if (opt.search_slots) {
      sp.slots_ = SlotOptions(m);
    } else {
      if (opt.fixed_slots != 0 && opt.fixed_slots < m.num_experts) {
        return Status::InvalidArgument(fmt::format(
            "strategy space: slots={} is below the {} routed experts", opt.fixed_slots,
            m.num_experts));
      }
      sp.slots_ = {opt.fixed_slots};
    }
    if (opt.search_overlap) {
      sp.overlaps_.clear();
      for (Overlap o : {Overlap::kNone, Overlap::kTbo, Overlap::kSbo})
        if (!r.active || r.overlaps[static_cast<int>(o)])
          sp.overlaps_.push_back(o);
    } else {
      sp.overlaps_ = {opt.fixed_overlap};
    }
  } else {
    sp.slots_ = {0};
    sp.overlaps_ = {Overlap::kNone};
  }
  auto divides_some_slots = [&](int d) {
    for (int slots : sp.slots_)
      if ((slots == 0 ? m.num_experts : slots) % d == 0) return true;
    return false;
  };
  for (int d : Divisors(num_gpus)) {
    if (d <= m.num_layers) sp.pp_.push_back(d);
    if (m.num_heads % d == 0) sp.tp_.push_back(d);
    if (HasMoeLayers(m) ? divides_some_slots(d) : d == 1) sp.ep_.push_back(d);
  }
  if (opt.search_batch) {
    for (int64_t b = 1; b <= opt.max_batch; b *= 2) sp.batch_.push_back(static_cast<int>(b));
  } else {
    sp.batch_.push_back(opt.fixed_batch);
  }
  const std::array<Dim, kNumOps> megatron = MegatronDims();
  for (int i = 0; i < kNumOps; ++i) {
    if (!ModelHasOp(m, static_cast<Op>(i))) {
      sp.dim_options_[i] = {Dim::kNone};
      continue;
    }
    sp.ops_.push_back(static_cast<Op>(i));
    if (r.active && r.megatron_dims_only) sp.dim_options_[i] = {megatron[i]};
    else sp.dim_options_[i] = {Dim::kDim0, Dim::kDim1, Dim::kNone};
  }
  // Completability rests on degree 1 being the first option of pp, tp and ep (1 divides every
  // positive count); see Mask.
  assert(sp.pp_.front() == 1 && sp.tp_.front() == 1 && sp.ep_.front() == 1);

  sp.head_sizes_ = {static_cast<int>(sp.pp_.size()), static_cast<int>(sp.tp_.size()),
                    static_cast<int>(sp.ep_.size()), static_cast<int>(sp.batch_.size()),
                    opt.search_sp ? 2 : 1};
  for (Op op : sp.ops_)
    sp.head_sizes_.push_back(static_cast<int>(sp.dim_options_[static_cast<int>(op)].size()));
  if (HasMoeLayers(m)) {
    sp.slots_head_ = static_cast<int>(sp.head_sizes_.size());
    sp.head_sizes_.push_back(static_cast<int>(sp.slots_.size()));
    sp.overlap_head_ = static_cast<int>(sp.head_sizes_.size());
    sp.head_sizes_.push_back(static_cast<int>(sp.overlaps_.size()));
  }
  sp.mtp_ = m.can_speculate() ? opt.mtp : std::vector<int>{0};
  if (m.can_speculate()) {
    sp.mtp_head_ = static_cast<int>(sp.head_sizes_.size());
    sp.head_sizes_.push_back(static_cast<int>(sp.mtp_.size()));
  }
  return sp;
}

std::string StrategySpace::head_name(int h) const {
  switch (h) {
    case kPp: return "pp";
    case kTp: return "tp";
    case kEp: return "ep";
    case kBatch: return "batch";
    case kSp: return "sp";
    default: break;
  }
  if (h == slots_head_) return "slots";
  if (h == overlap_head_) return "overlap";
  if (h == mtp_head_) return "mtp";
  if (h >= kFirstDim && h < num_heads()) return std::string(OpName(ops_[h - kFirstDim]));
  return "?";
}

std::string StrategySpace::option_name(int h, int i) const {
  if (h < 0 || h >= num_heads() || i < 0 || i >= head_sizes_[h]) return "?";
  switch (h) {
    case kPp: return fmt::format("{}", pp_[i]);
    case kTp: return fmt::format("{}", tp_[i]);
    case kEp: return fmt::format("{}", ep_[i]);
    case kBatch: return batch_[i] == 0 ? std::string("auto") : fmt::format("{}", batch_[i]);
    case kSp: return i == 1 ? "on" : "off";
    default: break;
  }
  if (h == slots_head_) return slots_[i] == 0 ? std::string("experts") : fmt::format("{}", slots_[i]);
  if (h == overlap_head_) return std::string(OverlapName(overlaps_[i]));
  if (h == mtp_head_) return fmt::format("{}", mtp_[i]);
  return std::string(DimName(dim_options(ops_[h - kFirstDim])[i]));
}

Strategy StrategySpace::Decode(std::span<const int> idx) const {
  assert(static_cast<int>(idx.size()) >= num_heads());
  Strategy s;
  s.pp = pp_[idx[kPp]];
  s.tp = tp_[idx[kTp]];
  s.ep = ep_[idx[kEp]];
  s.batch = batch_[idx[kBatch]];
  s.sp = search_sp_ && idx[kSp] == 1;
  // Integer division: when pp*tp does not divide the GPU count the result fails Check (the
  // product no longer equals the GPU count); when pp*tp > GPUs, dp = 0 fails it too.
  s.dp = static_cast<int>(num_gpus_ / (static_cast<int64_t>(s.pp) * s.tp));
  s.dims.fill(Dim::kNone);
  for (size_t i = 0; i < ops_.size(); ++i) {
    s.dims[static_cast<int>(ops_[i])] = dim_options(ops_[i])[idx[kFirstDim + i]];
  }
  s.slots = slots_head_ >= 0 ? slots_[idx[slots_head_]] : slots_.front();
  s.overlap = overlap_head_ >= 0 ? overlaps_[idx[overlap_head_]] : overlaps_.front();
  s.mtp = mtp_head_ >= 0 ? mtp_[idx[mtp_head_]] : mtp_.front();
  return s;
}

bool StrategySpace::Encode(const Strategy& s, std::vector<int>* idx) const {
  idx->assign(num_heads(), 0);
  auto find = [](const std::vector<int>& opts, int v, int* out) {
    for (size_t i = 0; i < opts.size(); ++i) {
      if (opts[i] == v) {
        *out = static_cast<int>(i);
        return true;
      }
    }
    return false;
  };
  if (!find(pp_, s.pp, &(*idx)[kPp]) || !find(tp_, s.tp, &(*idx)[kTp]) ||
      !find(ep_, s.ep, &(*idx)[kEp]) || !find(batch_, s.batch, &(*idx)[kBatch])) {
    return false;
  }
  if (s.sp && !search_sp_) return false;
  (*idx)[kSp] = s.sp ? 1 : 0;
  for (int i = 0; i < kNumOps; ++i) {
    const int d = static_cast<int>(s.dims[i]);
    if (d < 0 || d >= kNumDimOptions) return false;
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    const std::vector<Dim>& opts = dim_options(ops_[i]);
    const auto it = std::find(opts.begin(), opts.end(), s.dim(ops_[i]));
    if (it == opts.end()) return false;
    (*idx)[kFirstDim + i] = static_cast<int>(it - opts.begin());
  }
  if (slots_head_ >= 0 && !find(slots_, s.slots, &(*idx)[slots_head_])) return false;
  if (overlap_head_ >= 0) {
    int found = -1;
    for (size_t i = 0; i < overlaps_.size(); ++i)
      if (overlaps_[i] == s.overlap) found = static_cast<int>(i);
    if (found < 0) return false;
    (*idx)[overlap_head_] = found;
  }
  if (mtp_head_ >= 0 && !find(mtp_, s.mtp, &(*idx)[mtp_head_])) return false;
  // dp is derived and the lacking operators are fixed to none: both are covered by requiring the
  // decoded strategy to be exactly `s`. The engine restriction's degree rules last.
  if (!(Decode(*idx) == s)) return false;
  const int per_stage = s.tp * s.dp;
  return TpAllowed(s.pp, per_stage, s.tp) && EpAllowed(per_stage, s.tp, s.ep) &&
         SlotsAllowed(s.ep, s.slots) && OverlapAllowed(s.dp, s.overlap) && MtpAllowed(s.pp, s.mtp);
}

Status StrategySpace::Check(const Strategy& s) const {
  Status st = CheckStrategy(*model_, num_gpus_, s);
  if (!st.ok()) return st;
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (s.dims[i] != Dim::kNone && !ModelHasOp(*model_, op)) {
      return Status::Invalid(fmt::format(
          "{}={} but the model has no {} operator (it must be none)", OpName(op),
          DimName(s.dims[i]), OpName(op)));
    }
  }
  if (s.sp && !search_sp_) return Status::Invalid("sp=on but this space fixes sp=off");
  bool batch_ok = false;
  for (int b : batch_) batch_ok = batch_ok || b == s.batch;
  if (!batch_ok) {
    const std::string want =
        batch_.size() == 1 ? option_name(kBatch, 0)
                           : fmt::format("a power of two from 1 to {}", batch_.back());
    return Status::Invalid(fmt::format("batch={} is not an option of this space (expected {})",
                                       s.batch == 0 ? "auto" : fmt::format("{}", s.batch), want));
  }
  bool mtp_ok = false;
  for (int k : mtp_) mtp_ok = mtp_ok || k == s.mtp;
  if (!mtp_ok) {
    return Status::Invalid(fmt::format("mtp={} is not an option of this space (options: {})", s.mtp,
                                       fmt::join(mtp_, ", ")));
  }
  if (Status r = CheckRestriction(s); !r.ok()) return r;
  // Degrees: a structurally valid pp divides the GPU count and is <= num_layers, tp divides the
  // GPUs and the heads, ep divides the GPUs and the experts, so they are always among the options.
  std::vector<int> idx;
  if (!Encode(s, &idx)) return Status::Invalid("strategy is not representable in this space");
  return Status::Ok();
}

void StrategySpace::Mask(std::span<const int> prefix, int h, std::span<uint8_t> out) const {
  assert(h >= 0 && h < num_heads());
  assert(static_cast<int>(out.size()) == head_sizes_[h]);
  assert(static_cast<int>(prefix.size()) >= h);
  const int n = static_cast<int>(out.size());
  switch (h) {
    case kTp: {
      // tp must divide the GPUs of one stage so that dp = GPUs/(pp*tp) is whole; then ep = 1
      // always completes the strategy.
      // An engine rule on tp (tp = 1 or dp = 1; dp = 1 with pp > 1) leaves ep = 1 completing it
      // too.
      const int pp = pp_[prefix[kPp]];
      const int per_stage = num_gpus_ / pp;
      for (int i = 0; i < n; ++i)
        out[i] = per_stage % tp_[i] == 0 && TpAllowed(pp, per_stage, tp_[i]) ? 1 : 0;
      return;
    }
    case kEp: {
      // Given pp*tp | GPUs, tp*dp = GPUs/pp; ep must divide it (ep divides the experts or some
      // slot option by construction of the options, so the slots head completes it).
      // An engine rule on ep (ep = 1 or tp*dp) keeps ep = 1 and the slots head completes the
      // rest (slot 0 for ep = 1; with ep > 1 every slot option the engine has is allowed).
      const int per_stage = num_gpus_ / pp_[prefix[kPp]];
      const int tp = tp_[prefix[kTp]];
      for (int i = 0; i < n; ++i)
        out[i] = per_stage % ep_[i] == 0 && EpAllowed(per_stage, tp, ep_[i]) ? 1 : 0;
      return;
    }
    default:
      if (h == slots_head_) {
        const int ep = ep_[prefix[kEp]];
        for (int i = 0; i < n; ++i)
          out[i] = (slots_[i] == 0 ? model_->num_experts : slots_[i]) % ep == 0 &&
                           SlotsAllowed(ep, slots_[i])
                       ? 1
                       : 0;
        return;
      }
      if (h == overlap_head_) {
        const int ep = ep_[prefix[kEp]];
        const int dp = num_gpus_ / (pp_[prefix[kPp]] * tp_[prefix[kTp]]);
        for (int i = 0; i < n; ++i)
          out[i] = (ep > 1 || overlaps_[i] == Overlap::kNone) && OverlapAllowed(dp, overlaps_[i])
                       ? 1
                       : 0;
        return;
      }
      if (h == mtp_head_) {
        const int pp = pp_[prefix[kPp]];
        for (int i = 0; i < n; ++i) out[i] = MtpAllowed(pp, mtp_[i]) ? 1 : 0;
        return;
      }
      if (h == kPp) {
        // Every option divides the GPUs and is <= num_layers, and an allowed tp (tp = 1 unless
        // the engine keeps dp = 1 with pipeline stages: then tp = the stage, when it divides
        // the heads) with ep = 1 completes it; the mtp head then needs one depth the engine runs
        // at this pp (pp = 1 runs every one).
        for (int i = 0; i < n; ++i) {
          const int per_stage = num_gpus_ / pp_[i];
          bool tp_ok = false, mtp_ok = false;
          for (int tp : tp_) tp_ok = tp_ok || (per_stage % tp == 0 && TpAllowed(pp_[i], per_stage, tp));
          for (int k : mtp_) mtp_ok = mtp_ok || MtpAllowed(pp_[i], k);
          out[i] = tp_ok && mtp_ok ? 1 : 0;
        }
        return;
      }
      // batch, sp and every dim head: no structural constraint.
      for (int i = 0; i < n; ++i) out[i] = 1;
      return;
  }
}

double StrategySpace::Size() const {
  double size = 1;
  for (int s : head_sizes_) size *= s;
  return size;
}

double StrategySpace::CountValid() const {
  // Valid (pp, tp, ep) triples: for each pp, tp and ep each divide GPUs/pp (see Mask) and pass
  // the engine restriction's rules. Batch, sp and dims are unconstrained, so each multiplies the
  // count by its head size. With MoE heads, each valid triple counts its valid (slots, overlap)
  // pairs (see Mask), and each pp its allowed mtp depths.
  double degrees = 0;
  for (int pp : pp_) {
    const int per_stage = num_gpus_ / pp;
    int nm = 0;
    for (int k : mtp_) nm += MtpAllowed(pp, k) ? 1 : 0;
    for (int tp : tp_) {
      if (per_stage % tp != 0 || !TpAllowed(pp, per_stage, tp)) continue;
      const int dp = per_stage / tp;
      for (int ep : ep_) {
        if (per_stage % ep != 0 || !EpAllowed(per_stage, tp, ep)) continue;
        double moe = 1;
        if (slots_head_ >= 0) {
          int ns = 0, no = 0;
          for (int slots : slots_)
            ns += (slots == 0 ? model_->num_experts : slots) % ep == 0 && SlotsAllowed(ep, slots) ? 1 : 0;
          for (Overlap o : overlaps_)
            no += (ep > 1 || o == Overlap::kNone) && OverlapAllowed(dp, o) ? 1 : 0;
          moe = static_cast<double>(ns) * no;
        }
        degrees += moe * nm;
      }
    }
  }
  double rest = 1;
  for (int h = kBatch; h < kFirstDim + static_cast<int>(ops_.size()); ++h) rest *= head_sizes_[h];
  // The mtp head's options are counted per pp above (mtp_ is {0} without the head).
  return degrees * rest;
}

bool StrategySpace::TpAllowed(int pp, int per_stage, int tp) const {
  const EngineRestriction& r = options_.restriction;
  if (!r.active) return true;
  if (r.one_stage && pp > 1) return false;
  if (tp == per_stage) return true;  // dp = 1 passes every other rule
  return !(r.stages_need_one_dp && pp > 1) && (!r.tp_one_or_stage || tp == 1);
}

bool StrategySpace::EpAllowed(int per_stage, int tp, int ep) const {
  const EngineRestriction& r = options_.restriction;
  if (!r.active || ep == 1 || ep == per_stage) return true;
  return !r.ep_one_or_stage && !(r.ep_one_or_stage_with_dp && per_stage / tp > 1);
}

bool StrategySpace::SlotsAllowed(int ep, int slots) const {
  const EngineRestriction& r = options_.restriction;
  return !r.active || !r.slots_need_ep || slots == 0 || ep > 1;
}

bool StrategySpace::OverlapAllowed(int dp, Overlap o) const {
  const EngineRestriction& r = options_.restriction;
  return !r.active || !r.tbo_needs_dp || o != Overlap::kTbo || dp > 1;
}

bool StrategySpace::MtpAllowed(int pp, int mtp) const {
  const EngineRestriction& r = options_.restriction;
  return !r.active || !r.mtp_needs_one_stage || mtp == 0 || pp == 1;
}

Status StrategySpace::CheckRestriction(const Strategy& s) const {
  const EngineRestriction& r = options_.restriction;
  if (!r.active) return Status::Ok();
  const std::string& E = r.engine;
  for (int i = 0; i < kNumOps; ++i) {
    const std::vector<Dim>& opts = dim_options_[i];
    if (std::find(opts.begin(), opts.end(), s.dims[i]) == opts.end())
      return Status::Invalid(fmt::format("{}={}: {} runs only {}={} (Megatron's layout)",
                                         OpName(static_cast<Op>(i)), DimName(s.dims[i]), E,
                                         OpName(static_cast<Op>(i)), DimName(opts.front())));
  }
  if (s.sp && !search_sp_) return Status::Invalid(fmt::format("sp=on: {} has no sequence parallelism", E));
  if (std::find(mtp_.begin(), mtp_.end(), s.mtp) == mtp_.end())
    return Status::Invalid(fmt::format("mtp={} is not an option of this space for {} (options: {})",
                                       s.mtp, E, fmt::join(mtp_, ", ")));
  if (std::find(slots_.begin(), slots_.end(), s.slots) == slots_.end())
    return Status::Invalid(fmt::format("slots={} is not an option of this space for {}", s.slots, E));
  if (std::find(overlaps_.begin(), overlaps_.end(), s.overlap) == overlaps_.end())
    return Status::Invalid(fmt::format("overlap={}: {} has no such overlap", OverlapName(s.overlap), E));
  const int per_stage = s.tp * s.dp;
  if (r.one_stage && s.pp > 1)
    return Status::Invalid(fmt::format(
        "pp={}: {} runs a disaggregated pool's servers without pipeline stages (pp = 1)", s.pp, E));
  if (r.stages_need_one_dp && s.pp > 1 && s.dp > 1)
    return Status::Invalid(fmt::format(
        "pp={} with dp={}: {} runs pipeline stages only without data parallelism (dp = 1)", s.pp,
        s.dp, E));
  if (!TpAllowed(s.pp, per_stage, s.tp))
    return Status::Invalid(fmt::format(
        "tp={} with dp={}: {} runs attention either tensor-parallel over all {} GPUs of a stage "
        "or data-parallel over them (tp = 1)",
        s.tp, s.dp, E, per_stage));
  if (!EpAllowed(per_stage, s.tp, s.ep))
    return Status::Invalid(fmt::format(
        "ep={}{}: {} runs expert parallelism over all tp*dp = {} GPUs of a stage or not at all", s.ep,
        r.ep_one_or_stage ? "" : fmt::format(" with dp={}", s.dp), E, per_stage));
  if (!OverlapAllowed(s.dp, s.overlap))
    return Status::Invalid(fmt::format(
        "overlap=tbo with dp=1: {}'s two-batch overlap runs with data-parallel attention only", E));
  if (!SlotsAllowed(s.ep, s.slots))
    return Status::Invalid(
        fmt::format("slots={} with ep=1: {} places redundant experts only with expert parallelism",
                    s.slots, E));
  if (!MtpAllowed(s.pp, s.mtp))
    return Status::Invalid(fmt::format(
        "mtp={} with pp={}: {} runs no speculative decoding over pipeline stages", s.mtp, s.pp, E));
  return Status::Ok();
}

std::vector<Strategy> MegatronDegreeCombinations(const ModelSpec& m, const StrategySpace& space) {
  std::vector<Strategy> out;
  const int n = space.num_gpus();
  for (int pp : space.pp_options())
    for (int tp : space.tp_options())
      for (int ep : space.ep_options()) {
        if (n % (pp * tp) != 0) continue;
        Strategy s;
        s.pp = pp;
        s.tp = tp;
        s.dp = n / (pp * tp);
        s.ep = ep;
        s.dims = MegatronDims();
        ClearAbsentOps(m, &s);
        if (CheckStrategy(m, n, s).ok()) out.push_back(s);
      }
  return out;
}

namespace {
// Under an engine restriction, a shape in the form the engine launches: Megatron's dims where the
// space has only them, sp off where it has no sp, no overlap it lacks (the degree rules are left
// to Check). Unrestricted spaces: `s` unchanged.
Strategy EngineForm(const StrategySpace& space, const ModelSpec& m, Strategy s) {
  const EngineRestriction& r = space.restriction();
  if (!r.active) return s;
  if (r.megatron_dims_only) {
    s.dims = MegatronDims();
    ClearAbsentOps(m, &s);
  }
  if (space.head_size(StrategySpace::kSp) == 1) s.sp = false;
  if (!r.overlaps[static_cast<int>(s.overlap)]) s.overlap = Overlap::kNone;
  return s;
}

// The widest ep option for a stage of g GPUs (pp = 1) at tensor parallelism tp that the engine
// restriction allows: the last option when it is inactive (every option divides the GPU count).
int WidestEp(const StrategySpace& space, int g, int tp) {
  const std::vector<int>& eps = space.ep_options();
  for (auto it = eps.rbegin(); it != eps.rend(); ++it)
    if (g % *it == 0 && space.EpAllowed(g, tp, *it)) return *it;
  return eps.front();
}
}  // namespace

std::vector<Strategy> ServingTemplates(const StrategySpace& space, const ModelSpec& m, int domain) {
  std::vector<Strategy> out;
  const int g = space.num_gpus();
  const std::vector<int>& batches = space.batch_options();
  for (int tp : {1, std::min(g, domain)}) {
    Strategy s;
    s.pp = 1;
    s.tp = tp;
    s.dp = g / tp;
    s.ep = WidestEp(space, g, tp);
    s.batch = batches[batches.size() / 2];
    s.sp = false;
    s.dims = MegatronDims();
    if (tp == 1) s.dims.fill(Dim::kNone);
    ClearAbsentOps(m, &s);
    s = EngineForm(space, m, s);
    // The first slot count the widest ep divides, e.g. 288 slots for ep = 144 with 256 experts.
    if (FitSlots(space, &s) && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

void AddOverlapRecipes(const StrategySpace& space, std::vector<Strategy>* t) {
  const size_t n = t->size();
  for (size_t j = 0; j < n; ++j)
    for (Overlap o : space.overlap_options()) {
      if (o == (*t)[j].overlap) continue;
      Strategy x = (*t)[j];
      x.overlap = o;
      if (FitSlots(space, &x, /*most_redundant=*/true) &&
          std::find(t->begin(), t->end(), x) == t->end())
        t->push_back(x);
    }
}

bool FitSlots(const StrategySpace& space, Strategy* s, bool most_redundant) {
  const int before = s->slots;
  const std::vector<int>& options = space.slot_options();
  for (size_t k = 0; k < options.size(); ++k) {
    s->slots = options[most_redundant ? options.size() - 1 - k : k];
    if (space.Check(*s).ok()) return true;
  }
  s->slots = before;
  return false;
}

int StrategySpace::group(int h) const {
  if (h < kFirstDim || h >= kFirstDim + static_cast<int>(ops_.size())) return -1;
  switch (ops_[h - kFirstDim]) {
    case Op::kAttnQkv:
    case Op::kAttnCore:
    case Op::kAttnOut: return 0;
    case Op::kMoeFfn1:
    case Op::kMoeFfn2: return 1;
    case Op::kSharedFfn1:
    case Op::kSharedFfn2: return 2;
    case Op::kDenseFfn1:
    case Op::kDenseFfn2: return 3;
    case Op::kMoeRouter: return 4;
    case Op::kEmbed: return 5;
    case Op::kLmHead: return 6;
  }
  return -1;
}

int StrategySpace::recipe_option(int h, int r) const {
  if (r < 0 || r > 2) return -1;
  if (h == kSp) return head_sizes_[kSp] > 1 ? (r >= 1 ? 1 : 0) : -1;
  if (h < kFirstDim || h >= kFirstDim + static_cast<int>(ops_.size())) return -1;
  const Op op = ops_[h - kFirstDim];
  const bool expert = op == Op::kMoeFfn1 || op == Op::kMoeFfn2;
  const bool keep_megatron = r == 0 || op == Op::kLmHead || (r == 1 && expert);
  const Dim want = keep_megatron ? MegatronDims()[static_cast<int>(op)] : Dim::kNone;
  const std::vector<Dim>& opts = dim_options(op);
  const auto it = std::find(opts.begin(), opts.end(), want);
  return it == opts.end() ? -1 : static_cast<int>(it - opts.begin());
}

void StrategySpace::Canonicalize(std::vector<int>* idx) const {
  std::vector<int> c;
  if (Encode(Canonical(*model_, Decode(*idx)), &c)) idx->swap(c);
}

}  // namespace l2s
