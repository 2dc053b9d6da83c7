#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/mma_tile.h"
#include "qgemm/device.h"
#include "qgemm/status.h"
#include "util/settings.h"

namespace qgemm {

/// One M bucket of a tuned layer: an mma_gemm tile, or the hand-off (expand the packed weight,
/// then cuBLASLt).
struct TunedBucket {
  int64_t max_m = INT64_MAX;  ///< the last bucket covers every M (INT64_MAX)
  bool expand = false;
  MmaTile tile;  ///< when !expand
  friend bool operator==(const TunedBucket&, const TunedBucket&) = default;
};

/// What the autotuner measured at one M: the fastest candidate and the one the table chose
/// (from the few kernels the layer keeps).
struct TunedMeasurement {
  int64_t m = 0;
  std::string best, chosen;
  double best_us = 0, chosen_us = 0;
  friend bool operator==(const TunedMeasurement&, const TunedMeasurement&) = default;
};

/// A tuned layer: the problem it was measured on and its buckets, smallest M first.
struct TunedLayer {
  int64_t n = 0, k = 0;
  std::string weight, act, out;  ///< canonical spec strings
  std::vector<TunedBucket> buckets;
  std::vector<TunedMeasurement> measured;
  friend bool operator==(const TunedLayer&, const TunedLayer&) = default;
};

/// A tuning table: layers tuned on one device (matched by the driver's device name).
struct TuningTable {
  std::string device;  ///< e.g. "NVIDIA H200"
  std::string arch;    ///< e.g. "sm_90a"
  std::string created;
  std::vector<TunedLayer> layers;

  const TunedLayer* find(int64_t n, int64_t k, const std::string& weight, const std::string& act,
                         const std::string& out) const;
  /// Adds `layer`, replacing an entry for the same problem.
  void put(TunedLayer layer);
  friend bool operator==(const TuningTable&, const TuningTable&) = default;
};

/// JSON (schema "qgemm-tuning/1"). Errors name the file and what is wrong in it.
Expected<TuningTable> read_tuning_table(const std::string& path);
Status write_tuning_table(const TuningTable& table, const std::string& path);
/// What read_tuning_table does with the file's text (the fuzzers call it on arbitrary bytes);
/// `source` names the table in errors.
Expected<TuningTable> parse_tuning_table(const std::string& text, const std::string& source);
/// The text write_tuning_table writes, which parse_tuning_table reads back.
std::string tuning_table_text(const TuningTable& table);

/// Where `qgemm tune` writes by default: tuning_dir()/<device name>.json.
std::string default_tuning_path(const DeviceInfo& device);

/// The planner's lookup: the tuned layer when a table for this device holds the problem, where
/// it came from, and notes on tables that were skipped (another device, unreadable).
struct TuningLookup {
  bool found = false;
  TunedLayer layer;
  std::string source;  ///< the table's path
  std::vector<std::string> notes;
};

/// Looks in `path` when it is not empty (a missing or unreadable file is a note, not an error),
/// else in every *.json file of tuning_dir(). Files are parsed once per process
/// (re-read when they change). Without an entry for this N and K, the entry of the same formats
/// nearest in shape serves, with a note.
TuningLookup find_tuning(const std::string& path, const DeviceInfo& device, int64_t n, int64_t k,
                         const std::string& weight, const std::string& act, const std::string& out);

}  // namespace qgemm
