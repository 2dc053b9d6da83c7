#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/kernel_selection.h"
#include "plan/mma_tile.h"
#include "plan/tuning_table.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm::bench {

/// What `qgemm tune` measures: one dense layer at several M on GPU 0.
struct TuneOptions {
  std::vector<int64_t> m = {1, 16, 64, 256, 1024, 4096};
  int64_t n = 0, k = 0;
  WeightFormat weight;
  ActFormat act;
  DType out = DType::bf16();
  std::vector<MmaTile> tiles;  ///< mma candidates; empty = tune_candidate_tiles' defaults
  size_t max_kernels = 4;      ///< kernels the layer may keep across all M
  double tolerance = 0.05;     ///< accepted loss against the best candidate at each M
  int warmup = 3, repetitions = 15;
  int64_t rotate_bytes = 512ll << 20;  ///< weight copies rotated so every launch reads cold
  uint64_t seed = 1;
  bool progress = true;
};

/// Everything one tuning run measured and decided.
struct TuneResult {
  DeviceInfo device;
  std::vector<int64_t> ms;                 ///< sorted, distinct
  std::vector<TimedCandidate> candidates;  ///< median microseconds per M (NaN: did not run)
  std::vector<double> heuristic_us;        ///< the built-in plan at each M, for comparison
  KernelSelection selection;
  TunedLayer layer;                 ///< the table entry: buckets and measurements
  std::vector<std::string> errors;  ///< candidates that failed to build, run or check
  int copies = 0;                   ///< weight copies rotated through
  double seconds = 0;               ///< wall time of the whole run
};

/// The tiles tried by default on `device`: decode, small-batch and large mma.sync tiles, and on
/// sm_90a their wgmma variants; some with two split-K targets (a launch setting: the two share
/// one kernel).
std::vector<MmaTile> default_tune_tiles(const DeviceInfo& device);

/// The mma tiles `autotune` times for `options` on `device`: options.tiles where given, else
/// default_tune_tiles plus the tiles of the layer's heuristic plan (so a table never holds a
/// kernel slower than the one the layer runs without it).
Expected<std::vector<MmaTile>> tune_candidate_tiles(const TuneOptions& options,
                                                    const DeviceInfo& device);

/// Times every candidate (each tile, and the cuBLASLt hand-off where the types allow it) at every
/// M with the method of BENCHMARKING.md (CUDA-graph replays, device events, weights rotated past
/// L2, median), checks each candidate's first output against the CPU reference, picks the fewest
/// kernels within `tolerance` of the best per M and returns the table entry.
Expected<TuneResult> autotune(const TuneOptions& options);

}  // namespace qgemm::bench
