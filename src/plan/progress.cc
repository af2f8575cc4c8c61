#include "plan/progress.h"

namespace l2s::plan {

std::unique_ptr<Observer> PlanProgress::Observe(const std::string& label) const {
  std::unique_ptr<Observer> o = observe ? observe(label) : nullptr;
  return o != nullptr ? std::move(o) : std::make_unique<Observer>();
}

}  // namespace l2s::plan
