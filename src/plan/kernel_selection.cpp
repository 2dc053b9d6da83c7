#include "plan/kernel_selection.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace qgemm {
namespace {

struct Score {
  double max_loss = std::numeric_limits<double>::infinity();
  double total_us = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const {
    return max_loss != o.max_loss ? max_loss < o.max_loss : total_us < o.total_us;
  }
};

// Calls fn(subset) for every subset of {0..n-1} with exactly `size` members.
template <typename Fn>
void for_each_subset(size_t n, size_t size, Fn&& fn) {
  std::vector<size_t> idx(size);
  for (size_t i = 0; i < size; ++i) idx[i] = i;
  while (true) {
    fn(idx);
    size_t i = size;
    while (i > 0 && idx[i - 1] == n - size + i - 1) --i;
    if (i == 0) return;
    ++idx[i - 1];
    for (size_t j = i; j < size; ++j) idx[j] = idx[j - 1] + 1;
  }
}

}  // namespace

Expected<KernelSelection> select_kernels(const std::vector<TimedCandidate>& candidates,
                                         size_t m_count, size_t max_kernels, double tolerance) {
  std::vector<double> best(m_count, std::numeric_limits<double>::infinity());
  for (const TimedCandidate& c : candidates)
    for (size_t m = 0; m < m_count && m < c.us.size(); ++m)
      if (std::isfinite(c.us[m])) best[m] = std::min(best[m], c.us[m]);
  for (size_t m = 0; m < m_count; ++m)
    if (!std::isfinite(best[m]))
      return invalid_argument(str("select_kernels: no candidate ran at tuned M #", m));
  if (max_kernels == 0) return invalid_argument("select_kernels: max_kernels must be positive");

  std::map<std::string, size_t> kernel_index;
  for (const TimedCandidate& c : candidates) kernel_index.emplace(c.kernel, kernel_index.size());
  const size_t kernels = kernel_index.size();

  // The best candidate at each M among those whose kernel is in `subset`.
  auto evaluate = [&](const std::vector<size_t>& subset, KernelSelection& sel) {
    Score s{0, 0};
    sel.choice.assign(m_count, 0);
    for (size_t m = 0; m < m_count; ++m) {
      double t = std::numeric_limits<double>::infinity();
      for (size_t ci = 0; ci < candidates.size(); ++ci) {
        const TimedCandidate& c = candidates[ci];
        const size_t k = kernel_index.at(c.kernel);
        if (std::find(subset.begin(), subset.end(), k) == subset.end()) continue;
        if (m < c.us.size() && std::isfinite(c.us[m]) && c.us[m] < t) {
          t = c.us[m];
          sel.choice[m] = ci;
        }
      }
      if (!std::isfinite(t)) return Score{};
      s.max_loss = std::max(s.max_loss, t / best[m] - 1.0);
      s.total_us += t;
    }
    return s;
  };

  KernelSelection best_sel;
  Score best_score;
  for (size_t size = 1; size <= std::min(max_kernels, kernels); ++size) {
    for_each_subset(kernels, size, [&](const std::vector<size_t>& subset) {
      KernelSelection sel;
      const Score s = evaluate(subset, sel);
      if (s < best_score) {
        best_score = s;
        best_sel = sel;
      }
    });
    if (best_score.max_loss <= tolerance) break;  // the fewest kernels that are good enough
  }
  if (!std::isfinite(best_score.max_loss))
    return invalid_argument(
        str("select_kernels: no set of ", max_kernels, " kernels covers every tuned M"));
  std::map<std::string, bool> used;
  for (size_t ci : best_sel.choice) used[candidates[ci].kernel] = true;
  best_sel.kernels = used.size();
  best_sel.max_loss = best_score.max_loss;
  return best_sel;
}

std::vector<TunedBucket> buckets_for(const std::vector<int64_t>& ms,
                                     const std::vector<TimedCandidate>& candidates,
                                     const KernelSelection& selection) {
  std::vector<TunedBucket> buckets;
  for (size_t i = 0; i < ms.size(); ++i) {
    TunedBucket b = candidates[selection.choice[i]].bucket;
    b.max_m = i + 1 < ms.size()
                  ? static_cast<int64_t>(std::floor(std::sqrt(double(ms[i]) * double(ms[i + 1]))))
                  : INT64_MAX;
    b.max_m = std::max(b.max_m, ms[i]);
    if (!buckets.empty() && buckets.back().expand == b.expand &&
        (b.expand || buckets.back().tile == b.tile)) {
      buckets.back().max_m = b.max_m;
    } else {
      buckets.push_back(b);
    }
  }
  return buckets;
}

}  // namespace qgemm
