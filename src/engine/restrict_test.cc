// The restricted space is exactly the launchable set, both ways, by enumeration:
//   - every point of an engine's restricted space (each index tuple that passes Valid) has no
//     Violations, and CountValid counts exactly those points;
//   - every structurally valid point of the unrestricted space with no Violations has its
//     Canonical form in the restricted space, and every one with Violations has not (its
//     degree/feature choices enumerated, with Megatron's dims, every dim none, and random dims);
//   - Mask completes: choosing every head among its mask's options in order ends in a valid
//     point.
// Over a dense Llama, DeepSeek-V3 (MoE with dense FFN layers and MTP), Qwen3-235B (MoE without
// dense FFN layers) and Mixtral (8 experts, no slot options), on 4, 8 and 16 GPUs, for every
// engine of the table.
#include "engine/restrict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/presets.h"

namespace l2s::engine {
namespace {

struct Case {
  ModelSpec model;
  int gpus;
};

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const char* name : {"llama-3.1-70b", "deepseek-v3", "qwen3-235b-a22b", "mixtral-8x7b"}) {
    StatusOr<ModelSpec> m = ModelPreset(name);
    EXPECT_TRUE(m.ok()) << name;
    for (int g : {4, 8, 16}) out.push_back({*m, g});
  }
  return out;
}

SpaceOptions Options(const ModelSpec& m) {
  SpaceOptions o;
  o.max_batch = 2;
  if (m.mtp_layers > 0) o.mtp = {0, 1, 2};
  return o;
}

// Every index tuple of `space` (odometer order).
template <class F>
void ForEachIndex(const StrategySpace& space, F f) {
  std::vector<int> idx(space.num_heads(), 0);
  while (true) {
    f(idx);
    int h = space.num_heads() - 1;
    while (h >= 0 && ++idx[h] == space.head_size(h)) idx[h--] = 0;
    if (h < 0) return;
  }
}

TEST(RestrictedSpace, EveryPointLaunchableAndCountValidExact) {
  for (const Case& c : Cases()) {
    for (const Capabilities& caps : CapabilityTable()) {
      if (caps.id == EngineId::kIdeal) continue;
      StatusOr<StrategySpace> sp = RestrictedSpace(caps, c.model, c.gpus, Options(c.model));
      ASSERT_TRUE(sp.ok()) << sp.status().message();
      double valid = 0;
      ForEachIndex(*sp, [&](const std::vector<int>& idx) {
        if (!sp->Valid(idx)) return;
        ++valid;
        const Strategy s = sp->Decode(idx);
        const std::vector<std::string> v = Violations(caps, c.model, s);
        EXPECT_TRUE(v.empty()) << caps.name << " " << c.model.name << " " << ToText(s) << ": "
                               << v.front();
        std::vector<int> again;
        EXPECT_TRUE(sp->Encode(s, &again) && again == idx) << ToText(s);
      });
      EXPECT_DOUBLE_EQ(sp->CountValid(), valid) << caps.name << " " << c.model.name << " "
                                                << c.gpus;
      EXPECT_GT(valid, 0) << caps.name << " " << c.model.name;
    }
  }
}

TEST(RestrictedSpace, EveryLaunchablePointOfTheFullSpaceIsInIt) {
  std::mt19937_64 rng(7);
  for (const Case& c : Cases()) {
    const SpaceOptions opt = Options(c.model);
    StatusOr<StrategySpace> full = StrategySpace::Make(c.model, c.gpus, opt);
    ASSERT_TRUE(full.ok());
    std::vector<StrategySpace> restricted;
    std::vector<const Capabilities*> engines;
    for (const Capabilities& caps : CapabilityTable()) {
      restricted.push_back(*RestrictedSpace(caps, c.model, c.gpus, opt));
      engines.push_back(&caps);
    }
    // The structural heads enumerated; the dims: Megatron's, all none, three random draws.
    const int first_dim = StrategySpace::kFirstDim;
    const int num_dims = static_cast<int>(full->searched_ops().size());
    int launchable = 0, not_launchable = 0;
    for (int pp : full->pp_options())
      for (int tp : full->tp_options())
        for (int ep : full->ep_options())
          for (int sp_on = 0; sp_on < 2; ++sp_on)
            for (int slots : full->slot_options())
              for (Overlap ov : full->overlap_options())
                for (int mtp : full->mtp_options())
                  for (int variant = 0; variant < 5; ++variant) {
                    if (c.gpus % (pp * tp) != 0) continue;
                    Strategy s;
                    s.pp = pp;
                    s.tp = tp;
                    s.dp = c.gpus / (pp * tp);
                    s.ep = ep;
                    s.batch = 1;
                    s.sp = sp_on == 1;
                    s.slots = slots;
                    s.overlap = ov;
                    s.mtp = mtp;
                    s.dims = MegatronDims();
                    if (variant == 1) s.dims.fill(Dim::kNone);
                    if (variant >= 2)
                      for (int i = 0; i < num_dims; ++i)
                        s.set_dim(full->searched_ops()[i], static_cast<Dim>(rng() % 3));
                    ClearAbsentOps(c.model, &s);
                    if (!full->Check(s).ok()) continue;
                    (void)first_dim;
                    for (size_t k = 0; k < engines.size(); ++k) {
                      const bool ok = Launchable(*engines[k], c.model, s);
                      const Status in = restricted[k].Check(Canonical(c.model, s));
                      EXPECT_EQ(ok, in.ok())
                          << engines[k]->name << " " << c.model.name << " " << ToText(s) << ": "
                          << (ok ? in.message() : Violations(*engines[k], c.model, s).front());
                      (ok ? launchable : not_launchable) += 1;
                    }
                  }
    EXPECT_GT(launchable, 0) << c.model.name;
    EXPECT_GT(not_launchable, 0) << c.model.name;
  }
}

TEST(RestrictedSpace, MaskCompletesEveryPrefix) {
  std::mt19937_64 rng(11);
  for (const Case& c : Cases()) {
    for (const Capabilities& caps : CapabilityTable()) {
      StatusOr<StrategySpace> sp = RestrictedSpace(caps, c.model, c.gpus, Options(c.model));
      ASSERT_TRUE(sp.ok());
      for (int draw = 0; draw < 300; ++draw) {
        std::vector<int> idx(sp->num_heads(), 0);
        for (int h = 0; h < sp->num_heads(); ++h) {
          std::vector<uint8_t> mask(sp->head_size(h));
          sp->Mask(std::span<const int>(idx.data(), h), h, mask);
          std::vector<int> ok;
          for (int i = 0; i < sp->head_size(h); ++i)
            if (mask[i]) ok.push_back(i);
          ASSERT_FALSE(ok.empty()) << caps.name << " head " << sp->head_name(h);
          idx[h] = ok[rng() % ok.size()];
        }
        const Strategy s = sp->Decode(idx);
        EXPECT_TRUE(sp->Check(s).ok()) << caps.name << " " << ToText(s) << ": "
                                       << sp->Check(s).message();
        EXPECT_TRUE(Launchable(caps, c.model, s)) << caps.name << " " << ToText(s);
      }
    }
  }
}

// The serving shapes the searchers start from (ServingTemplates) are, under
// an engine restriction, points the engine launches, and not all of them are dropped.
TEST(RestrictedSpace, SeedShapesAreLaunchable) {
  for (const Case& c : Cases()) {
    if (!c.model.is_moe()) continue;
    for (const Capabilities& caps : CapabilityTable()) {
      StatusOr<StrategySpace> sp = RestrictedSpace(caps, c.model, c.gpus, Options(c.model));
      ASSERT_TRUE(sp.ok());
      const std::vector<Strategy> t = ServingTemplates(*sp, c.model, 8);
      EXPECT_FALSE(t.empty()) << caps.name << " " << c.model.name << " " << c.gpus;
      for (const Strategy& s : t) {
        EXPECT_TRUE(sp->Check(s).ok()) << ToText(s);
        EXPECT_TRUE(Launchable(caps, c.model, s)) << caps.name << " " << ToText(s);
      }
    }
  }
}

// Repairs are launchable, valid, and {Canonical(s)} when s is launchable.
TEST(Repairs, LaunchableValidAndIdentityOnLaunchablePoints) {
  std::mt19937_64 rng(3);
  for (const Case& c : Cases()) {
    StatusOr<StrategySpace> full = StrategySpace::Make(c.model, c.gpus, Options(c.model));
    ASSERT_TRUE(full.ok());
    for (int draw = 0; draw < 400; ++draw) {
      std::vector<int> idx(full->num_heads(), 0);
      for (int h = 0; h < full->num_heads(); ++h) {
        std::vector<uint8_t> mask(full->head_size(h));
        full->Mask(std::span<const int>(idx.data(), h), h, mask);
        std::vector<int> ok;
        for (int i = 0; i < full->head_size(h); ++i)
          if (mask[i]) ok.push_back(i);
        idx[h] = ok[rng() % ok.size()];
      }
      const Strategy s = full->Decode(idx);
      for (const Capabilities& caps : CapabilityTable()) {
        const std::vector<Strategy> r = Repairs(caps, c.model, s);
        for (const Strategy& t : r) {
          EXPECT_TRUE(CheckStrategy(c.model, c.gpus, t).ok()) << ToText(t);
          EXPECT_TRUE(Launchable(caps, c.model, t)) << caps.name << " " << ToText(s) << " -> "
                                                    << ToText(t);
        }
        if (Launchable(caps, c.model, s)) {
          ASSERT_EQ(r.size(), 1u);
          EXPECT_EQ(ToText(r[0]), ToText(Canonical(c.model, s))) << caps.name;
        }
      }
    }
  }
}


// vLLM and SGLang run no speculative decoding over pipeline stages (engine.cc: mtp_with_pp);
// TensorRT-LLM's one-model MTP does. With the mtp head fixed to 2 a SGLang space keeps pp = 1
// only, and its size is the pp = 1 slice; with {0, 2} the pp > 1 points keep mtp 0 only.
TEST(RestrictedSpace, SpeculationOnlyWithoutPipelineStages) {
  const ModelSpec m = *ModelPreset("deepseek-v3");
  const Strategy s = *FromText("pp=2,tp=8,dp=1,ep=8,batch=8,mtp=2", 16);
  for (EngineId id : {EngineId::kVllm, EngineId::kSglang, EngineId::kDynamoSglang}) {
    const std::vector<std::string> v = Violations(CapabilitiesOf(id), m, s);
    ASSERT_EQ(v.size(), 1u) << EngineName(id);
    EXPECT_NE(v[0].find("mtp=2 with pp=2"), std::string::npos) << v[0];
    for (const Strategy& r : Repairs(CapabilitiesOf(id), m, s)) {
      EXPECT_EQ(r.pp, 2);
      EXPECT_EQ(r.mtp, 0);
    }
  }
  EXPECT_TRUE(Violations(CapabilitiesOf(EngineId::kTrtllm), m, s).empty());
  EXPECT_TRUE(Violations(CapabilitiesOf(EngineId::kIdeal), m, s).empty());

  SpaceOptions fixed;
  fixed.max_batch = 2;
  fixed.mtp = {2};
  SpaceOptions both = fixed;
  both.mtp = {0, 2};
  const Capabilities& sg = CapabilitiesOf(EngineId::kSglang);
  const StrategySpace only2 = *RestrictedSpace(sg, m, 16, fixed);
  const StrategySpace with0 = *RestrictedSpace(sg, m, 16, both);
  std::vector<uint8_t> pp_mask(only2.head_size(StrategySpace::kPp));
  only2.Mask({}, StrategySpace::kPp, pp_mask);
  for (size_t i = 0; i < pp_mask.size(); ++i)
    EXPECT_EQ(pp_mask[i], only2.pp_options()[i] == 1 ? 1 : 0) << only2.pp_options()[i];
  // Counted by hand from the two spaces: every pp = 1 point of {0, 2} appears once per depth,
  // every pp > 1 point once (mtp 0), and the {2} space is one pp = 1 depth.
  double pp1 = 0, deeper = 0;
  ForEachIndex(with0, [&](const std::vector<int>& idx) {
    if (!with0.Valid(idx)) return;
    (with0.Decode(idx).pp == 1 ? pp1 : deeper) += 1;
  });
  EXPECT_GT(deeper, 0);
  EXPECT_DOUBLE_EQ(with0.CountValid(), pp1 + deeper);
  EXPECT_DOUBLE_EQ(only2.CountValid(), pp1 / 2);
}


// SGLang's all-to-all under DP attention sets --ep-size to --tp-size (engine.cc): with dp > 1 an
// ep between 1 and the stage is not what runs; with dp = 1 any divisor is.
TEST(Violations, SglangEpSpansTheStageWithDataParallelAttention) {
  const ModelSpec m = *ModelPreset("qwen3-235b-a22b");
  const Capabilities& sg = CapabilitiesOf(EngineId::kSglang);
  const Strategy dp_attn = *FromText("pp=1,tp=1,dp=8,ep=4,batch=8", 8);
  const std::vector<std::string> v = Violations(sg, m, dp_attn);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("sets --ep-size to --tp-size"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("pp=1,tp=1,dp=8,ep=1 or pp=1,tp=1,dp=8,ep=8"), std::string::npos) << v[0];
  std::vector<int> eps;
  for (const Strategy& r : Repairs(sg, m, dp_attn)) eps.push_back(r.ep);
  EXPECT_EQ(eps, (std::vector<int>{1, 8}));
  EXPECT_TRUE(Violations(sg, m, *FromText("pp=1,tp=8,dp=1,ep=4,batch=8", 8)).empty());
  EXPECT_TRUE(Violations(sg, m, *FromText("pp=1,tp=1,dp=8,ep=8,batch=8", 8)).empty());
  EXPECT_TRUE(Violations(CapabilitiesOf(EngineId::kTrtllm), m, dp_attn).empty());
  // The space: with tp = 1 (dp = 8) the ep head keeps 1 and 8; with tp = 8 (dp = 1) every ep.
  const StrategySpace sp = *RestrictedSpace(sg, m, 8, SpaceOptions{});
  std::vector<uint8_t> mask(sp.head_size(StrategySpace::kEp));
  const int tp_of[2] = {1, 8};
  for (int tp : tp_of) {
    const int itp = static_cast<int>(std::find(sp.tp_options().begin(), sp.tp_options().end(), tp) -
                                     sp.tp_options().begin());
    const int prefix[2] = {0, itp};
    sp.Mask(prefix, StrategySpace::kEp, mask);
    std::vector<int> kept;
    for (size_t i = 0; i < mask.size(); ++i)
      if (mask[i]) kept.push_back(sp.ep_options()[i]);
    EXPECT_EQ(kept, tp == 1 ? std::vector<int>({1, 8}) : std::vector<int>({1, 2, 4, 8})) << tp;
  }
}

// ATOM starts one engine core per pipeline stage only without data parallelism (engine.cc): its
// space keeps pp > 1 at dp = 1, so a pipeline option survives only where tp can fill the stage.
// Counted by hand for Llama-3.1-70B (64 heads) on 8 GPUs: pp in {1, 2, 4, 8}; at pp = 1 every tp
// of {1, 2, 4, 8}, at pp = 2 tp = 4, at pp = 4 tp = 2, at pp = 8 tp = 1: 4 + 1 + 1 + 1 = 7
// degree pairs (vLLM: 4 + 3 + 2 + 1 = 10), times the batch options.
TEST(RestrictedSpace, AtomRunsPipelineStagesOnlyWithoutDataParallelism) {
  const ModelSpec m = *ModelPreset("llama-3.1-70b");
  SpaceOptions o;
  o.max_batch = 2;  // batch options 1, 2
  const StrategySpace atom = *RestrictedSpace(CapabilitiesOf(EngineId::kAtom), m, 8, o);
  const StrategySpace vllm = *RestrictedSpace(CapabilitiesOf(EngineId::kVllm), m, 8, o);
  EXPECT_DOUBLE_EQ(atom.CountValid(), 7 * 2);
  EXPECT_DOUBLE_EQ(vllm.CountValid(), 10 * 2);
  const Strategy staged = Canonical(m, *FromText("pp=2,tp=2,dp=2,batch=1", 8));
  EXPECT_FALSE(atom.Check(staged).ok());
  EXPECT_NE(atom.Check(staged).message().find("pipeline stages only without data parallelism"),
            std::string::npos)
      << atom.Check(staged).message();
  EXPECT_TRUE(vllm.Check(staged).ok());
  // At pp = 2 the tp head keeps 4 alone.
  std::vector<uint8_t> tp_mask(atom.head_size(StrategySpace::kTp));
  const int pp2[1] = {1};
  ASSERT_EQ(atom.pp_options()[1], 2);
  atom.Mask(pp2, StrategySpace::kTp, tp_mask);
  for (size_t i = 0; i < tp_mask.size(); ++i)
    EXPECT_EQ(tp_mask[i], atom.tp_options()[i] == 4 ? 1 : 0) << atom.tp_options()[i];
}

// vLLM's NIXL connector moves no pipeline-parallel cache and SGLang's decode servers run none
// (engine.cc: prefill_pool_pp, decode_pool_pp), so such a server of a disaggregated pool runs
// pp = 1; the engines' aggregated servers keep pipeline stages, and TensorRT-LLM's pools too.
TEST(Violations, PoolServersRunPipelineStagesWhereTheKvTransferDoes) {
  const ModelSpec m = *ModelPreset("qwen3-235b-a22b");
  const Strategy staged = *FromText("pp=4,tp=1,dp=1,ep=1,batch=2", 4);
  struct Row {
    EngineId id;
    bool prefill, decode;  // pp > 1 launchable in that pool
  };
  for (const Row& row : {Row{EngineId::kVllm, false, false}, Row{EngineId::kDynamoVllm, false, false},
                         Row{EngineId::kSglang, true, false}, Row{EngineId::kDynamoSglang, true, false},
                         Row{EngineId::kTrtllm, true, true}, Row{EngineId::kDynamoTrtllm, true, true}}) {
    const Capabilities& c = CapabilitiesOf(row.id);
    EXPECT_TRUE(Launchable(c, m, staged)) << c.name;
    for (Role role : {Role::kPrefillPool, Role::kDecodePool}) {
      const bool allowed = role == Role::kPrefillPool ? row.prefill : row.decode;
      const std::vector<Violation> v = FindViolations(c, m, staged, role);
      EXPECT_EQ(v.empty(), allowed) << c.name;
      if (allowed) continue;
      ASSERT_EQ(v.size(), 1u) << c.name;
      EXPECT_EQ(v[0].kind, Violation::Kind::kPoolStages);
      EXPECT_NE(v[0].text.find("pp=4 in a disaggregated"), std::string::npos) << v[0].text;
      // The stages folded into tp (tp = 4), then into dp (dp = 4, experts tensor-parallel).
      std::vector<std::string> repairs;
      for (const Strategy& r : Repairs(c, m, staged, role)) {
        EXPECT_TRUE(Launchable(c, m, r, role)) << ToText(r);
        repairs.push_back(fmt::format("pp={},tp={},dp={},ep={}", r.pp, r.tp, r.dp, r.ep));
      }
      EXPECT_EQ(repairs, (std::vector<std::string>{"pp=1,tp=4,dp=1,ep=1", "pp=1,tp=1,dp=4,ep=1"}))
          << c.name;
    }
  }
  // vLLM's decode-pool space is the pp = 1 slice of its aggregated space.
  SpaceOptions o;
  o.max_batch = 2;
  const Capabilities& v = CapabilitiesOf(EngineId::kVllm);
  const StrategySpace agg = *RestrictedSpace(v, m, 8, o);
  const StrategySpace pool = *StrategySpace::Make(m, 8, *RestrictOptions(v, m, o, Role::kDecodePool));
  double pp1 = 0;
  ForEachIndex(agg, [&](const std::vector<int>& idx) {
    if (agg.Valid(idx) && agg.Decode(idx).pp == 1) ++pp1;
  });
  EXPECT_GT(agg.CountValid(), pp1);
  EXPECT_DOUBLE_EQ(pool.CountValid(), pp1);
  std::vector<uint8_t> pp_mask(pool.head_size(StrategySpace::kPp));
  pool.Mask({}, StrategySpace::kPp, pp_mask);
  for (size_t i = 0; i < pp_mask.size(); ++i)
    EXPECT_EQ(pp_mask[i], pool.pp_options()[i] == 1 ? 1 : 0) << pool.pp_options()[i];
  const Strategy two = Canonical(m, *FromText("pp=2,tp=4,ep=4,batch=1", 8));
  EXPECT_NE(pool.Check(two).message().find("without pipeline stages"), std::string::npos)
      << pool.Check(two).message();
  EXPECT_TRUE(agg.Check(two).ok()) << agg.Check(two).message();
}

}  // namespace
}  // namespace l2s::engine
