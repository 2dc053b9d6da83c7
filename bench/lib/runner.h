#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/lib/peaks.h"
#include "bench/lib/recipe.h"
#include "bench/lib/stats.h"
#include "qgemm/device.h"

namespace qgemm::bench {

/// One measurement: a problem at one M on one backend.
struct ResultRow {
  std::string problem;
  std::string backend;
  int64_t m = 0, n = 0, k = 0;
  int64_t experts = 0;
  int top_k = 0;
  std::string weight, act, out;
  std::string status = "ok";  ///< "ok", "skipped" (with note) or "error" (with note)
  std::string note;
  std::string plan;  ///< jit rows: where the kernel plan came from (tuning table or heuristics)
  TimingStats time{NAN, NAN, NAN, NAN, 0};
  double first_call_ms = NAN;   ///< layer build + prepare (JIT) + first run, wall clock
  int copies = 0;               ///< weight copies rotated through (cold weights)
  int launches = 0;             ///< launches per timed graph (every backend of a problem alike)
  bool l2_resident = false;     ///< the copies together fit in twice the L2: timing is optimistic
  double bytes = 0, flops = 0;  ///< accounted traffic and work of one call
  double tflops = NAN, gbps = NAN;
  double pct_copy_bw = NAN;          ///< gbps / measured copy bandwidth
  double pct_peak = NAN;             ///< tflops / measured cuBLAS peak for the operand type
  std::map<std::string, double> vs;  ///< time / baseline time, for baselines in the same run
  double rel_err = NAN;  ///< relative Frobenius error on sampled rows vs the CPU reference
  double tolerance = NAN;
  int64_t unwritten = 0;     ///< outputs left holding the NaN poison
  int64_t device_bytes = 0;  ///< GPU memory the measurement allocated
};

/// Everything a run of `qgemm bench` produced.
struct BenchReport {
  Recipe recipe;
  std::string command;
  std::string date;  ///< UTC, ISO 8601
  bool gpu = false;
  DeviceInfo device;
  int driver_version = 0;
  Peaks peaks{NAN, NAN, NAN, false};
  int64_t rotate_bytes = 0;
  std::vector<ResultRow> rows;
  /// Problems whose rows are in `rows`, of the recipe's; fewer while the run goes on.
  size_t problems_done = 0;
};

struct RunOptions {
  std::vector<std::string> backends;  ///< overrides every problem's list when not empty
  bool measure_peaks = true;
  std::string command;  ///< the command line, recorded in the report
  /// Called with the report so far after each problem (e.g. to save it: a run stopped by a
  /// time limit keeps the problems it finished).
  std::function<void(const BenchReport&)> after_problem;
};

/// Runs every problem of a recipe on every backend it names (GPU backends on GPU 0; skipped with
/// a note when there is no GPU), with the method of BENCHMARKING.md: CUDA-graph replays timed
/// with device events, weights rotated past L2, median of the recipe's repetitions, first call
/// timed separately, sampled check against the CPU reference.
Expected<BenchReport> run_recipe(const Recipe& recipe, const RunOptions& options);

}  // namespace qgemm::bench
