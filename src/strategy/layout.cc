// The sharding layout algebra: strategy -> per-GPU program. See program.h for the layout
// vocabulary and docs/dev/STRATEGY.md for the meaning of each operator's choice.
#include <algorithm>
#include <cmath>

#include "model/counts.h"
#include "strategy/program.h"

namespace l2s {

const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kReplicated: return "replicated";
    case Layout::kTokens: return "split-tokens";
    case Layout::kFeatures: return "split-features";
    case Layout::kPartial: return "partial-sum";
  }
  return "?";
}

const char* CommKindName(CommKind k) {
  switch (k) {
    case CommKind::kAllReduce: return "all-reduce";
    case CommKind::kAllGather: return "all-gather";
    case CommKind::kReduceScatter: return "reduce-scatter";
    case CommKind::kAllToAll: return "all-to-all";
    case CommKind::kSendRecv: return "send/recv";
    case CommKind::kDispatch: return "moe-dispatch";
    case CommKind::kCombine: return "moe-combine";
  }
  return "?";
}

int GroupDomains(int n, int stride, int domain) {
  if (n <= 1 || domain <= 0) return 1;
  if (static_cast<long long>(stride) * n <= domain) return 1;
  if (stride >= domain) return n;
  const int per_domain = domain / stride;
  return (n + per_domain - 1) / per_domain;
}

int LayerKindIndex(const ModelSpec& m, int layer, const Program& p) {
  const LayerSpec& l = m.layers[layer];
  for (int i = 0; i < p.num_kinds; ++i)
    if (p.kinds[i] == l) return i;
  return 0;
}

int CollectLayerKinds(const ModelSpec& m, std::array<LayerKind, Program::kMaxKinds>* kinds) {
  int n = 0;
  for (const LayerSpec& l : m.layers) {
    bool found = false;
    for (int i = 0; i < n && !found; ++i) found = (*kinds)[i] == l;
    if (!found && n < Program::kMaxKinds) (*kinds)[n++] = l;
  }
  return n;
}

namespace {

// Sequences split over g GPUs: whole sequences when the count is integral (each GPU gets
// ceil(x/g)), otherwise (serve-mode chunked-prefill share) evenly divisible.
double SplitSeqs(double x, int g) {
  if (g <= 1) return x;
  if (x == std::floor(x)) return std::ceil(x / g);
  return x / g;
}

// A group the operators of one block run over.
struct Group {
  int g = 1;
  int domains = 1;
  GroupKind kind = GroupKind::kTp;
};

class Builder {
 public:
  Builder(const ModelSpec& m, const ClusterSpec& c, const Strategy& s, const StepShape& sh,
          const ProgramConfig& cfg)
      : m_(m), c_(c), s_(s), sh_(sh), cfg_(cfg) {
    const int D = c.gpus_per_domain > 0 ? c.gpus_per_domain : 8;
    const int G = s.tp * s.dp;
    tp_ = {s.tp, GroupDomains(s.tp, 1, D), GroupKind::kTp};
    etp_ = {G / std::max(1, s.ep), GroupDomains(G / std::max(1, s.ep), 1, D), GroupKind::kEtp};
    stage_ = {G, GroupDomains(G, 1, D), GroupKind::kStage};
    // The pipeline of an instance spans NVLink domains when its GPUs do: all of them for a MoE
    // model (its stages hold every dp rank, which the expert collectives join), one replica's
    // pp x tp for a dense model (its dp replicas are independent and each is placed whole).
    pipe_domains_ = (m.is_moe() ? c.num_gpus : s.pp * s.tp) > D ? 2 : 1;
    act_b_ = BytesPerElement(cfg.act);
    T_ = sh.decode_seqs * sh.decode_q + sh.prefill_seqs * sh.prefill_len;
    res_ = (s.sp && s.tp > 1) ? Layout::kTokens : Layout::kReplicated;
    tokens_split_tp_ = ComputeTokensSplit(tp_.g);
  }

  void Build(Program* p) {
    if (cfg_.kinds != nullptr) {
      p->num_kinds = std::min(cfg_.num_kinds, Program::kMaxKinds);
      std::copy(cfg_.kinds, cfg_.kinds + p->num_kinds, p->kinds.begin());
    } else {
      p->num_kinds = CollectLayerKinds(m_, &p->kinds);
    }
    p->tokens_per_rank = T_;
    p->residual = res_;
    BuildEmbed(&p->embed);
    for (int i = 0; i < p->num_kinds; ++i) BuildLayer(p->kinds[i], &p->layers[i]);
    BuildLmHead(&p->lm_head);
    BuildPipe(&p->pipe);
    BuildMtp(p);
  }

 private:
  static void Reset(Section* sec) {
    sec->num_steps = 0;
    sec->weight_bytes = 0;
    sec->kv_bytes = 0;
    sec->state_bytes = 0;
    sec->act_bytes = 0;
  }

  // Tokens per GPU when a tensor of this step's tokens is split on tokens over g GPUs.
  // Most calls split over the TP group: that value is computed once (sim_bench: the divisions
  // of SplitSeqs were ~6% of an evaluation).
  double TokensSplit(int g) const { return g == tp_.g ? tokens_split_tp_ : ComputeTokensSplit(g); }
  double ComputeTokensSplit(int g) const {
    return SplitSeqs(sh_.decode_seqs, g) * sh_.decode_q +
           PrefillSplit(sh_.prefill_seqs, g) * sh_.prefill_len;
  }
  double TokensIn(Layout l, int g) const { return l == Layout::kTokens ? TokensSplit(g) : T_; }
  // Prompts per GPU when `x` prompts are split over g GPUs: whole prompts (SplitSeqs), or, for
  // serve mode's per-step prefill share (StepShape::prefill_rate), an even split whatever x is
  // (a rate of 1.0 prompts per step is no more whole prompts than 0.99).
  double PrefillSplit(double x, int g) const {
    return sh_.prefill_rate && g > 1 ? x / g : SplitSeqs(x, g);
  }

  void Elementwise(Section* sec, Op op, const char* what, double bytes) {
    Step& st = sec->Add();
    st.kind = StepKind::kElementwise;
    st.op = op;
    st.what = what;
    st.bytes = bytes;
  }

  void Comm(Section* sec, Op op, CommKind kind, const Group& grp, double bytes, Layout from,
            Layout to) {
    Step& st = sec->Add();
    st.kind = StepKind::kComm;
    st.op = op;
    st.what = CommKindName(kind);
    st.comm = kind;
    st.group = grp.kind;
    st.group_size = grp.g;
    st.group_domains = grp.domains;
    st.comm_bytes = bytes;
    st.from = from;
    st.to = to;
  }

  // Converts a [tokens, F] activation from `from` to `to` over `grp`; `tokens` is the tensor's
  // total token count in the group. Returns the new layout.
  Layout Convert(Section* sec, Op op, Layout from, Layout to, double tokens, double F,
                 const Group& grp) {
    if (grp.g <= 1 || from == to || from == Layout::kReplicated) return to;
    const double full = tokens * F * act_b_;  // bytes of the whole tensor
    if (from == Layout::kPartial) {
      Comm(sec, op, to == Layout::kReplicated ? CommKind::kAllReduce : CommKind::kReduceScatter,
           grp, full, from, to);
    } else if (to == Layout::kReplicated) {
      Comm(sec, op, CommKind::kAllGather, grp, full, from, to);
    } else {  // tokens <-> features
      Comm(sec, op, CommKind::kAllToAll, grp, full / grp.g, from, to);
    }
    return to;
  }

  static Layout Required(Dim d) {
    switch (d) {
      case Dim::kDim0: return Layout::kFeatures;
      case Dim::kDim1: return Layout::kReplicated;
      case Dim::kNone: return Layout::kTokens;
    }
    return Layout::kReplicated;
  }
  static Layout Produced(Dim d) {
    switch (d) {
      case Dim::kDim0: return Layout::kPartial;
      case Dim::kDim1: return Layout::kFeatures;
      case Dim::kNone: return Layout::kTokens;
    }
    return Layout::kReplicated;
  }

  // How attn_core's work divides over a group of g GPUs under dim dc: heads split (dim0: it
  // leaves features), each sequence's KV split (dim1, context parallel: partial sums) or the
  // sequences divided (none: tokens); g = 1 leaves everything whole and replicated.
  struct CoreSplit {
    double heads_div = 1, kv_split = 1, dseqs = 0, pseqs = 0;
    Layout out = Layout::kReplicated;
  };
  CoreSplit SplitCore(Dim dc, int g) const {
    CoreSplit c;
    c.dseqs = sh_.decode_seqs;
    c.pseqs = sh_.prefill_seqs;
    if (g <= 1) return c;
    if (dc == Dim::kDim0) {
      c.heads_div = g;
      c.out = Layout::kFeatures;
    } else if (dc == Dim::kDim1) {
      c.kv_split = g;
      c.out = Layout::kPartial;
    } else {
      c.dseqs = SplitSeqs(c.dseqs, g);
      c.pseqs = PrefillSplit(c.pseqs, g);
      c.out = Layout::kTokens;
    }
    return c;
  }

  // The low-rank down projections of MLA-style attention (q_a, kv_a, V4's compressors) as one
  // [T, h] x [h, down_n] matmul of attn_qkv: under dim1 over g > 1 GPUs the residual is gathered
  // and every GPU computes the whole (narrow) projection; otherwise it follows the residual.
  Layout DownProjection(Section* sec, Dim dq, int g, double h, double down_n, DType wdt,
                        const char* what) {
    if (dq == Dim::kDim1 && g > 1) {
      Convert(sec, Op::kAttnQkv, res_, Layout::kReplicated, T_, h, tp_);
      Matmul(sec, Op::kAttnQkv, dq, Layout::kReplicated, T_, T_, h, down_n, wdt,
             Group{1, 1, GroupKind::kTp}, 1, what);
      return Layout::kReplicated;
    }
    return Matmul(sec, Op::kAttnQkv, dq, res_, T_, TokensSplit(g), h, down_n, wdt, tp_, 1, what);
  }

  // A matmul [tokens, K] x [K, N] sharded by `d` over `grp`, `count` instances (experts) each
  // seeing `tokens` rows (for experts: rows per expert). `fixed_bytes` = weight bytes per GPU that
  // do not scale with the split (e.g. MLA down-projections replicated under dim1).
  Layout Matmul(Section* sec, Op op, Dim d, Layout in, double tokens, double tokens_split,
                double K, double N, DType wdt, const Group& grp, double count = 1,
                const char* what = "gemm") {
    const int g = grp.g;
    const Layout arrived = in;
    if (g > 1) in = Convert(sec, op, in, Required(d), tokens * (count > 1 ? count : 1), K, grp);
    Step& st = sec->Add();
    st.from = arrived;
    st.to = g <= 1 ? Layout::kReplicated : Produced(d);
    st.group_size = g;
    st.kind = StepKind::kGemm;
    st.op = op;
    st.what = what;
    st.count = count;
    st.wdtype = wdt;
    const double wb = BytesPerElement(wdt);
    if (g <= 1) {
      st.m = tokens; st.n = N; st.k = K;
      st.weight_bytes = K * N * wb * count;
    } else if (d == Dim::kDim0) {
      st.m = tokens; st.n = N; st.k = std::ceil(K / g);
      st.weight_bytes = std::ceil(K / g) * N * wb * count;
    } else if (d == Dim::kDim1) {
      st.m = tokens; st.n = std::ceil(N / g); st.k = K;
      st.weight_bytes = K * std::ceil(N / g) * wb * count;
    } else {
      st.m = tokens_split; st.n = N; st.k = K;
      st.weight_bytes = K * N * wb * count;
    }
    st.flops = 2.0 * st.m * st.n * st.k * st.count;
    sec->weight_bytes += st.weight_bytes;
    sec->act_bytes = std::max(sec->act_bytes, st.m * st.count * (st.n + st.k) * act_b_);
    return g <= 1 ? Layout::kReplicated : Produced(d);
  }

  // Attention projections: bf16 where the checkpoint keeps them unquantised (the model's
  // quantisation flags), and in FP4 deployments of MoE models (NVIDIA's NVFP4 MoE checkpoints
  // exclude self_attn, e.g. DeepSeek-R1-FP4, measurements-scale.csv row 211; dense FP4
  // checkpoints such as Llama-3.3-70B-FP4 quantise attention too).
  DType AttnDtype() const {
    if (m_.attention_unquantized) return DType::kBF16;
    if (cfg_.weight == DType::kFP4 && m_.is_moe()) return DType::kBF16;
    return cfg_.weight;
  }

  void BuildEmbed(Section* sec) {
    Reset(sec);
    AppendEmbed(sec);
  }

  void AppendEmbed(Section* sec) {
    const double h = m_.hidden_size, V = m_.vocab_size;
    const Dim d = s_.dim(Op::kEmbed);
    const int g = tp_.g;
    const double wb = BytesPerElement(DType::kBF16);  // embeddings stay bf16 (not quantised)
    Layout out = Layout::kReplicated;
    double rows = T_, cols = h, table = V * h * wb;
    if (g > 1) {
      if (d == Dim::kDim0) { table = std::ceil(V / g) * h * wb; rows = T_; out = Layout::kPartial; }
      if (d == Dim::kDim1) { table = V * std::ceil(h / g) * wb; cols = std::ceil(h / g); out = Layout::kFeatures; }
      if (d == Dim::kNone) { rows = TokensSplit(g); out = Layout::kTokens; }
    }
    Elementwise(sec, Op::kEmbed, "lookup", rows * cols * act_b_ * 2);
    sec->weight_bytes += table;
    Convert(sec, Op::kEmbed, out, res_, T_, h, tp_);
  }

  void Norm(Section* sec, Op op, const char* what) {
    Elementwise(sec, op, what, TokensIn(res_, tp_.g) * m_.hidden_size * act_b_ * 3);
  }

  void BuildAttention(const LayerKind& kind, Section* sec) {
    if (m_.compressed_kv()) return BuildV4Attention(kind, sec);
    const double h = m_.hidden_size;
    const int g = tp_.g;
    const DType wdt = AttnDtype();
    const bool mla = m_.attention == AttentionKind::kMla;
    const double H = m_.num_heads;
    const double KVH = mla ? 1 : m_.kv_heads_of(kind);
    const double hd = mla ? m_.qk_nope_head_dim + m_.qk_rope_head_dim : m_.head_dim_of(kind);
    const double vhd = mla ? m_.v_head_dim : m_.head_dim_of(kind);
    const double latent = m_.kv_lora_rank, rope = m_.qk_rope_head_dim;
    // Sparse (DSA) layers: an indexer (index_heads x index_head_dim queries from the q latent,
    // one shared key and per-head weights from the hidden state) picks index_topk keys.
    const bool sparse = kind.mixer == Mixer::kSparse;
    const bool indexer = sparse && !kind.shared_indexer;
    const double ih = indexer ? m_.index_heads : 0, ihd = indexer ? m_.index_head_dim : 0;
    const double qmul = m_.gated_attention ? 2 : 1;    // q_proj also emits the output gate
    const double kvmul = kind.k_eq_v ? 1 : 2;          // V from the K projection: no v_proj

    Norm(sec, Op::kAttnQkv, "norm");
    // --- attn_qkv ---
    const Dim dq = s_.dim(Op::kAttnQkv);
    Layout l;
    double qkv_width;  // features of the qkv output tensor (whole)
    if (!mla) {
      qkv_width = (qmul * H + kvmul * KVH) * hd;
      // With dim1 and fewer KV heads than GPUs, each GPU also computes the one KV head it needs.
      double n_total = qkv_width;
      if (g > 1 && dq == Dim::kDim1 && KVH < g) n_total = (qmul * H + kvmul * g) * hd;
      l = Matmul(sec, Op::kAttnQkv, dq, res_, T_, TokensSplit(g), qkv_input_ * h, n_total, wdt,
                 tp_, 1, "qkv");
      if (m_.attention_bias) sec->weight_bytes += qkv_width * BytesPerElement(DType::kBF16);
    } else {
      // MLA projections: down-projections q_a [h, q_lora] and kv_a [h, latent+rope], then the
      // per-head up-projections q_b [q_lora, H*(nope+rope)] and kv_b [latent, H*(nope+v)] (kv_b is
      // absorbed into q / o in decode; the work is the same order). Under dim1 the small
      // down-projections are computed whole on every GPU (as the engines do); otherwise they
      // follow the op's dim like any matmul.
      const double qr = m_.q_lora_rank;
      const double nope = m_.qk_nope_head_dim;
      // The indexer's key and head weights (wk, weights_proj) read the hidden state like the
      // down-projections; its queries (wq_b) read the q latent like q_b.
      const double down_n = (qr > 0 ? qr : 0) + latent + rope + ihd + ih;
      qkv_width = H * (hd + nope + vhd) + ih * ihd;
      const Layout ld = DownProjection(sec, dq, g, h, down_n, wdt, "q_a+kv_a");
      if (qr > 0) {
        l = Matmul(sec, Op::kAttnQkv, dq, ld, T_, TokensSplit(g), qr, H * hd, wdt, tp_, 1, "q_b");
      } else {
        l = Matmul(sec, Op::kAttnQkv, dq, res_, T_, TokensSplit(g), h, H * hd, wdt, tp_, 1, "q_proj");
      }
      Matmul(sec, Op::kAttnQkv, dq, ld, T_, TokensSplit(g), latent, H * (nope + vhd), wdt, tp_, 1,
             "kv_b");
      if (indexer)
        Matmul(sec, Op::kAttnQkv, dq, ld, T_, TokensSplit(g), qr > 0 ? qr : h, ih * ihd, wdt, tp_,
               1, "idx_q");
    }
    // --- attn_core ---
    const Dim dc = s_.dim(Op::kAttnCore);
    if (g > 1) l = Convert(sec, Op::kAttnCore, l, Required(dc), T_, qkv_width, tp_);
    const CoreSplit cs = SplitCore(dc, g);
    const double heads = H / cs.heads_div, dseqs = cs.dseqs, pseqs = cs.pseqs;
    const double kvh = cs.heads_div > 1 ? (mla ? 1 : (KVH >= g ? KVH / g : 1)) : KVH;
    const double kvlen = sh_.decode_kv_len;
    const double kv_split = cs.kv_split;
    const Layout out = cs.out;
    // Sparse layers attend at most index_topk keys: a window of index_topk for the cost (the
    // latent cache still holds every token, below).
    const double win = sparse ? m_.index_topk : kind.window;
    const DType kvdt = cfg_.kv;
    const double kvb = BytesPerElement(kvdt);
    const double per_tok_per_layer = mla ? (latent + rope) * kvb : 2 * kvh * hd * kvb;
    if (indexer) Indexer(sec, dseqs, pseqs, kvlen / kv_split, heads / H * ih, ihd);
    if (dseqs > 0) {
      Step& st = sec->Add();
      st.kind = StepKind::kAttnDecode;
      st.op = Op::kAttnCore;
      st.what = mla ? "mla-decode" : "attn-decode";
      // q_len = decode_q query tokens per sequence (K + 1 under MTP verification) attend the same
      // keys: the kernels fold them into the query-head dimension (see Simulator::StepSeconds).
      st.seqs = dseqs; st.q_len = sh_.decode_q;
      st.kv_len = (sparse ? std::min(kvlen, win) : kvlen) / kv_split;
      st.heads = heads; st.kv_heads = kvh; st.head_dim = hd; st.v_head_dim = vhd;
      st.window = win > 0 ? win / kv_split : 0;
      st.mla = mla; st.latent_dim = latent; st.rope_dim = rope; st.kvdtype = kvdt;
      const double keys = win > 0 ? std::min(kvlen, win) / kv_split : kvlen / kv_split;
      st.flops = (mla ? 2.0 * dseqs * keys * heads * (2 * latent + rope)
                      : 4.0 * dseqs * keys * heads * hd) * sh_.decode_q;
    }
    if (pseqs > 0 && g > 1 && dc == Dim::kNone && sh_.prefill_rate) {
      // Token-divided prefill: serve mode's fractional prompt share split evenly over the group
      // divides the tokens of one prompt's chunk among its GPUs (whole prompts would not split
      // evenly), and each GPU's queries attend that prompt's earlier keys, which the other GPUs
      // computed: the share's KV (and the indexer's keys) is all-gathered over the group (a
      // ring-attention exchange moves the same bytes), which also leaves the whole sequence's KV
      // on the GPU that decodes it. docs/dev/COST_MODEL.md "Token-divided attention".
      const double plen = kind.window > 0 ? std::min(sh_.prefill_len, win) : sh_.prefill_len;
      Comm(sec, Op::kAttnCore, CommKind::kAllGather, tp_,
           sh_.prefill_seqs * plen * (per_tok_per_layer + ihd * kvb), Layout::kTokens,
           Layout::kTokens);
    }
    if (pseqs > 0) {
      Step& st = sec->Add();
      st.kind = StepKind::kAttnPrefill;
      st.op = Op::kAttnCore;
      st.what = mla ? "mla-prefill" : "attn-prefill";
      // Splitting each sequence's keys over g GPUs divides the work like splitting heads.
      st.seqs = pseqs; st.q_len = sh_.prefill_len; st.kv_len = sh_.prefill_len;
      st.heads = heads / kv_split; st.kv_heads = std::max(1.0, kvh / kv_split);
      st.head_dim = hd; st.v_head_dim = vhd; st.window = win;
      st.mla = mla; st.latent_dim = latent; st.rope_dim = rope; st.kvdtype = kvdt;
      const double L = sh_.prefill_len;
      const double keys_avg = win > 0 ? std::min(L / 2, win) : L / 2;  // causal average
      st.flops = 2.0 * pseqs * L * keys_avg * st.heads * (hd + vhd);
    }
    // KV cache held per GPU for this layer.
    const double hold = sh_.kv_hold_len > 0 ? sh_.kv_hold_len : sh_.decode_kv_len;
    const double hold_eff = kind.window > 0 ? std::min(hold, win) : hold;
    const double plen_eff = kind.window > 0 ? std::min(sh_.prefill_len, win) : sh_.prefill_len;
    const double kv_tokens = dseqs * hold_eff / kv_split + pseqs * plen_eff / kv_split;
    sec->kv_bytes += kv_tokens * (per_tok_per_layer + ihd * kvb);  // + the indexer's key cache
    if (m_.gated_attention)
      Elementwise(sec, Op::kAttnOut, "output-gate", TokensIn(out, g) * H * vhd / (out ==
                  Layout::kFeatures ? g : 1) * act_b_ * 3);
    // --- attn_out ---
    l = Matmul(sec, Op::kAttnOut, s_.dim(Op::kAttnOut), out, T_, TokensSplit(g), H * vhd, h, wdt,
               tp_, 1, "o_proj");
    if (m_.attention_sinks) sec->weight_bytes += H * BytesPerElement(DType::kBF16) / std::max(1, g);
    if (m_.attention_bias) sec->weight_bytes += h * BytesPerElement(DType::kBF16);
    Convert(sec, Op::kAttnOut, l, res_, T_, h, tp_);
    Elementwise(sec, Op::kAttnOut, "residual-add", TokensIn(res_, g) * h * act_b_ * 3);
  }

  // Two-matmul MLP over the tp group (dense FFN or shared experts); returns the output layout.
  Layout Mlp(Section* sec, Op op1, Op op2, double ffn, double n_mats_in) {
    const double h = m_.hidden_size;
    const int g = tp_.g;
    const double n1 = ffn * n_mats_in;
    Layout l = Matmul(sec, op1, s_.dim(op1), res_, T_, TokensSplit(g), h, n1, cfg_.weight, tp_, 1,
                      "up");
    const double cols = s_.dim(op1) == Dim::kDim1 && g > 1 ? std::ceil(ffn / g) : ffn;
    const double rows = s_.dim(op1) == Dim::kNone && g > 1 ? TokensSplit(g) : T_;
    Elementwise(sec, op1, "activation", rows * cols * act_b_ * (n_mats_in + 1));
    return Matmul(sec, op2, s_.dim(op2), l, T_, TokensSplit(g), ffn, h, cfg_.weight, tp_, 1,
                  "down");
  }

  void BuildMoe(Section* sec) {
    const double hidden = m_.hidden_size;
    // Latent MoE: experts (and dispatch / combine) work in moe_latent_size.
    const double h = static_cast<double>(ExpertWidth(m_));
    // Zero-computation experts: the router scores E + Z experts; a token's top-k copies go to
    // real experts k E / (E + Z) times on average (counts.h), identity experts cost nothing.
    const double E = m_.num_experts, Z = m_.num_zero_experts;
    const double k = m_.experts_per_token * E / (E + Z);
    const int g = tp_.g, ep = s_.ep, etp = etp_.g;
    const double n_in = m_.gated_ffn ? 2 : 1;
    // Tensor-parallel MoE (dp = 1: the ep x etp expert GPUs are the tp group; residual
    // replicated): every GPU keeps all of its rank's tokens, so neither the experts' column/row
    // slices need a gather nor the ep ranks a dispatch (each runs its own experts' copies of the
    // tokens it holds); the routed and shared experts' partial sums are added and reduced once
    // (vLLM, SGLang and TensorRT-LLM without attention data parallelism: one all-reduce per MoE
    // block). Otherwise the tokens are divided over tp after the router and gathered over the
    // expert group, or dispatched to the ep ranks.
    const bool tp_moe = ep * etp == g && g > 1 && res_ == Layout::kReplicated;
    // Router (bf16 weights): routing decisions end split on tokens over tp, or replicated in a
    // tensor-parallel MoE, where a whole-weights router scores every token on every GPU.
    const Dim dr = s_.dim(Op::kMoeRouter);
    if (tp_moe && dr == Dim::kNone) {
      Matmul(sec, Op::kMoeRouter, Dim::kNone, Layout::kReplicated, T_, T_, hidden, E + Z,
             DType::kBF16, Group{1, 1, GroupKind::kTp}, 1, "router");
    } else {
      Layout lr = Matmul(sec, Op::kMoeRouter, dr, res_, T_, TokensSplit(g), hidden, E + Z,
                         DType::kBF16, tp_, 1, "router");
      Convert(sec, Op::kMoeRouter, lr, tp_moe ? Layout::kReplicated : Layout::kTokens, T_, E + Z,
              tp_);
    }
    // Each GPU owns TokensSplit(tp) tokens of its dp rank (a free slice when replicated), or all
    // of them in a tensor-parallel MoE.
    const double own = tp_moe ? T_ : TokensSplit(g);
    if (m_.moe_latent_size > 0)
      Matmul(sec, Op::kMoeRouter, Dim::kNone, Layout::kReplicated, own, own, hidden, h,
             cfg_.weight, Group{1, 1, GroupKind::kTp}, 1, "fc1_latent");
    const double stage_tokens = T_ * s_.dp;
    const double imb = cfg_.expert_imbalance;
    double copies_rank;    // token copies handled by one ep rank (its etp GPUs together)
    double pre_tokens;     // tokens of the tensor entering the expert FFN over the etp group
    if (ep > 1) {
      if (!tp_moe) {
        // Dispatch payload per element (cfg_.dispatch, set by the simulator from the dtype: bf16,
        // FP8, or FP4 for FP4 experts on Blackwell); the combine returns bf16.
        const double disp_b = BytesPerElement(cfg_.dispatch);
        if (cfg_.moe_gather) {
          // Every GPU gathers the stage's tokens (bf16 activations): the gathered output is
          // stage_tokens x h.
          Comm(sec, Op::kMoeFfn1, CommKind::kAllGather, stage_, stage_tokens * h * act_b_,
               Layout::kTokens, Layout::kTokens);
        } else {
          Comm(sec, Op::kMoeFfn1, CommKind::kDispatch, stage_, own * k * h * disp_b,
               Layout::kTokens, Layout::kTokens);
          sec->steps[sec->num_steps - 1].fanout = k;
        }
      }
      copies_rank = stage_tokens * k / ep * imb;
      // Replicated tokens: each ep rank picks its experts' copies from all of them.
      pre_tokens = tp_moe ? stage_tokens : copies_rank;
    } else {
      copies_rank = stage_tokens * k;
      pre_tokens = stage_tokens;  // tokens are only gathered, one copy each
    }
    // Expert slots held by one ep rank: E / ep, or slots / ep with redundant experts (each
    // redundant slot is a full copy of an expert's weights).
    const double local_experts = (s_.slots > 0 ? s_.slots : E) / ep;
    const double per_expert = copies_rank / local_experts;  // rows per expert GEMM
    // moe_ffn1 over the etp group.
    const Dim d1 = s_.dim(Op::kMoeFfn1), d2 = s_.dim(Op::kMoeFfn2);
    Layout l = tp_moe ? Layout::kReplicated : Layout::kTokens;
    if (etp > 1) l = Convert(sec, Op::kMoeFfn1, l, Required(d1), pre_tokens, h, etp_);
    l = Matmul(sec, Op::kMoeFfn1, d1, etp > 1 ? l : Layout::kReplicated, per_expert,
               per_expert / std::max(1, etp), h, m_.expert_ffn_size * n_in, cfg_.weight,
               Group{1, 1, GroupKind::kEtp}, local_experts, "experts-up");
    FixExpertSplit(sec, d1, etp, /*first=*/true);
    ActiveExpertsOnly(sec, local_experts, copies_rank);
    if (etp > 1) l = Produced(d1);
    const double cols = (d1 == Dim::kDim1 && etp > 1) ? std::ceil(m_.expert_ffn_size / etp) : m_.expert_ffn_size;
    const double rows = (d1 == Dim::kNone && etp > 1) ? copies_rank / etp : copies_rank;
    Elementwise(sec, Op::kMoeFfn1, "activation", rows * cols * act_b_ * (n_in + 1));
    if (etp > 1) l = Convert(sec, Op::kMoeFfn2, l, Required(d2), copies_rank, m_.expert_ffn_size, etp_);
    l = Matmul(sec, Op::kMoeFfn2, d2, etp > 1 ? l : Layout::kReplicated, per_expert,
               per_expert / std::max(1, etp), m_.expert_ffn_size, h, cfg_.weight,
               Group{1, 1, GroupKind::kEtp}, local_experts, "experts-down");
    FixExpertSplit(sec, d2, etp, /*first=*/false);
    ActiveExpertsOnly(sec, local_experts, copies_rank);
    const int down_step = sec->num_steps - 1;
    if (tp_moe) {
      // The output joins the block's partial sum as it is (a feature slice is a partial sum that
      // is zero elsewhere).
      l = Layout::kPartial;
    } else if (etp > 1) {
      // Copies return split on tokens inside the ep rank; with ep = 1 the k copies of a token are
      // summed locally first, so only the tokens travel.
      l = Convert(sec, Op::kMoeFfn2, Produced(d2), Layout::kTokens,
                  ep > 1 ? copies_rank : stage_tokens, h, etp_);
    } else {
      l = Layout::kTokens;
    }
    if (ep > 1 && !tp_moe && cfg_.moe_gather) {
      // Each GPU's outputs for all the stage's tokens (zero where its experts were not chosen)
      // are summed and scattered back to the tokens' owners: the full input is stage_tokens x h.
      Comm(sec, Op::kMoeFfn2, CommKind::kReduceScatter, stage_, stage_tokens * h * act_b_,
           Layout::kTokens, Layout::kTokens);
    } else if (ep > 1 && !tp_moe) {
      Comm(sec, Op::kMoeFfn2, CommKind::kCombine, stage_, own * k * h * 2.0, Layout::kTokens,
           Layout::kTokens);
      sec->steps[sec->num_steps - 1].fanout = k;
      // Single-batch overlap: the combine of finished expert tiles streams out while the down
      // projection computes the rest (SGLang/DeepEP's SBO), so the two run concurrently.
      if (s_.overlap == Overlap::kSbo) sec->steps[sec->num_steps - 1].hides_under = down_step;
    }
    Elementwise(sec, Op::kMoeFfn2, "weighted-sum", own * k * h * act_b_);
    if (m_.moe_latent_size > 0)
      Matmul(sec, Op::kMoeFfn2, Dim::kNone, Layout::kReplicated, own, own, h, hidden, cfg_.weight,
             Group{1, 1, GroupKind::kTp}, 1, "fc2_latent");
    if (m_.num_shared_experts > 0) {
      Layout ls = Mlp(sec, Op::kSharedFfn1, Op::kSharedFfn2,
                      m_.shared_ffn_size * m_.num_shared_experts, n_in);
      // Added split on tokens, or in a tensor-parallel MoE into the partial sum (whatever the
      // shared experts' dims: each operator group's cost depends on its own dims only).
      if (!tp_moe) Convert(sec, Op::kSharedFfn2, ls, Layout::kTokens, T_, hidden, tp_);
      Elementwise(sec, Op::kSharedFfn2, "shared-add", TokensIn(l, g) * hidden * act_b_ * 3);
    }
    Convert(sec, Op::kMoeFfn2, l, res_, T_, hidden, tp_);
  }

  // A step routes `copies` token copies to a rank's `local` expert slots; only the slots that
  // receive at least one run their GEMM and read their weights. With copies landing uniformly
  // the expected number hit is local (1 - (1 - 1/local)^copies) (all of them once copies >> local;
  // about `copies` of them at small decode batches). Every slot's weights stay resident, so the
  // step's weight_bytes (memory) are kept; the same rows spread over fewer, taller GEMMs.
  static void ActiveExpertsOnly(Section* sec, double local, double copies) {
    if (local <= 1 || !(copies > 0)) return;
    const double active = local * (1.0 - std::pow(1.0 - 1.0 / local, copies));
    Step& st = sec->steps[sec->num_steps - 1];
    if (!(active > 0) || active >= st.count) return;
    st.m *= st.count / active;
    st.count = active;
  }

  // Matmul() above was told the group is 1 (so it charges the whole expert); apply the etp split.
  void FixExpertSplit(Section* sec, Dim d, int etp, bool first) {
    if (etp <= 1) return;
    Step& st = sec->steps[sec->num_steps - 1];
    const double old_w = st.weight_bytes;
    if (d == Dim::kDim0) {
      st.k = std::ceil(st.k / etp);
      st.weight_bytes /= etp;
    } else if (d == Dim::kDim1) {
      st.n = std::ceil(st.n / etp);
      st.weight_bytes /= etp;
    } else {
      st.m = st.m / etp;
    }
    (void)first;
    st.flops = 2.0 * st.m * st.n * st.k * st.count;
    sec->weight_bytes += st.weight_bytes - old_w;
    // Matmul recorded this step's activation before the split: recompute the section's largest
    // activation from the final steps (what Simulator::ComputeOpTotals attributes per operator).
    sec->act_bytes = 0;
    for (int i = 0; i < sec->num_steps; ++i) {
      const Step& s = sec->steps[i];
      if (s.kind == StepKind::kGemm)
        sec->act_bytes = std::max(sec->act_bytes, s.m * s.count * (s.n + s.k) * act_b_);
    }
  }

  // DSA indexer (attn_core): per query, `heads` index heads score every key of the indexer's
  // key cache (one key of `dim` per token, shared by the heads, at the KV dtype); a memory-bound
  // scan in decode, compute-bound in prefill (scores at the fp8 rate, as DeepSeek's kernels).
  // DeepSeek-V4 attention (model.h compressed_kv; docs/MODELS.md): the MLA steps with V4's
  // projections. q_a [h, q_lora] and the KV / compressor / indexer-weight down-projections read
  // the hidden state, q_b and the indexer's queries the q latent; the core attends the window plus
  // the pooled entries (AttendedKeys) over one head_dim vector per key, costed as MLA decode over
  // a latent of head_dim - rope plus rope and as MLA prefill scaled by the keys attended; the
  // output goes through o_groups grouped low-rank wo_a (block-diagonal: local when heads are
  // split) and wo_b. The hc_mult residual streams are read and rewritten around both sublayers.
  void BuildV4Attention(const LayerKind& kind, Section* sec) {
    const double h = m_.hidden_size;
    const int g = tp_.g;
    const DType wdt = AttnDtype();
    const double H = m_.num_heads, hd = m_.head_dim, rope = m_.qk_rope_head_dim;
    const double latent = hd - rope, qr = m_.q_lora_rank;
    const double orank = m_.o_lora_rank, G = m_.o_groups;
    const double r = kind.compress_ratio, coff = kind.compress_ratio == 4 ? 2 : 1;
    const bool indexer = kind.mixer == Mixer::kSparse && !kind.shared_indexer;
    const double ih = indexer ? m_.index_heads : 0, ihd = indexer ? m_.index_head_dim : 0;

    Norm(sec, Op::kAttnQkv, "norm");
    if (m_.hc_mult > 1)
      Elementwise(sec, Op::kAttnQkv, "hyper-connections",
                  2.0 * TokensIn(res_, g) * m_.hc_mult * h * act_b_ * 2);
    // --- attn_qkv ---
    const Dim dq = s_.dim(Op::kAttnQkv);
    const double down_n = qr + hd + (r > 0 ? 2 * coff * hd : 0) + (indexer ? ih + 2 * coff * ihd : 0);
    const Layout ld = DownProjection(sec, dq, g, h, down_n, wdt, "q_a+kv+compressor");
    Layout l = Matmul(sec, Op::kAttnQkv, dq, ld, T_, TokensSplit(g), qr, H * hd, wdt, tp_, 1, "q_b");
    if (indexer)
      Matmul(sec, Op::kAttnQkv, dq, ld, T_, TokensSplit(g), qr, ih * ihd, wdt, tp_, 1, "idx_q");
    const double qkv_width = H * hd + ih * ihd;
    // --- attn_core ---
    const Dim dc = s_.dim(Op::kAttnCore);
    if (g > 1) l = Convert(sec, Op::kAttnCore, l, Required(dc), T_, qkv_width, tp_);
    const CoreSplit cs = SplitCore(dc, g);
    const double heads = H / cs.heads_div, dseqs = cs.dseqs, pseqs = cs.pseqs;
    const double kvlen = sh_.decode_kv_len;
    const double kv_split = cs.kv_split;
    const Layout out = cs.out;
    const DType kvdt = cfg_.kv;
    const double kvb = BytesPerElement(kvdt);
    const double win = kind.window;
    // Bytes one sequence of `len` tokens holds in this layer: the window's vectors and the pooled
    // entries (with the indexer's keys).
    auto held = [&](double len) {
      const double w = win > 0 ? std::min(len, win) : len;
      return w * hd * kvb + (r > 0 ? std::floor(len / r) * (hd + ihd) * kvb : 0.0);
    };
    const double L = sh_.prefill_len;
    if (indexer) Indexer(sec, dseqs, pseqs, std::floor(kvlen / r) / kv_split, heads / H * ih, ihd, r);
    if (dseqs > 0) {
      const double keys = AttendedKeys(m_, kind, std::llround(kvlen), /*decode=*/true) / kv_split;
      Step& st = sec->Add();
      st.kind = StepKind::kAttnDecode;
      st.op = Op::kAttnCore;
      st.what = "v4-decode";
      st.seqs = dseqs; st.q_len = sh_.decode_q;
      st.kv_len = keys;
      st.heads = heads; st.kv_heads = 1; st.head_dim = hd; st.v_head_dim = hd;
      st.mla = true; st.latent_dim = latent; st.rope_dim = rope; st.kvdtype = kvdt;
      st.flops = 4.0 * dseqs * keys * heads * hd * sh_.decode_q;
    }
    if (pseqs > 0 && g > 1 && dc == Dim::kNone && sh_.prefill_rate) {
      // Token-divided prefill: the share's KV is all-gathered over the group (as in
      // BuildAttention).
      Comm(sec, Op::kAttnCore, CommKind::kAllGather, tp_, sh_.prefill_seqs * held(L),
           Layout::kTokens, Layout::kTokens);
    }
    if (pseqs > 0) {
      const double keys = AttendedKeys(m_, kind, std::llround(L), /*decode=*/false);
      Step& st = sec->Add();
      st.kind = StepKind::kAttnPrefill;
      st.op = Op::kAttnCore;
      st.what = "v4-prefill";
      st.seqs = pseqs; st.q_len = L; st.kv_len = L; st.keys = std::max(keys, 1e-9);
      st.heads = heads / kv_split; st.kv_heads = 1;
      st.head_dim = hd; st.v_head_dim = hd;
      st.mla = true; st.latent_dim = latent; st.rope_dim = rope; st.kvdtype = kvdt;
      st.flops = 2.0 * pseqs * L * keys * st.heads * (hd + hd);
    }
    const double hold = sh_.kv_hold_len > 0 ? sh_.kv_hold_len : sh_.decode_kv_len;
    sec->kv_bytes += (dseqs * held(hold) + pseqs * held(L)) / kv_split;
    // --- attn_out: wo_a per group of heads, then wo_b ---
    const Dim dout = s_.dim(Op::kAttnOut);
    if (g > 1 && dout == Dim::kDim0 && out == Layout::kFeatures) {
      // Heads already split by group: each GPU projects its own groups (G / g of them).
      Matmul(sec, Op::kAttnOut, Dim::kDim1, Layout::kReplicated, T_, T_, H * hd / G, orank, wdt,
             Group{1, 1, GroupKind::kTp}, G / g, "wo_a");
      l = Layout::kFeatures;
    } else {
      l = Matmul(sec, Op::kAttnOut, dout, out, T_, TokensSplit(g), H * hd / G, orank, wdt, tp_, G,
                 "wo_a");
    }
    l = Matmul(sec, Op::kAttnOut, dout, l, T_, TokensSplit(g), G * orank, h, wdt, tp_, 1, "wo_b");
    if (m_.attention_sinks) sec->weight_bytes += H * BytesPerElement(DType::kBF16) / std::max(1, g);
    Convert(sec, Op::kAttnOut, l, res_, T_, h, tp_);
    Elementwise(sec, Op::kAttnOut, "residual-add", TokensIn(res_, g) * h * act_b_ * 3);
  }

  // The DSA / DeepSeek-V4 indexer: decode scans `keys` keys per sequence; prefill scores, per
  // query, the (L + 1) / 2 earlier keys on average, pooled every `ratio` tokens (V4).
  void Indexer(Section* sec, double dseqs, double pseqs, double keys, double heads, double dim,
               double ratio = 1) {
    const double kvb = BytesPerElement(cfg_.kv);
    if (dseqs > 0) {
      Step& st = Stream(sec, "indexer-decode", DType::kFP8, dseqs, dseqs * keys * dim * kvb,
                        2.0 * dseqs * keys * heads * dim);
      st.kv_len = keys;
    }
    if (pseqs > 0) {
      const double L = sh_.prefill_len;
      Step& st = Stream(sec, "indexer-prefill", DType::kFP8, pseqs,
                        pseqs * L * (dim * kvb + heads * dim * act_b_),
                        2.0 * pseqs * L * (L + 1) / 2 / ratio * heads * dim);
      st.q_len = L;
    }
  }

  // A kStream step of attn_core (roofline of `bytes` through HBM and `flops` at `dt`'s peak).
  Step& Stream(Section* sec, const char* what, DType dt, double seqs, double bytes, double flops) {
    Step& st = sec->Add();
    st.kind = StepKind::kStream;
    st.op = Op::kAttnCore;
    st.what = what;
    st.wdtype = dt;
    st.seqs = seqs;
    st.bytes = bytes;
    st.flops = flops;
    return st;
  }

  // Linear attention (gated DeltaNet) and Mamba layers: in_proj (attn_qkv), a fixed-size state
  // per sequence updated by the core (attn_core: dim0 splits heads, none splits sequences, dim1
  // cannot split a recurrence by context, so every GPU runs all heads of all its sequences),
  // out_proj (attn_out). Decode reads and writes the state once per token; prefill runs the
  // chunked scan. The state is cache memory (kv_bytes), also reported as state_bytes.
  void BuildRecurrent(const LayerKind& kind, Section* sec) {
    const double h = m_.hidden_size;
    const int g = tp_.g;
    const DType wdt = AttnDtype();
    const RecurrentShape r = RecurrentShapeOf(m_, kind);
    const double in_w = static_cast<double>(r.in_width), out_w = static_cast<double>(r.out_width);
    const bool mamba = kind.mixer == Mixer::kMamba;
    Norm(sec, Op::kAttnQkv, "norm");
    Layout l = Matmul(sec, Op::kAttnQkv, s_.dim(Op::kAttnQkv), res_, T_, TokensSplit(g), h, in_w,
                      wdt, tp_, 1, "in_proj");
    // Conv taps, decay / bias vectors, v1's x_proj and dt_proj: bf16, split with the heads.
    const double rest = static_cast<double>(MixerParams(m_, kind)) - h * in_w - out_w * h;
    const Dim dc = s_.dim(Op::kAttnCore);
    if (g > 1) l = Convert(sec, Op::kAttnCore, l, Required(dc), T_, in_w, tp_);
    double frac = 1, dseqs = sh_.decode_seqs, pseqs = sh_.prefill_seqs;
    Layout out = Layout::kReplicated;
    if (g > 1) {
      if (dc == Dim::kDim0) {
        frac = 1.0 / g;
        out = Layout::kFeatures;
      } else if (dc == Dim::kNone) {
        dseqs = SplitSeqs(dseqs, g);
        pseqs = PrefillSplit(pseqs, g);
        out = Layout::kTokens;
      }
    }
    sec->weight_bytes += std::max(0.0, rest) * BytesPerElement(DType::kBF16) * frac;
    const double heads = static_cast<double>(r.heads) * frac;
    const double dk = static_cast<double>(r.key_dim), dv = static_cast<double>(r.value_dim);
    const double conv = static_cast<double>(r.conv_dim) * frac, taps = static_cast<double>(r.conv_kernel);
    const double sb = BytesPerElement(kStateDType);
    const double state = (heads * dk * dv + conv * (taps - 1)) * sb;  // per sequence, this GPU
    if (dseqs > 0) {
      Step& st = Stream(sec, mamba ? "ssm-decode" : "deltanet-decode", DType::kBF16, dseqs,
                        dseqs * (2 * state + (in_w * frac + out_w * frac) * act_b_),
                        dseqs * (6 * heads * dk * dv + 2 * conv * taps));
      st.q_len = 1;
      st.heads = heads;
    }
    if (pseqs > 0) {
      const double L = sh_.prefill_len;
      const double c = std::min(static_cast<double>(r.chunk), L);
      const double per_tok = 4 * dk * dv + 2 * (dk + dv) * (c + 1) / 2;  // per head (counts.h)
      Step& st = sec->Add();
      st.op = Op::kAttnCore;
      st.what = mamba ? "ssm-scan" : "deltanet-scan";
      st.seqs = pseqs;
      st.q_len = L;
      st.heads = heads;
      st.flops = pseqs * L * (heads * per_tok + 2 * conv * taps);
      if (dv >= 16) {
        // Chunked scan on tensor cores: grouped GEMMs of the per-head state shape carrying the
        // same FLOPs.
        st.kind = StepKind::kScan;
        st.m = pseqs * L;
        st.n = dv;
        st.k = dk;
        st.wdtype = DType::kBF16;
        st.count = st.flops / (2.0 * st.m * dv * dk);
      } else {
        // Mamba v1's selective scan (one state row per channel): a streaming pass over its
        // inputs and outputs.
        st.kind = StepKind::kStream;
        st.wdtype = DType::kBF16;
        st.bytes = pseqs * (L * (in_w * frac + out_w * frac) * act_b_ + 2 * state);
      }
    }
    const double cache = (dseqs + pseqs) * state;
    sec->kv_bytes += cache;
    sec->state_bytes += cache;
    // Gated output norm (DeltaNet's RMSNormGated, Mamba2's gated norm) over the core's output.
    const double rows = out == Layout::kTokens ? TokensSplit(g) : T_;
    Elementwise(sec, Op::kAttnOut, "gated-norm", rows * out_w * frac * act_b_ * 3);
    l = Matmul(sec, Op::kAttnOut, s_.dim(Op::kAttnOut), out, T_, TokensSplit(g), out_w, h, wdt,
               tp_, 1, "out_proj");
    Convert(sec, Op::kAttnOut, l, res_, T_, h, tp_);
    Elementwise(sec, Op::kAttnOut, "residual-add", TokensIn(res_, g) * h * act_b_ * 3);
  }

  // DeciLM replace_with_linear sublayer: norm (charged to `first`), one hidden x hidden matmul
  // sharded by `second`'s dim, back to the residual layout, residual add.
  void LinearBlock(Section* sec, Op first, Op second, DType wdt) {
    const double h = m_.hidden_size;
    Norm(sec, first, "norm");
    Layout l = Matmul(sec, second, s_.dim(second), res_, T_, TokensSplit(tp_.g), h, h, wdt, tp_,
                      1, "linear");
    Convert(sec, second, l, res_, T_, h, tp_);
    Elementwise(sec, second, "residual-add", TokensIn(res_, tp_.g) * h * act_b_ * 3);
  }

  void BuildLayer(const LayerKind& kind, Section* sec) {
    Reset(sec);
    AppendLayer(kind, sec);
  }

  void AppendLayer(const LayerKind& kind, Section* sec) {
    if (kind.mixer == Mixer::kAttention || kind.mixer == Mixer::kSparse) {
      BuildAttention(kind, sec);
    } else if (kind.mixer != Mixer::kNone) {
      BuildRecurrent(kind, sec);
    } else if (kind.attn_linear) {
      LinearBlock(sec, Op::kAttnQkv, Op::kAttnOut, AttnDtype());
    }
    if (kind.ffn_linear) LinearBlock(sec, Op::kDenseFfn1, Op::kDenseFfn2, cfg_.weight);
    if (kind.ffn == FfnKind::kNone) return;
    // The pre-FFN norm and the closing residual add are charged to the layer's first and last FFN
    // operator (their cost depends only on the residual layout).
    const bool moe = kind.ffn == FfnKind::kMoe;
    Norm(sec, moe ? Op::kMoeRouter : Op::kDenseFfn1, "norm");
    if (moe) {
      BuildMoe(sec);
    } else {
      Layout l = Mlp(sec, Op::kDenseFfn1, Op::kDenseFfn2, static_cast<double>(m_.ffn_size_of(kind)),
                     m_.gated_ffn ? 2 : 1);
      Convert(sec, Op::kDenseFfn2, l, res_, T_, m_.hidden_size, tp_);
    }
    Elementwise(sec, moe ? Op::kMoeFfn2 : Op::kDenseFfn2, "residual-add",
                TokensIn(res_, tp_.g) * m_.hidden_size * act_b_ * 3);
  }

  void BuildLmHead(Section* sec) {
    Reset(sec);
    AppendLmHead(sec);
  }

  // The LM head over a vocabulary of `V` tokens (the model's; a draft model's own is smaller).
  void AppendLmHead(Section* sec) { AppendLmHead(sec, static_cast<double>(m_.vocab_size)); }
  void AppendLmHead(Section* sec, double V) {
    const double h = m_.hidden_size;
    const int g = tp_.g;
    // Only the last position of each prompt needs logits; every verified position of a decoding
    // sequence (decode_q of them) does.
    const double T = sh_.decode_seqs * sh_.decode_q + sh_.prefill_seqs;
    const double Ts = SplitSeqs(sh_.decode_seqs, g) * sh_.decode_q + PrefillSplit(sh_.prefill_seqs, g);
    Elementwise(sec, Op::kLmHead, "final-norm", (res_ == Layout::kTokens ? Ts : T) * h * act_b_ * 3);
    Layout l = Matmul(sec, Op::kLmHead, s_.dim(Op::kLmHead), res_, T, Ts, h, V, DType::kBF16, tp_,
                      1, "lm_head");
    // Sampling needs whole logit rows for the GPU's own tokens.
    Convert(sec, Op::kLmHead, l, Layout::kTokens, T, V, tp_);
  }

  void BuildPipe(Section* sec) {
    Reset(sec);
    if (s_.pp <= 1) return;
    const double bytes = TokensSplit(tp_.g) * m_.hidden_size * act_b_;
    Comm(sec, Op::kEmbed, CommKind::kSendRecv, Group{2, pipe_domains_, GroupKind::kPipe}, bytes,
         res_, res_);
  }

  // Speculative decoding: the draft passes of the MTP module or of the draft model
  // (Program::mtp). Built by a second Builder. A decode step drafts s.mtp tokens for each
  // sequence: s.mtp passes over a one-token-per-sequence shape. Every prompt token also runs
  // once through the draft (the draft's "extend", which fills its KV cache and drafts the first
  // token after the prefill, as vLLM, SGLang and TensorRT-LLM run it): a prefill step is one pass
  // over its prompts, whatever s.mtp (a prefill server of a speculating deployment); a serve
  // step's prefill share is spread over its s.mtp passes (one extend of it in all). Models with
  // nothing to draft with have none.
  void BuildMtp(Program* p) {
    Reset(&p->mtp);
    p->mtp_passes = 0;
    if (s_.mtp <= 0 || !m_.can_speculate() || m_.num_layers <= 0) return;
    if (sh_.decode_seqs <= 0 && sh_.prefill_seqs <= 0) return;
    StepShape one = sh_;
    one.decode_q = 1;
    const int passes = sh_.decode_seqs > 0 ? s_.mtp : 1;
    one.prefill_seqs = sh_.prefill_seqs / passes;
    if (m_.has_draft_model()) {
      ProgramConfig bf16 = cfg_;  // draft checkpoints are bf16 whatever the model's format
      bf16.weight = DType::kBF16;
      // The draft's own attention shape when its config was read; else the model's, uncopied
      // (programs are built on the simulator's hot path).
      if (m_.draft_heads > 0) {
        const ModelSpec dspec = DraftSpecOf(m_);
        Builder(dspec, c_, s_, one, bf16).DraftModelPass(&p->mtp);
      } else {
        Builder(m_, c_, s_, one, bf16).DraftModelPass(&p->mtp);
      }
    } else {
      Builder draft(m_, c_, s_, one, cfg_);
      draft.DraftPass(m_.layers.back(), &p->mtp);
    }
    p->mtp_passes = passes;
  }

  // One draft pass of an EAGLE-3 draft model (ModelSpec::draft_model), as vLLM, SGLang,
  // TensorRT-LLM and ATOM run one: the main model's embedding of the previous token; the fusion
  // of three of the main model's hidden states [T, 3h] -> [T, h] (fc, whole on every GPU); one
  // dense decoder layer (LlamaForCausalLMEagle3) of the model's attention shape and dense FFN
  // width, whose q/k/v read [embedding, hidden], 2h wide (an MLA model's draft keeps MLA's
  // projections, read on h); and the draft's own LM head over kDraftVocab tokens. Its weights are
  // its own (bf16), its embedding table the model's.
  void DraftModelPass(Section* sec) {
    const double h = m_.hidden_size;
    const double w0 = sec->weight_bytes;
    AppendEmbed(sec);
    if (s_.pp <= 1) sec->weight_bytes = w0;  // the main model's table
    const double rows = TokensIn(res_, tp_.g);
    Matmul(sec, Op::kEmbed, Dim::kNone, Layout::kReplicated, rows, rows, 3 * h, h, DType::kBF16,
           Group{1, 1, GroupKind::kTp}, 1, "fc");
    qkv_input_ = 2;
    AppendLayer(DraftLayerOf(m_), sec);
    qkv_input_ = 1;
    AppendLmHead(sec, static_cast<double>(DraftVocabOf(m_)));
  }

  // One draft pass of DeepSeek's MTP module: embed the previous token, RMS-normalise it and the
  // main model's hidden state (enorm, hnorm), project the concatenation [T, 2h] -> [T, h]
  // (eh_proj, bf16, whole on every GPU in the residual layout), one transformer layer of the
  // model's last layer kind with the strategy's dims, then the shared LM head. The embedding
  // table and the LM head are the main model's: shared on the last stage, except that with
  // pp > 1 the embedding table lives on the first stage, so the last stage holds a copy.
  void DraftPass(const LayerSpec& last, Section* sec) {
    const double h = m_.hidden_size;
    const double w0 = sec->weight_bytes;
    AppendEmbed(sec);
    if (s_.pp <= 1) sec->weight_bytes = w0;  // the main model's table
    const double rows = TokensIn(res_, tp_.g);
    Elementwise(sec, Op::kEmbed, "enorm+hnorm", 2 * rows * h * act_b_ * 3);
    Matmul(sec, Op::kEmbed, Dim::kNone, Layout::kReplicated, rows, rows, 2 * h, h, DType::kBF16,
           Group{1, 1, GroupKind::kTp}, 1, "eh_proj");
    sec->weight_bytes += 2 * h * BytesPerElement(DType::kBF16);  // enorm, hnorm (whole)
    AppendLayer(LayerKind{last.ffn, last.window}, sec);
    const int lm_first = sec->num_steps;
    const double w_lm = sec->weight_bytes;
    AppendLmHead(sec);
    // The LM head's weights are the main model's (same stage): not counted again.
    sec->weight_bytes = w_lm;
    for (int i = lm_first; i < sec->num_steps; ++i) sec->steps[i].weight_bytes = 0;
  }

  const ModelSpec& m_;
  const ClusterSpec& c_;
  const Strategy& s_;
  const StepShape& sh_;
  const ProgramConfig& cfg_;
  // The input width of a GQA q/k/v projection, in hidden sizes: 1, or 2 for an EAGLE-3 draft
  // layer, whose q/k/v read [embedding, hidden] (DraftModelPass).
  double qkv_input_ = 1;
  Group tp_, etp_, stage_;
  int pipe_domains_ = 1;
  double act_b_ = 2;
  double T_ = 0;
  double tokens_split_tp_ = 0;  // ComputeTokensSplit(tp_.g)
  Layout res_ = Layout::kReplicated;
};

}  // namespace

void BuildProgram(const ModelSpec& m, const ClusterSpec& c, const Strategy& s,
                  const StepShape& shape, const ProgramConfig& cfg, Program* out) {
  Builder(m, c, s, shape, cfg).Build(out);
}

}  // namespace l2s
