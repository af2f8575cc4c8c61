#include "common/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace l2s {

int HardwareJobs() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

void ParallelFor(int n, int jobs, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  const int threads = std::min(n, std::max(1, jobs));
  if (threads == 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace l2s
