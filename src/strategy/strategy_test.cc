// Tests of the Strategy value type: names, Megatron dims, the text form and the JSON form.
#include "strategy/strategy.h"

#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strategy/strategy_json.h"

namespace l2s {
namespace {

// The canonical example of the text form (from docs/dev/STRATEGY.md): Megatron's dims.
constexpr std::string_view kExample =
    "pp=2,tp=8,dp=4,ep=32,batch=64,sp=off,embed=dim0,attn_qkv=dim1,attn_core=dim0,"
    "attn_out=dim0,moe_router=none,moe_ffn1=dim1,moe_ffn2=dim0,shared_ffn1=dim1,"
    "shared_ffn2=dim0,dense_ffn1=dim1,dense_ffn2=dim0,lm_head=dim1";

Strategy ExampleStrategy() {
  Strategy s;
  s.pp = 2;
  s.tp = 8;
  s.dp = 4;
  s.ep = 32;
  s.batch = 64;
  s.sp = false;
  s.dims = MegatronDims();
  return s;
}

Strategy RandomStrategy(std::mt19937& rng) {
  std::uniform_int_distribution<int> deg(1, 4096), batch(0, 3), dim(0, 2), coin(0, 1);
  Strategy s;
  s.pp = deg(rng);
  s.tp = deg(rng);
  s.dp = deg(rng);
  s.ep = deg(rng);
  s.batch = batch(rng) == 0 ? 0 : deg(rng);
  s.sp = coin(rng) == 1;
  for (Dim& d : s.dims) d = static_cast<Dim>(dim(rng));
  return s;
}

void ExpectOneLineMentioning(const Status& st, std::string_view what) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(what), std::string::npos)
      << "message '" << st.message() << "' should mention '" << what << "'";
}

TEST(OpNames, RoundTripAndReject) {
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    Op back{};
    ASSERT_TRUE(ParseOp(OpName(op), &back)) << OpName(op);
    EXPECT_EQ(back, op);
  }
  EXPECT_EQ(OpName(Op::kEmbed), "embed");
  EXPECT_EQ(OpName(Op::kAttnQkv), "attn_qkv");
  EXPECT_EQ(OpName(Op::kLmHead), "lm_head");
  Op op{};
  EXPECT_FALSE(ParseOp("mlp", &op));
  EXPECT_FALSE(ParseOp("", &op));
  EXPECT_FALSE(ParseOp("Embed", &op));
}

TEST(DimNames, RoundTripAndReject) {
  for (Dim d : {Dim::kDim0, Dim::kDim1, Dim::kNone}) {
    Dim back{};
    ASSERT_TRUE(ParseDim(DimName(d), &back));
    EXPECT_EQ(back, d);
  }
  EXPECT_EQ(DimName(Dim::kDim0), "dim0");
  EXPECT_EQ(DimName(Dim::kDim1), "dim1");
  EXPECT_EQ(DimName(Dim::kNone), "none");
  Dim d{};
  EXPECT_FALSE(ParseDim("dim2", &d));
  EXPECT_FALSE(ParseDim("replicated", &d));
}

TEST(MegatronDims, MatchesTheDocumentedTable) {
  const auto m = MegatronDims();
  auto at = [&m](Op op) { return m[static_cast<int>(op)]; };
  EXPECT_EQ(at(Op::kEmbed), Dim::kDim0);
  EXPECT_EQ(at(Op::kAttnQkv), Dim::kDim1);
  EXPECT_EQ(at(Op::kAttnCore), Dim::kDim0);
  EXPECT_EQ(at(Op::kAttnOut), Dim::kDim0);
  EXPECT_EQ(at(Op::kMoeRouter), Dim::kNone);
  EXPECT_EQ(at(Op::kMoeFfn1), Dim::kDim1);
  EXPECT_EQ(at(Op::kMoeFfn2), Dim::kDim0);
  EXPECT_EQ(at(Op::kSharedFfn1), Dim::kDim1);
  EXPECT_EQ(at(Op::kSharedFfn2), Dim::kDim0);
  EXPECT_EQ(at(Op::kDenseFfn1), Dim::kDim1);
  EXPECT_EQ(at(Op::kDenseFfn2), Dim::kDim0);
  EXPECT_EQ(at(Op::kLmHead), Dim::kDim1);
}

TEST(MegatronDims, PaperVariantChangesOnlyTheSecondMlpMatmuls) {
  const auto meg = MegatronDims();
  const auto paper = PaperMlpVariantDims();
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    const bool ffn2 = op == Op::kMoeFfn2 || op == Op::kSharedFfn2 || op == Op::kDenseFfn2;
    EXPECT_EQ(paper[i], ffn2 ? Dim::kDim1 : meg[i]) << OpName(op);
  }
}

TEST(StrategyStruct, DerivedCounts) {
  const Strategy s = ExampleStrategy();
  EXPECT_EQ(s.gpus_per_stage(), 32);  // tp 8 * dp 4
  EXPECT_EQ(s.gpus(), 64);            // pp 2 * 32
  EXPECT_EQ(s.etp(), 1);              // 32 GPUs per stage / ep 32
}

TEST(TextForm, CanonicalExample) {
  EXPECT_EQ(ToText(ExampleStrategy()), kExample);
  auto parsed = FromText(kExample);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, ExampleStrategy());
}

TEST(TextForm, AutoBatchAndSpOn) {
  Strategy s = ExampleStrategy();
  s.batch = 0;
  s.sp = true;
  const std::string t = ToText(s);
  EXPECT_NE(t.find(",batch=auto,sp=on,"), std::string::npos) << t;
  auto back = FromText(t);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  auto zero = FromText("batch=0");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->batch, 0);
}

TEST(TextForm, RoundTripsRandomStrategies) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const Strategy s = RandomStrategy(rng);
    const std::string t = ToText(s);
    auto back = FromText(t);
    ASSERT_TRUE(back.ok()) << t << ": " << back.status().ToString();
    EXPECT_EQ(*back, s) << t;
    EXPECT_EQ(ToText(*back), t);
  }
}

TEST(TextForm, AnyOrderAndWhitespace) {
  auto a = FromText("  lm_head = dim1 ,tp=8 ,\tbatch= 64,  ep =32, dp=4,sp=off, pp=2 ");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, ExampleStrategy());
}

TEST(TextForm, DefaultsForMissingFields) {
  auto a = FromText("tp=8");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->pp, 1);
  EXPECT_EQ(a->tp, 8);
  EXPECT_EQ(a->dp, 1);  // no GPU count given
  EXPECT_EQ(a->ep, 1);
  EXPECT_EQ(a->batch, 0);
  EXPECT_FALSE(a->sp);
  EXPECT_EQ(a->dims, MegatronDims());

  // 64 GPUs, pp=2, tp=8 -> dp = 64 / 16 = 4.
  auto b = FromText("pp=2,tp=8,attn_out=dim1", 64);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->dp, 4);
  EXPECT_EQ(b->dim(Op::kAttnOut), Dim::kDim1);
  EXPECT_EQ(b->dim(Op::kAttnQkv), Dim::kDim1);  // untouched: Megatron

  // A given dp wins over the derived one (the GPU-count check belongs to CheckStrategy).
  auto c = FromText("pp=2,tp=8,dp=2", 64);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->dp, 2);

  auto empty = FromText("", 16);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->dp, 16);

  // pp*tp = 3 does not divide 64.
  auto bad = FromText("pp=3", 64);
  ExpectOneLineMentioning(bad.status(), "dp");
}

TEST(TextForm, ErrorsNameTheKey) {
  ExpectOneLineMentioning(FromText("pp=2,foo=3").status(), "foo");
  ExpectOneLineMentioning(FromText("tp=2,tp=4").status(), "tp");
  ExpectOneLineMentioning(FromText("attn_qkv=dim1,attn_qkv=dim0").status(), "attn_qkv");
  ExpectOneLineMentioning(FromText("tp=abc").status(), "tp");
  ExpectOneLineMentioning(FromText("tp=abc").status(), "positive integer");
  ExpectOneLineMentioning(FromText("tp=0").status(), "tp");
  ExpectOneLineMentioning(FromText("ep=-2").status(), "ep");
  ExpectOneLineMentioning(FromText("dp=4x").status(), "dp");
  ExpectOneLineMentioning(FromText("pp=99999999999").status(), "pp");
  ExpectOneLineMentioning(FromText("batch=-1").status(), "batch");
  ExpectOneLineMentioning(FromText("batch=many").status(), "auto");
  ExpectOneLineMentioning(FromText("sp=yes").status(), "on or off");
  ExpectOneLineMentioning(FromText("attn_core=dim2").status(), "attn_core");
  ExpectOneLineMentioning(FromText("attn_core=dim2").status(), "dim0, dim1 or none");
  ExpectOneLineMentioning(FromText("pp").status(), "key=value");
  ExpectOneLineMentioning(FromText("pp=2,,tp=4").status(), "empty");
  ExpectOneLineMentioning(FromText("pp=2,").status(), "empty");
  ExpectOneLineMentioning(FromText("tp=").status(), "tp");
  EXPECT_EQ(FromText("tp=abc").status().code(), Status::Code::kParseError);
}

TEST(JsonForm, ExampleShape) {
  const nlohmann::json j = ToJson(ExampleStrategy());
  EXPECT_EQ(j.at("pp"), 2);
  EXPECT_EQ(j.at("tp"), 8);
  EXPECT_EQ(j.at("dp"), 4);
  EXPECT_EQ(j.at("ep"), 32);
  EXPECT_EQ(j.at("batch"), 64);
  EXPECT_EQ(j.at("sp"), false);
  EXPECT_EQ(j.at("dims").size(), static_cast<size_t>(kNumOps));
  EXPECT_EQ(j.at("dims").at("embed"), "dim0");
  EXPECT_EQ(j.at("dims").at("moe_router"), "none");
  Strategy a = ExampleStrategy();
  a.batch = 0;
  EXPECT_EQ(ToJson(a).at("batch"), "auto");
}

TEST(JsonForm, RoundTripsRandomStrategies) {
  std::mt19937 rng(11);
  for (int i = 0; i < 1000; ++i) {
    const Strategy s = RandomStrategy(rng);
    auto back = FromJson(ToJson(s));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, s);
    auto back_text = FromJsonText(ToJsonText(s));
    ASSERT_TRUE(back_text.ok()) << back_text.status().ToString();
    EXPECT_EQ(*back_text, s);
  }
}

TEST(JsonForm, DefaultsLikeTheTextForm) {
  auto a = FromJsonText(R"({"tp": 8, "pp": 2, "dims": {"dense_ffn2": "dim1"}})", 64);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->dp, 4);  // 64 / (2 * 8)
  EXPECT_EQ(a->ep, 1);
  EXPECT_EQ(a->batch, 0);
  EXPECT_EQ(a->dim(Op::kDenseFfn2), Dim::kDim1);
  EXPECT_EQ(a->dim(Op::kDenseFfn1), Dim::kDim1);
  auto t = FromText("tp=8,pp=2,dense_ffn2=dim1", 64);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*a, *t);
  ExpectOneLineMentioning(FromJsonText(R"({"pp": 3})", 64).status(), "dp");
}

TEST(JsonForm, ErrorsNameTheKey) {
  ExpectOneLineMentioning(FromJsonText(R"({"tp": "abc"})").status(), "tp");
  ExpectOneLineMentioning(FromJsonText(R"({"tp": 0})").status(), "tp");
  ExpectOneLineMentioning(FromJsonText(R"({"tp": 2.5})").status(), "tp");
  ExpectOneLineMentioning(FromJsonText(R"({"pp": 99999999999})").status(), "pp");
  ExpectOneLineMentioning(FromJsonText(R"({"batch": -4})").status(), "batch");
  ExpectOneLineMentioning(FromJsonText(R"({"batch": "lots"})").status(), "batch");
  ExpectOneLineMentioning(FromJsonText(R"({"sp": "on"})").status(), "sp");
  ExpectOneLineMentioning(FromJsonText(R"({"zz": 1})").status(), "zz");
  ExpectOneLineMentioning(FromJsonText(R"({"dims": {"mlp": "dim0"}})").status(), "mlp");
  ExpectOneLineMentioning(FromJsonText(R"({"dims": {"lm_head": "dim3"}})").status(), "lm_head");
  ExpectOneLineMentioning(FromJsonText(R"({"dims": ["dim0"]})").status(), "dims");
  ExpectOneLineMentioning(FromJsonText(R"({"tp": 2, "tp": 4})").status(), "tp");
  ExpectOneLineMentioning(FromJsonText(R"({"dims": {"embed": "dim0", "embed": "dim1"}})").status(),
                          "embed");
  ExpectOneLineMentioning(FromJsonText(R"({"tp": 2)").status(), "malformed");
  ExpectOneLineMentioning(FromJsonText("[1,2]").status(), "object");
}

}  // namespace
}  // namespace l2s
