#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/tuning_table.h"

namespace qgemm {

/// One configuration the autotuner timed: the bucket it would become, the kernel it needs
/// (candidates that share a kernel differ only in launch settings such as split-K) and its
/// median time at each tuned M, in microseconds (NaN where it could not run).
struct TimedCandidate {
  std::string name;
  std::string kernel;
  TunedBucket bucket;
  std::vector<double> us;
};

/// Which candidate runs each tuned M.
struct KernelSelection {
  std::vector<size_t> choice;  ///< candidate index per M
  size_t kernels = 0;          ///< distinct kernels among the chosen candidates
  double max_loss = 0;         ///< max over M of (chosen time / best time) - 1
};

/// The fewest kernels (at most `max_kernels`) whose candidates are, at every M, within
/// `tolerance` (0.05 = 5%) of the fastest candidate at that M; when no set of `max_kernels`
/// kernels gets there, the set with the smallest worst-case loss. Ties go to the smaller total
/// time. kInvalidArgument when some M has no candidate that ran.
Expected<KernelSelection> select_kernels(const std::vector<TimedCandidate>& candidates,
                                         size_t m_count, size_t max_kernels, double tolerance);

/// The buckets of a selection: tuned M i is served up to the geometric mean of it and the next
/// tuned M (the last bucket covers every M); neighbours with the same candidate merge.
std::vector<TunedBucket> buckets_for(const std::vector<int64_t>& ms,
                                     const std::vector<TimedCandidate>& candidates,
                                     const KernelSelection& selection);

}  // namespace qgemm
