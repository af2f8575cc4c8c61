#include "plan/work_bound.h"

namespace l2s {

void WorkBoundObserver::OnProgress(int64_t calls, int64_t budget, double best) {
  total_ += calls >= last_ ? calls - last_ : calls;
  last_ = calls;
  if (inner_ != nullptr) inner_->OnProgress(calls, budget, best);
}

void WorkBoundObserver::OnEvaluation(const Strategy& s, const Evaluation& e) {
  if (inner_ != nullptr) inner_->OnEvaluation(s, e);
}

bool WorkBoundObserver::Cancelled() {
  if (inner_ != nullptr && inner_->Cancelled()) inner_cancelled_ = true;
  if (max_calls_ > 0 && total_ > max_calls_) bound_hit_ = true;
  return inner_cancelled_ || bound_hit_;
}

}  // namespace l2s
