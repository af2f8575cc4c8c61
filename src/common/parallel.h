// Independent work items on several threads, with results that do not depend on the thread count.
#pragma once

#include <functional>

namespace l2s {

// The threads this machine runs at once (std::thread::hardware_concurrency, at least 1).
int HardwareJobs();

// Calls fn(i) once for every i in [0, n), on up to `jobs` threads (the caller's among them); with
// jobs <= 1 or n <= 1, in order on the caller's thread. Items are handed out in index order.
// fn must be safe to run concurrently for different i and must not throw; each call's result
// must depend on i alone, so that whatever writes results[i] gives the same results for every
// `jobs`. Returns when every call has returned.
void ParallelFor(int n, int jobs, const std::function<void(int)>& fn);

}  // namespace l2s
