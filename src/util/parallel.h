#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace qgemm {

/// Number of worker threads for CPU work (QGEMM_THREADS overrides the core count).
int cpu_threads();

/// Calls fn(begin, end) on disjoint chunks covering [0, n), on up to cpu_threads() threads.
/// Chunks hold at least `grain` items so that small jobs stay on the calling thread.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  const int64_t max_workers = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int workers = static_cast<int>(std::min<int64_t>(cpu_threads(), max_workers));
  if (workers <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  const int64_t chunk = (n + workers - 1) / workers;
  for (int w = 1; w < workers; ++w) {
    const int64_t begin = w * chunk, end = std::min(n, begin + chunk);
    if (begin < end) threads.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(int64_t{0}, std::min(n, chunk));
  for (auto& t : threads) t.join();
}

}  // namespace qgemm
