// Tests of the strategy space: validity reasons, option lists, encoding, the mask guarantees
// (completability and completeness) and the exact valid count, over hand-built and random models.
#include "strategy/space.h"
#include "strategy/test_strategies.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace l2s {
namespace {

using testing::MegatronStrategy;

ModelSpec Uniform(std::string name, int layers, FfnKind ffn) {
  ModelSpec m;
  m.name = std::move(name);
  m.num_layers = layers;
  m.layers.assign(layers, LayerSpec{ffn, 0});
  return m;
}

// Llama-3.1-70B-like: dense GQA.
ModelSpec Llama70B() {
  ModelSpec m = Uniform("llama-70b-like", 80, FfnKind::kDense);
  m.hidden_size = 8192;
  m.vocab_size = 128256;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.dense_ffn_size = 28672;
  return m;
}

// GPT-MoE-like: every layer MoE, 16 experts top-2, 96 heads (MHA), GELU MLP.
ModelSpec GptMoe(int layers = 80) {
  ModelSpec m = Uniform("gpt-moe-like", layers, FfnKind::kMoe);
  m.hidden_size = 12288;
  m.vocab_size = 50257;
  m.num_heads = 96;
  m.num_kv_heads = 96;
  m.head_dim = 128;
  m.gated_ffn = false;
  m.num_experts = 16;
  m.experts_per_token = 2;
  m.expert_ffn_size = 4 * 12288;
  return m;
}

// DeepSeek-V3-like: MLA, 3 dense + 58 MoE layers, 256 routed experts + 1 shared, 128 heads.
ModelSpec DeepSeekLike() {
  ModelSpec m = Uniform("deepseek-like", 61, FfnKind::kMoe);
  for (int i = 0; i < 3; ++i) m.layers[i].ffn = FfnKind::kDense;
  m.hidden_size = 7168;
  m.vocab_size = 129280;
  m.attention = AttentionKind::kMla;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.dense_ffn_size = 18432;
  m.num_experts = 256;
  m.experts_per_token = 8;
  m.expert_ffn_size = 2048;
  m.num_shared_experts = 1;
  m.shared_ffn_size = 2048;
  return m;
}

void ExpectInvalid(const Status& st, std::string_view what) {
  ASSERT_FALSE(st.ok()) << "expected an error mentioning '" << what << "'";
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(what), std::string::npos)
      << "message '" << st.message() << "' should mention '" << what << "'";
}

TEST(ModelHasOp, ByFamily) {
  const ModelSpec llama = Llama70B(), moe = GptMoe(), ds = DeepSeekLike();
  for (Op op : {Op::kEmbed, Op::kAttnQkv, Op::kAttnCore, Op::kAttnOut, Op::kLmHead}) {
    EXPECT_TRUE(ModelHasOp(llama, op));
    EXPECT_TRUE(ModelHasOp(moe, op));
    EXPECT_TRUE(ModelHasOp(ds, op));
  }
  for (Op op : {Op::kMoeRouter, Op::kMoeFfn1, Op::kMoeFfn2}) {
    EXPECT_FALSE(ModelHasOp(llama, op));
    EXPECT_TRUE(ModelHasOp(moe, op));
    EXPECT_TRUE(ModelHasOp(ds, op));
  }
  for (Op op : {Op::kSharedFfn1, Op::kSharedFfn2}) {
    EXPECT_FALSE(ModelHasOp(llama, op));
    EXPECT_FALSE(ModelHasOp(moe, op));
    EXPECT_TRUE(ModelHasOp(ds, op));
  }
  for (Op op : {Op::kDenseFfn1, Op::kDenseFfn2}) {
    EXPECT_TRUE(ModelHasOp(llama, op));
    EXPECT_FALSE(ModelHasOp(moe, op));
    EXPECT_TRUE(ModelHasOp(ds, op));
  }
}

TEST(CheckStrategy, EachReason) {
  const ModelSpec llama = Llama70B(), moe = GptMoe(), ds = DeepSeekLike();
  EXPECT_TRUE(CheckStrategy(llama, 64, MegatronStrategy(2, 8, 4, 1)).ok());
  EXPECT_TRUE(CheckStrategy(ds, 256, MegatronStrategy(1, 8, 32, 256)).ok());

  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(0, 8, 4, 1)), "positive");
  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(2, 8, 4, 0)), "positive");
  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(2, -8, 4, 1)), "positive");
  // 2*8*2 = 32 GPUs of a 64-GPU cluster: both numbers in the message.
  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(2, 8, 2, 1)), "pp*tp*dp = 32");
  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(2, 8, 2, 1)), "64 GPUs");
  ExpectInvalid(CheckStrategy(llama, 160, MegatronStrategy(160, 1, 1, 1)), "80 layers");
  ExpectInvalid(CheckStrategy(llama, 96, MegatronStrategy(1, 6, 16, 1)),
                "tp=6 does not divide the 64");
  ExpectInvalid(CheckStrategy(llama, 64, MegatronStrategy(1, 8, 8, 2)), "dense");
  // GPT-MoE: 16 experts; tp*dp = 12 per stage.
  ExpectInvalid(CheckStrategy(moe, 24, MegatronStrategy(2, 12, 1, 8)),
                "does not divide the 12 GPUs per stage");
  ExpectInvalid(CheckStrategy(moe, 24, MegatronStrategy(2, 12, 1, 3)),
                "does not divide the 16 experts");
  ExpectInvalid(CheckStrategy(moe, 64, MegatronStrategy(1, 8, 8, 4, -1)), "batch=-1");
  ExpectInvalid(CheckStrategy(moe, 0, MegatronStrategy(1, 1, 1, 1)), "at least one GPU");
}

TEST(CheckStrategy, FewKvHeadsIsValidWithANote) {
  const ModelSpec llama = Llama70B();  // 8 KV heads
  const Strategy s = MegatronStrategy(1, 16, 4, 1);
  EXPECT_TRUE(CheckStrategy(llama, 64, s).ok());
  const auto notes = StrategyNotes(llama, s);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("8 KV heads"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("replicated on 2 GPUs"), std::string::npos) << notes[0];
  EXPECT_TRUE(StrategyNotes(llama, MegatronStrategy(1, 8, 8, 1)).empty());
  // MLA latent cache
  EXPECT_EQ(StrategyNotes(DeepSeekLike(), MegatronStrategy(1, 8, 8, 1)).size(), 1u);
}

TEST(StrategySpace, MakeRejectsBadInput) {
  const ModelSpec llama = Llama70B();
  EXPECT_FALSE(StrategySpace::Make(llama, 0).ok());
  SpaceOptions o;
  o.max_batch = 0;
  EXPECT_FALSE(StrategySpace::Make(llama, 8, o).ok());
  o = SpaceOptions{};
  o.search_batch = false;
  o.fixed_batch = -2;
  EXPECT_FALSE(StrategySpace::Make(llama, 8, o).ok());
  ModelSpec broken = llama;
  broken.layers.pop_back();  // 80 layers declared, 79 described
  EXPECT_FALSE(StrategySpace::Make(broken, 8).ok());
}

// Llama-70B-like on 64 GPUs, hand-derived:
//   pp: divisors of 64 that are <= 80: 1 2 4 8 16 32 64 (7);  tp: divisors of 64 dividing 64
//   heads: the same 7; ep: {1} (dense); batch: 1..1024 powers of two (11); sp: 2;
//   ops: embed attn_qkv attn_core attn_out dense_ffn1 dense_ffn2 lm_head (7) -> 3^7 = 2187.
//   Size = 7*7*1*11*2*2187. Valid (pp,tp): tp | 64/pp -> 7+6+5+4+3+2+1 = 28.
// The usual serving shapes: llama-3.1-70b on 64 GPUs in 8-GPU domains has batch options 1..1024
// (11; the middle one is 32) and ep only 1 (dense). (a) pp=1,tp=1,dp=64 with every dim none,
// (b) pp=1,tp=8,dp=8 with Megatron's dims; both batch 32, sp off, encodable.
TEST(ServingTemplates, DataParallelAttentionAndOneDomainTensorParallel) {
  const ModelSpec llama = Llama70B();
  auto sp = StrategySpace::Make(llama, 64);
  ASSERT_TRUE(sp.ok());
  const std::vector<Strategy> t = ServingTemplates(*sp, llama, 8);
  ASSERT_EQ(t.size(), 2u);
  auto a = FromText("pp=1,tp=1,dp=64,ep=1,batch=32,sp=off,embed=none,attn_qkv=none,"
                    "attn_core=none,attn_out=none,dense_ffn1=none,dense_ffn2=none,lm_head=none",
                    64);
  ASSERT_TRUE(a.ok());
  ClearAbsentOps(llama, &*a);
  EXPECT_EQ(ToText(t[0]), ToText(*a));
  Strategy b = MegatronStrategy(1, 8, 8, 1, 32);
  ClearAbsentOps(llama, &b);
  EXPECT_EQ(ToText(t[1]), ToText(b));
  for (const Strategy& s : t) {
    std::vector<int> idx;
    EXPECT_TRUE(sp->Encode(s, &idx)) << ToText(s);
  }
  // A domain wider than the cluster: tp over all 64 GPUs.
  const std::vector<Strategy> wide = ServingTemplates(*sp, llama, 72);
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[1].tp, 64);
  EXPECT_EQ(wide[1].dp, 1);
}

// The widest ep that does not divide the experts: DeepSeek-like (256 experts) on 144 GPUs. The
// ep options are the divisors of 144 up to 256 whose slots exist: 144 divides no slot count of
// one per expert (256 = 2^8, 144 = 2^4 * 9), but divides 256 + 256/8 = 288 = 2 * 144. The
// widest-ep shapes therefore take slots = 288 (the first slot option ep 144 divides), not 0: with
// slots 0 they are not structurally valid (Valid fails though Encode succeeds), and the searcher
// that starts from them would start from nothing (the bug this guards).
TEST(ServingTemplates, WidestEpTakesTheFirstSlotOptionItDivides) {
  const ModelSpec ds = DeepSeekLike();
  auto sp = StrategySpace::Make(ds, 144);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  ASSERT_EQ(sp->ep_options().back(), 144);
  ASSERT_EQ(sp->slot_options(), (std::vector<int>{0, 288, 320}));
  const std::vector<Strategy> t = ServingTemplates(*sp, ds, 8);
  ASSERT_EQ(t.size(), 2u);
  for (const Strategy& s : t) {
    EXPECT_EQ(s.ep, 144) << ToText(s);
    EXPECT_EQ(s.slots, 288) << ToText(s);
    std::vector<int> idx;
    ASSERT_TRUE(sp->Encode(s, &idx)) << ToText(s);
    EXPECT_TRUE(sp->Valid(idx)) << ToText(s);
  }
  EXPECT_EQ(t[0].tp, 1);
  EXPECT_EQ(t[1].tp, 8);
  // On 128 GPUs ep 128 divides 256: one slot per expert, as before.
  auto sp128 = StrategySpace::Make(ds, 128);
  ASSERT_TRUE(sp128.ok());
  for (const Strategy& s : ServingTemplates(*sp128, ds, 8)) {
    EXPECT_EQ(s.ep, 128) << ToText(s);
    EXPECT_EQ(s.slots, 0) << ToText(s);
  }
}

// AddOverlapRecipes: DeepSeek-like (256 experts) on 144 GPUs, slot options {0, 288, 320} (above).
// Each of the two widest-ep shapes (ep 144, overlap none, slots 288) gains tbo and sbo with the
// most redundant slot count ep divides: 320 = 256 + 256/4 is not a multiple of 144, 288 is, so
// slots 288: 2 + 2 x 2 = 6 shapes. On 128 GPUs 320 = 2.5 x 128 fails too and 288 = 2.25 x 128,
// so the recipes fall back to one slot per expert (0). A dense model has no overlap option other
// than none: nothing is added. Applied twice, nothing more is added.
TEST(ServingTemplates, OverlapRecipesTakeTheMostRedundantSlotsEpDivides) {
  const ModelSpec ds = DeepSeekLike();
  auto sp = StrategySpace::Make(ds, 144);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  std::vector<Strategy> t = ServingTemplates(*sp, ds, 8);
  ASSERT_EQ(t.size(), 2u);
  AddOverlapRecipes(*sp, &t);
  ASSERT_EQ(t.size(), 6u);
  for (size_t i = 2; i < t.size(); ++i) {
    const Strategy& base = t[(i - 2) / 2];
    EXPECT_EQ(t[i].overlap, (i % 2 == 0) ? Overlap::kTbo : Overlap::kSbo) << ToText(t[i]);
    EXPECT_EQ(t[i].slots, 288) << ToText(t[i]);
    EXPECT_EQ(t[i].tp, base.tp);
    EXPECT_EQ(t[i].ep, 144);
    EXPECT_EQ(t[i].dims, base.dims);
    std::vector<int> idx;
    ASSERT_TRUE(sp->Encode(t[i], &idx)) << ToText(t[i]);
    EXPECT_TRUE(sp->Valid(idx)) << ToText(t[i]);
  }
  AddOverlapRecipes(*sp, &t);
  EXPECT_EQ(t.size(), 6u);
  auto sp128 = StrategySpace::Make(ds, 128);
  ASSERT_TRUE(sp128.ok());
  std::vector<Strategy> t128 = ServingTemplates(*sp128, ds, 8);
  AddOverlapRecipes(*sp128, &t128);
  ASSERT_EQ(t128.size(), 6u);
  for (size_t i = 2; i < t128.size(); ++i) EXPECT_EQ(t128[i].slots, 0) << ToText(t128[i]);
  const ModelSpec llama = Llama70B();
  auto dense = StrategySpace::Make(llama, 64);
  ASSERT_TRUE(dense.ok());
  std::vector<Strategy> d = ServingTemplates(*dense, llama, 8);
  AddOverlapRecipes(*dense, &d);
  EXPECT_EQ(d.size(), 2u);
}


TEST(StrategySpace, LlamaOn64Gpus) {
  const ModelSpec llama = Llama70B();
  auto sp = StrategySpace::Make(llama, 64);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ(sp->pp_options(), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(sp->tp_options(), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(sp->ep_options(), (std::vector<int>{1}));
  EXPECT_EQ(sp->batch_options(),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(sp->searched_ops(),
            (std::vector<Op>{Op::kEmbed, Op::kAttnQkv, Op::kAttnCore, Op::kAttnOut,
                             Op::kDenseFfn1, Op::kDenseFfn2, Op::kLmHead}));
  ASSERT_EQ(sp->num_heads(), 12);
  EXPECT_EQ(sp->head_name(0), "pp");
  EXPECT_EQ(sp->head_name(3), "batch");
  EXPECT_EQ(sp->head_name(4), "sp");
  EXPECT_EQ(sp->head_name(5), "embed");
  EXPECT_EQ(sp->head_name(9), "dense_ffn1");
  EXPECT_EQ(sp->option_name(StrategySpace::kTp, 3), "8");
  EXPECT_EQ(sp->option_name(StrategySpace::kBatch, 10), "1024");
  EXPECT_EQ(sp->option_name(StrategySpace::kSp, 1), "on");
  EXPECT_EQ(sp->option_name(6, 1), "dim1");
  EXPECT_EQ(sp->option_name(6, 2), "none");
  EXPECT_DOUBLE_EQ(sp->Size(), 7.0 * 7 * 1 * 11 * 2 * 2187);
  EXPECT_DOUBLE_EQ(sp->CountValid(), 28.0 * 11 * 2 * 2187);
}

// GPT-MoE-1.6T-like (80 layers, 96 heads, 16 experts) on 24576 = 2^13 * 3 GPUs, max_batch 1024:
//   pp: divisors <= 80: 1 2 4 8 16 32 64 3 6 12 24 48 (12); tp: divisors of 96 = 2^5*3 (12);
//   ep: 1 2 4 8 16 (5); batch 11; sp 2; 8 ops -> 3^8 = 6561.  Size = 12*12*5*11*2*6561.
//   Valid: any tp and ep fit the power-of-two part of 24576/pp (2^13/2^6 >= 2^5), and a tp with
//   factor 3 needs pp without it: 7 pp * 12 tp + 5 pp * 6 tp = 114; * 5 ep = 570 triples.
//   MoE heads: slots {experts} (16 experts: no redundant slots offered), overlap {none, tbo,
//   sbo} with tbo/sbo only for ep > 1: the 5 ep options count 1 + 4 * 3 = 13 (ep, overlap) pairs.
TEST(StrategySpace, GptMoe16tOn24576Gpus) {
  const ModelSpec moe = GptMoe();
  auto sp = StrategySpace::Make(moe, 24576);
  ASSERT_TRUE(sp.ok());
  EXPECT_EQ(sp->pp_options().size(), 12u);
  EXPECT_EQ(sp->tp_options(), (std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96}));
  EXPECT_EQ(sp->ep_options(), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(sp->searched_ops().size(), 8u);
  EXPECT_DOUBLE_EQ(sp->Size(), 12.0 * 12 * 5 * 11 * 2 * 6561 * 1 * 3);  // 311,778,720
  EXPECT_DOUBLE_EQ(sp->CountValid(), 114.0 * 13 * 11 * 2 * 6561);        // 213,914,844
}

TEST(StrategySpace, FixedBatchAndSp) {
  const ModelSpec moe = GptMoe();
  SpaceOptions o;
  o.search_batch = false;
  o.fixed_batch = 0;
  o.search_sp = false;
  auto sp = StrategySpace::Make(moe, 16, o);
  ASSERT_TRUE(sp.ok());
  EXPECT_EQ(sp->head_size(StrategySpace::kBatch), 1);
  EXPECT_EQ(sp->head_size(StrategySpace::kSp), 1);
  EXPECT_EQ(sp->option_name(StrategySpace::kBatch, 0), "auto");
  Strategy s = MegatronStrategy(1, 16, 1, 16);
  ClearAbsentOps(moe, &s);
  EXPECT_TRUE(sp->Check(s).ok()) << sp->Check(s).ToString();
  s.sp = true;
  ExpectInvalid(sp->Check(s), "sp");
  s.sp = false;
  s.batch = 8;
  ExpectInvalid(sp->Check(s), "batch=8");
}

TEST(StrategySpace, CheckRepresentability) {
  const ModelSpec llama = Llama70B();
  auto sp = StrategySpace::Make(llama, 64);
  ASSERT_TRUE(sp.ok());
  Strategy s = MegatronStrategy(2, 8, 4, 1, 64);  // Megatron dims set moe_* on a dense model
  ExpectInvalid(sp->Check(s), "moe_ffn1");
  std::vector<int> idx;
  EXPECT_FALSE(sp->Encode(s, &idx));
  ClearAbsentOps(llama, &s);
  EXPECT_TRUE(sp->Check(s).ok());
  ASSERT_TRUE(sp->Encode(s, &idx));
  EXPECT_EQ(sp->Decode(idx), s);
  s.batch = 48;  // not a power of two
  ExpectInvalid(sp->Check(s), "batch=48");
  EXPECT_FALSE(sp->Encode(s, &idx));
  s.batch = 64;
  s.dp = 2;  // dp is derived: 64 / (2*8) = 4
  EXPECT_FALSE(sp->Encode(s, &idx));
  ExpectInvalid(sp->Check(s), "pp*tp*dp");
}

// ---- random problems --------------------------------------------------------------------------

ModelSpec RandomModel(std::mt19937& rng) {
  auto pick = [&rng](std::initializer_list<int> v) {
    std::uniform_int_distribution<size_t> u(0, v.size() - 1);
    return *(v.begin() + u(rng));
  };
  std::uniform_int_distribution<int> layers(1, 128), kind(0, 3);
  ModelSpec m;
  m.name = "random";
  m.num_layers = pick({1, 2, 3, 5, 7, 12, 24, 61, 80, 128}) == 1 ? 1 : layers(rng);
  m.num_heads = pick({1, 2, 3, 4, 6, 8, 12, 14, 16, 24, 32, 40, 48, 64, 96, 128});
  m.num_kv_heads = pick({1, 2, 4, 8});
  m.layers.assign(m.num_layers, LayerSpec{});
  const int k = kind(rng);  // 0 dense, 1 all MoE, 2 some dense then MoE, 3 alternating
  if (k > 0) {
    m.num_experts = pick({1, 2, 3, 4, 6, 8, 16, 60, 64, 128, 256});
    m.experts_per_token = 1;
    m.num_shared_experts = pick({0, 0, 1, 2});
    for (int i = 0; i < m.num_layers; ++i) {
      const bool moe = k == 1 || (k == 2 && i >= m.num_layers / 4) || (k == 3 && i % 2 == 1);
      m.layers[i].ffn = moe ? FfnKind::kMoe : FfnKind::kDense;
    }
    if (m.num_moe_layers() == 0) m.num_experts = 0;
  }
  return m;
}

int RandomGpus(std::mt19937& rng) {
  std::uniform_int_distribution<int> small(1, 64), which(0, 9);
  const int large[] = {96, 128, 720, 1024, 4096, 24576};
  const int w = which(rng);
  return w < 8 ? small(rng) : large[std::uniform_int_distribution<int>(0, 5)(rng)];
}

SpaceOptions RandomOptions(std::mt19937& rng) {
  std::uniform_int_distribution<int> coin(0, 1), maxb(1, 16);
  SpaceOptions o;
  o.max_batch = maxb(rng);
  o.search_batch = coin(rng) == 1;
  o.fixed_batch = coin(rng) == 1 ? 0 : 32;
  o.search_sp = coin(rng) == 1;
  return o;
}

// True when each idx[h] is allowed by Mask(idx[0..h), h): i.e. masked sampling can produce idx.
bool Producible(const StrategySpace& sp, const std::vector<int>& idx) {
  std::vector<uint8_t> mask;
  for (int h = 0; h < sp.num_heads(); ++h) {
    mask.assign(sp.head_size(h), 0);
    sp.Mask(std::span<const int>(idx.data(), h), h, mask);
    if (!mask[idx[h]]) return false;
  }
  return true;
}

// Mixed-radix flat index <-> per-head indices (head 0 most significant).
void Unflatten(const StrategySpace& sp, int64_t flat, std::vector<int>* idx) {
  idx->assign(sp.num_heads(), 0);
  for (int h = sp.num_heads() - 1; h >= 0; --h) {
    (*idx)[h] = static_cast<int>(flat % sp.head_size(h));
    flat /= sp.head_size(h);
  }
}
int64_t Flatten(const StrategySpace& sp, const std::vector<int>& idx) {
  int64_t flat = 0;
  for (int h = 0; h < sp.num_heads(); ++h) flat = flat * sp.head_size(h) + idx[h];
  return flat;
}

// Depth-first enumeration that follows the masks; marks every leaf in `seen`.
void MaskedEnumerate(const StrategySpace& sp, std::vector<int>* prefix, std::vector<uint8_t>* seen,
                     int64_t* leaves) {
  const int h = static_cast<int>(prefix->size());
  if (h == sp.num_heads()) {
    (*seen)[Flatten(sp, *prefix)] += 1;
    ++*leaves;
    return;
  }
  std::vector<uint8_t> mask(sp.head_size(h));
  sp.Mask(*prefix, h, mask);
  for (int i = 0; i < sp.head_size(h); ++i) {
    if (!mask[i]) continue;
    prefix->push_back(i);
    MaskedEnumerate(sp, prefix, seen, leaves);
    prefix->pop_back();
  }
}

// Completability: 10k strategies sampled head by head from the masks are all valid.
TEST(StrategySpaceRandom, MaskedSamplesAreAllValid) {
  std::mt19937 rng(1234);
  int sampled = 0;
  std::vector<int> idx;
  std::vector<uint8_t> mask;
  for (int problem = 0; problem < 100; ++problem) {
    const ModelSpec m = RandomModel(rng);
    const int gpus = RandomGpus(rng);
    auto sp = StrategySpace::Make(m, gpus, RandomOptions(rng));
    ASSERT_TRUE(sp.ok()) << sp.status().ToString();
    for (int k = 0; k < 100; ++k) {
      idx.clear();
      for (int h = 0; h < sp->num_heads(); ++h) {
        mask.assign(sp->head_size(h), 0);
        sp->Mask(idx, h, mask);
        std::vector<int> allowed;
        for (int i = 0; i < sp->head_size(h); ++i) {
          if (mask[i]) allowed.push_back(i);
        }
        ASSERT_FALSE(allowed.empty()) << "dead end at head " << sp->head_name(h);
        idx.push_back(allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]);
      }
      const Strategy s = sp->Decode(idx);
      const Status st = sp->Check(s);
      ASSERT_TRUE(st.ok()) << gpus << " GPUs: " << ToText(s) << ": " << st.ToString();
      std::vector<int> back;
      ASSERT_TRUE(sp->Encode(s, &back));
      EXPECT_EQ(back, idx);
      ++sampled;
    }
  }
  EXPECT_EQ(sampled, 10000);
}

// AddOverlapRecipes on random problems against a brute-force reference: for each serving shape
// and each other overlap option, the shape with the last slot option (in option order, the most
// redundant) that passes Check, none when none does; the shapes before are kept as they were, the
// added ones are structurally valid, encodable and distinct, and differ from their shape only in
// overlap and slots.
TEST(StrategySpaceRandom, OverlapRecipesMatchABruteForceReference) {
  std::mt19937 rng(77);
  int added = 0;
  for (int problem = 0; problem < 300; ++problem) {
    const ModelSpec m = RandomModel(rng);
    const int gpus = RandomGpus(rng);
    auto sp = StrategySpace::Make(m, gpus, RandomOptions(rng));
    ASSERT_TRUE(sp.ok()) << sp.status().ToString();
    const std::vector<Strategy> base = ServingTemplates(*sp, m, 8);
    std::vector<Strategy> want = base;
    for (const Strategy& b : base)
      for (Overlap o : sp->overlap_options()) {
        if (o == b.overlap) continue;
        std::vector<Strategy> fits;
        for (int slots : sp->slot_options()) {
          Strategy x = b;
          x.overlap = o;
          x.slots = slots;
          if (sp->Check(x).ok()) fits.push_back(x);
        }
        if (!fits.empty() && std::find(want.begin(), want.end(), fits.back()) == want.end())
          want.push_back(fits.back());
      }
    std::vector<Strategy> got = base;
    AddOverlapRecipes(*sp, &got);
    ASSERT_EQ(got.size(), want.size()) << m.name << " on " << gpus;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << ToText(got[i]) << " vs " << ToText(want[i]);
      std::vector<int> idx;
      ASSERT_TRUE(sp->Encode(got[i], &idx)) << ToText(got[i]);
      EXPECT_TRUE(sp->Valid(idx)) << ToText(got[i]);
      for (size_t j = 0; j < i; ++j) EXPECT_NE(got[i], got[j]);
      if (i >= base.size()) {
        bool from_a_shape = false;
        for (const Strategy& b : base) {
          Strategy y = got[i];
          y.overlap = b.overlap;
          y.slots = b.slots;
          from_a_shape = from_a_shape || (y == b && got[i].overlap != b.overlap);
        }
        EXPECT_TRUE(from_a_shape) << ToText(got[i]);
      }
    }
    added += static_cast<int>(got.size() - base.size());
  }
  EXPECT_GT(added, 50);  // the random MoE problems have overlap options: the check is not vacuous
}

// Completeness and soundness: on small spaces, the set reached by masked enumeration equals the
// brute-force set of valid index vectors, and its size equals CountValid().
TEST(StrategySpaceRandom, MaskedEnumerationEqualsBruteForce) {
  std::mt19937 rng(99);
  int full = 0;
  std::vector<int> idx;
  for (int problem = 0; problem < 400 && full < 30; ++problem) {
    const ModelSpec m = RandomModel(rng);
    std::uniform_int_distribution<int> g(1, 64);
    const int gpus = g(rng);
    SpaceOptions o = RandomOptions(rng);
    o.max_batch = std::min(o.max_batch, 4);
    auto sp = StrategySpace::Make(m, gpus, o);
    ASSERT_TRUE(sp.ok());
    if (sp->Size() > 100000) continue;
    ++full;
    const int64_t size = static_cast<int64_t>(sp->Size());
    std::vector<uint8_t> valid(size, 0), seen(size, 0);
    int64_t nvalid = 0;
    for (int64_t f = 0; f < size; ++f) {
      Unflatten(*sp, f, &idx);
      valid[f] = sp->Check(sp->Decode(idx)).ok() ? 1 : 0;
      nvalid += valid[f];
    }
    std::vector<int> prefix;
    int64_t leaves = 0;
    MaskedEnumerate(*sp, &prefix, &seen, &leaves);
    EXPECT_EQ(leaves, nvalid);
    ASSERT_EQ(seen, valid) << gpus << " GPUs, model heads " << m.num_heads << " experts "
                           << m.num_experts;
    EXPECT_EQ(sp->CountValid(), static_cast<double>(nvalid));
  }
  EXPECT_EQ(full, 30);
}

// Larger spaces: the degree/batch/sp heads are enumerated exhaustively and the dim heads
// sampled; an index vector is producible by masked sampling iff it is valid, and the count of
// valid degree/batch/sp prefixes times 3^(searched ops) equals CountValid().
TEST(StrategySpaceRandom, LargeSpacesAgreeWithBruteForce) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dim(0, 2);
  std::vector<int> idx;
  for (int problem = 0; problem < 30; ++problem) {
    const ModelSpec m = RandomModel(rng);
    const int gpus = problem < 6 ? (problem % 2 ? 24576 : 1024) : RandomGpus(rng);
    SpaceOptions o = RandomOptions(rng);
    o.max_batch = 1024;
    auto sp = StrategySpace::Make(m, gpus, o);
    ASSERT_TRUE(sp.ok());
    // Structural heads: the first five and, for MoE models, slots and overlap.
    std::vector<int> heads;
    for (int h = 0; h < StrategySpace::kFirstDim; ++h) heads.push_back(h);
    if (sp->slots_head() >= 0) heads.push_back(sp->slots_head());
    if (sp->overlap_head() >= 0) heads.push_back(sp->overlap_head());
    int64_t prefixes = 1;
    for (int h : heads) prefixes *= sp->head_size(h);
    const int first_after_dims =
        StrategySpace::kFirstDim + static_cast<int>(sp->searched_ops().size());
    int64_t nvalid = 0;
    for (int64_t f = 0; f < prefixes; ++f) {
      // Unflatten the structural heads; the dim heads get random options.
      idx.assign(sp->num_heads(), 0);
      int64_t r = f;
      for (int i = static_cast<int>(heads.size()) - 1; i >= 0; --i) {
        idx[heads[i]] = static_cast<int>(r % sp->head_size(heads[i]));
        r /= sp->head_size(heads[i]);
      }
      for (int h = StrategySpace::kFirstDim; h < first_after_dims; ++h) idx[h] = dim(rng);
      const bool valid = sp->Check(sp->Decode(idx)).ok();
      ASSERT_EQ(Producible(*sp, idx), valid) << ToText(sp->Decode(idx)) << " on " << gpus;
      nvalid += valid ? 1 : 0;
    }
    const double ndims = std::pow(3.0, static_cast<double>(sp->searched_ops().size()));
    EXPECT_DOUBLE_EQ(sp->CountValid(), static_cast<double>(nvalid) * ndims);
  }
}

TEST(StrategySpaceRandom, EncodeDecodeRoundTrip) {
  std::mt19937 rng(77);
  std::vector<int> idx, back;
  for (int problem = 0; problem < 50; ++problem) {
    const ModelSpec m = RandomModel(rng);
    auto sp = StrategySpace::Make(m, RandomGpus(rng), RandomOptions(rng));
    ASSERT_TRUE(sp.ok());
    for (int k = 0; k < 100; ++k) {
      idx.resize(sp->num_heads());
      for (int h = 0; h < sp->num_heads(); ++h) {
        idx[h] = std::uniform_int_distribution<int>(0, sp->head_size(h) - 1)(rng);
      }
      // Any index vector (valid or not) decodes to a strategy that encodes back to it.
      const Strategy s = sp->Decode(idx);
      ASSERT_TRUE(sp->Encode(s, &back)) << ToText(s);
      EXPECT_EQ(back, idx);
      EXPECT_EQ(sp->Decode(back), s);
      for (int i = 0; i < kNumOps; ++i) {
        if (!ModelHasOp(m, static_cast<Op>(i))) {
          EXPECT_EQ(s.dims[i], Dim::kNone);
        }
      }
      for (int h = 0; h < sp->num_heads(); ++h) EXPECT_NE(sp->option_name(h, idx[h]), "?");
    }
  }
}

}  // namespace
}  // namespace l2s
