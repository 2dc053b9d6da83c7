#pragma once

#include <cstdint>
#include <vector>

namespace qgemm::bench {

/// Rows of an [m, n] output compared with the CPU reference: the first, the last and random
/// ones, up to eight, sorted and distinct; reproducible from `seed`.
std::vector<int64_t> sample_rows(int64_t m, uint64_t seed);

/// The rows `rows` of a full row-major [m, n] output, concatenated.
std::vector<double> pick_rows(const std::vector<double>& c, const std::vector<int64_t>& rows,
                              int64_t n);

/// Weight copies to rotate through so that together they span `rotate_bytes` (every launch
/// then reads cold weights), between 1 and `max_copies`.
int weight_copies(double weight_bytes, int64_t rotate_bytes, int max_copies);

/// Launches per timed CUDA graph for a problem whose backends rotate weights of these sizes: the
/// most copies any of them needs, the same for all (one with fewer copies cycles through them),
/// so every backend runs equally long graphs under the same sustained load (clock and power).
int graph_launches(const std::vector<double>& weight_bytes, int64_t rotate_bytes, int max_copies);

}  // namespace qgemm::bench
