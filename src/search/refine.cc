// Batch refinement of a finished plan (refine.h).
#include "search/refine.h"

#include <algorithm>

namespace l2s {

bool RefineBatch(const Simulator& sim, Strategy* s, Evaluation* e) {
  if (!e->valid()) return false;
  Strategy a = *s;
  a.batch = 0;  // the simulator's auto batch
  const Evaluation ea = sim.Evaluate(a);
  if (!ea.valid() || ea.batch == e->batch ||
      !(ea.tokens_per_s_per_gpu > e->tokens_per_s_per_gpu))
    return false;
  a.batch = ea.batch;
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
  // Both roles at the batches of *q, one of them at batch b.
  auto at = [&](int b, JointSpace::Point* r, DisaggEvaluation* ev) {
    *r = p;
    (decode ? r->decode : r->prefill).batch = b;
    const Evaluation eo = (decode ? dm.PrefillSim(p.gp) : dm.DecodeSim(p.gd))
                              .Evaluate(decode ? r->prefill : r->decode);
    const Evaluation er = sim.EvaluateAtBatch(decode ? r->decode : r->prefill, b);
    *ev = decode ? dm.Combine(r->gp, r->prefill, eo, r->gd, r->decode, er)
                 : dm.Combine(r->gp, r->prefill, er, r->gd, r->decode, eo);
    return ev->valid();
  };
  JointSpace::Point r;
  DisaggEvaluation ev;
  int lo = own.batch, hi = auto_eval.batch + 1;  // valid at lo (the plan), hi not tried
  bool found = false;
  if (at(auto_eval.batch, &r, &ev)) {
    lo = auto_eval.batch;
    found = true;
    *q = r;
    *out = ev;
  } else {
    hi = auto_eval.batch;
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      if (at(mid, &r, &ev)) {
        lo = mid;
        found = true;
        *q = r;
        *out = ev;
      } else {
        hi = mid;
      }
    }
  }
  return found;
}

}  // namespace

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
