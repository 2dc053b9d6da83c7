#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qgemm/status.h"

namespace qgemm::bench {

/// The M buckets a grid report summarizes: 1, 2-64, 65-512, 513-4096, 4097+.
std::string m_bucket(int64_t m);

/// One format (weight x activation spec) in one M bucket: the ratio of the backend's time to
/// cuBLAS BF16's of the same run, over the bucket's layers and M values.
struct GridCell {
  std::string format;  ///< "int4/g128/bf16 x bf16"
  std::string bucket;
  int count = 0;
  double geomean = 0;
  double worst = 0;
};

/// A weight class (codes of at most 4 bits, or 5-8 bits) in one M bucket, with its targets.
struct ClassCell {
  std::string weight_class;  ///< "<=4-bit" or "5-8-bit"
  std::string bucket;
  int count = 0;
  double geomean = 0, worst = 0;
  double target_geomean = 0, target_worst = 0;  ///< 0 where the bucket has none
  bool pass() const {
    return count == 0 || target_geomean == 0 ||
           (geomean <= target_geomean && worst <= target_worst);
  }
};

/// Per format: the share of copy bandwidth at M <= 16 and of the cuBLAS BF16 peak at M >= 1024
/// (percent; median and least over the rows; NaN without rows).
struct FormatShares {
  std::string format;
  double bw_median = 0, bw_least = 0;
  double peak_median = 0, peak_least = 0;
};

/// t(m) > 1.10 t(larger_m) on the same layer: more tokens ran faster.
struct Cliff {
  std::string layer;  ///< problem name, format and shape
  int64_t m = 0, larger_m = 0;
  double us = 0, larger_us = 0;
};

struct GridReport {
  std::string backend;
  std::string device;
  int rows = 0;     ///< rows of the backend that ran and have a cuBLAS BF16 ratio
  int skipped = 0;  ///< rows of the backend that did not run (or failed their check)
  std::vector<GridCell> cells;
  std::vector<ClassCell> classes;
  std::vector<FormatShares> shares;
  std::vector<Cliff> cliffs;
  bool pass() const;
};

/// Summarizes the `backend` rows of a `qgemm bench` JSON report (schema qgemm-bench/1).
Expected<GridReport> analyze_grid(const std::string& json_text, const std::string& backend);

/// The text tables: formats x buckets (geomean / worst), classes against their targets,
/// bandwidth and peak shares, and every cliff.
std::string render_grid_table(const GridReport& report);

/// A heat map: one row per format, one column per bucket, each cell coloured by its geomean
/// ratio (green below 1, red above) and labelled "geomean / worst".
std::string render_grid_svg(const GridReport& report);

}  // namespace qgemm::bench
