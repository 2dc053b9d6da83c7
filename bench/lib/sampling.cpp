#include "bench/lib/sampling.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace qgemm::bench {

std::vector<int64_t> sample_rows(int64_t m, uint64_t seed) {
  constexpr int kCheckRows = 8;
  std::vector<int64_t> rows = {0, m - 1};
  std::mt19937_64 rng(seed);
  while (int64_t(rows.size()) < std::min<int64_t>(m, kCheckRows))
    rows.push_back(int64_t(rng() % m));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::vector<double> pick_rows(const std::vector<double>& c, const std::vector<int64_t>& rows,
                              int64_t n) {
  std::vector<double> out;
  for (int64_t r : rows) out.insert(out.end(), c.begin() + r * n, c.begin() + (r + 1) * n);
  return out;
}

int weight_copies(double weight_bytes, int64_t rotate_bytes, int max_copies) {
  return static_cast<int>(std::clamp<double>(
      std::ceil(double(rotate_bytes) / std::max(weight_bytes, 1.0)), 1, max_copies));
}

int graph_launches(const std::vector<double>& weight_bytes, int64_t rotate_bytes, int max_copies) {
  int launches = 1;
  for (double bytes : weight_bytes)
    launches = std::max(launches, weight_copies(bytes, rotate_bytes, max_copies));
  return launches;
}

}  // namespace qgemm::bench
