// Batch refinement of a finished plan (refine.h).
#include "plan/refine.h"

#include <algorithm>

namespace l2s {

bool RefineBatch(const Simulator& sim, Strategy* s, Evaluation* e) {
  if (!e->valid()) return false;
  Strategy a = *s;
  a.batch = 0;  // the simulator's auto batch
  const Evaluation auto_eval = sim.Evaluate(a);
  if (!auto_eval.valid() || auto_eval.batch == e->batch) return false;
  // The plan states the batch explicitly (the engine is told it), so its figures are those of the
  // explicit batch - what `l2s eval --strategy` of the plan gives. In serve mode the auto batch's
  // evaluation can differ from the explicit one's at the same batch (docs/PLAN.md).
  a.batch = auto_eval.batch;
  const Evaluation ea = sim.Evaluate(a);
  if (!ea.valid() || !(ea.tokens_per_s_per_gpu > e->tokens_per_s_per_gpu)) return false;
  *s = a;
  *e = ea;
  return true;
}

void EvaluatedStrategies::Add(const Strategy& s, const Evaluation& e) {
  if (!e.valid()) return;
  Strategy k = s;
  k.batch = 0;
  const auto [it, fresh] = index_.try_emplace(ToText(k), items_.size());
  if (fresh) {
    items_.emplace_back(s, e);
  } else if (e.tokens_per_s_per_gpu > items_[it->second].second.tokens_per_s_per_gpu) {
    items_[it->second] = {s, e};
  }
}

std::vector<std::pair<Strategy, Evaluation>> EvaluatedStrategies::Sorted() const {
  std::vector<std::pair<Strategy, Evaluation>> v = items_;
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.tokens_per_s_per_gpu > b.second.tokens_per_s_per_gpu;
  });
  return v;
}

namespace {

// `p` with one role's (decode or prefill) batch set to b, and the deployment Combine makes of it
// beside the other role's evaluation `other` (invalid when the role's instance is).
std::pair<JointSpace::Point, DisaggEvaluation> WithRoleBatch(const DisaggModel& dm, bool decode,
                                                            const JointSpace::Point& p,
                                                            const Evaluation& other, int b) {
  JointSpace::Point r = p;
  Strategy& mine = decode ? r.decode : r.prefill;
  mine.batch = b;
  const Evaluation e = (decode ? dm.DecodeSim(r.gd) : dm.PrefillSim(r.gp)).EvaluateAtBatch(mine, b);
  DisaggEvaluation ev;
  if (e.valid())
    ev = decode ? dm.Combine(r.gp, r.prefill, other, r.gd, r.decode, e)
                : dm.Combine(r.gp, r.prefill, e, r.gd, r.decode, other);
  return {r, ev};
}

// The other role's instance of `p` as it is (decode: the prefill instance's evaluation).
Evaluation OtherRole(const DisaggModel& dm, bool decode, const JointSpace::Point& p) {
  return decode ? dm.PrefillSim(p.gp).Evaluate(p.prefill) : dm.DecodeSim(p.gd).Evaluate(p.decode);
}

// One role of `p` (decode or prefill) at the largest batch in (its batch, its simulator's auto
// batch] with which Combine stays valid; *q and *out hold that deployment. False when no larger
// batch keeps it valid.
bool RaiseRole(const DisaggModel& dm, bool decode, const JointSpace::Point& p,
               JointSpace::Point* q, DisaggEvaluation* out) {
  const Simulator& sim = decode ? dm.DecodeSim(p.gd) : dm.PrefillSim(p.gp);
  const Strategy& own = decode ? p.decode : p.prefill;
  Strategy a = own;
  a.batch = 0;
  const Evaluation auto_eval = sim.Evaluate(a);
  if (!auto_eval.valid() || auto_eval.batch <= own.batch) return false;
  // The other role's instance stays as it is: evaluated once.
  const Evaluation other = OtherRole(dm, decode, p);
  // `p` with this role at batch b, into *q and *out when the deployment is valid.
  auto at = [&](int b) {
    auto [r, ev] = WithRoleBatch(dm, decode, p, other, b);
    if (!ev.valid()) return false;
    *q = r;
    *out = ev;
    return true;
  };
  if (at(auto_eval.batch)) return true;
  // Valid at lo (the plan's batch), invalid at hi.
  int lo = own.batch, hi = auto_eval.batch;
  bool found = false;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (at(mid)) {
      lo = mid;
      found = true;
    } else {
      hi = mid;
    }
  }
  return found;
}

// LowerDisaggBatches for one role: the smallest batch of that role at which `p` keeps e's
// tokens/s per GPU; true (and *p, *e updated) when it is below p's.
bool LowerRole(const DisaggModel& dm, bool decode, JointSpace::Point* p, DisaggEvaluation* e) {
  const int own = (decode ? p->decode : p->prefill).batch;
  if (own <= 1) return false;
  const Evaluation other = OtherRole(dm, decode, *p);
  const double keep = e->tokens_per_s_per_gpu * (1 - 1e-12);
  JointSpace::Point best = *p;
  DisaggEvaluation best_eval = *e;
  // Whether `p` with this role at batch b keeps the throughput (into best when it does).
  auto keeps = [&](int b) {
    auto [r, ev] = WithRoleBatch(dm, decode, *p, other, b);
    if (!ev.valid() || ev.tokens_per_s_per_gpu < keep) return false;
    best = r;
    best_eval = ev;
    return true;
  };
  if (!keeps(own - 1)) return false;
  int lo = 0, hi = own - 1;  // fails at lo (or lo = 0), keeps at hi: `best` is at hi
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (keeps(mid) ? hi : lo) = mid;
  }
  *p = best;
  *e = best_eval;
  return true;
}

}  // namespace

bool LowerDisaggBatches(const DisaggModel& dm, JointSpace::Point* p, DisaggEvaluation* e) {
  if (!e->valid()) return false;
  const bool d = LowerRole(dm, /*decode=*/true, p, e);
  const bool f = LowerRole(dm, /*decode=*/false, p, e);
  return d || f;
}

bool RefineDisaggBatches(const DisaggModel& dm, JointSpace::Point* p, DisaggEvaluation* e) {
  if (!e->valid()) return false;
  JointSpace::Point best = *p;
  DisaggEvaluation best_eval = *e;
  auto keep = [&](const JointSpace::Point& q, const DisaggEvaluation& eq) {
    if (eq.valid() && eq.tokens_per_s_per_gpu > best_eval.tokens_per_s_per_gpu) {
      best = q;
      best_eval = eq;
    }
  };
  JointSpace::Point d, pr, both;
  DisaggEvaluation ed, epr, eboth;
  const bool raised_d = RaiseRole(dm, /*decode=*/true, *p, &d, &ed);
  if (raised_d) {
    keep(d, ed);
    if (RaiseRole(dm, /*decode=*/false, d, &both, &eboth)) keep(both, eboth);
  }
  if (RaiseRole(dm, /*decode=*/false, *p, &pr, &epr)) keep(pr, epr);
  if (!(best_eval.tokens_per_s_per_gpu > e->tokens_per_s_per_gpu)) return false;
  *p = best;
  *e = best_eval;
  return true;
}

}  // namespace l2s
