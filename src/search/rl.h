// The RL searcher: the paper's method (PAPER.md, "Policy", "Reward", "Early exit and restarts"),
// a PPO-trained attention policy over the elite history, plus three changes measured in
// docs/dev/RL_STUDY.md: prefix masking, an elite prior on the logits, and PPO/learning-rate settings.
//
// One search, step by step:
//   1. Observation: the top-T valid strategies found so far, best first, one row each:
//      [ one-hot of every head's option (K = sum of head sizes) | value / reference value ],
//      a [rows, K + 1] matrix. Padding: while fewer than T elites exist, the rows are just the
//      elites there are (mean pooling over a set makes this the same as repeating them); with no
//      elite yet the observation is one all-zero row.
//   2. Policy: pi(a_h | obs, a_<h) = softmax(net_h(obs) + prior_h(obs, a_<h)), heads sampled in
//      the space's fixed order. net is nn::PolicyNet (linear embedding -> one encoder block ->
//      mean pool -> MLP -> one categorical head per sub-action). With masking on, each head is
//      restricted to space.Mask(earlier choices), so every proposal is structurally valid
//      (memory/SLO failures remain possible). (The default's first lifetime runs the pretrained
//      nn::OptionScorer instead: "Warm start" below; rl(warm=0) is PolicyNet throughout.)
//   3. Elite prior (prior > 0; not in the paper): a fixed function of the observation and the
//      earlier choices that makes the policy a mutation distribution around the elites, which the
//      network then corrects. Per head, averaged over the elites: categorical heads (sp, dims) add
//      kappa = ln(q (n - 1) / (1 - q)) to the elite's option (probability q against n - 1 equal
//      others); ordered heads (pp, tp, ep, batch; ordinal=1) add -gamma |i - elite's option| with
//      gamma = ln(2 q / (1 - q)) (mostly one-step moves); with relbatch=1 the batch head points at
//      the batch keeping the elite's sequences per GPU (batch / tp) under the tp just chosen, so a
//      tp move follows the memory ridge. Jumps (jump = eps): the ordered heads' prior is mixed
//      with a uniform one, p = (1 - eps) p_prior + eps / n, so a degree several options away
//      stays reachable. Group moves (megadims = rho): with probability rho per proposal the prior
//      of every operator-dim head points at Megatron's dims instead of the elites' (the dims of an
//      operator group, e.g. attention's three, can then change together). q is annealed from prior0 to prior over each lifetime. It
//      applies from lifetime `prior_from` on (lifetime 0 explores as in the paper), or without
//      restarts after prior_from chunks of calls.
//   4. Every policy proposal is one Objective::Evaluate call: no cache, repeated proposals are
//      charged (sweep and descent candidates: once per search, 11. below).
//   5. Reward: raw = value / reference value (the first valid value of the search),
//      r = alpha * raw + beta * (raw - b) with b the best raw value before this proposal
//      (b = raw for the first valid one); invalid proposals get `invalid_reward`.
//   6. PPO: every `rollout` proposals, `epochs` gradient steps of the clipped surrogate with an
//      entropy bonus (the loss of nn/ppo.h over net + prior); advantage = (r - baseline) / scale,
//      baseline and scale being exponential moving averages of the reward and of its squared
//      deviation (reset with each network). Adam (gradient norm clipped at 0.5), lr
//      cosine-annealed from `lr` to 0 over one lifetime.
//   7. Elites: a valid proposal better than the worst of T elites replaces it; a strategy already
//      among the elites is never added twice. With canon=1 an elite is stored as its Canonical
//      representative (strategy/space.h: Megatron's dims on operators whose group is one GPU, sp
//      off at tp = 1; it runs identically), so dim variants of one tp = 1 strategy count once and
//      a tp = 1 -> 2 move from it is proposed with Megatron's dims (the tp = 1 plateau,
//      docs/dev/RL_STUDY.md).
//   8. Restarts: the budget is cut into `chunks` network lifetimes of ceil(budget / chunks) calls.
//      A lifetime also ends early once the policy has converged (the top option of every head,
//      in the distribution of the latest proposal, has probability >= converge). A new network is
//      drawn from a seed derived from (search seed, lifetime index) and Adam is reset; elites, the
//      reference value and the incumbent b are kept. Lifetimes continue until the budget is spent
//      (early exits free calls for further networks). restarts=0: one network for the whole
//      budget, no early exit.
//   9. Pair sweep (sweep=1): once the best has not improved for a chunk of calls (with the elite
//      prior on), every strategy differing from the best elite in one or two structural heads
//      (pp, tp, ep, batch, sp and the heads after the dims) is evaluated in a random order, dims
//      kept and batch following tp (relbatch); structurally invalid ones are skipped uncharged.
//      These calls update the elites, not the network. Since 11. the pair candidates are
//      evaluated only with pairsweep=1; the sweep itself (the compound moves) still runs.
//  10. Compound moves (dimgroups=1, with the sweep): in the pair sweep a tp move is also tried
//      with every dim at `none` (the weights whole on each GPU of the group, tokens split: what a
//      tp = 1 elite computes). After it, a hill climb over compound moves: a group descent from
//      the best elite, then for each neighbouring option of tp, ep and pp and each other option
//      of slots, overlap and mtp, the move followed by a group descent from it (in the first
//      pass also from the pair sweep's best candidate that moved each of pp, tp, ep), repeated
//      from the new best while a pass improves it. A group descent is one pass of coordinate
//      descent (two from an invalid start) over batch, sp, each operator group of the dims
//      jointly (attention's three, each FFN pair, the single operators) and the heads after the
//      dims. A degree evaluated with the batch and dims of other degrees is often worse or
//      invalid although it is better with its own (docs/dev/RL_STUDY.md). Sweeps and descents skip
//      strategies equivalent (Canonical) to one they already evaluated.
//  11. Batch fitting, screened moves and diverse climbs (issue 14, third pass; batchfit=1,
//      pairmoves=1, diverse=1, pairsweep=0 by default). Sweep and descent candidates are
//      evaluated once per search up to Canonical equivalence (a known one costs no call).
//      batchfit: points are compared at their own best batch: a valid point's batch goes up one
//      option while that improves, one invalid for memory or an SLO goes down (at most three
//      options) until valid; a group descent fits the start and the two best options of each
//      group (the batch is then no group of its own); the compound moves are every other option
//      of pp, tp and ep (a degree move made structurally invalid by the heads after the dims
//      resets those to their first option; a tp move is also tried with every dim `none`) and
//      of the heads after the dims, each fitted, and descents start from the `descents` (4) best
//      of them in decreasing order of that value; pairmoves adds two changes at once (one option
//      either way of a degree head with one of another degree head or another option of a head
//      after the dims). diverse: a sweep whose best elite's configuration (pp, tp, ep, heads
//      after the dims) a climb already started from or ended at climbs instead from the best
//      point evaluated (policy proposals included) in a configuration no climb has visited
//      (iterated local search). pairsweep=0: the stalled sweep goes straight to the compound
//      moves (the pair sweep cost ~300-550 calls per sweep).
//  12. Near-SLO screening, DP-attention tp moves, earlier sweeps (issue 14, fourth pass; nearslo=1,
//      dpattn=1, stall=0.5, stallmin=200 by default). nearslo: a screened compound move whose batch
//      fit stopped because the next batch misses the TPOT or TTFT limit is ranked for the descents
//      by max(value, potential), potential = that next batch's throughput x limit / its latency:
//      a group descent can re-shard an operator group to bring the latency under the limit and win
//      the larger batch (memory misses do not count: in decode nearly every fitted point's next
//      batch misses memory). Such a move descends from that next batch (an invalid start: each
//      group's options are judged by whether they bring it under the limit), and from its fitted
//      point when no option of that descent is valid. dpattn: a tp move is also tried with the dims of the operators
//      sharded over the tp group `none` and the expert FFNs' dims (over the expert-TP group, which
//      the tp move does not change) kept. stall=0.5 with stallmin=200: a sweep comes after half a
//      chunk without improvement, but never less than 200 calls or a whole chunk when that is
//      shorter (4,000 calls: 400; 1,000 calls: 200 and 300 calls: 60, as before).
//  13. Coupled scans, ep/pp moves with the expert dims `none`, deeper climbs from a repeated
//      end (issue 14, fifth pass; coupled=1, neargate=0.9, epnone=1, deepen=1 by default).
//      coupled: a compound move's group descent that ends below the climb's point but within
//      neargate of it gets the coupled scans of the MoE block: the attention group with the
//      expert FFN pair, the attention group with the router, the router with the shared FFN
//      pair. A scan of groups (a, b) takes the `coupled` best other options of b (an invalid one
//      ranked by its near-SLO potential) each with every option of a, and the other way round;
//      the two best of each are batch-fitted, and a better point is followed by a group descent.
//      A descent still within 1% of the climb's point after them gets the router, MoE and shared
//      pairs jointly, every option. (The optimum of deepseek-v3 serve on 256 H100s needs
//      attention `none,none,dim0` with the MoE pair `dim0/none`, each alone worse; decode on 144
//      H800s the router `none` with the MoE and shared pairs `dim0/none`.) epnone: an ep or pp
//      move is also tried with the expert FFNs' dims `none` (prefill on 128 H100s: ep 8 -> 1;
//      mixtral-8x7b served on 64 H200s: pp 16 -> 1). deepen: a climb pass from a point whose
//      configuration (pp, tp, ep, heads after the dims) a climb already ended in also screens
//      every option of each degree head with every option of another degree head or of a head
//      after the dims, and up to two options either way of two degree heads with another option
//      of a head after the dims, and descends from descents x 2^(ends) moves (deepseek-v3 decode
//      on 144 H800s: pp 9 -> 1 with ep 16 -> 72; the paper's 1.6T: pp 4 -> 2, tp 8 -> 32 with
//      overlap sbo -> tbo).
//  14. Widened first ends (issue 14, sixth pass; deepnow=1 by default). A climb pass that
//      improves nothing, from a configuration where no climb ended before, is repeated once with
//      deepen's wide moves and doubled descents before the climb ends, instead of waiting for a
//      later climb to end there too (which at 4,000 calls often never happens: kimi-k2 served on
//      256 H100s, pp=1,tp=2,ep=32 at 0.977 of the optimum, left through pp=1,tp=4 with attention
//      `none` and sp on). The next pass, after an improvement, is an ordinary one.
//  15. Memory bounds (issue 14, seventh pass; membound=1 by default). Every evaluation that
//      reaches the memory check (policy proposals included) leaves the memory of its worst stage
//      split into weights + reserve and KV cache + recurrent state (search/memory_bound.h). A
//      sweep or descent candidate (batch fits above all) that the same point at another batch
//      shows to miss memory for certain, by a lower bound that holds for the simulator's memory
//      model (weights fixed, caches never smaller for more sequences and at least b' / b of
//      theirs at a batch b' dividing b), is known as a memory miss without a call. The choices
//      are those of membound=0 (a skipped candidate would have been evaluated invalid); only the
//      calls it saves change what follows.
//  16. Schedule x MoE scans (issue 14, seventh pass; schedpair=1 by default). The coupled scans
//      of a near-miss descent (13.) also scan each head after the dims (overlap, slots, mtp)
//      jointly with the MoE pair, every option (27 for overlap x DeepSeek's 3 x 3 FFN dims), the
//      two best batch-fitted, then a group descent from a better point. Two-batch overlap hides
//      the expert dispatch and combine behind the other half's compute, and the MoE pair decides
//      the expert-TP collectives there are to hide, so either change alone can miss a latency
//      limit that both together meet (kimi-k2 served on 256 H100s, pp=1,tp=8: tbo alone or the
//      pair `dim0/dim1` alone miss TPOT, together 0.991 of the optimum).
//  17. Memory near misses (issue 14, eighth pass; feas=1, nearmem=1, pairdp=1 by default).
//      nearmem (with nearslo): a batch fit whose next batch up misses memory by no more than the
//      weight memory (weights + reserve) that the points of one configuration (pp, tp, ep, heads
//      after the dims) with its degrees have been seen to differ by (their dims differ; slots,
//      overlap and MTP change which weights there are, not how the dims shard them) is a memory
//      near miss: a re-sharding the search has already seen at those degrees saves that much. No
//      constant decides "near": the spread is what this search measured. A descent from such a
//      move starts from that batch (from the fitted point when nothing valid is found there, as
//      for nearslo). Under a TPOT or TTFT limit the move is also ranked by that batch's
//      throughput x capacity / memory; without one it is not: memory alone bounds every batch
//      fit there, so every fitted point's next batch misses memory and that rank would reorder
//      all moves (measured: the paper's 1.2T at 32k and decode on 144 H800s lose a seed each
//      at 4,000 calls).
//      feas: a group descent from an invalid start (nearslo, nearmem) whose group has no valid
//      option moves to the option closest to valid when it is closer than the start: the one of
//      least max(memory / capacity, TPOT / limit, TTFT / limit), so two changes that each leave
//      the point invalid (the embedding sharded, one MTP token fewer) can follow each other.
//      pairdp: from a point at tp = 1 (whose dims are only Canonical placeholders), a pair move
//      that changes tp is also tried with the DP-attention dims (12.'s dpattn variant), as a
//      single tp move is. (deepseek-v3 decode on 8 GB200s at TPOT 50 ms, the decode instance of
//      the disaggregated GB200 NVL72 problem: from tp=1,batch=256 with redundant slots, the
//      optimum is tp=2,batch=1024 with no redundant slots, one MTP token and the embedding and
//      dense FFN sharded, at 185.8 of 186 GiB; without the three the search ends at 0.875 of it
//      in every seed and budget.)
//  18. Short budgets (issue 14, ninth pass; repair=2, triple=1, first=0.4 by default).
//      repair: a policy proposal evaluated invalid for memory, TPOT or TTFT is evaluated again
//      with its batch one option lower at a time until one is valid, at most `repair` charged
//      calls; a lower batch that the memory bound (15.) shows to miss costs no call and does not
//      count. On the paper's problems 42-69% of a 1,000-call search's calls miss memory (seeds
//      1-3 without the options of 18.; no latency limits there, and the mask rules out
//      structural misses), and a missed proposal taught the elites nothing. The valid point updates the elites (so the prior and the sweeps see it), not the network: the
//      proposal's sample keeps its invalid reward.
//      triple: the pair moves of compound moves (13.) that change two degree heads (pp, tp, ep)
//      by one option each are also tried with every other option of each head after the dims
//      (overlap, slots, MTP). The paper's 1.6T at 32k on 1,024 H100s ends at pp=4,tp=8,ep=16
//      with sbo (0.904 of the optimum) where pp 4 -> 2 with tp 8 -> 16 is worse under sbo and
//      better under tbo; before, only the deepened passes after the budget left it.
//      first: the main loop's first sweep starts at the latest once first x the budget calls are
//      made, even while the policy still improves by small steps (at 1,000 calls such a policy
//      delayed the first sweep past 700 calls, leaving the climb one pass).
//      (A fourth change, group descents scanned cyclically until no group moves, was measured
//      and not kept: fewer runs at 0.98 at every budget from 1,000 to 3,000, docs/dev/RL_STUDY.md.)
//  19. The cold searcher's schedule (issue 14, eleventh pass; ColdRlOptions(): prior_from=0,
//      first=0.25 when warm=0). Its first lifetime's network has random weights, so without the
//      elite prior (the paper's exploring lifetime) it proposes near-uniformly for a fifth of
//      the budget; with the prior from the first valid proposal on it mutates around the elites
//      at once, and its first sweep comes by a quarter of the budget instead of 40%. Measured
//      before 20. and 21., 1,000 calls, seeds 1-20 of the suite: 422 -> 444 of 520 runs at 0.98
//      of the optimum (problems with every seed there, seeds 1-10 / 11-20: 17 / 17 -> 20 / 21);
//      either change alone 428 or 435. The warm searcher's first lifetime is the pretrained
//      network, an informed explorer: either change costs it runs (prior_from=0: 239 -> 229 of
//      260, seeds 1-10; first=0.25: 471 -> 464 of 520), so its defaults stay. Role searches from
//      nothing keep a first lifetime without the prior (RlRoleRun).
//  20. sp scans at a climb's end (spscan=1). A climb pass that improves nothing scans sp jointly
//      with the dim of each single operator (embedding, router, LM head), every joint option
//      from the climb's point, the two best batch-fitted; a better point is descended from and
//      the climb goes on. A group descent chooses sp before the dims (head order), and no climb
//      descends again from its own end, so an end can carry an sp chosen under other dims
//      (mixtral-8x7b decode on one 8-GPU H100 node, cold, seed 1: sp on with the embedding
//      `dim1`, 3,698.6 tok/s/GPU, below Megatron's 3,700.5; sp off alone 3,700.0, then the
//      embedding `dim0` 3,700.5). Costs about ten calls per climb end.
//  21. The triple scan first (tripfirst=1). A near-miss descent within 1% of the climb's point
//      gets the router x MoE x shared scan (13.) before the pair and schedule scans instead of
//      after them (which cost ~250 calls first and can end the budget before it: deepseek-v3
//      decode on 144 H800s, whose optimum needs that triple change, cold seed 10 at 4,000 calls).
//      Seeds 1-20: 4,000 calls cold 519 -> 520 of 520 runs at 0.99, warm 518 -> 519; at 1,000
//      calls the 243-option scan is a quarter of the budget and costs runs on that same problem
//      (cold 445 -> 439, warm 472 -> 470 of 520 at 0.98), kept for the 4,000-call target.
//  22. Megatron-dims repair (megarepair=1, with repair). Once a lifetime's worth of calls
//      (ceil(budget / chunks)) has passed without any valid point, a policy proposal that missed
//      memory, TPOT or TTFT is evaluated first with Megatron's dims (every weight sharded over
//      its group), then at lower batches from there, within the same `repair` calls. On a
//      tight-memory problem the policy's proposals and their lower batches can all miss:
//      llama-3.1-405b served on 16 H100s (bf16 weights, about 810 GB of 1,280), cold, 300
//      calls, 7 of 20 seeds found no valid strategy at all, now none. Every suite and held-out
//      search finds a valid point within its first lifetime, so there it changes nothing
//      (measured: identical figures at 300, 1,000 and 4,000 calls).
//  23. Split tokens in DP-attention tp moves (issue 14, twelfth pass; dpsp=1). The tp moves of
//      10.-12. and 17. that set the tp group's operators (or every operator) to `none` also set sp
//      on where it is off: with the weights whole on each GPU of the group, sp off has every GPU
//      compute every token of the group, sp on gives each its share, which is what the tp = 1
//      point such a move copies computed (at tp = 1 sp is only a Canonical placeholder, off).
//      deepseek-v3 decode on 64 H100s, from pp=1,tp=1,ep=64 (1,997.5 tok/s/GPU): tp = 2 with
//      attention `none` is 1,894.1 with sp off, ranked below the four moves descended from, and
//      1,997.5 with sp on, descended from at once (to 2,004.2, 240 calls earlier).
//  24. The overlap x attention scan (schedattn=1). The coupled scans (13.) of a near-miss descent
//      that ends in DP attention (tp > 1 with the attention group `none`) also scan the overlap
//      head jointly with the attention group, every option (81 for DeepSeek: 3 x 27), the two
//      best batch-fitted, then a group descent from a better point. Two-batch overlap hides the
//      collectives of the other half, and attention sharded over the tp group adds all-reduces to
//      hide: at tp=4,batch=512 (deepseek-v3 decode on 64 H100s) tbo alone and attention
//      `dim1,none,dim0` alone are each worse than sbo with attention `none`, together better, and
//      the optimum follows (schedpair, 16., scans overlap with the MoE pair only). From other
//      ends (attention already sharded) the scan was measured to cost calls and no problem.
//  25. pp moves with sp's other option (ppsp=1). A compound move of pp is also tried with sp
//      switched: sp's value, chosen for the old layers per stage, can change sign with the move
//      (the paper's 1.2T at 64k: at pp=2 sp on is 0.2% worse than off, at pp=1 10% better, so the
//      pp 2 -> 1 move with the climb's sp off screens at 0.91 and is not descended from).
//      23.-25. together, 1,000 calls, seeds 1-20: cold 439 -> 462 of 520 runs at 0.98 (problems
//      with every seed, seeds 1-10 / 11-20: 20 / 21 -> 22 / 21), warm 470 -> 469; 4,000 calls
//      unchanged (cold 520 of 520 runs at 0.99, warm 519), held-out and disaggregated suites
//      unchanged. Role searches run without 23. and 24. (they cost a run or two on the
//      disaggregated suite, docs/dev/RL_STUDY.md twelfth pass).
//  26. The serving-shape start (templates=1; the warm searcher's default too since 31.). Outside
//      prefill, the search starts from the two usual shapes of a serving instance
//      (strategy/space.h ServingTemplates: pp = 1 with the widest ep, tp = 1 with every dim `none`
//      and tp over one NVLink domain with Megatron's dims), evaluated first as SearchFrom's start
//      points (with its variants when invalid), and climbs from them at once (the compound moves);
//      the policy follows. The cold searcher's random first network reaches, in 250 calls, points
//      such as pp=8,tp=1,ep=32 for deepseek-v3 served on 256 H100s (0.83 of the optimum), whose
//      climb does not reach the optimum's pp=1,tp=4,ep=64 within 1,000 calls; from the tp = 1
//      shape it does. Cold, seeds 1-20: 1,000 calls 462 -> 501 of 520 runs at 0.98 (problems
//      22 / 21 -> 24 / 23), 4,000 calls 520 of 520 as before, held-out problems at 1,000 calls
//      139 -> 140 of 140; at 300 calls the climb from the shapes takes the budget and ends in
//      other traps (held-out 121 -> 100 of 140: mixtral-8x7b decode on 16 H200s, whose optimum is
//      Megatron's pp=4,tp=1, ends at pp=1,tp=4 in every seed). Prefill is left out: a prefill
//      instance's usual shapes are others (from these, deepseek-v3 prefill on 32 H800s ends at
//      0.948 of its optimum in every seed). The pretrained warm start kept templates=0 until the
//      seventeenth pass: its first lifetime is an informed explorer, and the same start cost it at
//      300 calls (held-out 127 -> 100 of 140) what it gained at 1,000 (469 -> 497). With 31.,
//      the start takes the held-out problems at 300 calls from 128 to 140 of 140 runs at 0.99
//      (seeds 1-20), the 26 aggregated problems at 1,000 calls from 469 to 481 of 520 runs at
//      0.98 (problems with every seed 19 -> 23) and at 4,000 calls from 519 to 520 at 0.99; on 16
//      problems never run before that pass, 300 calls, seeds 1-20: 270 -> 260 runs at 0.99, but
//      11 -> 13 problems at 18 of 20 seeds (docs/dev/RL_STUDY.md seventeenth pass): on by default
//      since. Outside the suite the start can cost: PLAN.md's aggregated deepseek-v3 (fp8, 4,096
//      in, 128 H100s), whose optimum is pp=8,tp=8, cold 6 -> 0 of 10 seeds at it at 4,000 calls
//      (all at 0.957), pretrained 4 -> 0 of 10 since the seventeenth pass.
//  27. pp and tp moves that also lower ep (issue 14, thirteenth pass; epfit=1). A compound move
//      of pp or tp (with batchfit) that leaves no valid point at the elite's ep, the experts no
//      longer dividing over the GPUs of a stage outside its tp group even after the heads after
//      the dims are reset, is also screened with the widest lower ep that is valid and with ep = 1,
//      each also with the expert FFNs' dims `none`. Before, such a move was screened at an invalid
//      point and never descended from: deepseek-v3 prefill on 128 H100s, cold, ended at
//      pp=4,tp=8,ep=32 (0.888 of the optimum pp=16,tp=8,ep=1) in 4 of 20 seeds at 1,000 calls,
//      now none. Cold, seeds 1-20, 1,000 calls: 515 -> 519 of 520 runs at 0.98 (with 28.);
//      4,000 calls and the held-out problems unchanged. The cold searcher's default
//      (ColdRlOptions()): the warm one reaches that problem's optimum without it, and with it
//      lost runs at 1,000 calls (469 -> 466 of 520: two seeds of deepseek-v3 served on 256 H100s,
//      one of the decode on 64 H100s, each moved by the extra screened moves). Off in role
//      searches (RlRoleRun).
//  28. The triple scan over the better halves (triphalf=1). The router x MoE pair x shared pair
//      scan of 13./21. takes every router option with the better half of each FFN pair's options
//      (each option alone from the near miss, ranked by value or near-SLO potential, the current
//      one included): 3 x 5 x 5 - 1 = 74 points for DeepSeek's 9-option pairs instead of
//      3 x 9 x 9 - 1 = 242, the two best batch-fitted as before. The change the deepseek-v3
//      decode on 144 H800s needs (router `none` with both pairs `dim0/none` from the tp = 4 climb
//      end) is made of options that are each among the better half alone. Cold, seeds 1-20,
//      1,000 calls, with 27.: that problem 0 -> 20 of 20 seeds at 0.98 (worst 0.978 -> 0.982: 27.'s
//      extra screened moves delay the climb, and the full scan no longer ends within the budget;
//      the optimum itself still comes later, ~1,100-1,250 calls in seed 1), 499 -> 519 of 520
//      runs; without 27. 515 either way; 4,000 calls unchanged (cold 520 of 520 at 0.99). The
//      cold searcher's default (ColdRlOptions()): the warm one without 27. is per problem the same
//      with it at 1,000 calls (469 of 520) and loses a seed of that problem at 4,000 (519 -> 518
//      of 520 runs at 0.99, seed 19 at 0.983). A third of each pair's options (3 x 3 x 3) was
//      measured and not kept: seed 1 of the same problem then misses the optimum (0.983 at 2,500
//      calls).
//  29. Memory near misses of a move at its own batch (issue 14, fifteenth pass; nearmove=1). A
//      screened move invalid at its batch whose batch fit (11.) found a lower batch valid, and
//      which misses memory there by no more than the weight memory seen to vary at its degrees
//      (17.'s spread), is a memory near miss too: under a TPOT or TTFT limit it is ranked by its
//      memory potential, and its descent starts from the move at its own batch (feas then takes
//      the dims towards valid), as 17. does for the next batch up of a valid fit. Before, such a
//      move descended only from the lower batch, where re-sharding to save memory gains nothing.
//      (deepseek-v3's decode role at 16 H100s, context 2,304, TPOT 50 ms: 32 redundant expert
//      slots at batch 256 miss memory by about 5 GiB, which the embedding on dim1, attention's
//      output on dim0 and the dense FFN sharded save together; the cold searcher 4 -> 9 of 10
//      seeds at the optimum at 4,000 calls, 0.934 -> 0.970 in every seed at 1,000.) The 26-
//      problem suite is per seed the same with it, warm and cold, at 1,000 and 4,000 calls.
//  30. The attention group's near option with the expert FFN pair at a new climb point (issue 14,
//      sixteenth pass; pairfirst=2, 1: the first form, 0: off). A climb pass that starts with a
//      group descent (from a point a move reached) then takes the attention group's best other
//      option known so far (no call; a latency miss by its near-SLO potential), and when it is
//      within 1% of the point, scans every option of the expert FFN pair with it (ScanGroup: 9
//      calls for 3 x 3 pair options, the two best batch-fitted); a better point is followed by a
//      group descent. The two groups meet at the MoE dispatch, and the group descent takes one
//      group at a time, one pass: kimi-k2 decode at 4k on 64 H200s (a held-out problem) ends at tp
//      = 4, attention `none,none,dim0` with the pair `dim0/none` (0.987 of the optimum, whose
//      attention is `none,none,none` with the pair `dim0/dim1`; each change alone is worse); on the
//      way, at tp = 1 (where attention's options are one Canonical point), the descent scanned the
//      pair before the slots head moved to 480 redundant slots, where `dim0/dim1` gains 2.3% over
//      `dim0/none` (at 384 slots it loses 3%), and no later step scans it. Cold, 300 calls, seeds
//      1-20: 0 -> 20 of 20 at 0.99 (pretrained: 9, was 8); the 26-problem suite per seed the same
//      at 1,000 and 4,000 calls, warm and cold, and the 25 disaggregated problems of
//      docs/dev/RL_STUDY.md too but for one cold seed at 4,000 calls (1.000 -> 0.993). A scan whose
//      gate needed calls delayed deepseek-v3 serve on 256 H100s past 1,000 calls: 0.999 -> 0.962 in
//      every cold seed. pairfirst=2 also takes the end of a descent that improved on the climb's
//      point as a new point, and scans the shared FFN pair too (after the expert pair, from the
//      same near option): kimi-k2 disaggregated on 256 H100s, whose 120-GPU decode role needs
//      attention `none,none,dim0` with the shared pair `dim0/dim1` (from `dim1,none,dim0` with
//      `none/none` each alone is worse), reaches 0.99 in 10 of 10 seeds at 4,000 calls (2 cold, 8
//      pretrained with pairfirst=1), the disaggregated suite 89 of 90 runs both ways; the
//      aggregated and held-out problems per seed as with pairfirst=1.
//  31. Degree moves with Megatron's expert dims (issue 14, seventeenth pass; epmega=1, warm and
//      cold). With epnone (13.), an ep or pp move is also screened with the expert FFNs' dims
//      `none`, since the expert-TP group those are sharded over changes with ep and pp; epmega
//      also screens it, the other way, with Megatron's expert dims. mixtral-8x7b served (2k in,
//      512 out, TTFT 2 s, TPOT 50 ms) on 16 H200s, a problem never run before this pass: every
//      searcher ended at pp=1,tp=1,ep=1 with the expert FFNs `none` (the whole model on each GPU,
//      0.952 of the optimum) in every seed at 300 calls; the optimum is pp=4 with the experts
//      sharded Megatron's way over each stage's four GPUs, and the pp move with the dims kept
//      screens below the point. With it: 10 of 10 seeds at 0.99 warm and cold; the cold searcher
//      also leaves mixtral-8x7b decode at 4k on 16 H200s (a held-out problem: 0.846 in every seed
//      at 300 calls from the serving shapes, see 26.; held-out problems at 300 calls, cold 120 ->
//      140 of 140 runs at 0.99); the 26 aggregated problems per seed the same at 1,000 and 4,000
//      calls cold, and warm (from the shapes) too but deepseek-v3 decode on 144 H800s at 1,000
//      calls (0.982 -> 0.978 in every seed) and deepseek-v3 serve on 256 H100s at 1,000 (1.000 ->
//      0.999); the 25 disaggregated problems per seed the same but three seeds better. With it
//      the warm searcher starts from the serving shapes too (templates=1, 26.).
//  32. Memory trades (issue 14, eighteenth pass; memtrade=1, warm and cold, role searches too).
//      A climb pass that improved nothing (after spscan, 20.) evaluates every other option of
//      each operator's dim alone from the climb's point (known ones free). An option that misses
//      memory at the point's batch but would be faster (its throughput as simulated, the memory
//      check aside) is tried together with the fastest valid option of another operator that
//      saves at least the miss's excess over the capacity (the point's memory minus the saver's;
//      weights add up over operators, so the pair is expected to fit: one call, the evaluation
//      decides); a better point is descended from. Neither change alone is better, so no descent
//      or scan of one group makes the pair. (deepseek-v3's decode role at 16 H100s, the decode
//      instance of its optimum disaggregated on 48 H100s: at tp=4, batch 512, 288 slots and
//      79.77 of 80 GiB, the shared FFN's up-projection whole per GPU is 4.5% faster and needs
//      1.21 GiB more, the embedding on dim1 saves 1.29 GiB for 0.06% of throughput; the pair,
//      then the dense FFN whole, is the role's optimum at 79.97 GiB: cold, 0.99 of it at call
//      2,589 in every seed 0-9 (3,103-3,787 without), pretrained 2,365 (2,879-3,663).) The 26
//      aggregated problems at 1,000 and 4,000 calls, the held-out and new problems at 300 and
//      the 25 disaggregated ones at 1,000 and 4,000 are per seed the same with it: their climbs
//      rarely end at such a point within their budgets.
//  33. Memory near misses at unmeasured degrees (issue 14, nineteenth pass; nearscale=1, warm and
//      cold). 17.'s spread is measured per configuration: at degrees where no two points with
//      other dims were seen it is 0, and no move there is a memory near miss however little it
//      misses by. nearscale estimates it from the configurations seen at the same tp and (MoE) the
//      same expert-TP degree (pp x ep the same): there the dims shard the same operators over the
//      same groups, and a stage holds num_layers / pp layers, so a spread seen at pp' counts
//      pp' / pp times (the largest such estimate; the evaluation decides). (deepseek-v3
//      disaggregated on 256 H100s, whose optimum decodes on 16-GPU instances at pp=1,tp=2,ep=16,
//      batch 256: the 16-GPU slot's climb at pp=2,tp=2,ep=8 takes the move to pp=1, ep 16, which
//      misses memory at batch 256 by 2.0 GiB; no spread was seen at its degrees, the one seen at
//      pp=2,tp=2,ep=8 (4.9 GiB) counts 9.9, and the descent from batch 256 shards attention's
//      output projection: the optimum, cold seed 0 at 4,000 calls, 0.982 before.) The
//      disaggregated suite at 4,000 calls 89 -> 90 of 90 runs at 0.99 cold (pretrained 89 both
//      ways); qwen3-235b-a22b on 128 H100s pretrained 3 -> 1 of 10 (its 80-GPU slot's further
//      search spends its calls on tp=2 moves that now fit memory but miss the TPOT); every other
//      problem, aggregated and disaggregated, at 300, 1,000 and 4,000 calls per seed the same but
//      one cold seed of qwen3-235b-a22b on 64 B200s at 4,000 (0.998 -> 1.000).
//  34. Recipe moves (issue 14, twentieth pass; recipemoves=1, warm and cold; off in the
//      disaggregated space's role searches, RlRoleRun). A climb pass also screens the wide-EP
//      recipe (26.'s serving shape with AddOverlapRecipes' overlap and slots, strategy/space.h)
//      at the point's pp and at one pp option either way: ep the widest a stage allows, each
//      overlap option other than none, the most redundant expert slots that fit (FitSlots), the
//      rest of the point (tp, batch, dims) kept; screened and descended from as any move (up to
//      six more moves a pass). Single and paired moves change ep one option at a time or leave
//      the overlap and slots as they are, so a climb from a data-parallel point raises ep one
//      rung a pass. (qwen3-30b-a3b served on 64 H200s: every seed, warm and cold, climbs from the
//      serving shapes to pp=1,tp=1,ep=1 at batch 256 (5,161.5 tokens/s per GPU, call 134), then
//      ep 2, 4, 16, pp 2, ep 32 a pass each and reaches 0.99 of the optimum (pp=2,tp=2,ep=32,
//      batch 512, TBO, 160 slots: 6,230.8) at call 840; the recipe one pp option up, pp=2 with ep
//      32, TBO and 160 slots, is 6,199.0, reached at call 258.) The 26 aggregated problems at
//      1,000 calls: one run changes, gpt-moe-1.2t 64k cold seed 14 0.923 -> 1.000 (cold 520 of
//      520 at 0.98); at 4,000 calls per seed the same; the 23 held-out and new problems at 300
//      calls: qwen3-30b-a3b served on 64 H200s 0.828 -> 0.995 in all 20 seeds warm and cold,
//      mixtral-8x7b decode 8k on 64 H100s 0.9989 -> 0.9972 in all 20, three prefill runs by less
//      than 0.001, the rest the same. In role searches it cost the disaggregated suite at 4,000
//      calls 89 / 90 -> 87 / 83 runs of 90 at 0.99 (pretrained / cold; kimi-k2 on 256 H100s), so
//      RlRoleRun turns it off there.
//
// Deterministic for a seed: all randomness comes from nn::Rng streams seeded from it.
// Spec options (all optional; defaults are RlOptions{}, ColdRlOptions() with warm=0, except that
// prior0 defaults to prior):
//   rl(elites, embed, hidden, attn, mask, shaping, restarts, chunks, converge, alpha, beta,
//      invalid, lr, rollout, epochs, clip, ent, decay, prior, prior0, prior_from, ordinal,
//      relbatch, canon, jump, megadims, sweep, dimgroups, stall, batchfit, diverse, pairsweep,
//      pairmoves, descents, nearslo, dpattn, stallmin, coupled, neargate, epnone, deepen, deepnow,
//      membound, schedpair, feas, nearmem, pairdp, repair, triple, first, spscan, tripfirst,
//      megarepair, dpsp, schedattn, ppsp, templates, epfit, triphalf, nearmove, pairfirst,
//      epmega, memtrade, nearscale, recipemoves, warm)
//
// Warm start (warm=1, the default since issue 14 item 3 measured it to help; the cold searcher is
// spelled rl(warm=0)): the network of the first lifetime is the shared nn::OptionScorer over the
// problem-independent option features of search/rl_features.h instead of the per-problem
// PolicyNet, and the first lifetime starts from the pretrained weights shipped in
// src/search/rl_pretrained.cc (tools/pretrain_rl) instead of random ones; restarts run the cold
// searcher's per-problem PolicyNet from random weights (restarting from the pretrained weights
// kept the pretrained bias in every lifetime and hurt the paper's 64k problems, and the shared
// network costs twice as much per call, docs/dev/RL_STUDY.md); with warm=2 or weights given by the
// tool (warm_weights) restarts keep the shared network. warm=2: the same
// shared network from random weights (what pretraining starts from). Everything else (prior,
// sweeps, restarts, PPO) is unchanged. Over an encoded problem without a strategy space the
// per-problem network is used whatever `warm` says. The role searches of SearchEncoded's
// decomposed search (each one role at one instance size, a plain strategy space) follow `warm`
// since issue 14's seventh pass (before, they ran cold; started from the pretrained weights they
// reach 0.99 of the disaggregated optimum in 68 of 90 suite runs at 4,000 calls against 60,
// docs/dev/RL_STUDY.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "search/joint.h"
#include "search/search.h"

namespace l2s {

// Defaults marked (*) differ from the paper's; docs/dev/RL_STUDY.md has the measurements behind them.
struct RlOptions {
  int elites = 3;            // T, rows of the observation (paper: 3; 8 and 16 measured no better)
  int embed = 64;            // (*) d, embedding width (paper: 256; 256 costs ~10 s per search)
  int hidden = 64;           // (*) hidden width of the encoder block's MLP (paper: 256)
  int attn_heads = 4;        // attention heads; must divide embed
  bool mask = true;          // (*) prefix masking of the heads (paper: unmasked)
  bool shaping = true;       // off: beta = 0
  bool restarts = true;      // off: one network for the whole budget, no early exit
  int chunks = 5;            // network lifetimes the budget is cut into (paper: 5)
  double converge = 0.95;    // top-option probability that counts as converged (paper: 0.95)
  double alpha = 1.0;        // weight of the normalised throughput (paper: alpha > 0, no value)
  double beta = 1.0;         // weight of the improvement over the incumbent (paper: beta > 0)
  double invalid_reward = -1.0;  // "a large negative reward": below any valid raw value (>= 0)
  double lr = 1e-4;          // (*) initial Adam learning rate, cosine-annealed (paper: 1e-3)
  int rollout = 8;           // (*) proposals per update (paper: 2)
  int epochs = 2;            // gradient steps per update (paper: 2)
  double clip = 0.2;         // PPO clip range (Stable-Baselines3 default)
  double entropy = 0.01;     // entropy bonus (PPO paper's Atari setting, Schulman et al. 2017)
  double decay = 0.9;        // EMA factor of the reward baseline and scale (~10-update memory)
  double prior = 0.8;        // (*) elite prior keep probability q (0 = off, the paper's policy)
  double prior0 = 0.8;       // keep probability at the start of a lifetime (annealed to prior)
  int prior_from = 1;        // first lifetime (0-based) using the elite prior (see 3. above)
  bool ordinal = true;       // ordered heads (pp, tp, ep, batch): prior decays with distance
  bool relbatch = true;      // batch prior keeps the elite's sequences per GPU (batch / tp)
  bool canonical = true;     // spec "canon": elites stored as their Canonical representative
  double jump = 0.1;         // ordinal heads: probability mass spread uniformly over all options
  double megadims = 0.1;     // probability that a proposal's dim prior points at Megatron's dims
  bool sweep = true;         // pair sweep of the structural heads around the best when stalled
  bool dimgroups = true;     // sweep: compound moves and group descents (see 10. above)
  double stall = 0.5;        // (*12.) sweep once the best has not improved for stall x a chunk
  bool batchfit = true;      // compound moves and descents compare points at their own best batch
  bool pairsweep = false;     // sweep: evaluate the pair neighbourhood before the compound moves
  bool pairmoves = true;     // batchfit: compound moves also change two heads at once
  int descents = 4;          // batchfit: screened compound moves descended from per climb pass
  bool diverse = true;       // a sweep whose base was swept before starts from another config
  bool nearslo = true;       // batchfit: screened moves ranked by their near-SLO potential (12.)
  bool dpattn = true;        // batchfit: a tp move also with the tp group's dims `none` (12.)
  int64_t stall_min = 200;   // spec "stallmin": a stall lasts >= min(this, a chunk) calls (12.)
  int coupled = 1;           // (13.) screened options per coupled scan of a near-miss descent
  double near_gate = 0.9;    // spec "neargate": a near miss ends >= this x the climb's point
  bool epnone = true;        // (13.) an ep or pp move also with the expert FFNs' dims `none`
  bool deepen = true;        // (13.) wider moves and more descents from a repeated climb end
  bool deepnow = true;       // (14.) a climb's pass that improves nothing is widened once
  bool membound = true;      // (15.) candidates certain to miss memory are not evaluated
  bool schedpair = true;     // (16.) coupled scans: each head after the dims with the MoE pair
  bool feasible = true;      // spec "feas" (17.): an invalid descent moves towards validity
  bool nearmem = true;       // (17.) memory near misses within the dims' seen spread ranked
  bool pairdp = true;        // (17.) from tp = 1, pair moves of tp also with DP-attention dims
  bool triple = true;        // (18.) pair moves of two degree heads also with a head after dims
  int repair = 2;            // (18.) calls re-evaluating a missed proposal at lower batches
  double first = 0.4;        // (18.) the first sweep at the latest after first x the budget
  bool spscan = true;        // (20.) a climb's end scans sp with each single operator's dim
  bool tripfirst = true;     // (21.) a near miss's router x MoE x shared scan before the pairs
  bool megarepair = true;    // (22.) nothing valid after a lifetime: repair with Megatron's dims
  bool dpsp = true;          // (23.) a tp move with the tp group's dims `none` also splits tokens
  bool schedattn = true;     // (24.) coupled scans: the overlap head with the attention group
  bool ppsp = true;          // (25.) a pp move also with sp's other option
  bool templates = true;     // (26.) start from the usual serving shapes (since 31.: warm too)
  bool epfit = false;        // (27.) a pp or tp move that leaves ep not fitting also lowers ep
                             // (cold searcher: on)
  bool triphalf = false;     // (28.) the triple scan takes the better half of each FFN pair
                             // (cold searcher: on)
  bool nearmove = true;      // (29.) a move missing memory near enough descends from its batch
  int pairfirst = 2;         // (30.) a new climb point: attention's near option x the FFN pairs
  bool epmega = true;        // (31.) an ep or pp move also with Megatron's expert FFN dims
  bool memtrade = true;      // (32.) a climb's end: a memory miss with a memory saver
  bool nearscale = true;     // (33.) nearmem's spread at unmeasured degrees, scaled from others
  bool recipemoves = true;   // (34.) climb moves to the wide-EP recipe at pp and pp +- 1
                             // (off in the disaggregated space's role searches)
  int warm = 1;              // (*) 1: shared pretrained (default); 0: per-problem network (cold,
                             // the searcher before issue 14 item 3); 2: shared, random weights
  // Code only (tools/pretrain_rl): with warm >= 1, initial weights of the shared network in
  // place of the shipped ones (nn::ScorerWeights::values of RlFeatureCount() features and
  // `warm_hidden` hidden units).
  std::vector<double> warm_weights;
  int warm_hidden = 0;
};

// The cold searcher's defaults (rl(warm=0), rl.h 19.): RlOptions{} with warm = 0, the elite prior
// from the first lifetime (prior_from = 0), the first sweep by a quarter of the budget (first =
// 0.25), the ep-fitted moves (epfit = 1, rl.h 27.) and the triple scan over better halves
// (triphalf = 1, 28.); both searchers start from the serving shapes (templates = 1, 26.).
// ParseRlOptions reads a spec with warm=0 over these.
RlOptions ColdRlOptions();

// Reads the options of an "rl(...)" spec over the defaults (ColdRlOptions() with warm=0).
// InvalidArgument for an unknown key, a malformed value or one out of range (sizes >= 1, attn
// dividing embed, 0 < converge <= 1, ...).
StatusOr<RlOptions> ParseRlOptions(const SearcherSpec& spec);

// Canonical spec with every option written out, e.g. "rl(elites=3,embed=64,...)", except warm,
// written only when it differs from the default (",warm=0)" for the cold searcher), so the
// default searcher's name is the one it had before the warm start became the default.
std::string RlSpecText(const RlOptions& o);

// The role search of the decomposed search of the disaggregated joint space (search/joint.h
// SearchJointDecomposed): rl with `options` on one role's StrategySpace (`warm` included: the
// default starts from the pretrained weights), from the start points, the elite prior at once
// when there are any (without any, from lifetime max(prior_from, 1): the cold searcher's
// prior_from = 0 of 19. cost runs there, docs/dev/RL_STUDY.md eleventh pass), and without the
// options of 18. (repair, triple, first: measured to cost runs on the disaggregated suite,
// docs/dev/RL_STUDY.md ninth pass), 23. and 24. (dpsp, schedattn: twelfth pass) whatever `options`
// says.
RoleRun RlRoleRun(const RlOptions& options);

// Counters of the latest Search (for tests and the study).
struct RlStats {
  int64_t proposals = 0;     // simulator calls made by the searcher
  int64_t invalid = 0;       // proposals the simulator rejected (any reason)
  int64_t structural = 0;    // ... of which structurally invalid (cannot happen with mask=1)
  int64_t updates = 0;       // PPO updates (each `epochs` gradient steps)
  int64_t networks = 0;      // network lifetimes started (1 + restarts)
  int64_t early_exits = 0;   // lifetimes ended by convergence
  int64_t sweeps = 0;        // pair sweeps run (sweep=1)
  int64_t diverse = 0;       // ... of which started away from the best elite (diverse=1)
  int64_t memory_skips = 0;  // sweep/descent candidates known to miss memory, not evaluated
  int64_t repairs = 0;       // charged calls re-evaluating missed proposals at a lower batch (18.)
  int64_t first_sweep_call = -1;  // calls made when the main loop's first sweep began (-1: none)
  int64_t policy_calls = 0;  // calls charged by policy proposals (the main loop's samples)
  // Where the local search's calls go (compound moves, 10. and 11.): calls charged by the climbs
  // (screening, descents, coupled scans), of which screening the moves at their best batch
  // before the descents, and the moves screened (each charged at most 1 + its batch fit; known
  // ones free). Without batchfit the descents run inside the screening loop and count there.
  int64_t climb_calls = 0;
  int64_t screen_calls = 0;
  int64_t screened_moves = 0;
  // warm >= 1: the shared network's weights at the end of the search (tools/pretrain_rl carries
  // them to the next problem); empty otherwise.
  std::vector<double> final_weights;
};

class RlSearcher final : public Searcher {
 public:
  explicit RlSearcher(const RlOptions& options) : options_(options) {}

  std::string name() const override { return RlSpecText(options_); }
  SearchResult Search(const Simulator& sim, const StrategySpace& space, int64_t budget,
                      uint64_t seed, Observer* observer) override;
  SearchResult SearchEncoded(const EncodedProblem& problem, int64_t budget, uint64_t seed,
                             Observer* observer) override;

  // Search from `start` (strategies of `space`, evaluated first, one charged call each, as the
  // first elites; an invalid one also with Megatron's dims, every dim `none`, half and a quarter
  // of its batch), followed at once by the compound moves, then the search; start_only: the
  // start points alone. The disaggregated joint space's role searches use it (search/joint.h
  // SearchJointDecomposed).
  SearchResult SearchFrom(const Simulator& sim, const StrategySpace& space, int64_t budget,
                          uint64_t seed, Observer* observer, std::span<const Strategy> start,
                          bool start_only = false);

  const RlOptions& options() const { return options_; }
  const RlStats& last_stats() const { return stats_; }

 private:
  SearchResult Run(Objective& obj, uint64_t seed, std::vector<std::vector<int>> start = {},
                   bool start_only = false);
  RlOptions options_;
  RlStats stats_;
};

}  // namespace l2s
