// The moves of the local searcher, each checked over random valid points of several spaces
// (dense, MoE, MLA with shared experts and dense layers; the disaggregated joint space): a
// proposal is structurally valid, differs from the incumbent, and changes only what the move's
// contract names. Plus hand-derived cases of the shared helpers.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include <map>
#include "search/moves/move.h"
#include "search/moves/registry.h"
#include "search/search.h"
#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s::moves {
namespace {

struct Spaces {
  std::vector<ModelSpec> models;
  std::vector<std::unique_ptr<StrategySpace>> spaces;
  Spaces() {
    models = {testing::TinyDense(4), testing::TinyMoe(4), testing::TinyMla(3, 1)};
    const int gpus[] = {8, 8, 4};
    for (size_t i = 0; i < models.size(); ++i)
      spaces.push_back(std::make_unique<StrategySpace>(
          *StrategySpace::Make(models[i], gpus[i], SpaceOptions{.max_batch = 16})));
  }
};

std::vector<int> Sampled(const EncodedSpace& sp, Rng& rng) {
  std::vector<int> idx;
  MaskedSampler(sp).Sample(rng, &idx);
  return idx;
}

// The encoding of pp x tp (dp the rest) at `batch` with Megatron's dims, ep 1.
std::vector<int> Megatron(const StrategySpace& sp, int pp, int tp, int batch) {
  Strategy st;
  st.pp = pp;
  st.tp = tp;
  st.dp = sp.num_gpus() / (pp * tp);
  st.ep = 1;
  st.batch = batch;
  st.dims = MegatronDims();
  ClearAbsentOps(sp.model(), &st);
  std::vector<int> idx;
  EXPECT_TRUE(sp.Encode(st, &idx)) << ToText(st);
  return idx;
}

std::set<int> Changed(const std::vector<int>& a, const std::vector<int>& b) {
  std::set<int> out;
  for (size_t h = 0; h < a.size(); ++h)
    if (a[h] != b[h]) out.insert(static_cast<int>(h));
  return out;
}

TEST(Moves, RegistryHasEveryMoveOnceByName) {
  std::set<std::string_view> names;
  for (const Move* m : RegisteredMoves()) {
    EXPECT_TRUE(names.insert(m->name()).second) << m->name();
    EXPECT_EQ(FindMove(m->name()), m);
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(FindMove("nope"), nullptr);
}

TEST(Moves, EveryProposalIsValidAndDifferent) {
  Spaces s;
  Rng rng(11);
  for (const auto& space : s.spaces) {
    std::vector<std::vector<int>> elites = {Sampled(*space, rng), Sampled(*space, rng)};
    for (const Move* m : RegisteredMoves()) {
      int proposed = 0;
      for (int k = 0; k < 300; ++k) {
        const std::vector<int> start = Sampled(*space, rng);
        ASSERT_TRUE(space->Valid(start));
        std::vector<int> idx = start;
        const MoveContext ctx{*space, elites};
        if (!m->Propose(ctx, rng, &idx)) continue;
        ++proposed;
        EXPECT_TRUE(space->Valid(idx)) << m->name() << ": " << ToText(space->Decode(idx));
        EXPECT_NE(idx, start) << m->name();
      }
      EXPECT_GT(proposed, 0) << m->name() << " never proposed on " << space->model().name;
    }
  }
}

TEST(Moves, EachMoveChangesOnlyWhatItNames) {
  Spaces s;
  Rng rng(5);
  const StrategySpace& sp = *s.spaces[2];  // MLA: attention, router, MoE, shared, dense groups
  const std::vector<std::vector<int>> no_elites;
  const MoveContext ctx{sp, no_elites};
  for (int k = 0; k < 400; ++k) {
    const std::vector<int> start = Sampled(sp, rng);
    // dim: exactly one head, an operator dim.
    std::vector<int> idx = start;
    if (FindMove("dim")->Propose(ctx, rng, &idx)) {
      const std::set<int> c = Changed(start, idx);
      ASSERT_EQ(c.size(), 1u);
      EXPECT_FALSE(sp.structural(*c.begin()));
    }
    // group: only heads of one group.
    idx = start;
    if (FindMove("group")->Propose(ctx, rng, &idx)) {
      std::set<int> groups;
      for (int h : Changed(start, idx)) groups.insert(sp.group(h));
      EXPECT_EQ(groups.size(), 1u);
      EXPECT_GE(*groups.begin(), 0);
    }
    // recipe: every changed head is a dim or sp, now at one recipe's option.
    idx = start;
    if (FindMove("recipe")->Propose(ctx, rng, &idx)) {
      bool one_recipe = false;
      for (int r = 0; r < sp.num_recipes(); ++r) {
        bool all = true;
        for (int h : Changed(start, idx)) all = all && idx[h] == sp.recipe_option(h, r);
        one_recipe = one_recipe || all;
      }
      EXPECT_TRUE(one_recipe);
      for (int h : Changed(start, idx))
        EXPECT_TRUE(!sp.structural(h) || h == StrategySpace::kSp) << sp.head_name(h);
    }
    // batch: the batch head moves, the degrees stay.
    idx = start;
    if (FindMove("batch")->Propose(ctx, rng, &idx)) {
      EXPECT_NE(idx[StrategySpace::kBatch], start[StrategySpace::kBatch]);
      for (int h : {StrategySpace::kPp, StrategySpace::kTp, StrategySpace::kEp})
        EXPECT_EQ(idx[h], start[h]);
    }
    // degree: pp, tp or ep changes; no earlier head changes.
    idx = start;
    if (FindMove("degree")->Propose(ctx, rng, &idx)) {
      const int first = *Changed(start, idx).begin();
      EXPECT_TRUE(first == StrategySpace::kPp || first == StrategySpace::kTp ||
                  first == StrategySpace::kEp);
    }
  }
}

TEST(Moves, GroupsOfTheStrategySpace) {
  // TinyMla: attention's three dims share a group, each FFN pair shares one, the router, the
  // embedding and the LM head are alone; no structural head has a group.
  Spaces s;
  const StrategySpace& sp = *s.spaces[2];
  std::map<int, int> size;
  for (int h = 0; h < sp.num_heads(); ++h) {
    if (sp.structural(h)) {
      EXPECT_EQ(sp.group(h), -1) << sp.head_name(h);
      continue;
    }
    ++size[sp.group(h)];
  }
  EXPECT_EQ(size[0], 3);  // attention
  EXPECT_EQ(size[1], 2);  // MoE FFN pair
  EXPECT_EQ(size[2], 2);  // shared FFN pair
  EXPECT_EQ(size[3], 2);  // dense FFN pair
  EXPECT_EQ(size[4], 1);  // router
  EXPECT_TRUE(sp.batch(StrategySpace::kBatch));
  EXPECT_FALSE(sp.batch(StrategySpace::kTp));
}

TEST(Moves, RecipesOfTheStrategySpace) {
  // TinyMla on 4 GPUs, tp = 4: recipe 0 is Megatron's dims with sp off; recipe 1 data-parallel
  // attention: every operator over the tp group `none` but the LM head, the expert FFNs and the
  // LM head at Megatron's, sp on.
  Spaces s;
  const StrategySpace& sp = *s.spaces[2];
  const std::vector<int> idx = Megatron(sp, 1, 4, 4);
  std::vector<int> dp = idx;
  ASSERT_TRUE(ApplyRecipe(sp, 1, -2, &dp));
  const Strategy d = sp.Decode(dp);
  EXPECT_TRUE(d.sp);
  for (Op op : {Op::kEmbed, Op::kAttnQkv, Op::kAttnCore, Op::kAttnOut, Op::kMoeRouter,
                Op::kSharedFfn1, Op::kSharedFfn2, Op::kDenseFfn1, Op::kDenseFfn2})
    EXPECT_EQ(d.dim(op), Dim::kNone) << OpName(op);
  for (Op op : {Op::kMoeFfn1, Op::kMoeFfn2, Op::kLmHead})
    EXPECT_EQ(d.dim(op), MegatronDims()[static_cast<int>(op)]) << OpName(op);
  std::vector<int> back = dp;
  ASSERT_TRUE(ApplyRecipe(sp, 0, -2, &back));
  EXPECT_EQ(back, idx);  // recipe 0 is where it started: Megatron's dims, sp off
  EXPECT_FALSE(ApplyRecipe(sp, 0, -2, &back));  // nothing left to change
}

TEST(Moves, RepairNearestKeepsValidHeadsAndTakesTheNearestOption) {
  // TinyDense on 8 GPUs: pp options {1, 2, 4}, tp {1, 2, 4, 8}. pp = 4 leaves 2 GPUs per stage:
  // tp = 8 (index 3) is invalid and repairs to the nearest valid index, tp = 2 (index 1).
  Spaces s;
  const StrategySpace& sp = *s.spaces[0];
  std::vector<int> idx = Megatron(sp, 1, 8, 4);
  const std::vector<int> before = idx;
  ASSERT_TRUE(RepairNearest(sp, &idx, 0));
  EXPECT_EQ(idx, before);  // valid: unchanged
  const auto& pp = sp.pp_options();
  idx[StrategySpace::kPp] = static_cast<int>(std::find(pp.begin(), pp.end(), 4) - pp.begin());
  ASSERT_TRUE(RepairNearest(sp, &idx, 1));
  const Strategy r = sp.Decode(idx);
  EXPECT_EQ(r.pp, 4);
  EXPECT_EQ(r.tp, 2);
  EXPECT_TRUE(sp.Valid(idx));
}

}  // namespace
}  // namespace l2s::moves
